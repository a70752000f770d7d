/*
 * srv_engine.c -- TEMPORARY SHIM until the engine's multi-sequence session
 * exists (see srv_engine.h): one pocketllm_session per sequence, each
 * sequence's tokens of a batch evaluated by its own session.  Correct, but
 * not batched: it is replaced by one call of the engine's batched
 * evaluation.
 */
#include "srv_engine.h"

#include <stdlib.h>
#include <string.h>

struct srv_engine {
    pocketllm_session **s;
    uint32_t n_seq;
    int32_t n_vocab;
    const float **rows; /* per token of the last eval */
    float *copies;      /* logits copied out of each session */
    size_t cap;
};

pocketllm_status srv_engine_new(pocketllm_model *m, uint32_t n_seq, uint32_t n_ctx, uint32_t n_batch, uint32_t kv_type,
                                int n_threads, srv_engine **out) {
    srv_engine *e = calloc(1, sizeof *e);
    if (!e || !(e->s = calloc(n_seq, sizeof *e->s))) {
        free(e);
        return POCKETLLM_ERR_NO_MEMORY;
    }
    e->n_seq = n_seq;
    pocketllm_session_params p = pocketllm_session_default_params();
    p.n_ctx = n_ctx;
    p.n_batch = n_batch;
    p.kv_type = kv_type;
    p.n_threads = n_threads;
    for (uint32_t i = 0; i < n_seq; i++) {
        pocketllm_status st = pocketllm_session_new(m, &p, &e->s[i]);
        if (st) {
            srv_engine_free(e);
            return st;
        }
    }
    e->n_vocab = pocketllm_session_n_vocab(e->s[0]);
    *out = e;
    return POCKETLLM_OK;
}

void srv_engine_free(srv_engine *e) {
    if (!e) return;
    for (uint32_t i = 0; i < e->n_seq; i++) pocketllm_session_free(e->s[i]);
    free(e->s);
    free(e->rows);
    free(e->copies);
    free(e);
}

pocketllm_status srv_engine_eval(srv_engine *e, const srv_tok *toks, size_t n) {
    if (n > e->cap) {
        free(e->rows);
        free(e->copies);
        e->rows = calloc(n, sizeof *e->rows);
        e->copies = malloc(n * (size_t)e->n_vocab * sizeof *e->copies);
        if (!e->rows || !e->copies) {
            e->cap = 0;
            return POCKETLLM_ERR_NO_MEMORY;
        }
        e->cap = n;
    }
    memset(e->rows, 0, n * sizeof *e->rows);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        int32_t ids[4096];
        size_t k = 0;
        while (j < n && toks[j].seq == toks[i].seq && k < 4096) ids[k++] = toks[j++].id;
        pocketllm_session *s = e->s[toks[i].seq];
        pocketllm_status st = pocketllm_session_eval(s, ids, k, 1);
        if (st) return st;
        for (size_t t = i; t < j; t++)
            if (toks[t].logits) {
                float *dst = e->copies + t * (size_t)e->n_vocab;
                memcpy(dst, pocketllm_session_logits(s, (int32_t)(t - i)), (size_t)e->n_vocab * sizeof *dst);
                e->rows[t] = dst;
            }
        i = j;
    }
    return POCKETLLM_OK;
}

const float *srv_engine_logits(const srv_engine *e, size_t i) { return i < e->cap ? e->rows[i] : NULL; }

uint32_t srv_engine_n_past(const srv_engine *e, uint32_t seq) { return pocketllm_session_n_past(e->s[seq]); }

void srv_engine_clear(srv_engine *e, uint32_t seq) { pocketllm_session_reset(e->s[seq]); }

int32_t srv_engine_n_vocab(const srv_engine *e) { return e->n_vocab; }
