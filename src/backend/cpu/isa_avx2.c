/*
 * isa_avx2.c -- the row kernels for x86-64 with AVX2, FMA and F16C,
 * compiled through function target attributes so that the rest of the
 * binary stays baseline x86-64; chosen at run time (cpu_dispatch.c).
 */
#include "backend/cpu/cpu_isa.h"
#include "base/half.h"
#include "quant/kernels.h"

#if defined(__x86_64__)

#include <immintrin.h>
#include <math.h>

#include "backend/cpu/cpu_erf.h"
#include "backend/cpu/cpu_expf.h"
#include "backend/cpu/cpu_flash_steps.h"


#define PL_AVX2 __attribute__((target("avx2,fma,f16c")))

PL_AVX2 static inline float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* e^x, Cephes' single-precision polynomial with the power of two applied
 * in two halves so that results near the ends of the range stay exact:
 * within 2 ulp of expf over [-104, 88.72], 0 below, inf above. */
PL_AVX2 static inline __m256 exp8(__m256 x) {
    const __m256 max_x = _mm256_set1_ps(88.72283935546875f);
    const __m256 over = _mm256_cmp_ps(x, max_x, _CMP_GT_OQ);
    x = _mm256_max_ps(_mm256_min_ps(x, max_x), _mm256_set1_ps(-104.0f));
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    __m256 y = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    const __m256i ni = _mm256_cvtps_epi32(n);
    const __m256i n1 = _mm256_srai_epi32(ni, 1), n2 = _mm256_sub_epi32(ni, n1);
    const __m256i bias = _mm256_set1_epi32(127);
    y = _mm256_mul_ps(y, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23)));
    y = _mm256_mul_ps(y, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23)));
    return _mm256_blendv_ps(y, _mm256_set1_ps(INFINITY), over);
}

PL_AVX2 static double a_sum_sq(const float *x, int64_t n) {
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + i + 8);
        s0 = _mm256_fmadd_ps(a, a, s0);
        s1 = _mm256_fmadd_ps(b, b, s1);
    }
    double sum = (double)hsum(_mm256_add_ps(s0, s1));
    for (; i < n; i++) sum += (double)(x[i] * x[i]);
    return sum;
}

PL_AVX2 static void a_scale_mul(const float *x, float s, const float *w, float *y, int64_t n) {
    const __m256 vs = _mm256_set1_ps(s);
    int64_t i = 0;
    if (w) {
        for (; i + 8 <= n; i += 8)
            _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), vs), _mm256_loadu_ps(w + i)));
        for (; i < n; i++) y[i] = (x[i] * s) * w[i];
    } else {
        for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), vs));
        for (; i < n; i++) y[i] = x[i] * s;
    }
}

PL_AVX2 static void a_add(const float *a, const float *b, float *y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_add_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
    for (; i < n; i++) y[i] = a[i] + b[i];
}

PL_AVX2 static void a_mul(const float *a, const float *b, float *y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
    for (; i < n; i++) y[i] = a[i] * b[i];
}

PL_AVX2 static void a_silu_mul(const float *g, const float *u, float *y, int64_t n) {
    const __m256 one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 gv = _mm256_loadu_ps(g + i);
        const __m256 e = exp8(_mm256_sub_ps(zero, gv));
        _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_div_ps(gv, _mm256_add_ps(one, e)), _mm256_loadu_ps(u + i)));
    }
    for (; i < n; i++) y[i] = g[i] / (1.0f + expf(-g[i])) * u[i];
}

PL_AVX2 static float a_max(const float *x, int64_t n) {
    __m256 m = _mm256_set1_ps(-INFINITY);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) m = _mm256_max_ps(m, _mm256_loadu_ps(x + i));
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_movehdup_ps(h));
    float r = _mm_cvtss_f32(h);
    for (; i < n; i++) r = x[i] > r ? x[i] : r;
    return r;
}

