/*
 * cpu_conv.c -- the CPU drivers of the audio tower's ops: the exact (erf)
 * GELU, im2col over channel-last images and a batched transpose, each
 * split over the thread pool.  im2col writes about kh * kw times what it
 * reads, so it is written as a sequential store stream fed from kh * kw
 * input rows at once; transpose goes by tiles that fit in L1.
 */
#include <string.h>

#include "backend/cpu/cpu_compute.h"
#include "quant/types.h"

/* ---- gelu_erf ------------------------------------------------------------ */

typedef struct {
    pl_cpu_compute *cc;
    const float *x;
    float *y;
    int64_t n;
} gelu_erf_job;

static void gelu_erf_run(void *ctx, int chunk, int n_chunks, int thread) {
    (void)thread;
    gelu_erf_job *j = ctx;
    long long lo, hi;
    pl_pool_split(j->n, chunk, n_chunks, &lo, &hi);
    if (hi <= lo) return;
    if (j->cc->isa->gelu_erf) j->cc->isa->gelu_erf(j->x + lo, j->y + lo, hi - lo);
    else pl_ref_gelu_erf(j->x + lo, j->y + lo, hi - lo);
}

void pl_cpu_gelu_erf(pl_compute *c, const float *x, float *y, int64_t n) {
    gelu_erf_job j = {pl_cpu(c), x, y, n};
    /* an erf is worth a few elements' worth of a plain elementwise op */
    pl_cpu_parallel(j.cc, gelu_erf_run, &j, 8 * n);
}

/* ---- im2col -------------------------------------------------------------- */

/* Most kernel taps (kh * kw) the streaming path takes; larger kernels go
 * through the reference row by row. */
#define IM2COL_MAX_TAPS 64
/* channels at most for the channel-major path: its padding taps read this
 * row of zeros */
#define IM2COL_ZERO_ROW 2048
static const float im2col_zeros[IM2COL_ZERO_ROW];
/* f16 rounding goes through a stack buffer this many values at a time */
#define IM2COL_ROUND_BLOCK 512

typedef struct {
    pl_cpu_compute *cc;
    const pl_im2col_params *p;
    const float *x;
    float *y;
    int64_t oh, ow, cols;
} im2col_job;

/* One output row: column ch * taps + t holds channel ch of tap t's pixel. */
static void im2col_row(const im2col_job *j, int64_t r, float *out) {
    const pl_im2col_params *p = j->p;
    const int64_t ox = r % j->ow, oy = (r / j->ow) % j->oh, b = r / (j->ow * j->oh);
    const int taps = p->kh * p->kw;
    const float *src[IM2COL_MAX_TAPS];
    for (int ky = 0; ky < p->kh; ky++)
        for (int kx = 0; kx < p->kw; kx++) {
            const int64_t iy = oy * p->sh - p->ph + ky, ix = ox * p->sw - p->pw + kx;
            src[ky * p->kw + kx] =
                iy >= 0 && iy < p->h && ix >= 0 && ix < p->w ? j->x + ((b * p->h + iy) * p->w + ix) * p->c_in : NULL;
        }
    const int64_t c_in = p->c_in;
    if (c_in == 1) {
        for (int t = 0; t < taps; t++) out[t] = src[t] ? src[t][0] : 0.0f;
        return;
    }
    if (c_in <= IM2COL_ZERO_ROW) {
        /* channel-major: the row written front to back from taps read
         * streams, a tap outside the image reading a row of zeros */
        for (int t = 0; t < taps; t++)
            if (!src[t]) src[t] = im2col_zeros;
        if (taps == 9) {
            /* the tower's 3 x 3: the tap loop unrolled */
            const float *s0 = src[0], *s1 = src[1], *s2 = src[2], *s3 = src[3], *s4 = src[4], *s5 = src[5],
                        *s6 = src[6], *s7 = src[7], *s8 = src[8];
            for (int64_t ch = 0; ch < c_in; ch++, out += 9) {
                out[0] = s0[ch], out[1] = s1[ch], out[2] = s2[ch], out[3] = s3[ch], out[4] = s4[ch];
                out[5] = s5[ch], out[6] = s6[ch], out[7] = s7[ch], out[8] = s8[ch];
            }
            return;
        }
        for (int64_t ch = 0; ch < c_in; ch++)
            for (int t = 0; t < taps; t++) *out++ = src[t][ch];
        return;
    }
    /* wider images: tap-major into the row's stride-`taps` slots, each
     * tap's channels one contiguous read (the row stays in cache) */
    for (int t = 0; t < taps; t++) {
        float *o = out + t;
        const float *s = src[t];
        if (s)
            for (int64_t ch = 0; ch < c_in; ch++) o[ch * taps] = s[ch];
        else
            for (int64_t ch = 0; ch < c_in; ch++) o[ch * taps] = 0.0f;
    }
}

