/*
 * windows.c -- a text as llama-perplexity and llama-imatrix see it: its
 * ids (with BOS when the vocabulary adds one), cut into windows of n_ctx
 * tokens, each evaluated from an empty cache with BOS in its first place.
 */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "eval/eval.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

pocketllm_status pl_windows_make(const pocketllm_model *m, const char *text, size_t len, int64_t n_ctx,
                                 int64_t max_chunks, bool parse_special, pl_windows *w) {
    memset(w, 0, sizeof *w);
    if (!m || !m->vocab) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "the model has no tokenizer to read the text with");
    if (!text && len) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "no text");
    if (n_ctx < 4 || n_ctx > (1 << 20))
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "window of %lld tokens is outside 4..%d", (long long)n_ctx, 1 << 20);
    /* llama.cpp asserts this: an EOS after every text would be scored as the text's end */
    if (pl_vocab_add_eos(m->vocab))
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "the vocabulary adds EOS to every text; perplexity is not defined "
                       "for it (llama-perplexity refuses it too)");
    int32_t *ids;
    size_t n;
    pocketllm_status st = pl_tokenize(m->vocab, text ? text : "", len, true, parse_special, &ids, &n);
    if (st) return st;
    if (n < (size_t)(2 * n_ctx)) {
        free(ids);
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "the text has %zu tokens; windows of %lld need at least %lld "
                       "(two windows: give a longer text or a smaller window)", n, (long long)n_ctx,
                       (long long)(2 * n_ctx));
    }
    w->tokens = ids;
    w->n_tokens = n;
    w->n_ctx = n_ctx;
    w->n_chunk = (int64_t)(n / (size_t)n_ctx);
    if (max_chunks > 0 && w->n_chunk > max_chunks) w->n_chunk = max_chunks;
    w->bos = pl_vocab_add_bos(m->vocab) ? pl_vocab_bos(m->vocab) : -1;
    return POCKETLLM_OK;
}

void pl_windows_free(pl_windows *w) {
    free(w->tokens);
    memset(w, 0, sizeof *w);
}

pocketllm_status pl_window_eval(pocketllm_session *s, const pl_windows *w, int64_t chunk, int64_t from,
                                bool keep_all, int64_t piece, pl_window_row_fn fn, void *user) {
    const int64_t n_ctx = w->n_ctx;
    int32_t *ids = malloc((size_t)n_ctx * sizeof *ids);
    if (!ids) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    memcpy(ids, w->tokens + chunk * n_ctx, (size_t)n_ctx * sizeof *ids);
    if (w->bos >= 0) ids[0] = w->bos;
    pocketllm_session_reset(s);
    pocketllm_status st = POCKETLLM_OK;
    const int64_t start = keep_all ? 0 : from;
    if (start > 0) st = pocketllm_session_eval(s, ids, (size_t)start, 0);
    /* the rest in near-equal pieces of at most `piece` rows of logits */
    const int64_t rest = n_ctx - start;
    const int64_t n_pieces = (rest + piece - 1) / piece, size = (rest + n_pieces - 1) / n_pieces;
    for (int64_t p = start; p < n_ctx && !st; p += size) {
        const int64_t k = n_ctx - p < size ? n_ctx - p : size;
        if ((st = pocketllm_session_eval(s, ids + p, (size_t)k, 1))) break;
        for (int64_t i = 0; i < k && fn && !st; i++) {
            const int64_t pos = p + i;
            if (pos >= from && pos <= n_ctx - 2) st = fn(user, chunk, pos, pocketllm_session_logits(s, (int32_t)i));
        }
    }
    free(ids);
    return st;
}
