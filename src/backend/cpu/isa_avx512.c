/*
 * isa_avx512.c -- the row kernels for x86-64 with AVX-512 F/BW/VL (plus
 * FMA and F16C), compiled through function target attributes and chosen at
 * run time.  Tails are handled with masked loads and stores.
 */
#include "backend/cpu/cpu_isa.h"
#include "quant/blocks.h"
#include "quant/kernels.h"
#include "ops/ref.h"

#if defined(__x86_64__)

#include <immintrin.h>
#include <math.h>

#include "backend/cpu/cpu_erf.h"
#include "backend/cpu/cpu_expf.h"
#include "backend/cpu/cpu_flash_steps.h"


#define PL_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c")))

PL_AVX512 static inline __mmask16 tail_mask(int64_t left) {
    return left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1);
}

/* e^x as in isa_avx2.c (Cephes polynomial, power of two in two halves). */
PL_AVX512 static inline __m512 exp16(__m512 x) {
    const __m512 max_x = _mm512_set1_ps(88.72283935546875f);
    const __mmask16 over = _mm512_cmp_ps_mask(x, max_x, _CMP_GT_OQ);
    x = _mm512_max_ps(_mm512_min_ps(x, max_x), _mm512_set1_ps(-104.0f));
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.9875691500e-4f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    __m512 y = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    const __m512i ni = _mm512_cvtps_epi32(n);
    const __m512i n1 = _mm512_srai_epi32(ni, 1), n2 = _mm512_sub_epi32(ni, n1);
    const __m512i bias = _mm512_set1_epi32(127);
    y = _mm512_mul_ps(y, _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n1, bias), 23)));
    y = _mm512_mul_ps(y, _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n2, bias), 23)));
    return _mm512_mask_blend_ps(over, y, _mm512_set1_ps(INFINITY));
}

PL_AVX512 static double v_sum_sq(const float *x, int64_t n) {
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m512 a = _mm512_loadu_ps(x + i), b = _mm512_loadu_ps(x + i + 16);
        s0 = _mm512_fmadd_ps(a, a, s0);
        s1 = _mm512_fmadd_ps(b, b, s1);
    }
    for (; i < n; i += 16) {
        const __m512 a = _mm512_maskz_loadu_ps(tail_mask(n - i), x + i);
        s0 = _mm512_fmadd_ps(a, a, s0);
    }
    return (double)_mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
}

PL_AVX512 static void v_scale_mul(const float *x, float s, const float *w, float *y, int64_t n) {
    const __m512 vs = _mm512_set1_ps(s);
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = tail_mask(n - i);
        __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + i), vs);
        if (w) v = _mm512_mul_ps(v, _mm512_maskz_loadu_ps(m, w + i));
        _mm512_mask_storeu_ps(y + i, m, v);
    }
}

PL_AVX512 static void v_add(const float *a, const float *b, float *y, int64_t n) {
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = tail_mask(n - i);
        _mm512_mask_storeu_ps(y + i, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i)));
    }
}

PL_AVX512 static void v_mul(const float *a, const float *b, float *y, int64_t n) {
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = tail_mask(n - i);
        _mm512_mask_storeu_ps(y + i, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i)));
    }
}

PL_AVX512 static void v_silu_mul(const float *g, const float *u, float *y, int64_t n) {
    const __m512 one = _mm512_set1_ps(1.0f), zero = _mm512_setzero_ps();
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = tail_mask(n - i);
        const __m512 gv = _mm512_maskz_loadu_ps(m, g + i);
        const __m512 e = exp16(_mm512_sub_ps(zero, gv));
        const __m512 r = _mm512_mul_ps(_mm512_div_ps(gv, _mm512_add_ps(one, e)), _mm512_maskz_loadu_ps(m, u + i));
        _mm512_mask_storeu_ps(y + i, m, r);
    }
}

PL_AVX512 static float v_max(const float *x, int64_t n) {
    __m512 mx = _mm512_set1_ps(-INFINITY);
    for (int64_t i = 0; i < n; i += 16) mx = _mm512_mask_max_ps(mx, tail_mask(n - i), mx, _mm512_maskz_loadu_ps(tail_mask(n - i), x + i));
    return _mm512_reduce_max_ps(mx);
}

PL_AVX512 static double v_exp_sum(const float *x, float mx, float *y, int64_t n) {
    const __m512 vm = _mm512_set1_ps(mx);
    __m512 s = _mm512_setzero_ps();
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = tail_mask(n - i);
        const __m512 e = _mm512_maskz_mov_ps(m, exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), vm)));
        _mm512_mask_storeu_ps(y + i, m, e);
        s = _mm512_add_ps(s, e);
    }
    return (double)_mm512_reduce_add_ps(s);
}

PL_AVX512 static inline __m512 load_f16(const uint16_t *p, __mmask16 m) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p));
}

PL_AVX512 static void v_axpy_f32(float a, const float *x, float *y, int64_t n) {
    const __m512 va = _mm512_set1_ps(a);
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = tail_mask(n - i);
        _mm512_mask_storeu_ps(y + i, m, _mm512_fmadd_ps(va, _mm512_maskz_loadu_ps(m, x + i), _mm512_maskz_loadu_ps(m, y + i)));
    }
}