PL_AVX2 static double a_exp_sum(const float *x, float m, float *y, int64_t n) {
    const __m256 vm = _mm256_set1_ps(m);
    __m256 s = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm));
        _mm256_storeu_ps(y + i, e);
        s = _mm256_add_ps(s, e);
    }
    double sum = (double)hsum(s);
    for (; i < n; i++) {
        y[i] = expf(x[i] - m);
        sum += (double)y[i];
    }
    return sum;
}

PL_AVX2 static inline __m256 load_f16(const uint16_t *p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)); }

PL_AVX2 static void a_axpy_f32(float a, const float *x, float *y, int64_t n) {
    const __m256 va = _mm256_set1_ps(a);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
    for (; i < n; i++) y[i] += a * x[i];
}

PL_AVX2 static void a_axpy_f16(float a, const uint16_t *x, float *y, int64_t n) {
    const __m256 va = _mm256_set1_ps(a);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, load_f16(x + i), _mm256_loadu_ps(y + i)));
    for (; i < n; i++) y[i] += a * _cvtsh_ss(x[i]);
}

/* f16 rounding of 8 lanes: to nearest even and back, as pl_f32_to_f16 /
 * pl_f16_to_f32 do for finite values */
PL_AVX2 static inline __m256 round_f16(__m256 v) { return _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT)); }
static inline float round_f16_1(float v) { return pl_f16_to_f32(pl_f32_to_f16(v)); }

PL_AVX2 static void a_scale_round_f16(const float *x, float s, float *y, int64_t n) {
    const __m256 vs = _mm256_set1_ps(s);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, round_f16(_mm256_mul_ps(_mm256_loadu_ps(x + i), vs)));
    for (; i < n; i++) y[i] = round_f16_1(x[i] * s);
}

PL_AVX2 static void a_mad_round_f16(float a, const uint16_t *x, float *y, int64_t n) {
    const __m256 va = _mm256_set1_ps(a);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, round_f16(_mm256_fmadd_ps(load_f16(x + i), va, _mm256_loadu_ps(y + i))));
    for (; i < n; i++) y[i] = round_f16_1(fmaf(pl_f16_to_f32(x[i]), a, y[i]));
}

/* flash_rows_f16 (F16: f16 rows, the sum rounded to f16 at each step) and
 * flash_rows_f32 (f32 rows, no rounding) over NV whole vectors (8 lanes
 * each) of y kept in registers across the rows; always_inline with
 * constant NV and F16 */
PL_AVX2 static inline __attribute__((always_inline)) __m256 flash_round8(__m256 v, const int F16) {
    return F16 ? round_f16(v) : v;
}

PL_AVX2 static inline __attribute__((always_inline)) void flash_chunk8(const float *vs, const float *ms, const void *x,
                                                                        int64_t stride, int64_t n_rows, float *y,
                                                                        const int NV, const int F16) {
    __m256 acc[8];
    for (int k = 0; k < NV; k++) acc[k] = _mm256_loadu_ps(y + 8 * k);
    for (int64_t r = 0; r < n_rows; r++) {
        if (ms[r] != 1.0f) {
            const __m256 m = _mm256_set1_ps(ms[r]);
            for (int k = 0; k < NV; k++) acc[k] = flash_round8(_mm256_mul_ps(acc[k], m), F16);
        }
        const __m256 a = _mm256_set1_ps(vs[r]);
        for (int k = 0; k < NV; k++) {
            const __m256 v = F16 ? load_f16((const uint16_t *)x + r * stride + 8 * k)
                                 : _mm256_loadu_ps((const float *)x + r * stride + 8 * k);
            acc[k] = flash_round8(_mm256_fmadd_ps(v, a, acc[k]), F16);
        }
    }
    for (int k = 0; k < NV; k++) _mm256_storeu_ps(y + 8 * k, acc[k]);
}

/* The whole vectors of a fold, 64 columns a call; returns the first
 * column left to the caller's scalar tail (n % 8 of them). */