static void im2col_rows(void *ctx, int64_t lo, int64_t hi, int thread) {
    (void)thread;
    const im2col_job *j = ctx;
    const pl_im2col_params *p = j->p;
    const pl_quant_kernel_set *k16 = p->round_f16 ? pl_quant_kernels_tier(PL_TYPE_F16, j->cc->qtier) : NULL;
    uint16_t h[IM2COL_ROUND_BLOCK];
    for (int64_t r = lo; r < hi; r++) {
        float *out = j->y + r * j->cols;
        if (p->kh * p->kw > IM2COL_MAX_TAPS) {
            /* past the tap table: gather the row column by column */
            const int64_t ox = r % j->ow, oy = (r / j->ow) % j->oh, b = r / (j->ow * j->oh);
            for (int64_t ch = 0; ch < p->c_in; ch++)
                for (int ky = 0; ky < p->kh; ky++)
                    for (int kx = 0; kx < p->kw; kx++) {
                        const int64_t iy = oy * p->sh - p->ph + ky, ix = ox * p->sw - p->pw + kx;
                        out[(ch * p->kh + ky) * p->kw + kx] = iy >= 0 && iy < p->h && ix >= 0 && ix < p->w
                                                                  ? j->x[((b * p->h + iy) * p->w + ix) * p->c_in + ch]
                                                                  : 0.0f;
                    }
        } else {
            im2col_row(j, r, out);
        }
        if (k16)
            /* f32 -> f16 by the tier's converter (bit for bit
             * pl_f32_to_f16) and back (exact): the row rounded in place */
            for (int64_t c0 = 0; c0 < j->cols; c0 += IM2COL_ROUND_BLOCK) {
                const int64_t m = j->cols - c0 < IM2COL_ROUND_BLOCK ? j->cols - c0 : IM2COL_ROUND_BLOCK;
                k16->act_from_float(out + c0, h, m);
                k16->to_float(h, out + c0, m);
            }
    }
}

void pl_cpu_im2col(pl_compute *c, const pl_im2col_params *p, const float *x, float *y) {
    im2col_job j = {pl_cpu(c), p, x, y, pl_im2col_out_h(p), pl_im2col_out_w(p), 0};
    j.cols = p->c_in * p->kh * p->kw;
    pl_cpu_parallel_ranges(j.cc, im2col_rows, &j, p->n * j.oh * j.ow, j.cols, 1);
}

/* ---- transpose ----------------------------------------------------------- */

/* a tile of TILE x TILE floats in and out: 2 x 4 KiB */
#define TILE 32

typedef struct {
    const float *x;
    float *y;
    int64_t rows, cols, tiles_i, tiles_j;
} transpose_job;

/* items are tiles: (b, ti, tj) in that order */
static void transpose_tiles(void *ctx, int64_t lo, int64_t hi, int thread) {
    (void)thread;
    const transpose_job *j = ctx;
    const int64_t per_b = j->tiles_i * j->tiles_j;
    for (int64_t t = lo; t < hi; t++) {
        const int64_t b = t / per_b, ti = (t % per_b) / j->tiles_j, tj = t % j->tiles_j;
        const int64_t i0 = ti * TILE, j0 = tj * TILE;
        const int64_t i1 = i0 + TILE < j->rows ? i0 + TILE : j->rows, j1 = j0 + TILE < j->cols ? j0 + TILE : j->cols;
        const float *x = j->x + b * j->rows * j->cols;
        float *y = j->y + b * j->rows * j->cols;
        for (int64_t jj = j0; jj < j1; jj++)
            for (int64_t ii = i0; ii < i1; ii++) y[jj * j->rows + ii] = x[ii * j->cols + jj];
    }
}

void pl_cpu_transpose(pl_compute *c, const float *x, float *y, int64_t batch, int64_t rows, int64_t cols) {
    if (batch <= 0 || rows <= 0 || cols <= 0) return;
    transpose_job j = {x, y, rows, cols, (rows + TILE - 1) / TILE, (cols + TILE - 1) / TILE};
    pl_cpu_parallel_ranges(pl_cpu(c), transpose_tiles, &j, batch * j.tiles_i * j.tiles_j, TILE * TILE, 1);
}