PL_AVX512 static void v_axpy_f16(float a, const uint16_t *x, float *y, int64_t n) {
    const __m512 va = _mm512_set1_ps(a);
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = tail_mask(n - i);
        _mm512_mask_storeu_ps(y + i, m, _mm512_fmadd_ps(va, load_f16(x + i, m), _mm512_maskz_loadu_ps(m, y + i)));
    }
}

/* How many rows ahead the row kernels prefetch: the rows of one head sit
 * a cache row apart (kv_dim elements), a stride the hardware prefetchers
 * follow poorly, and attention has nothing else to overlap the misses. */
#define PL_ROW_PREFETCH 24

/* axpy_rows_f16 on nv whole vectors (a compile-time count where inlined):
 * the accumulators stay in registers */
PL_AVX512 __attribute__((always_inline)) static inline void axpy_rows_f16_full(const float *a, const uint16_t *x, int64_t stride,
                                                                           int64_t n_rows, float *y, const int nv) {
    __m512 acc[8];
    for (int v = 0; v < nv; v++) acc[v] = _mm512_loadu_ps(y + 16 * v);
    for (int64_t r = 0; r < n_rows; r++) {
        const uint16_t *xr = x + r * stride;
        pl_prefetch_bytes(xr + PL_ROW_PREFETCH * stride, 32 * nv);
        const __m512 va = _mm512_set1_ps(a[r]);
        for (int v = 0; v < nv; v++)
            acc[v] = _mm512_fmadd_ps(va, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(xr + 16 * v))), acc[v]);
    }
    for (int v = 0; v < nv; v++) _mm512_storeu_ps(y + 16 * v, acc[v]);
}

/* axpy_f16 over many rows: 128 columns of y at a time live in eight
 * registers while every row is added (one fma per element per row, rows in
 * order, as axpy_f16 does), so y is loaded and stored once per column
 * block instead of once per row -- attention's weighted sum of V rows. */
PL_AVX512 static void v_axpy_rows_f16(const float *a, const uint16_t *x, int64_t stride, int64_t n_rows, float *y,
                                      int64_t n) {
    for (int64_t c0 = 0; c0 < n; c0 += 128) {
        const int64_t nc = n - c0 < 128 ? n - c0 : 128, nv = (nc + 15) / 16;
        if (nc == 128) { /* whole blocks (all of the common head size) with a fixed register count */
            axpy_rows_f16_full(a, x + c0, stride, n_rows, y + c0, 8);
            continue;
        }
        __m512 acc[8];
        __mmask16 m[8];
        for (int64_t v = 0; v < nv; v++) {
            m[v] = tail_mask(nc - 16 * v);
            acc[v] = _mm512_maskz_loadu_ps(m[v], y + c0 + 16 * v);
        }
        for (int64_t r = 0; r < n_rows; r++) {
            const __m512 va = _mm512_set1_ps(a[r]);
            const uint16_t *xr = x + r * stride + c0;
            pl_prefetch_bytes(xr + PL_ROW_PREFETCH * stride, 2 * nc);
            for (int64_t v = 0; v < nv; v++) acc[v] = _mm512_fmadd_ps(va, load_f16(xr + 16 * v, m[v]), acc[v]);
        }
        for (int64_t v = 0; v < nv; v++) _mm512_mask_storeu_ps(y + c0 + 16 * v, m[v], acc[v]);
    }
}

/* dot_rows_f16 for n = 128, the common head size: q in eight registers,
 * the same four accumulators and final sum as the general loop below
 * (two 64-element steps, no 16-element step, no tail). */
PL_AVX512 static void dot_rows_f16_128(const uint16_t *x, int64_t stride, int64_t n_rows, const uint16_t *q, float *y) {
    const __m512 q0 = load_f16(q, 0xffff), q1 = load_f16(q + 16, 0xffff), q2 = load_f16(q + 32, 0xffff),
                 q3 = load_f16(q + 48, 0xffff), q4 = load_f16(q + 64, 0xffff), q5 = load_f16(q + 80, 0xffff),
                 q6 = load_f16(q + 96, 0xffff), q7 = load_f16(q + 112, 0xffff);
    for (int64_t r = 0; r < n_rows; r++) {
        const uint16_t *xr = x + r * stride;
        pl_prefetch_bytes(xr + PL_ROW_PREFETCH * stride, 256);
        __m512 s0 = _mm512_fmadd_ps(load_f16(xr, 0xffff), q0, _mm512_setzero_ps());
        __m512 s1 = _mm512_fmadd_ps(load_f16(xr + 16, 0xffff), q1, _mm512_setzero_ps());
        __m512 s2 = _mm512_fmadd_ps(load_f16(xr + 32, 0xffff), q2, _mm512_setzero_ps());
        __m512 s3 = _mm512_fmadd_ps(load_f16(xr + 48, 0xffff), q3, _mm512_setzero_ps());
        s0 = _mm512_fmadd_ps(load_f16(xr + 64, 0xffff), q4, s0);
        s1 = _mm512_fmadd_ps(load_f16(xr + 80, 0xffff), q5, s1);
        s2 = _mm512_fmadd_ps(load_f16(xr + 96, 0xffff), q6, s2);
        s3 = _mm512_fmadd_ps(load_f16(xr + 112, 0xffff), q7, s3);
        y[r] = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
    }
}

