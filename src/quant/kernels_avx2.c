/*
 * kernels_avx2.c -- the AVX2 (+FMA, F16C) tier: dot products of the float
 * types and of q8_0, and the q8_0 activation encoder.  Compiled with
 * -mavx2 -mfma -mf16c (CMakeLists.txt) and only called after the CPU check
 * in kernels.c.  Integer block sums are the reference's integers; only the
 * order of float accumulation differs from the scalar reference.
 */
#if defined(__x86_64__)
#include "quant/blocks.h"
#include "quant/kernels_x86.h"
#include "quant/simd_x86.h"

#define PL_DPBUSD(acc, u, s) _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)))
#define PL_DPWSSD(acc, a, b) _mm256_add_epi32(acc, _mm256_madd_epi16(a, b))
#define PL_SUFFIX(name) name##_avx2
#include "quant/dots_x86.h"

static float dot_f32(int64_t n, const void *w, const void *a) {
    const float *x = w, *y = a;
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8), _mm256_loadu_ps(y + i + 8), s1);
        s2 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 16), _mm256_loadu_ps(y + i + 16), s2);
        s3 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 24), _mm256_loadu_ps(y + i + 24), s3);
    }
    for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), s0);
    float sum = pl_hsum_ps256(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
    for (; i < n; i++) sum += x[i] * y[i];
    return sum;
}

static inline __m256 load_f16x8(const uint16_t *p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)); }

static inline __m256 load_bf16x8(const uint16_t *p) {
    __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
}

static float dot_f16(int64_t n, const void *w, const void *a) {
    const uint16_t *x = w, *y = a;
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm256_fmadd_ps(load_f16x8(x + i), load_f16x8(y + i), s0);
        s1 = _mm256_fmadd_ps(load_f16x8(x + i + 8), load_f16x8(y + i + 8), s1);
        s2 = _mm256_fmadd_ps(load_f16x8(x + i + 16), load_f16x8(y + i + 16), s2);
        s3 = _mm256_fmadd_ps(load_f16x8(x + i + 24), load_f16x8(y + i + 24), s3);
    }
    for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(load_f16x8(x + i), load_f16x8(y + i), s0);
    float sum = pl_hsum_ps256(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
    for (; i < n; i++) sum += pl_f16_load(x[i]) * pl_f16_load(y[i]);
    return sum;
}

static float dot_bf16(int64_t n, const void *w, const void *a) {
    const uint16_t *x = w, *y = a;
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm256_fmadd_ps(load_bf16x8(x + i), load_bf16x8(y + i), s0);
        s1 = _mm256_fmadd_ps(load_bf16x8(x + i + 8), load_bf16x8(y + i + 8), s1);
        s2 = _mm256_fmadd_ps(load_bf16x8(x + i + 16), load_bf16x8(y + i + 16), s2);
        s3 = _mm256_fmadd_ps(load_bf16x8(x + i + 24), load_bf16x8(y + i + 24), s3);
    }
    for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(load_bf16x8(x + i), load_bf16x8(y + i), s0);
    float sum = pl_hsum_ps256(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
    for (; i < n; i++) {
        uint32_t a32 = (uint32_t)x[i] << 16, b32 = (uint32_t)y[i] << 16;
        float fa, fb;
        memcpy(&fa, &a32, 4);
        memcpy(&fb, &b32, 4);
        sum += fa * fb;
    }
    return sum;
}

/* f32 -> f16 activations: vcvtps2ph with round-to-nearest-even, the same
 * bits as the scalar conversion. */
static void act_f16(const float *src, void *dst, int64_t n) {
    uint16_t *h = dst;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(h + i), _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++) h[i] = (uint16_t)_cvtss_sh(src[i], _MM_FROUND_TO_NEAREST_INT);
}

#define RNE (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)

/* One block of 32 activations -> q8_0 bytes and the 8 int32 lanes of the
 * rounded values (q8_1 needs their sum). */
static inline float q8_block(const float *x, int8_t *qs, __m256i *sum_lanes) {
    __m256 v0 = _mm256_loadu_ps(x), v1 = _mm256_loadu_ps(x + 8);
    __m256 v2 = _mm256_loadu_ps(x + 16), v3 = _mm256_loadu_ps(x + 24);
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 m = _mm256_andnot_ps(sign, v0);
    m = _mm256_max_ps(m, _mm256_andnot_ps(sign, v1));
    m = _mm256_max_ps(m, _mm256_andnot_ps(sign, v2));
    m = _mm256_max_ps(m, _mm256_andnot_ps(sign, v3));
    const float amax = pl_hmax_ps256(m);
    const __m256 id = _mm256_set1_ps(amax != 0.0f ? 127.0f / amax : 0.0f);
    __m256i i0 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v0, id), RNE));
    __m256i i1 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v1, id), RNE));
    __m256i i2 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v2, id), RNE));
    __m256i i3 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v3, id), RNE));
    if (sum_lanes) *sum_lanes = _mm256_add_epi32(_mm256_add_epi32(i0, i1), _mm256_add_epi32(i2, i3));
    /* packs work within 128-bit lanes; the permute restores element order */
    __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(i0, i1), _mm256_packs_epi32(i2, i3));
    p = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256((__m256i *)qs, p);
    return amax;
}

