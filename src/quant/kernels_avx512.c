/*
 * kernels_avx512.c -- the AVX-512 tier (F, BW, VL, VNNI): 512-bit float
 * dots and q8_0 dots through vpdpbusd, two blocks per register.  Compiled
 * with -mavx512f -mavx512bw -mavx512vl -mavx512vnni (+ the AVX2 set) and
 * only called after the CPU check in kernels.c.  Types without a kernel
 * here keep the AVX2 tier's.
 */
#if defined(__x86_64__)
#include "quant/blocks.h"
#include "quant/kernels_x86.h"
#include "quant/simd_x86.h"

#define PL_DPBUSD(acc, u, s) _mm256_dpbusd_epi32(acc, u, s)
#define PL_DPWSSD(acc, a, b) _mm256_dpwssd_epi32(acc, a, b)
#define PL_SUFFIX(name) name##_vnni
#include "quant/dots_x86.h"

static float dot_f32(int64_t n, const void *w, const void *a) {
    const float *x = w, *y = a;
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        s0 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i), s0);
        s1 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i + 16), _mm512_loadu_ps(y + i + 16), s1);
        s2 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i + 32), _mm512_loadu_ps(y + i + 32), s2);
        s3 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i + 48), _mm512_loadu_ps(y + i + 48), s3);
    }
    for (; i + 16 <= n; i += 16) s0 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i), s0);
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        s1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, x + i), _mm512_maskz_loadu_ps(m, y + i), s1);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

static inline __m512 load_f16x16(const uint16_t *p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p));
}
static inline __m512 load_f16x16_mask(const uint16_t *p, __mmask16 m) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p));
}
static inline __m512 load_bf16x16(const uint16_t *p) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p)), 16));
}
static inline __m512 load_bf16x16_mask(const uint16_t *p, __mmask16 m) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p)), 16));
}

static float dot_f16(int64_t n, const void *w, const void *a) {
    const uint16_t *x = w, *y = a;
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        s0 = _mm512_fmadd_ps(load_f16x16(x + i), load_f16x16(y + i), s0);
        s1 = _mm512_fmadd_ps(load_f16x16(x + i + 16), load_f16x16(y + i + 16), s1);
        s2 = _mm512_fmadd_ps(load_f16x16(x + i + 32), load_f16x16(y + i + 32), s2);
        s3 = _mm512_fmadd_ps(load_f16x16(x + i + 48), load_f16x16(y + i + 48), s3);
    }
    for (; i + 16 <= n; i += 16) s0 = _mm512_fmadd_ps(load_f16x16(x + i), load_f16x16(y + i), s0);
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        s1 = _mm512_fmadd_ps(load_f16x16_mask(x + i, m), load_f16x16_mask(y + i, m), s1);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

static float dot_bf16(int64_t n, const void *w, const void *a) {
    const uint16_t *x = w, *y = a;
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        s0 = _mm512_fmadd_ps(load_bf16x16(x + i), load_bf16x16(y + i), s0);
        s1 = _mm512_fmadd_ps(load_bf16x16(x + i + 16), load_bf16x16(y + i + 16), s1);
        s2 = _mm512_fmadd_ps(load_bf16x16(x + i + 32), load_bf16x16(y + i + 32), s2);
        s3 = _mm512_fmadd_ps(load_bf16x16(x + i + 48), load_bf16x16(y + i + 48), s3);
    }
    for (; i + 16 <= n; i += 16) s0 = _mm512_fmadd_ps(load_bf16x16(x + i), load_bf16x16(y + i), s0);
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        s1 = _mm512_fmadd_ps(load_bf16x16_mask(x + i, m), load_bf16x16_mask(y + i, m), s1);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

/* Two q8_0 blocks of x against two of y: 16 int32 lanes, 8 per block.
 * |x| as unsigned bytes times y with x's sign (valid for y != -128). */
static inline __m512i dot2_i8(const int8_t *x0, const int8_t *x1, const int8_t *y0, const int8_t *y1) {
    __m512i x = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)x0)),
                                   _mm256_loadu_si256((const __m256i *)x1), 1);
    __m512i y = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)y0)),
                                   _mm256_loadu_si256((const __m256i *)y1), 1);
    __mmask64 neg = _mm512_movepi8_mask(x);
    __m512i sy = _mm512_mask_sub_epi8(y, neg, _mm512_setzero_si512(), y);
    return _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_abs_epi8(x), sy);
}