/* The f16 vec_dot of quant/kernels_avx512.c (the same four accumulators
 * over 64-element steps, 16-element steps into the first, the masked tail
 * into the second, the same final sum), row after row against one q held
 * in f32 registers. */
PL_AVX512 static void v_dot_rows_f16(const uint16_t *x, int64_t stride, int64_t n_rows, const uint16_t *q, int64_t n,
                                     float *y) {
    if (n == 128) {
        dot_rows_f16_128(x, stride, n_rows, q, y);
        return;
    }
    __m512 qv[PL_MAX_HEAD_DIM / 16];
    for (int64_t i = 0; i < n; i += 16) qv[i / 16] = load_f16(q + i, tail_mask(n - i));
    for (int64_t r = 0; r < n_rows; r++) {
        const uint16_t *xr = x + r * stride;
        pl_prefetch_bytes(xr + PL_ROW_PREFETCH * stride, 2 * n);
        __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
        int64_t i = 0;
        for (; i + 64 <= n; i += 64) {
            s0 = _mm512_fmadd_ps(load_f16(xr + i, 0xffff), qv[i / 16], s0);
            s1 = _mm512_fmadd_ps(load_f16(xr + i + 16, 0xffff), qv[i / 16 + 1], s1);
            s2 = _mm512_fmadd_ps(load_f16(xr + i + 32, 0xffff), qv[i / 16 + 2], s2);
            s3 = _mm512_fmadd_ps(load_f16(xr + i + 48, 0xffff), qv[i / 16 + 3], s3);
        }
        for (; i + 16 <= n; i += 16) s0 = _mm512_fmadd_ps(load_f16(xr + i, 0xffff), qv[i / 16], s0);
        if (i < n) s1 = _mm512_fmadd_ps(load_f16(xr + i, tail_mask(n - i)), qv[i / 16], s1);
        y[r] = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
    }
}

/* Two heads of a grouped-query pair over the same rows: each head's sums
 * are exactly those of dot_rows_f16 / axpy_rows_f16 (the same operations
 * in the same order), the rows are loaded and widened once for both. */
PL_AVX512 static void v_dot_rows2_f16(const uint16_t *x, int64_t stride, int64_t n_rows, const uint16_t *qa,
                                      const uint16_t *qb, int64_t n, float *ya, float *yb) {
    if (n != 128) {
        v_dot_rows_f16(x, stride, n_rows, qa, n, ya);
        v_dot_rows_f16(x, stride, n_rows, qb, n, yb);
        return;
    }
    __m512 a[8], b[8];
    for (int v = 0; v < 8; v++) a[v] = load_f16(qa + 16 * v, 0xffff), b[v] = load_f16(qb + 16 * v, 0xffff);
    for (int64_t r = 0; r < n_rows; r++) {
        const uint16_t *xr = x + r * stride;
        pl_prefetch_bytes(xr + PL_ROW_PREFETCH * stride, 256);
        __m512 xv[8];
        for (int v = 0; v < 8; v++) xv[v] = load_f16(xr + 16 * v, 0xffff);
        __m512 s0 = _mm512_fmadd_ps(xv[0], a[0], _mm512_setzero_ps()), s1 = _mm512_fmadd_ps(xv[1], a[1], _mm512_setzero_ps());
        __m512 s2 = _mm512_fmadd_ps(xv[2], a[2], _mm512_setzero_ps()), s3 = _mm512_fmadd_ps(xv[3], a[3], _mm512_setzero_ps());
        __m512 t0 = _mm512_fmadd_ps(xv[0], b[0], _mm512_setzero_ps()), t1 = _mm512_fmadd_ps(xv[1], b[1], _mm512_setzero_ps());
        __m512 t2 = _mm512_fmadd_ps(xv[2], b[2], _mm512_setzero_ps()), t3 = _mm512_fmadd_ps(xv[3], b[3], _mm512_setzero_ps());
        s0 = _mm512_fmadd_ps(xv[4], a[4], s0), s1 = _mm512_fmadd_ps(xv[5], a[5], s1);
        s2 = _mm512_fmadd_ps(xv[6], a[6], s2), s3 = _mm512_fmadd_ps(xv[7], a[7], s3);
        t0 = _mm512_fmadd_ps(xv[4], b[4], t0), t1 = _mm512_fmadd_ps(xv[5], b[5], t1);
        t2 = _mm512_fmadd_ps(xv[6], b[6], t2), t3 = _mm512_fmadd_ps(xv[7], b[7], t3);
        ya[r] = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
        yb[r] = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(t0, t1), _mm512_add_ps(t2, t3)));
    }
}

