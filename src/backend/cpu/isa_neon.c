/*
 * isa_neon.c -- the row kernels for AArch64 (NEON, Armv8.0-A): elementwise
 * ops, softmax helpers and the attention row kernels, 128-bit vectors.
 * One table serves every AArch64 quant tier (neon, dotprod, i8mm): its f16
 * kernels reproduce the NEON tier's f16 vec_dot, which the higher tiers
 * inherit.
 */
#include "backend/cpu/cpu_isa.h"

#if defined(__aarch64__)

#include <arm_neon.h>
#include <math.h>
#include <string.h>

#include "backend/cpu/cpu_erf.h"
#include "base/half.h"
#include "ops/ref.h"
#include "quant/dot_f16_arm.h"
#include "quant/kernels.h"
#include "quant/simd_arm.h"

/* e^x as isa_avx2.c's exp8 (Cephes' polynomial, the power of two applied
 * in two halves): within 2 ulp of expf over [-104, 88.72], 0 below, inf
 * above. */
PL_ALWAYS_INLINE float32x4_t exp4(float32x4_t x) {
    const float32x4_t max_x = vdupq_n_f32(88.72283935546875f);
    const uint32x4_t over = vcgtq_f32(x, max_x);
    x = vmaxq_f32(vminq_f32(x, max_x), vdupq_n_f32(-104.0f));
    const float32x4_t n = vrndnq_f32(vmulq_f32(x, vdupq_n_f32(1.44269504088896341f)));
    float32x4_t r = vfmsq_f32(x, n, vdupq_n_f32(0.693359375f));
    r = vfmsq_f32(r, n, vdupq_n_f32(-2.12194440e-4f));
    float32x4_t p = vdupq_n_f32(1.9875691500e-4f);
    p = vfmaq_f32(vdupq_n_f32(1.3981999507e-3f), p, r);
    p = vfmaq_f32(vdupq_n_f32(8.3334519073e-3f), p, r);
    p = vfmaq_f32(vdupq_n_f32(4.1665795894e-2f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.6666665459e-1f), p, r);
    p = vfmaq_f32(vdupq_n_f32(5.0000001201e-1f), p, r);
    float32x4_t y = vfmaq_f32(vaddq_f32(r, vdupq_n_f32(1.0f)), p, vmulq_f32(r, r));
    const int32x4_t ni = vcvtq_s32_f32(n);
    const int32x4_t n1 = vshrq_n_s32(ni, 1), n2 = vsubq_s32(ni, n1);
    const int32x4_t bias = vdupq_n_s32(127);
    y = vmulq_f32(y, vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n1, bias), 23)));
    y = vmulq_f32(y, vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n2, bias), 23)));
    return vbslq_f32(over, vdupq_n_f32(INFINITY), y);
}

/* the first k < 4 floats at p, the rest zero */
PL_ALWAYS_INLINE float32x4_t load_part(const float *p, int64_t k) {
    float t[4] = {0};
    memcpy(t, p, (size_t)k * sizeof(float));
    return vld1q_f32(t);
}

PL_ALWAYS_INLINE void store_part(float *p, float32x4_t v, int64_t k) {
    float t[4];
    vst1q_f32(t, v);
    memcpy(p, t, (size_t)k * sizeof(float));
}

PL_ALWAYS_INLINE float32x4_t f16x8_lo(uint16x8_t v) { return vcvt_f32_f16(vreinterpret_f16_u16(vget_low_u16(v))); }
PL_ALWAYS_INLINE float32x4_t f16x8_hi(uint16x8_t v) { return vcvt_high_f32_f16(vreinterpretq_f16_u16(v)); }

/* f32 -> f16 -> f32, rounded to nearest even (FCVTN under the default
 * FPCR), as pl_f16_to_f32(pl_f32_to_f16(v)) */
PL_ALWAYS_INLINE float32x4_t round_f16(float32x4_t v) { return vcvt_f32_f16(vcvt_f16_f32(v)); }

