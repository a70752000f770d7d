/*
 * dots_x86.h -- the 256-bit integer dot-product kernels of the quant types,
 * written once and compiled twice: by kernels_avx2.c with AVX2's
 * maddubs+madd, and by kernels_avx512.c with AVX-512 VNNI's vpdpbusd /
 * vpdpwssd.  The including file defines
 *   PL_DPBUSD(acc, u, s)   acc + sum of 4 (u8 x s8) products per int32 lane
 *   PL_DPWSSD(acc, a, b)   acc + sum of 2 (s16 x s16) products per lane
 *   PL_SUFFIX(name)        the tier-specific function name
 * Every use keeps u8 <= 128 and |s8| <= 127, so maddubs never saturates and
 * both tiers compute the same integers, hence the same floats.
 *
 * Per block the integer sums stay in 8 int32 lanes, become floats and are
 * scaled into 8 float accumulators (one scale multiply per block); the
 * lanes are added up at the end.  Integer results equal the reference's
 * exactly; only the float summation order differs from it.
 */
#include <math.h>
#include <string.h>

#include "quant/blocks.h"
#include "quant/iq_tables.h"
#include "quant/kquant_scales.h"
#include "quant/quant_util.h"
#include "quant/ref.h"
#include "quant/simd_x86.h"

static inline __m256i PL_SUFFIX(load_y)(const int8_t *p) { return _mm256_loadu_si256((const __m256i *)p); }

/* 16 bytes of nibbles -> 32 bytes: low nibbles then high nibbles. */
static inline __m256i PL_SUFFIX(nibbles32)(const uint8_t *p) {
    const __m128i v = _mm_loadu_si128((const __m128i *)p);
    const __m256i both = _mm256_inserti128_si256(_mm256_castsi128_si256(v), _mm_srli_epi16(v, 4), 1);
    return _mm256_and_si256(both, _mm256_set1_epi8(0x0f));
}

/* 32 bits -> 32 bytes, 0xff where the bit is set (byte i <- bit i). */
static inline __m256i PL_SUFFIX(bits32)(uint32_t bits) {
    const __m256i shuf = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3,
                                          3, 3, 3, 3, 3);
    __m256i b = _mm256_shuffle_epi8(_mm256_set1_epi32((int32_t)bits), shuf);
    const __m256i sel = _mm256_set1_epi64x(0x8040201008040201ll);
    return _mm256_cmpeq_epi8(_mm256_and_si256(b, sel), sel);
}

/* x.y for signed x (|x| <= 127) through |x| and y with x's sign. */
static inline __m256i PL_SUFFIX(dot_signed)(__m256i acc, __m256i x, __m256i y) {
    return PL_DPBUSD(acc, _mm256_sign_epi8(x, x), _mm256_sign_epi8(y, x));
}

/* ---- 32-element blocks ----------------------------------------------- */

static float PL_SUFFIX(dot_q4_0)(int64_t n, const void *w, const void *a) {
    const pl_block_q4_0 *x = w;
    const pl_block_q8_0 *y = a;
    const __m256i eight = _mm256_set1_epi8(8);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / 32; i++) {
        const __m256i yv = PL_SUFFIX(load_y)(y[i].qs);
        __m256i s = PL_DPBUSD(_mm256_setzero_si256(), PL_SUFFIX(nibbles32)(x[i].qs), yv);
        s = _mm256_sub_epi32(s, PL_DPBUSD(_mm256_setzero_si256(), eight, yv)); /* (q - 8) . y */
        const __m256 d = _mm256_set1_ps(pl_f16_load(x[i].d) * pl_f16_load(y[i].d));
        acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(s), acc);
    }
    return pl_hsum_ps256(acc);
}

static float PL_SUFFIX(dot_q4_1)(int64_t n, const void *w, const void *a) {
    const pl_block_q4_1 *x = w;
    const pl_block_q8_1 *y = a;
    __m256 acc = _mm256_setzero_ps();
    float summs = 0;
    for (int64_t i = 0; i < n / 32; i++) {
        const __m256i s = PL_DPBUSD(_mm256_setzero_si256(), PL_SUFFIX(nibbles32)(x[i].qs), PL_SUFFIX(load_y)(y[i].qs));
        const __m256 d = _mm256_set1_ps(pl_f16_load(x[i].d) * pl_f16_load(y[i].d));
        acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(s), acc);
        summs += pl_f16_load(x[i].m) * pl_f16_load(y[i].s);
    }
    return pl_hsum_ps256(acc) + summs;
}

/* 5-bit values: nibbles plus bit 4 from qh */
static inline __m256i PL_SUFFIX(q5_values)(const uint8_t *qs, const uint8_t *qh4) {
    uint32_t qh;
    memcpy(&qh, qh4, 4);
    const __m256i hi = _mm256_and_si256(PL_SUFFIX(bits32)(qh), _mm256_set1_epi8(0x10));
    return _mm256_or_si256(PL_SUFFIX(nibbles32)(qs), hi);
}

static float PL_SUFFIX(dot_q5_0)(int64_t n, const void *w, const void *a) {
    const pl_block_q5_0 *x = w;
    const pl_block_q8_0 *y = a;
    const __m256i sixteen = _mm256_set1_epi8(16);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / 32; i++) {
        const __m256i yv = PL_SUFFIX(load_y)(y[i].qs);
        __m256i s = PL_DPBUSD(_mm256_setzero_si256(), PL_SUFFIX(q5_values)(x[i].qs, x[i].qh), yv);
        s = _mm256_sub_epi32(s, PL_DPBUSD(_mm256_setzero_si256(), sixteen, yv));
        const __m256 d = _mm256_set1_ps(pl_f16_load(x[i].d) * pl_f16_load(y[i].d));
        acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(s), acc);
    }
    return pl_hsum_ps256(acc);
}