PL_AVX512 static void v_axpy_rows2_f16(const float *wa, const float *wb, const uint16_t *x, int64_t stride, int64_t n_rows,
                                       float *ya, float *yb, int64_t n) {
    if (n != 128) {
        v_axpy_rows_f16(wa, x, stride, n_rows, ya, n);
        v_axpy_rows_f16(wb, x, stride, n_rows, yb, n);
        return;
    }
    __m512 a[8], b[8];
    for (int v = 0; v < 8; v++) a[v] = _mm512_loadu_ps(ya + 16 * v), b[v] = _mm512_loadu_ps(yb + 16 * v);
    for (int64_t r = 0; r < n_rows; r++) {
        const uint16_t *xr = x + r * stride;
        pl_prefetch_bytes(xr + PL_ROW_PREFETCH * stride, 256);
        const __m512 va = _mm512_set1_ps(wa[r]), vb = _mm512_set1_ps(wb[r]);
        for (int v = 0; v < 8; v++) {
            const __m512 xv = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(xr + 16 * v)));
            a[v] = _mm512_fmadd_ps(va, xv, a[v]);
            b[v] = _mm512_fmadd_ps(vb, xv, b[v]);
        }
    }
    for (int v = 0; v < 8; v++) _mm512_storeu_ps(ya + 16 * v, a[v]), _mm512_storeu_ps(yb + 16 * v, b[v]);
}

/* y = x * s rounded to f16 and back (F16C rounds to nearest even, as
 * pl_f32_to_f16 does) */
PL_AVX512 static void v_scale_round_f16(const float *x, float s, float *y, int64_t n) {
    const __m512 vs = _mm512_set1_ps(s);
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = tail_mask(n - i);
        const __m256i h = _mm512_cvtps_ph(_mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + i), vs), _MM_FROUND_TO_NEAREST_INT);
        _mm512_mask_storeu_ps(y + i, m, _mm512_cvtph_ps(h));
    }
}

PL_AVX512 static void v_mad_round_f16(float a, const uint16_t *x, float *y, int64_t n) {
    const __m512 va = _mm512_set1_ps(a);
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = tail_mask(n - i);
        const __m512 r = _mm512_fmadd_ps(load_f16(x + i, m), va, _mm512_maskz_loadu_ps(m, y + i));
        _mm512_mask_storeu_ps(y + i, m, _mm512_cvtph_ps(_mm512_cvtps_ph(r, _MM_FROUND_TO_NEAREST_INT)));
    }
}

/* The flash path's V fold over many rows, NV vectors of y held in
 * registers across the rows.  F16 (flash_rows_f16, f16 rows): per row,
 * where ms != 1, y = f16(y * ms) (v_scale_round_f16's operations), then y
 * = f16(fma(x, vs, y)) (v_mad_round_f16's); else (flash_rows_f32, f32
 * rows) the same steps without the rounding.  always_inline with constant
 * NV and F16 so the accumulators stay in registers. */
PL_AVX512 static inline __attribute__((always_inline)) __m512 flash_round16(__m512 v, const int F16) {
    return F16 ? _mm512_cvtph_ps(_mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT)) : v;
}

PL_AVX512 static inline __attribute__((always_inline)) void flash_chunk16(const float *vs, const float *ms, const void *x,
                                                                           int64_t stride, int64_t n_rows, float *y,
                                                                           int64_t n, const int NV, const int F16) {
    __m512 acc[8];
    __mmask16 mk[8];
    for (int k = 0; k < NV; k++) {
        mk[k] = tail_mask(n - 16 * k);
        acc[k] = _mm512_maskz_loadu_ps(mk[k], y + 16 * k);
    }
    for (int64_t r = 0; r < n_rows; r++) {
        if (ms[r] != 1.0f) {
            const __m512 m = _mm512_set1_ps(ms[r]);
            for (int k = 0; k < NV; k++) acc[k] = flash_round16(_mm512_mul_ps(acc[k], m), F16);
        }
        const __m512 a = _mm512_set1_ps(vs[r]);
        for (int k = 0; k < NV; k++) {
            const __m512 v = F16 ? load_f16((const uint16_t *)x + r * stride + 16 * k, mk[k])
                                 : _mm512_maskz_loadu_ps(mk[k], (const float *)x + r * stride + 16 * k);
            acc[k] = flash_round16(_mm512_fmadd_ps(v, a, acc[k]), F16);
        }
    }
    for (int k = 0; k < NV; k++) _mm512_mask_storeu_ps(y + 16 * k, mk[k], acc[k]);
}

PL_AVX512 static void v_flash_rows_f16(const float *vs, const float *ms, const uint16_t *x, int64_t stride,
                                       int64_t n_rows, float *y, int64_t n) {
    for (int64_t c = 0; c < n; c += 128) {
        const int64_t cn = n - c < 128 ? n - c : 128;
#define PL_FLASH16(NV) flash_chunk16(vs, ms, x + c, stride, n_rows, y + c, cn, NV, 1)
        PL_ISA_NV_SWITCH((cn + 15) / 16, PL_FLASH16);
#undef PL_FLASH16
    }
}

PL_AVX512 static void v_flash_rows_f32(const float *vs, const float *ms, const float *x, int64_t stride, int64_t n_rows,
                                       float *y, int64_t n) {
    for (int64_t c = 0; c < n; c += 128) {
        const int64_t cn = n - c < 128 ? n - c : 128;
#define PL_FLASH32(NV) flash_chunk16(vs, ms, x + c, stride, n_rows, y + c, cn, NV, 0)
        PL_ISA_NV_SWITCH((cn + 15) / 16, PL_FLASH32);
#undef PL_FLASH32
    }
}

/* flash_rows_q8_0: the f32 fold over q8_0 rows, each block of 32 decoded
 * in registers (two vectors: q widened to int32, to float, times d) --
 * the product to_float_q8_0 computes -- then fused into the sum */
