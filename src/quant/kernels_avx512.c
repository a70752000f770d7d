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

/* The f16 dot as a tile of nr weight rows x nc activation rows (always
 * inlined with constant nr, nc).  Accumulator k
 * (0-3) takes elements 64j + 16k .. + 15 in order; then accumulator 0 the
 * whole 16s left, accumulator 1 the masked rest; the result is
 * reduce((s0 + s1) + (s2 + s3)) -- dot_f16's operations.  The tile runs
 * one accumulator per pass (so only nr x nc are live) and converts each
 * loaded row once for all the columns; vec_dot itself stays the one-pass
 * loop below (the passes cost too much on short rows, e.g. attention's). */
#define PL_F16_ROWS 4
#define PL_F16_COLS 4
/* acc[r][c] += x row r . y column c over the 16 elements at i (mask m: all
 * of them, or the tail), each row widened once for all the columns */
PL_ALWAYS_INLINE void f16_tile_step(const uint16_t *const *xr, const uint16_t *const *yc, int64_t i, __mmask16 m,
                                    __m512 acc[PL_F16_ROWS][PL_F16_COLS], const int nr, const int nc) {
    __m512 xv[PL_F16_ROWS];
    for (int r = 0; r < nr; r++) xv[r] = m == 0xffff ? load_f16x16(xr[r] + i) : load_f16x16_mask(xr[r] + i, m);
    for (int c = 0; c < nc; c++) {
        const __m512 yv = m == 0xffff ? load_f16x16(yc[c] + i) : load_f16x16_mask(yc[c] + i, m);
        for (int r = 0; r < nr; r++) acc[r][c] = _mm512_fmadd_ps(xv[r], yv, acc[r][c]);
    }
}

PL_ALWAYS_INLINE void f16_tile_core(int64_t n, const void *w, size_t ws, const void *a, size_t as, float *out, size_t os,
                                    const int nr, const int nc) {
    const int64_t n64 = n / 64 * 64, n16 = n / 16 * 16;
    const uint16_t *xr[PL_F16_ROWS], *yc[PL_F16_COLS];
    for (int r = 0; r < nr; r++) xr[r] = (const uint16_t *)((const uint8_t *)w + (size_t)r * ws);
    for (int c = 0; c < nc; c++) yc[c] = (const uint16_t *)((const uint8_t *)a + (size_t)c * as);
    __m512 sk[4][PL_F16_ROWS][PL_F16_COLS];
    for (int k = 0; k < 4; k++) {
        __m512 acc[PL_F16_ROWS][PL_F16_COLS];
        for (int r = 0; r < nr; r++)
            for (int c = 0; c < nc; c++) acc[r][c] = _mm512_setzero_ps();
        for (int64_t i = 16 * k; i < n64; i += 64) f16_tile_step(xr, yc, i, 0xffff, acc, nr, nc);
        if (k == 0)
            for (int64_t i = n64; i < n16; i += 16) f16_tile_step(xr, yc, i, 0xffff, acc, nr, nc);
        if (k == 1 && n16 < n) f16_tile_step(xr, yc, n16, (__mmask16)((1u << (n - n16)) - 1), acc, nr, nc);
        for (int r = 0; r < nr; r++)
            for (int c = 0; c < nc; c++) sk[k][r][c] = acc[r][c];
    }
    for (int r = 0; r < nr; r++)
        for (int c = 0; c < nc; c++)
            out[(size_t)c * os + (size_t)r] =
                _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(sk[0][r][c], sk[1][r][c]), _mm512_add_ps(sk[2][r][c], sk[3][r][c])));
}

/* vec_dot: the same accumulators in one pass (the tile's entries are its
 * bits; test_quant_kernels compares them) */
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

static void dot_f16_tile(int64_t n, const void *w, size_t ws, const void *a, size_t as, float *y, size_t ys) {
    f16_tile_core(n, w, ws, a, as, y, ys, PL_F16_ROWS, PL_F16_COLS);
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

/* lanes 0-7 = a, lanes 8-15 = b (without AVX512DQ's insertf32x8) */
static inline __m512 set2_ps(float a, float b) {
    return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_set1_ps(a)), _mm256_castps_pd(_mm256_set1_ps(b)), 1));
}

