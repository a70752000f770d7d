/*
 * dots_arm_legacy.h -- NEON kernels for the 32-element block types (q4_0, q4_1, q5_0, q5_1, q8_0, iq4_nl, mxfp4).
 * A template: included by the AArch64 tier files with PL_SUFFIX defined;
 * defines PL_SUFFIX(fill_legacy), which sets the entries it implements.
 *
 * The int8 products go through leg_dot32: SDOT (pl_dot_s8) on the dotprod
 * tier, widening multiplies + pairwise adds on the NEON tier (int16 sums
 * only as deep as the weights' range keeps exact, see leg_dot32).  Either
 * way a block's integer sum is the reference's integer exactly.
 *
 * Float combination order of every vec_dot here (one line per type family):
 *   per block b: t_b = the block's integer sum (exact), d_b = xd_b * yd_b
 *   (mxfp4: yd_b * e8m0_half(e_b)), one f32 multiply of the exact f16/e8m0
 *   values;
 *   q4_0, q5_0, q8_0, iq4_nl, mxfp4:  acc_p = fma(float(t_b), d_b, acc_p)
 *   q4_1, q5_1:  acc_p = acc_p + fma(float(t_b), d_b, xm_b * ys_b)
 *   where p = b mod 2 (two accumulators: even blocks, odd blocks, each
 *   starting at +0, visited in block order); result = acc_0 + acc_1.
 * The two accumulators are the two lanes of a float32x2; the q8_0 tile and
 * rows kernels keep one such accumulator per entry (entries in lanes) and
 * do exactly these operations, so they are vec_dot's bits.
 */
#include <stddef.h>
#include <string.h>

#include "quant/blocks.h"
#include "quant/iq_tables.h"
#include "quant/quant_util.h"
#include "quant/simd_arm.h"

/* weight formats handled by the one core below */
enum { PL_LEG_Q4_0, PL_LEG_Q4_1, PL_LEG_Q5_0, PL_LEG_Q5_1, PL_LEG_Q8_0, PL_LEG_IQ4_NL, PL_LEG_MXFP4 };

/* ---- small helpers ----------------------------------------------------- */

/* four f16 values (one per pointer) -> f32 lanes 0..3 */
PL_ALWAYS_INLINE float32x4_t PL_SUFFIX(leg_f16x4)(const uint16_t *p0, const uint16_t *p1, const uint16_t *p2,
                                                  const uint16_t *p3) {
    uint16x4_t h = vld1_dup_u16(p0);
    h = vld1_lane_u16(p1, h, 1);
    h = vld1_lane_u16(p2, h, 2);
    h = vld1_lane_u16(p3, h, 3);
    return vcvt_f32_f16(vreinterpret_f16_u16(h));
}

/* [a0 * b0, a1 * b1] of four f16 values (exact conversions, one rounding
 * per product) */
PL_ALWAYS_INLINE float32x2_t PL_SUFFIX(leg_mul2_f16)(const uint16_t *a0, const uint16_t *a1, const uint16_t *b0,
                                                     const uint16_t *b1) {
    const float32x4_t f = PL_SUFFIX(leg_f16x4)(a0, a1, b0, b1);
    return vmul_f32(vget_low_f32(f), vget_high_f32(f));
}

/* a + b * c, one rounding (lane 0 of a vector FMA) */
PL_ALWAYS_INLINE float PL_SUFFIX(leg_fma)(float a, float b, float c) {
    return vget_lane_f32(vfma_f32(vdup_n_f32(a), vdup_n_f32(b), vdup_n_f32(c)), 0);
}

/* [total of s0, total of s1] (exact int32 sums of the lanes) */
PL_ALWAYS_INLINE int32x2_t PL_SUFFIX(leg_tot2)(int32x4_t s0, int32x4_t s1) {
    const int32x4_t p = vpaddq_s32(s0, s1);
    return vpadd_s32(vget_low_s32(p), vget_high_s32(p));
}

/* [total of s0, s1, s2, s3] */
PL_ALWAYS_INLINE int32x4_t PL_SUFFIX(leg_tot4)(int32x4_t s0, int32x4_t s1, int32x4_t s2, int32x4_t s3) {
    return vpaddq_s32(vpaddq_s32(s0, s1), vpaddq_s32(s2, s3));
}

/* 0xff in byte j of lo (j < 16) / hi (element 16 + j) where bit j / 16 + j
 * of the q5 qh word is set */