PL_AVX512 static inline __attribute__((always_inline)) void flash_chunk_q8_0(const float *vs, const float *ms,
                                                                              const uint8_t *x, int64_t stride,
                                                                              int64_t n_rows, float *y, const int NB) {
    __m512 acc[8];
    for (int k = 0; k < 2 * NB; k++) acc[k] = _mm512_loadu_ps(y + 16 * k);
    for (int64_t r = 0; r < n_rows; r++) {
        if (ms[r] != 1.0f) {
            const __m512 m = _mm512_set1_ps(ms[r]);
            for (int k = 0; k < 2 * NB; k++) acc[k] = _mm512_mul_ps(acc[k], m);
        }
        const __m512 a = _mm512_set1_ps(vs[r]);
        const pl_block_q8_0 *b = (const pl_block_q8_0 *)(x + r * stride);
        for (int k = 0; k < NB; k++) {
            const __m512 d = _mm512_set1_ps(_cvtsh_ss(b[k].d));
            const __m512 lo = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)b[k].qs)));
            const __m512 hi = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(b[k].qs + 16))));
            acc[2 * k] = _mm512_fmadd_ps(_mm512_mul_ps(d, lo), a, acc[2 * k]);
            acc[2 * k + 1] = _mm512_fmadd_ps(_mm512_mul_ps(d, hi), a, acc[2 * k + 1]);
        }
    }
    for (int k = 0; k < 2 * NB; k++) _mm512_storeu_ps(y + 16 * k, acc[k]);
}

PL_AVX512 static void v_flash_rows_q8_0(const float *vs, const float *ms, const void *x, int64_t stride, int64_t n_rows,
                                        float *y, int64_t n) {
    const uint8_t *xb = x;
    for (int64_t c = 0; c < n; c += 128) {
        const int64_t nb = (n - c < 128 ? n - c : 128) / 32;
        const uint8_t *xc = xb + c / 32 * sizeof(pl_block_q8_0);
        switch (nb) {
        case 4: flash_chunk_q8_0(vs, ms, xc, stride, n_rows, y + c, 4); break;
        case 3: flash_chunk_q8_0(vs, ms, xc, stride, n_rows, y + c, 3); break;
        case 2: flash_chunk_q8_0(vs, ms, xc, stride, n_rows, y + c, 2); break;
        default: flash_chunk_q8_0(vs, ms, xc, stride, n_rows, y + c, 1); break;
        }
    }
}

/* flash_weights: 16 scores a step.  Each lane's maximum before it (M
 * before that position) is a prefix maximum over the block, started from
 * *M; the e^x of every lane is cpu_expf.h's, in double lanes.  Equal
 * scores pick the earlier one, as the scalar `s > M` does (either way the
 * value is the same).  A block with a NaN score takes the scalar steps
 * (a NaN would spread through the prefix maximum); lanes outside expf's
 * fast path go to libm one by one. */
PL_AVX512 static inline __m256 expf8_model(__m256 x, const __m512i t0, const __m512i t1, const __m512i t2,
                                           const __m512i t3) {
    const __m512d xd = _mm512_cvtps_pd(x), inv = _mm512_set1_pd(PL_EXPF_INVLN2N), sh = _mm512_set1_pd(PL_EXPF_SHIFT);
    const __m512d z = _mm512_fmadd_pd(inv, xd, sh);
    const __m512i ki = _mm512_castpd_si512(z);
    const __m512d r = _mm512_fmsub_pd(inv, xd, _mm512_sub_pd(z, sh));
    /* table entry ki mod 32: entries 0-15 and 16-31 by the low 4 bits, then bit 4 picks */
    const __m512i lo = _mm512_permutex2var_epi64(t0, ki, t1), hi = _mm512_permutex2var_epi64(t2, ki, t3);
    const __m512i tab = _mm512_mask_blend_epi64(_mm512_test_epi64_mask(ki, _mm512_set1_epi64(16)), lo, hi);
    const __m512d s = _mm512_castsi512_pd(_mm512_add_epi64(tab, _mm512_slli_epi64(ki, 47)));
    const __m512d p = _mm512_fmadd_pd(_mm512_set1_pd(PL_EXPF_C0), r, _mm512_set1_pd(PL_EXPF_C1));
    const __m512d y = _mm512_fmadd_pd(p, _mm512_mul_pd(r, r),
                                      _mm512_fmadd_pd(_mm512_set1_pd(PL_EXPF_C2), r, _mm512_set1_pd(1.0)));
    return _mm512_cvtpd_ps(_mm512_mul_pd(y, s));
}

