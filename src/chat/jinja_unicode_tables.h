/*
 * jinja_unicode_tables.h -- Unicode tables generated from Python's
 * unicodedata (see gen_unicode_tables.py) and the lookups over them.
 */
#ifndef PL_JINJA_UNICODE_TABLES_H
#define PL_JINJA_UNICODE_TABLES_H

#include <stddef.h>
#include <stdint.h>

/* Per-character flags (as str's single-character predicates answer). */
enum {
    PL_PY_ALPHA = 1,
    PL_PY_DECIMAL = 2,
    PL_PY_DIGIT = 4,
    PL_PY_NUMERIC = 8,
    PL_PY_LOWER = 16,
    PL_PY_UPPER = 32,
    PL_PY_TITLE = 64, /* category Lt */
    PL_PY_CASED = 128,
    PL_PY_CASE_IGNORABLE = 256,
    PL_PY_PRINTABLE = 512
};

/* Runs {first code point, flags}, sorted; a run lasts until the next. */
extern const uint32_t pl_py_flag_runs[][2];
extern const size_t pl_py_flag_runs_count;

/* cp in [first, last] with (cp - first) % stride == 0 (stride 0: first only)
 * maps to cp + delta. */
typedef struct pl_py_case_run {
    uint32_t first, last;
    int32_t stride, delta;
} pl_py_case_run;

/* cp maps to n (2 or 3) characters. */
typedef struct pl_py_case_multi {
    uint32_t cp;
    int32_t n;
    uint32_t to[3];
} pl_py_case_multi;

extern const pl_py_case_run pl_py_lower_runs[], pl_py_upper_runs[], pl_py_title_runs[];
extern const size_t pl_py_lower_runs_count, pl_py_upper_runs_count, pl_py_title_runs_count;
extern const pl_py_case_multi pl_py_lower_multi[], pl_py_upper_multi[], pl_py_title_multi[];
extern const size_t pl_py_lower_multi_count, pl_py_upper_multi_count, pl_py_title_multi_count;

#endif
