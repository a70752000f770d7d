/*
 * vocab_stub.c -- TEMPORARY placeholder so the tree links while the
 * tokenizer is written: refuses every vocabulary.  Deleted by the
 * tokenizer work.
 */
#include "base/error.h"
#include "tokenizer/tokenizer.h"

pocketllm_status pl_vocab_load(const pl_gguf *g, pl_vocab **out) {
    *out = NULL;
    if (!pl_gguf_get_str(g, "tokenizer.ggml.model")) return POCKETLLM_OK;
    return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "tokenizers are not implemented yet");
}
void pl_vocab_free(pl_vocab *v) { (void)v; }
int32_t pl_vocab_n_tokens(const pl_vocab *v) { (void)v; return 0; }
