/*
 * dots_arm_mmla.h -- SMMLA prefill tiles (the i8mm tier): q8_0 and the
 * k-quants q4_K, q6_K, q5_K, q2_K, q3_K.  For each type this file sets all
 * three of vec_dot (1 row x 1 token, SDOT), vec_dot_rows (PL_DOT_ROWS rows
 * x 1 token, SDOT) and vec_dot_tile (2 rows x PL_MM_COLS tokens, SMMLA), so
 * none of the dotprod tier's kernels is mixed with them.  The k-quants
 * share two drivers, kq_sdot (NR rows x 1 token) and kq_tile, which do the
 * float steps below; per type a row function (SDOT) and a tile function
 * (SMMLA) give one block's int32 sums and the float factors d, dm.
 * A template: included by kernels_i8mm.c with PL_SUFFIX defined; defines
 * PL_SUFFIX(fill_mmla).
 *
 * How the three agree bit for bit.  Each kernel computes, per (row, token)
 * and per 256- (or 32-) element block, the same exact int32 sums (the
 * block's scaled quant . activation sum, and for the types with mins the
 * mins . bsums sum); SDOT and SMMLA only split the products differently,
 * and no int32 sum can overflow.  The float work per (row, token) is then
 * the same scalar sequence in all three (the tile does it lane by lane in a
 * vector whose lanes are (r0c0, r0c1, r1c0, r1c1), the SDOT kernels in
 * scalars), every multiply-add fused:
 *   q8_0:   d = xd * yd;  acc[b & 1] = fma(d, (float)isum, acc[b & 1]);
 *           result acc[0] + acc[1]
 *   q4_K, q5_K, q2_K:  d = xd * y.d, dm = xdmin * y.d (q2_K: y.d * xd, ...);
 *           acc = fma(d, (float)isum, acc); accm = fma(dm, (float)summs, accm);
 *           result acc - accm
 *   q6_K, q3_K:  d = xd * y.d;  acc = fma(d, (float)isum, acc);  result acc
 *
 * SMMLA (vmmlaq_s32): acc(int32x4) += A(2x8 int8) * B(2x8 int8)^T, lanes
 * (a0.b0, a0.b1, a1.b0, a1.b1).  A holds 8 elements of two weight rows
 * (zip of the rows' 64-bit halves), B the same 8 elements of two tokens.
 * The unpacking of the weights (nibbles, high bits) is bytewise, so it is
 * done once on the zipped bytes of both rows.  Per sub-block the 2x2 sums
 * are multiplied by the rows' integer scales, {s0, s0, s1, s1} (a table
 * lookup of the two rows' scale bytes), and added up in int32.
 */
#if defined(__ARM_FEATURE_MATMUL_INT8) && defined(__ARM_FEATURE_DOTPROD)
#include <string.h>

#define PL_MM_COLS 4 /* tokens of a tile (two SMMLA column pairs) */

#define PL_MM_ROW(w, ws, r) ((const uint8_t *)(w) + (size_t)(r) * (ws))
#define PL_MM_Q8K(a, as, c) ((const pl_block_q8_K *)((const uint8_t *)(a) + (size_t)(c) * (as)))

PL_ALWAYS_INLINE float PL_SUFFIX(mm_f16)(const void *p) {
    uint16_t h;
    memcpy(&h, p, 2);
    return pl_f16_to_f32_neon(h);
}

/* the low / high 64-bit halves of a and b side by side */
PL_ALWAYS_INLINE uint8x16_t PL_SUFFIX(mm_zlo_u)(uint8x16_t a, uint8x16_t b) {
    return vreinterpretq_u8_u64(vzip1q_u64(vreinterpretq_u64_u8(a), vreinterpretq_u64_u8(b)));
}
PL_ALWAYS_INLINE uint8x16_t PL_SUFFIX(mm_zhi_u)(uint8x16_t a, uint8x16_t b) {
    return vreinterpretq_u8_u64(vzip2q_u64(vreinterpretq_u64_u8(a), vreinterpretq_u64_u8(b)));
}
PL_ALWAYS_INLINE int8x16_t PL_SUFFIX(mm_zlo)(int8x16_t a, int8x16_t b) {
    return vreinterpretq_s8_u8(PL_SUFFIX(mm_zlo_u)(vreinterpretq_u8_s8(a), vreinterpretq_u8_s8(b)));
}
PL_ALWAYS_INLINE int8x16_t PL_SUFFIX(mm_zhi)(int8x16_t a, int8x16_t b) {
    return vreinterpretq_s8_u8(PL_SUFFIX(mm_zhi_u)(vreinterpretq_u8_s8(a), vreinterpretq_u8_s8(b)));
}
/* 16 bytes at p0 (row 0) and p1 (row 1), zipped: *lo = the rows' bytes
 * 0..7, *hi = their bytes 8..15 */
PL_ALWAYS_INLINE void PL_SUFFIX(mm_zip_ld)(const uint8_t *p0, const uint8_t *p1, uint8x16_t *lo, uint8x16_t *hi) {
    const uint8x16_t v0 = vld1q_u8(p0), v1 = vld1q_u8(p1);
    *lo = PL_SUFFIX(mm_zlo_u)(v0, v1);
    *hi = PL_SUFFIX(mm_zhi_u)(v0, v1);
}

/* acc + the 2x2 sums of 16 elements: weights of rows 0/1 already zipped
 * (wl: elements 0..7 of both rows, wh: elements 8..15), activations ya, yb
 * (16 elements of tokens 0 and 1) zipped here. */
PL_ALWAYS_INLINE int32x4_t PL_SUFFIX(mm16)(int32x4_t acc, int8x16_t wl, int8x16_t wh, int8x16_t ya, int8x16_t yb) {
    acc = vmmlaq_s32(acc, wl, PL_SUFFIX(mm_zlo)(ya, yb));
    return vmmlaq_s32(acc, wh, PL_SUFFIX(mm_zhi)(ya, yb));
}

/* float32x4 {a, a, b, b} and {a, b, a, b}: the row and token halves of a
 * tile's lane layout */
PL_ALWAYS_INLINE float32x4_t PL_SUFFIX(mm_rows2)(float a, float b) {
    return vcombine_f32(vdup_n_f32(a), vdup_n_f32(b));
}
PL_ALWAYS_INLINE float32x4_t PL_SUFFIX(mm_cols2)(float a, float b) {
    const float32x2_t v = vset_lane_f32(b, vdup_n_f32(a), 1);
    return vcombine_f32(v, v);
}
/* the two rows' f16 scales at p0, p1 as {d0, d0, d1, d1} */
PL_ALWAYS_INLINE float32x4_t PL_SUFFIX(mm_xd)(const void *p0, const void *p1) {
    return PL_SUFFIX(mm_rows2)(PL_SUFFIX(mm_f16)(p0), PL_SUFFIX(mm_f16)(p1));
}