static inline __m512i load2_i8(const int8_t *p0, const int8_t *p1) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)p0)),
                              _mm256_loadu_si256((const __m256i *)p1), 1);
}

/* Two f16 scales as [a x 8, b x 8] floats (exact conversions). */
static inline __m512 scale2_f16(uint16_t a, uint16_t b) {
    const __m128 v = _mm_cvtph_ps(_mm_cvtsi32_si128((int)((uint32_t)a | (uint32_t)b << 16)));
    return _mm512_permutexvar_ps(_mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0), _mm512_castps128_ps512(v));
}

#define PL_Q8_0_ROWS 4

/* The q8_0 dot as a tile of nr weight rows x nc activation rows (always
 * inlined with constant nr, nc).  Blocks go two
 * per 512-bit register; pairs 0, 2, 4, ... of the whole-4-block part add
 * into accumulator 0, pairs 1, 3, 5, ... into accumulator 1 (each in
 * block order), leftover blocks into a 256-bit one; the result is
 * reduce(acc0 + acc1) + hsum(acc2).  The tile runs the two accumulators'
 * pairs as two passes so that only one set of nr x nc accumulators is
 * live.  The weight bytes enter vpdpbusd as x + 128 (unsigned) and each
 * lane starts from -128 * (its 4 y bytes' sum), so a lane holds exactly
 * sum(x * y) of its 4 bytes -- the integers of any exact method; sharing
 * x + 128 over the columns and the y terms over the rows is what the tile
 * gains.  The float work per entry is dot_q8_0's (below), which keeps its
 * one-pass loop for decode. */
PL_ALWAYS_INLINE void q8_0_tile_core(int64_t n, const void *w, size_t ws, const void *a, size_t as, float *out, size_t os,
                                     const int nr, const int nc) {
    const int64_t nb = n / 32, n4 = nb / 4 * 4;
    const __m512i bias = _mm512_set1_epi8((char)0x80);
    const pl_block_q8_0 *xr[PL_Q8_0_ROWS], *yc[PL_TILE_COLS];
    for (int r = 0; r < nr; r++) xr[r] = (const pl_block_q8_0 *)((const uint8_t *)w + (size_t)r * ws);
    for (int c = 0; c < nc; c++) yc[c] = (const pl_block_q8_0 *)((const uint8_t *)a + (size_t)c * as);
    __m512 sum[PL_Q8_0_ROWS][PL_TILE_COLS]; /* accumulator 0 once the first pass is done */
    for (int pass = 0; pass < 2; pass++) {
        __m512 acc[PL_Q8_0_ROWS][PL_TILE_COLS];
        for (int r = 0; r < nr; r++)
            for (int c = 0; c < nc; c++) acc[r][c] = _mm512_setzero_ps();
        for (int64_t k = 2 * pass; k < n4; k += 4) {
            __m512i xu[PL_Q8_0_ROWS];
            __m512 dx[PL_Q8_0_ROWS];
            for (int r = 0; r < nr; r++) {
                xu[r] = _mm512_xor_si512(load2_i8(xr[r][k].qs, xr[r][k + 1].qs), bias);
                dx[r] = scale2_f16(xr[r][k].d, xr[r][k + 1].d);
            }
            for (int c = 0; c < nc; c++) {
                const __m512i yv = load2_i8(yc[c][k].qs, yc[c][k + 1].qs);
                const __m512i init = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_dpbusd_epi32(_mm512_setzero_si512(), bias, yv));
                const __m512 dy = scale2_f16(yc[c][k].d, yc[c][k + 1].d);
                for (int r = 0; r < nr; r++) {
                    const __m512 f = _mm512_cvtepi32_ps(_mm512_dpbusd_epi32(init, xu[r], yv));
                    acc[r][c] = _mm512_fmadd_ps(_mm512_mul_ps(dx[r], dy), f, acc[r][c]);
                }
            }
        }
        for (int r = 0; r < nr; r++)
            for (int c = 0; c < nc; c++) sum[r][c] = pass ? _mm512_add_ps(sum[r][c], acc[r][c]) : acc[r][c];
    }
    for (int r = 0; r < nr; r++) {
        for (int c = 0; c < nc; c++) {
            __m256 acc2 = _mm256_setzero_ps();
            for (int64_t k = n4; k < nb; k++) {
                __m256i ax = _mm256_loadu_si256((const __m256i *)xr[r][k].qs), ay = _mm256_loadu_si256((const __m256i *)yc[c][k].qs);
                __m256i p = _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_sign_epi8(ax, ax), _mm256_sign_epi8(ay, ax));
                acc2 = _mm256_fmadd_ps(_mm256_set1_ps(pl_f16_load(xr[r][k].d) * pl_f16_load(yc[c][k].d)), _mm256_cvtepi32_ps(p), acc2);
            }
            out[(size_t)c * os + (size_t)r] = _mm512_reduce_add_ps(sum[r][c]) + pl_hsum_ps256(acc2);
        }
    }
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