static double n_sum_sq(const float *x, int64_t n) {
    float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const float32x4_t a = vld1q_f32(x + i), b = vld1q_f32(x + i + 4), c = vld1q_f32(x + i + 8), d = vld1q_f32(x + i + 12);
        s0 = vfmaq_f32(s0, a, a);
        s1 = vfmaq_f32(s1, b, b);
        s2 = vfmaq_f32(s2, c, c);
        s3 = vfmaq_f32(s3, d, d);
    }
    for (; i + 4 <= n; i += 4) {
        const float32x4_t a = vld1q_f32(x + i);
        s0 = vfmaq_f32(s0, a, a);
    }
    double sum = (double)vaddvq_f32(vaddq_f32(vaddq_f32(s0, s1), vaddq_f32(s2, s3)));
    for (; i < n; i++) sum += (double)(x[i] * x[i]);
    return sum;
}

/* (x * s) * w: two roundings, as the reference */
static void n_scale_mul(const float *x, float s, const float *w, float *y, int64_t n) {
    int64_t i = 0;
    if (w) {
        for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vmulq_f32(vmulq_n_f32(vld1q_f32(x + i), s), vld1q_f32(w + i)));
        for (; i < n; i++) y[i] = (x[i] * s) * w[i];
    } else {
        for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vmulq_n_f32(vld1q_f32(x + i), s));
        for (; i < n; i++) y[i] = x[i] * s;
    }
}

static void n_add(const float *a, const float *b, float *y, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vaddq_f32(vld1q_f32(a + i), vld1q_f32(b + i)));
    for (; i < n; i++) y[i] = a[i] + b[i];
}

static void n_mul(const float *a, const float *b, float *y, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vmulq_f32(vld1q_f32(a + i), vld1q_f32(b + i)));
    for (; i < n; i++) y[i] = a[i] * b[i];
}

PL_ALWAYS_INLINE float32x4_t silu_mul4(float32x4_t g, float32x4_t u) {
    const float32x4_t e = exp4(vnegq_f32(g));
    return vmulq_f32(vdivq_f32(g, vaddq_f32(vdupq_n_f32(1.0f), e)), u);
}

static void n_silu_mul(const float *g, const float *u, float *y, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, silu_mul4(vld1q_f32(g + i), vld1q_f32(u + i)));
    if (i < n) store_part(y + i, silu_mul4(load_part(g + i, n - i), load_part(u + i, n - i)), n - i);
}

static float n_max(const float *x, int64_t n) {
    float32x4_t m0 = vdupq_n_f32(-INFINITY), m1 = m0;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        m0 = vmaxq_f32(m0, vld1q_f32(x + i));
        m1 = vmaxq_f32(m1, vld1q_f32(x + i + 4));
    }
    for (; i + 4 <= n; i += 4) m0 = vmaxq_f32(m0, vld1q_f32(x + i));
    float m = vmaxvq_f32(vmaxq_f32(m0, m1));
    for (; i < n; i++) m = x[i] > m ? x[i] : m;
    return m;
}

/* y = e^(x - m); the sum kept in f64 lanes */
static double n_exp_sum(const float *x, float m, float *y, int64_t n) {
    const float32x4_t vm = vdupq_n_f32(m);
    float64x2_t s0 = vdupq_n_f64(0.0), s1 = s0;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const float32x4_t e = exp4(vsubq_f32(vld1q_f32(x + i), vm));
        vst1q_f32(y + i, e);
        s0 = vaddq_f64(s0, vcvt_f64_f32(vget_low_f32(e)));
        s1 = vaddq_f64(s1, vcvt_high_f64_f32(e));
    }
    double sum = vaddvq_f64(vaddq_f64(s0, s1));
    if (i < n) {
        float t[4];
        vst1q_f32(t, exp4(vsubq_f32(load_part(x + i, n - i), vm)));
        for (int64_t k = 0; k < n - i; k++) y[i + k] = t[k], sum += (double)t[k];
    }
    return sum;
}

/* y += a * x, one fused multiply-add per element (vector or fmaf) */
static void n_axpy_f32(float a, const float *x, float *y, int64_t n) {
    const float32x4_t va = vdupq_n_f32(a);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        vst1q_f32(y + i, vfmaq_f32(vld1q_f32(y + i), va, vld1q_f32(x + i)));
        vst1q_f32(y + i + 4, vfmaq_f32(vld1q_f32(y + i + 4), va, vld1q_f32(x + i + 4)));
    }
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vfmaq_f32(vld1q_f32(y + i), va, vld1q_f32(x + i)));
    for (; i < n; i++) y[i] = fmaf(a, x[i], y[i]);
}

