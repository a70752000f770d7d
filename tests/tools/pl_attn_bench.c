/*
 * pl_attn_bench.c -- times the CPU backend's non-causal attention alone (a
 * vision tower's: every query over all n rows, f32 K/V), to tune its
 * kernels without the rest of the tower.  Information only; never a
 * pass/fail test.
 *
 *   pl_attn_bench N [THREADS [REPS [TIER [HEADS [HEAD_DIM [flash|f16]]]]]]
 *
 * N queries over N rows (default 16 heads of 64, default arithmetic on an
 * f32 cache); TIER generic|avx2|avx512|neon (default: the best).  The
 * scratch is reserved as the tower reserves it (256-row matmul chunks of
 * 4096-wide rows).  Prints the best of REPS runs in ms and in GFLOP/s
 * (4 n^2 head_dim per head: the two matrix products).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/compute.h"
#include "backend/cpu/cpu_compute.h"
#include "backend/cpu/cpu_isa.h"
#include "base/clock.h"
#include "base/rng.h"
#include "ops/ref.h"
#include "quant/types.h"

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: pl_attn_bench N [THREADS [REPS [TIER [HEADS [HEAD_DIM [flash|f16]]]]]]\n");
        return 2;
    }
    const int64_t n = atoll(argv[1]);
    const int nt = argc > 2 ? atoi(argv[2]) : 2, reps = argc > 3 ? atoi(argv[3]) : 3;
    const pl_cpu_isa *isa = argc > 4 && strcmp(argv[4], "best") ? pl_cpu_isa_by_name(argv[4]) : pl_cpu_isa_best();
    const int64_t nh = argc > 5 ? atoll(argv[5]) : 16, hd = argc > 6 ? atoll(argv[6]) : 64;
    const bool flash = argc > 7 && !strcmp(argv[7], "flash"), f16 = argc > 7 && !strcmp(argv[7], "f16");
    if (n <= 0 || n > 65536 || nt <= 0 || reps <= 0 || !isa || nh <= 0 || nh > 64 || hd <= 0 || hd > PL_MAX_HEAD_DIM) {
        fprintf(stderr, "pl_attn_bench: bad arguments (sizes, or a tier this host cannot run)\n");
        return 2;
    }
    pl_rng rng;
    pl_rng_seed(&rng, 7);
    const int64_t all = n * nh * hd;
    float *q = malloc(sizeof(float) * (size_t)all), *k = malloc(sizeof(float) * (size_t)all);
    float *v = malloc(sizeof(float) * (size_t)all), *y = malloc(sizeof(float) * (size_t)all);
    if (!q || !k || !v || !y) {
        fprintf(stderr, "pl_attn_bench: out of memory\n");
        return 1;
    }
    for (int64_t i = 0; i < all; i++) {
        q[i] = (float)(pl_rng_uniform(&rng) * 4 - 2);
        k[i] = (float)(pl_rng_uniform(&rng) * 4 - 2);
        v[i] = (float)(pl_rng_uniform(&rng) * 4 - 2);
    }
    void *kc = k, *vc = v;
    if (f16) {
        kc = malloc(2 * (size_t)all), vc = malloc(2 * (size_t)all);
        if (!kc || !vc) return 1;
        pl_ref_kv_store(PL_TYPE_F16, k, kc, all);
        pl_ref_kv_store(PL_TYPE_F16, v, vc, all);
    }
    pl_compute *c = NULL;
    pl_compute_limits lim = {.n_batch = 256, .max_in = 4096, .n_ctx = n, .head_dim = hd};
    if (pl_cpu_compute_new(nt, isa, &c) != POCKETLLM_OK || c->ops->reserve(c, &lim) != POCKETLLM_OK) {
        fprintf(stderr, "pl_attn_bench: cannot set up the CPU backend\n");
        return 1;
    }
    const uint32_t kvt = f16 ? PL_TYPE_F16 : PL_TYPE_F32;
    pl_attn_params ap = {nh, nh, hd, 1.0f / sqrtf((float)hd), kvt, kvt, flash, n, 0};
    double best = 1e30, best_cpu = 1e30;
    for (int r = 0; r < reps; r++) {
        struct timespec c0, c1;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
        const double t0 = pl_now_s();
        c->ops->attention(c, &ap, q, kc, vc, n, 0, y);
        const double dt = pl_now_s() - t0;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
        const double dc = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) * 1e-9;
        if (dt < best) best = dt;
        if (dc < best_cpu) best_cpu = dc;
    }
    double sum = 0;
    for (int64_t i = 0; i < all; i++) sum += y[i];
    printf("%s attention n %lld, %lld heads of %lld, %s%s, %d threads: %.1f ms, %.1f GFLOP/s; cpu %.1f ms (checksum %.6g)\n",
           isa->name, (long long)n, (long long)nh, (long long)hd, f16 ? "f16" : "f32", flash ? " flash" : "", nt, best * 1e3,
           4.0 * (double)n * (double)n * (double)hd * (double)nh / best * 1e-9, best_cpu * 1e3, sum);
    const int st = c->status == POCKETLLM_OK ? 0 : 1;
    c->ops->free(c);
    if (f16) free(kc), free(vc);
    free(q), free(k), free(v), free(y);
    return st;
}
