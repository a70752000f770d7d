/*
 * gbnf.h -- a grammar in llama.cpp's GBNF dialect, parsed into the flat form
 * the matcher walks.  Every rule is a list of alternatives; every
 * alternative a sequence of elements (a character class or a reference to
 * a rule) ending in an END element.  Repetitions (* + ? {m,n}) and groups
 * are rewritten into helper rules at parse time, so the matcher only ever
 * sees characters and references.
 */
#ifndef PL_GBNF_H
#define PL_GBNF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { PL_GE_END = 0, PL_GE_CHARS = 1, PL_GE_REF = 2 };

typedef struct pl_gelem {
    uint8_t kind;  /* PL_GE_* */
    int32_t arg;   /* CHARS: class index; REF: rule index */
} pl_gelem;

/* A set of code points: ranges [lo, hi], or everything but them. */
typedef struct pl_gclass {
    uint32_t first; /* index of the first range in pl_gbnf.ranges (pairs) */
    uint32_t n;     /* ranges */
    bool negated;   /* while parsing only: pl_gbnf_parse leaves every class as
                     * its sorted, merged ranges, negated ones complemented */
} pl_gclass;

typedef struct pl_gbnf {
    pl_gelem *el;           /* every alternative's elements, each run ending in END */
    size_t n_el, cap_el;
    uint32_t *alt_start;    /* per alternative: its first element */
    size_t n_alt, cap_alt;
    uint32_t *rule_alt;     /* per rule: index of its first alternative in alt_start */
    uint32_t *rule_nalt;    /* per rule: how many */
    char **rule_name;       /* per rule (generated rules get "name_N") */
    bool *rule_defined;
    size_t n_rules, cap_rules;
    uint32_t *ranges;       /* lo, hi pairs */
    size_t n_ranges, cap_ranges;
    pl_gclass *cls;
    size_t n_cls, cap_cls;
    int32_t root;
    /* derived by pl_gbnf_parse: the fewest UTF-8 bytes that complete each
     * element's sequence from that element on, and each rule's fewest */
    uint32_t *rest_min;     /* per element */
    uint32_t *rule_min;     /* per rule */
} pl_gbnf;

/* Parse `text` with start rule `root` ("root" when NULL).  Refuses, with a
 * one-line message naming the place: syntax errors, undefined rules, a
 * missing start rule, left recursion (the matcher could not terminate),
 * and grammars past the size limits. */
bool pl_gbnf_parse(const char *text, const char *root, pl_gbnf *g, char *err, size_t errlen);
void pl_gbnf_free(pl_gbnf *g);

/* Whether class c contains some code point in [lo, hi]. */
bool pl_gclass_hits(const pl_gbnf *g, const pl_gclass *c, uint32_t lo, uint32_t hi);

#endif