/* lanes (r0c0, r0c1, r1c0, r1c1) of v to y[c * ys + r], tokens c0, c0 + 1 */
PL_ALWAYS_INLINE void PL_SUFFIX(mm_store)(float *y, size_t ys, int c0, float32x4_t v) {
    y[(size_t)c0 * ys] = vgetq_lane_f32(v, 0);
    y[(size_t)(c0 + 1) * ys] = vgetq_lane_f32(v, 1);
    y[(size_t)c0 * ys + 1] = vgetq_lane_f32(v, 2);
    y[(size_t)(c0 + 1) * ys + 1] = vgetq_lane_f32(v, 3);
}

/* A table index picking byte i0 into lanes 0, 1 and byte i1 into lanes 2,
 * 3 at bit sh of each 32-bit lane; the other bytes of base are 0x80 (read
 * as 0). */
PL_ALWAYS_INLINE uint8x16_t PL_SUFFIX(mm_scale_idx)(uint64_t base, int sh, int i0, int i1) {
    const uint64_t lo = base | ((uint64_t)i0 << sh) | ((uint64_t)i0 << (sh + 32));
    const uint64_t hi = base | ((uint64_t)i1 << sh) | ((uint64_t)i1 << (sh + 32));
    return vcombine_u8(vcreate_u8(lo), vcreate_u8(hi));
}
/* {t[i0], t[i0], t[i1], t[i1]} as int32 of a 16- or 32-byte table of
 * scale bytes, zero-extended (idx bytes 0x80 + small read as 0). */
PL_ALWAYS_INLINE int32x4_t PL_SUFFIX(mm_scale_u1)(uint8x16_t t, int i0, int i1) {
    return vreinterpretq_s32_u8(vqtbl1q_u8(t, PL_SUFFIX(mm_scale_idx)(0x8080800080808000ull, 0, i0, i1)));
}
PL_ALWAYS_INLINE int32x4_t PL_SUFFIX(mm_scale_u2)(uint8x16x2_t t, int i0, int i1) {
    return vreinterpretq_s32_u8(vqtbl2q_u8(t, PL_SUFFIX(mm_scale_idx)(0x8080800080808000ull, 0, i0, i1)));
}
/* the same, sign-extended: the byte goes to the top of its lane, then an
 * arithmetic shift */
PL_ALWAYS_INLINE int32x4_t PL_SUFFIX(mm_scale_s2)(uint8x16x2_t t, int i0, int i1) {
    const uint8x16_t idx = PL_SUFFIX(mm_scale_idx)(0x0080808000808080ull, 24, i0, i1);
    return vshrq_n_s32(vreinterpretq_s32_u8(vqtbl2q_u8(t, idx)), 24);
}

/* [sum a, sum b, sum c, sum d] */
PL_ALWAYS_INLINE int32x4_t PL_SUFFIX(mm_hsum4)(int32x4_t a, int32x4_t b, int32x4_t c, int32x4_t d) {
    return vpaddq_s32(vpaddq_s32(a, b), vpaddq_s32(c, d));
}

/* zero-extensions: the low / high 4 of 8 uint16 to int32, the low / high
 * 8 of 16 uint8 to int16 */
PL_ALWAYS_INLINE int32x4_t PL_SUFFIX(mm_wlo32)(uint16x8_t x) {
    return vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(x)));
}
PL_ALWAYS_INLINE int32x4_t PL_SUFFIX(mm_whi32)(uint16x8_t x) { return vreinterpretq_s32_u32(vmovl_high_u16(x)); }
PL_ALWAYS_INLINE int16x8_t PL_SUFFIX(mm_wlo16)(uint8x16_t x) { return vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(x))); }
PL_ALWAYS_INLINE int16x8_t PL_SUFFIX(mm_whi16)(uint8x16_t x) { return vreinterpretq_s16_u16(vmovl_high_u8(x)); }

/* x shifted left by s (right for s < 0), bytewise */
PL_ALWAYS_INLINE uint8x16_t PL_SUFFIX(mm_shl)(uint8x16_t x, int s) { return vshlq_u8(x, vdupq_n_s8((int8_t)s)); }

/* ---- q8_0 ------------------------------------------------------------ */

/* NR rows (1: vec_dot, PL_DOT_ROWS: the rows kernel) x 1 token, SDOT */
PL_ALWAYS_INLINE void PL_SUFFIX(q8_0_sdot)(int64_t n, const void *w, size_t ws, const void *a, float *out,
                                           const int NR) {
    const pl_block_q8_0 *y = a;
    const int64_t nb = n / 32;
    float acc[2][PL_DOT_ROWS];
    for (int r = 0; r < NR; r++)
        acc[0][r] = acc[1][r] = 0.0f;
    for (int64_t i = 0; i < nb; i++) {
        const int8x16_t y0 = vld1q_s8(y[i].qs), y1 = vld1q_s8(y[i].qs + 16);
        const float yd = PL_SUFFIX(mm_f16)(&y[i].d);
        float *ac = acc[i & 1];
#pragma GCC unroll 8
        for (int r = 0; r < NR; r++) {
            const pl_block_q8_0 *x = (const pl_block_q8_0 *)PL_MM_ROW(w, ws, r) + i;
            const int32x4_t s = vdotq_s32(vdotq_s32(vdupq_n_s32(0), vld1q_s8(x->qs), y0), vld1q_s8(x->qs + 16), y1);
            const float d = PL_SUFFIX(mm_f16)(&x->d) * yd;
            ac[r] = __builtin_fmaf(d, (float)vaddvq_s32(s), ac[r]);
        }
    }
    for (int r = 0; r < NR; r++)
        out[r] = acc[0][r] + acc[1][r];
}

/* 2 rows x PL_MM_COLS tokens, SMMLA */
PL_ALWAYS_INLINE void PL_SUFFIX(q8_0_mmla_block)(const pl_block_q8_0 *x0, const pl_block_q8_0 *x1, const void *a,
                                                 size_t as, int64_t i, float32x4_t *acc) {
    const int8x16_t a0 = vld1q_s8(x0->qs), a1 = vld1q_s8(x0->qs + 16);
    const int8x16_t b0 = vld1q_s8(x1->qs), b1 = vld1q_s8(x1->qs + 16);
    const int8x16_t wl0 = PL_SUFFIX(mm_zlo)(a0, b0), wh0 = PL_SUFFIX(mm_zhi)(a0, b0);
    const int8x16_t wl1 = PL_SUFFIX(mm_zlo)(a1, b1), wh1 = PL_SUFFIX(mm_zhi)(a1, b1);
    const float32x4_t xd = PL_SUFFIX(mm_xd)(&x0->d, &x1->d);
    for (int p = 0; p < PL_MM_COLS / 2; p++) {
        const pl_block_q8_0 *ya = (const pl_block_q8_0 *)((const uint8_t *)a + (size_t)(2 * p) * as) + i;
        const pl_block_q8_0 *yb = (const pl_block_q8_0 *)((const uint8_t *)a + (size_t)(2 * p + 1) * as) + i;
        int32x4_t s = PL_SUFFIX(mm16)(vdupq_n_s32(0), wl0, wh0, vld1q_s8(ya->qs), vld1q_s8(yb->qs));
        s = PL_SUFFIX(mm16)(s, wl1, wh1, vld1q_s8(ya->qs + 16), vld1q_s8(yb->qs + 16));
        const float32x4_t d = vmulq_f32(xd, PL_SUFFIX(mm_cols2)(PL_SUFFIX(mm_f16)(&ya->d), PL_SUFFIX(mm_f16)(&yb->d)));
        acc[p] = vfmaq_f32(acc[p], d, vcvtq_f32_s32(s));
    }
}