static float PL_SUFFIX(dot_q5_1)(int64_t n, const void *w, const void *a) {
    const pl_block_q5_1 *x = w;
    const pl_block_q8_1 *y = a;
    __m256 acc = _mm256_setzero_ps();
    float summs = 0;
    for (int64_t i = 0; i < n / 32; i++) {
        const __m256i s = PL_DPBUSD(_mm256_setzero_si256(), PL_SUFFIX(q5_values)(x[i].qs, x[i].qh), PL_SUFFIX(load_y)(y[i].qs));
        const __m256 d = _mm256_set1_ps(pl_f16_load(x[i].d) * pl_f16_load(y[i].d));
        acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(s), acc);
        summs += pl_f16_load(x[i].m) * pl_f16_load(y[i].s);
    }
    return pl_hsum_ps256(acc) + summs;
}

/* 16-entry signed table lookup of 32 nibbles */
static inline __m256i PL_SUFFIX(lookup32)(const uint8_t *qs, __m256i table) {
    return _mm256_shuffle_epi8(table, PL_SUFFIX(nibbles32)(qs));
}

static float PL_SUFFIX(dot_iq4_nl)(int64_t n, const void *w, const void *a) {
    const pl_block_iq4_nl *x = w;
    const pl_block_q8_0 *y = a;
    const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)pl_kvalues_iq4nl));
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / 32; i++) {
        const __m256i s = PL_SUFFIX(dot_signed)(_mm256_setzero_si256(), PL_SUFFIX(lookup32)(x[i].qs, table),
                                                PL_SUFFIX(load_y)(y[i].qs));
        const __m256 d = _mm256_set1_ps(pl_f16_load(y[i].d) * pl_f16_load(x[i].d));
        acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(s), acc);
    }
    return pl_hsum_ps256(acc);
}

static float PL_SUFFIX(dot_mxfp4)(int64_t n, const void *w, const void *a) {
    const pl_block_mxfp4 *x = w;
    const pl_block_q8_0 *y = a;
    const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)pl_kvalues_mxfp4));
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / 32; i++) {
        const __m256i s = PL_SUFFIX(dot_signed)(_mm256_setzero_si256(), PL_SUFFIX(lookup32)(x[i].qs, table),
                                                PL_SUFFIX(load_y)(y[i].qs));
        const __m256 d = _mm256_set1_ps(pl_f16_load(y[i].d) * pl_q_e8m0_half(x[i].e));
        acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(s), acc);
    }
    return pl_hsum_ps256(acc);
}

/* ---- k-quants --------------------------------------------------------- */

/* Broadcast int16 word j of a 128-bit vector to all 16 words. */
static inline __m256i PL_SUFFIX(word_bcast)(__m128i v, int j) {
    const __m128i ctl = _mm_set1_epi16((short)(0x0100 + 0x0202 * j));
    return _mm256_broadcastsi128_si256(_mm_shuffle_epi8(v, ctl));
}

/* int16 vector: sign-extended byte k of v in the low 8 words, byte k+1 in
 * the high 8 (the two 16-element sub-blocks of a 32-byte chunk). */
static inline __m256i PL_SUFFIX(byte_pair16)(__m128i v, int k) {
    const __m128i ctl = _mm_unpacklo_epi64(_mm_set1_epi8((char)k), _mm_set1_epi8((char)(k + 1)));
    return _mm256_cvtepi8_epi16(_mm_shuffle_epi8(v, ctl));
}

/* sum over bsums pairs: 8 int16 of bsums[2k] + bsums[2k+1] */
static inline __m128i PL_SUFFIX(bsums_pairs)(const int16_t *bsums) {
    const __m256i b = _mm256_loadu_si256((const __m256i *)bsums);
    return _mm_hadd_epi16(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1));
}

/* int16 vector: a in the low 128 bits, b in the high */
static inline __m256i PL_SUFFIX(pair16)(int a, int b) {
    return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_set1_epi16((short)a)), _mm_set1_epi16((short)b), 1);
}

/* sum over the 16 bsums of bsums[j] * m16[j] */
static inline int32_t PL_SUFFIX(bsums_dot)(const int16_t *bsums, __m256i m16) {
    return pl_hsum_epi32_256(_mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)bsums), m16));
}

/* The k-quant kernels below are written once for `nc` activation columns
 * (always inlined with a constant nc): vec_dot is nc = 1, the tile kernel
 * nc = PL_TILE_COLS against one weight row.  Each column keeps its own
 * accumulators and sees exactly the operations vec_dot performs, so the
 * tile's results are vec_dot's bit for bit; only the weight loads and
 * unpacking are shared. */
#ifndef PL_TILE_COLS
#define PL_TILE_COLS 4
#endif
#define PL_ALWAYS_INLINE static inline __attribute__((always_inline))

/* activation column c of a tile */
#define PL_COL(a, as, c) ((const pl_block_q8_K *)((const uint8_t *)(a) + (size_t)(c) * (as)))

/* The end of one 256-block for every column: acc[c] += (block scale x
 * column c's scale) * sumi[c] (q3_K and q6_K, which have no mins). */
PL_ALWAYS_INLINE void PL_SUFFIX(kq_block_add)(__m256 *acc, const __m256i *sumi, float xd, const void *a, size_t as,
                                              int64_t i, const int nc) {
    for (int c = 0; c < nc; c++) {
        const float d = xd * PL_COL(a, as, c)[i].d;
        acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi[c]), acc[c]);
    }
}

/* vec_dot and the 1 x PL_TILE_COLS tile kernel from one core */
#define PL_DOT_AND_TILE(name, core)                                                                                      \
    static float PL_SUFFIX(name)(int64_t n, const void *w, const void *a) {                                              \
        float r;                                                                                                         \
        core(n, w, a, 0, &r, 0, 1);                                                                                      \
        return r;                                                                                                        \
    }                                                                                                                    \
    static void PL_SUFFIX(name##_tile)(int64_t n, const void *w, size_t ws, const void *a, size_t as, float *y,          \
                                       size_t ys) {                                                                      \
        core(n, w, a, as, y, ys, PL_TILE_COLS);                                                                          \
    }                                                                                                                    \
    static void PL_SUFFIX(name##_cols2)(int64_t n, const void *w, size_t ws, const void *a, size_t as, float *y,         \
                                        size_t ys) {                                                                     \
        core(n, w, a, as, y, ys, 2);                                                                                     \
    }                                                                                                                    \
    static void PL_SUFFIX(name##_cols3)(int64_t n, const void *w, size_t ws, const void *a, size_t as, float *y,         \
                                        size_t ys) {                                                                     \
        core(n, w, a, as, y, ys, 3);                                                                                     \
    }

