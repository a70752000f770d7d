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
 * Grid rows are gathered with one 64-bit (two for 16 bytes) or four 32-bit
 * lane loads; signs are applied to the (small, unsigned) grid values as
 * (g ^ m) - m with m = 0xff where negative, from pl_iq_even_sign_mask for
 * the 7-bit-plus-parity types and from a bit test (vtstq_u8) of the stored
 * sign bytes for iq2_s / iq3_s.
 */
#include <string.h>

#include "quant/iq_tables.h"

/* ---- helpers ------------------------------------------------------------ */

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

/* ---- ternary ------------------------------------------------------------- */

/* tq2_0: sum_k y_k * (q_k - 1) = q . y - sum(y), q in {0..3} (2 bits);
 * per block: sum += (float)sumi * (y.d * d), as the reference. */
static float PL_SUFFIX(dot_tq2_0)(int64_t n, const void *w, const void *a) {
    const pl_block_tq2_0 *x = w;
    const pl_block_q8_K *y = a;
    const uint8x16_t m3 = vdupq_n_u8(3);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / 256; i++) {
        const int8_t *q8 = y[i].qs;
        int32x4_t s0 = vdupq_n_s32(0), s1 = vdupq_n_s32(0);
        for (int j = 0; j < 2; j++, q8 += 128) {
            const uint8x16_t qa = vld1q_u8(x[i].qs + 32 * j), qb = vld1q_u8(x[i].qs + 32 * j + 16);
            s0 = pl_dot_s8(s0, vreinterpretq_s8_u8(vandq_u8(qa, m3)), vld1q_s8(q8));
            s1 = pl_dot_s8(s1, vreinterpretq_s8_u8(vandq_u8(qb, m3)), vld1q_s8(q8 + 16));
            s0 = pl_dot_s8(s0, vreinterpretq_s8_u8(vandq_u8(vshrq_n_u8(qa, 2), m3)), vld1q_s8(q8 + 32));
            s1 = pl_dot_s8(s1, vreinterpretq_s8_u8(vandq_u8(vshrq_n_u8(qb, 2), m3)), vld1q_s8(q8 + 48));
            s0 = pl_dot_s8(s0, vreinterpretq_s8_u8(vandq_u8(vshrq_n_u8(qa, 4), m3)), vld1q_s8(q8 + 64));
            s1 = pl_dot_s8(s1, vreinterpretq_s8_u8(vandq_u8(vshrq_n_u8(qb, 4), m3)), vld1q_s8(q8 + 80));
            s0 = pl_dot_s8(s0, vreinterpretq_s8_u8(vshrq_n_u8(qa, 6)), vld1q_s8(q8 + 96));
            s1 = pl_dot_s8(s1, vreinterpretq_s8_u8(vshrq_n_u8(qb, 6)), vld1q_s8(q8 + 112));
        }
        const int32_t sumi = vaddvq_s32(vaddq_s32(s0, s1)) - PL_SUFFIX(iq_bsums_total)(y[i].bsums);
        sum += (float)sumi * (y[i].d * pl_f16_to_f32_neon(x[i].d));
    }
    return sum;
}

/* The trit of 16 bytes already multiplied by 3^n (mod 256): (q * 3) >> 8. */
PL_ALWAYS_INLINE int8x16_t PL_SUFFIX(tq1_trit)(uint8x16_t q) {
    const uint8x8_t three = vdup_n_u8(3);
    const uint16x8_t lo = vmull_u8(vget_low_u8(q), three), hi = vmull_high_u8(q, vdupq_n_u8(3));
    return vreinterpretq_s8_u8(vuzp2q_u8(vreinterpretq_u8_u16(lo), vreinterpretq_u8_u16(hi))); /* high bytes */
}

/* tq1_0: trits t in {0,1,2}, sum (t - 1) y = t . y - sum(y);
 * per block: sum += (float)s * (d * y.d), as the reference. */