PL_AVX512 static void v_flash_weights(float *w, float *ms, int64_t n, float *M, float *S) {
    const __m512i t0 = _mm512_loadu_si512(pl_expf_tab), t1 = _mm512_loadu_si512(pl_expf_tab + 8),
                  t2 = _mm512_loadu_si512(pl_expf_tab + 16), t3 = _mm512_loadu_si512(pl_expf_tab + 24);
    const __m512 ninf = _mm512_set1_ps(-INFINITY), one = _mm512_set1_ps(1.0f);
    const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    float m = *M, sum = *S;
    int64_t p = 0;
    for (; p + 16 <= n; p += 16) {
        const __m512 x = _mm512_loadu_ps(w + p);
        if (_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q)) {
            pl_flash_steps(w + p, ms + p, 16, &m, &sum);
            continue;
        }
        /* inclusive prefix maximum: max_ps(a, b) returns b unless a > b,
         * and b is always the earlier lanes' */
        __m512 incl = x;
        for (int k = 1; k < 16; k *= 2)
            incl = _mm512_max_ps(incl, _mm512_mask_permutexvar_ps(ninf, (__mmask16)(0xffffu << k),
                                                                   _mm512_sub_epi32(iota, _mm512_set1_epi32(k)), incl));
        const __m512 before = _mm512_max_ps(
            _mm512_mask_permutexvar_ps(ninf, (__mmask16)0xfffe, _mm512_sub_epi32(iota, _mm512_set1_epi32(1)), incl),
            _mm512_set1_ps(m));
        const __mmask16 gt = _mm512_cmp_ps_mask(x, before, _CMP_GT_OQ);
        /* s > M: ms = e^(M - s), vs = 1; else ms = 1, vs = e^(s - M) */
        const __m512 arg = _mm512_mask_sub_ps(_mm512_sub_ps(x, before), gt, before, x);
        const __m256 e_lo = expf8_model(_mm512_castps512_ps256(arg), t0, t1, t2, t3);
        const __m256 e_hi = expf8_model(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(arg), 1)), t0, t1, t2, t3);
        __m512 e = _mm512_castpd_ps(
            _mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(e_lo)), _mm256_castps_pd(e_hi), 1));
        const __m512i top = _mm512_and_si512(_mm512_srli_epi32(_mm512_castps_si512(arg), 20), _mm512_set1_epi32(0x7ff));
        __mmask16 slow = _mm512_cmp_epi32_mask(top, _mm512_set1_epi32(PL_EXPF_TOP_LIMIT), _MM_CMPINT_NLT);
        if (slow) {
            float a[16], ev[16];
            _mm512_storeu_ps(a, arg);
            _mm512_storeu_ps(ev, e);
            for (; slow; slow &= (__mmask16)(slow - 1)) {
                const int i = __builtin_ctz(slow);
                ev[i] = expf(a[i]);
            }
            e = _mm512_loadu_ps(ev);
        }
        _mm512_storeu_ps(ms + p, _mm512_mask_blend_ps(gt, one, e));
        _mm512_storeu_ps(w + p, _mm512_mask_blend_ps(gt, e, one));
        const float last = _mm512_cvtss_f32(_mm512_permutexvar_ps(_mm512_set1_epi32(15), incl));
        if (last > m) m = last;
        sum = pl_flash_block_sum(w + p, ms + p, 16, gt != 0, sum);
    }
    pl_flash_steps(w + p, ms + p, n - p, &m, &sum);
    *M = m;
    *S = sum;
}

/* flash_rows2_f16: flash_chunk16's steps for two heads, 2 NV
 * accumulators in registers (the two heads' chains interleave, hiding
 * each other's conversion latency) */
PL_AVX512 static inline __attribute__((always_inline)) void flash_chunk16x2(const float *vsa, const float *msa,
                                                                             const float *vsb, const float *msb,
                                                                             const uint16_t *x, int64_t stride,
                                                                             int64_t n_rows, float *ya, float *yb,
                                                                             int64_t n, const int NV) {
    __m512 aa[8], ab[8];
    __mmask16 mk[8];
    for (int k = 0; k < NV; k++) {
        mk[k] = tail_mask(n - 16 * k);
        aa[k] = _mm512_maskz_loadu_ps(mk[k], ya + 16 * k);
        ab[k] = _mm512_maskz_loadu_ps(mk[k], yb + 16 * k);
    }
    for (int64_t r = 0; r < n_rows; r++) {
        if (msa[r] != 1.0f) {
            const __m512 m = _mm512_set1_ps(msa[r]);
            for (int k = 0; k < NV; k++)
                aa[k] = _mm512_cvtph_ps(_mm512_cvtps_ph(_mm512_mul_ps(aa[k], m), _MM_FROUND_TO_NEAREST_INT));
        }
        if (msb[r] != 1.0f) {
            const __m512 m = _mm512_set1_ps(msb[r]);
            for (int k = 0; k < NV; k++)
                ab[k] = _mm512_cvtph_ps(_mm512_cvtps_ph(_mm512_mul_ps(ab[k], m), _MM_FROUND_TO_NEAREST_INT));
        }
        const __m512 a = _mm512_set1_ps(vsa[r]), b = _mm512_set1_ps(vsb[r]);
        const uint16_t *xr = x + r * stride;
        for (int k = 0; k < NV; k++) {
            const __m512 v = load_f16(xr + 16 * k, mk[k]);
            aa[k] = _mm512_cvtph_ps(_mm512_cvtps_ph(_mm512_fmadd_ps(v, a, aa[k]), _MM_FROUND_TO_NEAREST_INT));
            ab[k] = _mm512_cvtph_ps(_mm512_cvtps_ph(_mm512_fmadd_ps(v, b, ab[k]), _MM_FROUND_TO_NEAREST_INT));
        }
    }
    for (int k = 0; k < NV; k++) {
        _mm512_mask_storeu_ps(ya + 16 * k, mk[k], aa[k]);
        _mm512_mask_storeu_ps(yb + 16 * k, mk[k], ab[k]);
    }
}