PL_AVX2 static inline __attribute__((always_inline)) int64_t flash_vectors8(const float *vs, const float *ms, const void *x,
                                                                             int64_t stride, int64_t n_rows, float *y,
                                                                             int64_t n, const int F16) {
    const size_t esz = F16 ? 2 : 4;
    int64_t c = 0;
    for (; c + 8 <= n; c += 64) {
        const int64_t nv = (n - c) / 8 < 8 ? (n - c) / 8 : 8;
#define PL_FLASH8(NV) flash_chunk8(vs, ms, (const char *)x + (size_t)c * esz, stride, n_rows, y + c, NV, F16)
        PL_ISA_NV_SWITCH(nv, PL_FLASH8);
#undef PL_FLASH8
        if (nv < 8) return c + 8 * nv;
    }
    return c < n ? c : n;
}

PL_AVX2 static void a_flash_rows_f16(const float *vs, const float *ms, const uint16_t *x, int64_t stride, int64_t n_rows,
                                     float *y, int64_t n) {
    const int64_t c = flash_vectors8(vs, ms, x, stride, n_rows, y, n, 1);
    /* the last n % 8 columns, scalar */
    for (int64_t r = 0; c < n && r < n_rows; r++)
        for (int64_t d = c; d < n; d++) {
            if (ms[r] != 1.0f) y[d] = round_f16_1(y[d] * ms[r]);
            y[d] = round_f16_1(fmaf(pl_f16_to_f32(x[r * stride + d]), vs[r], y[d]));
        }
}

PL_AVX2 static void a_flash_rows_f32(const float *vs, const float *ms, const float *x, int64_t stride, int64_t n_rows,
                                     float *y, int64_t n) {
    const int64_t c = flash_vectors8(vs, ms, x, stride, n_rows, y, n, 0);
    /* the last n % 8 columns, scalar */
    for (int64_t r = 0; c < n && r < n_rows; r++)
        for (int64_t d = c; d < n; d++) {
            if (ms[r] != 1.0f) y[d] = y[d] * ms[r];
            y[d] = fmaf(x[r * stride + d], vs[r], y[d]);
        }
}

/* flash_weights: v_flash_weights's steps (isa_avx512.c), 8 scores a step */
PL_AVX2 static inline __m128 expf4_model(__m128 x) {
    const __m256d xd = _mm256_cvtps_pd(x), inv = _mm256_set1_pd(PL_EXPF_INVLN2N), sh = _mm256_set1_pd(PL_EXPF_SHIFT);
    const __m256d z = _mm256_fmadd_pd(inv, xd, sh);
    const __m256i ki = _mm256_castpd_si256(z);
    const __m256d r = _mm256_fmsub_pd(inv, xd, _mm256_sub_pd(z, sh));
    const __m256i tab = _mm256_i64gather_epi64((const long long *)pl_expf_tab, _mm256_and_si256(ki, _mm256_set1_epi64x(31)), 8);
    const __m256d s = _mm256_castsi256_pd(_mm256_add_epi64(tab, _mm256_slli_epi64(ki, 47)));
    const __m256d p = _mm256_fmadd_pd(_mm256_set1_pd(PL_EXPF_C0), r, _mm256_set1_pd(PL_EXPF_C1));
    const __m256d y = _mm256_fmadd_pd(p, _mm256_mul_pd(r, r),
                                      _mm256_fmadd_pd(_mm256_set1_pd(PL_EXPF_C2), r, _mm256_set1_pd(1.0)));
    return _mm256_cvtpd_ps(_mm256_mul_pd(y, s));
}

