/*
 * dots_arm_float.h -- NEON kernels for the float types (f32, f16, bf16) and the activation encoders (f16, q8_0, q8_1, q8_K).
 * A template: included by the AArch64 tier files with PL_SUFFIX defined;
 * defines PL_SUFFIX(fill_float), which sets the entries it implements.
 *
 * Float-combination order of each dot (all f32 FMA, never f16 arithmetic):
 *  - f32: eight f32x4 accumulators, accumulator k takes elements 32j + 4k
 *    .. + 3; then whole 4s into accumulator 0; the result is
 *    vaddvq(((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))), then the
 *    last n % 4 products added one by one.
 *  - f16: quant/dot_f16_arm.h (chunk c of 4 into accumulator c % 4, row
 *    zero-padded to 16s, vaddvq((s0 + s1) + (s2 + s3))); the tile (2 rows x
 *    2 columns) and the rows kernel (8 rows, 4 at a time) run that core, as
 *    do the CPU backend's attention row kernels (backend/cpu/isa_neon.c).
 *  - bf16: the same order as f16 (widening is a 16-bit shift).
 * The encoders are byte for byte the scalar reference encoders of the
 * type table (quant/ref_q8.c, quant/ref_float.c).
 */
#include <math.h>

#include "base/half.h"
#include "quant/dot_f16_arm.h"
#include "quant/quant_util.h"

/* ---- dots --------------------------------------------------------------- */

static float PL_SUFFIX(dot_f32)(int64_t n, const void *w, const void *a) {
    const float *x = w, *y = a;
    float32x4_t s[8];
    for (int k = 0; k < 8; k++) s[k] = vdupq_n_f32(0.0f);
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 8; k++) s[k] = vfmaq_f32(s[k], vld1q_f32(x + i + 4 * k), vld1q_f32(y + i + 4 * k));
    for (; i + 4 <= n; i += 4) s[0] = vfmaq_f32(s[0], vld1q_f32(x + i), vld1q_f32(y + i));
    const float32x4_t lo = vaddq_f32(vaddq_f32(s[0], s[1]), vaddq_f32(s[2], s[3]));
    const float32x4_t hi = vaddq_f32(vaddq_f32(s[4], s[5]), vaddq_f32(s[6], s[7]));
    float sum = vaddvq_f32(vaddq_f32(lo, hi));
    for (; i < n; i++) sum += x[i] * y[i];
    return sum;
}

/* bf16 x 4 -> f32 (exact: the bits shifted up) */
PL_ALWAYS_INLINE float32x4_t PL_SUFFIX(bf16x4)(uint16x4_t v) { return vreinterpretq_f32_u32(vshll_n_u16(v, 16)); }

/* chunk c of 4 into accumulator c % 4, zero-padded to a whole 16, as f16 */
static float PL_SUFFIX(dot_bf16)(int64_t n, const void *w, const void *a) {
    const uint16_t *x = w, *y = a;
    float32x4_t s[4];
    for (int k = 0; k < 4; k++) s[k] = vdupq_n_f32(0.0f);
    const int64_t n16 = n & ~(int64_t)15;
    for (int64_t i = 0; i < n16; i += 16)
        for (int h = 0; h < 2; h++) {
            const uint16x8_t xv = vld1q_u16(x + i + 8 * h), yv = vld1q_u16(y + i + 8 * h);
            s[2 * h] = vfmaq_f32(s[2 * h], PL_SUFFIX(bf16x4)(vget_low_u16(xv)), PL_SUFFIX(bf16x4)(vget_low_u16(yv)));
            s[2 * h + 1] = vfmaq_f32(s[2 * h + 1], PL_SUFFIX(bf16x4)(vget_high_u16(xv)), PL_SUFFIX(bf16x4)(vget_high_u16(yv)));
        }
    if (n16 < n) {
        uint16_t xt[16] = {0}, yt[16] = {0};
        memcpy(xt, x + n16, (size_t)(n - n16) * sizeof(uint16_t));
        memcpy(yt, y + n16, (size_t)(n - n16) * sizeof(uint16_t));
        for (int k = 0; k < 4; k++) s[k] = vfmaq_f32(s[k], PL_SUFFIX(bf16x4)(vld1_u16(xt + 4 * k)), PL_SUFFIX(bf16x4)(vld1_u16(yt + 4 * k)));
    }
    return vaddvq_f32(vaddq_f32(vaddq_f32(s[0], s[1]), vaddq_f32(s[2], s[3])));
}