PL_AVX512 static void v_flash_rows2_f16(const float *vsa, const float *msa, const float *vsb, const float *msb,
                                        const uint16_t *x, int64_t stride, int64_t n_rows, float *ya, float *yb,
                                        int64_t n) {
    for (int64_t c = 0; c < n; c += 128) {
        const int64_t cn = n - c < 128 ? n - c : 128;
#define PL_FLASH2(NV) flash_chunk16x2(vsa, msa, vsb, msb, x + c, stride, n_rows, ya + c, yb + c, cn, NV)
        PL_ISA_NV_SWITCH((cn + 15) / 16, PL_FLASH2);
#undef PL_FLASH2
    }
}

/* ---- non-causal attention, PL_ATTN_QB = 16 queries = one vector ------- */

#define PL_AVX512_INLINE PL_AVX512 static inline __attribute__((always_inline))

PL_AVX512_INLINE void prefetch_rows(const float *x, int64_t stride, int64_t n_rows, int64_t n) {
    for (int64_t r = 0; r < n_rows; r++)
        pl_prefetch_bytes(x + r * stride, n * (int64_t)sizeof(float));
}

/* scores of 8 rows at a time, one accumulator (16 queries) per row: a
 * broadcast x element times the row d of qt */
PL_AVX512 static void v_attn_scores_f32(const float *qt, const float *x, int64_t stride, int64_t n_rows, int64_t n, float scale,
                                        float *s, float *m) {
    const __m512 vs = _mm512_set1_ps(scale);
    __m512 mx = _mm512_set1_ps(-INFINITY);
    int64_t r = 0;
    for (; r + 8 <= n_rows; r += 8) {
        const float *xr = x + r * stride;
        if (r + 16 <= n_rows) prefetch_rows(xr + 8 * stride, stride, 8, n);
        __m512 acc[8];
        _Pragma("GCC unroll 8") for (int k = 0; k < 8; k++) acc[k] = _mm512_setzero_ps();
        for (int64_t d = 0; d < n; d++) {
            const __m512 q = _mm512_loadu_ps(qt + d * PL_ATTN_QB);
            _Pragma("GCC unroll 8") for (int k = 0; k < 8; k++) acc[k] = _mm512_fmadd_ps(_mm512_set1_ps(xr[k * stride + d]), q, acc[k]);
        }
        _Pragma("GCC unroll 8") for (int k = 0; k < 8; k++) {
            const __m512 v = _mm512_mul_ps(acc[k], vs);
            _mm512_storeu_ps(s + (r + k) * PL_ATTN_QB, v);
            mx = _mm512_max_ps(mx, v);
        }
    }
    for (; r < n_rows; r++) {
        const float *xr = x + r * stride;
        __m512 acc = _mm512_setzero_ps();
        for (int64_t d = 0; d < n; d++) acc = _mm512_fmadd_ps(_mm512_set1_ps(xr[d]), _mm512_loadu_ps(qt + d * PL_ATTN_QB), acc);
        const __m512 v = _mm512_mul_ps(acc, vs);
        _mm512_storeu_ps(s + r * PL_ATTN_QB, v);
        mx = _mm512_max_ps(mx, v);
    }
    /* the max of the maxima: the same as one running max, in any order */
    if (m) _mm512_storeu_ps(m, _mm512_max_ps(mx, _mm512_loadu_ps(m)));
}

/* 4 queries x nv vectors of columns (the last one masked by lm), in
 * registers over all the rows */
PL_AVX512_INLINE void v_values_tile(const float *w, const float *x, int64_t stride, int64_t n_rows, int64_t n, float *o,
                                    const int nv, __mmask16 lm) {
    __m512 acc[4][4];
    _Pragma("GCC unroll 4") for (int g = 0; g < 4; g++)
        _Pragma("GCC unroll 4") for (int v = 0; v < nv; v++)
            acc[g][v] = _mm512_maskz_loadu_ps(v == nv - 1 ? lm : 0xffff, o + g * n + 16 * v);
    for (int64_t r = 0; r < n_rows; r++) {
        const float *xr = x + r * stride, *wr = w + r * PL_ATTN_QB;
        __m512 xv[4];
        _Pragma("GCC unroll 4") for (int v = 0; v < nv; v++) xv[v] = _mm512_maskz_loadu_ps(v == nv - 1 ? lm : 0xffff, xr + 16 * v);
        _Pragma("GCC unroll 4") for (int g = 0; g < 4; g++) {
            const __m512 wg = _mm512_set1_ps(wr[g]);
            _Pragma("GCC unroll 4") for (int v = 0; v < nv; v++) acc[g][v] = _mm512_fmadd_ps(wg, xv[v], acc[g][v]);
        }
    }
    _Pragma("GCC unroll 4") for (int g = 0; g < 4; g++)
        _Pragma("GCC unroll 4") for (int v = 0; v < nv; v++)
            _mm512_mask_storeu_ps(o + g * n + 16 * v, v == nv - 1 ? lm : 0xffff, acc[g][v]);
}

