/*
 * cpu_moe.c -- mixture of experts on the CPU: the router and qwen2moe's
 * shared-expert gate (the routed experts' FFN is cpu_moe_ffn.c).
 */
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_compute.h"
#include "base/error.h"

/* ---- moe_route / sigmoid_gate: the reference's arithmetic, rows over the
 * threads (a router's row is 128 exps and a sort: nothing to vectorise
 * that would keep llama.cpp's ties) ---- */

typedef struct {
    const pl_moe_route_params *p;
    const float *logits;
    int64_t n_tok;
    int32_t *ids;
    float *w;
} route_job;

static void route_rows(void *ctx, int chunk, int n_chunks, int thread) {
    (void)thread;
    route_job *j = ctx;
    long long lo, hi;
    pl_pool_split(j->n_tok, chunk, n_chunks, &lo, &hi);
    const int64_t ne = j->p->n_expert, k = j->p->n_used;
    pl_ref_moe_route(j->p, j->logits + lo * ne, hi - lo, j->ids + lo * k, j->w + lo * k);
}

void pl_cpu_moe_route(pl_compute *c, const pl_moe_route_params *p, const float *logits, int64_t n_tok, int32_t *ids,
                          float *w) {
    if (p->n_expert < 1 || p->n_expert > PL_MAX_EXPERTS || p->n_used < 1 || p->n_used > p->n_expert) {
        pl_compute_fail(c, pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "moe_route: %lld of %lld experts",
                                   (long long)p->n_used, (long long)p->n_expert));
        return;
    }
    route_job j = {p, logits, n_tok, ids, w};
    pl_cpu_parallel(pl_cpu(c), route_rows, &j, n_tok * p->n_expert * 16);
}

typedef struct {
    const float *x, *g;
    float *y;
    int64_t rows, n;
} gate_job;

static void gate_rows(void *ctx, int chunk, int n_chunks, int thread) {
    (void)thread;
    gate_job *j = ctx;
    long long lo, hi;
    pl_pool_split(j->rows, chunk, n_chunks, &lo, &hi);
    pl_ref_sigmoid_gate(j->x + lo * j->n, j->g + lo, j->y + lo * j->n, hi - lo, j->n);
}

void pl_cpu_sigmoid_gate(pl_compute *c, const float *x, const float *g, float *y, int64_t rows, int64_t n) {
    gate_job j = {x, g, y, rows, n};
    pl_cpu_parallel(pl_cpu(c), gate_rows, &j, rows * n);
}
