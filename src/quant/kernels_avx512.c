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

/* The q8_0 dot as a tile of nr weight rows x nc activation rows (vec_dot
 * is the 1 x 1 tile; always inlined with constant nr, nc).  Blocks go two
 * per 512-bit register; pairs 0, 2, 4, ... of the whole-4-block part add
 * into accumulator 0, pairs 1, 3, 5, ... into accumulator 1 (each in
 * block order), leftover blocks into a 256-bit one; the result is
 * reduce(acc0 + acc1) + hsum(acc2).  The tile runs the two accumulators'
 * pairs as two passes so that only one set of nr x nc accumulators is
 * live.  The weight bytes enter vpdpbusd as x + 128 (unsigned) and each
 * lane starts from -128 * (its 4 y bytes' sum), so a lane holds exactly
 * sum(x * y) of its 4 bytes -- the integers of any exact method; sharing
 * x + 128 over the columns and the y terms over the rows is what the tile
 * gains.  The float work per entry is the same in both. */
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

static float dot_q8_0(int64_t n, const void *w, const void *a) {
    float r;
    q8_0_tile_core(n, w, 0, a, 0, &r, 0, 1, 1);
    return r;
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

/* q4_K over 512 bits: chunks k and k+2 of 64 values side by side; one
 * weight row against nc activation columns (see dots_x86.h) */
PL_ALWAYS_INLINE void q4_K_512_cols(int64_t n, const void *w, const void *a, size_t as, float *out, size_t os, const int nc) {
    const uint8_t *blocks = w;
    const size_t bytes = sizeof(pl_block_q4_K);
    const int qs_off = 16;
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    __m512 acc[PL_TILE_COLS];
    __m128 acc_m[PL_TILE_COLS];
    for (int c = 0; c < nc; c++) acc[c] = _mm512_setzero_ps(), acc_m[c] = _mm_setzero_ps();
    for (int64_t i = 0; i < n / 256; i++) {
        const uint8_t *blk = blocks + (size_t)i * bytes;
        const __m256i sm = q45k_scales_mins_vnni(blk + 4);
        const __m128i scales = _mm256_castsi256_si128(sm), mins = _mm256_extracti128_si256(sm, 1);
        __m512i sumi[PL_TILE_COLS];
        for (int c = 0; c < nc; c++) sumi[c] = _mm512_setzero_si512();
        for (int k = 0; k < 2; k++) {
            /* chunk k in the low half, chunk k + 2 in the high half */
            const __m512i q = cat256(_mm256_loadu_si256((const __m256i *)(blk + qs_off + 32 * k)),
                                     _mm256_loadu_si256((const __m256i *)(blk + qs_off + 32 * (k + 2))));
            const __m512i lo = _mm512_and_si512(q, m4), hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
            const __m512i slo = cat256(word_bcast_vnni(scales, 2 * k), word_bcast_vnni(scales, 2 * k + 4));
            const __m512i shi = cat256(word_bcast_vnni(scales, 2 * k + 1), word_bcast_vnni(scales, 2 * k + 5));
            for (int c = 0; c < nc; c++) {
                const pl_block_q8_K *y = PL_COL(a, as, c);
                const __m512i ylo = cat256(_mm256_loadu_si256((const __m256i *)(y[i].qs + 64 * k)),
                                           _mm256_loadu_si256((const __m256i *)(y[i].qs + 64 * (k + 2))));
                const __m512i yhi = cat256(_mm256_loadu_si256((const __m256i *)(y[i].qs + 64 * k + 32)),
                                           _mm256_loadu_si256((const __m256i *)(y[i].qs + 64 * (k + 2) + 32)));
                sumi[c] = _mm512_dpwssd_epi32(sumi[c], _mm512_maddubs_epi16(lo, ylo), slo);
                sumi[c] = _mm512_dpwssd_epi32(sumi[c], _mm512_maddubs_epi16(hi, yhi), shi);
            }
        }
        uint16_t dh, mh;
        memcpy(&dh, blk, 2);
        memcpy(&mh, blk + 2, 2);
        const float xd = pl_f16_load(dh), xm = pl_f16_load(mh);
        for (int c = 0; c < nc; c++) {
            const pl_block_q8_K *y = PL_COL(a, as, c);
            const __m128i summs = _mm_madd_epi16(mins, bsums_pairs_vnni(y[i].bsums));
            const float d = xd * y[i].d, dmin = xm * y[i].d;
            acc[c] = _mm512_fmadd_ps(_mm512_set1_ps(d), _mm512_cvtepi32_ps(sumi[c]), acc[c]);
            acc_m[c] = _mm_fmadd_ps(_mm_set1_ps(dmin), _mm_cvtepi32_ps(summs), acc_m[c]);
        }
    }
    for (int c = 0; c < nc; c++) {
        __m128 m = _mm_add_ps(acc_m[c], _mm_movehl_ps(acc_m[c], acc_m[c]));
        m = _mm_add_ss(m, _mm_movehdup_ps(m));
        out[(size_t)c * os] = _mm512_reduce_add_ps(acc[c]) - _mm_cvtss_f32(m);
    }
}

PL_ALWAYS_INLINE void q6_K_512_cols(int64_t n, const void *w, const void *a, size_t as, float *out, size_t os, const int nc) {
    const pl_block_q6_K *x = w;
    const __m512i m4 = _mm512_set1_epi8(0x0f), m3 = _mm512_set1_epi8(3);
    __m512 acc[PL_TILE_COLS];
    for (int c = 0; c < nc; c++) acc[c] = _mm512_setzero_ps();
    for (int64_t i = 0; i < n / 256; i++) {
        const __m128i sc8 = _mm_loadu_si128((const __m128i *)x[i].scales);
        const __m256i sc16 = _mm256_cvtepi8_epi16(sc8);
        __m512i sumi[PL_TILE_COLS];
        for (int c = 0; c < nc; c++) {
            /* the -32 offset in the low 8 lanes: 32 * sum_j sc[j] * bsums[j] */
            const __m256i off =
                _mm256_slli_epi32(_mm256_madd_epi16(sc16, _mm256_loadu_si256((const __m256i *)PL_COL(a, as, c)[i].bsums)), 5);
            sumi[c] = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_sub_epi32(_mm256_setzero_si256(), off)),
                                         _mm256_setzero_si256(), 1);
        }
        /* half 0 in the low 256 bits, half 1 in the high */
        const __m512i ql0 = cat256(_mm256_loadu_si256((const __m256i *)x[i].ql), _mm256_loadu_si256((const __m256i *)(x[i].ql + 64)));
        const __m512i ql1 = cat256(_mm256_loadu_si256((const __m256i *)(x[i].ql + 32)), _mm256_loadu_si256((const __m256i *)(x[i].ql + 96)));
        const __m512i qh = cat256(_mm256_loadu_si256((const __m256i *)x[i].qh), _mm256_loadu_si256((const __m256i *)(x[i].qh + 32)));
        for (int q = 0; q < 4; q++) {
            const __m512i l = q & 1 ? ql1 : ql0;
            const __m512i lo = q < 2 ? _mm512_and_si512(l, m4) : _mm512_and_si512(_mm512_srli_epi16(l, 4), m4);
            const __m512i hi = _mm512_slli_epi16(_mm512_and_si512(_mm512_srli_epi16(qh, 2 * q), m3), 4);
            const __m512i u = _mm512_or_si512(lo, hi);
            const __m512i sc = cat256(byte_pair16_vnni(sc8, 2 * q), byte_pair16_vnni(sc8, 8 + 2 * q));
            for (int c = 0; c < nc; c++) {
                const pl_block_q8_K *y = PL_COL(a, as, c);
                const __m512i yv = cat256(_mm256_loadu_si256((const __m256i *)(y[i].qs + 32 * q)),
                                          _mm256_loadu_si256((const __m256i *)(y[i].qs + 128 + 32 * q)));
                sumi[c] = _mm512_dpwssd_epi32(sumi[c], _mm512_maddubs_epi16(u, yv), sc);
            }
        }
        const float xd = pl_f16_load(x[i].d);
        for (int c = 0; c < nc; c++) {
            const float d = xd * PL_COL(a, as, c)[i].d;
            acc[c] = _mm512_fmadd_ps(_mm512_set1_ps(d), _mm512_cvtepi32_ps(sumi[c]), acc[c]);
        }
    }
    for (int c = 0; c < nc; c++) out[(size_t)c * os] = _mm512_reduce_add_ps(acc[c]);
}