PL_AVX2 static void a_flash_weights(float *w, float *ms, int64_t n, float *M, float *S) {
    const __m256 ninf = _mm256_set1_ps(-INFINITY), one = _mm256_set1_ps(1.0f);
    float m = *M, sum = *S;
    int64_t p = 0;
    for (; p + 8 <= n; p += 8) {
        const __m256 x = _mm256_loadu_ps(w + p);
        if (_mm256_movemask_ps(_mm256_cmp_ps(x, x, _CMP_UNORD_Q))) {
            pl_flash_steps(w + p, ms + p, 8, &m, &sum);
            continue;
        }
        /* inclusive prefix maximum, the earlier lanes always max_ps's second operand */
        __m256 incl = x;
        incl = _mm256_max_ps(incl, _mm256_blend_ps(_mm256_permutevar8x32_ps(incl, _mm256_setr_epi32(0, 0, 1, 2, 3, 4, 5, 6)), ninf, 0x01));
        incl = _mm256_max_ps(incl, _mm256_blend_ps(_mm256_permutevar8x32_ps(incl, _mm256_setr_epi32(0, 0, 0, 1, 2, 3, 4, 5)), ninf, 0x03));
        incl = _mm256_max_ps(incl, _mm256_blend_ps(_mm256_permutevar8x32_ps(incl, _mm256_setr_epi32(0, 0, 0, 0, 0, 1, 2, 3)), ninf, 0x0f));
        const __m256 before = _mm256_max_ps(
            _mm256_blend_ps(_mm256_permutevar8x32_ps(incl, _mm256_setr_epi32(0, 0, 1, 2, 3, 4, 5, 6)), ninf, 0x01),
            _mm256_set1_ps(m));
        const __m256 gt = _mm256_cmp_ps(x, before, _CMP_GT_OQ);
        const __m256 arg = _mm256_blendv_ps(_mm256_sub_ps(x, before), _mm256_sub_ps(before, x), gt);
        __m256 e = _mm256_set_m128(expf4_model(_mm256_extractf128_ps(arg, 1)), expf4_model(_mm256_castps256_ps128(arg)));
        const __m256i top = _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(arg), 20), _mm256_set1_epi32(0x7ff));
        int slow = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(top, _mm256_set1_epi32(PL_EXPF_TOP_LIMIT - 1))));
        if (slow) {
            float a[8], ev[8];
            _mm256_storeu_ps(a, arg);
            _mm256_storeu_ps(ev, e);
            for (; slow; slow &= slow - 1) {
                const int i = __builtin_ctz((unsigned)slow);
                ev[i] = expf(a[i]);
            }
            e = _mm256_loadu_ps(ev);
        }
        _mm256_storeu_ps(ms + p, _mm256_blendv_ps(one, e, gt));
        _mm256_storeu_ps(w + p, _mm256_blendv_ps(e, one, gt));
        const float last = _mm256_cvtss_f32(_mm256_permutevar8x32_ps(incl, _mm256_set1_epi32(7)));
        if (last > m) m = last;
        sum = pl_flash_block_sum(w + p, ms + p, 8, _mm256_movemask_ps(gt) != 0, sum);
    }
    pl_flash_steps(w + p, ms + p, n - p, &m, &sum);
    *M = m;
    *S = sum;
}

/* flash_rows2_f16: two heads, NV vectors each (16 ymm registers in all:
 * NV <= 4 leaves room for the row and the weights) */
PL_AVX2 static inline __attribute__((always_inline)) void flash_chunk8x2(const float *vsa, const float *msa,
                                                                          const float *vsb, const float *msb,
                                                                          const uint16_t *x, int64_t stride,
                                                                          int64_t n_rows, float *ya, float *yb,
                                                                          const int NV) {
    __m256 aa[4], ab[4];
    for (int k = 0; k < NV; k++) aa[k] = _mm256_loadu_ps(ya + 8 * k), ab[k] = _mm256_loadu_ps(yb + 8 * k);
    for (int64_t r = 0; r < n_rows; r++) {
        if (msa[r] != 1.0f) {
            const __m256 m = _mm256_set1_ps(msa[r]);
            for (int k = 0; k < NV; k++) aa[k] = round_f16(_mm256_mul_ps(aa[k], m));
        }
        if (msb[r] != 1.0f) {
            const __m256 m = _mm256_set1_ps(msb[r]);
            for (int k = 0; k < NV; k++) ab[k] = round_f16(_mm256_mul_ps(ab[k], m));
        }
        const __m256 a = _mm256_set1_ps(vsa[r]), b = _mm256_set1_ps(vsb[r]);
        const uint16_t *xr = x + r * stride;
        for (int k = 0; k < NV; k++) {
            const __m256 v = load_f16(xr + 8 * k);
            aa[k] = round_f16(_mm256_fmadd_ps(v, a, aa[k]));
            ab[k] = round_f16(_mm256_fmadd_ps(v, b, ab[k]));
        }
    }
    for (int k = 0; k < NV; k++) _mm256_storeu_ps(ya + 8 * k, aa[k]), _mm256_storeu_ps(yb + 8 * k, ab[k]);
}