PL_ALWAYS_INLINE void PL_SUFFIX(leg_q5_bits)(const uint8_t *qh, uint8x16_t *lo, uint8x16_t *hi) {
    uint32_t q;
    memcpy(&q, qh, 4);
    const uint8x16_t v = vreinterpretq_u8_u32(vdupq_n_u32(q));
    const uint8x16_t bit = vreinterpretq_u8_u64(vdupq_n_u64(0x8040201008040201ull));
    const uint8x16_t i01 = vcombine_u8(vdup_n_u8(0), vdup_n_u8(1)), i23 = vcombine_u8(vdup_n_u8(2), vdup_n_u8(3));
    *lo = vtstq_u8(vqtbl1q_u8(v, i01), bit);
    *hi = vtstq_u8(vqtbl1q_u8(v, i23), bit);
}

/* weight block bytes and activation block bytes of a kind */
#define PL_LEG_WBYTES(kind)                                                                                              \
    ((kind) == PL_LEG_Q4_0     ? sizeof(pl_block_q4_0)                                                                   \
     : (kind) == PL_LEG_Q4_1   ? sizeof(pl_block_q4_1)                                                                   \
     : (kind) == PL_LEG_Q5_0   ? sizeof(pl_block_q5_0)                                                                   \
     : (kind) == PL_LEG_Q5_1   ? sizeof(pl_block_q5_1)                                                                   \
     : (kind) == PL_LEG_Q8_0   ? sizeof(pl_block_q8_0)                                                                   \
     : (kind) == PL_LEG_IQ4_NL ? sizeof(pl_block_iq4_nl)                                                                 \
                               : sizeof(pl_block_mxfp4))
#define PL_LEG_HAS_MIN(kind) ((kind) == PL_LEG_Q4_1 || (kind) == PL_LEG_Q5_1)
#define PL_LEG_ABYTES(kind) (PL_LEG_HAS_MIN(kind) ? sizeof(pl_block_q8_1) : sizeof(pl_block_q8_0))

/* the 32 weights of a block as two int8x16 (elements 0..15, 16..31) */
PL_ALWAYS_INLINE void PL_SUFFIX(leg_weights)(const int kind, const uint8_t *xb, int8x16_t table, int8x16_t *lo,
                                             int8x16_t *hi) {
    if (kind == PL_LEG_Q8_0) {
        const pl_block_q8_0 *x = (const pl_block_q8_0 *)xb;
        *lo = vld1q_s8(x->qs);
        *hi = vld1q_s8(x->qs + 16);
        return;
    }
    const size_t qs_off = kind == PL_LEG_Q4_0     ? offsetof(pl_block_q4_0, qs)
                          : kind == PL_LEG_Q4_1   ? offsetof(pl_block_q4_1, qs)
                          : kind == PL_LEG_Q5_0   ? offsetof(pl_block_q5_0, qs)
                          : kind == PL_LEG_Q5_1   ? offsetof(pl_block_q5_1, qs)
                          : kind == PL_LEG_IQ4_NL ? offsetof(pl_block_iq4_nl, qs)
                                                  : offsetof(pl_block_mxfp4, qs);
    const uint8x16_t v = vld1q_u8(xb + qs_off);
    const uint8x16_t nl = vandq_u8(v, vdupq_n_u8(0x0f)), nh = vshrq_n_u8(v, 4);
    if (kind == PL_LEG_Q4_0) {
        *lo = vsubq_s8(vreinterpretq_s8_u8(nl), vdupq_n_s8(8));
        *hi = vsubq_s8(vreinterpretq_s8_u8(nh), vdupq_n_s8(8));
    } else if (kind == PL_LEG_Q4_1) {
        *lo = vreinterpretq_s8_u8(nl);
        *hi = vreinterpretq_s8_u8(nh);
    } else if (kind == PL_LEG_Q5_0 || kind == PL_LEG_Q5_1) {
        const size_t qh_off = kind == PL_LEG_Q5_0 ? offsetof(pl_block_q5_0, qh) : offsetof(pl_block_q5_1, qh);
        uint8x16_t bl, bh;
        PL_SUFFIX(leg_q5_bits)(xb + qh_off, &bl, &bh);
        const uint8x16_t sixteen = vdupq_n_u8(0x10);
        if (kind == PL_LEG_Q5_0) { /* (nibble | bit4) - 16 = nibble - (16 where the bit is clear) */
            *lo = vsubq_s8(vreinterpretq_s8_u8(nl), vreinterpretq_s8_u8(vbicq_u8(sixteen, bl)));
            *hi = vsubq_s8(vreinterpretq_s8_u8(nh), vreinterpretq_s8_u8(vbicq_u8(sixteen, bh)));
        } else {
            *lo = vreinterpretq_s8_u8(vorrq_u8(nl, vandq_u8(bl, sixteen)));
            *hi = vreinterpretq_s8_u8(vorrq_u8(nh, vandq_u8(bh, sixteen)));
        }
    } else { /* iq4_nl, mxfp4: 16-entry signed codebook */
        *lo = vqtbl1q_s8(table, nl);
        *hi = vqtbl1q_s8(table, nh);
    }
}