/* y += a * x, f16 x: y[i] = fma(a, x[i], y[i]) for every element (the
 * vector lanes and the scalar tail are the same operation) -- the rows
 * kernels below repeat exactly this per row */
static void n_axpy_f16(float a, const uint16_t *x, float *y, int64_t n) {
    const float32x4_t va = vdupq_n_f32(a);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const uint16x8_t h = vld1q_u16(x + i);
        vst1q_f32(y + i, vfmaq_f32(vld1q_f32(y + i), va, f16x8_lo(h)));
        vst1q_f32(y + i + 4, vfmaq_f32(vld1q_f32(y + i + 4), va, f16x8_hi(h)));
    }
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vfmaq_f32(vld1q_f32(y + i), va, pl_f16x4_to_f32(x + i)));
    for (; i < n; i++) y[i] = fmaf(a, pl_f16_to_f32_neon(x[i]), y[i]);
}

/* How many rows ahead the row kernels prefetch: the rows of one head sit
 * kv_dim elements apart, a stride the hardware prefetchers follow poorly. */
#define PL_ROW_PREFETCH 16

/* axpy_rows_f16 over 8 * n8 columns (n8 a constant where inlined, <= 8):
 * the columns' sums stay in registers over all the rows */
PL_ALWAYS_INLINE void axpy_rows_cols8(const float *a, const uint16_t *x, int64_t stride, int64_t n_rows, float *y, const int n8) {
    float32x4_t acc[16];
    PL_UNROLL for (int v = 0; v < 2 * n8; v++) acc[v] = vld1q_f32(y + 4 * v);
    for (int64_t r = 0; r < n_rows; r++) {
        const uint16_t *xr = x + r * stride;
        pl_prefetch_bytes(xr + PL_ROW_PREFETCH * stride, 16 * n8);
        const float32x4_t va = vdupq_n_f32(a[r]);
        PL_UNROLL for (int v = 0; v < n8; v++) {
            const uint16x8_t h = vld1q_u16(xr + 8 * v);
            acc[2 * v] = vfmaq_f32(acc[2 * v], va, f16x8_lo(h));
            acc[2 * v + 1] = vfmaq_f32(acc[2 * v + 1], va, f16x8_hi(h));
        }
    }
    PL_UNROLL for (int v = 0; v < 2 * n8; v++) vst1q_f32(y + 4 * v, acc[v]);
}

/* y += a[r] * row r for every row, in row order, one fma per element and
 * row: n_rows axpy_f16 calls' bits.  64 columns at a time in 16
 * registers, then 32, 16, 8, 4 and single columns. */
static void n_axpy_rows_f16(const float *a, const uint16_t *x, int64_t stride, int64_t n_rows, float *y, int64_t n) {
    int64_t c = 0;
    for (; c + 64 <= n; c += 64) axpy_rows_cols8(a, x + c, stride, n_rows, y + c, 8);
    if (c + 32 <= n) axpy_rows_cols8(a, x + c, stride, n_rows, y + c, 4), c += 32;
    if (c + 16 <= n) axpy_rows_cols8(a, x + c, stride, n_rows, y + c, 2), c += 16;
    if (c + 8 <= n) axpy_rows_cols8(a, x + c, stride, n_rows, y + c, 1), c += 8;
    if (c + 4 <= n) {
        float32x4_t acc = vld1q_f32(y + c);
        for (int64_t r = 0; r < n_rows; r++) acc = vfmaq_f32(acc, vdupq_n_f32(a[r]), pl_f16x4_to_f32(x + r * stride + c));
        vst1q_f32(y + c, acc);
        c += 4;
    }
    for (; c < n; c++) {
        float acc = y[c];
        for (int64_t r = 0; r < n_rows; r++) acc = fmaf(a[r], pl_f16_to_f32_neon(x[r * stride + c]), acc);
        y[c] = acc;
    }
}

/* dot_rows_f16: the NEON tier's f16 vec_dot (quant/dot_f16_arm.h's core)
 * row after row, q widened once (zero-padded as the core pads), four rows
 * per core call. */
