/*
 * pl_mm_bench.c -- times the CPU matmul alone (weights of a quant type,
 * n_tok activation rows), to tune the kernels without the rest of a
 * forward pass.  Information only; never a pass/fail test.
 *
 *   pl_mm_bench TYPE N_IN N_OUT N_TOK [THREADS [REPS [TIER]]]
 *
 * TYPE is a type name (q8_0, q4_K, ...); TIER generic|avx2|avx512 (default:
 * the best).  Prints the best of REPS runs in ms and in GMAC/s.
 */
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "backend/compute.h"
#include "backend/cpu/cpu_compute.h"
#include "backend/cpu/cpu_isa.h"
#include "base/clock.h"
#include "base/rng.h"
#include "quant/types.h"

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: pl_mm_bench TYPE N_IN N_OUT N_TOK [THREADS [REPS [TIER]]]\n");
        return 2;
    }
    uint32_t type = PL_TYPE_COUNT;
    for (uint32_t t = 0; t < PL_TYPE_COUNT; t++)
        if (pl_type_valid(t) && !strcmp(pl_type_get(t)->name, argv[1])) type = t;
    const int64_t n_in = atoll(argv[2]), n_out = atoll(argv[3]), n_tok = atoll(argv[4]);
    const int nt = argc > 5 ? atoi(argv[5]) : 1, reps = argc > 6 ? atoi(argv[6]) : 5;
    const pl_cpu_isa *isa = argc > 7 ? pl_cpu_isa_by_name(argv[7]) : pl_cpu_isa_best();
    uint64_t row = 0;
    if (type == PL_TYPE_COUNT || !pl_type_get(type)->from_float || n_in <= 0 || n_out <= 0 || n_tok <= 0 || n_tok > 4096 ||
        nt <= 0 || reps <= 0 || !isa || !pl_type_row_bytes(type, (uint64_t)n_in, &row)) {
        fprintf(stderr, "pl_mm_bench: bad arguments (type, sizes, or a tier this host cannot run)\n");
        return 2;
    }
    pl_rng rng;
    pl_rng_seed(&rng, 7);
    uint8_t *wd = malloc((size_t)row * (size_t)n_out);
    float *f = malloc(sizeof(float) * (size_t)(n_in > n_out ? n_in : n_out) * (size_t)n_tok);
    for (int64_t o = 0; o < n_out; o++) {
        for (int64_t i = 0; i < n_in; i++) f[i] = (float)(pl_rng_uniform(&rng) * 2 - 1);
        pl_type_get(type)->from_float(f, wd + (size_t)o * row, n_in, NULL);
    }
    float *x = malloc(sizeof(float) * (size_t)n_in * (size_t)n_tok), *y = malloc(sizeof(float) * (size_t)n_out * (size_t)n_tok);
    for (int64_t i = 0; i < n_in * n_tok; i++) x[i] = (float)(pl_rng_uniform(&rng) * 2 - 1);
    pl_weight w = {.name = "w", .data = wd, .type = type, .n_in = n_in, .n_out = n_out, .row_bytes = (size_t)row};
    pl_compute *c = NULL;
    pl_compute_limits lim = {.n_batch = n_tok, .max_in = n_in, .n_ctx = 16, .head_dim = PL_MAX_HEAD_DIM};
    if (pl_cpu_compute_new(nt, isa, &c) != POCKETLLM_OK || c->ops->reserve(c, &lim) != POCKETLLM_OK) {
        fprintf(stderr, "pl_mm_bench: cannot set up the CPU backend\n");
        return 1;
    }
    /* wall time, and the CPU time of all threads (less disturbed by other
     * processes on a shared machine: time spent descheduled is not in it) */
    double best = 1e30, best_cpu = 1e30;
    for (int r = 0; r < reps; r++) {
        struct timespec c0, c1;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
        const double t0 = pl_now_s();
        c->ops->mul_mat(c, &w, x, n_tok, y);
        const double dt = pl_now_s() - t0;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
        const double dc = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) * 1e-9;
        if (dt < best) best = dt;
        if (dc < best_cpu) best_cpu = dc;
    }
    printf("%s %s %lldx%lld x %lld tok, %d threads: %.3f ms, %.1f GMAC/s; cpu %.3f ms\n", isa->name, argv[1], (long long)n_out,
           (long long)n_in, (long long)n_tok, nt, best * 1e3, (double)n_in * (double)n_out * (double)n_tok / best * 1e-9,
           best_cpu * 1e3);
    c->ops->free(c);
    free(wd), free(f), free(x), free(y);
    return c->status == POCKETLLM_OK ? 0 : 1;
}
