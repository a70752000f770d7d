/*
 * ref_legacy.c -- the legacy 32-element block types q4_0, q4_1, q5_0 and
 * q5_1: decode, encode (llama.cpp's reference rounding without an imatrix;
 * its weighted level search with one, where sigma^2 is taken over the whole
 * row) and the dot products against q8_0 / q8_1 activations.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "quant/blocks.h"
#include "quant/quant_search.h"
#include "quant/quant_util.h"
#include "quant/ref.h"

/* ---- decode ------------------------------------------------------------ */

void pl_ref_q4_0_to_float(const void *src, float *dst, int64_t n) {
    const pl_block_q4_0 *b = src;
    for (int64_t i = 0; i < n / 32; i++, dst += 32) {
        const float d = pl_q_f16(b[i].d);
        for (int j = 0; j < 16; j++) {
            dst[j] = (float)((b[i].qs[j] & 0x0f) - 8) * d;
            dst[j + 16] = (float)((b[i].qs[j] >> 4) - 8) * d;
        }
    }
}

void pl_ref_q4_1_to_float(const void *src, float *dst, int64_t n) {
    const pl_block_q4_1 *b = src;
    for (int64_t i = 0; i < n / 32; i++, dst += 32) {
        const float d = pl_q_f16(b[i].d), m = pl_q_f16(b[i].m);
        for (int j = 0; j < 16; j++) {
            dst[j] = (float)(b[i].qs[j] & 0x0f) * d + m;
            dst[j + 16] = (float)(b[i].qs[j] >> 4) * d + m;
        }
    }
}

/* The 5-bit value j of a q5 block: low nibble from qs, bit 4 from qh. */
static inline int q5_value(const uint8_t *qs, uint32_t qh, int j) {
    int lo = j < 16 ? (qs[j] & 0x0f) : (qs[j - 16] >> 4);
    return lo | (int)(((qh >> j) & 1) << 4);
}

static inline uint32_t load_qh(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

void pl_ref_q5_0_to_float(const void *src, float *dst, int64_t n) {
    const pl_block_q5_0 *b = src;
    for (int64_t i = 0; i < n / 32; i++, dst += 32) {
        const float d = pl_q_f16(b[i].d);
        const uint32_t qh = load_qh(b[i].qh);
        for (int j = 0; j < 32; j++) dst[j] = (float)(q5_value(b[i].qs, qh, j) - 16) * d;
    }
}

void pl_ref_q5_1_to_float(const void *src, float *dst, int64_t n) {
    const pl_block_q5_1 *b = src;
    for (int64_t i = 0; i < n / 32; i++, dst += 32) {
        const float d = pl_q_f16(b[i].d), m = pl_q_f16(b[i].m);
        const uint32_t qh = load_qh(b[i].qh);
        for (int j = 0; j < 32; j++) dst[j] = (float)q5_value(b[i].qs, qh, j) * d + m;
    }
}

/* ---- encode ------------------------------------------------------------ */

/* llama.cpp stores (int8_t)(float) then clamps; on x86 the cast truncates
 * through a 32-bit conversion and keeps the low byte. */
static inline int to_i8(float v) { return (int8_t)pl_q_trunc_i32(v); }

/* Value of largest magnitude (the first one, on ties). */
static float signed_absmax(const float *x, int n) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < n; j++)
        if (amax < fabsf(x[j])) amax = fabsf(x[j]), max = x[j];
    return max;
}

static void min_max(const float *x, int n, float *mn, float *mx) {
    float lo = FLT_MAX, hi = -FLT_MAX;
    for (int j = 0; j < n; j++) {
        if (x[j] < lo) lo = x[j];
        if (x[j] > hi) hi = x[j];
    }
    *mn = lo, *mx = hi;
}

/* sigma^2 of the whole row and the per-value weights qw*sqrt(sigma2+x^2). */
static float row_sigma2(const float *x, int64_t n) {
    float sum_x2 = 0;
    for (int64_t j = 0; j < n; j++) sum_x2 += x[j] * x[j];
    return sum_x2 / (float)n;
}

static void block_weights(const float *x, const float *qw, float sigma2, float *w) {
    for (int j = 0; j < 32; j++) w[j] = qw[j] * sqrtf(sigma2 + x[j] * x[j]);
}