static void act_q8_0(const float *src, void *dst, int64_t n) {
    pl_block_q8_0 *b = dst;
    for (int64_t i = 0; i < n / 32; i++) {
        float amax = q8_block(src + i * 32, b[i].qs, NULL);
        b[i].d = (uint16_t)_cvtss_sh(amax / 127.0f, _MM_FROUND_TO_NEAREST_INT);
    }
}

/* q8_0 blocks to f32: d * q, the reference's product (a KV cache's V rows
 * are decoded through it) */
static void to_float_q8_0(const void *src, float *dst, int64_t n) {
    const pl_block_q8_0 *b = src;
    for (int64_t i = 0; i < n / 32; i++) {
        const __m256 d = _mm256_set1_ps(_cvtsh_ss(b[i].d));
        for (int k = 0; k < 32; k += 8) {
            const __m256i q = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(b[i].qs + k)));
            _mm256_storeu_ps(dst + i * 32 + k, _mm256_mul_ps(d, _mm256_cvtepi32_ps(q)));
        }
    }
}

static void act_q8_1(const float *src, void *dst, int64_t n) {
    pl_block_q8_1 *b = dst;
    for (int64_t i = 0; i < n / 32; i++) {
        __m256i lanes;
        float amax = q8_block(src + i * 32, b[i].qs, &lanes);
        float d = amax / 127.0f;
        b[i].d = (uint16_t)_cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT);
        b[i].s = (uint16_t)_cvtss_sh(d * (float)pl_hsum_epi32_256(lanes), _MM_FROUND_TO_NEAREST_INT);
    }
}

/* One q8_0 block of x against block i of nc activation rows, into acc:
 * |x| and x's signs are shared by the columns. */
static inline __attribute__((always_inline)) void q8_0_block(const pl_block_q8_0 *x, const void *a, size_t as, int64_t i,
                                                              __m256 *acc, const int nc) {
    const __m256i xv = _mm256_loadu_si256((const __m256i *)x->qs), ax = _mm256_sign_epi8(xv, xv);
    const float xd = pl_f16_load(x->d);
    for (int c = 0; c < nc; c++) {
        const pl_block_q8_0 *y = (const pl_block_q8_0 *)((const uint8_t *)a + (size_t)c * as) + i;
        const __m256i p = _mm256_madd_epi16(_mm256_maddubs_epi16(ax, _mm256_sign_epi8(_mm256_loadu_si256((const __m256i *)y->qs), xv)),
                                            _mm256_set1_epi16(1));
        acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(xd * pl_f16_load(y->d)), _mm256_cvtepi32_ps(p), acc[c]);
    }
}

/* The q8_0 dot of one weight row against nc activation rows (vec_dot is
 * nc = 1; always inlined with a constant nc): even blocks into one
 * accumulator, odd ones into another; the float work per column is
 * vec_dot's. */
#define PL_Q8_0_COLS 4
static inline __attribute__((always_inline)) void q8_0_cols(int64_t n, const void *w, const void *a, size_t as, float *out,
                                                             size_t os, const int nc) {
    const pl_block_q8_0 *x = w;
    const int64_t nb = n / 32;
    __m256 acc0[PL_Q8_0_COLS], acc1[PL_Q8_0_COLS];
    for (int c = 0; c < nc; c++) acc0[c] = _mm256_setzero_ps(), acc1[c] = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 2 <= nb; i += 2) {
        q8_0_block(&x[i], a, as, i, acc0, nc);
        q8_0_block(&x[i + 1], a, as, i + 1, acc1, nc);
    }
    if (i < nb) q8_0_block(&x[i], a, as, i, acc0, nc);
    for (int c = 0; c < nc; c++) out[(size_t)c * os] = pl_hsum_ps256(_mm256_add_ps(acc0[c], acc1[c]));
}

static float dot_q8_0(int64_t n, const void *w, const void *a) {
    float r;
    q8_0_cols(n, w, a, 0, &r, 0, 1);
    return r;
}

static void dot_q8_0_tile(int64_t n, const void *w, size_t ws, const void *a, size_t as, float *y, size_t ys) {
    q8_0_cols(n, w, a, as, y, ys, PL_Q8_0_COLS);
}

