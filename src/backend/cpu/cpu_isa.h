/*
 * cpu_isa.h -- the row kernels of the CPU backend, one table per
 * instruction set: a portable C version, AVX2 / AVX-512 versions on x86-64
 * (function target attributes) and a NEON version on AArch64, compiled into
 * the same binary and chosen at run time from the host's features.  The op drivers (threading, shapes) are written
 * once on top of a table; every table is tested against the reference ops.
 */
#ifndef PL_CPU_ISA_H
#define PL_CPU_ISA_H

#include <stdint.h>

typedef struct pl_cpu_isa {
    const char *name; /* "generic", "avx2", "avx512", "neon" */
    /* the quant tier (pl_quant_tier) whose f16 vec_dot dot_rows_f16 and
     * dot_rows2_f16 reproduce bit for bit; attention uses them only while
     * its quant tier runs that same vec_dot */
    int f16_dot_tier;
    /* sum of x[i]^2, accumulated at least in f32 lanes (rms_norm) */
    double (*sum_sq)(const float *x, int64_t n);
    /* y = (x * s) * w, or x * s when w is NULL */
    void (*scale_mul)(const float *x, float s, const float *w, float *y, int64_t n);
    void (*add)(const float *a, const float *b, float *y, int64_t n);
    void (*mul)(const float *a, const float *b, float *y, int64_t n);
    /* y = g / (1 + e^-g) * u */
    void (*silu_mul)(const float *g, const float *u, float *y, int64_t n);
    float (*max)(const float *x, int64_t n);
    /* y = e^(x - m); returns the sum of y */
    double (*exp_sum)(const float *x, float m, float *y, int64_t n);
    /* y += a * x */
    void (*axpy_f32)(float a, const float *x, float *y, int64_t n);
    void (*axpy_f16)(float a, const uint16_t *x, float *y, int64_t n);
    /* y += a[r] * x[r * stride ..] for r = 0 .. n_rows-1, bit for bit what
     * n_rows axpy_f16 calls in that order give (the same fma per element,
     * in the same order), with y kept in registers in between.  NULL in a
     * table that has no such kernel: callers loop over axpy_f16. */
    void (*axpy_rows_f16)(const float *a, const uint16_t *x, int64_t stride, int64_t n_rows, float *y, int64_t n);
    /* y[r] = (row r of x, r * stride apart) . q for r = 0 .. n_rows-1, f16
     * rows and q, n <= PL_MAX_HEAD_DIM: bit for bit the f16 vec_dot of the
     * quant module's tier of the same ISA, with q converted once instead of
     * once per row -- attention's scores.  NULL in a table that has none. */
    void (*dot_rows_f16)(const uint16_t *x, int64_t stride, int64_t n_rows, const uint16_t *q, int64_t n, float *y);
    /* y = f16(x * s) as f32, rounded to nearest even: bit for bit
     * pl_f16_to_f32(pl_f32_to_f16(x[i] * s)) for finite x (attention's
     * softmax weights before they weight f16 V rows).  NULL in a table
     * that has none: callers use the scalar form. */
    void (*scale_round_f16)(const float *x, float s, float *y, int64_t n);
    /* y = f16(fma(x, a, y)) as f32, f16 x: bit for bit
     * pl_f16_to_f32(pl_f32_to_f16(fmaf(x[i], a, y[i]))) -- the flash
     * path's V sum kept in f16.  NULL: callers use the scalar form. */
    void (*mad_round_f16)(float a, const uint16_t *x, float *y, int64_t n);
    /* The flash path's whole V fold: for r = 0 .. n_rows-1, where ms[r] !=
     * 1 first y = f16(y * ms[r]), then y = f16(fma(row r of x, vs[r], y))
     * (rows r * stride apart) -- bit for bit those scale_round_f16 and
     * mad_round_f16 calls in that order (a rescale by exactly 1 leaves an
     * f16 value as it is), with y kept in registers in between.  NULL:
     * callers make the calls. */
    void (*flash_rows_f16)(const float *vs, const float *ms, const uint16_t *x, int64_t stride, int64_t n_rows, float *y,
                           int64_t n);
    /* The same fold with f32 rows and an f32 sum (the flash path's V of
     * any type but f16, rows decoded): where ms[r] != 1 first y = y *
     * ms[r], then y = fma(row r of x, vs[r], y) -- bit for bit those
     * operations row by row, y in registers in between.  NULL: callers
     * loop. */
    void (*flash_rows_f32)(const float *vs, const float *ms, const float *x, int64_t stride, int64_t n_rows, float *y,
                           int64_t n);
    /* flash_rows_f32 over q8_0 rows (x: blocks, rows stride BYTES apart,
     * n a multiple of 32), each value decoded as the reference's to_float
     * does (q * d) inside the fold: bit for bit to_float then
     * flash_rows_f32.  NULL: callers decode the rows first. */
    void (*flash_rows_q8_0)(const float *vs, const float *ms, const void *x, int64_t stride, int64_t n_rows, float *y,
                            int64_t n);
    /* The flash path's running maximum *M and sum *S stepped over the
     * scores w[0 .. n): w[p] becomes row p's V weight and ms[p] the rescale
     * before it (1: none) -- bit for bit pl_cpu_flash_weights's scalar loop
     * of pl_flash_step (its expf being cpu_expf.h's pl_expf_model, which
     * callers check against libm first), S summed in position order.
     * NULL: callers run that loop. */
    void (*flash_weights)(float *w, float *ms, int64_t n, float *M, float *S);
    /* flash_rows_f16 for two heads of a grouped-query group over the same
     * rows (weights vsa/msa into ya, vsb/msb into yb), each head's result
     * bit for bit the one-head kernel's; the rows are read once.  NULL
     * where the table has none. */
    void (*flash_rows2_f16)(const float *vsa, const float *msa, const float *vsb, const float *msb, const uint16_t *x,
                            int64_t stride, int64_t n_rows, float *ya, float *yb, int64_t n);
    /* dot_rows_f16 and axpy_rows_f16 for two heads of a grouped-query
     * group over the same rows, each head's results bit for bit those of
     * the one-head kernels; the rows are read once.  NULL where the table
     * has none (then neither one-head kernel is required either). */
    void (*dot_rows2_f16)(const uint16_t *x, int64_t stride, int64_t n_rows, const uint16_t *qa, const uint16_t *qb,
                          int64_t n, float *ya, float *yb);
    void (*axpy_rows2_f16)(const float *wa, const float *wb, const uint16_t *x, int64_t stride, int64_t n_rows,
                           float *ya, float *yb, int64_t n);
    /* Non-causal attention on f32 K/V (a vision tower), PL_ATTN_QB queries
     * at a time, every K and V row read once for all of them.  Query i of
     * the block is column i of qt (qt[d * PL_ATTN_QB + i], n rows); its
     * scores and weights are column i of s (s[r * PL_ATTN_QB + i]), its
     * running maximum and sum are m[i] and sum[i], its output is row i of o
     * (o[i * n + d]).
     * attn_scores_f32: s = scale * (row r of x, r * stride apart) . q_i,
     * summed in d order; m[i] = max(m[i], s) unless m is NULL.
     * attn_values_f32: s = e^(s - m[i]) in place, sum[i] += s (in f64), and
     * o_i += s * row r, in row order.
     * Each lane's result depends on that lane's inputs alone, by the same
     * operations wherever it sits in a vector and however the rows are
     * split into calls -- the bits do not depend on the other queries of
     * the block nor on the thread count.  Every table has both. */
    void (*attn_scores_f32)(const float *qt, const float *x, int64_t stride, int64_t n_rows, int64_t n, float scale, float *s,
                            float *m);
    void (*attn_values_f32)(float *s, const float *m, double *sum, const float *x, int64_t stride, int64_t n_rows, int64_t n,
                            float *o);
    /* y = pl_ref_gelu_erf(x) with a vector erf, within the bound
     * unit/test_ops states; x == y allowed.  NULL: the reference's libm
     * loop (bit for bit ggml's). */
    void (*gelu_erf)(const float *x, float *y, int64_t n);
} pl_cpu_isa;

