/*
 * embed.c -- embeddings (pocketllm_embed): the hidden states a sequence
 * leaves after the model's final norm -- llama.cpp's t_embd, before the
 * output projection -- pooled as llama.cpp pools them (the mean over the
 * tokens, the first token's, the last token's, or none: every token's),
 * then optionally divided by their Euclidean norm.  An input longer than
 * the session's batch is evaluated in several passes on the sequence's KV
 * cache (causal attention makes each token's state the same as in one
 * pass) and the pooling accumulates across them.  Also the embedding width
 * and the pooling a checkpoint declares ({arch}.pooling_type).
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "gguf/gguf.h"
#include "model/model.h"
#include "runtime/session_hooks.h"

int32_t pocketllm_model_n_embd(const pocketllm_model *m) { return m && m->arch ? (int32_t)m->dims.n_embd : 0; }

int32_t pocketllm_model_pooling(const pocketllm_model *m) {
    if (!m || !m->gguf) return POCKETLLM_POOLING_NONE;
    char key[96];
    snprintf(key, sizeof key, "%s.pooling_type", m->arch_name);
    const pocketllm_gguf_value *v = pl_gguf_get(m->gguf, key);
    /* llama.cpp: no key, no pooling */
    if (!v) return POCKETLLM_POOLING_NONE;
    int64_t x;
    if (pocketllm_gguf_value_i64(v, &x) || x < 0 || x > INT32_MAX) return -2;
    return (int32_t)x;
}

/* out[0..n) /= its Euclidean norm (summed in double, as llama.cpp's
 * common_embd_normalize); a zero vector stays zero. */
static void l2_normalize(float *v, size_t n) {
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) sum += (double)v[i] * (double)v[i];
    const double norm = sum > 0.0 ? 1.0 / sqrt(sum) : 0.0;
    for (size_t i = 0; i < n; i++) v[i] = (float)((double)v[i] * norm);
}

static const char *pooling_name(int32_t p) {
    switch (p) {
    case POCKETLLM_POOLING_NONE: return "none";
    case POCKETLLM_POOLING_MEAN: return "mean";
    case POCKETLLM_POOLING_CLS: return "cls";
    case POCKETLLM_POOLING_LAST: return "last";
    default: return "?";
    }
}

/* The checks before any pass: a pooling we compute, room in out, the
 * context. */
static pocketllm_status embed_check(const pocketllm_session *s, uint32_t seq, size_t n, int32_t *pooling,
                                    size_t out_len) {
    const pl_model *m = pl_session_model(s);
    const int32_t asked = *pooling;
    if (*pooling == POCKETLLM_POOLING_MODEL) *pooling = pocketllm_model_pooling(m);
    if (*pooling == POCKETLLM_POOLING_RANK)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "rank pooling (a reranker's classification head) is not supported");
    if (*pooling < POCKETLLM_POOLING_NONE || *pooling > POCKETLLM_POOLING_LAST)
        return asked == POCKETLLM_POOLING_MODEL
                   ? pl_fail(POCKETLLM_ERR_UNSUPPORTED, "the model's %s.pooling_type (%d) is not a pooling this engine knows",
                             m->arch_name, *pooling)
                   : pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "pooling %d: none (0), mean (1), cls (2), last (3) or the "
                             "model's (-1)", asked);
    if (seq >= pocketllm_session_n_seq(s)) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "session: no sequence %u", seq);
    /* a model that wants every token to see every other (llama.cpp's
     * <arch>.attention.causal = false) would pool other states than ours */
    char key[96];
    snprintf(key, sizeof key, "%s.attention.causal", m->arch_name);
    const pocketllm_gguf_value *causal = pl_gguf_get(m->gguf, key);
    uint64_t c = 1;
    if (causal && (pocketllm_gguf_value_u64(causal, &c) || c == 0))
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "%s: non-causal attention is not supported (this engine's attention is "
                       "causal)", key);
    const uint32_t n_ctx = pocketllm_session_n_ctx(s);
    if (n > n_ctx)
        return pl_fail(POCKETLLM_ERR_CONTEXT_FULL, "%zu tokens do not fit the context of %u positions", n, n_ctx);
    const size_t n_embd = (size_t)m->dims.n_embd, need = *pooling == POCKETLLM_POOLING_NONE ? n * n_embd : n_embd;
    if (out_len < need)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "room for %zu floats; %s pooling of %zu tokens gives %zu", out_len,
                       pooling_name(*pooling), n, need);
    return POCKETLLM_OK;
}

pocketllm_status pocketllm_embed(pocketllm_session *s, uint32_t seq, const int32_t *ids, size_t n, int32_t pooling,
                                 int normalize, float *out, size_t out_len) {
    if (!s || !ids || !out) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "embed: NULL argument");
    if (n == 0) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "embed: no tokens to embed");
    pocketllm_status st = embed_check(s, seq, n, &pooling, out_len);
    if (st) return st;
    const size_t n_embd = (size_t)pl_session_model(s)->dims.n_embd, n_batch = (size_t)pl_session_n_batch(s);
    float *rows = pooling == POCKETLLM_POOLING_NONE ? NULL : malloc(n_batch * n_embd * sizeof *rows);
    double *sum = pooling == POCKETLLM_POOLING_MEAN ? calloc(n_embd, sizeof *sum) : NULL;
    if ((pooling != POCKETLLM_POOLING_NONE && !rows) || (pooling == POCKETLLM_POOLING_MEAN && !sum)) {
        free(rows);
        free(sum);
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for the hidden states of %zu tokens", n_batch);
    }
    /* a sequence of its own, from position 0 */
    if ((st = pocketllm_session_seq_truncate(s, seq, 0))) goto done;
    for (size_t done = 0; done < n;) {
        const size_t k = n - done < n_batch ? n - done : n_batch;
        /* the graph finishes only the last rows a pass keeps: all of them
         * for mean and none, the first pass's all for cls (its row 0),
         * otherwise the last one */
        const bool all = pooling == POCKETLLM_POOLING_NONE || pooling == POCKETLLM_POOLING_MEAN ||
                         (pooling == POCKETLLM_POOLING_CLS && done == 0);
        const size_t keep = all ? k : 1;
        float *dst = pooling == POCKETLLM_POOLING_NONE ? out + done * n_embd : rows;
        if ((st = pl_session_eval_hidden(s, seq, ids + done, k, keep, dst))) break;
        if (pooling == POCKETLLM_POOLING_MEAN) {
            for (size_t t = 0; t < k; t++)
                for (size_t i = 0; i < n_embd; i++) sum[i] += rows[t * n_embd + i];
        } else if ((pooling == POCKETLLM_POOLING_CLS && done == 0) || (pooling == POCKETLLM_POOLING_LAST && done + k == n)) {
            memcpy(out, rows, n_embd * sizeof *out);
        }
        done += k;
    }
    /* the sequence is left empty: its rows hold nothing a prompt could reuse */
    pocketllm_session_seq_truncate(s, seq, 0);
    if (st) goto done;
    if (pooling == POCKETLLM_POOLING_MEAN)
        for (size_t i = 0; i < n_embd; i++) out[i] = (float)(sum[i] / (double)n);
    if (normalize) {
        const size_t vectors = pooling == POCKETLLM_POOLING_NONE ? n : 1;
        for (size_t v = 0; v < vectors; v++) l2_normalize(out + v * n_embd, n_embd);
    }
done:
    free(rows);
    free(sum);
    return st;
}