static void PL_SUFFIX(q8_0_tile)(int64_t n, const void *w, size_t ws, const void *a, size_t as, float *y, size_t ys) {
    const pl_block_q8_0 *x0 = w, *x1 = (const pl_block_q8_0 *)PL_MM_ROW(w, ws, 1);
    const int64_t nb = n / 32;
    float32x4_t acc0[PL_MM_COLS / 2], acc1[PL_MM_COLS / 2];
    for (int p = 0; p < PL_MM_COLS / 2; p++)
        acc0[p] = acc1[p] = vdupq_n_f32(0.0f);
    int64_t i = 0;
    for (; i + 2 <= nb; i += 2) {
        PL_SUFFIX(q8_0_mmla_block)(x0 + i, x1 + i, a, as, i, acc0);
        PL_SUFFIX(q8_0_mmla_block)(x0 + i + 1, x1 + i + 1, a, as, i + 1, acc1);
    }
    if (i < nb)
        PL_SUFFIX(q8_0_mmla_block)(x0 + i, x1 + i, a, as, i, acc0);
    for (int p = 0; p < PL_MM_COLS / 2; p++)
        PL_SUFFIX(mm_store)(y, ys, 2 * p, vaddq_f32(acc0[p], acc1[p]));
}

static float PL_SUFFIX(q8_0_dot)(int64_t n, const void *w, const void *a) {
    float r;
    PL_SUFFIX(q8_0_sdot)(n, w, 0, a, &r, 1);
    return r;
}

static void PL_SUFFIX(q8_0_rows)(int64_t n, const void *w, size_t ws, const void *a, size_t as, float *y, size_t ys) {
    PL_SUFFIX(q8_0_sdot)(n, w, ws, a, y, PL_DOT_ROWS);
}

/* ---- k-quants: shared pieces --------------------------------------- */

/* What one 256-element block gives one (row, token) in the SDOT kernels:
 * the exact int32 sums (isum; summs, the mins . bsums sum, for q4_K, q5_K
 * and q2_K) and their float factors d, dm, each type's product of the row
 * and token scales in that type's operand order.  The tile functions give
 * the same per token pair as vectors (lanes r0c0, r0c1, r1c0, r1c1). */
typedef struct {
    int32_t isum, summs;
    float d, dm;
} PL_SUFFIX(kq_sums);

/* the sums of a type without mins */
PL_ALWAYS_INLINE PL_SUFFIX(kq_sums) PL_SUFFIX(kq_nomins)(int32_t isum, float d) {
    const PL_SUFFIX(kq_sums) s = {isum, 0, d, 0.0f};
    return s;
}

PL_ALWAYS_INLINE int PL_SUFFIX(kq_has_mins)(int type) {
    return type == PL_TYPE_Q4_K || type == PL_TYPE_Q5_K || type == PL_TYPE_Q2_K;
}

/* The float step of one block for one (row, token) (scalars) and for a
 * tile's four (vector lanes): the same fused operations. */
PL_ALWAYS_INLINE float PL_SUFFIX(kq_fma)(float acc, float d, int32_t isum) {
    return __builtin_fmaf(d, (float)isum, acc);
}
PL_ALWAYS_INLINE float32x4_t PL_SUFFIX(kq_fmav)(float32x4_t acc, float32x4_t d, int32x4_t isum) {
    return vfmaq_f32(acc, d, vcvtq_f32_s32(isum));
}

/* 4 sub-block dot vectors (SDOT lanes) -> their 4 totals, times 4 scales,
 * into acc */
PL_ALWAYS_INLINE int32x4_t PL_SUFFIX(kq_scale4)(int32x4_t acc, int32x4_t d0, int32x4_t d1, int32x4_t d2, int32x4_t d3,
                                                int32x4_t sc) {
    return vmlaq_s32(acc, PL_SUFFIX(mm_hsum4)(d0, d1, d2, d3), sc);
}

/* The scaled total of 16 SDOT sub-block dot vectors (index = sub-block),
 * scales as int16 (sub-blocks 0..7 in lo, 8..15 in hi). */
PL_ALWAYS_INLINE int32_t PL_SUFFIX(kq_isum16)(const int32x4_t *dots, int16x8_t lo, int16x8_t hi) {
    int32x4_t isv = vdupq_n_s32(0);
    isv = PL_SUFFIX(kq_scale4)(isv, dots[0], dots[1], dots[2], dots[3], vmovl_s16(vget_low_s16(lo)));
    isv = PL_SUFFIX(kq_scale4)(isv, dots[4], dots[5], dots[6], dots[7], vmovl_high_s16(lo));
    isv = PL_SUFFIX(kq_scale4)(isv, dots[8], dots[9], dots[10], dots[11], vmovl_s16(vget_low_s16(hi)));
    isv = PL_SUFFIX(kq_scale4)(isv, dots[12], dots[13], dots[14], dots[15], vmovl_high_s16(hi));
    return vaddvq_s32(isv);
}
/* the same with 16 signed byte scales */
PL_ALWAYS_INLINE int32_t PL_SUFFIX(kq_isum16_s8)(const int32x4_t *dots, int8x16_t sc) {
    return PL_SUFFIX(kq_isum16)(dots, vmovl_s8(vget_low_s8(sc)), vmovl_high_s8(sc));
}

/* q6_K, q2_K, q3_K: sub-block j = 8h + 2q + lh (16 elements) is elements
 * 128h + 32q + 16lh .. +15 of the token; its SDOT vector */
PL_ALWAYS_INLINE int32x4_t PL_SUFFIX(kq_sdot16)(int8x16_t v, const int8_t *yq, int h, int q, int lh) {
    return vdotq_s32(vdupq_n_s32(0), v, vld1q_s8(yq + 128 * h + 32 * q + 16 * lh));
}
/* and in a tile: isum[p] += sc * the 2x2 sums of that sub-block (weights of
 * rows 0/1 zipped in wl, wh) against token pair p */
PL_ALWAYS_INLINE void PL_SUFFIX(mm_kq16)(int32x4_t *isum, int8x16_t wl, int8x16_t wh, int32x4_t sc, const void *a,
                                         size_t as, int64_t i, int h, int q, int lh) {
    const int off = 128 * h + 32 * q + 16 * lh;
    for (int p = 0; p < PL_MM_COLS / 2; p++) {
        const int32x4_t s = PL_SUFFIX(mm16)(vdupq_n_s32(0), wl, wh, vld1q_s8(PL_MM_Q8K(a, as, 2 * p)[i].qs + off),
                                            vld1q_s8(PL_MM_Q8K(a, as, 2 * p + 1)[i].qs + off));
        isum[p] = vmlaq_s32(isum[p], s, sc);
    }
}

