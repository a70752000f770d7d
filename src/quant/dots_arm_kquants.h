/*
 * dots_arm_kquants.h -- NEON kernels for the k-quants (q2_K .. q6_K) and iq4_xs: vec_dot, the prefill tiles and the
 * decode rows kernels. A template: included by the AArch64 tier files with PL_SUFFIX defined; defines
 * PL_SUFFIX(fill_kquants), which sets the entries it implements.
 *
 * The int8 products go through pl_dot_s8 (SDOT on the dotprod tier, widening
 * multiplies on the neon tier); every 16- or 32-element partial sum is an
 * int32x4 whose lane split does not matter, multiplied by its sub-block scale
 * (int32 MLA) into one int32x4 per block.  All integer arithmetic is exact, so
 * the block's integer total equals the reference's.
 *
 * Float order (every kernel, per entry): one float32x4 accumulator acc;
 * per 256-block
 *     acc = fma(acc, (float)sumi, xd * yd)             (q3_K, q6_K, iq4_xs)
 *     acc = fms(fma(acc, (float)sumi, xd * yd), (float)summs, xdmin * yd)
 *                                                     (q2_K, q4_K, q5_K)
 * with sumi/summs int32x4 (summs: the min terms from the bsums), xd/xdmin the
 * weight block's f16 scales and yd the activation's; at the end
 * vaddvq_f32(acc) = (a0 + a1) + (a2 + a3).
 *
 * One always-inline core, kq_core, serves q2_K .. q6_K (the type, nr weight
 * rows and nc activation columns are constant arguments); it walks the blocks
 * and row groups, and each type's own steps are helpers: kq_scales (a block's
 * sub-block scales), kq_weights16 / kq_sums16 or kq_sums_q45 (the scaled int8
 * products) and kq_end (the float combination above).  vec_dot is 1 x 1, the
 * tile 1 x PL_KQ_COLS and the rows kernel PL_DOT_ROWS x 1.  Every (row,
 * column) entry has its own accumulators and goes through exactly vec_dot's
 * operations, so the tile and rows kernels match vec_dot bit for bit; only
 * the weight unpacking (tile) or the activation loads (rows) are shared.
 */
#include <stddef.h>
#include <string.h>

#include "quant/iq_tables.h"
#include "quant/kquant_scales.h"

#define PL_KQ_COLS 4 /* tile: 1 weight row x PL_KQ_COLS activation columns */
#define PL_KQ_MAXE 8 /* entries of a core call at most (nr * nc) */
/* rows unpacked together (the rows kernel takes its 8 rows in 2 groups of 4
 * per block: registers) */
#define PL_KQ_RG(nr) ((nr) < 4 ? (nr) : 4)

/* the weight formats of the one core below */
enum { PL_KQ_q2_K, PL_KQ_q3_K, PL_KQ_q4_K, PL_KQ_q5_K, PL_KQ_q6_K };
#define PL_KQ_BYTES(kind)                                                                                              \
    ((kind) == PL_KQ_q2_K   ? sizeof(pl_block_q2_K)                                                                     \
     : (kind) == PL_KQ_q3_K ? sizeof(pl_block_q3_K)                                                                     \
     : (kind) == PL_KQ_q4_K ? sizeof(pl_block_q4_K)                                                                     \
     : (kind) == PL_KQ_q5_K ? sizeof(pl_block_q5_K)                                                                     \
                            : sizeof(pl_block_q6_K))

/* weight row r, activation column c */
#define PL_KQ_ROW(w, ws, r) ((const uint8_t *)(w) + (size_t)(r) * (ws))
#define PL_KQ_COL(a, as, c) ((const pl_block_q8_K *)((const uint8_t *)(a) + (size_t)(c) * (as)))