/* lanes 0-7 = a, lanes 8-15 = b (without AVX512DQ's insertf32x8) */
static inline __m512 set2_ps(float a, float b) {
    return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_set1_ps(a)), _mm256_castps_pd(_mm256_set1_ps(b)), 1));
}

static float dot_q8_0(int64_t n, const void *w, const void *a) {
    const pl_block_q8_0 *x = w, *y = a;
    const int64_t nb = n / 32;
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 4 <= nb; i += 4) {
        __m512i p0 = dot2_i8(x[i].qs, x[i + 1].qs, y[i].qs, y[i + 1].qs);
        __m512i p1 = dot2_i8(x[i + 2].qs, x[i + 3].qs, y[i + 2].qs, y[i + 3].qs);
        __m512 d0 = set2_ps(pl_f16_load(x[i].d) * pl_f16_load(y[i].d), pl_f16_load(x[i + 1].d) * pl_f16_load(y[i + 1].d));
        __m512 d1 = set2_ps(pl_f16_load(x[i + 2].d) * pl_f16_load(y[i + 2].d),
                            pl_f16_load(x[i + 3].d) * pl_f16_load(y[i + 3].d));
        acc0 = _mm512_fmadd_ps(d0, _mm512_cvtepi32_ps(p0), acc0);
        acc1 = _mm512_fmadd_ps(d1, _mm512_cvtepi32_ps(p1), acc1);
    }
    __m256 acc2 = _mm256_setzero_ps();
    for (; i < nb; i++) {
        __m256i ax = _mm256_loadu_si256((const __m256i *)x[i].qs), ay = _mm256_loadu_si256((const __m256i *)y[i].qs);
        __m256i p = _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_sign_epi8(ax, ax), _mm256_sign_epi8(ay, ax));
        acc2 = _mm256_fmadd_ps(_mm256_set1_ps(pl_f16_load(x[i].d) * pl_f16_load(y[i].d)), _mm256_cvtepi32_ps(p), acc2);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1)) + pl_hsum_ps256(acc2);
}


/* ---- 512-bit kernels of the hottest types (the 256-bit ones above are
 * the fallbacks of this tier for the rest) ---------------------------- */

static inline __m512i cat256(__m256i lo, __m256i hi) { return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1); }

/* Two q4_0 blocks: 64 unsigned nibble values (block a's 32, then b's). */
static inline __m512i q4_nibbles64(const uint8_t *qa, const uint8_t *qb) {
    const __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)qa)),
                                              _mm_loadu_si128((const __m128i *)qb), 1);
    /* [a, b, a>>4, b>>4] -> [a, a>>4, b, b>>4], then keep the nibbles */
    const __m512i z = _mm512_inserti64x4(_mm512_castsi256_si512(v), _mm256_srli_epi16(v, 4), 1);
    return _mm512_and_si512(_mm512_shuffle_i64x2(z, z, 0xd8), _mm512_set1_epi8(0x0f));
}

static float dot_q4_0_512(int64_t n, const void *w, const void *a) {
    const pl_block_q4_0 *x = w;
    const pl_block_q8_0 *y = a;
    const int64_t nb = n / 32;
    const __m512i eight = _mm512_set1_epi8(8);
    __m512 acc = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 2 <= nb; i += 2) {
        const __m512i yv = cat256(_mm256_loadu_si256((const __m256i *)y[i].qs), _mm256_loadu_si256((const __m256i *)y[i + 1].qs));
        __m512i s = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q4_nibbles64(x[i].qs, x[i + 1].qs), yv);
        s = _mm512_sub_epi32(s, _mm512_dpbusd_epi32(_mm512_setzero_si512(), eight, yv));
        const __m512 d = set2_ps(pl_f16_load(x[i].d) * pl_f16_load(y[i].d), pl_f16_load(x[i + 1].d) * pl_f16_load(y[i + 1].d));
        acc = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(s), acc);
    }
    float sum = _mm512_reduce_add_ps(acc);
    if (i < nb) sum += dot_q4_0_vnni(32, &x[i], &y[i]);
    return sum;
}

