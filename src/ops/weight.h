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
} pl_weight;

/* Row r of w. */
static inline const void *pl_weight_row(const pl_weight *w, int64_t r) {
    return (const uint8_t *)w->data + (size_t)r * w->row_bytes;
}

#endif
