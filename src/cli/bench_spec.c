/*
 * bench_spec.c -- `pocketllm bench --lookup N | --draft M`: what
 * speculative decoding gains on this model and host.  Each repetition
 * generates -n tokens greedily after the same prompt of -p ids twice: step
 * by step, then through spec_loop (run's and chat's loop) with the drafts
 * -- and the two outputs must be the same ids (greedy verification keeps
 * plain decoding's tokens; a difference is a bug and fails the run).  The
 * median speeds, their ratio, the drafts made and kept (the acceptance
 * rate) and the tokens each verifying pass yielded are reported.  With
 * random weights what the drafts earn depends on how the model repeats
 * itself; the acceptance rate printed beside the speed-up is what to read
 * it by.
 */
#include "bench_spec.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "run_common.h"
#include "spec_loop.h"

/* The output of one speculative generation, for spec_loop's take(). */
typedef struct gen_out {
    int32_t *ids;
    int64_t n, cap;
} gen_out;

static bool take(void *user, int32_t id, pocketllm_status *st) {
    gen_out *g = user;
    (void)st;
    g->ids[g->n++] = id;
    return g->n < g->cap;
}

static size_t room(void *user) {
    const gen_out *g = user;
    return (size_t)(g->cap - g->n);
}

/* n greedy tokens after the prompt, step by step, into out. */
static pocketllm_status plain(pocketllm_session *s, pocketllm_sampler *smp, const int32_t *ids, const bench_spec_cfg *c,
                              int32_t *out, double *secs) {
    pocketllm_session_reset(s);
    pocketllm_status st = pocketllm_session_eval(s, ids, (size_t)c->n_prompt, 0);
    const int32_t nv = pocketllm_session_n_vocab(s);
    const double t0 = cli_now();
    for (int64_t k = 0; k < c->n && !st; k++) {
        st = pocketllm_sampler_sample(smp, pocketllm_session_logits(s, -1), nv, &out[k]);
        if (!st && k + 1 < c->n) st = pocketllm_session_eval(s, &out[k], 1, 0);
    }
    *secs = cli_now() - t0;
    return st;
}

/* The same through spec_loop, counting drafted, kept and passes into tot. */
static pocketllm_status spec(pocketllm_session *s, pocketllm_sampler *smp, const int32_t *ids, const bench_spec_cfg *c,
                             int32_t *out, double *secs, uint64_t tot[3]) {
    pocketllm_session_reset(s);
    if (c->dm) pocketllm_session_reset(c->dm->s);
    pocketllm_status st = pocketllm_session_eval(s, ids, (size_t)c->n_prompt, 0);
    if (st) return st;
    gen_out g = {out, 0, c->n};
    spec_loop L;
    memset(&L, 0, sizeof L);
    L.s = s;
    L.smp = smp;
    L.n_vocab = pocketllm_session_n_vocab(s);
    L.dm = c->dm;
    L.lookup = c->lookup;
    L.draft_max = (size_t)c->draft_max;
    L.draft_min = (size_t)c->draft_min;
    L.cap = (size_t)(c->n_prompt + c->n + 1);
    if (!(L.hist = malloc(L.cap * sizeof *L.hist))) return POCKETLLM_ERR_NO_MEMORY;
    memcpy(L.hist, ids, (size_t)c->n_prompt * sizeof *ids);
    L.n_hist = (size_t)c->n_prompt;
    L.take = take;
    L.room = room;
    L.user = &g;
    const double t0 = cli_now();
    st = spec_loop_run(&L);
    *secs = cli_now() - t0;
    free(L.hist);
    tot[0] += L.drafted, tot[1] += L.accepted, tot[2] += L.passes;
    if (!st && g.n != c->n) memset(out + g.n, 0xff, (size_t)(c->n - g.n) * sizeof *out); /* compared: a short output differs */
    return st;
}