static float PL_SUFFIX(dot_tq1_0)(int64_t n, const void *w, const void *a) {
    const pl_block_tq1_0 *x = w;
    const pl_block_q8_K *y = a;
    static const uint8_t pow3h[16] = {1, 1, 1, 1, 3, 3, 3, 3, 9, 9, 9, 9, 27, 27, 27, 27};
    const uint8x16_t p3 = vdupq_n_u8(3), p9 = vdupq_n_u8(9), p27 = vdupq_n_u8(27), p81 = vdupq_n_u8(81);
    const uint8x16_t ph = vld1q_u8(pow3h);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / 256; i++) {
        const int8_t *q8 = y[i].qs;
        const uint8x16_t qa = vld1q_u8(x[i].qs), qb = vld1q_u8(x[i].qs + 16), qc = vld1q_u8(x[i].qs + 32);
        int32x4_t s0 = vdupq_n_s32(0), s1 = vdupq_n_s32(0), s2 = vdupq_n_s32(0);
        /* values 32n + m (m < 32): trit n of qs[m] */
        s0 = pl_dot_s8(s0, PL_SUFFIX(tq1_trit)(qa), vld1q_s8(q8 + 0));
        s1 = pl_dot_s8(s1, PL_SUFFIX(tq1_trit)(qb), vld1q_s8(q8 + 16));
        s0 = pl_dot_s8(s0, PL_SUFFIX(tq1_trit)(vmulq_u8(qa, p3)), vld1q_s8(q8 + 32));
        s1 = pl_dot_s8(s1, PL_SUFFIX(tq1_trit)(vmulq_u8(qb, p3)), vld1q_s8(q8 + 48));
        s0 = pl_dot_s8(s0, PL_SUFFIX(tq1_trit)(vmulq_u8(qa, p9)), vld1q_s8(q8 + 64));
        s1 = pl_dot_s8(s1, PL_SUFFIX(tq1_trit)(vmulq_u8(qb, p9)), vld1q_s8(q8 + 80));
        s0 = pl_dot_s8(s0, PL_SUFFIX(tq1_trit)(vmulq_u8(qa, p27)), vld1q_s8(q8 + 96));
        s1 = pl_dot_s8(s1, PL_SUFFIX(tq1_trit)(vmulq_u8(qb, p27)), vld1q_s8(q8 + 112));
        s0 = pl_dot_s8(s0, PL_SUFFIX(tq1_trit)(vmulq_u8(qa, p81)), vld1q_s8(q8 + 128));
        s1 = pl_dot_s8(s1, PL_SUFFIX(tq1_trit)(vmulq_u8(qb, p81)), vld1q_s8(q8 + 144));
        /* values 160 + 16n + m (m < 16): trit n of qs[32 + m] */
        s2 = pl_dot_s8(s2, PL_SUFFIX(tq1_trit)(qc), vld1q_s8(q8 + 160));
        s2 = pl_dot_s8(s2, PL_SUFFIX(tq1_trit)(vmulq_u8(qc, p3)), vld1q_s8(q8 + 176));
        s2 = pl_dot_s8(s2, PL_SUFFIX(tq1_trit)(vmulq_u8(qc, p9)), vld1q_s8(q8 + 192));
        s2 = pl_dot_s8(s2, PL_SUFFIX(tq1_trit)(vmulq_u8(qc, p27)), vld1q_s8(q8 + 208));
        s2 = pl_dot_s8(s2, PL_SUFFIX(tq1_trit)(vmulq_u8(qc, p81)), vld1q_s8(q8 + 224));
        /* values 240 + 4n + j: trit n of qh[j] */
        uint32_t qh4;
        memcpy(&qh4, x[i].qh, 4);
        const uint8x16_t h = vmulq_u8(vreinterpretq_u8_u32(vdupq_n_u32(qh4)), ph);
        s2 = pl_dot_s8(s2, PL_SUFFIX(tq1_trit)(h), vld1q_s8(q8 + 240));
        const int32_t s = vaddvq_s32(vaddq_s32(vaddq_s32(s0, s1), s2)) - PL_SUFFIX(iq_bsums_total)(y[i].bsums);
        sum += (float)s * (pl_f16_to_f32_neon(x[i].d) * y[i].d);
    }
    return sum;
}

