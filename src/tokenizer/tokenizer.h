/*
 * tokenizer.h -- the checkpoint's own tokenizer, loaded from GGUF
 * tokenizer.ggml.* metadata: byte-level BPE with named pre-tokenizers and
 * SentencePiece-style, producing the ids llama.cpp produces.
 */
#ifndef PL_TOKENIZER_H
#define PL_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gguf/gguf.h"
#include "pocketllm.h"

typedef struct pl_vocab pl_vocab;

/* Load the vocabulary of a GGUF.  *out is NULL (and the call succeeds)
 * when the file has no tokenizer.ggml.model; an unknown tokenizer model or
 * pre-tokenizer is refused by name. */
pocketllm_status pl_vocab_load(const pl_gguf *g, pl_vocab **out);
void pl_vocab_free(pl_vocab *v);

int32_t pl_vocab_n_tokens(const pl_vocab *v);
int32_t pl_vocab_bos(const pl_vocab *v); /* -1 if none */
int32_t pl_vocab_eos(const pl_vocab *v); /* -1 if none */
bool pl_vocab_is_eog(const pl_vocab *v, int32_t id);

/* Tokenize as llama_tokenize(add_special, parse_special).  *ids is a
 * malloc'd array of *n ids owned by the caller. */
pocketllm_status pl_tokenize(const pl_vocab *v, const char *text, size_t len, bool add_special, bool parse_special,
                             int32_t **ids, size_t *n);

#endif