/* vec_dot: one pass, both accumulators in the loop; the same integers and
 * float operations as each entry of the tile below (test_quant_kernels
 * compares the bits) */
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

/* PL_DOT_ROWS rows x one token: the tile's core PL_Q8_0_ROWS rows at a
 * time with one column, so the token's bias term and scales are computed
 * once for the rows (vec_dot's bits, as the tile's) -- a q8_0 KV cache's
 * scores, whose short rows (a head of 128 is 4 blocks) paid a call, a
 * setup and the token's work each */
static void dot_q8_0_rows(int64_t n, const void *w, size_t ws, const void *a, size_t as, float *y, size_t ys) {
    (void)ys;
    for (int r = 0; r < PL_DOT_ROWS; r += PL_Q8_0_ROWS)
        q8_0_tile_core(n, (const uint8_t *)w + (size_t)r * ws, ws, a, as, y + r, 1, PL_Q8_0_ROWS, 1);
}

static void dot_q8_0_tile(int64_t n, const void *w, size_t ws, const void *a, size_t as, float *y, size_t ys) {
    q8_0_tile_core(n, w, ws, a, as, y, ys, PL_Q8_0_ROWS, PL_TILE_COLS);
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

/* The lanes of a k-quant accumulator: lanes 0-7 hold d-scaled sums, lanes
 * 8-15 dmin-scaled ones (q4_K, q5_K; zero for q6_K).  The dot is
 * sum(lanes 0-7) - sum(lanes 8-15), each summed as a pairwise tree (lane
 * j with j + 4, then j + 2, then j + 1), spelled out here so that vec_dot
 * and the tiles share one order whatever the compiler's reduce does. */
static inline float kq_finish(__m512 acc) {
    __m512 t = _mm512_add_ps(acc, _mm512_shuffle_f32x4(acc, acc, 0xb1)); /* 128-bit groups 0+1, 2+3 */
    t = _mm512_add_ps(t, _mm512_permute_ps(t, 0x4e));
    t = _mm512_add_ps(t, _mm512_permute_ps(t, 0xb1));
    return _mm_cvtss_f32(_mm512_castps512_ps128(t)) - _mm_cvtss_f32(_mm512_extractf32x4_ps(t, 2));
}

/* int32 x 16 -> lanes 0-7 + lanes 8-15 (exact) in the low half, `hi` in
 * the high half */
static inline __m512i kq_fold(__m512i sumi, __m256i hi) {
    const __m256i s = _mm256_add_epi32(_mm512_castsi512_si256(sumi), _mm512_extracti64x4_epi64(sumi, 1));
    return _mm512_inserti64x4(_mm512_castsi256_si512(s), hi, 1);
}

/* The 8 scales and the 8 mins of a q4_K/q5_K block as bytes (the first in
 * the low byte), unpacked by scalar arithmetic on the three 32-bit words of
 * the packed bytes: the integer units are idle in these kernels while the
 * vector ones are the bottleneck. */
static inline void q45k_scales_mins_gpr(const uint8_t *packed, uint64_t *scales, uint64_t *mins) {
    uint32_t u0, u1, u2;
    memcpy(&u0, packed, 4);
    memcpy(&u1, packed + 4, 4);
    memcpy(&u2, packed + 8, 4);
    const uint32_t low6 = 0x3f3f3f3fu, low4 = 0x0f0f0f0fu, top2 = 0x03030303u;
    *scales = (uint64_t)(u0 & low6) | (uint64_t)((u2 & low4) | ((u0 >> 6) & top2) << 4) << 32;
    *mins = (uint64_t)(u1 & low6) | (uint64_t)(((u2 >> 4) & low4) | ((u1 >> 6) & top2) << 4) << 32;
}

/* byte shuffles that widen the broadcast scale/min bytes to words: word
 * scale 2k across the low 256 bits and 2k + 1 across the high ones (k = 0..3),
 * and min j/2 at word j (j = 0..15) */
#define PL_W2(b) (b), -128
#define PL_W8(b) PL_W2(b), PL_W2(b), PL_W2(b), PL_W2(b), PL_W2(b), PL_W2(b), PL_W2(b), PL_W2(b)
#define PL_SV_IDX(k) _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_setr_epi8(PL_W8(2 * k), PL_W8(2 * k))), _mm256_setr_epi8(PL_W8(2 * k + 1), PL_W8(2 * k + 1)), 1)

/* q4_K and q5_K over 512 bits, one weight row against nc activation
 * columns (nc = 1 is vec_dot; see dots_x86.h for the rule).  Chunk k of 32
 * qs bytes holds sub-block 2k in its low nibbles and 2k + 1 in its high
 * ones; both go into one register (low nibbles in the low 256 bits), which
 * lines up with 64 contiguous activation bytes, so the activations are
 * plain loads.  The weights, scale words and 5th bits are unpacked once
 * per block for all the columns.  Per block and column the 16 int32 lanes
 * fold to 8 and the 8 min terms (mins[j] * (bsums[2j] + bsums[2j+1])) join
 * them, so one convert and one fma per block do both scales. */
#define PL_Q45_COLS 4
PL_ALWAYS_INLINE void q45_K_512_cols(int64_t n, const uint8_t *blocks, size_t bytes, int qs_off, int qh_off, const void *a,
                                     size_t as, float *out, size_t os, const int nc) {
    const __m512i m4 = _mm512_set1_epi8(0x0f), b4 = _mm512_set1_epi8(0x10);
    const __m512i nib_shift = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(4), 1);
    const __m256i dup_mins = _mm256_setr_epi8(PL_W2(0), PL_W2(0), PL_W2(1), PL_W2(1), PL_W2(2), PL_W2(2), PL_W2(3), PL_W2(3),
                                              PL_W2(4), PL_W2(4), PL_W2(5), PL_W2(5), PL_W2(6), PL_W2(6), PL_W2(7), PL_W2(7));
    const __m512i sv_idx[4] = {PL_SV_IDX(0), PL_SV_IDX(1), PL_SV_IDX(2), PL_SV_IDX(3)};
    const __m512i dm_spread = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
    __m512 acc[PL_Q45_COLS];
    for (int c = 0; c < nc; c++) acc[c] = _mm512_setzero_ps();
    for (int64_t i = 0; i < n / 256; i++) {
        const uint8_t *blk = blocks + (size_t)i * bytes;
        uint64_t scales, mins;
        q45k_scales_mins_gpr(blk + 4, &scales, &mins);
        const __m512i scb = _mm512_set1_epi64((long long)scales);
        const __m256i mins2 = _mm256_shuffle_epi8(_mm256_set1_epi64x((long long)mins), dup_mins);
        __m512i wv[4], sv[4];
        for (int k = 0; k < 4; k++) {
            const __m512i q = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(blk + qs_off + 32 * k)));
            wv[k] = _mm512_and_si512(_mm512_srlv_epi16(q, nib_shift), m4);
            if (qh_off) {
                /* bit 2k of qh[l] for the low half, bit 2k + 1 for the high */
                const __m512i hb = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(blk + qh_off)));
                const __m512i cnt = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi16((short)(2 * k))),
                                                       _mm256_set1_epi16((short)(2 * k + 1)), 1);
                wv[k] = _mm512_or_si512(wv[k], _mm512_and_si512(_mm512_slli_epi16(_mm512_srlv_epi16(hb, cnt), 4), b4));
            }
            sv[k] = _mm512_shuffle_epi8(scb, sv_idx[k]);
        }
        /* lanes 0-7 d, 8-15 dmin: the two f16 at the block's start,
         * converted together and spread */
        uint32_t dmh;
        memcpy(&dmh, blk, 4);
        const __m512 xdm = _mm512_permutexvar_ps(dm_spread, _mm512_castps128_ps512(_mm_cvtph_ps(_mm_cvtsi32_si128((int)dmh))));
        for (int c = 0; c < nc; c++) {
            const pl_block_q8_K *y = PL_COL(a, as, c);
            __m512i sumi = _mm512_setzero_si512();
            for (int k = 0; k < 4; k++)
                sumi = _mm512_dpwssd_epi32(sumi, _mm512_maddubs_epi16(wv[k], _mm512_loadu_si512((const void *)(y[i].qs + 64 * k))), sv[k]);
            const __m256i summs = _mm256_madd_epi16(mins2, _mm256_loadu_si256((const __m256i *)y[i].bsums));
            acc[c] = _mm512_fmadd_ps(_mm512_mul_ps(xdm, _mm512_set1_ps(y[i].d)), _mm512_cvtepi32_ps(kq_fold(sumi, summs)), acc[c]);
        }
    }
    for (int c = 0; c < nc; c++) out[(size_t)c * os] = kq_finish(acc[c]);
}