PL_ALWAYS_INLINE void PL_SUFFIX(q2_K_cols)(int64_t n, const void *w, const void *a, size_t as, float *out, size_t os,
                                           const int nc) {
    const pl_block_q2_K *x = w;
    const __m256i m3 = _mm256_set1_epi8(3);
    const __m128i m4 = _mm_set1_epi8(0x0f);
    __m256 acc[PL_TILE_COLS], acc_m[PL_TILE_COLS];
    for (int c = 0; c < nc; c++) acc[c] = _mm256_setzero_ps(), acc_m[c] = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / 256; i++) {
        const __m128i sc8 = _mm_loadu_si128((const __m128i *)x[i].scales);
        const __m128i scales = _mm_and_si128(sc8, m4);
        const __m256i mins16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sc8, 4), m4));
        __m256i sumi[PL_TILE_COLS];
        for (int c = 0; c < nc; c++) sumi[c] = _mm256_setzero_si256();
        for (int h = 0; h < 2; h++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *)(x[i].qs + 32 * h));
            for (int j = 0; j < 4; j++) {
                const __m256i u = _mm256_and_si256(_mm256_srli_epi16(q, 2 * j), m3);
                const __m256i sc = PL_SUFFIX(byte_pair16)(scales, 8 * h + 2 * j);
                for (int c = 0; c < nc; c++) {
                    const __m256i p16 = _mm256_maddubs_epi16(u, PL_SUFFIX(load_y)(PL_COL(a, as, c)[i].qs + 128 * h + 32 * j));
                    sumi[c] = PL_DPWSSD(sumi[c], p16, sc);
                }
            }
        }
        const float xd = pl_f16_load(x[i].d), xm = pl_f16_load(x[i].dmin);
        for (int c = 0; c < nc; c++) {
            const pl_block_q8_K *y = PL_COL(a, as, c);
            const __m256i summs = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)y[i].bsums), mins16);
            const float dall = y[i].d * xd, dmin = y[i].d * xm;
            acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(dall), _mm256_cvtepi32_ps(sumi[c]), acc[c]);
            acc_m[c] = _mm256_fmadd_ps(_mm256_set1_ps(dmin), _mm256_cvtepi32_ps(summs), acc_m[c]);
        }
    }
    for (int c = 0; c < nc; c++) out[(size_t)c * os] = pl_hsum_ps256(_mm256_sub_ps(acc[c], acc_m[c]));
}
PL_DOT_AND_TILE(dot_q2_K, PL_SUFFIX(q2_K_cols))

/* q3_K's 16 scales minus 32, as signed bytes (llama.cpp's 32-bit unpacking) */
static inline __m128i PL_SUFFIX(q3k_scales)(const uint8_t *packed) {
    uint32_t a0, a1, tmp;
    memcpy(&a0, packed, 4);
    memcpy(&a1, packed + 4, 4);
    memcpy(&tmp, packed + 8, 4);
    const uint32_t s2 = ((a0 >> 4) & 0x0f0f0f0f) | (((tmp >> 4) & 0x03030303) << 4);
    const uint32_t s3 = ((a1 >> 4) & 0x0f0f0f0f) | (((tmp >> 6) & 0x03030303) << 4);
    const uint32_t s0 = (a0 & 0x0f0f0f0f) | (((tmp >> 0) & 0x03030303) << 4);
    const uint32_t s1 = (a1 & 0x0f0f0f0f) | (((tmp >> 2) & 0x03030303) << 4);
    /* built in registers: a store and a wider reload would stall forwarding */
    return _mm_sub_epi8(_mm_set_epi32((int)s3, (int)s2, (int)s1, (int)s0), _mm_set1_epi8(32));
}

PL_ALWAYS_INLINE void PL_SUFFIX(q3_K_cols)(int64_t n, const void *w, const void *a, size_t as, float *out, size_t os,
                                           const int nc) {
    const pl_block_q3_K *x = w;
    const __m256i m3 = _mm256_set1_epi8(3), one = _mm256_set1_epi8(1);
    __m256 acc[PL_TILE_COLS];
    for (int c = 0; c < nc; c++) acc[c] = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / 256; i++) {
        const __m128i sc = PL_SUFFIX(q3k_scales)(x[i].scales);
        const __m256i hm = _mm256_loadu_si256((const __m256i *)x[i].hmask);
        __m256i sumi[PL_TILE_COLS];
        for (int c = 0; c < nc; c++) sumi[c] = _mm256_setzero_si256();
        for (int h = 0; h < 2; h++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *)(x[i].qs + 32 * h));
            for (int j = 0; j < 4; j++) {
                const int bit = 4 * h + j;
                const __m256i u = _mm256_and_si256(_mm256_srli_epi16(q, 2 * j), m3);
                /* 4 where the high bit is clear: value = u - 4*(1 - hbit) */
                const __m256i hb = _mm256_and_si256(_mm256_srli_epi16(hm, bit), one);
                const __m256i minus4 = _mm256_slli_epi16(_mm256_xor_si256(hb, one), 2);
                const __m256i s16 = PL_SUFFIX(byte_pair16)(sc, 8 * h + 2 * j);
                for (int c = 0; c < nc; c++) {
                    const __m256i yv = PL_SUFFIX(load_y)(PL_COL(a, as, c)[i].qs + 128 * h + 32 * j);
                    const __m256i p16 = _mm256_sub_epi16(_mm256_maddubs_epi16(u, yv), _mm256_maddubs_epi16(minus4, yv));
                    sumi[c] = PL_DPWSSD(sumi[c], p16, s16);
                }
            }
        }
        PL_SUFFIX(kq_block_add)(acc, sumi, pl_f16_load(x[i].d), a, as, i, nc);
    }
    for (int c = 0; c < nc; c++) out[(size_t)c * os] = pl_hsum_ps256(acc[c]);
}
PL_DOT_AND_TILE(dot_q3_K, PL_SUFFIX(q3_K_cols))