PL_AVX2 static void a_flash_rows2_f16(const float *vsa, const float *msa, const float *vsb, const float *msb,
                                      const uint16_t *x, int64_t stride, int64_t n_rows, float *ya, float *yb, int64_t n) {
    int64_t c = 0;
    for (; c + 32 <= n; c += 32) flash_chunk8x2(vsa, msa, vsb, msb, x + c, stride, n_rows, ya + c, yb + c, 4);
    const int64_t nv = (n - c) / 8;
    if (nv == 3) flash_chunk8x2(vsa, msa, vsb, msb, x + c, stride, n_rows, ya + c, yb + c, 3);
    else if (nv == 2) flash_chunk8x2(vsa, msa, vsb, msb, x + c, stride, n_rows, ya + c, yb + c, 2);
    else if (nv == 1) flash_chunk8x2(vsa, msa, vsb, msb, x + c, stride, n_rows, ya + c, yb + c, 1);
    c += 8 * nv;
    if (c < n) {
        a_flash_rows_f16(vsa, msa, x + c, stride, n_rows, ya + c, n - c);
        a_flash_rows_f16(vsb, msb, x + c, stride, n_rows, yb + c, n - c);
    }
}

/* ---- non-causal attention, PL_ATTN_QB = 16 queries = two vectors ------ */

#define PL_AVX2_INLINE PL_AVX2 static inline __attribute__((always_inline))

/* scores of 6 rows at a time, two accumulators (16 queries) per row */
PL_AVX2 static void a_attn_scores_f32(const float *qt, const float *x, int64_t stride, int64_t n_rows, int64_t n, float scale,
                                      float *s, float *m) {
    const __m256 vs = _mm256_set1_ps(scale);
    __m256 mx0 = _mm256_set1_ps(-INFINITY), mx1 = mx0;
    int64_t r = 0;
    for (; r + 6 <= n_rows; r += 6) {
        const float *xr = x + r * stride;
        __m256 acc[6][2];
        _Pragma("GCC unroll 6") for (int k = 0; k < 6; k++) acc[k][0] = acc[k][1] = _mm256_setzero_ps();
        for (int64_t d = 0; d < n; d++) {
            const __m256 q0 = _mm256_loadu_ps(qt + d * PL_ATTN_QB), q1 = _mm256_loadu_ps(qt + d * PL_ATTN_QB + 8);
            _Pragma("GCC unroll 6") for (int k = 0; k < 6; k++) {
                const __m256 b = _mm256_broadcast_ss(xr + k * stride + d);
                acc[k][0] = _mm256_fmadd_ps(b, q0, acc[k][0]);
                acc[k][1] = _mm256_fmadd_ps(b, q1, acc[k][1]);
            }
        }
        _Pragma("GCC unroll 6") for (int k = 0; k < 6; k++) {
            const __m256 v0 = _mm256_mul_ps(acc[k][0], vs), v1 = _mm256_mul_ps(acc[k][1], vs);
            _mm256_storeu_ps(s + (r + k) * PL_ATTN_QB, v0);
            _mm256_storeu_ps(s + (r + k) * PL_ATTN_QB + 8, v1);
            mx0 = _mm256_max_ps(mx0, v0), mx1 = _mm256_max_ps(mx1, v1);
        }
    }
    for (; r < n_rows; r++) {
        const float *xr = x + r * stride;
        __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
        for (int64_t d = 0; d < n; d++) {
            const __m256 b = _mm256_broadcast_ss(xr + d);
            a0 = _mm256_fmadd_ps(b, _mm256_loadu_ps(qt + d * PL_ATTN_QB), a0);
            a1 = _mm256_fmadd_ps(b, _mm256_loadu_ps(qt + d * PL_ATTN_QB + 8), a1);
        }
        const __m256 v0 = _mm256_mul_ps(a0, vs), v1 = _mm256_mul_ps(a1, vs);
        _mm256_storeu_ps(s + r * PL_ATTN_QB, v0);
        _mm256_storeu_ps(s + r * PL_ATTN_QB + 8, v1);
        mx0 = _mm256_max_ps(mx0, v0), mx1 = _mm256_max_ps(mx1, v1);
    }
    if (m) {
        _mm256_storeu_ps(m, _mm256_max_ps(mx0, _mm256_loadu_ps(m)));
        _mm256_storeu_ps(m + 8, _mm256_max_ps(mx1, _mm256_loadu_ps(m + 8)));
    }
}

