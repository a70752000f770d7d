/*
 * weight.h -- a weight matrix as the ops see it: rows of a packed element
 * type, in place inside the mapped file (never widened to f32).  A GGUF
 * tensor of shape [n_in, n_out] is n_out rows of n_in elements.
 */
#ifndef PL_WEIGHT_H
#define PL_WEIGHT_H

#include <stddef.h>
#include <stdint.h>

typedef struct pl_weight {
    const char *name;   /* the GGUF tensor name, for messages */
    const void *data;
    uint32_t type;      /* ggml type id */
    int64_t n_in;       /* elements per row (ne[0]) */
    int64_t n_out;      /* rows (ne[1]) */
    size_t row_bytes;
    /* a 3-D expert tensor [n_in, n_out, n_expert] (mixture of experts):
     * n_expert matrices one after another, expert_bytes = n_out * row_bytes
     * apart; 0 and 0 for a plain matrix */
    int64_t n_expert;
    size_t expert_bytes;
} pl_weight;

/* Row r of w. */
static inline const void *pl_weight_row(const pl_weight *w, int64_t r) {
    return (const uint8_t *)w->data + (size_t)r * w->row_bytes;
}

/* Expert e of a 3-D expert tensor as a plain matrix (e already checked). */
static inline pl_weight pl_weight_expert(const pl_weight *w, int64_t e) {
    pl_weight v = *w;
    v.data = (const uint8_t *)w->data + (size_t)e * w->expert_bytes;
    v.n_expert = 0;
    v.expert_bytes = 0;
    return v;
}

#endif
