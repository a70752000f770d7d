/*
 * eval_common.c -- text files and throttled progress for the evaluation
 * commands (perplexity, imatrix, fit).
 */
#include "eval_common.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_common.h"

char *eval_read_text(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        if (cap >= EVAL_TEXT_MAX) {
            free(buf);
            buf = NULL;
            errno = EFBIG;
            break;
        }
        char *bigger = realloc(buf, (cap *= 2) + 1);
        if (!bigger) free(buf);
        buf = bigger;
    }
    if (buf && ferror(f)) {
        free(buf);
        buf = NULL;
        errno = EIO;
    }
    fclose(f);
    if (!buf) return NULL;
    buf[n] = 0;
    *len = n;
    return buf;
}

void eval_progress_line(eval_progress *p, bool force, const char *fmt, ...) {
    if (p->quiet) return;
    const double now = cli_now();
    if (!force && now - p->last < 1.0) return;
    p->last = now;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", p->cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void eval_progress_cb(void *user, uint32_t done, uint32_t total, double ppl) {
    eval_progress *p = user;
    eval_progress_line(p, done == total, "window %u of %u, perplexity so far %.4f", done, total, ppl);
}