/* vec_dot (one column) and the tile (PL_Q45_COLS columns) of q4_K / q5_K
 * from the one core: block size, offset of qs, offset of qh (0: none) */
#define PL_Q45_DOT_AND_TILE(name, block, qs_off, qh_off)                                                                 \
    static float name(int64_t n, const void *w, const void *a) {                                                         \
        float r;                                                                                                         \
        q45_K_512_cols(n, w, sizeof(block), qs_off, qh_off, a, 0, &r, 0, 1);                                             \
        return r;                                                                                                        \
    }                                                                                                                    \
    static void name##_tile(int64_t n, const void *w, size_t ws, const void *a, size_t as, float *y, size_t ys) {        \
        q45_K_512_cols(n, w, sizeof(block), qs_off, qh_off, a, as, y, ys, PL_Q45_COLS);                                  \
    }                                                                                                                    \
    static void name##_cols2(int64_t n, const void *w, size_t ws, const void *a, size_t as, float *y, size_t ys) {       \
        q45_K_512_cols(n, w, sizeof(block), qs_off, qh_off, a, as, y, ys, 2);                                            \
    }                                                                                                                    \
    static void name##_cols3(int64_t n, const void *w, size_t ws, const void *a, size_t as, float *y, size_t ys) {       \
        q45_K_512_cols(n, w, sizeof(block), qs_off, qh_off, a, as, y, ys, 3);                                            \
    }                                                                                                                    \
    static void name##_rows(int64_t n, const void *w, size_t ws, const void *a, size_t as, float *y, size_t ys) {        \
        for (int r = 0; r < PL_DOT_ROWS; r++)                                                                            \
            q45_K_512_cols(n, (const uint8_t *)w + (size_t)r * ws, sizeof(block), qs_off, qh_off, a, 0, y + r, 0, 1);   \
    }