/* 4 queries x nv (1 or 2) vectors of 8 columns, in registers over all the
 * rows */
PL_AVX2_INLINE void a_values_tile(const float *w, const float *x, int64_t stride, int64_t n_rows, int64_t n, float *o, const int nv) {
    __m256 acc[4][2];
    _Pragma("GCC unroll 4") for (int g = 0; g < 4; g++)
        _Pragma("GCC unroll 2") for (int v = 0; v < nv; v++) acc[g][v] = _mm256_loadu_ps(o + g * n + 8 * v);
    for (int64_t r = 0; r < n_rows; r++) {
        const float *xr = x + r * stride, *wr = w + r * PL_ATTN_QB;
        __m256 xv[2];
        _Pragma("GCC unroll 2") for (int v = 0; v < nv; v++) xv[v] = _mm256_loadu_ps(xr + 8 * v);
        _Pragma("GCC unroll 4") for (int g = 0; g < 4; g++) {
            const __m256 wg = _mm256_broadcast_ss(wr + g);
            _Pragma("GCC unroll 2") for (int v = 0; v < nv; v++) acc[g][v] = _mm256_fmadd_ps(wg, xv[v], acc[g][v]);
        }
    }
    _Pragma("GCC unroll 4") for (int g = 0; g < 4; g++)
        _Pragma("GCC unroll 2") for (int v = 0; v < nv; v++) _mm256_storeu_ps(o + g * n + 8 * v, acc[g][v]);
}

/* the columns 16 at a time, then 8, then one by one */
PL_AVX2 static void a_attn_values_f32(float *w, const float *m, double *sum, const float *x, int64_t stride, int64_t n_rows,
                                      int64_t n, float *o) {
    /* a row of weights is two vectors: e^(s - m), summed in f64 quarters */
    const __m256 m0 = _mm256_loadu_ps(m), m1 = _mm256_loadu_ps(m + 8);
    __m256d sd[4];
    _Pragma("GCC unroll 4") for (int k = 0; k < 4; k++) sd[k] = _mm256_loadu_pd(sum + 4 * k);
    for (int64_t r = 0; r < n_rows; r++) {
        float *wr = w + r * PL_ATTN_QB;
        const __m256 e0 = exp8(_mm256_sub_ps(_mm256_loadu_ps(wr), m0)), e1 = exp8(_mm256_sub_ps(_mm256_loadu_ps(wr + 8), m1));
        _mm256_storeu_ps(wr, e0);
        _mm256_storeu_ps(wr + 8, e1);
        sd[0] = _mm256_add_pd(sd[0], _mm256_cvtps_pd(_mm256_castps256_ps128(e0)));
        sd[1] = _mm256_add_pd(sd[1], _mm256_cvtps_pd(_mm256_extractf128_ps(e0, 1)));
        sd[2] = _mm256_add_pd(sd[2], _mm256_cvtps_pd(_mm256_castps256_ps128(e1)));
        sd[3] = _mm256_add_pd(sd[3], _mm256_cvtps_pd(_mm256_extractf128_ps(e1, 1)));
    }
    _Pragma("GCC unroll 4") for (int k = 0; k < 4; k++) _mm256_storeu_pd(sum + 4 * k, sd[k]);
    int64_t c = 0;
    for (; c + 16 <= n; c += 16)
        for (int i0 = 0; i0 < PL_ATTN_QB; i0 += 4) a_values_tile(w + i0, x + c, stride, n_rows, n, o + i0 * n + c, 2);
    if (c + 8 <= n) {
        for (int i0 = 0; i0 < PL_ATTN_QB; i0 += 4) a_values_tile(w + i0, x + c, stride, n_rows, n, o + i0 * n + c, 1);
        c += 8;
    }
    for (; c < n; c++)
        for (int i = 0; i < PL_ATTN_QB; i++) {
            float acc = o[i * n + c];
            for (int64_t r = 0; r < n_rows; r++) acc = fmaf(w[r * PL_ATTN_QB + i], x[r * stride + c], acc);
            o[i * n + c] = acc;
        }
}