/* ---- iq2 ----------------------------------------------------------------- */

/* iq2_xxs: per 32, sumi * (2 * (meta >> 28) + 1) into the block's int32;
 * per block sum += d * y.d * (float)bsum; result 0.125f * sum (reference). */
static float PL_SUFFIX(dot_iq2_xxs)(int64_t n, const void *w, const void *a) {
    const pl_block_iq2_xxs *x = w;
    const pl_block_q8_K *y = a;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / 256; i++) {
        const int8_t *q8 = y[i].qs;
        int32x4_t acc0 = vdupq_n_s32(0), acc1 = vdupq_n_s32(0);
        for (int ib = 0; ib < 8; ib += 2, q8 += 64) {
            uint32_t aux[4];
            memcpy(aux, x[i].qs + 4 * ib, 16);
            const uint8_t *qa = (const uint8_t *)&aux[0], *qb = (const uint8_t *)&aux[2];
            const uint32_t ma = aux[1], mb = aux[3];
            const int8x16_t ga0 = PL_SUFFIX(iq_apply)(PL_SUFFIX(iq_rows2)(pl_iq2xxs_grid, qa[0], qa[1]), PL_SUFFIX(iq_even_signs2)(ma, ma >> 7));
            const int8x16_t ga1 = PL_SUFFIX(iq_apply)(PL_SUFFIX(iq_rows2)(pl_iq2xxs_grid, qa[2], qa[3]), PL_SUFFIX(iq_even_signs2)(ma >> 14, ma >> 21));
            const int8x16_t gb0 = PL_SUFFIX(iq_apply)(PL_SUFFIX(iq_rows2)(pl_iq2xxs_grid, qb[0], qb[1]), PL_SUFFIX(iq_even_signs2)(mb, mb >> 7));
            const int8x16_t gb1 = PL_SUFFIX(iq_apply)(PL_SUFFIX(iq_rows2)(pl_iq2xxs_grid, qb[2], qb[3]), PL_SUFFIX(iq_even_signs2)(mb >> 14, mb >> 21));
            const int32x4_t pa = pl_dot_s8(pl_dot_s8(vdupq_n_s32(0), ga0, vld1q_s8(q8)), ga1, vld1q_s8(q8 + 16));
            const int32x4_t pb = pl_dot_s8(pl_dot_s8(vdupq_n_s32(0), gb0, vld1q_s8(q8 + 32)), gb1, vld1q_s8(q8 + 48));
            acc0 = vmlaq_n_s32(acc0, pa, (int32_t)(2 * (ma >> 28) + 1));
            acc1 = vmlaq_n_s32(acc1, pb, (int32_t)(2 * (mb >> 28) + 1));
        }
        const int32_t bsum = vaddvq_s32(vaddq_s32(acc0, acc1));
        sum += pl_f16_to_f32_neon(x[i].d) * y[i].d * (float)bsum;
    }
    return 0.125f * sum;
}

/* iq2_xs: 16-bit entries (9-bit index, 7 sign bits), scale per 16 (one
 * 16-byte vector each); float combination as iq2_xxs. */