/* d[p] = xd * {y.d of tokens 2p, 2p + 1 as mm_cols2} (x first) */
PL_ALWAYS_INLINE void PL_SUFFIX(mm_kq_d)(float32x4_t *d, float32x4_t xd, const void *a, size_t as, int64_t i) {
    for (int p = 0; p < PL_MM_COLS / 2; p++)
        d[p] = vmulq_f32(xd, PL_SUFFIX(mm_cols2)(PL_MM_Q8K(a, as, 2 * p)[i].d, PL_MM_Q8K(a, as, 2 * p + 1)[i].d));
}

/* The tile's per-(row, token) min terms: lanes whose sum is
 * sum_j m[j] * bsums pair j (q4_K/q5_K: 8 mins against the sums of bsums
 * pairs, exact in int32). */
PL_ALWAYS_INLINE int32x4_t PL_SUFFIX(kq_mins8)(int32x4_t mlo, int32x4_t mhi, int32x4_t blo, int32x4_t bhi) {
    return vmlaq_s32(vmulq_s32(mlo, blo), mhi, bhi);
}
/* q2_K: 16 mins (int16) against the 16 bsums */
PL_ALWAYS_INLINE int32x4_t PL_SUFFIX(kq_mins16)(int16x8_t mlo, int16x8_t mhi, int16x8_t blo, int16x8_t bhi) {
    int32x4_t s = vmull_s16(vget_low_s16(mlo), vget_low_s16(blo));
    s = vmlal_high_s16(s, mlo, blo);
    s = vmlal_s16(s, vget_low_s16(mhi), vget_low_s16(bhi));
    return vmlal_high_s16(s, mhi, bhi);
}

/* ---- q4_K and q5_K ----------------------------------------------------- */

/* The 8 scales (sc) and 8 mins (mn) of a q4_K/q5_K block as bytes
 * (llama.cpp's 32-bit unpacking, pl_k4_scale_min's values). */
PL_ALWAYS_INLINE void PL_SUFFIX(q45_unpack)(const uint8_t *packed, uint64_t *sc, uint64_t *mn) {
    uint32_t u[3]; /* three scalar loads: an array copy would go through the stack */
    memcpy(&u[0], packed, 4);
    memcpy(&u[1], packed + 4, 4);
    memcpy(&u[2], packed + 8, 4);
    const uint32_t u3 = ((u[2] >> 4) & 0x0f0f0f0f) | (((u[1] >> 6) & 0x03030303) << 4);
    const uint32_t m0 = u[1] & 0x3f3f3f3f;
    const uint32_t s1 = (u[2] & 0x0f0f0f0f) | (((u[0] >> 6) & 0x03030303) << 4);
    const uint32_t s0 = u[0] & 0x3f3f3f3f;
    *sc = (uint64_t)s0 | ((uint64_t)s1 << 32);
    *mn = (uint64_t)m0 | ((uint64_t)u3 << 32);
}

/* 32 values of sub-blocks 2k (in lo) and 2k+1 (in hi) from 32 bytes of qs
 * (and, q5_K, the 32 qh bytes' bits 2k and 2k+1 as +16) */
PL_ALWAYS_INLINE void PL_SUFFIX(q45_values)(uint8x16_t q, uint8x16_t qh, int k, const int five, int8x16_t *lo,
                                            int8x16_t *hi) {
    const uint8x16_t m4 = vdupq_n_u8(0x0f);
    uint8x16_t l = vandq_u8(q, m4), h = vshrq_n_u8(q, 4);
    if (five) {
        const uint8x16_t b4 = vdupq_n_u8(0x10);
        l = vorrq_u8(l, vandq_u8(vtstq_u8(qh, vdupq_n_u8((uint8_t)(1u << (2 * k)))), b4));
        h = vorrq_u8(h, vandq_u8(vtstq_u8(qh, vdupq_n_u8((uint8_t)(2u << (2 * k)))), b4));
    }
    *lo = vreinterpretq_s8_u8(l);
    *hi = vreinterpretq_s8_u8(h);
}

/* block i of a row, SDOT */
PL_ALWAYS_INLINE PL_SUFFIX(kq_sums) PL_SUFFIX(q45_row)(const void *row, int64_t i, const pl_block_q8_K *y,
                                                        const int five) {
    const size_t bytes = five ? sizeof(pl_block_q5_K) : sizeof(pl_block_q4_K);
    const int qs_off = five ? 48 : 16;
    const int32x4_t blo = vpaddlq_s16(vld1q_s16(y->bsums)), bhi = vpaddlq_s16(vld1q_s16(y->bsums + 8));
    const uint8_t *blk = (const uint8_t *)row + (size_t)i * bytes;
    uint64_t sc8, mn8;
    PL_SUFFIX(q45_unpack)(blk + 4, &sc8, &mn8);
    const uint16x8_t sc16 = vmovl_u8(vcreate_u8(sc8)), mn16 = vmovl_u8(vcreate_u8(mn8));
    const uint8x16_t qh0 = five ? vld1q_u8(blk + 16) : vdupq_n_u8(0), qh1 = five ? vld1q_u8(blk + 32) : vdupq_n_u8(0);
    int32x4_t isv = vdupq_n_s32(0), dots[8];
    for (int k = 0; k < 4; k++) {
        int8x16_t l0, h0, l1, h1;
        PL_SUFFIX(q45_values)(vld1q_u8(blk + qs_off + 32 * k), qh0, k, five, &l0, &h0);
        PL_SUFFIX(q45_values)(vld1q_u8(blk + qs_off + 32 * k + 16), qh1, k, five, &l1, &h1);
        const int8_t *yq = y->qs + 64 * k;
        dots[2 * k] = vdotq_s32(vdotq_s32(vdupq_n_s32(0), l0, vld1q_s8(yq)), l1, vld1q_s8(yq + 16));
        dots[2 * k + 1] = vdotq_s32(vdotq_s32(vdupq_n_s32(0), h0, vld1q_s8(yq + 32)), h1, vld1q_s8(yq + 48));
    }
    isv = PL_SUFFIX(kq_scale4)(isv, dots[0], dots[1], dots[2], dots[3], PL_SUFFIX(mm_wlo32)(sc16));
    isv = PL_SUFFIX(kq_scale4)(isv, dots[4], dots[5], dots[6], dots[7], PL_SUFFIX(mm_whi32)(sc16));
    const int32x4_t mv = PL_SUFFIX(kq_mins8)(PL_SUFFIX(mm_wlo32)(mn16), PL_SUFFIX(mm_whi32)(mn16), blo, bhi);
    const PL_SUFFIX(kq_sums) s = {vaddvq_s32(isv), vaddvq_s32(mv), PL_SUFFIX(mm_f16)(blk) * y->d,
                                  PL_SUFFIX(mm_f16)(blk + 2) * y->d};
    return s;
}

/* tile: the min sums of token pair p from rows 0/1's mins m (int32: row 0
 * lo, hi, row 1 lo, hi) */