/* CALL(k) with k = nv as a constant (1 .. 8; anything else as 1): the
 * register-blocked kernels are always_inline functions of a constant
 * count of vectors, instantiated once per count. */
#define PL_ISA_NV_SWITCH(nv, CALL)                                                                                        \
    do {                                                                                                                  \
        switch (nv) {                                                                                                     \
        case 8: CALL(8); break;                                                                                           \
        case 7: CALL(7); break;                                                                                           \
        case 6: CALL(6); break;                                                                                           \
        case 5: CALL(5); break;                                                                                           \
        case 4: CALL(4); break;                                                                                           \
        case 3: CALL(3); break;                                                                                           \
        case 2: CALL(2); break;                                                                                           \
        default: CALL(1); break;                                                                                          \
        }                                                                                                                 \
    } while (0)

/* Asks for the 64-byte lines of the `bytes` bytes at p to be brought into
 * the cache, to be read (kept in every level): the row kernels' prefetch
 * ahead of a strided walk, the packed attention's ahead of its next chunk.
 * A plain builtin, so that the ISA files' target-specific functions can
 * inline it (on x86-64 it is prefetcht0, as _mm_prefetch T0). */
static inline __attribute__((always_inline)) void pl_prefetch_bytes(const void *p, int64_t bytes) {
    for (int64_t o = 0; o < bytes; o += 64) __builtin_prefetch((const char *)p + o, 0, 3);
}

/* queries a block of the non-causal attention kernels */
#define PL_ATTN_QB 16

const pl_cpu_isa *pl_cpu_isa_generic(void);
/* NULL when not compiled for this architecture. */
const pl_cpu_isa *pl_cpu_isa_avx2(void);
const pl_cpu_isa *pl_cpu_isa_avx512(void);
const pl_cpu_isa *pl_cpu_isa_neon(void);

/* Whether the host can run the table. */
int pl_cpu_isa_usable(const pl_cpu_isa *isa);

/* The table the engine uses: the best the host supports, capped by the
 * environment variable POCKETLLM_CPU_TIER when set (scalar, avx2, avx512;
 * on AArch64 scalar selects the generic table, neon, dotprod and i8mm the
 * NEON one -- they differ in their quant kernels only). */
const pl_cpu_isa *pl_cpu_isa_best(void);
/* A table by name if the host can run it, else NULL. */
const pl_cpu_isa *pl_cpu_isa_by_name(const char *name);

#endif