static float PL_SUFFIX(dot_iq2_xs)(int64_t n, const void *w, const void *a) {
    const pl_block_iq2_xs *x = w;
    const pl_block_q8_K *y = a;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / 256; i++) {
        const int8_t *q8 = y[i].qs;
        int32x4_t acc0 = vdupq_n_s32(0), acc1 = vdupq_n_s32(0);
        for (int ib = 0; ib < 8; ib++, q8 += 32) {
            const uint16_t *e = x[i].qs + 4 * ib;
            const int8x16_t g0 = PL_SUFFIX(iq_apply)(PL_SUFFIX(iq_rows2)(pl_iq2xs_grid, e[0] & 511u, e[1] & 511u),
                                                     PL_SUFFIX(iq_even_signs2)(e[0] >> 9, e[1] >> 9));
            const int8x16_t g1 = PL_SUFFIX(iq_apply)(PL_SUFFIX(iq_rows2)(pl_iq2xs_grid, e[2] & 511u, e[3] & 511u),
                                                     PL_SUFFIX(iq_even_signs2)(e[2] >> 9, e[3] >> 9));
            const int32x4_t p0 = pl_dot_s8(vdupq_n_s32(0), g0, vld1q_s8(q8));
            const int32x4_t p1 = pl_dot_s8(vdupq_n_s32(0), g1, vld1q_s8(q8 + 16));
            const uint8_t sc = x[i].scales[ib];
            acc0 = vmlaq_n_s32(acc0, p0, 2 * (sc & 0xf) + 1);
            acc1 = vmlaq_n_s32(acc1, p1, 2 * (sc >> 4) + 1);
        }
        const int32_t bsum = vaddvq_s32(vaddq_s32(acc0, acc1));
        sum += pl_f16_to_f32_neon(x[i].d) * y[i].d * (float)bsum;
    }
    return 0.125f * sum;
}

/* iq2_s: 10-bit index (8 in qs, 2 in qh), sign bytes, scale per 16;
 * float combination as iq2_xxs. */
static float PL_SUFFIX(dot_iq2_s)(int64_t n, const void *w, const void *a) {
    const pl_block_iq2_s *x = w;
    const pl_block_q8_K *y = a;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / 256; i++) {
        const int8_t *q8 = y[i].qs;
        int32x4_t acc0 = vdupq_n_s32(0), acc1 = vdupq_n_s32(0);
        for (int ib = 0; ib < 8; ib++, q8 += 32) {
            const uint8_t *qs = x[i].qs + 4 * ib;
            const uint32_t qh = x[i].qh[ib];
            int8x16_t m0, m1;
            PL_SUFFIX(iq_bit_signs)(x[i].qs + 32 + 4 * ib, &m0, &m1);
            const int8x16_t g0 = PL_SUFFIX(iq_apply)(
                PL_SUFFIX(iq_rows2)(pl_iq2s_grid, qs[0] | ((qh << 8) & 0x300), qs[1] | ((qh << 6) & 0x300)), m0);
            const int8x16_t g1 = PL_SUFFIX(iq_apply)(
                PL_SUFFIX(iq_rows2)(pl_iq2s_grid, qs[2] | ((qh << 4) & 0x300), qs[3] | ((qh << 2) & 0x300)), m1);
            const int32x4_t p0 = pl_dot_s8(vdupq_n_s32(0), g0, vld1q_s8(q8));
            const int32x4_t p1 = pl_dot_s8(vdupq_n_s32(0), g1, vld1q_s8(q8 + 16));
            const uint8_t sc = x[i].scales[ib];
            acc0 = vmlaq_n_s32(acc0, p0, 2 * (sc & 0xf) + 1);
            acc1 = vmlaq_n_s32(acc1, p1, 2 * (sc >> 4) + 1);
        }
        const int32_t bsum = vaddvq_s32(vaddq_s32(acc0, acc1));
        sum += pl_f16_to_f32_neon(x[i].d) * y[i].d * (float)bsum;
    }
    return 0.125f * sum;
}

/* ---- iq3 ----------------------------------------------------------------- */

/* iq3_xxs: 4-value grid rows, 7-bit even signs per 8, scale per 32;
 * per block sum += d * y.d * (float)bsum; result 0.25f * sum (reference). */