PL_ALWAYS_INLINE int32x4_t PL_SUFFIX(q45_summs)(const int32x4_t *m, const pl_block_q8_K *ya, const pl_block_q8_K *yb) {
    const int32x4_t alo = vpaddlq_s16(vld1q_s16(ya->bsums)), ahi = vpaddlq_s16(vld1q_s16(ya->bsums + 8));
    const int32x4_t blo = vpaddlq_s16(vld1q_s16(yb->bsums)), bhi = vpaddlq_s16(vld1q_s16(yb->bsums + 8));
    return PL_SUFFIX(mm_hsum4)(PL_SUFFIX(kq_mins8)(m[0], m[1], alo, ahi), PL_SUFFIX(kq_mins8)(m[0], m[1], blo, bhi),
                               PL_SUFFIX(kq_mins8)(m[2], m[3], alo, ahi), PL_SUFFIX(kq_mins8)(m[2], m[3], blo, bhi));
}

/* block i of rows 0/1 against PL_MM_COLS tokens, SMMLA */
PL_ALWAYS_INLINE void PL_SUFFIX(q45_mm)(const void *w, size_t ws, const void *a, size_t as, int64_t i, const int five,
                                        int32x4_t *isum, int32x4_t *summs, float32x4_t *d, float32x4_t *dm) {
    const size_t bytes = five ? sizeof(pl_block_q5_K) : sizeof(pl_block_q4_K);
    const int qs_off = five ? 48 : 16;
    enum { NP = PL_MM_COLS / 2 };
    const uint8_t *b0 = PL_MM_ROW(w, ws, 0) + (size_t)i * bytes, *b1 = PL_MM_ROW(w, ws, 1) + (size_t)i * bytes;
    uint64_t sc0, mn0, sc1, mn1;
    PL_SUFFIX(q45_unpack)(b0 + 4, &sc0, &mn0);
    PL_SUFFIX(q45_unpack)(b1 + 4, &sc1, &mn1);
    const uint8x16_t sct = vcombine_u8(vcreate_u8(sc0), vcreate_u8(sc1));
    /* zipped qh of the two rows: [h][lo/hi 8 bytes] */
    uint8x16_t qhz[2][2];
    for (int h = 0; h < 2; h++) {
        if (five)
            PL_SUFFIX(mm_zip_ld)(b0 + 16 + 16 * h, b1 + 16 + 16 * h, &qhz[h][0], &qhz[h][1]);
        else
            qhz[h][0] = qhz[h][1] = vdupq_n_u8(0);
    }
#pragma GCC unroll 1
    for (int k = 0; k < 4; k++) {
        int32x4_t slo[NP], shi[NP];
        for (int p = 0; p < NP; p++)
            slo[p] = shi[p] = vdupq_n_s32(0);
        for (int h = 0; h < 2; h++) {
            uint8x16_t zl, zh;
            PL_SUFFIX(mm_zip_ld)(b0 + qs_off + 32 * k + 16 * h, b1 + qs_off + 32 * k + 16 * h, &zl, &zh);
            int8x16_t wl_lo, wl_hi, wh_lo, wh_hi; /* (8-byte half) _ (nibble) */
            PL_SUFFIX(q45_values)(zl, qhz[h][0], k, five, &wl_lo, &wl_hi);
            PL_SUFFIX(q45_values)(zh, qhz[h][1], k, five, &wh_lo, &wh_hi);
            for (int p = 0; p < NP; p++) {
                const int8_t *ya = PL_MM_Q8K(a, as, 2 * p)[i].qs + 64 * k + 16 * h;
                const int8_t *yb = PL_MM_Q8K(a, as, 2 * p + 1)[i].qs + 64 * k + 16 * h;
                slo[p] = PL_SUFFIX(mm16)(slo[p], wl_lo, wh_lo, vld1q_s8(ya), vld1q_s8(yb));
                shi[p] = PL_SUFFIX(mm16)(shi[p], wl_hi, wh_hi, vld1q_s8(ya + 32), vld1q_s8(yb + 32));
            }
        }
        const int32x4_t s_lo = PL_SUFFIX(mm_scale_u1)(sct, 2 * k, 8 + 2 * k);
        const int32x4_t s_hi = PL_SUFFIX(mm_scale_u1)(sct, 2 * k + 1, 8 + 2 * k + 1);
        for (int p = 0; p < NP; p++) {
            isum[p] = vmlaq_s32(isum[p], slo[p], s_lo);
            isum[p] = vmlaq_s32(isum[p], shi[p], s_hi);
        }
    }
    const uint16x8_t m0 = vmovl_u8(vcreate_u8(mn0)), m1 = vmovl_u8(vcreate_u8(mn1));
    const int32x4_t m[4] = {PL_SUFFIX(mm_wlo32)(m0), PL_SUFFIX(mm_whi32)(m0), PL_SUFFIX(mm_wlo32)(m1),
                            PL_SUFFIX(mm_whi32)(m1)};
    for (int p = 0; p < NP; p++)
        summs[p] = PL_SUFFIX(q45_summs)(m, PL_MM_Q8K(a, as, 2 * p) + i, PL_MM_Q8K(a, as, 2 * p + 1) + i);
    PL_SUFFIX(mm_kq_d)(d, PL_SUFFIX(mm_xd)(b0, b1), a, as, i);
    PL_SUFFIX(mm_kq_d)(dm, PL_SUFFIX(mm_xd)(b0 + 2, b1 + 2), a, as, i);
}

/* ---- 16 sub-blocks of 16: q6_K, q2_K, q3_K ---------------------------- */

/* q6_K quarter q (0..3) of 16 bytes: nibbles of l (the ql bytes of quarter
 * q & 1) and bits 2q, 2q+1 of qh as bits 4, 5; minus 32 */
PL_ALWAYS_INLINE int8x16_t PL_SUFFIX(q6_values)(uint8x16_t l, uint8x16_t qh, int q) {
    const uint8x16_t lo = q < 2 ? vandq_u8(l, vdupq_n_u8(0x0f)) : vshrq_n_u8(l, 4);
    const uint8x16_t hi = vandq_u8(PL_SUFFIX(mm_shl)(qh, 4 - 2 * q), vdupq_n_u8(0x30));
    return vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(lo, hi)), vdupq_n_s8(32));
}

/* q6_K block i of a row, SDOT */
PL_ALWAYS_INLINE PL_SUFFIX(kq_sums) PL_SUFFIX(q6_K_row)(const void *row, int64_t i, const pl_block_q8_K *y) {
    const pl_block_q6_K *x = (const pl_block_q6_K *)row + i;
    int32x4_t dots[16];
    for (int h = 0; h < 2; h++)
        for (int lh = 0; lh < 2; lh++) {
            const uint8x16_t la = vld1q_u8(x->ql + 64 * h + 16 * lh), lb = vld1q_u8(x->ql + 64 * h + 32 + 16 * lh);
            const uint8x16_t qh = vld1q_u8(x->qh + 32 * h + 16 * lh);
            for (int q = 0; q < 4; q++)
                dots[8 * h + 2 * q + lh] =
                    PL_SUFFIX(kq_sdot16)(PL_SUFFIX(q6_values)(q & 1 ? lb : la, qh, q), y->qs, h, q, lh);
        }
    return PL_SUFFIX(kq_nomins)(PL_SUFFIX(kq_isum16_s8)(dots, vld1q_s8(x->scales)), PL_SUFFIX(mm_f16)(&x->d) * y->d);
}