/* lo . y0 + hi . y1 (32 int8 products) in 4 int32 lanes; only the total
 * of the lanes is used.  With dotprod two SDOTs (pl_dot_s8).  Without it
 * widening multiplies, summed in int16 only as far as the weights' range
 * keeps exact (|y| <= 128): |w| <= 31 (q4_*, q5_*, mxfp4): 4 products per
 * int16 lane (<= 15872); |w| <= 127 (iq4_nl): 2 (<= 32512); q8_0 (|w| <=
 * 128): 1, each product widened to int32 by pairwise adds. */
PL_ALWAYS_INLINE int32x4_t PL_SUFFIX(leg_dot32)(const int kind, int8x16_t lo, int8x16_t hi, int8x16_t y0, int8x16_t y1) {
#if defined(__ARM_FEATURE_DOTPROD)
    (void)kind;
    return pl_dot_s8(pl_dot_s8(vdupq_n_s32(0), lo, y0), hi, y1);
#else
    if (kind == PL_LEG_Q8_0) {
        int32x4_t s = vpaddlq_s16(vmull_s8(vget_low_s8(lo), vget_low_s8(y0)));
        s = vpadalq_s16(s, vmull_high_s8(lo, y0));
        s = vpadalq_s16(s, vmull_s8(vget_low_s8(hi), vget_low_s8(y1)));
        return vpadalq_s16(s, vmull_high_s8(hi, y1));
    }
    if (kind == PL_LEG_IQ4_NL) {
        const int16x8_t p0 = vmlal_high_s8(vmull_s8(vget_low_s8(lo), vget_low_s8(y0)), lo, y0);
        const int16x8_t p1 = vmlal_high_s8(vmull_s8(vget_low_s8(hi), vget_low_s8(y1)), hi, y1);
        return vpadalq_s16(vpaddlq_s16(p0), p1);
    }
    int16x8_t p = vmull_s8(vget_low_s8(lo), vget_low_s8(y0));
    p = vmlal_high_s8(p, lo, y0);
    p = vmlal_s8(p, vget_low_s8(hi), vget_low_s8(y1));
    p = vmlal_high_s8(p, hi, y1);
    return vpaddlq_s16(p);
#endif
}

/* the block's integer sum, in 4 int32 lanes (lane split depends on the tier) */
PL_ALWAYS_INLINE int32x4_t PL_SUFFIX(leg_ints)(const int kind, const uint8_t *xb, const int8_t *yq, int8x16_t table) {
    int8x16_t lo, hi;
    PL_SUFFIX(leg_weights)(kind, xb, table, &lo, &hi);
    return PL_SUFFIX(leg_dot32)(kind, lo, hi, vld1q_s8(yq), vld1q_s8(yq + 16));
}

/* the activation block's f16 d (q8_0 and q8_1 both start with it) and qs */
#define PL_LEG_YD(kind, yb) ((const uint16_t *)(yb))
#define PL_LEG_YQ(kind, yb)                                                                                              \
    (PL_LEG_HAS_MIN(kind) ? ((const pl_block_q8_1 *)(yb))->qs : ((const pl_block_q8_0 *)(yb))->qs)
/* every weight block but mxfp4 starts with its f16 d */
#define PL_LEG_XD(xb) ((const uint16_t *)(xb))