static float PL_SUFFIX(dot_iq3_xxs)(int64_t n, const void *w, const void *a) {
    const pl_block_iq3_xxs *x = w;
    const pl_block_q8_K *y = a;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / 256; i++) {
        const int8_t *q8 = y[i].qs;
        int32x4_t acc0 = vdupq_n_s32(0), acc1 = vdupq_n_s32(0);
        for (int ib = 0; ib < 8; ib += 2, q8 += 64) {
            const uint8_t *q = x[i].qs + 8 * ib;
            uint32_t meta[2];
            memcpy(meta, x[i].qs + 64 + 4 * ib, 8);
            const uint32_t ma = meta[0], mb = meta[1];
            const int8x16_t ga0 = PL_SUFFIX(iq_apply)(PL_SUFFIX(iq_rows4)(pl_iq3xxs_grid, q[0], q[1], q[2], q[3]),
                                                      PL_SUFFIX(iq_even_signs2)(ma, ma >> 7));
            const int8x16_t ga1 = PL_SUFFIX(iq_apply)(PL_SUFFIX(iq_rows4)(pl_iq3xxs_grid, q[4], q[5], q[6], q[7]),
                                                      PL_SUFFIX(iq_even_signs2)(ma >> 14, ma >> 21));
            const int8x16_t gb0 = PL_SUFFIX(iq_apply)(PL_SUFFIX(iq_rows4)(pl_iq3xxs_grid, q[8], q[9], q[10], q[11]),
                                                      PL_SUFFIX(iq_even_signs2)(mb, mb >> 7));
            const int8x16_t gb1 = PL_SUFFIX(iq_apply)(PL_SUFFIX(iq_rows4)(pl_iq3xxs_grid, q[12], q[13], q[14], q[15]),
                                                      PL_SUFFIX(iq_even_signs2)(mb >> 14, mb >> 21));
            const int32x4_t pa = pl_dot_s8(pl_dot_s8(vdupq_n_s32(0), ga0, vld1q_s8(q8)), ga1, vld1q_s8(q8 + 16));
            const int32x4_t pb = pl_dot_s8(pl_dot_s8(vdupq_n_s32(0), gb0, vld1q_s8(q8 + 32)), gb1, vld1q_s8(q8 + 48));
            acc0 = vmlaq_n_s32(acc0, pa, (int32_t)(2 * (ma >> 28) + 1));
            acc1 = vmlaq_n_s32(acc1, pb, (int32_t)(2 * (mb >> 28) + 1));
        }
        const int32_t bsum = vaddvq_s32(vaddq_s32(acc0, acc1));
        sum += pl_f16_to_f32_neon(x[i].d) * y[i].d * (float)bsum;
    }
    return 0.25f * sum;
}

/* iq3_s: 9-bit index (8 in qs, 1 in qh), sign bytes, scale per 32;
 * per block sum += d * y.d * (float)bsum; result sum (reference). */
static float PL_SUFFIX(dot_iq3_s)(int64_t n, const void *w, const void *a) {
    const pl_block_iq3_s *x = w;
    const pl_block_q8_K *y = a;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / 256; i++) {
        const int8_t *q8 = y[i].qs;
        int32x4_t acc0 = vdupq_n_s32(0), acc1 = vdupq_n_s32(0);
        for (int ib = 0; ib < 8; ib += 2, q8 += 64) {
            const uint8_t *q = x[i].qs + 8 * ib;
            const uint32_t ha = x[i].qh[ib], hb = x[i].qh[ib + 1];
            int8x16_t ma0, ma1, mb0, mb1;
            PL_SUFFIX(iq_bit_signs)(x[i].signs + 4 * ib, &ma0, &ma1);
            PL_SUFFIX(iq_bit_signs)(x[i].signs + 4 * ib + 4, &mb0, &mb1);
            const int8x16_t ga0 = PL_SUFFIX(iq_apply)(
                PL_SUFFIX(iq_rows4)(pl_iq3s_grid, q[0] | ((ha << 8) & 256), q[1] | ((ha << 7) & 256),
                                    q[2] | ((ha << 6) & 256), q[3] | ((ha << 5) & 256)), ma0);
            const int8x16_t ga1 = PL_SUFFIX(iq_apply)(
                PL_SUFFIX(iq_rows4)(pl_iq3s_grid, q[4] | ((ha << 4) & 256), q[5] | ((ha << 3) & 256),
                                    q[6] | ((ha << 2) & 256), q[7] | ((ha << 1) & 256)), ma1);
            const int8x16_t gb0 = PL_SUFFIX(iq_apply)(
                PL_SUFFIX(iq_rows4)(pl_iq3s_grid, q[8] | ((hb << 8) & 256), q[9] | ((hb << 7) & 256),
                                    q[10] | ((hb << 6) & 256), q[11] | ((hb << 5) & 256)), mb0);
            const int8x16_t gb1 = PL_SUFFIX(iq_apply)(
                PL_SUFFIX(iq_rows4)(pl_iq3s_grid, q[12] | ((hb << 4) & 256), q[13] | ((hb << 3) & 256),
                                    q[14] | ((hb << 2) & 256), q[15] | ((hb << 1) & 256)), mb1);
            const int32x4_t pa = pl_dot_s8(pl_dot_s8(vdupq_n_s32(0), ga0, vld1q_s8(q8)), ga1, vld1q_s8(q8 + 16));
            const int32x4_t pb = pl_dot_s8(pl_dot_s8(vdupq_n_s32(0), gb0, vld1q_s8(q8 + 32)), gb1, vld1q_s8(q8 + 48));
            const uint8_t sc = x[i].scales[ib / 2];
            acc0 = vmlaq_n_s32(acc0, pa, 2 * (sc & 0xf) + 1);
            acc1 = vmlaq_n_s32(acc1, pb, 2 * (sc >> 4) + 1);
        }
        const int32_t bsum = vaddvq_s32(vaddq_s32(acc0, acc1));
        sum += pl_f16_to_f32_neon(x[i].d) * y[i].d * (float)bsum;
    }
    return sum;
}

