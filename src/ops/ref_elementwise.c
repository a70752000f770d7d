/*
 * ref_elementwise.c -- reference ops that work row by row without weights
 * in a packed type: RMS norm, add, mul, scale, SwiGLU, softmax, argmax, and
 * the KV-cache store.
 */
#include <math.h>
#include <string.h>

#include "base/half.h"
#include "ops/ref.h"
#include "quant/kv_types.h"
#include "quant/types.h"

void pl_ref_rms_norm(const float *x, const float *w, float *y, int64_t rows, int64_t n, float eps) {
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * n;
        float *yr = y + r * n;
        double sum = 0.0;
        for (int64_t i = 0; i < n; i++) sum += (double)(xr[i] * xr[i]);
        const float mean = (float)(sum / (double)n);
        const float scale = 1.0f / sqrtf(mean + eps);
        for (int64_t i = 0; i < n; i++) yr[i] = w ? (xr[i] * scale) * w[i] : xr[i] * scale;
    }
}

void pl_ref_add(const float *a, const float *b, float *y, int64_t rows, int64_t n, int64_t b_rows) {
    for (int64_t r = 0; r < rows; r++) {
        const float *br = b + (b_rows == 1 ? 0 : r * n);
        for (int64_t i = 0; i < n; i++) y[r * n + i] = a[r * n + i] + br[i];
    }
}

void pl_ref_mul(const float *a, const float *b, float *y, int64_t rows, int64_t n, int64_t b_rows) {
    for (int64_t r = 0; r < rows; r++) {
        const float *br = b + (b_rows == 1 ? 0 : r * n);
        for (int64_t i = 0; i < n; i++) y[r * n + i] = a[r * n + i] * br[i];
    }
}

void pl_ref_scale(const float *x, float s, float *y, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = x[i] * s;
}

void pl_ref_silu_mul(const float *g, const float *u, float *y, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = g[i] / (1.0f + expf(-g[i])) * u[i];
}

void pl_ref_softmax(const float *x, float *y, int64_t n) {
    float max = -INFINITY;
    for (int64_t i = 0; i < n; i++) max = x[i] > max ? x[i] : max;
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        y[i] = expf(x[i] - max);
        sum += (double)y[i];
    }
    const float inv = (float)(1.0 / sum);
    for (int64_t i = 0; i < n; i++) y[i] *= inv;
}

int64_t pl_ref_argmax(const float *x, int64_t n) {
    int64_t best = 0;
    for (int64_t i = 1; i < n; i++)
        if (x[i] > x[best]) best = i;
    return best;
}

void pl_ref_kv_store(uint32_t type, const float *x, void *dst, int64_t n) {
    const pl_kv_encode_fn enc = pl_kv_encoder(type);
    if (enc) enc(x, dst, n);
}