/* [d_0, d_1] of two blocks (see the top of the file) */
PL_ALWAYS_INLINE float32x2_t PL_SUFFIX(leg_d2)(const int kind, const uint8_t *x0, const uint8_t *x1, const uint8_t *y0,
                                               const uint8_t *y1) {
    if (kind == PL_LEG_MXFP4) {
        const float32x4_t yd = PL_SUFFIX(leg_f16x4)(PL_LEG_YD(kind, y0), PL_LEG_YD(kind, y1), PL_LEG_YD(kind, y0),
                                                    PL_LEG_YD(kind, y1));
        float32x2_t e = vdup_n_f32(pl_q_e8m0_half(((const pl_block_mxfp4 *)x0)->e));
        e = vset_lane_f32(pl_q_e8m0_half(((const pl_block_mxfp4 *)x1)->e), e, 1);
        return vmul_f32(vget_low_f32(yd), e);
    }
    return PL_SUFFIX(leg_mul2_f16)(PL_LEG_XD(x0), PL_LEG_XD(x1), PL_LEG_YD(kind, y0), PL_LEG_YD(kind, y1));
}

/* d of one block, the same product */
PL_ALWAYS_INLINE float PL_SUFFIX(leg_d1)(const int kind, const uint8_t *x, const uint8_t *y) {
    const float yd = pl_f16_to_f32_neon(*PL_LEG_YD(kind, y));
    if (kind == PL_LEG_MXFP4) return yd * pl_q_e8m0_half(((const pl_block_mxfp4 *)x)->e);
    return pl_f16_to_f32_neon(*PL_LEG_XD(x)) * yd;
}

/* xm * ys of q4_1 / q5_1 blocks (m is the second f16 of both weight blocks,
 * s the second f16 of q8_1) */
#define PL_LEG_XM(xb) ((const uint16_t *)(xb) + 1)
#define PL_LEG_YS(yb) (&((const pl_block_q8_1 *)(yb))->s)

/* ---- vec_dot: one core for the seven kinds ------------------------------ */

PL_ALWAYS_INLINE float PL_SUFFIX(leg_dot)(const int kind, int64_t n, const void *w, const void *a) {
    const uint8_t *xb = w, *yb = a;
    const size_t wsz = PL_LEG_WBYTES(kind), asz = PL_LEG_ABYTES(kind);
    const int64_t nb = n / 32;
    const int8x16_t table = kind == PL_LEG_IQ4_NL  ? vld1q_s8(pl_kvalues_iq4nl)
                            : kind == PL_LEG_MXFP4 ? vld1q_s8(pl_kvalues_mxfp4)
                                                   : vdupq_n_s8(0);
    float32x2_t acc = vdup_n_f32(0.0f); /* lane 0: even blocks, lane 1: odd blocks */
    int64_t i = 0;
    for (; i + 2 <= nb; i += 2) {
        const uint8_t *x0 = xb + (size_t)i * wsz, *x1 = x0 + wsz;
        const uint8_t *y0 = yb + (size_t)i * asz, *y1 = y0 + asz;
        const int32x4_t s0 = PL_SUFFIX(leg_ints)(kind, x0, PL_LEG_YQ(kind, y0), table);
        const int32x4_t s1 = PL_SUFFIX(leg_ints)(kind, x1, PL_LEG_YQ(kind, y1), table);
        const float32x2_t t = vcvt_f32_s32(PL_SUFFIX(leg_tot2)(s0, s1));
        const float32x2_t d = PL_SUFFIX(leg_d2)(kind, x0, x1, y0, y1);
        if (PL_LEG_HAS_MIN(kind)) {
            const float32x2_t ms = PL_SUFFIX(leg_mul2_f16)(PL_LEG_XM(x0), PL_LEG_XM(x1), PL_LEG_YS(y0), PL_LEG_YS(y1));
            acc = vadd_f32(acc, vfma_f32(ms, t, d));
        } else {
            acc = vfma_f32(acc, t, d);
        }
    }
    float even = vget_lane_f32(acc, 0);
    const float odd = vget_lane_f32(acc, 1);
    if (i < nb) {
        const uint8_t *x0 = xb + (size_t)i * wsz, *y0 = yb + (size_t)i * asz;
        const float t = (float)vaddvq_s32(PL_SUFFIX(leg_ints)(kind, x0, PL_LEG_YQ(kind, y0), table));
        const float d = PL_SUFFIX(leg_d1)(kind, x0, y0);
        if (PL_LEG_HAS_MIN(kind)) {
            const float ms = pl_f16_to_f32_neon(*PL_LEG_XM(x0)) * pl_f16_to_f32_neon(*PL_LEG_YS(y0));
            even = even + PL_SUFFIX(leg_fma)(ms, t, d);
        } else {
            even = PL_SUFFIX(leg_fma)(even, t, d);
        }
    }
    return even + odd;
}