#define PL_512_DOT_AND_TILE(name, core)                                                                                  \
    static float name(int64_t n, const void *w, const void *a) {                                                         \
        float r;                                                                                                         \
        core(n, w, a, 0, &r, 0, 1);                                                                                      \
        return r;                                                                                                        \
    }                                                                                                                    \
    static void name##_tile(int64_t n, const void *w, size_t ws, const void *a, size_t as, float *y, size_t ys) {        \
        core(n, w, a, as, y, ys, PL_TILE_COLS);                                                                          \
    }
PL_512_DOT_AND_TILE(dot_q4_K_512, q4_K_512_cols)
PL_512_DOT_AND_TILE(dot_q6_K_512, q6_K_512_cols)

/* a type's vec_dot and its tile kernel, always set together */
static void set_dot(pl_quant_kernel_set *k, pl_vec_dot_fn dot, pl_vec_dot_tile_fn tile, int rows, int cols) {
    k->vec_dot = dot;
    k->vec_dot_tile = tile;
    k->tile_rows = rows;
    k->tile_cols = cols;
}

void pl_quant_fill_avx512(pl_quant_kernel_set t[PL_TYPE_COUNT]) {
    t[PL_TYPE_F32].vec_dot = dot_f32;
    t[PL_TYPE_F16].vec_dot = dot_f16;
    t[PL_TYPE_BF16].vec_dot = dot_bf16;
    set_dot(&t[PL_TYPE_Q8_0], dot_q8_0, dot_q8_0_tile, PL_Q8_0_ROWS, PL_TILE_COLS);
    t[PL_TYPE_Q8_K].act_from_float = act_q8_K_vnni;
    t[PL_TYPE_Q4_0].vec_dot = dot_q4_0_vnni;
    t[PL_TYPE_Q4_1].vec_dot = dot_q4_1_vnni;
    t[PL_TYPE_Q5_0].vec_dot = dot_q5_0_vnni;
    t[PL_TYPE_Q5_1].vec_dot = dot_q5_1_vnni;
    t[PL_TYPE_IQ4_NL].vec_dot = dot_iq4_nl_vnni;
    t[PL_TYPE_MXFP4].vec_dot = dot_mxfp4_vnni;
    set_dot(&t[PL_TYPE_Q2_K], dot_q2_K_vnni, dot_q2_K_tile_vnni, 1, PL_TILE_COLS);
    set_dot(&t[PL_TYPE_Q3_K], dot_q3_K_vnni, dot_q3_K_tile_vnni, 1, PL_TILE_COLS);
    set_dot(&t[PL_TYPE_Q4_K], dot_q4_K_vnni, dot_q4_K_tile_vnni, 1, PL_TILE_COLS);
    set_dot(&t[PL_TYPE_Q5_K], dot_q5_K_vnni, dot_q5_K_tile_vnni, 1, PL_TILE_COLS);
    set_dot(&t[PL_TYPE_Q6_K], dot_q6_K_vnni, dot_q6_K_tile_vnni, 1, PL_TILE_COLS);
    t[PL_TYPE_IQ4_XS].vec_dot = dot_iq4_xs_vnni;
    t[PL_TYPE_TQ1_0].vec_dot = dot_tq1_0_vnni;
    t[PL_TYPE_TQ2_0].vec_dot = dot_tq2_0_vnni;
    t[PL_TYPE_Q4_0].vec_dot = dot_q4_0_512;
    set_dot(&t[PL_TYPE_Q4_K], dot_q4_K_512, dot_q4_K_512_tile, 1, PL_TILE_COLS);
    set_dot(&t[PL_TYPE_Q6_K], dot_q6_K_512, dot_q6_K_512_tile, 1, PL_TILE_COLS);
    t[PL_TYPE_IQ2_XXS].vec_dot = dot_iq2_xxs_vnni;
    t[PL_TYPE_IQ2_XS].vec_dot = dot_iq2_xs_vnni;
    t[PL_TYPE_IQ2_S].vec_dot = dot_iq2_s_vnni;
    t[PL_TYPE_IQ3_XXS].vec_dot = dot_iq3_xxs_vnni;
    t[PL_TYPE_IQ3_S].vec_dot = dot_iq3_s_vnni;
    t[PL_TYPE_IQ1_S].vec_dot = dot_iq1_s_vnni;
    t[PL_TYPE_IQ1_M].vec_dot = dot_iq1_m_vnni;
}
#endif