/* q6_K block i of rows 0/1 against PL_MM_COLS tokens, SMMLA */
PL_ALWAYS_INLINE void PL_SUFFIX(q6_K_mm)(const void *w, size_t ws, const void *a, size_t as, int64_t i,
                                         int32x4_t *isum, float32x4_t *d) {
    const pl_block_q6_K *x0 = (const pl_block_q6_K *)w + i, *x1 = (const pl_block_q6_K *)PL_MM_ROW(w, ws, 1) + i;
    uint8x16x2_t sct;
    sct.val[0] = vld1q_u8((const uint8_t *)x0->scales);
    sct.val[1] = vld1q_u8((const uint8_t *)x1->scales);
#pragma GCC unroll 1
    for (int hl = 0; hl < 4; hl++) {
        const int h = hl >> 1, lh = hl & 1;
        uint8x16_t la_l, la_h, lb_l, lb_h, qh_l, qh_h;
        PL_SUFFIX(mm_zip_ld)(x0->ql + 64 * h + 16 * lh, x1->ql + 64 * h + 16 * lh, &la_l, &la_h);
        PL_SUFFIX(mm_zip_ld)(x0->ql + 64 * h + 32 + 16 * lh, x1->ql + 64 * h + 32 + 16 * lh, &lb_l, &lb_h);
        PL_SUFFIX(mm_zip_ld)(x0->qh + 32 * h + 16 * lh, x1->qh + 32 * h + 16 * lh, &qh_l, &qh_h);
        for (int q = 0; q < 4; q++) {
            const int j = 8 * h + 2 * q + lh;
            const int8x16_t wl = PL_SUFFIX(q6_values)(q & 1 ? lb_l : la_l, qh_l, q);
            const int8x16_t wh = PL_SUFFIX(q6_values)(q & 1 ? lb_h : la_h, qh_h, q);
            PL_SUFFIX(mm_kq16)(isum, wl, wh, PL_SUFFIX(mm_scale_s2)(sct, j, 16 + j), a, as, i, h, q, lh);
        }
    }
    PL_SUFFIX(mm_kq_d)(d, PL_SUFFIX(mm_xd)(&x0->d, &x1->d), a, as, i);
}

/* q2_K: sub-block j = 8h + 2q + lh holds bits 2q, 2q+1 of qs[32h + 16lh ..
 * +15] against elements 128h + 32q + 16lh .. +15; scales[j] & 15 is its
 * scale, scales[j] >> 4 its min. */
PL_ALWAYS_INLINE int8x16_t PL_SUFFIX(q2_values)(uint8x16_t q, int j) {
    return vreinterpretq_s8_u8(vandq_u8(PL_SUFFIX(mm_shl)(q, -2 * j), vdupq_n_u8(3)));
}

/* q2_K block i of a row, SDOT (the scale products y.d first) */
PL_ALWAYS_INLINE PL_SUFFIX(kq_sums) PL_SUFFIX(q2_K_row)(const void *row, int64_t i, const pl_block_q8_K *y) {
    const pl_block_q2_K *x = (const pl_block_q2_K *)row + i;
    const int16x8_t blo = vld1q_s16(y->bsums), bhi = vld1q_s16(y->bsums + 8);
    int32x4_t dots[16];
    for (int h = 0; h < 2; h++)
        for (int lh = 0; lh < 2; lh++) {
            const uint8x16_t qv = vld1q_u8(x->qs + 32 * h + 16 * lh);
            for (int q = 0; q < 4; q++)
                dots[8 * h + 2 * q + lh] = PL_SUFFIX(kq_sdot16)(PL_SUFFIX(q2_values)(qv, q), y->qs, h, q, lh);
        }
    const uint8x16_t sc = vld1q_u8(x->scales), s4 = vandq_u8(sc, vdupq_n_u8(0x0f)), m4 = vshrq_n_u8(sc, 4);
    const int32x4_t mv = PL_SUFFIX(kq_mins16)(PL_SUFFIX(mm_wlo16)(m4), PL_SUFFIX(mm_whi16)(m4), blo, bhi);
    const PL_SUFFIX(kq_sums) s = {PL_SUFFIX(kq_isum16)(dots, PL_SUFFIX(mm_wlo16)(s4), PL_SUFFIX(mm_whi16)(s4)),
                                  vaddvq_s32(mv), y->d * PL_SUFFIX(mm_f16)(&x->d), y->d * PL_SUFFIX(mm_f16)(&x->dmin)};
    return s;
}

/* tile: the min sums of token pair p from rows 0/1's mins m (int16: row 0
 * lo, hi, row 1 lo, hi) */
PL_ALWAYS_INLINE int32x4_t PL_SUFFIX(q2_summs)(const int16x8_t *m, const pl_block_q8_K *ya, const pl_block_q8_K *yb) {
    const int16x8_t alo = vld1q_s16(ya->bsums), ahi = vld1q_s16(ya->bsums + 8);
    const int16x8_t blo = vld1q_s16(yb->bsums), bhi = vld1q_s16(yb->bsums + 8);
    return PL_SUFFIX(mm_hsum4)(PL_SUFFIX(kq_mins16)(m[0], m[1], alo, ahi), PL_SUFFIX(kq_mins16)(m[0], m[1], blo, bhi),
                               PL_SUFFIX(kq_mins16)(m[2], m[3], alo, ahi), PL_SUFFIX(kq_mins16)(m[2], m[3], blo, bhi));
}

/* q2_K block i of rows 0/1 against PL_MM_COLS tokens, SMMLA (y.d first, as
 * in q2_K_row) */