PL_Q45_DOT_AND_TILE(dot_q4_K_512, pl_block_q4_K, 16, 0)
PL_Q45_DOT_AND_TILE(dot_q5_K_512, pl_block_q5_K, 48, 16)

/* Sum of 16 floats: halves of 256, then 128, then 64, then 32 bits,
 * spelled out (the one order vec_dot and the tiles share). */
static inline float sum16_ps(__m512 v) {
    const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    q = _mm_add_ps(q, _mm_movehl_ps(q, q));
    q = _mm_add_ss(q, _mm_movehdup_ps(q));
    return _mm_cvtss_f32(q);
}

/* q6_K over 512 bits, one weight row against nc activation columns (nc =
 * 1 is vec_dot).  Chunk (h, p) is values 128h + 64p .. + 63: the low (p =
 * 0) or high (p = 1) nibbles of ql[64h .. 64h + 63] with bit pairs 2p and
 * 2p + 1 of qh[32h .. 32h + 31] on top, lined up with 64 contiguous
 * activation bytes; 4 scales of 16 values per chunk.  The -32 offset
 * enters as -32 * sum(scale * bsum) in lanes 0-7 at the start. */
#define PL_Q6_COLS 4
PL_ALWAYS_INLINE void q6_K_512_cols(int64_t n, const void *w, const void *a, size_t as, float *out, size_t os, const int nc) {
    const pl_block_q6_K *x = w;
    const __m512i m4 = _mm512_set1_epi8(0x0f), m30 = _mm512_set1_epi8(0x30);
    /* bit pair 2j of each byte to bits 4-5: j = 0, 1 left by 4, 2; j = 2, 3 right by 0, 2 */
    const __m512i sh_p0 = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1);
    const __m512i sh_p1 = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(2), 1);
    /* within a 128-bit lane of 8 words: lane q takes word 4j + q (j = 0, 1) */
