/*
 * bench_grammar.c -- `pocketllm bench --json-schema FILE` (or --grammar
 * FILE): what a constraint costs a generation.  The same sampled decode
 * (temperature 1, the same seed, a prompt of -p tokens) runs -n steps
 * without and with the constraint, each step a forward pass plus the
 * sampler; the ratio of their speeds is the constraint's cost.  Apart from
 * that timing, the full vocabulary mask of each constrained step is taken
 * once more and timed: the cost of a step where the model's own choice is
 * refused and every token must be checked (a warm automaton, no cached
 * mask).  When the text completes a match the constraint starts over, so
 * every step is constrained.
 *
 * The speed ratio moves with a shared host's load by more than the
 * constraint costs, so the constraint's own time is also measured
 * directly: the sampling and accepting of each constrained step on the
 * clock, less the plain sampling's, is what the constraint adds to a step.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_grammar.h"
#include "cli.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One decode of n steps after the prompt; tokens per second in *tps and
 * the seconds spent sampling (with g: and accepting into the grammar) in
 * *t_smp.  With g: constrained, and each step's full mask timed into
 * mask_ms. */
static pocketllm_status decode(const pocketllm_model *m, pocketllm_session *s, const int32_t *prompt, size_t n_prompt,
                               int64_t n, uint64_t seed, pocketllm_grammar *g, double *tps, double *t_smp,
                               double *mask_ms, uint8_t *allow, int64_t *refused) {
    pocketllm_session_reset(s);
    pocketllm_status st = pocketllm_session_eval(s, prompt, n_prompt, 0);
    if (st) return st;
    pocketllm_sampler_params sp = pocketllm_sampler_default_params();
    sp.temperature = 1.0f, sp.top_k = 0, sp.top_p = 1.0f, sp.min_p = 0.0f, sp.seed = seed;
    pocketllm_sampler *smp = NULL;
    if ((st = pocketllm_sampler_new(&sp, &smp))) return st;
    if (g) pocketllm_grammar_reset(g);
    const int32_t n_vocab = pocketllm_session_n_vocab(s);
    double t_mask = 0;
    *t_smp = 0;
    const double t0 = now_s();
    for (int64_t k = 0; k < n && !st; k++) {
        int32_t id;
        const float *logits = pocketllm_session_logits(s, -1);
        if (g) {
            /* the step as generation takes it */
            const double s0 = now_s();
            if ((st = pocketllm_sampler_sample_grammar(smp, g, logits, n_vocab, -1, &id))) break;
            *t_smp += now_s() - s0;
            /* and, off the clock of the decode, the whole mask of this state */
            const double m0 = now_s();
            if ((st = pocketllm_grammar_mask(g, allow, n_vocab))) break;
            const double m1 = now_s();
            mask_ms[k] = (m1 - m0) * 1e3;
            t_mask += m1 - m0;
            if (!pocketllm_grammar_allows(g, id)) ++*refused; /* cannot happen: counted to prove it */
            const double a0 = now_s();
            if ((st = pocketllm_grammar_accept(g, id))) break;
            if (pocketllm_grammar_done(g) || pocketllm_token_is_eog(m, id)) pocketllm_grammar_reset(g);
            *t_smp += now_s() - a0;
        } else {
            const double s0 = now_s();
            if ((st = pocketllm_sampler_sample(smp, logits, n_vocab, &id))) break;
            *t_smp += now_s() - s0;
        }
        pocketllm_sampler_accept(smp, id);
        if (pocketllm_session_n_past(s) >= pocketllm_session_n_ctx(s)) break;
        st = pocketllm_session_eval(s, &id, 1, 0);
    }
    *tps = (double)n / (now_s() - t0 - t_mask);
    pocketllm_sampler_free(smp);
    return st;
}