/* q4_K and q5_K: 8 sub-blocks of 32 with 6-bit scales and mins; q5_K adds
 * bit 4 from qh (bit j of qh[l] for sub-block j).  The scales and mins are
 * unpacked with llama.cpp's 32-bit trick into 8 + 8 words (scales 0-7,
 * mins 8-15). */
static inline __m256i PL_SUFFIX(q45k_scales_mins)(const uint8_t *packed) {
    uint32_t u[4];
    pl_k4_scales_mins_words(packed, u);
    return _mm256_cvtepu8_epi16(_mm_set_epi32((int)u[3], (int)u[2], (int)u[1], (int)u[0]));
}

PL_ALWAYS_INLINE void PL_SUFFIX(q45_K_cols)(int64_t n, const uint8_t *blocks, size_t bytes, int qs_off, int qh_off,
                                            const void *a, size_t as, float *out, size_t os, const int nc) {
    const __m256i m4 = _mm256_set1_epi8(0x0f), b4 = _mm256_set1_epi8(0x10);
    __m256 acc[PL_TILE_COLS];
    __m128 acc_m[PL_TILE_COLS];
    for (int c = 0; c < nc; c++) acc[c] = _mm256_setzero_ps(), acc_m[c] = _mm_setzero_ps();
    for (int64_t i = 0; i < n / 256; i++) {
        const uint8_t *blk = blocks + (size_t)i * bytes;
        const __m256i sm = PL_SUFFIX(q45k_scales_mins)(blk + 4);
        const __m128i scales = _mm256_castsi256_si128(sm), mins = _mm256_extracti128_si256(sm, 1);
        const __m256i hbits = qh_off ? _mm256_loadu_si256((const __m256i *)(blk + qh_off)) : _mm256_setzero_si256();
        __m256i sumi[PL_TILE_COLS];
        for (int c = 0; c < nc; c++) sumi[c] = _mm256_setzero_si256();
        for (int k = 0; k < 4; k++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *)(blk + qs_off + 32 * k));
            __m256i lo = _mm256_and_si256(q, m4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
            if (qh_off) {
                lo = _mm256_or_si256(lo, _mm256_and_si256(_mm256_slli_epi16(_mm256_srli_epi16(hbits, 2 * k), 4), b4));
                hi = _mm256_or_si256(hi, _mm256_and_si256(_mm256_slli_epi16(_mm256_srli_epi16(hbits, 2 * k + 1), 4), b4));
            }
            const __m256i slo = PL_SUFFIX(word_bcast)(scales, 2 * k), shi = PL_SUFFIX(word_bcast)(scales, 2 * k + 1);
            for (int c = 0; c < nc; c++) {
                const pl_block_q8_K *y = PL_COL(a, as, c);
                const __m256i plo = _mm256_maddubs_epi16(lo, PL_SUFFIX(load_y)(y[i].qs + 64 * k));
                const __m256i phi = _mm256_maddubs_epi16(hi, PL_SUFFIX(load_y)(y[i].qs + 64 * k + 32));
                sumi[c] = PL_DPWSSD(sumi[c], plo, slo);
                sumi[c] = PL_DPWSSD(sumi[c], phi, shi);
            }
        }
        uint16_t dh, mh;
        memcpy(&dh, blk, 2);
        memcpy(&mh, blk + 2, 2);
        const float xd = pl_f16_load(dh), xm = pl_f16_load(mh);
        for (int c = 0; c < nc; c++) {
            const pl_block_q8_K *y = PL_COL(a, as, c);
            const __m128i summs = _mm_madd_epi16(mins, PL_SUFFIX(bsums_pairs)(y[i].bsums));
            const float d = xd * y[i].d, dmin = xm * y[i].d;
            acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi[c]), acc[c]);
            acc_m[c] = _mm_fmadd_ps(_mm_set1_ps(dmin), _mm_cvtepi32_ps(summs), acc_m[c]);
        }
    }
    for (int c = 0; c < nc; c++) {
        __m128 m = _mm_add_ps(acc_m[c], _mm_movehl_ps(acc_m[c], acc_m[c]));
        m = _mm_add_ss(m, _mm_movehdup_ps(m));
        out[(size_t)c * os] = pl_hsum_ps256(acc[c]) - _mm_cvtss_f32(m);
    }
}

PL_ALWAYS_INLINE void PL_SUFFIX(q4_K_cols)(int64_t n, const void *w, const void *a, size_t as, float *out, size_t os,
                                           const int nc) {
    PL_SUFFIX(q45_K_cols)(n, w, sizeof(pl_block_q4_K), 16, 0, a, as, out, os, nc);
}
PL_DOT_AND_TILE(dot_q4_K, PL_SUFFIX(q4_K_cols))

PL_ALWAYS_INLINE void PL_SUFFIX(q5_K_cols)(int64_t n, const void *w, const void *a, size_t as, float *out, size_t os,
                                           const int nc) {
    PL_SUFFIX(q45_K_cols)(n, w, sizeof(pl_block_q5_K), 48, 16, a, as, out, os, nc);
}
PL_DOT_AND_TILE(dot_q5_K, PL_SUFFIX(q5_K_cols))