/* X(name, KIND) for the seven types: leg_dot_<name> = leg_dot(PL_LEG_<KIND>),
 * the vec_dot of t[PL_TYPE_<KIND>] */
#define PL_LEG_FOR_TYPES(X)                                                                                             \
    X(q4_0, Q4_0) X(q4_1, Q4_1) X(q5_0, Q5_0) X(q5_1, Q5_1) X(q8_0, Q8_0) X(iq4_nl, IQ4_NL) X(mxfp4, MXFP4)
#define PL_LEG_DOT_FN(name, KIND)                                                                                       \
    static float PL_SUFFIX(leg_dot_##name)(int64_t n, const void *w, const void *a) {                                   \
        return PL_SUFFIX(leg_dot)(PL_LEG_##KIND, n, w, a);                                                              \
    }
PL_LEG_FOR_TYPES(PL_LEG_DOT_FN)

/* ---- q8_0 tile (2 weight rows x 4 activation columns) and rows (8 x 1) --- */

#define PL_LEG_Q8_0_TILE_ROWS 2
#define PL_LEG_Q8_0_TILE_COLS 4

/* block i of q8_0 row at base + r * stride */
#define PL_LEG_Q8_0_AT(base, stride, r, i) ((const pl_block_q8_0 *)((const uint8_t *)(base) + (size_t)(r) * (stride)) + (i))

/* the next block's parity: swap the 2 vectors of accumulators cur and oth */
PL_ALWAYS_INLINE void PL_SUFFIX(leg_swap2)(float32x4_t *cur, float32x4_t *oth) {
    for (int k = 0; k < 2; k++) {
        const float32x4_t t = cur[k];
        cur[k] = oth[k], oth[k] = t;
    }
}

/* One block i of the 2 x 4 tile: acc[r] lane c = entry (r, c)'s
 * accumulator of this block's parity; the operations per entry are
 * vec_dot's (integer total, d = xd * yd, one FMA). */
PL_ALWAYS_INLINE void PL_SUFFIX(leg_q8_0_tile_block)(const void *w, size_t ws, const void *a, size_t as, int64_t i,
                                                     float32x4_t *acc) {
    const pl_block_q8_0 *x0 = PL_LEG_Q8_0_AT(w, ws, 0, i), *x1 = PL_LEG_Q8_0_AT(w, ws, 1, i);
    const pl_block_q8_0 *c0 = PL_LEG_Q8_0_AT(a, as, 0, i), *c1 = PL_LEG_Q8_0_AT(a, as, 1, i);
    const pl_block_q8_0 *c2 = PL_LEG_Q8_0_AT(a, as, 2, i), *c3 = PL_LEG_Q8_0_AT(a, as, 3, i);
    const int8x16_t w00 = vld1q_s8(x0->qs), w01 = vld1q_s8(x0->qs + 16);
    const int8x16_t w10 = vld1q_s8(x1->qs), w11 = vld1q_s8(x1->qs + 16);
    const pl_block_q8_0 *cols[4] = {c0, c1, c2, c3};
    int32x4_t s0[4], s1[4];
    for (int c = 0; c < 4; c++) {
        const int8x16_t a0 = vld1q_s8(cols[c]->qs), a1 = vld1q_s8(cols[c]->qs + 16);
        s0[c] = PL_SUFFIX(leg_dot32)(PL_LEG_Q8_0, w00, w01, a0, a1);
        s1[c] = PL_SUFFIX(leg_dot32)(PL_LEG_Q8_0, w10, w11, a0, a1);
    }
    const float32x4_t yd = PL_SUFFIX(leg_f16x4)(&c0->d, &c1->d, &c2->d, &c3->d);
    const float32x2_t xd = vget_low_f32(vcvt_f32_f16(vreinterpret_f16_u16(vld1_lane_u16(&x1->d, vld1_dup_u16(&x0->d), 1))));
    const float32x4_t d0 = vmulq_lane_f32(yd, xd, 0), d1 = vmulq_lane_f32(yd, xd, 1);
    acc[0] = vfmaq_f32(acc[0], vcvtq_f32_s32(PL_SUFFIX(leg_tot4)(s0[0], s0[1], s0[2], s0[3])), d0);
    acc[1] = vfmaq_f32(acc[1], vcvtq_f32_s32(PL_SUFFIX(leg_tot4)(s1[0], s1[1], s1[2], s1[3])), d1);
}

static void PL_SUFFIX(leg_q8_0_tile)(int64_t n, const void *w, size_t ws, const void *a, size_t as, float *y, size_t ys) {
    const int64_t nb = n / 32;
    /* cur: the accumulators of block i's parity, oth: the other parity's */
    float32x4_t cur[2] = {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)}, oth[2] = {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)};
    for (int64_t i = 0; i < nb; i++) {
        PL_SUFFIX(leg_q8_0_tile_block)(w, ws, a, as, i, cur);
        PL_SUFFIX(leg_swap2)(cur, oth);
    }
    float r0[4], r1[4]; /* even + odd (the add commutes) */
    vst1q_f32(r0, vaddq_f32(cur[0], oth[0]));
    vst1q_f32(r1, vaddq_f32(cur[1], oth[1]));
    for (int c = 0; c < 4; c++) y[(size_t)c * ys] = r0[c], y[(size_t)c * ys + 1] = r1[c];
}