static void n_dot_rows_f16(const uint16_t *x, int64_t stride, int64_t n_rows, const uint16_t *q, int64_t n, float *y) {
    if (n > PL_MAX_HEAD_DIM) { /* outside the contract: the same core on f16 q */
        for (int64_t r = 0; r < n_rows; r++) {
            const uint16_t *xr = x + r * stride;
            float *out = y + r;
            pl_f16_dot_core(n, &xr, &q, NULL, &out, 1, 1, 0);
        }
        return;
    }
    float qf[PL_MAX_HEAD_DIM] __attribute__((aligned(16)));
    pl_f16_widen_padded(q, n, qf);
    const float *qp = qf;
    int64_t r = 0;
    for (; r + 4 <= n_rows; r += 4) {
        const uint16_t *xr[4];
        for (int k = 0; k < 4; k++) {
            xr[k] = x + (r + k) * stride;
            pl_prefetch_bytes(xr[k] + PL_ROW_PREFETCH * stride, 2 * n);
        }
        float *out = y + r;
        pl_f16_dot_core(n, xr, NULL, &qp, &out, 4, 1, 1);
    }
    for (; r < n_rows; r++) {
        const uint16_t *xr = x + r * stride;
        float *out = y + r;
        pl_f16_dot_core(n, &xr, NULL, &qp, &out, 1, 1, 1);
    }
}

/* two heads over the same rows: each row loaded and widened once for
 * both, each entry the core's bits (as dot_rows_f16's) */
static void n_dot_rows2_f16(const uint16_t *x, int64_t stride, int64_t n_rows, const uint16_t *qa, const uint16_t *qb,
                            int64_t n, float *ya, float *yb) {
    if (n > PL_MAX_HEAD_DIM) {
        n_dot_rows_f16(x, stride, n_rows, qa, n, ya);
        n_dot_rows_f16(x, stride, n_rows, qb, n, yb);
        return;
    }
    float qf[2][PL_MAX_HEAD_DIM] __attribute__((aligned(16)));
    pl_f16_widen_padded(qa, n, qf[0]);
    pl_f16_widen_padded(qb, n, qf[1]);
    const float *qp[2] = {qf[0], qf[1]};
    int64_t r = 0;
    for (; r + 2 <= n_rows; r += 2) {
        const uint16_t *xr[2] = {x + r * stride, x + (r + 1) * stride};
        pl_prefetch_bytes(xr[0] + PL_ROW_PREFETCH * stride, 2 * n);
        pl_prefetch_bytes(xr[1] + PL_ROW_PREFETCH * stride, 2 * n);
        float *out[2] = {ya + r, yb + r};
        pl_f16_dot_core(n, xr, NULL, qp, out, 2, 2, 1);
    }
    if (r < n_rows) {
        const uint16_t *xr = x + r * stride;
        float *out[2] = {ya + r, yb + r};
        pl_f16_dot_core(n, &xr, NULL, qp, out, 1, 2, 1);
    }
}

/* axpy_rows_f16 for two heads, 32 columns of each in 16 registers; the
 * rest of the columns by the one-head kernel (the same fma per element) */
static void n_axpy_rows2_f16(const float *wa, const float *wb, const uint16_t *x, int64_t stride, int64_t n_rows, float *ya,
                             float *yb, int64_t n) {
    int64_t c = 0;
    for (; c + 32 <= n; c += 32) {
        float32x4_t acc_a[8], acc_b[8];
        PL_UNROLL for (int v = 0; v < 8; v++) acc_a[v] = vld1q_f32(ya + c + 4 * v), acc_b[v] = vld1q_f32(yb + c + 4 * v);
        for (int64_t r = 0; r < n_rows; r++) {
            const uint16_t *xr = x + r * stride + c;
            pl_prefetch_bytes(xr + PL_ROW_PREFETCH * stride, 64);
            const float32x4_t va = vdupq_n_f32(wa[r]), vb = vdupq_n_f32(wb[r]);
            PL_UNROLL for (int v = 0; v < 4; v++) {
                const uint16x8_t h = vld1q_u16(xr + 8 * v);
                const float32x4_t lo = f16x8_lo(h), hi = f16x8_hi(h);
                acc_a[2 * v] = vfmaq_f32(acc_a[2 * v], va, lo);
                acc_a[2 * v + 1] = vfmaq_f32(acc_a[2 * v + 1], va, hi);
                acc_b[2 * v] = vfmaq_f32(acc_b[2 * v], vb, lo);
                acc_b[2 * v + 1] = vfmaq_f32(acc_b[2 * v + 1], vb, hi);
            }
        }
        PL_UNROLL for (int v = 0; v < 8; v++) vst1q_f32(ya + c + 4 * v, acc_a[v]), vst1q_f32(yb + c + 4 * v, acc_b[v]);
    }
    if (c < n) {
        n_axpy_rows_f16(wa, x + c, stride, n_rows, ya + c, n - c);
        n_axpy_rows_f16(wb, x + c, stride, n_rows, yb + c, n - c);
    }
}

