/*
 * isa_generic.c -- the portable row kernels: plain C that any compiler and
 * any CPU run, written with several independent accumulators so that the
 * optimiser can vectorise them for the build's baseline.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_isa.h"
#include "quant/kernels.h"
#include "base/half.h"

static double g_sum_sq(const float *x, int64_t n) {
    float s[8] = {0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) s[k] += x[i + k] * x[i + k];
    double sum = 0.0;
    for (int k = 0; k < 8; k++) sum += (double)s[k];
    for (; i < n; i++) sum += (double)(x[i] * x[i]);
    return sum;
}

static void g_scale_mul(const float *x, float s, const float *w, float *y, int64_t n) {
    if (w)
        for (int64_t i = 0; i < n; i++) y[i] = (x[i] * s) * w[i];
    else
        for (int64_t i = 0; i < n; i++) y[i] = x[i] * s;
}

static void g_add(const float *a, const float *b, float *y, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = a[i] + b[i];
}

static void g_mul(const float *a, const float *b, float *y, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = a[i] * b[i];
}

static void g_silu_mul(const float *g, const float *u, float *y, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = g[i] / (1.0f + expf(-g[i])) * u[i];
}

static float g_max(const float *x, int64_t n) {
    float m = -INFINITY;
    for (int64_t i = 0; i < n; i++) m = x[i] > m ? x[i] : m;
    return m;
}

static double g_exp_sum(const float *x, float m, float *y, int64_t n) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        y[i] = expf(x[i] - m);
        sum += (double)y[i];
    }
    return sum;
}

/* f16 -> f32 through a table of all 65536 values, filled once (the bit
 * decode with its branches would dominate the dot product otherwise). */
static float f16_table[65536];
static int f16_table_ready;

static const float *f16_lut(void) {
    if (!__atomic_load_n(&f16_table_ready, __ATOMIC_ACQUIRE)) {
        /* racing first callers write the same values */
        for (uint32_t h = 0; h < 65536; h++) f16_table[h] = pl_f16_to_f32((uint16_t)h);
        __atomic_store_n(&f16_table_ready, 1, __ATOMIC_RELEASE);
    }
    return f16_table;
}

static void g_axpy_f32(float a, const float *x, float *y, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] += a * x[i];
}

static void g_axpy_f16(float a, const uint16_t *x, float *y, int64_t n) {
    const float *t = f16_lut();
    for (int64_t i = 0; i < n; i++) y[i] += a * t[x[i]];
}

/* attn_scores_f32 for rows x[0 .. nr-1] (nr <= 2, a constant where
 * inlined): the lanes (queries) innermost, so that the loops vectorise
 * across the block, in few enough accumulators for 128-bit registers */
static inline __attribute__((always_inline)) void g_scores_rows(const float *qt, const float *x, int64_t stride, const int nr,
                                                                int64_t n, float scale, float *s) {
    float acc[2][PL_ATTN_QB] = {{0}};
    for (int64_t d = 0; d < n; d++) {
        const float *q = qt + d * PL_ATTN_QB;
        for (int r = 0; r < nr; r++) {
            const float xv = x[r * stride + d];
            for (int i = 0; i < PL_ATTN_QB; i++) acc[r][i] += xv * q[i];
        }
    }
    for (int r = 0; r < nr; r++)
        for (int i = 0; i < PL_ATTN_QB; i++) s[r * PL_ATTN_QB + i] = acc[r][i] * scale;
}

static void g_attn_scores_f32(const float *qt, const float *x, int64_t stride, int64_t n_rows, int64_t n, float scale,
                              float *s, float *m) {
    int64_t r = 0;
    for (; r + 2 <= n_rows; r += 2) g_scores_rows(qt, x + r * stride, stride, 2, n, scale, s + r * PL_ATTN_QB);
    if (r < n_rows) g_scores_rows(qt, x + r * stride, stride, 1, n, scale, s + r * PL_ATTN_QB);
    if (m)
        for (r = 0; r < n_rows; r++)
            for (int i = 0; i < PL_ATTN_QB; i++) m[i] = s[r * PL_ATTN_QB + i] > m[i] ? s[r * PL_ATTN_QB + i] : m[i];
}

/* 16 columns of all the block's outputs at a time, kept in a local array
 * over the rows; the remaining columns one by one */
static void g_attn_values_f32(float *w, const float *m, double *sum, const float *x, int64_t stride, int64_t n_rows, int64_t n,
                              float *o) {
    for (int64_t r = 0; r < n_rows; r++)
        for (int i = 0; i < PL_ATTN_QB; i++) {
            const float e = expf(w[r * PL_ATTN_QB + i] - m[i]);
            w[r * PL_ATTN_QB + i] = e;
            sum[i] += (double)e;
        }
    int64_t c = 0;
    for (; c + 16 <= n; c += 16)
        for (int i0 = 0; i0 < PL_ATTN_QB; i0 += 2) {
            float acc[2][16];
            for (int i = 0; i < 2; i++)
                for (int k = 0; k < 16; k++) acc[i][k] = o[(i0 + i) * n + c + k];
            for (int64_t r = 0; r < n_rows; r++) {
                const float *xr = x + r * stride + c, *wr = w + r * PL_ATTN_QB + i0;
                for (int i = 0; i < 2; i++)
                    for (int k = 0; k < 16; k++) acc[i][k] += wr[i] * xr[k];
            }
            for (int i = 0; i < 2; i++)
                for (int k = 0; k < 16; k++) o[(i0 + i) * n + c + k] = acc[i][k];
        }
    for (; c < n; c++)
        for (int i = 0; i < PL_ATTN_QB; i++) {
            float acc = o[i * n + c];
            for (int64_t r = 0; r < n_rows; r++) acc += w[r * PL_ATTN_QB + i] * x[r * stride + c];
            o[i * n + c] = acc;
        }
}

static const pl_cpu_isa generic = {
    .name = "generic",
    .f16_dot_tier = PL_TIER_SCALAR,
    .sum_sq = g_sum_sq,
    .scale_mul = g_scale_mul,
    .add = g_add,
    .mul = g_mul,
    .silu_mul = g_silu_mul,
    .max = g_max,
    .exp_sum = g_exp_sum,
    .axpy_f32 = g_axpy_f32,
    .axpy_f16 = g_axpy_f16,
    .attn_scores_f32 = g_attn_scores_f32,
    .attn_values_f32 = g_attn_values_f32,
};

const pl_cpu_isa *pl_cpu_isa_generic(void) { return &generic; }