PL_ALWAYS_INLINE void PL_SUFFIX(q2_K_mm)(const void *w, size_t ws, const void *a, size_t as, int64_t i,
                                         int32x4_t *isum, int32x4_t *summs, float32x4_t *d, float32x4_t *dm) {
    const pl_block_q2_K *x0 = (const pl_block_q2_K *)w + i, *x1 = (const pl_block_q2_K *)PL_MM_ROW(w, ws, 1) + i;
    const uint8x16_t sc0 = vld1q_u8(x0->scales), sc1 = vld1q_u8(x1->scales);
    uint8x16x2_t sct;
    sct.val[0] = vandq_u8(sc0, vdupq_n_u8(0x0f));
    sct.val[1] = vandq_u8(sc1, vdupq_n_u8(0x0f));
#pragma GCC unroll 1
    for (int hl = 0; hl < 4; hl++) {
        const int h = hl >> 1, lh = hl & 1;
        uint8x16_t zl, zh;
        PL_SUFFIX(mm_zip_ld)(x0->qs + 32 * h + 16 * lh, x1->qs + 32 * h + 16 * lh, &zl, &zh);
        for (int q = 0; q < 4; q++) {
            const int j = 8 * h + 2 * q + lh;
            const int8x16_t wl = PL_SUFFIX(q2_values)(zl, q), wh = PL_SUFFIX(q2_values)(zh, q);
            PL_SUFFIX(mm_kq16)(isum, wl, wh, PL_SUFFIX(mm_scale_u2)(sct, j, 16 + j), a, as, i, h, q, lh);
        }
    }
    const uint8x16_t mn0 = vshrq_n_u8(sc0, 4), mn1 = vshrq_n_u8(sc1, 4);
    const int16x8_t m[4] = {PL_SUFFIX(mm_wlo16)(mn0), PL_SUFFIX(mm_whi16)(mn0), PL_SUFFIX(mm_wlo16)(mn1),
                            PL_SUFFIX(mm_whi16)(mn1)};
    const float32x4_t xd = PL_SUFFIX(mm_xd)(&x0->d, &x1->d), xm = PL_SUFFIX(mm_xd)(&x0->dmin, &x1->dmin);
    for (int p = 0; p < PL_MM_COLS / 2; p++) {
        const pl_block_q8_K *ya = PL_MM_Q8K(a, as, 2 * p) + i, *yb = PL_MM_Q8K(a, as, 2 * p + 1) + i;
        const float32x4_t yd = PL_SUFFIX(mm_cols2)(ya->d, yb->d);
        summs[p] = PL_SUFFIX(q2_summs)(m, ya, yb);
        d[p] = vmulq_f32(yd, xd);
        dm[p] = vmulq_f32(yd, xm);
    }
}

/* q3_K's 16 scales minus 32 as signed bytes (llama.cpp's 32-bit
 * unpacking; pl_q3k_scales' values) */
PL_ALWAYS_INLINE int8x16_t PL_SUFFIX(q3_scales)(const uint8_t *packed) {
    uint32_t a0, a1, tmp;
    memcpy(&a0, packed, 4);
    memcpy(&a1, packed + 4, 4);
    memcpy(&tmp, packed + 8, 4);
    const uint32_t s0 = (a0 & 0x0f0f0f0f) | (((tmp >> 0) & 0x03030303) << 4);
    const uint32_t s1 = (a1 & 0x0f0f0f0f) | (((tmp >> 2) & 0x03030303) << 4);
    const uint32_t s2 = ((a0 >> 4) & 0x0f0f0f0f) | (((tmp >> 4) & 0x03030303) << 4);
    const uint32_t s3 = ((a1 >> 4) & 0x0f0f0f0f) | (((tmp >> 6) & 0x03030303) << 4);
    const uint8x16_t u =
        vcombine_u8(vcreate_u8((uint64_t)s0 | ((uint64_t)s1 << 32)), vcreate_u8((uint64_t)s2 | ((uint64_t)s3 << 32)));
    return vsubq_s8(vreinterpretq_s8_u8(u), vdupq_n_s8(32));
}

/* q3_K sub-block j = 8h + 2q + lh: bits 2q, 2q+1 of qs[32h + 16lh .. +15],
 * minus 4 where bit 4h + q of hmask[16lh .. +15] is clear */
PL_ALWAYS_INLINE int8x16_t PL_SUFFIX(q3_values)(uint8x16_t q, uint8x16_t hm, int h, int j) {
    const uint8x16_t v = vandq_u8(PL_SUFFIX(mm_shl)(q, -2 * j), vdupq_n_u8(3));
    const uint8x16_t hb = vandq_u8(vtstq_u8(hm, vdupq_n_u8((uint8_t)(1u << (4 * h + j)))), vdupq_n_u8(4));
    return vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(v, hb)), vdupq_n_s8(4));
}

/* q3_K block i of a row, SDOT */
PL_ALWAYS_INLINE PL_SUFFIX(kq_sums) PL_SUFFIX(q3_K_row)(const void *row, int64_t i, const pl_block_q8_K *y) {
    const pl_block_q3_K *x = (const pl_block_q3_K *)row + i;
    int32x4_t dots[16];
    for (int lh = 0; lh < 2; lh++) {
        const uint8x16_t hm = vld1q_u8(x->hmask + 16 * lh);
        for (int h = 0; h < 2; h++) {
            const uint8x16_t qv = vld1q_u8(x->qs + 32 * h + 16 * lh);
            for (int q = 0; q < 4; q++)
                dots[8 * h + 2 * q + lh] = PL_SUFFIX(kq_sdot16)(PL_SUFFIX(q3_values)(qv, hm, h, q), y->qs, h, q, lh);
        }
    }
    return PL_SUFFIX(kq_nomins)(PL_SUFFIX(kq_isum16_s8)(dots, PL_SUFFIX(q3_scales)(x->scales)),
                                PL_SUFFIX(mm_f16)(&x->d) * y->d);
}

/* q3_K block i of rows 0/1 against PL_MM_COLS tokens, SMMLA */
PL_ALWAYS_INLINE void PL_SUFFIX(q3_K_mm)(const void *w, size_t ws, const void *a, size_t as, int64_t i,
                                         int32x4_t *isum, float32x4_t *d) {
    const pl_block_q3_K *x0 = (const pl_block_q3_K *)w + i, *x1 = (const pl_block_q3_K *)PL_MM_ROW(w, ws, 1) + i;
    uint8x16x2_t sct;
    sct.val[0] = vreinterpretq_u8_s8(PL_SUFFIX(q3_scales)(x0->scales));
    sct.val[1] = vreinterpretq_u8_s8(PL_SUFFIX(q3_scales)(x1->scales));
#pragma GCC unroll 1
    for (int lh = 0; lh < 2; lh++) {
        uint8x16_t hl, hh;
        PL_SUFFIX(mm_zip_ld)(x0->hmask + 16 * lh, x1->hmask + 16 * lh, &hl, &hh);
        for (int h = 0; h < 2; h++) {
            uint8x16_t zl, zh;
            PL_SUFFIX(mm_zip_ld)(x0->qs + 32 * h + 16 * lh, x1->qs + 32 * h + 16 * lh, &zl, &zh);
            for (int q = 0; q < 4; q++) {
                const int j = 8 * h + 2 * q + lh;
                const int8x16_t wl = PL_SUFFIX(q3_values)(zl, hl, h, q), wh = PL_SUFFIX(q3_values)(zh, hh, h, q);
                PL_SUFFIX(mm_kq16)(isum, wl, wh, PL_SUFFIX(mm_scale_s2)(sct, j, 16 + j), a, as, i, h, q, lh);
            }
        }
    }
    PL_SUFFIX(mm_kq_d)(d, PL_SUFFIX(mm_xd)(&x0->d, &x1->d), a, as, i);
}

/* ---- k-quants: the kernels ----------------------------------------------- */

/* NR rows (1: vec_dot, PL_DOT_ROWS: the rows kernel) x 1 token of type
 * `type`, SDOT; per block: acc = fma(d, isum, acc), accm = fma(dm, summs,
 * accm); result acc - accm (acc without mins) */