/* y = f16(x * s) as f32: the product rounded once to f32, then to f16 */
static void n_scale_round_f16(const float *x, float s, float *y, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, round_f16(vmulq_n_f32(vld1q_f32(x + i), s)));
    for (; i < n; i++) y[i] = pl_f16_to_f32(pl_f32_to_f16(x[i] * s));
}

/* y = f16(fma(x, a, y)) as f32 */
static void n_mad_round_f16(float a, const uint16_t *x, float *y, int64_t n) {
    const float32x4_t va = vdupq_n_f32(a);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const uint16x8_t h = vld1q_u16(x + i);
        vst1q_f32(y + i, round_f16(vfmaq_f32(vld1q_f32(y + i), f16x8_lo(h), va)));
        vst1q_f32(y + i + 4, round_f16(vfmaq_f32(vld1q_f32(y + i + 4), f16x8_hi(h), va)));
    }
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, round_f16(vfmaq_f32(vld1q_f32(y + i), pl_f16x4_to_f32(x + i), va)));
    for (; i < n; i++) y[i] = pl_f16_to_f32(pl_f32_to_f16(fmaf(pl_f16_to_f32_neon(x[i]), a, y[i])));
}

/* ---- non-causal attention, PL_ATTN_QB = 16 queries = four vectors ----- */

/* acc[k][0..3] += (lane l of xv[k]) * q[0..3] for the rows k < nr; a lane
 * times a vector is the same fused multiply-add as vfmaq_n_f32 */
#define PL_SCORE_LANE(l)                                                                                      \
    do {                                                                                                      \
        const float *qd = qt + (d + (l)) * PL_ATTN_QB;                                                        \
        const float32x4_t q0 = vld1q_f32(qd), q1 = vld1q_f32(qd + 4), q2 = vld1q_f32(qd + 8), q3 = vld1q_f32(qd + 12); \
        PL_UNROLL for (int k = 0; k < nr; k++) {                                                              \
            acc[k][0] = vfmaq_laneq_f32(acc[k][0], q0, xv[k], l);                                             \
            acc[k][1] = vfmaq_laneq_f32(acc[k][1], q1, xv[k], l);                                             \
            acc[k][2] = vfmaq_laneq_f32(acc[k][2], q2, xv[k], l);                                             \
            acc[k][3] = vfmaq_laneq_f32(acc[k][3], q3, xv[k], l);                                             \
        }                                                                                                     \
    } while (0)

/* scores of nr (<= 4, a constant where inlined) rows: 16 accumulators,
 * four elements of each row loaded at once and taken lane by lane */
PL_ALWAYS_INLINE void n_scores_rows(const float *qt, const float *x, int64_t stride, const int nr, int64_t n, float scale, float *s,
                                     float32x4_t *mx) {
    float32x4_t acc[4][4], xv[4];
    PL_UNROLL for (int k = 0; k < nr; k++) acc[k][0] = acc[k][1] = acc[k][2] = acc[k][3] = vdupq_n_f32(0.0f);
    int64_t d = 0;
    for (; d + 4 <= n; d += 4) {
        PL_UNROLL for (int k = 0; k < nr; k++) xv[k] = vld1q_f32(x + k * stride + d);
        PL_SCORE_LANE(0);
        PL_SCORE_LANE(1);
        PL_SCORE_LANE(2);
        PL_SCORE_LANE(3);
    }
    for (; d < n; d++) {
        PL_UNROLL for (int k = 0; k < nr; k++) xv[k] = vdupq_n_f32(x[k * stride + d]);
        PL_SCORE_LANE(0); /* a row's element in every lane */
    }
    const float32x4_t vs = vdupq_n_f32(scale);
    PL_UNROLL for (int k = 0; k < nr; k++)
        PL_UNROLL for (int j = 0; j < 4; j++) {
            const float32x4_t v = vmulq_f32(acc[k][j], vs);
            vst1q_f32(s + k * PL_ATTN_QB + 4 * j, v);
            mx[j] = vmaxq_f32(mx[j], v);
        }
}
#undef PL_SCORE_LANE