PL_ALWAYS_INLINE void PL_SUFFIX(q6_K_cols)(int64_t n, const void *w, const void *a, size_t as, float *out, size_t os,
                                           const int nc) {
    const pl_block_q6_K *x = w;
    const __m256i m4 = _mm256_set1_epi8(0x0f), m3 = _mm256_set1_epi8(3);
    __m256 acc[PL_TILE_COLS];
    for (int c = 0; c < nc; c++) acc[c] = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / 256; i++) {
        const __m128i sc8 = _mm_loadu_si128((const __m128i *)x[i].scales);
        const __m256i sc16 = _mm256_cvtepi8_epi16(sc8);
        __m256i sumi[PL_TILE_COLS];
        for (int c = 0; c < nc; c++) {
            /* the -32 offset: 32 * sum_j sc[j] * bsums[j], as 8 lanes */
            const __m256i off =
                _mm256_slli_epi32(_mm256_madd_epi16(sc16, _mm256_loadu_si256((const __m256i *)PL_COL(a, as, c)[i].bsums)), 5);
            sumi[c] = _mm256_sub_epi32(_mm256_setzero_si256(), off);
        }
        for (int h = 0; h < 2; h++) {
            const __m256i ql0 = _mm256_loadu_si256((const __m256i *)(x[i].ql + 64 * h));
            const __m256i ql1 = _mm256_loadu_si256((const __m256i *)(x[i].ql + 64 * h + 32));
            const __m256i qh = _mm256_loadu_si256((const __m256i *)(x[i].qh + 32 * h));
            for (int q = 0; q < 4; q++) {
                const __m256i l = q & 1 ? ql1 : ql0;
                const __m256i lo = q < 2 ? _mm256_and_si256(l, m4) : _mm256_and_si256(_mm256_srli_epi16(l, 4), m4);
                const __m256i hi = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * q), m3), 4);
                const __m256i u = _mm256_or_si256(lo, hi);
                const __m256i s16 = PL_SUFFIX(byte_pair16)(sc8, 8 * h + 2 * q);
                for (int c = 0; c < nc; c++) {
                    const __m256i p16 = _mm256_maddubs_epi16(u, PL_SUFFIX(load_y)(PL_COL(a, as, c)[i].qs + 128 * h + 32 * q));
                    sumi[c] = PL_DPWSSD(sumi[c], p16, s16);
                }
            }
        }
        PL_SUFFIX(kq_block_add)(acc, sumi, pl_f16_load(x[i].d), a, as, i, nc);
    }
    for (int c = 0; c < nc; c++) out[(size_t)c * os] = pl_hsum_ps256(acc[c]);
}
PL_DOT_AND_TILE(dot_q6_K, PL_SUFFIX(q6_K_cols))

static float PL_SUFFIX(dot_iq4_xs)(int64_t n, const void *w, const void *a) {
    const pl_block_iq4_xs *x = w;
    const pl_block_q8_K *y = a;
    const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)pl_kvalues_iq4nl));
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / 256; i++) {
        __m256i sumi = _mm256_setzero_si256();
        for (int ib = 0; ib < 8; ib++) {
            const __m256i xv = PL_SUFFIX(lookup32)(x[i].qs + 16 * ib, table);
            const __m256i yv = PL_SUFFIX(load_y)(y[i].qs + 32 * ib);
            const __m256i p16 = _mm256_maddubs_epi16(_mm256_sign_epi8(xv, xv), _mm256_sign_epi8(yv, xv));
            const int ls = ((x[i].scales_l[ib / 2] >> (4 * (ib % 2))) & 0xf) | (((x[i].scales_h >> (2 * ib)) & 3) << 4);
            sumi = PL_DPWSSD(sumi, p16, _mm256_set1_epi16((short)(ls - 32)));
        }
        const float d = pl_f16_load(x[i].d) * y[i].d;
        acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
    }
    return pl_hsum_ps256(acc);
}

/* ---- ternary ----------------------------------------------------------- */

/* sum of the 16 bsums */
static inline int32_t PL_SUFFIX(bsums_total)(const int16_t *bsums) {
    return PL_SUFFIX(bsums_dot)(bsums, _mm256_set1_epi16(1));
}

static float PL_SUFFIX(dot_tq2_0)(int64_t n, const void *w, const void *a) {
    const pl_block_tq2_0 *x = w;
    const pl_block_q8_K *y = a;
    const __m256i m3 = _mm256_set1_epi8(3);
    float sum = 0.0f; /* one term per block, summed as the reference does */
    for (int64_t i = 0; i < n / 256; i++) {
        __m256i s = _mm256_setzero_si256();
        for (int j = 0; j < 2; j++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *)(x[i].qs + 32 * j));
            for (int l = 0; l < 4; l++)
                s = PL_DPBUSD(s, _mm256_and_si256(_mm256_srli_epi16(q, 2 * l), m3), PL_SUFFIX(load_y)(y[i].qs + 128 * j + 32 * l));
        }
        /* (q - 1) . y = q . y - sum(y) */
        const int32_t total = pl_hsum_epi32_256(s) - PL_SUFFIX(bsums_total)(y[i].bsums);
        sum += (float)total * (y[i].d * pl_f16_load(x[i].d));
    }
    return sum;
}

/* trit n of 32 tq1_0 bytes: ((byte * 3^n mod 256) * 3) >> 8, as bytes */
static inline __m256i PL_SUFFIX(trits)(__m256i bytes, int pow3) {
    const __m256i mul = _mm256_set1_epi16((short)pow3), m8 = _mm256_set1_epi16(0xff), three = _mm256_set1_epi16(3);
    __m256i lo = _mm256_unpacklo_epi8(bytes, _mm256_setzero_si256());
    __m256i hi = _mm256_unpackhi_epi8(bytes, _mm256_setzero_si256());
    lo = _mm256_srli_epi16(_mm256_mullo_epi16(_mm256_and_si256(_mm256_mullo_epi16(lo, mul), m8), three), 8);
    hi = _mm256_srli_epi16(_mm256_mullo_epi16(_mm256_and_si256(_mm256_mullo_epi16(hi, mul), m8), three), 8);
    return _mm256_packus_epi16(lo, hi); /* unpack and pack undo each other lane-wise */
}