/* the 3 kernels of a type (PL_KQ_<name>), and the table entries */
#define PL_KQ_WRAPPERS(name)                                                                                           \
    static float PL_SUFFIX(kq_##name##_dot)(int64_t n, const void *w, const void *a) {                                 \
        float r;                                                                                                       \
        PL_SUFFIX(kq_core)(PL_KQ_##name, n, w, 0, a, 0, &r, 0, 1, 1);                                                  \
        return r;                                                                                                      \
    }                                                                                                                  \
    static void PL_SUFFIX(kq_##name##_tile)(int64_t n, const void *w, size_t ws, const void *a, size_t as, float *y,   \
                                            size_t ys) {                                                               \
        PL_SUFFIX(kq_core)(PL_KQ_##name, n, w, 0, a, as, y, ys, 1, PL_KQ_COLS);                                        \
    }                                                                                                                  \
    static void PL_SUFFIX(kq_##name##_rows)(int64_t n, const void *w, size_t ws, const void *a, size_t as, float *y,   \
                                            size_t ys) {                                                               \
        PL_SUFFIX(kq_core)(PL_KQ_##name, n, w, ws, a, 0, y, 0, PL_DOT_ROWS, 1);                                        \
    }

#define PL_KQ_SET(entry, name)                                                                                         \
    do {                                                                                                               \
        (entry).vec_dot = PL_SUFFIX(kq_##name##_dot);                                                                  \
        (entry).vec_dot_tile = PL_SUFFIX(kq_##name##_tile);                                                            \
        (entry).tile_rows = 1;                                                                                         \
        (entry).tile_cols = PL_KQ_COLS;                                                                                \
        (entry).vec_dot_rows = PL_SUFFIX(kq_##name##_rows);                                                            \
        (entry).dot_rows = PL_DOT_ROWS;                                                                                \
    } while (0)

PL_ALWAYS_INLINE float PL_SUFFIX(kq_f16)(const uint8_t *p) {
    uint16_t h;
    memcpy(&h, p, 2);
    return pl_f16_to_f32_neon(h);
}

/* 16 bytes shifted by s bits (s > 0 left, s < 0 right): USHL by a register,
 * so s may vary within the (not always unrolled) sub-block loops */
PL_ALWAYS_INLINE uint8x16_t PL_SUFFIX(kq_shl)(uint8x16_t v, int s) { return vshlq_u8(v, vdupq_n_s8((int8_t)s)); }

/* The end of a block for entry e: acc += (float)sumi * d  (then - (float)summs * dmin) */
PL_ALWAYS_INLINE float32x4_t PL_SUFFIX(kq_add)(float32x4_t acc, int32x4_t sumi, float d) {
    return vfmaq_n_f32(acc, vcvtq_f32_s32(sumi), d);
}

/* acc = fms(fma(acc, (float)sumi, xd * yd), (float)summs, xm * yd): the end of a q2_K / q4_K / q5_K block */
PL_ALWAYS_INLINE float32x4_t PL_SUFFIX(kq_add_min)(float32x4_t acc, int32x4_t sumi, int32x4_t summs, float xd, float xm,
                                                   float yd) {
    acc = PL_SUFFIX(kq_add)(acc, sumi, xd * yd);
    return vfmsq_n_f32(acc, vcvtq_f32_s32(summs), xm * yd);
}

/* the 32 activations at offset off of block i, for the nc columns */
PL_ALWAYS_INLINE void PL_SUFFIX(kq_y32)(const void *a, size_t as, int64_t i, int off, const int nc, int8x16_t *y0,
                                        int8x16_t *y1) {
#pragma GCC unroll 4
    for (int c = 0; c < nc; c++) {
        const int8_t *yq = PL_KQ_COL(a, as, c)[i].qs + off;
        y0[c] = vld1q_s8(yq), y1[c] = vld1q_s8(yq + 16);
    }
}

/* ---- the types' scales ---------------------------------------------------
 * q2_K: 16 x 16 elements, 2-bit values; 4-bit scale (low nibble) and min each.
 * q3_K: 16 x 16 elements, 2 low bits + a high bit (hmask); 6-bit scales.
 * q4_K / q5_K: 8 x 32 elements, 4-bit values (+ bit 4 from qh for q5_K);
 *   6-bit scales and mins.
 * q6_K: 16 x 16 elements, 4 low bits (ql) + 2 high bits (qh), minus 32; int8
 *   scales. */

/* q3_K: the 16 scales (minus the +32 bias) with llama.cpp's 32-bit unpacking */
PL_ALWAYS_INLINE int8x16_t PL_SUFFIX(kq_q3_scales)(const uint8_t *packed) {
    uint32_t aux[3], u[4];
    memcpy(aux, packed, 12);
    u[3] = ((aux[1] >> 4) & 0x0f0f0f0f) | (((aux[2] >> 6) & 0x03030303) << 4);
    u[2] = ((aux[0] >> 4) & 0x0f0f0f0f) | (((aux[2] >> 4) & 0x03030303) << 4);
    u[1] = (aux[1] & 0x0f0f0f0f) | (((aux[2] >> 2) & 0x03030303) << 4);
    u[0] = (aux[0] & 0x0f0f0f0f) | ((aux[2] & 0x03030303) << 4);
    uint8_t b[16];
    memcpy(b, u, 16);
    return vsubq_s8(vreinterpretq_s8_u8(vld1q_u8(b)), vdupq_n_s8(32));
}

/* q4_K / q5_K: scales 0..7 then mins 0..7, llama.cpp's 32-bit unpacking */
PL_ALWAYS_INLINE void PL_SUFFIX(kq_q45_scales_mins)(const uint8_t *packed, uint8_t out[16]) {
    uint32_t u[4];
    pl_k4_scales_mins_words(packed, u);
    memcpy(out, u, 16);
}

/* the unpacked scales of weight block x: q2_K 0..15, q3_K the int8 bytes of
 * -32..31, q4_K / q5_K kq_q45_scales_mins; q6_K reads its int8 scales from
 * the block (kq_scale16) */
PL_ALWAYS_INLINE void PL_SUFFIX(kq_scales)(const int kind, const uint8_t *x, uint8_t sc[16]) {
    if (kind == PL_KQ_q2_K)
        vst1q_u8(sc, vandq_u8(vld1q_u8(((const pl_block_q2_K *)x)->scales), vdupq_n_u8(0x0f)));
    else if (kind == PL_KQ_q3_K)
        vst1q_u8(sc, vreinterpretq_u8_s8(PL_SUFFIX(kq_q3_scales)(((const pl_block_q3_K *)x)->scales)));
    else if (kind == PL_KQ_q4_K)
        PL_SUFFIX(kq_q45_scales_mins)(x + offsetof(pl_block_q4_K, scales), sc);
    else if (kind == PL_KQ_q5_K)
        PL_SUFFIX(kq_q45_scales_mins)(x + offsetof(pl_block_q5_K, scales), sc);
}

/* the scale of 16-element sub-block k (q2_K, q3_K, q6_K) */
PL_ALWAYS_INLINE int PL_SUFFIX(kq_scale16)(const int kind, const uint8_t *x, const uint8_t *sc, int k) {
    if (kind == PL_KQ_q6_K) return ((const pl_block_q6_K *)x)->scales[k];
    return kind == PL_KQ_q3_K ? (int8_t)sc[k] : sc[k];
}

/* ---- the types' weights: elements 128h + 32j .. + 31 (q2_K, q3_K, q6_K) -- */

/* the 2-bit values of q2_K / q3_K: bits 2j..2j+1 of qs[32h + l] */
PL_ALWAYS_INLINE void PL_SUFFIX(kq_2bits)(const uint8_t *qs, int h, int j, uint8x16_t *lo0, uint8x16_t *lo1) {
    const uint8x16_t m3 = vdupq_n_u8(3);
    *lo0 = vandq_u8(PL_SUFFIX(kq_shl)(vld1q_u8(qs + 32 * h), -2 * j), m3);
    *lo1 = vandq_u8(PL_SUFFIX(kq_shl)(vld1q_u8(qs + 32 * h + 16), -2 * j), m3);
}

PL_ALWAYS_INLINE void PL_SUFFIX(kq_weights16)(const int kind, const uint8_t *xb, int h, int j, int8x16_t *v0,
                                              int8x16_t *v1) {
    uint8x16_t lo0, lo1;
    if (kind == PL_KQ_q2_K) {
        PL_SUFFIX(kq_2bits)(((const pl_block_q2_K *)xb)->qs, h, j, &lo0, &lo1);
        *v0 = vreinterpretq_s8_u8(lo0), *v1 = vreinterpretq_s8_u8(lo1);
    } else if (kind == PL_KQ_q3_K) {
        const pl_block_q3_K *x = (const pl_block_q3_K *)xb;
        const uint8x16_t four = vdupq_n_u8(4);
        const int m = 4 * h + j; /* the hmask bit of these 32 elements */
        /* q - 4 where the high bit is clear: (bit m of ~hmask) << 2 */
        PL_SUFFIX(kq_2bits)(x->qs, h, j, &lo0, &lo1);
        const uint8x16_t n0 = vandq_u8(PL_SUFFIX(kq_shl)(vmvnq_u8(vld1q_u8(x->hmask)), 2 - m), four);
        const uint8x16_t n1 = vandq_u8(PL_SUFFIX(kq_shl)(vmvnq_u8(vld1q_u8(x->hmask + 16)), 2 - m), four);
        *v0 = vsubq_s8(vreinterpretq_s8_u8(lo0), vreinterpretq_s8_u8(n0));
        *v1 = vsubq_s8(vreinterpretq_s8_u8(lo1), vreinterpretq_s8_u8(n1));
    } else { /* q6_K: low bits in ql[64h + 32(j&1) + l] (low nibble for j < 2), high bits 2j..2j+1 of qh[32h + l] */
        const pl_block_q6_K *x = (const pl_block_q6_K *)xb;
        const uint8x16_t m4 = vdupq_n_u8(0x0f), m30 = vdupq_n_u8(0x30);
        const int8x16_t off = vdupq_n_s8(32);
        const uint8_t *ql = x->ql + 64 * h + 32 * (j & 1), *qh = x->qh + 32 * h;
        const int ls = j < 2 ? 0 : -4;
        const uint8x16_t l0 = vandq_u8(PL_SUFFIX(kq_shl)(vld1q_u8(ql), ls), m4);
        const uint8x16_t l1 = vandq_u8(PL_SUFFIX(kq_shl)(vld1q_u8(ql + 16), ls), m4);
        const uint8x16_t h0 = vandq_u8(PL_SUFFIX(kq_shl)(vld1q_u8(qh), 4 - 2 * j), m30);
        const uint8x16_t h1 = vandq_u8(PL_SUFFIX(kq_shl)(vld1q_u8(qh + 16), 4 - 2 * j), m30);
        *v0 = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(l0, h0)), off);
        *v1 = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(l1, h1)), off);
    }
}

/* ---- the scaled int8 products of block i, rows g .. g + PL_KQ_RG(nr) - 1:
 * sumi[r * nc + c] += sub-block product * its scale (int32 MLA) --------- */

/* q2_K, q3_K, q6_K: 2 sub-blocks of 16 (32 elements) a step */
PL_ALWAYS_INLINE void PL_SUFFIX(kq_sums16)(const int kind, const uint8_t *const *x, uint8_t (*sc)[16], const void *a,
                                           size_t as, int64_t i, int g, const int nr, const int nc, int32x4_t *sumi) {
    for (int t = 0; t < 8; t++) { /* a loop (not unrolled for the rows kernel: registers) */
        const int h = t / 4, j = t % 4;
        int8x16_t y0[PL_KQ_COLS], y1[PL_KQ_COLS];
        PL_SUFFIX(kq_y32)(a, as, i, 128 * h + 32 * j, nc, y0, y1);
#pragma GCC unroll 4
        for (int r = g; r < g + PL_KQ_RG(nr); r++) {
            int8x16_t v0, v1;
            PL_SUFFIX(kq_weights16)(kind, x[r], h, j, &v0, &v1);
            const int s0 = PL_SUFFIX(kq_scale16)(kind, x[r], sc[r], 8 * h + 2 * j);
            const int s1 = PL_SUFFIX(kq_scale16)(kind, x[r], sc[r], 8 * h + 2 * j + 1);
#pragma GCC unroll 4
            for (int c = 0; c < nc; c++) {
                int32x4_t *s = &sumi[r * nc + c];
                *s = vmlaq_n_s32(*s, pl_dot_s8(vdupq_n_s32(0), v0, y0[c]), s0);
                *s = vmlaq_n_s32(*s, pl_dot_s8(vdupq_n_s32(0), v1, y1[c]), s1);
            }
        }
    }
}

/* q4_K / q5_K: sub-blocks 2k (low nibbles, y 64k..64k+31) and 2k+1 (high) a
 * step; q5_K: bit t of qh[l] is bit 4 of element l of sub-block t */
PL_ALWAYS_INLINE void PL_SUFFIX(kq_sums_q45)(const int kind, const uint8_t *const *x, uint8_t (*sc)[16], const void *a,
                                             size_t as, int64_t i, int g, const int nr, const int nc, int32x4_t *sumi) {
    const uint8x16_t m4 = vdupq_n_u8(0x0f), b4 = vdupq_n_u8(0x10);
    const size_t qs_off = kind == PL_KQ_q5_K ? offsetof(pl_block_q5_K, qs) : offsetof(pl_block_q4_K, qs);
    for (int k = 0; k < 4; k++) { /* a loop (not unrolled for the rows kernel: registers) */
        int8x16_t y0[PL_KQ_COLS], y1[PL_KQ_COLS], y2[PL_KQ_COLS], y3[PL_KQ_COLS];
        PL_SUFFIX(kq_y32)(a, as, i, 64 * k, nc, y0, y1);
        PL_SUFFIX(kq_y32)(a, as, i, 64 * k + 32, nc, y2, y3);
#pragma GCC unroll 4
        for (int r = g; r < g + PL_KQ_RG(nr); r++) {
            const uint8x16_t q0 = vld1q_u8(x[r] + qs_off + 32 * k), q1 = vld1q_u8(x[r] + qs_off + 32 * k + 16);
            uint8x16_t lo0 = vandq_u8(q0, m4), lo1 = vandq_u8(q1, m4), hi0 = vshrq_n_u8(q0, 4), hi1 = vshrq_n_u8(q1, 4);
            if (kind == PL_KQ_q5_K) {
                const uint8_t *qh = ((const pl_block_q5_K *)x[r])->qh;
                const uint8x16_t h0 = vld1q_u8(qh), h1 = vld1q_u8(qh + 16);
                lo0 = vorrq_u8(lo0, vandq_u8(PL_SUFFIX(kq_shl)(h0, 4 - 2 * k), b4));
                lo1 = vorrq_u8(lo1, vandq_u8(PL_SUFFIX(kq_shl)(h1, 4 - 2 * k), b4));
                hi0 = vorrq_u8(hi0, vandq_u8(PL_SUFFIX(kq_shl)(h0, 3 - 2 * k), b4));
                hi1 = vorrq_u8(hi1, vandq_u8(PL_SUFFIX(kq_shl)(h1, 3 - 2 * k), b4));
            }
            const int slo = sc[r][2 * k], shi = sc[r][2 * k + 1];
#pragma GCC unroll 4
            for (int c = 0; c < nc; c++) {
                const int32x4_t plo = pl_dot_s8(pl_dot_s8(vdupq_n_s32(0), vreinterpretq_s8_u8(lo0), y0[c]),
                                                vreinterpretq_s8_u8(lo1), y1[c]);
                const int32x4_t phi = pl_dot_s8(pl_dot_s8(vdupq_n_s32(0), vreinterpretq_s8_u8(hi0), y2[c]),
                                                vreinterpretq_s8_u8(hi1), y3[c]);
                int32x4_t *s = &sumi[r * nc + c];
                *s = vmlaq_n_s32(*s, plo, slo);
                *s = vmlaq_n_s32(*s, phi, shi);
            }
        }
    }
}

/* ---- the end of block i for the nc entries of one row (acc, sumi: the
 * row's first entry): the float combination at the top of the file ----- */
PL_ALWAYS_INLINE void PL_SUFFIX(kq_end)(const int kind, const uint8_t *xb, const uint8_t *sc, const void *a, size_t as,
                                        int64_t i, const int nc, float32x4_t *acc, const int32x4_t *sumi) {
    if (kind == PL_KQ_q3_K || kind == PL_KQ_q6_K) {
        const float xd = pl_f16_to_f32_neon(kind == PL_KQ_q3_K ? ((const pl_block_q3_K *)xb)->d
                                                               : ((const pl_block_q6_K *)xb)->d);
#pragma GCC unroll 4
        for (int c = 0; c < nc; c++) acc[c] = PL_SUFFIX(kq_add)(acc[c], sumi[c], xd * PL_KQ_COL(a, as, c)[i].d);
    } else if (kind == PL_KQ_q2_K) { /* min j (high nibble of scales[j]) against bsums[j] */
        const pl_block_q2_K *x = (const pl_block_q2_K *)xb;
        const uint8x16_t mn = vshrq_n_u8(vld1q_u8(x->scales), 4);
        const int16x8_t mlo = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(mn)));
        const int16x8_t mhi = vreinterpretq_s16_u16(vmovl_high_u8(mn));
        const float xd = pl_f16_to_f32_neon(x->d), xm = pl_f16_to_f32_neon(x->dmin);
#pragma GCC unroll 4
        for (int c = 0; c < nc; c++) {
            const pl_block_q8_K *y = PL_KQ_COL(a, as, c) + i;
            const int16x8_t b0 = vld1q_s16(y->bsums), b1 = vld1q_s16(y->bsums + 8);
            int32x4_t summs = vmull_s16(vget_low_s16(b0), vget_low_s16(mlo));
            summs = vmlal_high_s16(summs, b0, mlo);
            summs = vmlal_s16(summs, vget_low_s16(b1), vget_low_s16(mhi));
            summs = vmlal_high_s16(summs, b1, mhi);
            acc[c] = PL_SUFFIX(kq_add_min)(acc[c], sumi[c], summs, xd, xm, y->d);
        }
    } else { /* q4_K, q5_K (d, dmin: their first two f16): min j against bsums[2j] + bsums[2j+1] (|.| <= 4096) */
        const int16x8_t mins = vreinterpretq_s16_u16(vmovl_u8(vld1_u8(sc + 8)));
        const float xd = PL_SUFFIX(kq_f16)(xb), xm = PL_SUFFIX(kq_f16)(xb + 2);
#pragma GCC unroll 4
        for (int c = 0; c < nc; c++) {
            const pl_block_q8_K *y = PL_KQ_COL(a, as, c) + i;
            const int16x8_t bs = vpaddq_s16(vld1q_s16(y->bsums), vld1q_s16(y->bsums + 8));
            const int32x4_t summs = vmlal_high_s16(vmull_s16(vget_low_s16(bs), vget_low_s16(mins)), bs, mins);
            acc[c] = PL_SUFFIX(kq_add_min)(acc[c], sumi[c], summs, xd, xm, y->d);
        }
    }
}