static void n_attn_scores_f32(const float *qt, const float *x, int64_t stride, int64_t n_rows, int64_t n, float scale, float *s,
                              float *m) {
    float32x4_t mx[4];
    PL_UNROLL for (int j = 0; j < 4; j++) mx[j] = vdupq_n_f32(-INFINITY);
    int64_t r = 0;
    for (; r + 4 <= n_rows; r += 4) {
        if (r + 8 <= n_rows)
            for (int k = 4; k < 8; k++) pl_prefetch_bytes(x + (r + k) * stride, n * 4);
        n_scores_rows(qt, x + r * stride, stride, 4, n, scale, s + r * PL_ATTN_QB, mx);
    }
    for (; r < n_rows; r++) n_scores_rows(qt, x + r * stride, stride, 1, n, scale, s + r * PL_ATTN_QB, mx);
    /* the max of the maxima: the same as one running max, in any order */
    if (m)
        PL_UNROLL for (int j = 0; j < 4; j++) vst1q_f32(m + 4 * j, vmaxq_f32(mx[j], vld1q_f32(m + 4 * j)));
}

/* acc[g][v] += (lane g of wv) * xv[v] */
#define PL_VALUE_LANE(g)                                                                    \
    PL_UNROLL for (int v = 0; v < nv; v++) acc[g][v] = vfmaq_laneq_f32(acc[g][v], xv[v], wv, g)

/* 4 queries x nv (<= 4) vectors of 4 columns, in registers over all the
 * rows */
PL_ALWAYS_INLINE void n_values_tile(const float *w, const float *x, int64_t stride, int64_t n_rows, int64_t n, float *o, const int nv) {
    float32x4_t acc[4][4], xv[4];
    PL_UNROLL for (int g = 0; g < 4; g++)
        PL_UNROLL for (int v = 0; v < nv; v++) acc[g][v] = vld1q_f32(o + g * n + 4 * v);
    for (int64_t r = 0; r < n_rows; r++) {
        const float *xr = x + r * stride;
        const float32x4_t wv = vld1q_f32(w + r * PL_ATTN_QB);
        PL_UNROLL for (int v = 0; v < nv; v++) xv[v] = vld1q_f32(xr + 4 * v);
        PL_VALUE_LANE(0);
        PL_VALUE_LANE(1);
        PL_VALUE_LANE(2);
        PL_VALUE_LANE(3);
    }
    PL_UNROLL for (int g = 0; g < 4; g++)
        PL_UNROLL for (int v = 0; v < nv; v++) vst1q_f32(o + g * n + 4 * v, acc[g][v]);
}
#undef PL_VALUE_LANE

/* the columns 16 at a time, then 4, then one by one */
static void n_attn_values_f32(float *w, const float *m, double *sum, const float *x, int64_t stride, int64_t n_rows, int64_t n,
                              float *o) {
    /* a row of weights is four vectors: e^(s - m), summed in f64 pairs */
    float32x4_t vm[4];
    float64x2_t sd[8];
    PL_UNROLL for (int j = 0; j < 4; j++) vm[j] = vld1q_f32(m + 4 * j);
    PL_UNROLL for (int j = 0; j < 8; j++) sd[j] = vld1q_f64(sum + 2 * j);
    for (int64_t r = 0; r < n_rows; r++) {
        float *wr = w + r * PL_ATTN_QB;
        PL_UNROLL for (int j = 0; j < 4; j++) {
            const float32x4_t e = exp4(vsubq_f32(vld1q_f32(wr + 4 * j), vm[j]));
            vst1q_f32(wr + 4 * j, e);
            sd[2 * j] = vaddq_f64(sd[2 * j], vcvt_f64_f32(vget_low_f32(e)));
            sd[2 * j + 1] = vaddq_f64(sd[2 * j + 1], vcvt_high_f64_f32(e));
        }
    }
    PL_UNROLL for (int j = 0; j < 8; j++) vst1q_f64(sum + 2 * j, sd[j]);
    int64_t c = 0;
    for (; c + 16 <= n; c += 16)
        for (int i0 = 0; i0 < PL_ATTN_QB; i0 += 4) n_values_tile(w + i0, x + c, stride, n_rows, n, o + i0 * n + c, 4);
    for (; c + 4 <= n; c += 4)
        for (int i0 = 0; i0 < PL_ATTN_QB; i0 += 4) n_values_tile(w + i0, x + c, stride, n_rows, n, o + i0 * n + c, 1);
    for (; c < n; c++)
        for (int i = 0; i < PL_ATTN_QB; i++) {
            float acc = o[i * n + c];
            for (int64_t r = 0; r < n_rows; r++) acc = fmaf(w[r * PL_ATTN_QB + i], x[r * stride + c], acc);
            o[i * n + c] = acc;
        }
}

