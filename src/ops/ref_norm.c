/*
 * ref_norm.c -- the vision tower's reference ops: layer norm (ggml_norm
 * followed by the weight and bias ops) and the f16-table tanh GELU of
 * llama.cpp's CPU backend, with that table.
 */
#include <pthread.h>

#include "base/half.h"
#include "ops/ref.h"

void pl_ref_layer_norm(const float *x, const float *w, const float *b, float *y, int64_t rows, int64_t n, float eps) {
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * n;
        float *yr = y + r * n;
        /* ggml_vec_sum_f32: a double sum rounded to float, then the mean
         * divided in float */
        double sum = 0.0;
        for (int64_t i = 0; i < n; i++) sum += (double)xr[i];
        const float mean = (float)sum / (float)n;
        /* ggml_vec_cvar_f32's scalar form: centred values in f32, their
         * squares summed in double, divided in double */
        double sq = 0.0;
        for (int64_t i = 0; i < n; i++) {
            const float d = xr[i] - mean;
            yr[i] = d;
            sq += (double)(d * d);
        }
        const float var = (float)(sq / (double)n);
        const float scale = 1.0f / sqrtf(var + eps);
        for (int64_t i = 0; i < n; i++) {
            float v = yr[i] * scale;
            if (w) v = v * w[i];
            if (b) v = v + b[i];
            yr[i] = v;
        }
    }
}

/* ggml_gelu_f32, the operations in its order (no contraction: C11 mode) */
static float gelu_tanh(float x) {
    const float a = 0.044715f, s = 0.79788456080286535587989211986876f;
    return 0.5f * x * (1.0f + tanhf(s * x * (1.0f + a * x * x)));
}

static uint16_t gelu_table[65536];
static pthread_once_t gelu_once = PTHREAD_ONCE_INIT;

static void gelu_fill(void) {
    for (uint32_t h = 0; h < 65536; h++) gelu_table[h] = pl_f32_to_f16(gelu_tanh(pl_f16_to_f32((uint16_t)h)));
}

const uint16_t *pl_gelu_f16_table(void) {
    pthread_once(&gelu_once, gelu_fill);
    return gelu_table;
}

void pl_ref_gelu(const float *x, float *y, int64_t n) {
    const uint16_t *t = pl_gelu_f16_table();
    for (int64_t i = 0; i < n; i++) {
        if (x[i] <= -10.0f) y[i] = 0.0f;
        else if (x[i] >= 10.0f) y[i] = x[i];
        else y[i] = pl_f16_to_f32(t[pl_f32_to_f16(x[i])]);
    }
}