int bench_spec(const char *cmd, pocketllm_session *s, const int32_t *ids, const bench_spec_cfg *c, bool json) {
    pocketllm_sampler_params sp = pocketllm_sampler_default_params();
    sp.temperature = 0;
    pocketllm_sampler *smp = NULL;
    int32_t *a = malloc((size_t)c->n * sizeof *a), *b = malloc((size_t)c->n * sizeof *b);
    double *tp = malloc((size_t)c->reps * sizeof *tp), *ts = malloc((size_t)c->reps * sizeof *ts);
    uint64_t tot[3] = {0, 0, 0};
    int rc = CLI_FAIL;
    pocketllm_status st = a && b && tp && ts ? pocketllm_sampler_new(&sp, &smp) : POCKETLLM_ERR_NO_MEMORY;
    for (int64_t r = 0; r < c->reps && !st; r++) {
        double sa = 0, sb = 0;
        if ((st = plain(s, smp, ids, c, a, &sa)) || (st = spec(s, smp, ids, c, b, &sb, tot))) break;
        if (memcmp(a, b, (size_t)c->n * sizeof *a)) {
            int64_t k = 0;
            while (a[k] == b[k]) k++;
            rc = cli_error(cmd, "speculative greedy output differs from plain greedy at token %lld (%d against %d): "
                           "a bug", (long long)k, b[k], a[k]);
            goto done;
        }
        tp[r] = (double)c->n / sa, ts[r] = (double)c->n / sb;
    }
    if (st) {
        rc = cli_lib_error(cmd, st);
        goto done;
    }
    const double plain_tps = cli_median(tp, (size_t)c->reps), spec_tps = cli_median(ts, (size_t)c->reps);
    const double rate = tot[0] ? (double)tot[1] / (double)tot[0] : 0, per_pass = tot[2] ? (double)(c->n * c->reps) / (double)tot[2] : 0;
    if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "engine", "pocketllm");
        cJSON_AddStringToObject(o, "drafting", c->dm ? "draft_model" : "lookup");
        if (c->dm) cJSON_AddStringToObject(o, "draft_model", c->draft_path);
        else cJSON_AddNumberToObject(o, "lookup", c->lookup);
        cJSON_AddNumberToObject(o, "draft_max", (double)c->draft_max);
        cJSON_AddNumberToObject(o, "p", (double)c->n_prompt);
        cJSON_AddNumberToObject(o, "n", (double)c->n);
        cJSON_AddNumberToObject(o, "reps", (double)c->reps);
        cJSON_AddNumberToObject(o, "plain_tokens_per_s", plain_tps);
        cJSON_AddNumberToObject(o, "spec_tokens_per_s", spec_tps);
        cJSON_AddNumberToObject(o, "speedup", spec_tps / plain_tps);
        cJSON_AddNumberToObject(o, "drafted", (double)tot[0]);
        cJSON_AddNumberToObject(o, "accepted", (double)tot[1]);
        cJSON_AddNumberToObject(o, "acceptance_rate", rate);
        cJSON_AddNumberToObject(o, "passes", (double)tot[2]);
        cJSON_AddNumberToObject(o, "tokens_per_pass", per_pass);
        char *text = cJSON_PrintUnformatted(o);
        if (text) puts(text);
        free(text);
        cJSON_Delete(o);
    } else {
        if (c->dm)
            printf("drafting  the draft model %s, up to %lld ids a pass\n", c->draft_path, (long long)c->draft_max);
        else
            printf("drafting  prompt lookup, n-grams up to %d, up to %lld ids a pass\n", c->lookup,
                   (long long)c->draft_max);
        printf("plain     %10.2f tok/s  greedy, %lld tokens after a prompt of %lld (median of %lld)\n", plain_tps,
               (long long)c->n, (long long)c->n_prompt, (long long)c->reps);
        printf("spec      %10.2f tok/s  the same ids: %.2fx; drafted %llu, kept %llu (%.1f%%), %.2f tokens a pass\n",
               spec_tps, spec_tps / plain_tps, (unsigned long long)tot[0], (unsigned long long)tot[1], 100 * rate,
               per_pass);
    }
    rc = CLI_OK;
done:
    pocketllm_sampler_free(smp);
    free(a), free(b), free(tp), free(ts);
    return rc;
}