static float PL_SUFFIX(dot_tq1_0)(int64_t n, const void *w, const void *a) {
    const pl_block_tq1_0 *x = w;
    const pl_block_q8_K *y = a;
    float sum = 0.0f; /* one term per block, summed as the reference does */
    for (int64_t i = 0; i < n / 256; i++) {
        __m256i s = _mm256_setzero_si256();
        const __m256i q32 = _mm256_loadu_si256((const __m256i *)x[i].qs);
        s = PL_DPBUSD(s, PL_SUFFIX(trits)(q32, 1), PL_SUFFIX(load_y)(y[i].qs));
        s = PL_DPBUSD(s, PL_SUFFIX(trits)(q32, 3), PL_SUFFIX(load_y)(y[i].qs + 32));
        s = PL_DPBUSD(s, PL_SUFFIX(trits)(q32, 9), PL_SUFFIX(load_y)(y[i].qs + 64));
        s = PL_DPBUSD(s, PL_SUFFIX(trits)(q32, 27), PL_SUFFIX(load_y)(y[i].qs + 96));
        s = PL_DPBUSD(s, PL_SUFFIX(trits)(q32, 81), PL_SUFFIX(load_y)(y[i].qs + 128));
        /* the last 16 qs bytes hold values 160 + 16t + m: trits 0,1 / 2,3 in
         * one 32-byte vector each, trit 4 with the 4 qh bytes' 4 trits */
        const __m128i q16 = _mm_loadu_si128((const __m128i *)(x[i].qs + 32));
        const __m256i qq = _mm256_broadcastsi128_si256(q16);
        const __m256i t01 = _mm256_blend_epi32(PL_SUFFIX(trits)(qq, 1), PL_SUFFIX(trits)(qq, 3), 0xf0);
        const __m256i t23 = _mm256_blend_epi32(PL_SUFFIX(trits)(qq, 9), PL_SUFFIX(trits)(qq, 27), 0xf0);
        s = PL_DPBUSD(s, t01, PL_SUFFIX(load_y)(y[i].qs + 160));
        s = PL_DPBUSD(s, t23, PL_SUFFIX(load_y)(y[i].qs + 192));
        /* values 224..239: trit 4 of the 16 bytes; 240..255: trit t of qh[j] at 240 + 4t + j */
        uint32_t qh4;
        memcpy(&qh4, x[i].qh, 4);
        const __m256i h = _mm256_set1_epi32((int)qh4);
        const __m256i t4 = PL_SUFFIX(trits)(qq, 81);
        const __m256i hq = _mm256_blend_epi32(PL_SUFFIX(trits)(h, 1), PL_SUFFIX(trits)(h, 3), 0x22);
        const __m256i hq2 = _mm256_blend_epi32(hq, PL_SUFFIX(trits)(h, 9), 0x44);
        const __m256i hall = _mm256_blend_epi32(hq2, PL_SUFFIX(trits)(h, 27), 0x88); /* low lane: t0 t1 t2 t3 per dword */
        const __m256i last = _mm256_permute2x128_si256(t4, hall, 0x20);          /* [trit4 of 16 bytes | qh trits] */
        s = PL_DPBUSD(s, last, PL_SUFFIX(load_y)(y[i].qs + 224));
        const int32_t total = pl_hsum_epi32_256(s) - PL_SUFFIX(bsums_total)(y[i].bsums);
        sum += (float)total * (pl_f16_load(x[i].d) * y[i].d);
    }
    return sum;
}

/* ---- IQ codebook types --------------------------------------------------- */

/* y with the signs of 32 bits applied (bit i negates byte i), expanded in
 * registers (no table loads) */
static inline __m256i PL_SUFFIX(apply_signs)(__m256i y, uint32_t bits) {
    return _mm256_sign_epi8(y, _mm256_or_si256(PL_SUFFIX(bits32)(bits), _mm256_set1_epi8(1)));
}

/* y with 4 groups of 7 stored sign bits (+ parity) applied */
static inline __m256i PL_SUFFIX(apply_even_signs)(__m256i y, uint32_t b0, uint32_t b1, uint32_t b2, uint32_t b3) {
    const __m256i m = _mm256_set_epi64x((long long)pl_iq_even_sign_mask[b3 & 127], (long long)pl_iq_even_sign_mask[b2 & 127],
                                        (long long)pl_iq_even_sign_mask[b1 & 127], (long long)pl_iq_even_sign_mask[b0 & 127]);
    return _mm256_sign_epi8(y, _mm256_or_si256(m, _mm256_set1_epi8(1)));
}

static inline __m256i PL_SUFFIX(rows64)(const uint64_t *g, int a, int b, int c, int d) {
    return _mm256_set_epi64x((long long)g[d], (long long)g[c], (long long)g[b], (long long)g[a]);
}

static inline __m256i PL_SUFFIX(rows32)(const uint32_t *g, const int *i) {
    return _mm256_set_epi32((int)g[i[7]], (int)g[i[6]], (int)g[i[5]], (int)g[i[4]], (int)g[i[3]], (int)g[i[2]], (int)g[i[1]],
                            (int)g[i[0]]);
}

static float PL_SUFFIX(dot_iq2_xxs)(int64_t n, const void *w, const void *a) {
    const pl_block_iq2_xxs *x = w;
    const pl_block_q8_K *y = a;
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / 256; i++) {
        __m256i sumi = _mm256_setzero_si256();
        for (int ib = 0; ib < 8; ib++) {
            const uint8_t *q = (const uint8_t *)(x[i].qs + 4 * ib);
            uint32_t meta;
            memcpy(&meta, q + 4, 4);
            const __m256i g = PL_SUFFIX(rows64)(pl_iq2xxs_grid, q[0], q[1], q[2], q[3]);
            const __m256i ys = PL_SUFFIX(apply_even_signs)(PL_SUFFIX(load_y)(y[i].qs + 32 * ib), meta, meta >> 7, meta >> 14, meta >> 21);
            const __m256i p16 = _mm256_maddubs_epi16(g, ys);
            sumi = PL_DPWSSD(sumi, p16, _mm256_set1_epi16((short)(2 * (meta >> 28) + 1)));
        }
        const float d = pl_f16_load(x[i].d) * y[i].d;
        acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
    }
    return 0.125f * pl_hsum_ps256(acc);
}

static float PL_SUFFIX(dot_iq2_xs)(int64_t n, const void *w, const void *a) {
    const pl_block_iq2_xs *x = w;
    const pl_block_q8_K *y = a;
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / 256; i++) {
        __m256i sumi = _mm256_setzero_si256();
        for (int ib = 0; ib < 8; ib++) {
            const uint16_t *e = x[i].qs + 4 * ib;
            const __m256i g = PL_SUFFIX(rows64)(pl_iq2xs_grid, e[0] & 511, e[1] & 511, e[2] & 511, e[3] & 511);
            const __m256i ys = PL_SUFFIX(apply_even_signs)(PL_SUFFIX(load_y)(y[i].qs + 32 * ib), e[0] >> 9, e[1] >> 9, e[2] >> 9, e[3] >> 9);
            const __m256i p16 = _mm256_maddubs_epi16(g, ys);
            const uint8_t sc = x[i].scales[ib];
            sumi = PL_DPWSSD(sumi, p16, PL_SUFFIX(pair16)(2 * (sc & 0xf) + 1, 2 * (sc >> 4) + 1));
        }
        const float d = pl_f16_load(x[i].d) * y[i].d;
        acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
    }
    return 0.125f * pl_hsum_ps256(acc);
}

