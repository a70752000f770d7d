/*
 * api.c -- the public tokenizer calls of pocketllm.h ("Models and their
 * tokenizers"): caller-buffer versions of the internal tokenizer.
 */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

static pocketllm_status need_vocab(const pocketllm_model *m, const char *what) {
    if (!m) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "%s: no model", what);
    if (!m->vocab) return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "%s: the model file has no tokenizer", what);
    return POCKETLLM_OK;
}

/* Copy n bytes to a caller's buffer under the "tell the size, fail when it
 * does not fit" rule. */
static pocketllm_status give(const void *src, size_t n, size_t elem, void *dst, size_t cap, size_t *len,
                             const char *what) {
    *len = n;
    if (n > cap)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "%s: the result needs %zu %s, the buffer holds %zu", what, n,
                       elem == 1 ? "bytes" : "ids", cap);
    if (n) memcpy(dst, src, n * elem);
    return POCKETLLM_OK;
}

POCKETLLM_API pocketllm_status pocketllm_tokenize(const pocketllm_model *model, const char *text, size_t len,
                                                  int add_special, int parse_special, int32_t *ids, size_t cap,
                                                  size_t *n_ids) {
    size_t dummy;
    if (!n_ids) n_ids = &dummy;
    *n_ids = 0;
    pocketllm_status st = need_vocab(model, "tokenize");
    if (st) return st;
    if (cap && !ids) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "tokenize: no buffer for the ids");
    int32_t *out;
    size_t n;
    if ((st = pl_tokenize(model->vocab, text, len, add_special != 0, parse_special != 0, &out, &n))) return st;
    st = give(out, n, sizeof *out, ids, cap, n_ids, "tokenize");
    free(out);
    return st;
}

POCKETLLM_API pocketllm_status pocketllm_token_to_piece(const pocketllm_model *model, int32_t id, int special,
                                                        char *buf, size_t cap, size_t *len) {
    size_t dummy;
    if (!len) len = &dummy;
    *len = 0;
    pocketllm_status st = need_vocab(model, "token_to_piece");
    if (st) return st;
    if (cap && !buf) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "token_to_piece: no buffer");
    const char *p;
    size_t n;
    if ((st = pl_token_piece(model->vocab, id, special != 0, &p, &n))) return st;
    return give(p, n, 1, buf, cap, len, "token_to_piece");
}

POCKETLLM_API pocketllm_status pocketllm_detokenize(const pocketllm_model *model, const int32_t *ids, size_t n,
                                                    int remove_special, int unparse_special, char *buf,
                                                    size_t cap, size_t *len) {
    size_t dummy;
    if (!len) len = &dummy;
    *len = 0;
    pocketllm_status st = need_vocab(model, "detokenize");
    if (st) return st;
    if (cap && !buf) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "detokenize: no buffer");
    char *text;
    size_t tn;
    if ((st = pl_detokenize(model->vocab, ids, n, remove_special != 0, unparse_special != 0, &text, &tn))) return st;
    st = give(text, tn, 1, buf, cap, len, "detokenize");
    free(text);
    return st;
}

POCKETLLM_API int32_t pocketllm_token_bos(const pocketllm_model *model) {
    return model && model->vocab ? pl_vocab_bos(model->vocab) : -1;
}

POCKETLLM_API int32_t pocketllm_token_eos(const pocketllm_model *model) {
    return model && model->vocab ? pl_vocab_eos(model->vocab) : -1;
}

POCKETLLM_API int pocketllm_token_is_eog(const pocketllm_model *model, int32_t id) {
    return model && model->vocab && pl_vocab_is_eog(model->vocab, id);
}

struct pocketllm_detokenizer {
    pl_detok_stream *s;
};

POCKETLLM_API pocketllm_status pocketllm_detokenizer_new(const pocketllm_model *model, int unparse_special,
                                                         pocketllm_detokenizer **out) {
    if (!out) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "detokenizer_new: no result pointer");
    *out = NULL;
    pocketllm_status st = need_vocab(model, "detokenizer_new");
    if (st) return st;
    pocketllm_detokenizer *d = calloc(1, sizeof *d);
    if (!d) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    if ((st = pl_detok_stream_new(model->vocab, unparse_special != 0, &d->s))) {
        free(d);
        return st;
    }
    *out = d;
    return POCKETLLM_OK;
}

/* A result that does not fit is taken back: the call fails having consumed
 * nothing, so the caller retries with a buffer of *len bytes. */
static pocketllm_status give_stream(pocketllm_detokenizer *d, const char *p, size_t n, char *buf, size_t cap,
                                    size_t *len, const char *what) {
    if (n > cap || (n && !buf)) {
        pl_detok_stream_undo(d->s);
        *len = n;
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "%s: the text needs %zu bytes, the buffer holds %zu", what, n,
                       buf ? cap : 0);
    }
    return give(p, n, 1, buf, cap, len, what);
}

POCKETLLM_API pocketllm_status pocketllm_detokenizer_push(pocketllm_detokenizer *d, int32_t id, char *buf,
                                                          size_t cap, size_t *len) {
    size_t dummy;
    if (!len) len = &dummy;
    *len = 0;
    if (!d) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "detokenizer_push: no detokenizer");
    const char *p;
    size_t n;
    pocketllm_status st = pl_detok_stream_push(d->s, id, &p, &n);
    if (st) return st;
    return give_stream(d, p, n, buf, cap, len, "detokenizer_push");
}

POCKETLLM_API pocketllm_status pocketllm_detokenizer_flush(pocketllm_detokenizer *d, char *buf, size_t cap,
                                                           size_t *len) {
    size_t dummy;
    if (!len) len = &dummy;
    *len = 0;
    if (!d) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "detokenizer_flush: no detokenizer");
    const char *p;
    size_t n;
    pocketllm_status st = pl_detok_stream_flush(d->s, &p, &n);
    if (st) return st;
    return give_stream(d, p, n, buf, cap, len, "detokenizer_flush");
}

POCKETLLM_API void pocketllm_detokenizer_free(pocketllm_detokenizer *d) {
    if (!d) return;
    pl_detok_stream_free(d->s);
    free(d);
}