static float PL_SUFFIX(dot_f16)(int64_t n, const void *w, const void *a) {
    const uint16_t *x = w, *y = a;
    float r;
    float *out = &r;
    pl_f16_dot_core(n, &x, &y, NULL, &out, 1, 1, 0);
    return r;
}

/* y[c * ys + r] = dot_f16(row r, column c), 2 x 2: each row and column
 * loaded and widened once for the tile */
#define PL_F16_TILE_ROWS 2
#define PL_F16_TILE_COLS 2
static void PL_SUFFIX(dot_f16_tile)(int64_t n, const void *w, size_t ws, const void *a, size_t as, float *y, size_t ys) {
    const uint16_t *xr[PL_F16_TILE_ROWS], *yc[PL_F16_TILE_COLS];
    float *out[PL_F16_TILE_COLS];
    for (int r = 0; r < PL_F16_TILE_ROWS; r++) xr[r] = (const uint16_t *)((const uint8_t *)w + (size_t)r * ws);
    for (int c = 0; c < PL_F16_TILE_COLS; c++) {
        yc[c] = (const uint16_t *)((const uint8_t *)a + (size_t)c * as);
        out[c] = y + (size_t)c * ys;
    }
    pl_f16_dot_core(n, xr, yc, NULL, out, PL_F16_TILE_ROWS, PL_F16_TILE_COLS, 0);
}

/* PL_DOT_ROWS rows x one token, four rows per core call (the token's
 * values widened once per four rows) */
static void PL_SUFFIX(dot_f16_rows)(int64_t n, const void *w, size_t ws, const void *a, size_t as, float *y, size_t ys) {
    (void)as, (void)ys;
    const uint16_t *yc = a;
    for (int r0 = 0; r0 < PL_DOT_ROWS; r0 += 4) {
        const uint16_t *xr[4];
        for (int r = 0; r < 4; r++) xr[r] = (const uint16_t *)((const uint8_t *)w + (size_t)(r0 + r) * ws);
        float *out = y + r0;
        pl_f16_dot_core(n, xr, &yc, NULL, &out, 4, 1, 0);
    }
}

/* ---- decoders (bit for bit the reference's) ------------------------------ */

/* f16 -> f32: FCVTL is exact and quiets a signalling NaN keeping its
 * payload, as pl_q_f16 does */
static void PL_SUFFIX(f16_to_float)(const void *src, float *dst, int64_t n) {
    const uint16_t *h = src;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const uint16x8_t v = vld1q_u16(h + i);
        vst1q_f32(dst + i, vcvt_f32_f16(vreinterpret_f16_u16(vget_low_u16(v))));
        vst1q_f32(dst + i + 4, vcvt_high_f32_f16(vreinterpretq_f16_u16(v)));
    }
    for (; i < n; i++) dst[i] = pl_q_f16(h[i]);
}

static void PL_SUFFIX(bf16_to_float)(const void *src, float *dst, int64_t n) {
    const uint16_t *h = src;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const uint16x8_t v = vld1q_u16(h + i);
        vst1q_f32(dst + i, PL_SUFFIX(bf16x4)(vget_low_u16(v)));
        vst1q_f32(dst + i + 4, PL_SUFFIX(bf16x4)(vget_high_u16(v)));
    }
    for (; i < n; i++) dst[i] = pl_bf16_to_f32(h[i]);
}

/* ---- activation encoders ------------------------------------------------ */

/* f32 -> f16: FCVTN rounds to nearest even (the FPCR default), overflows
 * to inf and keeps NaN payloads quiet -- pl_f32_to_f16's bits */
static void PL_SUFFIX(act_f16)(const float *src, void *dst, int64_t n) {
    uint16_t *h = dst;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const float16x8_t v = vcvt_high_f16_f32(vcvt_f16_f32(vld1q_f32(src + i)), vld1q_f32(src + i + 4));
        vst1q_u16(h + i, vreinterpretq_u16_f16(v));
    }
    for (; i < n; i++) h[i] = pl_f32_to_f16(src[i]);
}

/* f32 -> bf16: round to nearest even on the bits, NaN forced quiet
 * (pl_f32_to_bf16) */