/* ---- iq1 ----------------------------------------------------------------- */

/* iq1_s: grid rows are signed bytes in {-1,0,1}, dotted with y directly
 * (sumi = sum ls * lsum); the shift term sumi1 = sum ls * delta * (bsum pair)
 * from the activation bsums, as the reference;
 * per block sum += d * y.d * ((float)sumi + 0.125f * (float)sumi1). */
static float PL_SUFFIX(dot_iq1_s)(int64_t n, const void *w, const void *a) {
    const pl_block_iq1_s *x = w;
    const pl_block_q8_K *y = a;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / 256; i++) {
        const int8_t *q8 = y[i].qs;
        int32x4_t acc0 = vdupq_n_s32(0), acc1 = vdupq_n_s32(0);
        int sumi1 = 0;
        for (int ib = 0; ib < 8; ib += 2, q8 += 64) {
            const uint8_t *qs = x[i].qs + 4 * ib;
            const uint32_t ha = x[i].qh[ib], hb = x[i].qh[ib + 1];
            const int8x16_t ga0 = PL_SUFFIX(iq_rows2)(pl_iq1s_grid, qs[0] | ((ha << 8) & 0x700), qs[1] | ((ha << 5) & 0x700));
            const int8x16_t ga1 = PL_SUFFIX(iq_rows2)(pl_iq1s_grid, qs[2] | ((ha << 2) & 0x700), qs[3] | ((ha >> 1) & 0x700));
            const int8x16_t gb0 = PL_SUFFIX(iq_rows2)(pl_iq1s_grid, qs[4] | ((hb << 8) & 0x700), qs[5] | ((hb << 5) & 0x700));
            const int8x16_t gb1 = PL_SUFFIX(iq_rows2)(pl_iq1s_grid, qs[6] | ((hb << 2) & 0x700), qs[7] | ((hb >> 1) & 0x700));
            const int32x4_t pa = pl_dot_s8(pl_dot_s8(vdupq_n_s32(0), ga0, vld1q_s8(q8)), ga1, vld1q_s8(q8 + 16));
            const int32x4_t pb = pl_dot_s8(pl_dot_s8(vdupq_n_s32(0), gb0, vld1q_s8(q8 + 32)), gb1, vld1q_s8(q8 + 48));
            const int lsa = (int)(2 * ((ha >> 12) & 7) + 1), lsb = (int)(2 * ((hb >> 12) & 7) + 1);
            acc0 = vmlaq_n_s32(acc0, pa, lsa);
            acc1 = vmlaq_n_s32(acc1, pb, lsb);
            sumi1 += lsa * (ha & 0x8000 ? -1 : 1) * (y[i].bsums[2 * ib] + y[i].bsums[2 * ib + 1]);
            sumi1 += lsb * (hb & 0x8000 ? -1 : 1) * (y[i].bsums[2 * ib + 2] + y[i].bsums[2 * ib + 3]);
        }
        const int sumi = vaddvq_s32(vaddq_s32(acc0, acc1));
        sum += pl_f16_to_f32_neon(x[i].d) * y[i].d * ((float)sumi + PL_IQ1S_DELTA * (float)sumi1);
    }
    return sum;
}

