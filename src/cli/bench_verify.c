/*
 * bench_verify.c -- `pocketllm bench --verify N`: the cost of verifying j
 * drafted tokens in one batched pass, as a multiple of one decode step.
 * This is the number speculative decoding lives on: with drafts that cost
 * nothing to make (prompt lookup), a pass of 1 + j tokens at c(j) times a
 * step's cost yields 1 + a + ... + a^j tokens on average when each draft
 * is kept with probability a (independently), so the speedup over plain
 * decoding is that sum over c(j), at the best j.  The costs are measured;
 * the speedups are computed from them and say so.
 */
#include "bench_verify.h"

#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "run_common.h"

pocketllm_status bench_verify_measure(pocketllm_session *s, const int32_t *ids, int64_t depth, int64_t n_draft,
                                      int tries, double *ms) {
    double *t = malloc((size_t)tries * sizeof *t);
    if (!t) return POCKETLLM_ERR_NO_MEMORY;
    pocketllm_session_reset(s);
    pocketllm_status st = depth > 0 ? pocketllm_session_eval(s, ids, (size_t)depth, 0) : POCKETLLM_OK;
    /* the passes interleave j (0, 1, .. n, 0, 1, ..) so that a host whose
     * speed drifts moves every j alike, not the last ones only */
    double *all = malloc((size_t)(n_draft + 1) * (size_t)tries * sizeof *all);
    if (!all) st = POCKETLLM_ERR_NO_MEMORY;
    for (int r = 0; r < tries && !st; r++)
        for (int64_t j = 0; j <= n_draft && !st; j++) {
            const double t0 = (cli_now() * 1e3);
            st = pocketllm_session_eval(s, ids + depth, (size_t)(j + 1), j > 0);
            all[j * tries + r] = (cli_now() * 1e3) - t0;
            if (!st) st = pocketllm_session_seq_truncate(s, 0, (uint32_t)depth);
        }
    for (int64_t j = 0; j <= n_draft && !st; j++) {
        for (int r = 0; r < tries; r++) t[r] = all[j * tries + r];
        ms[j] = cli_median(t, (size_t)tries);
    }
    free(all);
    free(t);
    return st;
}

/* The best speedup of prompt lookup at acceptance a over draft lengths
 * 0 .. n (0: plain decoding, 1.0), and the length that gives it. */
static double lookup_speedup(const double *ms, int64_t n, double a, int64_t *best) {
    double top = 1.0, tokens = 1.0, p = 1.0;
    *best = 0;
    for (int64_t j = 1; j <= n; j++) {
        p *= a;
        tokens += p;
        const double x = tokens / (ms[j] / ms[0]);
        if (x > top) top = x, *best = j;
    }
    return top;
}

static const double rates[] = {0.3, 0.5, 0.7, 0.9};
#define N_RATES (sizeof rates / sizeof rates[0])

void bench_verify_print(const double *ms, int64_t n_draft, int64_t depth) {
    printf("verify    a pass of 1 + j tokens (all logits kept) at depth %lld against one decode step (%.2f ms):",
           (long long)depth, ms[0]);
    for (int64_t j = 1; j <= n_draft; j++) printf("%s j=%lld %.2fx", j > 1 ? "," : "", (long long)j, ms[j] / ms[0]);
    printf("\nlookup    computed from these costs (drafts free, each kept with probability a):");
    for (size_t i = 0; i < N_RATES; i++) {
        int64_t best;
        const double x = lookup_speedup(ms, n_draft, rates[i], &best);
        printf("%s a=%.1f %.2fx (j=%lld)", i ? "," : "", rates[i], x, (long long)best);
    }
    printf("\n");
}

cJSON *bench_verify_json(const double *ms, int64_t n_draft, int64_t depth) {
    cJSON *o = cJSON_CreateObject(), *m = cJSON_CreateArray(), *c = cJSON_CreateArray(), *l = cJSON_CreateArray();
    cJSON_AddNumberToObject(o, "depth", (double)depth);
    cJSON_AddNumberToObject(o, "step_ms", ms[0]);
    for (int64_t j = 0; j <= n_draft; j++) {
        cJSON_AddItemToArray(m, cJSON_CreateNumber(ms[j]));
        cJSON_AddItemToArray(c, cJSON_CreateNumber(ms[j] / ms[0]));
    }
    cJSON_AddItemToObject(o, "ms", m);           /* ms[j]: a pass of 1 + j tokens */
    cJSON_AddItemToObject(o, "cost_ratio", c);   /* ms[j] / ms[0] */
    for (size_t i = 0; i < N_RATES; i++) {
        int64_t best;
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "acceptance", rates[i]);
        cJSON_AddNumberToObject(e, "speedup", lookup_speedup(ms, n_draft, rates[i], &best));
        cJSON_AddNumberToObject(e, "draft_len", (double)best);
        cJSON_AddItemToArray(l, e);
    }
    cJSON_AddItemToObject(o, "lookup_speedup_computed", l);
    return o;
}