/* ---- the core: nr rows x nc columns of one type ------------------------- */
PL_ALWAYS_INLINE void PL_SUFFIX(kq_core)(const int kind, int64_t n, const void *w, size_t ws, const void *a, size_t as,
                                         float *out, size_t os, const int nr, const int nc) {
    float32x4_t acc[PL_KQ_MAXE];
    for (int e = 0; e < nr * nc; e++) acc[e] = vdupq_n_f32(0);
    for (int64_t i = 0; i < n / 256; i++) {
#pragma GCC unroll 2
        for (int g = 0; g < nr; g += PL_KQ_RG(nr)) { /* rows g .. g + PL_KQ_RG(nr) - 1 */
            const uint8_t *x[PL_DOT_ROWS]; /* block i of row r */
            uint8_t sc[PL_DOT_ROWS][16];   /* its kq_scales */
            int32x4_t sumi[PL_KQ_MAXE];
#pragma GCC unroll 4
            for (int r = g; r < g + PL_KQ_RG(nr); r++) {
                x[r] = PL_KQ_ROW(w, ws, r) + (size_t)i * PL_KQ_BYTES(kind);
                PL_SUFFIX(kq_scales)(kind, x[r], sc[r]);
            }
            for (int e = g * nc; e < (g + PL_KQ_RG(nr)) * nc; e++) sumi[e] = vdupq_n_s32(0);
            if (kind == PL_KQ_q4_K || kind == PL_KQ_q5_K)
                PL_SUFFIX(kq_sums_q45)(kind, x, sc, a, as, i, g, nr, nc, sumi);
            else
                PL_SUFFIX(kq_sums16)(kind, x, sc, a, as, i, g, nr, nc, sumi);
#pragma GCC unroll 4
            for (int r = g; r < g + PL_KQ_RG(nr); r++)
                PL_SUFFIX(kq_end)(kind, x[r], sc[r], a, as, i, nc, &acc[r * nc], &sumi[r * nc]);
        }
    }
    for (int r = 0; r < nr; r++)
        for (int c = 0; c < nc; c++) out[(size_t)c * os + (size_t)r] = vaddvq_f32(acc[r * nc + c]);
}
PL_KQ_WRAPPERS(q2_K)
PL_KQ_WRAPPERS(q3_K)
PL_KQ_WRAPPERS(q4_K)
PL_KQ_WRAPPERS(q5_K)
PL_KQ_WRAPPERS(q6_K)