static void PL_SUFFIX(act_bf16)(const float *src, void *dst, int64_t n) {
    uint16_t *h = dst;
    const uint32x4_t one = vdupq_n_u32(1), half = vdupq_n_u32(0x7fff), inf = vdupq_n_u32(0x7f800000u);
    const uint32x4_t abs_mask = vdupq_n_u32(0x7fffffffu);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const uint32x4_t u = vreinterpretq_u32_f32(vld1q_f32(src + i));
        const uint16x4_t r = vshrn_n_u32(vaddq_u32(u, vaddq_u32(half, vandq_u32(vshrq_n_u32(u, 16), one))), 16);
        const uint16x4_t q = vorr_u16(vshrn_n_u32(u, 16), vdup_n_u16(64));
        const uint16x4_t nan = vmovn_u32(vcgtq_u32(vandq_u32(u, abs_mask), inf));
        vst1_u16(h + i, vbsl_u16(nan, q, r));
    }
    for (; i < n; i++) h[i] = pl_f32_to_bf16(src[i]);
}

/* One block of 32 activations as the x86 backend's q8_0/q8_1 encoder
 * (pl_ref_q8_0_act): amax = the largest |x| that compares greater than
 * the running one (NaN never does), id = 127 / amax, q = x * id rounded to
 * nearest even and converted as cvtps2dq does (INT32_MIN for NaN or out of
 * range), then saturated to int8.  Returns amax; *sum gets the int32 sum
 * of the unsaturated q (wrapping). */
PL_ALWAYS_INLINE float PL_SUFFIX(q8_act_block)(const float *x, int8_t *qs, int32_t *sum) {
    float32x4_t v[8];
    float32x4_t m = vdupq_n_f32(0.0f);
    for (int k = 0; k < 8; k++) {
        v[k] = vld1q_f32(x + 4 * k);
        const float32x4_t ax = vabsq_f32(v[k]);
        m = vbslq_f32(vcgtq_f32(ax, m), ax, m);
    }
    const float amax = vmaxvq_f32(m); /* lanes hold no NaN */
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    const float32x4_t lo = vdupq_n_f32(-2147483648.0f), hi = vdupq_n_f32(2147483648.0f);
    const int32x4_t indefinite = vdupq_n_s32(INT32_MIN);
    int32x4_t acc = vdupq_n_s32(0);
    int16x4_t h16[8];
    for (int k = 0; k < 8; k++) {
        const float32x4_t p = vmulq_n_f32(v[k], id);
        const uint32x4_t ok = vandq_u32(vcgeq_f32(p, lo), vcltq_f32(p, hi));
        const int32x4_t q = vbslq_s32(ok, vcvtnq_s32_f32(p), indefinite);
        acc = vaddq_s32(acc, q);
        h16[k] = vqmovn_s32(q);
    }
    for (int k = 0; k < 4; k++) vst1_s8(qs + 8 * k, vqmovn_s16(vcombine_s16(h16[2 * k], h16[2 * k + 1])));
    if (sum) *sum = vaddvq_s32(acc);
    return amax;
}

static void PL_SUFFIX(act_q8_0)(const float *src, void *dst, int64_t n) {
    pl_block_q8_0 *b = dst;
    for (int64_t i = 0; i < n / 32; i++) {
        const float amax = PL_SUFFIX(q8_act_block)(src + 32 * i, b[i].qs, NULL);
        b[i].d = pl_f32_to_f16(amax / 127.0f);
    }
}

static void PL_SUFFIX(act_q8_1)(const float *src, void *dst, int64_t n) {
    pl_block_q8_1 *b = dst;
    for (int64_t i = 0; i < n / 32; i++) {
        int32_t sum;
        const float amax = PL_SUFFIX(q8_act_block)(src + 32 * i, b[i].qs, &sum);
        const float d = amax / 127.0f;
        b[i].d = pl_f32_to_f16(d);
        b[i].s = pl_f32_to_f16(d * (float)sum);
    }
}

/* q8_K as pl_ref_q8_K_act: max = the first x whose |x| is the block's
 * largest (NaN never counts), iscale = -127 / max, q = min(nearest_int(
 * iscale * x), 127) by the 1.5 * 2^23 bit trick (a multiply, then an add:
 * the same two roundings as the reference), kept as its low byte; bsums of
 * 16; d = 1 / iscale; an all-zero block is all zero bytes. */