/* iq1_m: each weight is ls * (g + delta / 8) with delta = +-1 per 8 and ls
 * per 16, so one dot of y with the int8 8g + delta (|.| <= 9) gives
 * T = 8 * sumi1 + sumi2 (the reference's two int32 sums; |T| < 2^24).
 * (float)sumi1 + 0.125f * (float)sumi2 rounds the exact value T / 8 once,
 * as (float)T * 0.125f does (power-of-two scaling commutes with rounding),
 * so per block sum += d * y.d * ((float)T * 0.125f) equals the reference's
 * d * y.d * ((float)sumi1 + 0.125f * (float)sumi2) bit for bit. */
static float PL_SUFFIX(dot_iq1_m)(int64_t n, const void *w, const void *a) {
    const pl_block_iq1_m *x = w;
    const pl_block_q8_K *y = a;
    /* bytes 0..7: the shift bit of an even group (0x08), 8..15: odd (0x80) */
    static const uint8_t dbits[16] = {8, 8, 8, 8, 8, 8, 8, 8, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80};
    const uint8x16_t db = vld1q_u8(dbits);
    const int8x16_t plus = vdupq_n_s8(1), minus = vdupq_n_s8(-1);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / 256; i++) {
        uint16_t sc[4];
        memcpy(sc, x[i].scales, 8);
        const uint16_t f = (uint16_t)((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000));
        const int8_t *q8 = y[i].qs;
        int32x4_t acc0 = vdupq_n_s32(0), acc1 = vdupq_n_s32(0);
        for (int ib = 0; ib < 8; ib++, q8 += 32) {
            const uint8_t *qs = x[i].qs + 4 * ib;
            const uint32_t h0 = x[i].qh[2 * ib], h1 = x[i].qh[2 * ib + 1];
            const int8x16_t g0 = PL_SUFFIX(iq_rows2)(pl_iq1s_grid, qs[0] | ((h0 << 8) & 0x700), qs[1] | ((h0 << 4) & 0x700));
            const int8x16_t g1 = PL_SUFFIX(iq_rows2)(pl_iq1s_grid, qs[2] | ((h1 << 8) & 0x700), qs[3] | ((h1 << 4) & 0x700));
            const int8x16_t d0 = vbslq_s8(vtstq_u8(vdupq_n_u8((uint8_t)h0), db), minus, plus);
            const int8x16_t d1 = vbslq_s8(vtstq_u8(vdupq_n_u8((uint8_t)h1), db), minus, plus);
            const int8x16_t w0 = vaddq_s8(vshlq_n_s8(g0, 3), d0), w1 = vaddq_s8(vshlq_n_s8(g1, 3), d1);
            const int32x4_t p0 = pl_dot_s8(vdupq_n_s32(0), w0, vld1q_s8(q8));
            const int32x4_t p1 = pl_dot_s8(vdupq_n_s32(0), w1, vld1q_s8(q8 + 16));
            const uint32_t s = sc[ib / 2] >> (6 * (ib % 2));
            acc0 = vmlaq_n_s32(acc0, p0, (int32_t)(2 * (s & 7) + 1));
            acc1 = vmlaq_n_s32(acc1, p1, (int32_t)(2 * ((s >> 3) & 7) + 1));
        }
        const int32_t T = vaddvq_s32(vaddq_s32(acc0, acc1));
        sum += pl_f16_to_f32_neon(f) * y[i].d * ((float)T * 0.125f);
    }
    return sum;
}

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