PL_ALWAYS_INLINE void PL_SUFFIX(kq_sdot)(int64_t n, const void *w, size_t ws, const void *a, float *out, const int NR,
                                         const int type) {
    const int mins = PL_SUFFIX(kq_has_mins)(type);
    const pl_block_q8_K *y = a;
    float acc[PL_DOT_ROWS], accm[PL_DOT_ROWS];
    for (int r = 0; r < NR; r++)
        acc[r] = accm[r] = 0.0f;
    for (int64_t i = 0; i < n / 256; i++) {
        for (int r = 0; r < NR; r++) {
            const uint8_t *row = PL_MM_ROW(w, ws, r);
            const PL_SUFFIX(kq_sums) s = type == PL_TYPE_Q4_K   ? PL_SUFFIX(q45_row)(row, i, y + i, 0)
                                         : type == PL_TYPE_Q5_K ? PL_SUFFIX(q45_row)(row, i, y + i, 1)
                                         : type == PL_TYPE_Q6_K ? PL_SUFFIX(q6_K_row)(row, i, y + i)
                                         : type == PL_TYPE_Q2_K ? PL_SUFFIX(q2_K_row)(row, i, y + i)
                                                                : PL_SUFFIX(q3_K_row)(row, i, y + i);
            acc[r] = PL_SUFFIX(kq_fma)(acc[r], s.d, s.isum);
            if (mins)
                accm[r] = PL_SUFFIX(kq_fma)(accm[r], s.dm, s.summs);
        }
    }
    for (int r = 0; r < NR; r++)
        out[r] = mins ? acc[r] - accm[r] : acc[r];
}

/* 2 rows x PL_MM_COLS tokens of type `type`, SMMLA: the same float steps
 * lane by lane */
PL_ALWAYS_INLINE void PL_SUFFIX(kq_tile)(int64_t n, const void *w, size_t ws, const void *a, size_t as, float *y,
                                         size_t ys, const int type) {
    enum { NP = PL_MM_COLS / 2 };
    const int mins = PL_SUFFIX(kq_has_mins)(type);
    float32x4_t acc[NP], accm[NP];
    for (int p = 0; p < NP; p++)
        acc[p] = accm[p] = vdupq_n_f32(0.0f);
    for (int64_t i = 0; i < n / 256; i++) {
        int32x4_t isum[NP], summs[NP];
        float32x4_t d[NP], dm[NP];
        for (int p = 0; p < NP; p++)
            isum[p] = vdupq_n_s32(0);
        if (type == PL_TYPE_Q4_K || type == PL_TYPE_Q5_K)
            PL_SUFFIX(q45_mm)(w, ws, a, as, i, type == PL_TYPE_Q5_K, isum, summs, d, dm);
        else if (type == PL_TYPE_Q6_K)
            PL_SUFFIX(q6_K_mm)(w, ws, a, as, i, isum, d);
        else if (type == PL_TYPE_Q2_K)
            PL_SUFFIX(q2_K_mm)(w, ws, a, as, i, isum, summs, d, dm);
        else
            PL_SUFFIX(q3_K_mm)(w, ws, a, as, i, isum, d);
        for (int p = 0; p < NP; p++) {
            acc[p] = PL_SUFFIX(kq_fmav)(acc[p], d[p], isum[p]);
            if (mins)
                accm[p] = PL_SUFFIX(kq_fmav)(accm[p], dm[p], summs[p]);
        }
    }
    for (int p = 0; p < NP; p++)
        PL_SUFFIX(mm_store)(y, ys, 2 * p, mins ? vsubq_f32(acc[p], accm[p]) : acc[p]);
}

/* vec_dot, the rows kernel and the tile of k-quant T (type id TYPE) */
#define PL_MM_KQ_KERNELS(T, TYPE)                                                                                    \
    static float PL_SUFFIX(T##_dot)(int64_t n, const void *w, const void *a) {                                       \
        float r;                                                                                                     \
        PL_SUFFIX(kq_sdot)(n, w, 0, a, &r, 1, TYPE);                                                                 \
        return r;                                                                                                    \
    }                                                                                                                \
    static void PL_SUFFIX(T##_rows)(int64_t n, const void *w, size_t ws, const void *a, size_t as, float *y,         \
                                    size_t ys) {                                                                     \
        PL_SUFFIX(kq_sdot)(n, w, ws, a, y, PL_DOT_ROWS, TYPE);                                                       \
    }                                                                                                                \
    static void PL_SUFFIX(T##_tile)(int64_t n, const void *w, size_t ws, const void *a, size_t as, float *y,         \
                                    size_t ys) {                                                                     \
        PL_SUFFIX(kq_tile)(n, w, ws, a, as, y, ys, TYPE);                                                            \
    }

PL_MM_KQ_KERNELS(q4_K, PL_TYPE_Q4_K)
PL_MM_KQ_KERNELS(q5_K, PL_TYPE_Q5_K)
PL_MM_KQ_KERNELS(q6_K, PL_TYPE_Q6_K)
PL_MM_KQ_KERNELS(q2_K, PL_TYPE_Q2_K)
PL_MM_KQ_KERNELS(q3_K, PL_TYPE_Q3_K)
#undef PL_MM_KQ_KERNELS

/* ---- fill -------------------------------------------------------------- */

static void PL_SUFFIX(mm_set)(pl_quant_kernel_set *k, pl_vec_dot_fn dot, pl_vec_dot_tile_fn tile,
                              pl_vec_dot_tile_fn rows) {
    k->vec_dot = dot;
    k->vec_dot_tile = tile;
    k->tile_rows = 2;
    k->tile_cols = PL_MM_COLS;
    k->vec_dot_rows = rows;
    k->dot_rows = PL_DOT_ROWS;
}

static void PL_SUFFIX(fill_mmla)(pl_quant_kernel_set *t) {
    PL_SUFFIX(mm_set)(&t[PL_TYPE_Q8_0], PL_SUFFIX(q8_0_dot), PL_SUFFIX(q8_0_tile), PL_SUFFIX(q8_0_rows));
    PL_SUFFIX(mm_set)(&t[PL_TYPE_Q4_K], PL_SUFFIX(q4_K_dot), PL_SUFFIX(q4_K_tile), PL_SUFFIX(q4_K_rows));
    PL_SUFFIX(mm_set)(&t[PL_TYPE_Q5_K], PL_SUFFIX(q5_K_dot), PL_SUFFIX(q5_K_tile), PL_SUFFIX(q5_K_rows));
    PL_SUFFIX(mm_set)(&t[PL_TYPE_Q6_K], PL_SUFFIX(q6_K_dot), PL_SUFFIX(q6_K_tile), PL_SUFFIX(q6_K_rows));
    PL_SUFFIX(mm_set)(&t[PL_TYPE_Q2_K], PL_SUFFIX(q2_K_dot), PL_SUFFIX(q2_K_tile), PL_SUFFIX(q2_K_rows));
    PL_SUFFIX(mm_set)(&t[PL_TYPE_Q3_K], PL_SUFFIX(q3_K_dot), PL_SUFFIX(q3_K_tile), PL_SUFFIX(q3_K_rows));
}

#else
static void PL_SUFFIX(fill_mmla)(pl_quant_kernel_set *t) { (void)t; }
#endif
