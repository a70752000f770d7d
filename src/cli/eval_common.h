/*
 * eval_common.h -- what `pocketllm perplexity`, `imatrix` and `fit` share:
 * reading the text file and printing progress on stderr at most once a
 * second (so short runs stay quiet and long runs show they are alive).
 */
#ifndef PL_CLI_EVAL_COMMON_H
#define PL_CLI_EVAL_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Texts larger than this are refused (tokenizing them would take hours). */
#define EVAL_TEXT_MAX ((size_t)256 << 20)

/* Read a whole text file; NULL with errno set on failure (EFBIG: too large). */
char *eval_read_text(const char *path, size_t *len);

/* A progress printer for the library's pocketllm_eval_progress_fn. */
typedef struct eval_progress {
    const char *cmd;
    bool quiet;
    double last;   /* when the last line was printed */
} eval_progress;

void eval_progress_cb(void *user, uint32_t done, uint32_t total, double ppl);
/* Print a line now if a second has passed (or `force`). */
void eval_progress_line(eval_progress *p, bool force, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
