/*
 * spec_draft.c -- the draft model of speculative decoding (see
 * spec_draft.h).
 */
#include "spec_draft.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The text of token id, special tokens rendered, into buf (NUL-ended);
 * false when it does not fit. */
static bool piece(const pocketllm_model *m, int32_t id, char *buf, size_t cap, size_t *len) {
    return pocketllm_token_to_piece(m, id, 1, buf, cap, len) == POCKETLLM_OK && *len < cap;
}

/* The first id whose text differs between the two models, or -1. */
static int32_t first_different(const pocketllm_model *a, const pocketllm_model *b, int32_t n_vocab) {
    char pa[256], pb[256];
    for (int32_t id = 0; id < n_vocab; id++) {
        size_t la = 0, lb = 0;
        const bool fa = piece(a, id, pa, sizeof pa, &la), fb = piece(b, id, pb, sizeof pb, &lb);
        if (fa != fb || la != lb || (fa && memcmp(pa, pb, la))) return id;
    }
    return -1;
}

bool spec_vocab_differs(const pocketllm_model *draft, const pocketllm_model *target, char *why, size_t cap) {
    const int32_t nd = pocketllm_model_n_vocab(draft), nt = pocketllm_model_n_vocab(target);
    int32_t bad = -1;
    if (nd == nt && pocketllm_token_bos(draft) == pocketllm_token_bos(target) &&
        pocketllm_token_eos(draft) == pocketllm_token_eos(target) && (bad = first_different(draft, target, nt)) < 0)
        return false;
    if (bad >= 0)
        snprintf(why, cap, "its vocabulary is not the model's (token %d differs)", bad);
    else
        snprintf(why, cap, "its vocabulary is not the model's (%d tokens, BOS %d, EOS %d against %d, %d, %d)", nd,
                 pocketllm_token_bos(draft), pocketllm_token_eos(draft), nt, pocketllm_token_bos(target),
                 pocketllm_token_eos(target));
    return true;
}

int spec_draft_open(const char *path, const run_common *c, const pocketllm_model *target, uint32_t n_ctx,
                    const pocketllm_sampler_params *sp_in, spec_draft *d, const char *cmd) {
    memset(d, 0, sizeof *d);
    pocketllm_model_params mp = pocketllm_model_default_params();
    mp.n_threads = (int)c->n_threads;
    int rc = cli_device_params(cmd, &c->device, &mp);
    if (rc) return rc;
    pocketllm_status st = pocketllm_model_open(path, &mp, &d->model);
    if (st) return cli_error(cmd, "--draft %s: %s", path, pocketllm_last_error());
    d->n_vocab = pocketllm_model_n_vocab(d->model);
    char why[160];
    if (spec_vocab_differs(d->model, target, why, sizeof why)) {
        rc = cli_error(cmd, "--draft %s: %s", path, why);
        spec_draft_close(d);
        return rc;
    }
    pocketllm_session_params sp = run_common_session_params(c, n_ctx);
    if ((st = pocketllm_session_new(d->model, &sp, &d->s))) {
        rc = cli_error(cmd, "--draft %s: %s", path, pocketllm_last_error());
        spec_draft_close(d);
        return rc;
    }
    if (sp_in) {
        pocketllm_sampler_params dp = *sp_in;
        dp.seed ^= 0x9e3779b97f4a7c15ull; /* its own draws, still reproducible from the seed */
        if ((st = pocketllm_sampler_new(&dp, &d->smp))) {
            rc = cli_error(cmd, "--draft: %s", pocketllm_last_error());
            spec_draft_close(d);
            return rc;
        }
    }
    return CLI_OK;
}

void spec_draft_close(spec_draft *d) {
    pocketllm_sampler_free(d->smp);
    pocketllm_session_free(d->s);
    pocketllm_model_close(d->model);
    memset(d, 0, sizeof *d);
}

static int32_t argmax(const float *x, int32_t n) {
    int32_t best = 0;
    for (int32_t i = 1; i < n; i++)
        if (x[i] > x[best]) best = i;
    return best;
}

pocketllm_status spec_draft_next(spec_draft *d, const int32_t *hist, size_t n, int32_t *out, size_t max, size_t *k,
                                 float *q) {
    *k = 0;
    if (!max) return POCKETLLM_OK;
    size_t seen = pocketllm_session_n_past(d->s);
    pocketllm_status st;
    /* it needs the logits after hist[n - 1]: evaluate that one again if
     * it has seen it all */
    if (seen >= n) {
        if ((st = pocketllm_session_seq_truncate(d->s, 0, (uint32_t)(n - 1)))) return st;
        seen = n - 1;
    }
    /* the ids the draft has not evaluated: the last one or two, or the
     * whole prompt the first time */
    if ((st = pocketllm_session_eval(d->s, hist + seen, n - seen, 0))) return st;
    if (n + max > pocketllm_session_n_ctx(d->s)) max = pocketllm_session_n_ctx(d->s) > n ? pocketllm_session_n_ctx(d->s) - n : 0;
    for (size_t i = 0; i < max; i++) {
        const float *l = pocketllm_session_logits(d->s, -1);
        if (d->smp) {
            /* drawn from exactly the distribution handed to the verifier */
            if ((st = pocketllm_sampler_probs(d->smp, l, d->n_vocab, q + i * (size_t)d->n_vocab)) ||
                (st = pocketllm_sampler_sample(d->smp, l, d->n_vocab, &out[i])))
                return st;
        } else {
            out[i] = argmax(l, d->n_vocab);
        }
        *k = i + 1;
        if (i + 1 < max && (st = pocketllm_session_eval(d->s, &out[i], 1, 0))) return st;
    }
    return POCKETLLM_OK;
}

pocketllm_status spec_draft_keep(spec_draft *d, size_t n) {
    if (pocketllm_session_n_past(d->s) <= n) return POCKETLLM_OK;
    return pocketllm_session_seq_truncate(d->s, 0, (uint32_t)n);
}