int bench_grammar(const char *cmd, pocketllm_model *m, pocketllm_session *s, const char *schema_path,
                  const char *grammar_path, int64_t n_prompt, int64_t n, int64_t reps, bool json) {
    size_t len = 0;
    char *text = cli_slurp(cmd, schema_path ? schema_path : grammar_path, &len);
    if (!text) return CLI_FAIL;
    pocketllm_grammar *g = NULL;
    pocketllm_status st = schema_path ? pocketllm_grammar_from_json_schema(m, text, len, &g)
                                      : pocketllm_grammar_new(m, text, "root", &g);
    free(text);
    if (st) return cli_lib_error(cmd, st);
    const int32_t n_vocab = pocketllm_session_n_vocab(s);
    int32_t *prompt = NULL;
    size_t np = 0;
    /* a prompt of n_prompt tokens: the words below, repeated */
    const char *words = "Answer with one JSON object that describes a city, its people and its weather. ";
    char *ptext = malloc((size_t)n_prompt * 4 + 256);
    double *plain = calloc((size_t)reps, sizeof *plain), *con = calloc((size_t)reps, sizeof *con);
    double smp_plain = 0, smp_con = 0; /* seconds sampling, over every repetition */
    double *mask = calloc((size_t)(n * reps), sizeof *mask);
    uint8_t *allow = malloc((size_t)n_vocab);
    int rc = CLI_FAIL;
    if (!ptext || !plain || !con || !mask || !allow) {
        rc = cli_error(cmd, "out of memory");
        goto done;
    }
    ptext[0] = 0;
    while ((int64_t)strlen(ptext) < n_prompt * 4) strcat(ptext, words);
    if (!(prompt = malloc(((size_t)n_prompt + 512) * sizeof *prompt))) {
        rc = cli_error(cmd, "out of memory");
        goto done;
    }
    st = pocketllm_tokenize(m, ptext, strlen(ptext), 1, 1, prompt, (size_t)n_prompt + 512, &np);
    if (st) goto lib_fail;
    if ((int64_t)np > n_prompt) np = (size_t)n_prompt;
    int64_t refused = 0;
    for (int64_t r = 0; r < reps; r++) {
        double dummy, tp, tc;
        if ((st = decode(m, s, prompt, np, n, (uint64_t)r + 1, NULL, &plain[r], &tp, &dummy, allow, &refused)))
            goto lib_fail;
        if ((st = decode(m, s, prompt, np, n, (uint64_t)r + 1, g, &con[r], &tc, mask + r * n, allow, &refused)))
            goto lib_fail;
        smp_plain += tp, smp_con += tc;
        fprintf(stderr, "bench: rep %lld/%lld: decode %.2f tok/s plain, %.2f tok/s constrained\n", (long long)r + 1,
                (long long)reps, plain[r], con[r]);
    }
    qsort(plain, (size_t)reps, sizeof *plain, cmp_d);
    qsort(con, (size_t)reps, sizeof *con, cmp_d);
    const int64_t nm = n * reps;
    double sum = 0;
    for (int64_t i = 0; i < nm; i++) sum += mask[i];
    qsort(mask, (size_t)nm, sizeof *mask, cmp_d);
    const double p_med = plain[reps / 2], c_med = con[reps / 2];
    /* what the constraint adds to a step, against the plain step's time */
    const double add_ms = (smp_con - smp_plain) / (double)(n * reps) * 1e3, step_ms = 1e3 / p_med;
    const double m_mean = sum / (double)nm, m_p50 = mask[nm / 2], m_p95 = mask[(nm * 95) / 100], m_max = mask[nm - 1];
    if (json) {
        printf("{\"engine\":\"pocketllm\",\"constraint\":\"%s\",\"n_vocab\":%d,\"prompt_tokens\":%zu,\"steps\":%lld,"
               "\"plain_tokens_per_s\":%.3f,\"constrained_tokens_per_s\":%.3f,\"ratio\":%.4f,"
               "\"constraint_ms_per_step\":%.4f,\"constraint_share\":%.4f,"
               "\"mask_ms_mean\":%.4f,\"mask_ms_p50\":%.4f,\"mask_ms_p95\":%.4f,\"mask_ms_max\":%.4f}\n",
               schema_path ? "json_schema" : "grammar", n_vocab, np, (long long)n, p_med, c_med, c_med / p_med, add_ms,
               add_ms / step_ms, m_mean, m_p50, m_p95, m_max);
    } else {
        printf("constraint   %s (%s)\n", schema_path ? schema_path : grammar_path, schema_path ? "JSON schema" : "GBNF");
        printf("vocabulary   %d tokens; prompt %zu tokens; %lld sampled steps x %lld repetitions\n", n_vocab, np,
               (long long)n, (long long)reps);
        printf("decode       %.2f tok/s plain, %.2f tok/s constrained: %.1f%% of plain (medians)\n", p_med, c_med,
               100.0 * c_med / p_med);
        printf("constraint   %.3f ms added to a %.2f ms step (%.1f%% of the plain step), measured directly\n", add_ms,
               step_ms, 100.0 * add_ms / step_ms);
        printf("full mask    mean %.3f ms, median %.3f ms, p95 %.3f ms, max %.3f ms per step\n", m_mean, m_p50, m_p95,
               m_max);
    }
    if (refused) fprintf(stderr, "bench: %lld sampled tokens were outside the mask: a bug\n", (long long)refused);
    rc = refused ? CLI_FAIL : CLI_OK;
    goto done;
lib_fail:
    rc = cli_lib_error(cmd, st);
done:
    free(ptext);
    free(plain);
    free(con);
    free(mask);
    free(allow);
    free(prompt);
    pocketllm_grammar_free(g);
    return rc;
}