/* gelu_erf: cpu_erf.h's model, two lanes of double at a time */
static inline float64x2_t erf_pair_neon(float64x2_t s) {
    const float64x2_t c = vminq_f64(vdupq_n_f64(4.0), vmaxq_f64(vdupq_n_f64(-4.0), s));
    const float64x2_t t = vsubq_f64(vmulq_f64(vmulq_f64(c, c), vdupq_n_f64(0.125)), vdupq_n_f64(1.0));
    float64x2_t p = vdupq_n_f64(pl_erf_coef[PL_ERF_NCOEF - 1]);
    for (int k = PL_ERF_NCOEF - 2; k >= 0; k--) p = vfmaq_f64(vdupq_n_f64(pl_erf_coef[k]), p, t);
    return vmulq_f64(c, p);
}

static inline float32x4_t gelu_erf4(float32x4_t x) {
    const float32x4_t s = vmulq_n_f32(x, PL_ERF_SQRT_2_INV);
    const float32x4_t e =
        vcvt_high_f32_f64(vcvt_f32_f64(erf_pair_neon(vcvt_f64_f32(vget_low_f32(s)))), erf_pair_neon(vcvt_high_f64_f32(s)));
    const float32x4_t y = vmulq_f32(vmulq_n_f32(x, 0.5f), vaddq_f32(vdupq_n_f32(1.0f), e));
    return vbslq_f32(vceqq_f32(x, vdupq_n_f32(-INFINITY)), vdupq_n_f32(-0.0f), y);
}

static void n_gelu_erf(const float *x, float *y, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, gelu_erf4(vld1q_f32(x + i)));
    if (i < n) {
        /* the tail through a padded block: the same lanes' arithmetic */
        float b[4] = {0};
        for (int64_t k = i; k < n; k++) b[k - i] = x[k];
        vst1q_f32(b, gelu_erf4(vld1q_f32(b)));
        for (int64_t k = i; k < n; k++) y[k] = b[k - i];
    }
}

static const pl_cpu_isa neon = {
    .name = "neon",
    .f16_dot_tier = PL_TIER_NEON,
    .sum_sq = n_sum_sq,
    .scale_mul = n_scale_mul,
    .add = n_add,
    .mul = n_mul,
    .silu_mul = n_silu_mul,
    .max = n_max,
    .exp_sum = n_exp_sum,
    .axpy_f32 = n_axpy_f32,
    .axpy_f16 = n_axpy_f16,
    .axpy_rows_f16 = n_axpy_rows_f16,
    .dot_rows_f16 = n_dot_rows_f16,
    .scale_round_f16 = n_scale_round_f16,
    .mad_round_f16 = n_mad_round_f16,
    .dot_rows2_f16 = n_dot_rows2_f16,
    .axpy_rows2_f16 = n_axpy_rows2_f16,
    .attn_scores_f32 = n_attn_scores_f32,
    .attn_values_f32 = n_attn_values_f32,
    .gelu_erf = n_gelu_erf,
};

const pl_cpu_isa *pl_cpu_isa_neon(void) { return &neon; }

#else

const pl_cpu_isa *pl_cpu_isa_neon(void) { return 0; }

#endif