static float PL_SUFFIX(dot_iq2_s)(int64_t n, const void *w, const void *a) {
    const pl_block_iq2_s *x = w;
    const pl_block_q8_K *y = a;
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / 256; i++) {
        __m256i sumi = _mm256_setzero_si256();
        for (int ib = 0; ib < 8; ib++) {
            const uint8_t *qs = x[i].qs + 4 * ib;
            const int qh = x[i].qh[ib];
            const __m256i g = PL_SUFFIX(rows64)(pl_iq2s_grid, qs[0] | ((qh << 8) & 0x300), qs[1] | ((qh << 6) & 0x300),
                                                qs[2] | ((qh << 4) & 0x300), qs[3] | ((qh << 2) & 0x300));
            uint32_t sb;
            memcpy(&sb, x[i].qs + 32 + 4 * ib, 4);
            const __m256i p16 = _mm256_maddubs_epi16(g, PL_SUFFIX(apply_signs)(PL_SUFFIX(load_y)(y[i].qs + 32 * ib), sb));
            const uint8_t sc = x[i].scales[ib];
            sumi = PL_DPWSSD(sumi, p16, PL_SUFFIX(pair16)(2 * (sc & 0xf) + 1, 2 * (sc >> 4) + 1));
        }
        const float d = pl_f16_load(x[i].d) * y[i].d;
        acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
    }
    return 0.125f * pl_hsum_ps256(acc);
}

static float PL_SUFFIX(dot_iq3_xxs)(int64_t n, const void *w, const void *a) {
    const pl_block_iq3_xxs *x = w;
    const pl_block_q8_K *y = a;
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / 256; i++) {
        __m256i sumi = _mm256_setzero_si256();
        for (int ib = 0; ib < 8; ib++) {
            const uint8_t *q = x[i].qs + 8 * ib;
            uint32_t meta;
            memcpy(&meta, x[i].qs + 64 + 4 * ib, 4);
            const int idx[8] = {q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7]};
            const __m256i g = PL_SUFFIX(rows32)(pl_iq3xxs_grid, idx);
            const __m256i ys = PL_SUFFIX(apply_even_signs)(PL_SUFFIX(load_y)(y[i].qs + 32 * ib), meta, meta >> 7, meta >> 14, meta >> 21);
            const __m256i p16 = _mm256_maddubs_epi16(g, ys);
            sumi = PL_DPWSSD(sumi, p16, _mm256_set1_epi16((short)(2 * (meta >> 28) + 1)));
        }
        const float d = pl_f16_load(x[i].d) * y[i].d;
        acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
    }
    return 0.25f * pl_hsum_ps256(acc);
}

static float PL_SUFFIX(dot_iq3_s)(int64_t n, const void *w, const void *a) {
    const pl_block_iq3_s *x = w;
    const pl_block_q8_K *y = a;
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / 256; i++) {
        __m256i sumi = _mm256_setzero_si256();
        for (int ib = 0; ib < 8; ib++) {
            const uint8_t *q = x[i].qs + 8 * ib;
            const int qh = x[i].qh[ib];
            int idx[8];
            for (int k = 0; k < 8; k++) idx[k] = q[k] | ((qh << (8 - k)) & 256);
            const __m256i g = PL_SUFFIX(rows32)(pl_iq3s_grid, idx);
            uint32_t sb;
            memcpy(&sb, x[i].signs + 4 * ib, 4);
            const __m256i p16 = _mm256_maddubs_epi16(g, PL_SUFFIX(apply_signs)(PL_SUFFIX(load_y)(y[i].qs + 32 * ib), sb));
            const int ls = 2 * ((x[i].scales[ib / 2] >> (4 * (ib % 2))) & 0xf) + 1;
            sumi = PL_DPWSSD(sumi, p16, _mm256_set1_epi16((short)ls));
        }
        const float d = pl_f16_load(x[i].d) * y[i].d;
        acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
    }
    return pl_hsum_ps256(acc);
}

/* iq1 rows hold -1/0/1: add 1 to make them unsigned, subtract sum(y) later */
static inline __m256i PL_SUFFIX(iq1_rows)(int a, int b, int c, int d) {
    return _mm256_add_epi8(PL_SUFFIX(rows64)(pl_iq1s_grid, a, b, c, d), _mm256_set1_epi8(1));
}

static float PL_SUFFIX(dot_iq1_s)(int64_t n, const void *w, const void *a) {
    const pl_block_iq1_s *x = w;
    const pl_block_q8_K *y = a;
    float sum = 0; /* one term per block, in the reference's order: identical results */
    for (int64_t i = 0; i < n / 256; i++) {
        __m256i lanes = _mm256_setzero_si256();
        int ysum_ls = 0, sumi1 = 0;
        for (int ib = 0; ib < 8; ib++) {
            const uint16_t qh = x[i].qh[ib];
            const uint8_t *qs = x[i].qs + 4 * ib;
            const __m256i g = PL_SUFFIX(iq1_rows)(qs[0] | ((qh << 8) & 0x700), qs[1] | ((qh << 5) & 0x700),
                                                  qs[2] | ((qh << 2) & 0x700), qs[3] | ((qh >> 1) & 0x700));
            const int ls = 2 * ((qh >> 12) & 7) + 1;
            const int bs = y[i].bsums[2 * ib] + y[i].bsums[2 * ib + 1];
            lanes = PL_DPWSSD(lanes, _mm256_maddubs_epi16(g, PL_SUFFIX(load_y)(y[i].qs + 32 * ib)), _mm256_set1_epi16((short)ls));
            ysum_ls += ls * bs;
            sumi1 += ls * (qh & 0x8000 ? -1 : 1) * bs;
        }
        const int sumi = pl_hsum_epi32_256(lanes) - ysum_ls;
        sum += pl_f16_load(x[i].d) * y[i].d * ((float)sumi + PL_IQ1S_DELTA * (float)sumi1);
    }
    return sum;
}

