/*
 * dots_arm_iq.h -- NEON kernels for the codebook and ternary types (iq2_xxs, iq2_xs, iq2_s, iq3_xxs, iq3_s, iq1_s, iq1_m, tq1_0, tq2_0).
 * A template: included by the AArch64 tier files with PL_SUFFIX defined;
 * defines PL_SUFFIX(fill_iq), which sets the entries it implements.
 *
 * Every kernel is a vec_dot against q8_K activations.  The int8 products go
 * through pl_dot_s8 (SDOT on the dotprod tier, widening multiplies on the
 * neon tier: same lane sums' total), each 16- or 32-weight group's int32
 * lanes are multiplied by the group's integer scale (vmlaq_n_s32, exact
 * since every lane of the group gets the same scale), and once per
 * super-block the lanes are added (vaddvq_s32) to the very int32 the
 * reference computes.  The float combination is then the reference's own
 * expression, block after block into one float, so the results are the
 * reference's bit for bit (up to the compiler's FMA contraction, which the
 * exact test rows cannot see).
 *
 * Each type has an always-inline block function, PL_SUFFIX(<type>_block),
 * returning one super-block's float term (that reference expression), and
 * PL_IQ_VEC_DOT makes the vec_dot from it: sum += term, block after block,
 * then the reference's final factor.
 *
 * Grid rows are gathered with one 64-bit (two for 16 bytes) or four 32-bit
 * lane loads; signs are applied to the (small, unsigned) grid values as
 * (g ^ m) - m with m = 0xff where negative, from pl_iq_even_sign_mask for
 * the 7-bit-plus-parity types and from a bit test (vtstq_u8) of the stored
 * sign bytes for iq2_s / iq3_s.
 */
#include <string.h>

#include "quant/iq_tables.h"

/* ---- helpers ------------------------------------------------------------ */

/* vec_dot of `type` from its block function: per block sum += term, in
 * block order; the result is scale * sum (the reference's final factor;
 * 1.0f where it has none: x * 1.0f is x). */