static void pack_q5(uint8_t *qs, uint8_t *qh_out, const uint8_t *L) {
    uint32_t qh = 0;
    for (int j = 0; j < 16; j++) {
        qs[j] = (uint8_t)((L[j] & 0x0f) | ((L[j + 16] & 0x0f) << 4));
        qh |= ((L[j] & 0x10u) >> 4) << j;
        qh |= ((L[j + 16] & 0x10u) >> 4) << (j + 16);
    }
    memcpy(qh_out, &qh, 4);
}

void pl_ref_q4_0_from_float(const float *src, void *dst, int64_t n, const float *imatrix) {
    pl_block_q4_0 *b = dst;
    const float sigma2 = imatrix ? row_sigma2(src, n) : 0;
    for (int64_t i = 0; i < n / 32; i++) {
        const float *x = src + i * 32;
        if (imatrix) {
            float w[32];
            int8_t L[32];
            block_weights(x, imatrix + i * 32, sigma2, w);
            b[i].d = pl_f32_to_f16(pl_q_make_qx(32, 8, x, L, 1, w));
            for (int j = 0; j < 16; j++) b[i].qs[j] = (uint8_t)(L[j] | (L[j + 16] << 4));
            continue;
        }
        const float d = signed_absmax(x, 32) / -8;
        const float id = d != 0 ? 1.0f / d : 0.0f;
        b[i].d = pl_f32_to_f16(d);
        for (int j = 0; j < 16; j++) {
            int v0 = to_i8(x[j] * id + 8.5f), v1 = to_i8(x[j + 16] * id + 8.5f);
            b[i].qs[j] = (uint8_t)((uint8_t)(v0 < 15 ? v0 : 15) | (uint8_t)((v1 < 15 ? v1 : 15) << 4));
        }
    }
}

void pl_ref_q4_1_from_float(const float *src, void *dst, int64_t n, const float *imatrix) {
    pl_block_q4_1 *b = dst;
    const float sigma2 = imatrix ? row_sigma2(src, n) : 0;
    for (int64_t i = 0; i < n / 32; i++) {
        const float *x = src + i * 32;
        if (imatrix) {
            float w[32], the_min;
            uint8_t L[32], Laux[32];
            block_weights(x, imatrix + i * 32, sigma2, w);
            float d = pl_q_make_qkx3(32, 15, x, w, L, &the_min, Laux, -0.9f, 0.05f, 36, false);
            b[i].d = pl_f32_to_f16(d);
            b[i].m = pl_f32_to_f16(-the_min);
            for (int j = 0; j < 16; j++) b[i].qs[j] = (uint8_t)(L[j] | (L[j + 16] << 4));
            continue;
        }
        float min, max;
        min_max(x, 32, &min, &max);
        const float d = (max - min) / 15;
        const float id = d != 0 ? 1.0f / d : 0.0f;
        b[i].d = pl_f32_to_f16(d);
        b[i].m = pl_f32_to_f16(min);
        for (int j = 0; j < 16; j++) {
            int v0 = to_i8((x[j] - min) * id + 0.5f), v1 = to_i8((x[j + 16] - min) * id + 0.5f);
            b[i].qs[j] = (uint8_t)((uint8_t)(v0 < 15 ? v0 : 15) | (uint8_t)((v1 < 15 ? v1 : 15) << 4));
        }
    }
}

void pl_ref_q5_0_from_float(const float *src, void *dst, int64_t n, const float *imatrix) {
    pl_block_q5_0 *b = dst;
    const float sigma2 = imatrix ? row_sigma2(src, n) : 0;
    for (int64_t i = 0; i < n / 32; i++) {
        const float *x = src + i * 32;
        uint8_t L[32];
        if (imatrix) {
            float w[32];
            int8_t Ls[32];
            block_weights(x, imatrix + i * 32, sigma2, w);
            b[i].d = pl_f32_to_f16(pl_q_make_qx(32, 16, x, Ls, 1, w));
            for (int j = 0; j < 32; j++) L[j] = (uint8_t)Ls[j];
        } else {
            const float d = signed_absmax(x, 32) / -16;
            const float id = d != 0 ? 1.0f / d : 0.0f;
            b[i].d = pl_f32_to_f16(d);
            for (int j = 0; j < 32; j++) {
                int v = to_i8(x[j] * id + 16.5f);
                L[j] = (uint8_t)(v < 31 ? v : 31);
            }
        }
        pack_q5(b[i].qs, b[i].qh, L);
    }
}