static float PL_SUFFIX(dot_iq1_m)(int64_t n, const void *w, const void *a) {
    const pl_block_iq1_m *x = w;
    const pl_block_q8_K *y = a;
    const __m256i ones = _mm256_set1_epi8(1);
    float sum = 0; /* one term per block, in the reference's order: identical results */
    for (int64_t i = 0; i < n / 256; i++) {
        uint16_t sc[4];
        memcpy(sc, x[i].scales, 8);
        const uint16_t f = (uint16_t)((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000));
        __m256i l1 = _mm256_setzero_si256(), l2 = _mm256_setzero_si256();
        for (int ib = 0; ib < 8; ib++) {
            const uint8_t *qs = x[i].qs + 4 * ib, *qh = x[i].qh + 2 * ib;
            const __m256i g = PL_SUFFIX(rows64)(pl_iq1s_grid, qs[0] | ((qh[0] << 8) & 0x700), qs[1] | ((qh[0] << 4) & 0x700),
                                                qs[2] | ((qh[1] << 8) & 0x700), qs[3] | ((qh[1] << 4) & 0x700));
            const __m256i ls = PL_SUFFIX(pair16)(2 * ((sc[ib / 2] >> (6 * (ib % 2))) & 7) + 1,
                                                 2 * ((sc[ib / 2] >> (6 * (ib % 2) + 3)) & 7) + 1);
            const __m256i yv = PL_SUFFIX(load_y)(y[i].qs + 32 * ib);
            /* grid . y with the grid's signs; the shift's sign per 8 via the sign masks */
            l1 = PL_DPWSSD(l1, _mm256_maddubs_epi16(_mm256_sign_epi8(g, g), _mm256_sign_epi8(yv, g)), ls);
            const uint32_t dbits = ((qh[0] & 0x08) ? 0xffu : 0) | ((qh[0] & 0x80) ? 0xff00u : 0) |
                                   ((qh[1] & 0x08) ? 0xff0000u : 0) | ((qh[1] & 0x80) ? 0xff000000u : 0);
            l2 = PL_DPWSSD(l2, _mm256_maddubs_epi16(ones, PL_SUFFIX(apply_signs)(yv, dbits)), ls);
        }
        const int sumi1 = pl_hsum_epi32_256(l1), sumi2 = pl_hsum_epi32_256(l2);
        sum += pl_f16_load(f) * y[i].d * ((float)sumi1 + PL_IQ1M_DELTA * (float)sumi2);
    }
    return sum;
}

/* ---- q8_K activations --------------------------------------------------- */

/* llama.cpp's reference q8_K, vectorized exactly: the value of largest
 * magnitude (first on ties) sets the scale; nearest_int's magic-constant
 * rounding and the int -> int8 truncation are reproduced lane by lane. */
static void PL_SUFFIX(act_q8_K)(const float *src, void *dst, int64_t n) {
    pl_block_q8_K *b = dst;
    const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    for (int64_t i = 0; i < n / 256; i++) {
        const float *x = src + 256 * i;
        __m256 m = _mm256_setzero_ps(), nan = _mm256_setzero_ps();
        for (int j = 0; j < 256; j += 8) {
            const __m256 v = _mm256_loadu_ps(x + j);
            m = _mm256_max_ps(m, _mm256_and_ps(v, absmask));
            nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        }
        const float amax = pl_hmax_ps256(m);
        if (_mm256_movemask_ps(nan)) { /* NaN input: the scalar path orders it as llama.cpp does */
            pl_ref_q8_K_act(x, &b[i], 256);
            continue;
        }
        float max = 0;
        int found = 0;
        for (int j = 0; j < 256 && !found; j++)
            if (fabsf(x[j]) == amax) max = x[j], found = 1;
        if (!found || !(amax > 0)) { /* all zero, or NaN: the scalar path decides */
            pl_ref_q8_K_act(x, &b[i], 256);
            continue;
        }
        const float iscale = -127.f / max;
        const __m256 vs = _mm256_set1_ps(iscale), magic = _mm256_set1_ps(12582912.f);
        const __m256i mant = _mm256_set1_epi32(0x007fffff), bias = _mm256_set1_epi32(0x00400000);
        const __m256i c127 = _mm256_set1_epi32(127);
        const __m256i lowbytes = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12,
                                                  -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
        for (int j = 0; j < 256; j += 8) {
            __m256i v = _mm256_castps_si256(_mm256_add_ps(_mm256_mul_ps(vs, _mm256_loadu_ps(x + j)), magic));
            v = _mm256_min_epi32(_mm256_sub_epi32(_mm256_and_si256(v, mant), bias), c127);
            const __m256i bytes = _mm256_shuffle_epi8(v, lowbytes); /* low byte of each int32 */
            const uint32_t lo = (uint32_t)_mm256_extract_epi32(bytes, 0), hi = (uint32_t)_mm256_extract_epi32(bytes, 4);
            memcpy(b[i].qs + j, &lo, 4);
            memcpy(b[i].qs + j + 4, &hi, 4);
        }
        const __m256i ones = _mm256_set1_epi8(1);
        for (int j = 0; j < 16; j += 2) {
            /* two bsums: bytes 0..15 and 16..31 of the 32 loaded */
            const __m256i q = _mm256_loadu_si256((const __m256i *)(b[i].qs + 16 * j));
            const __m256i s32 = _mm256_madd_epi16(_mm256_maddubs_epi16(ones, q), _mm256_set1_epi16(1));
            const __m128i lo4 = _mm256_castsi256_si128(s32), hi4 = _mm256_extracti128_si256(s32, 1);
            const __m128i l2 = _mm_add_epi32(lo4, _mm_shuffle_epi32(lo4, 0x4e)), h2 = _mm_add_epi32(hi4, _mm_shuffle_epi32(hi4, 0x4e));
            b[i].bsums[j] = (int16_t)(_mm_cvtsi128_si32(l2) + _mm_extract_epi32(l2, 1));
            b[i].bsums[j + 1] = (int16_t)(_mm_cvtsi128_si32(h2) + _mm_extract_epi32(h2, 1));
        }
        b[i].d = 1 / iscale;
    }
}