#define PL_IQ_VEC_DOT(type, scale)                                                                                     \
    static float PL_SUFFIX(dot_##type)(int64_t n, const void *w, const void *a) {                                      \
        const pl_block_##type *x = w;                                                                                  \
        const pl_block_q8_K *y = a;                                                                                    \
        float sum = 0.0f;                                                                                              \
        for (int64_t i = 0; i < n / 256; i++) sum += PL_SUFFIX(type##_block)(x + i, y + i);                            \
        return (scale) * sum;                                                                                          \
    }

/* two 8-byte grid rows -> 16 bytes */
PL_ALWAYS_INLINE int8x16_t PL_SUFFIX(iq_rows2)(const uint64_t *g, uint32_t a, uint32_t b) {
    return vreinterpretq_s8_u64(vcombine_u64(vld1_u64(g + a), vld1_u64(g + b)));
}

/* four 4-byte grid rows -> 16 bytes */
PL_ALWAYS_INLINE int8x16_t PL_SUFFIX(iq_rows4)(const uint32_t *g, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
    uint32x4_t v = vld1q_dup_u32(g + a);
    v = vld1q_lane_u32(g + b, v, 1);
    v = vld1q_lane_u32(g + c, v, 2);
    v = vld1q_lane_u32(g + d, v, 3);
    return vreinterpretq_s8_u32(v);
}

/* 0xff/0x00 masks of two 8-weight groups from their 7 stored sign bits */
PL_ALWAYS_INLINE int8x16_t PL_SUFFIX(iq_even_signs2)(uint32_t a, uint32_t b) {
    return vreinterpretq_s8_u64(vcombine_u64(vld1_u64(pl_iq_even_sign_mask + (a & 127)), vld1_u64(pl_iq_even_sign_mask + (b & 127))));
}

/* g with the masked bytes negated */
PL_ALWAYS_INLINE int8x16_t PL_SUFFIX(iq_apply)(int8x16_t g, int8x16_t m) { return vsubq_s8(veorq_s8(g, m), m); }

/* The 32 sign bits of 4 sign bytes (byte l: weights 8l..8l+7, bit j ->
 * weight j) as two 16-byte 0xff/0x00 masks. */
PL_ALWAYS_INLINE void PL_SUFFIX(iq_bit_signs)(const uint8_t *s, int8x16_t *m0, int8x16_t *m1) {
    static const uint8_t idx[32] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                    2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3};
    static const uint8_t bits[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
    uint32_t sb;
    memcpy(&sb, s, 4);
    const uint8x16_t v = vreinterpretq_u8_u32(vdupq_n_u32(sb)), bm = vld1q_u8(bits);
    *m0 = vreinterpretq_s8_u8(vtstq_u8(vqtbl1q_u8(v, vld1q_u8(idx)), bm));
    *m1 = vreinterpretq_s8_u8(vtstq_u8(vqtbl1q_u8(v, vld1q_u8(idx + 16)), bm));
}

/* sum of the 16 bsums of a q8_K block */
PL_ALWAYS_INLINE int32_t PL_SUFFIX(iq_bsums_total)(const int16_t *bs) {
    return vaddlvq_s16(vaddq_s16(vld1q_s16(bs), vld1q_s16(bs + 8))); /* |sum| <= 256*127: no int16 overflow per pair */
}

/* g . q8[0..15] and (g0, g1) . q8[0..31] in int32 lanes */
PL_ALWAYS_INLINE int32x4_t PL_SUFFIX(iq_dot16)(int8x16_t g, const int8_t *q8) {
    return pl_dot_s8(vdupq_n_s32(0), g, vld1q_s8(q8));
}
PL_ALWAYS_INLINE int32x4_t PL_SUFFIX(iq_dot32)(int8x16_t g0, int8x16_t g1, const int8_t *q8) {
    return pl_dot_s8(PL_SUFFIX(iq_dot16)(g0, q8), g1, vld1q_s8(q8 + 16));
}

/* the block's int32: the lanes of its two accumulators */
PL_ALWAYS_INLINE int32_t PL_SUFFIX(iq_total)(int32x4_t acc0, int32x4_t acc1) { return vaddvq_s32(vaddq_s32(acc0, acc1)); }

/* two groups sharing a scale byte: acc0 += p0 * (2 * low nibble + 1),
 * acc1 += p1 * (2 * high nibble + 1) (iq2_xs, iq2_s, iq3_s) */
PL_ALWAYS_INLINE void PL_SUFFIX(iq_mla_nibbles)(int32x4_t *acc0, int32x4_t *acc1, int32x4_t p0, int32x4_t p1, uint8_t sc) {
    *acc0 = vmlaq_n_s32(*acc0, p0, 2 * (sc & 0xf) + 1);
    *acc1 = vmlaq_n_s32(*acc1, p1, 2 * (sc >> 4) + 1);
}

/* One 32-weight group of iq2_xxs / iq3_xxs: grid rows r0 (weights 0..15)
 * and r1 (16..31), signs from the 4 x 7 bits of meta, scale
 * 2 * (meta >> 28) + 1: acc + scale * (signed rows . q8[0..31]). */
PL_ALWAYS_INLINE int32x4_t PL_SUFFIX(iq_xxs_group)(int32x4_t acc, int8x16_t r0, int8x16_t r1, uint32_t meta, const int8_t *q8) {
    const int8x16_t g0 = PL_SUFFIX(iq_apply)(r0, PL_SUFFIX(iq_even_signs2)(meta, meta >> 7));
    const int8x16_t g1 = PL_SUFFIX(iq_apply)(r1, PL_SUFFIX(iq_even_signs2)(meta >> 14, meta >> 21));
    return vmlaq_n_s32(acc, PL_SUFFIX(iq_dot32)(g0, g1, q8), (int32_t)(2 * (meta >> 28) + 1));
}

/* ---- ternary ------------------------------------------------------------- */

/* acc + the 4 crumbs k of q ((q >> 2k) & 3) . q8[32k .. 32k+15] */
PL_ALWAYS_INLINE int32x4_t PL_SUFFIX(tq2_crumbs)(int32x4_t acc, uint8x16_t q, const int8_t *q8) {
    const uint8x16_t m3 = vdupq_n_u8(3);
    acc = pl_dot_s8(acc, vreinterpretq_s8_u8(vandq_u8(q, m3)), vld1q_s8(q8));
    acc = pl_dot_s8(acc, vreinterpretq_s8_u8(vandq_u8(vshrq_n_u8(q, 2), m3)), vld1q_s8(q8 + 32));
    acc = pl_dot_s8(acc, vreinterpretq_s8_u8(vandq_u8(vshrq_n_u8(q, 4), m3)), vld1q_s8(q8 + 64));
    return pl_dot_s8(acc, vreinterpretq_s8_u8(vshrq_n_u8(q, 6)), vld1q_s8(q8 + 96));
}

/* tq2_0: sum_k y_k * (q_k - 1) = q . y - sum(y), q in {0..3} (2 bits):
 * values 128j + 32k + m: crumb k of qs[32j + m]; the block's term is
 * (float)sumi * (y.d * d), as the reference. */
PL_ALWAYS_INLINE float PL_SUFFIX(tq2_0_block)(const pl_block_tq2_0 *x, const pl_block_q8_K *y) {
    const int8_t *q8 = y->qs;
    int32x4_t s0 = vdupq_n_s32(0), s1 = vdupq_n_s32(0);
    for (int j = 0; j < 2; j++, q8 += 128) {
        s0 = PL_SUFFIX(tq2_crumbs)(s0, vld1q_u8(x->qs + 32 * j), q8);
        s1 = PL_SUFFIX(tq2_crumbs)(s1, vld1q_u8(x->qs + 32 * j + 16), q8 + 16);
    }
    const int32_t sumi = PL_SUFFIX(iq_total)(s0, s1) - PL_SUFFIX(iq_bsums_total)(y->bsums);
    return (float)sumi * (y->d * pl_f16_to_f32_neon(x->d));
}
PL_IQ_VEC_DOT(tq2_0, 1.0f)

/* The trit of 16 bytes already multiplied by 3^n (mod 256): (q * 3) >> 8. */
PL_ALWAYS_INLINE int8x16_t PL_SUFFIX(tq1_trit)(uint8x16_t q) {
    const uint8x8_t three = vdup_n_u8(3);
    const uint16x8_t lo = vmull_u8(vget_low_u8(q), three), hi = vmull_high_u8(q, vdupq_n_u8(3));
    return vreinterpretq_s8_u8(vuzp2q_u8(vreinterpretq_u8_u16(lo), vreinterpretq_u8_u16(hi))); /* high bytes */
}

/* acc + the 5 trits k of q . q8[stride * k .. stride * k + 15] */
PL_ALWAYS_INLINE int32x4_t PL_SUFFIX(tq1_trits)(int32x4_t acc, uint8x16_t q, const int8_t *q8, int stride) {
    acc = pl_dot_s8(acc, PL_SUFFIX(tq1_trit)(q), vld1q_s8(q8));
    acc = pl_dot_s8(acc, PL_SUFFIX(tq1_trit)(vmulq_u8(q, vdupq_n_u8(3))), vld1q_s8(q8 + stride));
    acc = pl_dot_s8(acc, PL_SUFFIX(tq1_trit)(vmulq_u8(q, vdupq_n_u8(9))), vld1q_s8(q8 + 2 * stride));
    acc = pl_dot_s8(acc, PL_SUFFIX(tq1_trit)(vmulq_u8(q, vdupq_n_u8(27))), vld1q_s8(q8 + 3 * stride));
    return pl_dot_s8(acc, PL_SUFFIX(tq1_trit)(vmulq_u8(q, vdupq_n_u8(81))), vld1q_s8(q8 + 4 * stride));
}

/* tq1_0: trits t in {0,1,2}, sum (t - 1) y = t . y - sum(y); the block's
 * term is (float)s * (d * y.d), as the reference. */
PL_ALWAYS_INLINE float PL_SUFFIX(tq1_0_block)(const pl_block_tq1_0 *x, const pl_block_q8_K *y) {
    static const uint8_t pow3h[16] = {1, 1, 1, 1, 3, 3, 3, 3, 9, 9, 9, 9, 27, 27, 27, 27};
    const int8_t *q8 = y->qs;
    /* values 32n + m (m < 32): trit n of qs[m] */
    const int32x4_t s0 = PL_SUFFIX(tq1_trits)(vdupq_n_s32(0), vld1q_u8(x->qs), q8, 32);
    const int32x4_t s1 = PL_SUFFIX(tq1_trits)(vdupq_n_s32(0), vld1q_u8(x->qs + 16), q8 + 16, 32);
    /* values 160 + 16n + m (m < 16): trit n of qs[32 + m] */
    int32x4_t s2 = PL_SUFFIX(tq1_trits)(vdupq_n_s32(0), vld1q_u8(x->qs + 32), q8 + 160, 16);
    /* values 240 + 4n + j: trit n of qh[j] */
    uint32_t qh4;
    memcpy(&qh4, x->qh, 4);
    const uint8x16_t h = vmulq_u8(vreinterpretq_u8_u32(vdupq_n_u32(qh4)), vld1q_u8(pow3h));
    s2 = pl_dot_s8(s2, PL_SUFFIX(tq1_trit)(h), vld1q_s8(q8 + 240));
    const int32_t s = vaddvq_s32(vaddq_s32(vaddq_s32(s0, s1), s2)) - PL_SUFFIX(iq_bsums_total)(y->bsums);
    return (float)s * (pl_f16_to_f32_neon(x->d) * y->d);
}
PL_IQ_VEC_DOT(tq1_0, 1.0f)

/* ---- iq2 ----------------------------------------------------------------- */

/* two iq2_xxs grid rows (16 weights) from the 8-bit indices q[0], q[1] */
PL_ALWAYS_INLINE int8x16_t PL_SUFFIX(iq2xxs_rows2)(const uint8_t *q) { return PL_SUFFIX(iq_rows2)(pl_iq2xxs_grid, q[0], q[1]); }

/* iq2_xxs: per 32, sumi * (2 * (meta >> 28) + 1) into the block's int32;
 * the block's term is d * y.d * (float)bsum; result 0.125f * sum (reference). */
PL_ALWAYS_INLINE float PL_SUFFIX(iq2_xxs_block)(const pl_block_iq2_xxs *x, const pl_block_q8_K *y) {
    const int8_t *q8 = y->qs;
    int32x4_t acc0 = vdupq_n_s32(0), acc1 = vdupq_n_s32(0);
    for (int ib = 0; ib < 8; ib += 2, q8 += 64) {
        uint32_t aux[4]; /* per group: 4 grid indices, then its meta */
        memcpy(aux, x->qs + 4 * ib, 16);
        const uint8_t *qa = (const uint8_t *)&aux[0], *qb = (const uint8_t *)&aux[2];
        acc0 = PL_SUFFIX(iq_xxs_group)(acc0, PL_SUFFIX(iq2xxs_rows2)(qa), PL_SUFFIX(iq2xxs_rows2)(qa + 2), aux[1], q8);
        acc1 = PL_SUFFIX(iq_xxs_group)(acc1, PL_SUFFIX(iq2xxs_rows2)(qb), PL_SUFFIX(iq2xxs_rows2)(qb + 2), aux[3], q8 + 32);
    }
    return pl_f16_to_f32_neon(x->d) * y->d * (float)PL_SUFFIX(iq_total)(acc0, acc1);
}
PL_IQ_VEC_DOT(iq2_xxs, 0.125f)

/* 16 iq2_xs weights from two 16-bit entries (9-bit index, 7 sign bits) */
PL_ALWAYS_INLINE int8x16_t PL_SUFFIX(iq2xs_w16)(const uint16_t *e) {
    return PL_SUFFIX(iq_apply)(PL_SUFFIX(iq_rows2)(pl_iq2xs_grid, e[0] & 511u, e[1] & 511u),
                               PL_SUFFIX(iq_even_signs2)(e[0] >> 9, e[1] >> 9));
}

/* iq2_xs: scale per 16 (one 16-byte vector each); float combination as
 * iq2_xxs. */
PL_ALWAYS_INLINE float PL_SUFFIX(iq2_xs_block)(const pl_block_iq2_xs *x, const pl_block_q8_K *y) {
    const int8_t *q8 = y->qs;
    int32x4_t acc0 = vdupq_n_s32(0), acc1 = vdupq_n_s32(0);
    for (int ib = 0; ib < 8; ib++, q8 += 32) {
        const uint16_t *e = x->qs + 4 * ib;
        PL_SUFFIX(iq_mla_nibbles)(&acc0, &acc1, PL_SUFFIX(iq_dot16)(PL_SUFFIX(iq2xs_w16)(e), q8),
                                  PL_SUFFIX(iq_dot16)(PL_SUFFIX(iq2xs_w16)(e + 2), q8 + 16), x->scales[ib]);
    }
    return pl_f16_to_f32_neon(x->d) * y->d * (float)PL_SUFFIX(iq_total)(acc0, acc1);
}
PL_IQ_VEC_DOT(iq2_xs, 0.125f)

/* iq2_s: 10-bit index (8 in qs, 2 in qh), sign bytes, scale per 16;
 * float combination as iq2_xxs. */
PL_ALWAYS_INLINE float PL_SUFFIX(iq2_s_block)(const pl_block_iq2_s *x, const pl_block_q8_K *y) {
    const int8_t *q8 = y->qs;
    int32x4_t acc0 = vdupq_n_s32(0), acc1 = vdupq_n_s32(0);
    for (int ib = 0; ib < 8; ib++, q8 += 32) {
        const uint8_t *qs = x->qs + 4 * ib;
        const uint32_t qh = x->qh[ib];
        int8x16_t m0, m1;
        PL_SUFFIX(iq_bit_signs)(x->qs + 32 + 4 * ib, &m0, &m1);
        const int8x16_t g0 = PL_SUFFIX(iq_apply)(
            PL_SUFFIX(iq_rows2)(pl_iq2s_grid, qs[0] | ((qh << 8) & 0x300), qs[1] | ((qh << 6) & 0x300)), m0);
        const int8x16_t g1 = PL_SUFFIX(iq_apply)(
            PL_SUFFIX(iq_rows2)(pl_iq2s_grid, qs[2] | ((qh << 4) & 0x300), qs[3] | ((qh << 2) & 0x300)), m1);
        PL_SUFFIX(iq_mla_nibbles)(&acc0, &acc1, PL_SUFFIX(iq_dot16)(g0, q8), PL_SUFFIX(iq_dot16)(g1, q8 + 16), x->scales[ib]);
    }
    return pl_f16_to_f32_neon(x->d) * y->d * (float)PL_SUFFIX(iq_total)(acc0, acc1);
}
PL_IQ_VEC_DOT(iq2_s, 0.125f)

/* ---- iq3 ----------------------------------------------------------------- */

/* four iq3_xxs grid rows (16 weights) from the 8-bit indices q[0..3] */
PL_ALWAYS_INLINE int8x16_t PL_SUFFIX(iq3xxs_rows4)(const uint8_t *q) {
    return PL_SUFFIX(iq_rows4)(pl_iq3xxs_grid, q[0], q[1], q[2], q[3]);
}

/* iq3_xxs: 4-value grid rows, 7-bit even signs per 8, scale per 32;
 * the block's term is d * y.d * (float)bsum; result 0.25f * sum (reference). */
PL_ALWAYS_INLINE float PL_SUFFIX(iq3_xxs_block)(const pl_block_iq3_xxs *x, const pl_block_q8_K *y) {
    const int8_t *q8 = y->qs;
    int32x4_t acc0 = vdupq_n_s32(0), acc1 = vdupq_n_s32(0);
    for (int ib = 0; ib < 8; ib += 2, q8 += 64) {
        const uint8_t *q = x->qs + 8 * ib;
        uint32_t meta[2];
        memcpy(meta, x->qs + 64 + 4 * ib, 8);
        acc0 = PL_SUFFIX(iq_xxs_group)(acc0, PL_SUFFIX(iq3xxs_rows4)(q), PL_SUFFIX(iq3xxs_rows4)(q + 4), meta[0], q8);
        acc1 = PL_SUFFIX(iq_xxs_group)(acc1, PL_SUFFIX(iq3xxs_rows4)(q + 8), PL_SUFFIX(iq3xxs_rows4)(q + 12), meta[1], q8 + 32);
    }
    return pl_f16_to_f32_neon(x->d) * y->d * (float)PL_SUFFIX(iq_total)(acc0, acc1);
}
PL_IQ_VEC_DOT(iq3_xxs, 0.25f)

/* four iq3_s grid rows: 8-bit indices q[0..3], their 9th bits bits 0..3 of h */
PL_ALWAYS_INLINE int8x16_t PL_SUFFIX(iq3s_rows4)(const uint8_t *q, uint32_t h) {
    return PL_SUFFIX(iq_rows4)(pl_iq3s_grid, q[0] | ((h << 8) & 256), q[1] | ((h << 7) & 256), q[2] | ((h << 6) & 256),
                               q[3] | ((h << 5) & 256));
}

/* iq3_s: 9-bit index (8 in qs, 1 in qh), sign bytes, scale per 32;
 * the block's term is d * y.d * (float)bsum; result sum (reference). */
PL_ALWAYS_INLINE float PL_SUFFIX(iq3_s_block)(const pl_block_iq3_s *x, const pl_block_q8_K *y) {
    const int8_t *q8 = y->qs;
    int32x4_t acc0 = vdupq_n_s32(0), acc1 = vdupq_n_s32(0);
    for (int ib = 0; ib < 8; ib += 2, q8 += 64) {
        const uint8_t *q = x->qs + 8 * ib;
        const uint32_t ha = x->qh[ib], hb = x->qh[ib + 1];
        int8x16_t ma0, ma1, mb0, mb1;
        PL_SUFFIX(iq_bit_signs)(x->signs + 4 * ib, &ma0, &ma1);
        PL_SUFFIX(iq_bit_signs)(x->signs + 4 * ib + 4, &mb0, &mb1);
        const int32x4_t pa = PL_SUFFIX(iq_dot32)(PL_SUFFIX(iq_apply)(PL_SUFFIX(iq3s_rows4)(q, ha), ma0),
                                                 PL_SUFFIX(iq_apply)(PL_SUFFIX(iq3s_rows4)(q + 4, ha >> 4), ma1), q8);
        const int32x4_t pb = PL_SUFFIX(iq_dot32)(PL_SUFFIX(iq_apply)(PL_SUFFIX(iq3s_rows4)(q + 8, hb), mb0),
                                                 PL_SUFFIX(iq_apply)(PL_SUFFIX(iq3s_rows4)(q + 12, hb >> 4), mb1), q8 + 32);
        PL_SUFFIX(iq_mla_nibbles)(&acc0, &acc1, pa, pb, x->scales[ib / 2]);
    }
    return pl_f16_to_f32_neon(x->d) * y->d * (float)PL_SUFFIX(iq_total)(acc0, acc1);
}
PL_IQ_VEC_DOT(iq3_s, 1.0f)

/* ---- iq1 ----------------------------------------------------------------- */

/* One 32-weight iq1_s group: grid rows from qs[0..3] with their 3 high
 * index bits in h (bits 0..11), scale ls = 2 * ((h >> 12) & 7) + 1, shift
 * sign bit 15; bs: the group's two bsums.  acc += ls * (rows . q8[0..31]),
 * *sumi1 += ls * (+-1) * (bs[0] + bs[1]). */
PL_ALWAYS_INLINE void PL_SUFFIX(iq1s_group)(int32x4_t *acc, int *sumi1, const uint8_t *qs, uint32_t h, const int8_t *q8,
                                            const int16_t *bs) {
    const int8x16_t g0 = PL_SUFFIX(iq_rows2)(pl_iq1s_grid, qs[0] | ((h << 8) & 0x700), qs[1] | ((h << 5) & 0x700));
    const int8x16_t g1 = PL_SUFFIX(iq_rows2)(pl_iq1s_grid, qs[2] | ((h << 2) & 0x700), qs[3] | ((h >> 1) & 0x700));
    const int ls = (int)(2 * ((h >> 12) & 7) + 1);
    *acc = vmlaq_n_s32(*acc, PL_SUFFIX(iq_dot32)(g0, g1, q8), ls);
    *sumi1 += ls * (h & 0x8000 ? -1 : 1) * (bs[0] + bs[1]);
}

/* iq1_s: grid rows are signed bytes in {-1,0,1}, dotted with y directly
 * (sumi = sum ls * lsum); the shift term sumi1 = sum ls * delta * (bsum pair)
 * from the activation bsums, as the reference;
 * the block's term is d * y.d * ((float)sumi + 0.125f * (float)sumi1). */
PL_ALWAYS_INLINE float PL_SUFFIX(iq1_s_block)(const pl_block_iq1_s *x, const pl_block_q8_K *y) {
    const int8_t *q8 = y->qs;
    int32x4_t acc0 = vdupq_n_s32(0), acc1 = vdupq_n_s32(0);
    int sumi1 = 0;
    for (int ib = 0; ib < 8; ib += 2, q8 += 64) {
        PL_SUFFIX(iq1s_group)(&acc0, &sumi1, x->qs + 4 * ib, x->qh[ib], q8, y->bsums + 2 * ib);
        PL_SUFFIX(iq1s_group)(&acc1, &sumi1, x->qs + 4 * ib + 4, x->qh[ib + 1], q8 + 32, y->bsums + 2 * ib + 2);
    }
    const int sumi = PL_SUFFIX(iq_total)(acc0, acc1);
    return pl_f16_to_f32_neon(x->d) * y->d * ((float)sumi + PL_IQ1S_DELTA * (float)sumi1);
}
PL_IQ_VEC_DOT(iq1_s, 1.0f)

/* 16 iq1_m weights as the int8 8g + delta: grid rows from qs[0], qs[1]
 * with their 3 high index bits in h (bits 0..2, 4..6) and delta = -1 where
 * the row's shift bit in h (selected by db) is set, else +1. */
PL_ALWAYS_INLINE int8x16_t PL_SUFFIX(iq1m_w16)(const uint8_t *qs, uint32_t h, uint8x16_t db) {
    const int8x16_t g = PL_SUFFIX(iq_rows2)(pl_iq1s_grid, qs[0] | ((h << 8) & 0x700), qs[1] | ((h << 4) & 0x700));
    const int8x16_t d = vbslq_s8(vtstq_u8(vdupq_n_u8((uint8_t)h), db), vdupq_n_s8(-1), vdupq_n_s8(1));
    return vaddq_s8(vshlq_n_s8(g, 3), d);
}

/* iq1_m: each weight is ls * (g + delta / 8) with delta = +-1 per 8 and ls
 * per 16, so one dot of y with the int8 8g + delta (|.| <= 9) gives
 * T = 8 * sumi1 + sumi2 (the reference's two int32 sums; |T| < 2^24).
 * (float)sumi1 + 0.125f * (float)sumi2 rounds the exact value T / 8 once,
 * as (float)T * 0.125f does (power-of-two scaling commutes with rounding),
 * so the block's term d * y.d * ((float)T * 0.125f) equals the reference's
 * d * y.d * ((float)sumi1 + 0.125f * (float)sumi2) bit for bit. */
PL_ALWAYS_INLINE float PL_SUFFIX(iq1_m_block)(const pl_block_iq1_m *x, const pl_block_q8_K *y) {
    /* bytes 0..7: the shift bit of an even group (0x08), 8..15: odd (0x80) */
    static const uint8_t dbits[16] = {8, 8, 8, 8, 8, 8, 8, 8, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80};
    const uint8x16_t db = vld1q_u8(dbits);
    uint16_t sc[4];
    memcpy(sc, x->scales, 8);
    const uint16_t f = (uint16_t)((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000));
    const int8_t *q8 = y->qs;
    int32x4_t acc0 = vdupq_n_s32(0), acc1 = vdupq_n_s32(0);
    for (int ib = 0; ib < 8; ib++, q8 += 32) {
        const uint8_t *qs = x->qs + 4 * ib;
        const uint32_t s = sc[ib / 2] >> (6 * (ib % 2));
        acc0 = vmlaq_n_s32(acc0, PL_SUFFIX(iq_dot16)(PL_SUFFIX(iq1m_w16)(qs, x->qh[2 * ib], db), q8), (int32_t)(2 * (s & 7) + 1));
        acc1 = vmlaq_n_s32(acc1, PL_SUFFIX(iq_dot16)(PL_SUFFIX(iq1m_w16)(qs + 2, x->qh[2 * ib + 1], db), q8 + 16),
                           (int32_t)(2 * ((s >> 3) & 7) + 1));
    }
    const int32_t T = PL_SUFFIX(iq_total)(acc0, acc1);
    return pl_f16_to_f32_neon(f) * y->d * ((float)T * 0.125f);
}
PL_IQ_VEC_DOT(iq1_m, 1.0f)

static void PL_SUFFIX(fill_iq)(pl_quant_kernel_set *t) {
    t[PL_TYPE_TQ2_0].vec_dot = PL_SUFFIX(dot_tq2_0);
    t[PL_TYPE_TQ1_0].vec_dot = PL_SUFFIX(dot_tq1_0);
    t[PL_TYPE_IQ2_XXS].vec_dot = PL_SUFFIX(dot_iq2_xxs);
    t[PL_TYPE_IQ2_XS].vec_dot = PL_SUFFIX(dot_iq2_xs);
    t[PL_TYPE_IQ2_S].vec_dot = PL_SUFFIX(dot_iq2_s);
    t[PL_TYPE_IQ3_XXS].vec_dot = PL_SUFFIX(dot_iq3_xxs);
    t[PL_TYPE_IQ3_S].vec_dot = PL_SUFFIX(dot_iq3_s);
    t[PL_TYPE_IQ1_S].vec_dot = PL_SUFFIX(dot_iq1_s);
    t[PL_TYPE_IQ1_M].vec_dot = PL_SUFFIX(dot_iq1_m);
}