#define PL_WORD(w) 2 * (w), 2 * (w) + 1
#define PL_WORD8(w) PL_WORD(w), PL_WORD(w), PL_WORD(w), PL_WORD(w), PL_WORD(w), PL_WORD(w), PL_WORD(w), PL_WORD(w)
    const __m512i sv_pick[2] = {
        _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_setr_epi8(PL_WORD8(0), PL_WORD8(1))), _mm256_setr_epi8(PL_WORD8(2), PL_WORD8(3)), 1),
        _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_setr_epi8(PL_WORD8(4), PL_WORD8(5))), _mm256_setr_epi8(PL_WORD8(6), PL_WORD8(7)), 1)};
#undef PL_WORD8
#undef PL_WORD
    __m512 acc[PL_Q6_COLS];
    for (int c = 0; c < nc; c++) acc[c] = _mm512_setzero_ps();
    for (int64_t i = 0; i < n / 256; i++) {
        const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)x[i].scales));
        __m512i wv[4], sv[4];
        for (int h = 0; h < 2; h++) {
            const __m512i ql = _mm512_loadu_si512((const void *)(x[i].ql + 64 * h));
            const __m512i qh = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(x[i].qh + 32 * h)));
            wv[2 * h] = _mm512_or_si512(_mm512_and_si512(ql, m4), _mm512_and_si512(_mm512_sllv_epi16(qh, sh_p0), m30));
            wv[2 * h + 1] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), m4),
                                            _mm512_and_si512(_mm512_srlv_epi16(qh, sh_p1), m30));
        }
        /* scale words 4k .. 4k+3 (in 128-bit half k/2 of sc16) each across one
         * 128-bit lane: that half copied to every lane, then one word picked
         * per lane (a cheaper pair of shuffles than one 16-bit permute) */
        const __m512i sc_lo = _mm512_shuffle_i64x2(_mm512_castsi256_si512(sc16), _mm512_castsi256_si512(sc16), 0x00);
        const __m512i sc_hi = _mm512_shuffle_i64x2(_mm512_castsi256_si512(sc16), _mm512_castsi256_si512(sc16), 0x55);
        for (int k = 0; k < 4; k++) sv[k] = _mm512_shuffle_epi8(k < 2 ? sc_lo : sc_hi, sv_pick[k & 1]);
        const __m512 xd = _mm512_set1_ps(pl_f16_load(x[i].d));
        for (int c = 0; c < nc; c++) {
            const pl_block_q8_K *y = PL_COL(a, as, c);
            const __m256i off = _mm256_slli_epi32(_mm256_madd_epi16(sc16, _mm256_loadu_si256((const __m256i *)y[i].bsums)), 5);
            __m512i sumi = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_sub_epi32(_mm256_setzero_si256(), off), 0);
            for (int k = 0; k < 4; k++)
                sumi = _mm512_dpwssd_epi32(sumi, _mm512_maddubs_epi16(wv[k], _mm512_loadu_si512((const void *)(y[i].qs + 64 * k))), sv[k]);
            acc[c] = _mm512_fmadd_ps(_mm512_mul_ps(xd, _mm512_set1_ps(y[i].d)), _mm512_cvtepi32_ps(sumi), acc[c]);
        }
    }
    for (int c = 0; c < nc; c++) out[(size_t)c * os] = sum16_ps(acc[c]);
}

