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
    t[PL_TYPE_IQ2_XXS].vec_dot = dot_iq2_xxs_vnni;
    t[PL_TYPE_IQ2_XS].vec_dot = dot_iq2_xs_vnni;
    t[PL_TYPE_IQ2_S].vec_dot = dot_iq2_s_vnni;
    t[PL_TYPE_IQ3_XXS].vec_dot = dot_iq3_xxs_vnni;
    t[PL_TYPE_IQ3_S].vec_dot = dot_iq3_s_vnni;
    t[PL_TYPE_IQ1_S].vec_dot = dot_iq1_s_vnni;
    t[PL_TYPE_IQ1_M].vec_dot = dot_iq1_m_vnni;
}
#endif