/* ---- iq4_xs: 8 x 32 elements, 4-bit indices into the iq4_nl table; 6-bit
 * scales (minus 32).  vec_dot only. ---------------------------------------- */

static float PL_SUFFIX(kq_iq4_xs_dot)(int64_t n, const void *w, const void *a) {
    const pl_block_iq4_xs *x = w;
    const pl_block_q8_K *y = a;
    const int8x16_t table = vld1q_s8(pl_kvalues_iq4nl);
    const uint8x16_t m4 = vdupq_n_u8(0x0f);
    float32x4_t acc = vdupq_n_f32(0);
    for (int64_t i = 0; i < n / 256; i++) {
        int32x4_t sumi = vdupq_n_s32(0);
        uint16_t sh;
        memcpy(&sh, &x[i].scales_h, 2);
        for (int ib = 0; ib < 8; ib++) {
            const uint8x16_t q = vld1q_u8(x[i].qs + 16 * ib);
            const int8x16_t lo = vqtbl1q_s8(table, vandq_u8(q, m4)), hi = vqtbl1q_s8(table, vshrq_n_u8(q, 4));
            const int8_t *yq = y[i].qs + 32 * ib;
            const int32x4_t p = pl_dot_s8(pl_dot_s8(vdupq_n_s32(0), lo, vld1q_s8(yq)), hi, vld1q_s8(yq + 16));
            const int ls = ((x[i].scales_l[ib / 2] >> (4 * (ib % 2))) & 0xf) | (((sh >> (2 * ib)) & 3) << 4);
            sumi = vmlaq_n_s32(sumi, p, ls - 32);
        }
        uint16_t dh;
        memcpy(&dh, &x[i].d, 2);
        acc = PL_SUFFIX(kq_add)(acc, sumi, pl_f16_to_f32_neon(dh) * y[i].d);
    }
    return vaddvq_f32(acc);
}

static void PL_SUFFIX(fill_kquants)(pl_quant_kernel_set *t) {
    PL_KQ_SET(t[PL_TYPE_Q2_K], q2_K);
    PL_KQ_SET(t[PL_TYPE_Q3_K], q3_K);
    PL_KQ_SET(t[PL_TYPE_Q4_K], q4_K);
    PL_KQ_SET(t[PL_TYPE_Q5_K], q5_K);
    PL_KQ_SET(t[PL_TYPE_Q6_K], q6_K);
    t[PL_TYPE_IQ4_XS].vec_dot = PL_SUFFIX(kq_iq4_xs_dot);
}
