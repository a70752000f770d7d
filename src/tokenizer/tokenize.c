/*
 * tokenize.c -- text to ids as llama_tokenize(add_special, parse_special):
 * special tokens are split out first, the plain text between them goes to
 * SentencePiece or BPE, and BOS/EOS are added as the vocabulary asks.
 */
#include <stdlib.h>

#include "base/error.h"
#include "tokenizer/vocab_impl.h"

pocketllm_status pl_tokenize(const pl_vocab *v, const char *text, size_t len, bool add_special, bool parse_special,
                             int32_t **ids, size_t *n) {
    *ids = NULL;
    *n = 0;
    if (!v) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "tokenize: the model has no tokenizer");
    if (!text && len) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "tokenize: no text");
    if (len >= INT32_MAX) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "tokenize: text of %zu bytes is too long", len);
    pl_fragment *frags = NULL;
    size_t n_frags = 0;
    pl_ids out = {0};
    pocketllm_status st = pl_split_specials(v, text, len, parse_special, &frags, &n_frags);
    if (st) return st;

    if (add_special && v->add_bos) {
        if (v->bos < 0) st = pl_fail(POCKETLLM_ERR_UNSUPPORTED, "the vocabulary asks for BOS but has none");
        else st = pl_ids_push(&out, v->bos);
    }
    /* SentencePiece puts a space before text that starts the input or
     * follows a special token */
    bool prev_special = true;
    for (size_t i = 0; i < n_frags && !st; i++) {
        const pl_fragment *f = &frags[i];
        if (f->token >= 0) {
            st = pl_ids_push(&out, f->token);
            prev_special = true;
            continue;
        }
        if (v->type == PL_VOCAB_SPM) st = pl_spm_tokenize(v, text + f->off, f->len, v->add_space_prefix && prev_special, &out);
        else st = pl_bpe_tokenize(v, text + f->off, f->len, &out);
        prev_special = false;
    }
    if (!st && add_special && v->add_eos) {
        if (v->eos < 0) st = pl_fail(POCKETLLM_ERR_UNSUPPORTED, "the vocabulary asks for EOS but has none");
        else st = pl_ids_push(&out, v->eos);
    }
    free(frags);
    if (!st && out.n >= INT32_MAX) st = pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "tokenize: too many tokens");
    if (st) {
        free(out.v);
        return st;
    }
    *ids = out.v;
    *n = out.n;
    return POCKETLLM_OK;
}