/* the columns in tiles of 64 (the last one narrower), each tile for the
 * block's queries 4 at a time */
PL_AVX512 static void v_attn_values_f32(float *w, const float *m, double *sum, const float *x, int64_t stride, int64_t n_rows,
                                        int64_t n, float *o) {
    /* a row of weights is one vector: e^(s - m), summed in two f64 halves */
    const __m512 vm = _mm512_loadu_ps(m);
    __m512d s0 = _mm512_loadu_pd(sum), s1 = _mm512_loadu_pd(sum + 8);
    for (int64_t r = 0; r < n_rows; r++) {
        const __m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(w + r * PL_ATTN_QB), vm));
        _mm512_storeu_ps(w + r * PL_ATTN_QB, e);
        s0 = _mm512_add_pd(s0, _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
        s1 = _mm512_add_pd(s1, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(e), 1))));
    }
    _mm512_storeu_pd(sum, s0);
    _mm512_storeu_pd(sum + 8, s1);
    for (int64_t c = 0; c < n; c += 64) {
        const int64_t left = n - c, nv = left >= 64 ? 4 : (left + 15) / 16;
        const __mmask16 lm = tail_mask(left - 16 * (nv - 1));
        for (int i0 = 0; i0 < PL_ATTN_QB; i0 += 4) {
            const float *wi = w + i0;
            float *oi = o + i0 * n + c;
            switch (nv) {
            case 4: v_values_tile(wi, x + c, stride, n_rows, n, oi, 4, lm); break;
            case 3: v_values_tile(wi, x + c, stride, n_rows, n, oi, 3, lm); break;
            case 2: v_values_tile(wi, x + c, stride, n_rows, n, oi, 2, lm); break;
            default: v_values_tile(wi, x + c, stride, n_rows, n, oi, 1, lm); break;
            }
        }
    }
}

/* gelu_erf: cpu_erf.h's model, eight lanes of double at a time */
PL_AVX512 static inline __m256 erf_half_avx512(__m256 s) {
    const __m512d c = _mm512_min_pd(_mm512_set1_pd(4.0), _mm512_max_pd(_mm512_set1_pd(-4.0), _mm512_cvtps_pd(s)));
    const __m512d t = _mm512_sub_pd(_mm512_mul_pd(_mm512_mul_pd(c, c), _mm512_set1_pd(0.125)), _mm512_set1_pd(1.0));
    __m512d p = _mm512_set1_pd(pl_erf_coef[PL_ERF_NCOEF - 1]);
    for (int k = PL_ERF_NCOEF - 2; k >= 0; k--) p = _mm512_fmadd_pd(p, t, _mm512_set1_pd(pl_erf_coef[k]));
    return _mm512_cvtpd_ps(_mm512_mul_pd(c, p));
}

PL_AVX512 static inline __m512 gelu_erf16(__m512 x) {
    const __m512 s = _mm512_mul_ps(x, _mm512_set1_ps(PL_ERF_SQRT_2_INV));
    const __m256 lo = erf_half_avx512(_mm512_castps512_ps256(s));
    const __m256 hi = erf_half_avx512(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(s), 1)));
    const __m512 e =
        _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(lo)), _mm256_castps_pd(hi), 1));
    const __m512 y = _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), x), _mm512_add_ps(_mm512_set1_ps(1.0f), e));
    return _mm512_mask_mov_ps(y, _mm512_cmp_ps_mask(x, _mm512_set1_ps(-INFINITY), _CMP_EQ_OQ), _mm512_set1_ps(-0.0f));
}

PL_AVX512 static void v_gelu_erf(const float *x, float *y, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, gelu_erf16(_mm512_loadu_ps(x + i)));
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(y + i, m, gelu_erf16(_mm512_maskz_loadu_ps(m, x + i)));
    }
}

static const pl_cpu_isa avx512 = {
    .name = "avx512",
    .f16_dot_tier = PL_TIER_AVX512,
    .sum_sq = v_sum_sq,
    .scale_mul = v_scale_mul,
    .add = v_add,
    .mul = v_mul,
    .silu_mul = v_silu_mul,
    .max = v_max,
    .exp_sum = v_exp_sum,
    .axpy_f32 = v_axpy_f32,
    .axpy_f16 = v_axpy_f16,
    .axpy_rows_f16 = v_axpy_rows_f16,
    .dot_rows_f16 = v_dot_rows_f16,
    .scale_round_f16 = v_scale_round_f16,
    .mad_round_f16 = v_mad_round_f16,
    .flash_rows_f16 = v_flash_rows_f16,
    .flash_rows2_f16 = v_flash_rows2_f16,
    .flash_weights = v_flash_weights,
    .flash_rows_f32 = v_flash_rows_f32,
    .flash_rows_q8_0 = v_flash_rows_q8_0,
    .dot_rows2_f16 = v_dot_rows2_f16,
    .axpy_rows2_f16 = v_axpy_rows2_f16,
    .attn_scores_f32 = v_attn_scores_f32,
    .attn_values_f32 = v_attn_values_f32,
    .gelu_erf = v_gelu_erf,
};

const pl_cpu_isa *pl_cpu_isa_avx512(void) { return &avx512; }

#else

const pl_cpu_isa *pl_cpu_isa_avx512(void) { return 0; }

#endif