#define PL_512_DOT_AND_TILE(name, core, cols)                                                                               \
    static float name(int64_t n, const void *w, const void *a) {                                                         \
        float r;                                                                                                         \
        core(n, w, a, 0, &r, 0, 1);                                                                                      \
        return r;                                                                                                        \
    }                                                                                                                    \
    static void name##_tile(int64_t n, const void *w, size_t ws, const void *a, size_t as, float *y, size_t ys) {        \
        core(n, w, a, as, y, ys, cols);                                                                                  \
    }                                                                                                                    \
    static void name##_cols2(int64_t n, const void *w, size_t ws, const void *a, size_t as, float *y, size_t ys) {       \
        core(n, w, a, as, y, ys, 2);                                                                                     \
    }                                                                                                                    \
    static void name##_cols3(int64_t n, const void *w, size_t ws, const void *a, size_t as, float *y, size_t ys) {       \
        core(n, w, a, as, y, ys, 3);                                                                                     \
    }                                                                                                                    \
    static void name##_rows(int64_t n, const void *w, size_t ws, const void *a, size_t as, float *y, size_t ys) {        \
        for (int r = 0; r < PL_DOT_ROWS; r++) core(n, (const uint8_t *)w + (size_t)r * ws, a, 0, y + r, 0, 1);           \
    }
PL_512_DOT_AND_TILE(dot_q6_K_512, q6_K_512_cols, PL_Q6_COLS)

/* a type's vec_dot and its tile kernel, always set together */
static void set_dot(pl_quant_kernel_set *k, pl_vec_dot_fn dot, pl_vec_dot_tile_fn tile, int rows, int cols) {
    k->vec_dot = dot;
    k->vec_dot_tile = tile;
    k->tile_rows = rows;
    k->tile_cols = cols;
}

/* a type's part-tile kernels (one row x 2 and x 3 tokens) */
static void set_cols(pl_quant_kernel_set *k, pl_vec_dot_tile_fn c2, pl_vec_dot_tile_fn c3) {
    k->vec_dot_cols[2] = c2;
    k->vec_dot_cols[3] = c3;
}

/* a type's rows kernel (PL_DOT_ROWS rows x one token, vec_dot's bits: the
 * same core, row after row, with its setup hoisted and no call per row) */
static void set_rows(pl_quant_kernel_set *k, pl_vec_dot_tile_fn rows) {
    k->vec_dot_rows = rows;
    k->dot_rows = PL_DOT_ROWS;
}