/* q4_K over 512 bits: chunks c and c+2 of 64 values side by side */
static float dot_q4_K_512(int64_t n, const void *w, const void *a) {
    const uint8_t *blocks = w;
    const pl_block_q8_K *y = a;
    const size_t bytes = sizeof(pl_block_q4_K);
    const int qs_off = 16;
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    __m512 acc = _mm512_setzero_ps();
    __m128 acc_m = _mm_setzero_ps();
    for (int64_t i = 0; i < n / 256; i++) {
        const uint8_t *blk = blocks + (size_t)i * bytes;
        uint32_t u[4];
        memcpy(u, blk + 4, 12);
        u[3] = ((u[2] >> 4) & 0x0f0f0f0f) | (((u[1] >> 6) & 0x03030303) << 4);
        const uint32_t uaux = u[1] & 0x3f3f3f3f;
        u[1] = (u[2] & 0x0f0f0f0f) | (((u[0] >> 6) & 0x03030303) << 4);
        u[2] = uaux;
        u[0] &= 0x3f3f3f3f;
        const __m256i sm = _mm256_cvtepu8_epi16(_mm_set_epi32((int)u[3], (int)u[2], (int)u[1], (int)u[0]));
        const __m128i scales = _mm256_castsi256_si128(sm);
        const __m128i summs = _mm_madd_epi16(_mm256_extracti128_si256(sm, 1), bsums_pairs_vnni(y[i].bsums));
        __m512i sumi = _mm512_setzero_si512();
        for (int c = 0; c < 2; c++) {
            /* chunk c in the low half, chunk c + 2 in the high half */
            const __m512i q = cat256(_mm256_loadu_si256((const __m256i *)(blk + qs_off + 32 * c)),
                                     _mm256_loadu_si256((const __m256i *)(blk + qs_off + 32 * (c + 2))));
            const __m512i lo = _mm512_and_si512(q, m4), hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
            const __m512i ylo = cat256(_mm256_loadu_si256((const __m256i *)(y[i].qs + 64 * c)),
                                       _mm256_loadu_si256((const __m256i *)(y[i].qs + 64 * (c + 2))));
            const __m512i yhi = cat256(_mm256_loadu_si256((const __m256i *)(y[i].qs + 64 * c + 32)),
                                       _mm256_loadu_si256((const __m256i *)(y[i].qs + 64 * (c + 2) + 32)));
            const __m512i plo = _mm512_maddubs_epi16(lo, ylo), phi = _mm512_maddubs_epi16(hi, yhi);
            const __m512i slo = cat256(word_bcast_vnni(scales, 2 * c), word_bcast_vnni(scales, 2 * c + 4));
            const __m512i shi = cat256(word_bcast_vnni(scales, 2 * c + 1), word_bcast_vnni(scales, 2 * c + 5));
            sumi = _mm512_dpwssd_epi32(sumi, plo, slo);
            sumi = _mm512_dpwssd_epi32(sumi, phi, shi);
        }
        uint16_t dh, mh;
        memcpy(&dh, blk, 2);
        memcpy(&mh, blk + 2, 2);
        const float d = pl_f16_load(dh) * y[i].d, dmin = pl_f16_load(mh) * y[i].d;
        acc = _mm512_fmadd_ps(_mm512_set1_ps(d), _mm512_cvtepi32_ps(sumi), acc);
        acc_m = _mm_fmadd_ps(_mm_set1_ps(dmin), _mm_cvtepi32_ps(summs), acc_m);
    }
    acc_m = _mm_add_ps(acc_m, _mm_movehl_ps(acc_m, acc_m));
    acc_m = _mm_add_ss(acc_m, _mm_movehdup_ps(acc_m));
    return _mm512_reduce_add_ps(acc) - _mm_cvtss_f32(acc_m);
}