/* gelu_erf: cpu_erf.h's model, four lanes of double at a time */
PL_AVX2 static inline __m128 erf_half_avx2(__m128 s) {
    const __m256d c = _mm256_min_pd(_mm256_set1_pd(4.0), _mm256_max_pd(_mm256_set1_pd(-4.0), _mm256_cvtps_pd(s)));
    const __m256d t = _mm256_sub_pd(_mm256_mul_pd(_mm256_mul_pd(c, c), _mm256_set1_pd(0.125)), _mm256_set1_pd(1.0));
    __m256d p = _mm256_set1_pd(pl_erf_coef[PL_ERF_NCOEF - 1]);
    for (int k = PL_ERF_NCOEF - 2; k >= 0; k--) p = _mm256_fmadd_pd(p, t, _mm256_set1_pd(pl_erf_coef[k]));
    return _mm256_cvtpd_ps(_mm256_mul_pd(c, p));
}

PL_AVX2 static inline __m256 gelu_erf8(__m256 x) {
    const __m256 s = _mm256_mul_ps(x, _mm256_set1_ps(PL_ERF_SQRT_2_INV));
    const __m256 e = _mm256_set_m128(erf_half_avx2(_mm256_extractf128_ps(s, 1)), erf_half_avx2(_mm256_castps256_ps128(s)));
    const __m256 y = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), x), _mm256_add_ps(_mm256_set1_ps(1.0f), e));
    return _mm256_blendv_ps(y, _mm256_set1_ps(-0.0f), _mm256_cmp_ps(x, _mm256_set1_ps(-INFINITY), _CMP_EQ_OQ));
}

PL_AVX2 static void a_gelu_erf(const float *x, float *y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, gelu_erf8(_mm256_loadu_ps(x + i)));
    if (i < n) {
        /* the tail through a padded block: the same lanes' arithmetic */
        float b[8] = {0};
        for (int64_t k = i; k < n; k++) b[k - i] = x[k];
        _mm256_storeu_ps(b, gelu_erf8(_mm256_loadu_ps(b)));
        for (int64_t k = i; k < n; k++) y[k] = b[k - i];
    }
}

static const pl_cpu_isa avx2 = {
    .name = "avx2",
    .f16_dot_tier = PL_TIER_AVX2,
    .sum_sq = a_sum_sq,
    .scale_mul = a_scale_mul,
    .add = a_add,
    .mul = a_mul,
    .silu_mul = a_silu_mul,
    .max = a_max,
    .exp_sum = a_exp_sum,
    .axpy_f32 = a_axpy_f32,
    .axpy_f16 = a_axpy_f16,
    .scale_round_f16 = a_scale_round_f16,
    .mad_round_f16 = a_mad_round_f16,
    .flash_rows_f16 = a_flash_rows_f16,
    .flash_rows2_f16 = a_flash_rows2_f16,
    .flash_weights = a_flash_weights,
    .flash_rows_f32 = a_flash_rows_f32,
    .attn_scores_f32 = a_attn_scores_f32,
    .attn_values_f32 = a_attn_values_f32,
    .gelu_erf = a_gelu_erf,
};

const pl_cpu_isa *pl_cpu_isa_avx2(void) { return &avx2; }

#else

const pl_cpu_isa *pl_cpu_isa_avx2(void) { return 0; }

#endif