_Static_assert(PL_DOT_ROWS == 8, "the q8_0 rows kernel is two vectors of 4 rows");

/* One block i of 8 rows x 1 token: acc[h] lane k = row 4h + k. */
PL_ALWAYS_INLINE void PL_SUFFIX(leg_q8_0_rows_block)(const void *w, size_t ws, const pl_block_q8_0 *yb, int64_t i,
                                                     float32x4_t *acc) {
    const int8x16_t a0 = vld1q_s8(yb[i].qs), a1 = vld1q_s8(yb[i].qs + 16);
    const float yd = pl_f16_to_f32_neon(yb[i].d);
    for (int h = 0; h < 2; h++) {
        int32x4_t s[4];
        const pl_block_q8_0 *x[4];
        for (int k = 0; k < 4; k++) {
            x[k] = PL_LEG_Q8_0_AT(w, ws, 4 * h + k, i);
            s[k] = PL_SUFFIX(leg_dot32)(PL_LEG_Q8_0, vld1q_s8(x[k]->qs), vld1q_s8(x[k]->qs + 16), a0, a1);
        }
        const float32x4_t d = vmulq_n_f32(PL_SUFFIX(leg_f16x4)(&x[0]->d, &x[1]->d, &x[2]->d, &x[3]->d), yd);
        acc[h] = vfmaq_f32(acc[h], vcvtq_f32_s32(PL_SUFFIX(leg_tot4)(s[0], s[1], s[2], s[3])), d);
    }
}

static void PL_SUFFIX(leg_q8_0_rows)(int64_t n, const void *w, size_t ws, const void *a, size_t as, float *y, size_t ys) {
    const pl_block_q8_0 *yb = a;
    const int64_t nb = n / 32;
    float32x4_t cur[2] = {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)}, oth[2] = {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)};
    for (int64_t i = 0; i < nb; i++) {
        PL_SUFFIX(leg_q8_0_rows_block)(w, ws, yb, i, cur);
        PL_SUFFIX(leg_swap2)(cur, oth);
    }
    vst1q_f32(y, vaddq_f32(cur[0], oth[0]));
    vst1q_f32(y + 4, vaddq_f32(cur[1], oth[1]));
}

#define PL_LEG_SET_DOT(name, KIND) t[PL_TYPE_##KIND].vec_dot = PL_SUFFIX(leg_dot_##name);
static void PL_SUFFIX(fill_legacy)(pl_quant_kernel_set *t) {
    PL_LEG_FOR_TYPES(PL_LEG_SET_DOT)
    /* q8_0 (vec_dot set above) also has the tile and rows kernels */
    pl_quant_kernel_set *q8 = &t[PL_TYPE_Q8_0];
    q8->vec_dot_tile = PL_SUFFIX(leg_q8_0_tile);
    q8->tile_rows = PL_LEG_Q8_0_TILE_ROWS;
    q8->tile_cols = PL_LEG_Q8_0_TILE_COLS;
    q8->vec_dot_rows = PL_SUFFIX(leg_q8_0_rows);
    q8->dot_rows = PL_DOT_ROWS;
}
