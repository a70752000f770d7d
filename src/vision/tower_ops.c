/*
 * tower_ops.c -- the row-chunked linear layer and MLP of the mmproj towers
 * (see tower_ops.h).
 */
#include "vision/tower_ops.h"

void pl_tower_linear(pl_compute *c, int64_t chunk, const pl_weight *w, const float *b, const float *x, int64_t n,
                     float *y) {
    for (int64_t r = 0; r < n; r += chunk) {
        const int64_t k = n - r < chunk ? n - r : chunk;
        pl_mul_mat(c, w, x + r * w->n_in, k, y + r * w->n_out);
    }
    if (b) pl_add(c, y, b, y, n, w->n_out, 1);
}

void pl_tower_mlp(pl_compute *c, int64_t chunk, bool gelu_erf, const pl_weight *fc1, const float *b1,
                  const pl_weight *fc2, const float *b2, const float *x, int64_t n, float *t, float *y) {
    for (int64_t r = 0; r < n; r += chunk) {
        const int64_t k = n - r < chunk ? n - r : chunk;
        pl_tower_linear(c, chunk, fc1, b1, x + r * fc1->n_in, k, t);
        if (gelu_erf) pl_gelu_erf(c, t, t, k * fc1->n_out);
        else pl_gelu(c, t, t, k * fc1->n_out);
        pl_tower_linear(c, chunk, fc2, b2, t, k, y + r * fc2->n_out);
    }
}
