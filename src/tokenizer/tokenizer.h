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

/* The text of one token, as llama_token_to_piece(lstrip = 0, special):
 * control and unknown tokens render only when `special`.  *piece points
 * into the vocabulary (not NUL-terminated). */
pocketllm_status pl_token_piece(const pl_vocab *v, int32_t id, bool special, const char **piece, size_t *len);

/* Ids to text as llama_detokenize(remove_special, unparse_special); *text
 * is malloc'd (NUL-terminated, *len bytes) and owned by the caller. */
pocketllm_status pl_detokenize(const pl_vocab *v, const int32_t *ids, size_t n, bool remove_special,
                               bool unparse_special, char **text, size_t *len);

/* Streaming detokenization: the concatenated output of push()es and a
 * final flush() is exactly pl_detokenize(ids, remove_special = false); no
 * output ends inside a UTF-8 character that later bytes complete. */
typedef struct pl_detok_stream pl_detok_stream;
pocketllm_status pl_detok_stream_new(const pl_vocab *v, bool unparse_special, pl_detok_stream **out);
void pl_detok_stream_free(pl_detok_stream *d);
/* Output of one push / of the flush: *text points into the stream (valid
 * until the next call).  A bad id fails and changes nothing. */
pocketllm_status pl_detok_stream_push(pl_detok_stream *d, int32_t id, const char **text, size_t *len);
pocketllm_status pl_detok_stream_flush(pl_detok_stream *d, const char **text, size_t *len);
/* Undo the last push or flush (its output was not taken). */
void pl_detok_stream_undo(pl_detok_stream *d);

/* Which pre-tokenizer and model a vocabulary uses ("gpt2"/"llama", the
 * tokenizer.ggml.pre name). */
const char *pl_vocab_model(const pl_vocab *v);
const char *pl_vocab_pre(const pl_vocab *v);
/* The token's text as stored, and its llama.cpp attribute bits. */
const char *pl_vocab_text(const pl_vocab *v, int32_t id, size_t *len);
uint32_t pl_vocab_attr(const pl_vocab *v, int32_t id);
bool pl_vocab_add_bos(const pl_vocab *v);
bool pl_vocab_add_eos(const pl_vocab *v);

#endif
