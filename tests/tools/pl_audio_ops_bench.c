/*
 * pl_audio_ops_bench.c -- times the CPU backend's audio-tower ops alone at
 * the Qwen3-ASR tower's sizes (eight 100-frame chunks of 128 mel bins):
 * gelu_erf over the first conv's output (8 x 64 x 50 x 480 values), the
 * three im2cols of the 3x3 stride-2 convs and the transpose before the
 * projection, on one tier (default: the best) against the reference loop.
 * Information only; never a pass/fail test.
 *
 *   pl_audio_ops_bench [THREADS [REPS [TIER]]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/compute.h"
#include "backend/cpu/cpu_isa.h"
#include "base/clock.h"
#include "base/rng.h"
#include "ops/ref.h"

typedef void (*job_fn)(pl_compute *c, void *ctx);

typedef struct {
    const pl_im2col_params *p;
    const float *x;
    float *y;
    int64_t n, rows, cols;
    bool ref;
} args;

static void run_gelu(pl_compute *c, void *ctx) {
    args *a = ctx;
    if (a->ref) pl_ref_gelu_erf(a->x, a->y, a->n);
    else pl_gelu_erf(c, a->x, a->y, a->n);
}
static void run_im2col(pl_compute *c, void *ctx) {
    args *a = ctx;
    if (a->ref) pl_ref_im2col(a->p, a->x, a->y);
    else pl_im2col(c, a->p, a->x, a->y);
}
static void run_transpose(pl_compute *c, void *ctx) {
    args *a = ctx;
    if (a->ref) pl_ref_transpose(a->x, a->y, a->n, a->rows, a->cols);
    else pl_transpose(c, a->x, a->y, a->n, a->rows, a->cols);
}

/* best of reps, in ms */
static double best_ms(pl_compute *c, job_fn fn, void *ctx, int reps) {
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        const double t0 = pl_now_s();
        fn(c, ctx);
        const double ms = (pl_now_s() - t0) * 1e3;
        best = ms < best ? ms : best;
    }
    return best;
}

int main(int argc, char **argv) {
    const int nt = argc > 1 ? atoi(argv[1]) : 2, reps = argc > 2 ? atoi(argv[2]) : 3;
    const pl_cpu_isa *isa = argc > 3 ? pl_cpu_isa_by_name(argv[3]) : pl_cpu_isa_best();
    if (nt <= 0 || reps <= 0 || !isa) {
        fprintf(stderr, "usage: pl_audio_ops_bench [THREADS [REPS [TIER]]] (a tier this host runs)\n");
        return 2;
    }
    pl_compute *c = NULL;
    if (pl_cpu_compute_new(nt, isa, &c)) {
        fprintf(stderr, "pl_audio_ops_bench: %s\n", pocketllm_last_error());
        return 1;
    }
    const int64_t big = 8 * 64 * 50 * 480 * 9; /* the largest im2col output */
    float *x = malloc((size_t)big * 4), *y = malloc((size_t)big * 4);
    if (!x || !y) return 1;
    pl_rng rng;
    pl_rng_seed(&rng, 1);
    for (int64_t i = 0; i < big; i++) x[i] = pl_rng_uniform(&rng) * 8 - 4;
    printf("tier %s, %d threads, best of %d\n", isa->name, nt, reps);

    args g = {NULL, x, y, 8 * 64 * 50 * 480, 0, 0, false};
    const double gv = best_ms(c, run_gelu, &g, reps);
    g.ref = true;
    const double gr = best_ms(c, run_gelu, &g, reps);
    printf("gelu_erf %lld values: %.2f ms (%.2f ns a value); the reference loop, one thread: %.2f ms\n", (long long)g.n, gv,
           gv * 1e6 / (double)g.n, gr);

    const pl_im2col_params convs[3] = {{8, 1, 128, 100, 3, 3, 2, 2, 1, 1, true},
                                       {8, 480, 64, 50, 3, 3, 2, 2, 1, 1, true},
                                       {8, 480, 32, 25, 3, 3, 2, 2, 1, 1, true}};
    for (int k = 0; k < 3; k++) {
        const pl_im2col_params *p = &convs[k];
        const int64_t out = p->n * pl_im2col_out_h(p) * pl_im2col_out_w(p) * p->c_in * 9, in = p->n * p->h * p->w * p->c_in;
        args a = {p, x, y, 0, 0, 0, false};
        const double v = best_ms(c, run_im2col, &a, reps);
        a.ref = true;
        const double r = best_ms(c, run_im2col, &a, reps);
        printf("im2col %lldx%lldx%lld c_in %lld -> %lld values: %.2f ms (%.1f GB/s read+written); the reference: %.2f ms\n",
               (long long)p->n, (long long)p->h, (long long)p->w, (long long)p->c_in, (long long)out, v,
               (double)(out + in) * 4 / (v * 1e6), r);
    }
    args t = {NULL, x, y, 8, 16, 13 * 480, false};
    const double tv = best_ms(c, run_transpose, &t, reps);
    t.ref = true;
    const double tr = best_ms(c, run_transpose, &t, reps);
    printf("transpose 8 x 16 x 6240: %.3f ms; the reference: %.3f ms\n", tv, tr);
    if (c->status) fprintf(stderr, "pl_audio_ops_bench: %s\n", pocketllm_last_error());
    c->ops->free(c);
    free(x), free(y);
    return 0;
}