static void PL_SUFFIX(act_q8_K)(const float *src, void *dst, int64_t n) {
    pl_block_q8_K *b = dst;
    for (int64_t i = 0; i < n / 256; i++) {
        const float *x = src + 256 * i;
        float32x4_t m0 = vdupq_n_f32(0.0f), m1 = m0;
        for (int j = 0; j < 256; j += 8) {
            const float32x4_t a0 = vabsq_f32(vld1q_f32(x + j)), a1 = vabsq_f32(vld1q_f32(x + j + 4));
            m0 = vbslq_f32(vcgtq_f32(a0, m0), a0, m0);
            m1 = vbslq_f32(vcgtq_f32(a1, m1), a1, m1);
        }
        const float amax = vmaxvq_f32(vmaxq_f32(m0, m1)); /* no NaN in the lanes */
        if (amax == 0.0f) {
            memset(&b[i], 0, sizeof b[i]);
            continue;
        }
        /* the first element reaching amax (the reference's strict > keeps
         * the first of equal magnitudes) */
        const float32x4_t va = vdupq_n_f32(amax);
        float max = 0.0f;
        for (int j = 0; j < 256; j += 4) {
            if (vmaxvq_u32(vceqq_f32(vabsq_f32(vld1q_f32(x + j)), va)) == 0) continue;
            int l = 0;
            while (fabsf(x[j + l]) != amax) l++;
            max = x[j + l];
            break;
        }
        const float iscale = -127.0f / max;
        const float32x4_t vs = vdupq_n_f32(iscale), magic = vdupq_n_f32(12582912.0f);
        const int32x4_t mant = vdupq_n_s32(0x007fffff), bias = vdupq_n_s32(0x00400000), c127 = vdupq_n_s32(127);
        for (int j = 0; j < 256; j += 16) {
            int16x4_t h[4];
            for (int k = 0; k < 4; k++) {
                const float32x4_t t = vaddq_f32(vmulq_f32(vs, vld1q_f32(x + j + 4 * k)), magic);
                const int32x4_t q = vminq_s32(vsubq_s32(vandq_s32(vreinterpretq_s32_f32(t), mant), bias), c127);
                h[k] = vmovn_s32(q); /* low bytes survive both narrowings */
            }
            const int8x16_t q8 = vcombine_s8(vmovn_s16(vcombine_s16(h[0], h[1])), vmovn_s16(vcombine_s16(h[2], h[3])));
            vst1q_s8(b[i].qs + j, q8);
            b[i].bsums[j / 16] = vaddlvq_s8(q8);
        }
        b[i].d = 1.0f / iscale;
    }
}

static void PL_SUFFIX(fill_float)(pl_quant_kernel_set *t) {
    t[PL_TYPE_F32].vec_dot = PL_SUFFIX(dot_f32);
    t[PL_TYPE_F16].vec_dot = PL_SUFFIX(dot_f16);
    t[PL_TYPE_F16].vec_dot_tile = PL_SUFFIX(dot_f16_tile);
    t[PL_TYPE_F16].tile_rows = PL_F16_TILE_ROWS;
    t[PL_TYPE_F16].tile_cols = PL_F16_TILE_COLS;
    t[PL_TYPE_F16].vec_dot_rows = PL_SUFFIX(dot_f16_rows);
    t[PL_TYPE_F16].dot_rows = PL_DOT_ROWS;
    t[PL_TYPE_F16].act_from_float = PL_SUFFIX(act_f16);
    t[PL_TYPE_F16].to_float = PL_SUFFIX(f16_to_float);
    t[PL_TYPE_BF16].vec_dot = PL_SUFFIX(dot_bf16);
    t[PL_TYPE_BF16].act_from_float = PL_SUFFIX(act_bf16);
    t[PL_TYPE_BF16].to_float = PL_SUFFIX(bf16_to_float);
    t[PL_TYPE_Q8_0].act_from_float = PL_SUFFIX(act_q8_0);
    t[PL_TYPE_Q8_1].act_from_float = PL_SUFFIX(act_q8_1);
    t[PL_TYPE_Q8_K].act_from_float = PL_SUFFIX(act_q8_K);
}