void pl_quant_fill_avx512(pl_quant_kernel_set t[PL_TYPE_COUNT]) {
    t[PL_TYPE_F32].vec_dot = dot_f32;
    set_dot(&t[PL_TYPE_F16], dot_f16, dot_f16_tile, PL_F16_ROWS, PL_F16_COLS);
    t[PL_TYPE_BF16].vec_dot = dot_bf16;
    set_dot(&t[PL_TYPE_Q8_0], dot_q8_0, dot_q8_0_tile, PL_Q8_0_ROWS, PL_TILE_COLS);
    set_rows(&t[PL_TYPE_Q8_0], dot_q8_0_rows);
    t[PL_TYPE_Q8_K].act_from_float = act_q8_K_vnni;
    t[PL_TYPE_Q4_0].vec_dot = dot_q4_0_vnni;
    t[PL_TYPE_Q4_1].vec_dot = dot_q4_1_vnni;
    t[PL_TYPE_Q5_0].vec_dot = dot_q5_0_vnni;
    t[PL_TYPE_Q5_1].vec_dot = dot_q5_1_vnni;
    t[PL_TYPE_IQ4_NL].vec_dot = dot_iq4_nl_vnni;
    t[PL_TYPE_MXFP4].vec_dot = dot_mxfp4_vnni;
    set_dot(&t[PL_TYPE_Q2_K], dot_q2_K_vnni, dot_q2_K_tile_vnni, 1, PL_TILE_COLS);
    set_cols(&t[PL_TYPE_Q2_K], dot_q2_K_cols2_vnni, dot_q2_K_cols3_vnni);
    set_dot(&t[PL_TYPE_Q3_K], dot_q3_K_vnni, dot_q3_K_tile_vnni, 1, PL_TILE_COLS);
    set_cols(&t[PL_TYPE_Q3_K], dot_q3_K_cols2_vnni, dot_q3_K_cols3_vnni);
    set_dot(&t[PL_TYPE_Q4_K], dot_q4_K_vnni, dot_q4_K_tile_vnni, 1, PL_TILE_COLS);
    set_cols(&t[PL_TYPE_Q4_K], dot_q4_K_cols2_vnni, dot_q4_K_cols3_vnni);
    set_dot(&t[PL_TYPE_Q5_K], dot_q5_K_vnni, dot_q5_K_tile_vnni, 1, PL_TILE_COLS);
    set_cols(&t[PL_TYPE_Q5_K], dot_q5_K_cols2_vnni, dot_q5_K_cols3_vnni);
    set_dot(&t[PL_TYPE_Q6_K], dot_q6_K_vnni, dot_q6_K_tile_vnni, 1, PL_TILE_COLS);
    set_cols(&t[PL_TYPE_Q6_K], dot_q6_K_cols2_vnni, dot_q6_K_cols3_vnni);
    t[PL_TYPE_IQ4_XS].vec_dot = dot_iq4_xs_vnni;
    t[PL_TYPE_TQ1_0].vec_dot = dot_tq1_0_vnni;
    t[PL_TYPE_TQ2_0].vec_dot = dot_tq2_0_vnni;
    t[PL_TYPE_Q4_0].vec_dot = dot_q4_0_512;
    set_dot(&t[PL_TYPE_Q4_K], dot_q4_K_512, dot_q4_K_512_tile, 1, PL_Q45_COLS);
    set_cols(&t[PL_TYPE_Q4_K], dot_q4_K_512_cols2, dot_q4_K_512_cols3);
    set_dot(&t[PL_TYPE_Q5_K], dot_q5_K_512, dot_q5_K_512_tile, 1, PL_Q45_COLS);
    set_cols(&t[PL_TYPE_Q5_K], dot_q5_K_512_cols2, dot_q5_K_512_cols3);
    set_dot(&t[PL_TYPE_Q6_K], dot_q6_K_512, dot_q6_K_512_tile, 1, PL_Q6_COLS);
    set_cols(&t[PL_TYPE_Q6_K], dot_q6_K_512_cols2, dot_q6_K_512_cols3);
    set_rows(&t[PL_TYPE_Q4_K], dot_q4_K_512_rows);
    set_rows(&t[PL_TYPE_Q5_K], dot_q5_K_512_rows);
    set_rows(&t[PL_TYPE_Q6_K], dot_q6_K_512_rows);
    t[PL_TYPE_IQ2_XXS].vec_dot = dot_iq2_xxs_vnni;
    t[PL_TYPE_IQ2_XS].vec_dot = dot_iq2_xs_vnni;
    t[PL_TYPE_IQ2_S].vec_dot = dot_iq2_s_vnni;
    t[PL_TYPE_IQ3_XXS].vec_dot = dot_iq3_xxs_vnni;
    t[PL_TYPE_IQ3_S].vec_dot = dot_iq3_s_vnni;
    t[PL_TYPE_IQ1_S].vec_dot = dot_iq1_s_vnni;
    t[PL_TYPE_IQ1_M].vec_dot = dot_iq1_m_vnni;
}
#endif