static float dot_q6_K_512(int64_t n, const void *w, const void *a) {
    const pl_block_q6_K *x = w;
    const pl_block_q8_K *y = a;
    const __m512i m4 = _mm512_set1_epi8(0x0f), m3 = _mm512_set1_epi8(3);
    __m512 acc = _mm512_setzero_ps();
    for (int64_t i = 0; i < n / 256; i++) {
        const __m128i sc8 = _mm_loadu_si128((const __m128i *)x[i].scales);
        const __m256i off = _mm256_slli_epi32(_mm256_madd_epi16(_mm256_cvtepi8_epi16(sc8), _mm256_loadu_si256((const __m256i *)y[i].bsums)), 5);
        __m512i sumi = _mm512_castsi256_si512(_mm256_sub_epi32(_mm256_setzero_si256(), off));
        sumi = _mm512_inserti64x4(sumi, _mm256_setzero_si256(), 1);
        /* half 0 in the low 256 bits, half 1 in the high */
        const __m512i ql0 = cat256(_mm256_loadu_si256((const __m256i *)x[i].ql), _mm256_loadu_si256((const __m256i *)(x[i].ql + 64)));
        const __m512i ql1 = cat256(_mm256_loadu_si256((const __m256i *)(x[i].ql + 32)), _mm256_loadu_si256((const __m256i *)(x[i].ql + 96)));
        const __m512i qh = cat256(_mm256_loadu_si256((const __m256i *)x[i].qh), _mm256_loadu_si256((const __m256i *)(x[i].qh + 32)));
        for (int q = 0; q < 4; q++) {
            const __m512i l = q & 1 ? ql1 : ql0;
            const __m512i lo = q < 2 ? _mm512_and_si512(l, m4) : _mm512_and_si512(_mm512_srli_epi16(l, 4), m4);
            const __m512i hi = _mm512_slli_epi16(_mm512_and_si512(_mm512_srli_epi16(qh, 2 * q), m3), 4);
            const __m512i yv = cat256(_mm256_loadu_si256((const __m256i *)(y[i].qs + 32 * q)),
                                      _mm256_loadu_si256((const __m256i *)(y[i].qs + 128 + 32 * q)));
            const __m512i p16 = _mm512_maddubs_epi16(_mm512_or_si512(lo, hi), yv);
            const __m512i sc = cat256(byte_pair16_vnni(sc8, 2 * q), byte_pair16_vnni(sc8, 8 + 2 * q));
            sumi = _mm512_dpwssd_epi32(sumi, p16, sc);
        }
        const float d = pl_f16_load(x[i].d) * y[i].d;
        acc = _mm512_fmadd_ps(_mm512_set1_ps(d), _mm512_cvtepi32_ps(sumi), acc);
    }
    return _mm512_reduce_add_ps(acc);
}

void pl_quant_fill_avx512(pl_quant_kernel_set t[PL_TYPE_COUNT]) {
    t[PL_TYPE_F32].vec_dot = dot_f32;
    t[PL_TYPE_F16].vec_dot = dot_f16;
    t[PL_TYPE_BF16].vec_dot = dot_bf16;
    t[PL_TYPE_Q8_0].vec_dot = dot_q8_0;
    t[PL_TYPE_Q8_K].act_from_float = act_q8_K_vnni;
    t[PL_TYPE_Q4_0].vec_dot = dot_q4_0_vnni;
    t[PL_TYPE_Q4_1].vec_dot = dot_q4_1_vnni;
    t[PL_TYPE_Q5_0].vec_dot = dot_q5_0_vnni;
    t[PL_TYPE_Q5_1].vec_dot = dot_q5_1_vnni;
    t[PL_TYPE_IQ4_NL].vec_dot = dot_iq4_nl_vnni;
    t[PL_TYPE_MXFP4].vec_dot = dot_mxfp4_vnni;
    t[PL_TYPE_Q2_K].vec_dot = dot_q2_K_vnni;
    t[PL_TYPE_Q3_K].vec_dot = dot_q3_K_vnni;
    t[PL_TYPE_Q4_K].vec_dot = dot_q4_K_vnni;
    t[PL_TYPE_Q5_K].vec_dot = dot_q5_K_vnni;
    t[PL_TYPE_Q6_K].vec_dot = dot_q6_K_vnni;
    t[PL_TYPE_IQ4_XS].vec_dot = dot_iq4_xs_vnni;
    t[PL_TYPE_TQ1_0].vec_dot = dot_tq1_0_vnni;
    t[PL_TYPE_TQ2_0].vec_dot = dot_tq2_0_vnni;
    t[PL_TYPE_Q4_0].vec_dot = dot_q4_0_512;
    t[PL_TYPE_Q4_K].vec_dot = dot_q4_K_512;
    t[PL_TYPE_Q6_K].vec_dot = dot_q6_K_512;
    t[PL_TYPE_IQ2_XXS].vec_dot = dot_iq2_xxs_vnni;
    t[PL_TYPE_IQ2_XS].vec_dot = dot_iq2_xs_vnni;
    t[PL_TYPE_IQ2_S].vec_dot = dot_iq2_s_vnni;
    t[PL_TYPE_IQ3_XXS].vec_dot = dot_iq3_xxs_vnni;
    t[PL_TYPE_IQ3_S].vec_dot = dot_iq3_s_vnni;
    t[PL_TYPE_IQ1_S].vec_dot = dot_iq1_s_vnni;
    t[PL_TYPE_IQ1_M].vec_dot = dot_iq1_m_vnni;
}
#endif