void pl_ref_q5_1_from_float(const float *src, void *dst, int64_t n, const float *imatrix) {
    pl_block_q5_1 *b = dst;
    const float sigma2 = imatrix ? row_sigma2(src, n) : 0;
    for (int64_t i = 0; i < n / 32; i++) {
        const float *x = src + i * 32;
        uint8_t L[32];
        if (imatrix) {
            float w[32], the_min;
            uint8_t Laux[32];
            block_weights(x, imatrix + i * 32, sigma2, w);
            float d = pl_q_make_qkx3(32, 31, x, w, L, &the_min, Laux, -0.9f, 0.05f, 36, false);
            b[i].d = pl_f32_to_f16(d);
            b[i].m = pl_f32_to_f16(-the_min);
        } else {
            float min, max;
            min_max(x, 32, &min, &max);
            const float d = (max - min) / 31;
            const float id = d != 0 ? 1.0f / d : 0.0f;
            b[i].d = pl_f32_to_f16(d);
            b[i].m = pl_f32_to_f16(min);
            /* (uint8_t)(float): the low byte of the 32-bit conversion */
            for (int j = 0; j < 32; j++) L[j] = (uint8_t)pl_q_trunc_i32((x[j] - min) * id + 0.5f);
        }
        pack_q5(b[i].qs, b[i].qh, L);
    }
}

/* ---- dot products -------------------------------------------------------- */

float pl_ref_q4_0_vec_dot(int64_t n, const void *w, const void *a) {
    const pl_block_q4_0 *x = w;
    const pl_block_q8_0 *y = a;
    float sum = 0;
    for (int64_t i = 0; i < n / 32; i++) {
        int sumi = 0;
        for (int j = 0; j < 16; j++)
            sumi += ((x[i].qs[j] & 0x0f) - 8) * y[i].qs[j] + ((x[i].qs[j] >> 4) - 8) * y[i].qs[j + 16];
        sum += (float)sumi * pl_q_f16(x[i].d) * pl_q_f16(y[i].d);
    }
    return sum;
}

float pl_ref_q4_1_vec_dot(int64_t n, const void *w, const void *a) {
    const pl_block_q4_1 *x = w;
    const pl_block_q8_1 *y = a;
    float sum = 0;
    for (int64_t i = 0; i < n / 32; i++) {
        int sumi = 0;
        for (int j = 0; j < 16; j++) sumi += (x[i].qs[j] & 0x0f) * y[i].qs[j] + (x[i].qs[j] >> 4) * y[i].qs[j + 16];
        sum += (pl_q_f16(x[i].d) * pl_q_f16(y[i].d)) * (float)sumi + pl_q_f16(x[i].m) * pl_q_f16(y[i].s);
    }
    return sum;
}

float pl_ref_q5_0_vec_dot(int64_t n, const void *w, const void *a) {
    const pl_block_q5_0 *x = w;
    const pl_block_q8_0 *y = a;
    float sum = 0;
    for (int64_t i = 0; i < n / 32; i++) {
        const uint32_t qh = load_qh(x[i].qh);
        int sumi = 0;
        for (int j = 0; j < 32; j++) sumi += (q5_value(x[i].qs, qh, j) - 16) * y[i].qs[j];
        sum += (pl_q_f16(x[i].d) * pl_q_f16(y[i].d)) * (float)sumi;
    }
    return sum;
}

float pl_ref_q5_1_vec_dot(int64_t n, const void *w, const void *a) {
    const pl_block_q5_1 *x = w;
    const pl_block_q8_1 *y = a;
    float sum = 0;
    for (int64_t i = 0; i < n / 32; i++) {
        const uint32_t qh = load_qh(x[i].qh);
        int sumi = 0;
        for (int j = 0; j < 32; j++) sumi += q5_value(x[i].qs, qh, j) * y[i].qs[j];
        sum += (pl_q_f16(x[i].d) * pl_q_f16(y[i].d)) * (float)sumi + pl_q_f16(x[i].m) * pl_q_f16(y[i].s);
    }
    return sum;
}