/* a type's part-tile kernels (one row x 2 and x 3 tokens) */
static void set_cols(pl_quant_kernel_set *k, pl_vec_dot_tile_fn c2, pl_vec_dot_tile_fn c3) {
    k->vec_dot_cols[2] = c2;
    k->vec_dot_cols[3] = c3;
}

/* a type's vec_dot and its tile kernel, always set together */
static void set_dot(pl_quant_kernel_set *k, pl_vec_dot_fn dot, pl_vec_dot_tile_fn tile, int rows, int cols) {
    k->vec_dot = dot;
    k->vec_dot_tile = tile;
    k->tile_rows = rows;
    k->tile_cols = cols;
}

void pl_quant_fill_avx2(pl_quant_kernel_set t[PL_TYPE_COUNT]) {
    t[PL_TYPE_F32].vec_dot = dot_f32;
    t[PL_TYPE_F16].vec_dot = dot_f16;
    t[PL_TYPE_F16].act_from_float = act_f16;
    t[PL_TYPE_BF16].vec_dot = dot_bf16;
    set_dot(&t[PL_TYPE_Q8_0], dot_q8_0, dot_q8_0_tile, 1, PL_Q8_0_COLS);
    t[PL_TYPE_Q8_0].act_from_float = act_q8_0;
    t[PL_TYPE_Q8_0].to_float = to_float_q8_0;
    t[PL_TYPE_Q8_1].act_from_float = act_q8_1;
    t[PL_TYPE_Q8_K].act_from_float = act_q8_K_avx2;
    t[PL_TYPE_Q4_0].vec_dot = dot_q4_0_avx2;
    t[PL_TYPE_Q4_1].vec_dot = dot_q4_1_avx2;
    t[PL_TYPE_Q5_0].vec_dot = dot_q5_0_avx2;
    t[PL_TYPE_Q5_1].vec_dot = dot_q5_1_avx2;
    t[PL_TYPE_IQ4_NL].vec_dot = dot_iq4_nl_avx2;
    t[PL_TYPE_MXFP4].vec_dot = dot_mxfp4_avx2;
    set_dot(&t[PL_TYPE_Q2_K], dot_q2_K_avx2, dot_q2_K_tile_avx2, 1, PL_TILE_COLS);
    set_cols(&t[PL_TYPE_Q2_K], dot_q2_K_cols2_avx2, dot_q2_K_cols3_avx2);
    set_dot(&t[PL_TYPE_Q3_K], dot_q3_K_avx2, dot_q3_K_tile_avx2, 1, PL_TILE_COLS);
    set_cols(&t[PL_TYPE_Q3_K], dot_q3_K_cols2_avx2, dot_q3_K_cols3_avx2);
    set_dot(&t[PL_TYPE_Q4_K], dot_q4_K_avx2, dot_q4_K_tile_avx2, 1, PL_TILE_COLS);
    set_cols(&t[PL_TYPE_Q4_K], dot_q4_K_cols2_avx2, dot_q4_K_cols3_avx2);
    set_dot(&t[PL_TYPE_Q5_K], dot_q5_K_avx2, dot_q5_K_tile_avx2, 1, PL_TILE_COLS);
    set_cols(&t[PL_TYPE_Q5_K], dot_q5_K_cols2_avx2, dot_q5_K_cols3_avx2);
    set_dot(&t[PL_TYPE_Q6_K], dot_q6_K_avx2, dot_q6_K_tile_avx2, 1, PL_TILE_COLS);
    set_cols(&t[PL_TYPE_Q6_K], dot_q6_K_cols2_avx2, dot_q6_K_cols3_avx2);
    t[PL_TYPE_IQ4_XS].vec_dot = dot_iq4_xs_avx2;
    t[PL_TYPE_TQ1_0].vec_dot = dot_tq1_0_avx2;
    t[PL_TYPE_TQ2_0].vec_dot = dot_tq2_0_avx2;
    t[PL_TYPE_IQ2_XXS].vec_dot = dot_iq2_xxs_avx2;
    t[PL_TYPE_IQ2_XS].vec_dot = dot_iq2_xs_avx2;
    t[PL_TYPE_IQ2_S].vec_dot = dot_iq2_s_avx2;
    t[PL_TYPE_IQ3_XXS].vec_dot = dot_iq3_xxs_avx2;
    t[PL_TYPE_IQ3_S].vec_dot = dot_iq3_s_avx2;
    t[PL_TYPE_IQ1_S].vec_dot = dot_iq1_s_avx2;
    t[PL_TYPE_IQ1_M].vec_dot = dot_iq1_m_avx2;
}
#endif
