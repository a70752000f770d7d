/*
 * spec_loop.c -- speculative decoding's generation loop (see the header):
 * draft, verify in one pass, keep the prefix the target agrees with, cut
 * both caches back.  `run` and `chat` give it their own take() (what an
 * output id means to them) and nothing else differs.
 */
#include "spec_loop.h"

#include <stdlib.h>
#include <string.h>

/* Append id to the history, growing it. */
static pocketllm_status push(spec_loop *L, int32_t id) {
    if (L->n_hist == L->cap) {
        const size_t cap = L->cap * 2 + 64;
        int32_t *h = realloc(L->hist, cap * sizeof *h);
        if (!h) return POCKETLLM_ERR_NO_MEMORY;
        L->hist = h, L->cap = cap;
    }
    L->hist[L->n_hist++] = id;
    return POCKETLLM_OK;
}

/* One id into the output: given to take(), and -- unless it ends the
 * generation -- shown to the sampler's penalties and appended to the
 * history.  False ends the loop (*st says whether in error). */
static bool take(spec_loop *L, int32_t id, pocketllm_status *st) {
    if (!L->take(L->user, id, st)) return false;
    pocketllm_sampler_accept(L->smp, id);
    return !(*st = push(L, id));
}

/* The token row j of the verifying pass decides (row -1: the last): with
 * a draft there and sampling on, speculative sampling's rule -- the draft
 * kept with probability min(1, p/q), else a draw from the residual (p:
 * the target's distribution at the row, into pbuf; q: the draft's, NULL
 * for lookup's certain proposals); otherwise the sampler's own pick,
 * which for greedy is the argmax either way. */
static pocketllm_status verify_row(const spec_loop *L, int32_t row, const int32_t *draft, const float *q, float *pbuf,
                                   int32_t *id) {
    const float *logits = pocketllm_session_logits(L->s, row);
    if (L->grammar) {
        /* the budget: the ids the output may still take, so a reply is
         * completed within them */
        const int32_t budget = (int32_t)L->room(L->user);
        pocketllm_status st = pocketllm_sampler_sample_grammar(L->smp, L->grammar, logits, L->n_vocab, budget, id);
        return st ? st : pocketllm_grammar_accept(L->grammar, *id);
    }
    if (!draft || !L->sampled) return pocketllm_sampler_sample(L->smp, logits, L->n_vocab, id);
    pocketllm_status st = pocketllm_sampler_probs(L->smp, logits, L->n_vocab, pbuf);
    return st ? st : pocketllm_sampler_spec_step(L->smp, pbuf, q, L->n_vocab, *draft, id);
}

pocketllm_status spec_loop_run(spec_loop *L) {
    pocketllm_session *s = L->s;
    const uint32_t n_ctx = pocketllm_session_n_ctx(s);
    const size_t nv = (size_t)L->n_vocab;
    const bool model = L->dm && L->dm->s;
    int32_t *batch = malloc((L->draft_max + 1) * sizeof *batch);
    /* sampled: the target's distribution at a row, and the draft model's at each draft */
    float *p = L->sampled ? malloc(nv * sizeof *p) : NULL;
    float *q = L->sampled && model ? malloc(L->draft_max * nv * sizeof *q) : NULL;
    pocketllm_status st = POCKETLLM_OK;
    if (!batch || (L->sampled && !p) || (L->sampled && model && !q)) st = POCKETLLM_ERR_NO_MEMORY;
    int32_t id;
    if (!st) st = verify_row(L, -1, NULL, NULL, p, &id);
    /* id is the next token of the output */
    while (!st && take(L, id, &st)) {
        const uint32_t base = pocketllm_session_n_past(s);
        if (base >= n_ctx) {
            L->context_full = true;
            break;
        }
        /* the draft: no longer than the output and the context have room for */
        size_t max = L->draft_max;
        const size_t room = L->room(L->user), ctx_room = n_ctx - base - 1;
        if (max > room) max = room;
        if (max > ctx_room) max = ctx_room;
        size_t k = 0;
        if (model) st = spec_draft_next(L->dm, L->hist, L->n_hist, batch + 1, max, &k, q);
        else if (max) k = pocketllm_lookup_draft(L->hist, L->n_hist, 1, L->lookup, batch + 1, max);
        if (st) break;
        if (k < L->draft_min) k = 0;
        batch[0] = id;
        if ((st = pocketllm_session_eval(s, batch, k + 1, k > 0))) break;
        L->passes++;
        L->drafted += k;
        /* row j: the logits after id and the first j drafts */
        size_t j = 0;
        bool done = false;
        st = verify_row(L, k ? 0 : -1, k ? &batch[1] : NULL, q, p, &id);
        while (!st && j < k && id == batch[1 + j]) {
            if (!take(L, id, &st)) {
                done = !st;
                break;
            }
            j++;
            st = verify_row(L, (int32_t)j, j < k ? &batch[1 + j] : NULL, q ? q + j * nv : NULL, p, &id);
        }
        L->accepted += j + (done ? 1 : 0);
        if (st) break;
        /* forget the rows after the kept ones -- the drafts refused, and
         * when the output ended on a draft, that draft's row too -- so the
         * session holds what the history holds, as after the plain loop
         * (a chat goes on from it) */
        if (j < k && (st = pocketllm_session_seq_truncate(s, 0, base + 1 + (uint32_t)j))) break;
        if (done) break;
        if (model && (st = spec_draft_keep(L->dm, base + 1 + j))) break;
    }
    /* the draft model holds no row the target does not: a chat's next
     * turn cuts both back to the prompt they share */
    if (!st && model) st = spec_draft_keep(L->dm, pocketllm_session_n_past(s));
    free(batch);
    free(p);
    free(q);
    return st;
}
