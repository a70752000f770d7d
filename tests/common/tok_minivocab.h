/*
 * tok_minivocab.h -- small vocabulary GGUFs for tokenizer tests and the
 * tokenizer fuzzer: a SentencePiece one and byte-level BPE ones (all 256
 * byte tokens, a few dozen merged words, control and user-defined special
 * tokens) under any pre-tokenizer name.  A few kilobytes each.
 */
#ifndef PL_TEST_TOK_MINIVOCAB_H
#define PL_TEST_TOK_MINIVOCAB_H

#include "pocketllm.h"

/* kind: "spm", or a BPE pre-tokenizer name ("qwen2", "gpt-2", ...). */
pocketllm_status tok_minivocab_write(const char *kind, const char *path);

/* The kinds the fuzzer cycles through (NULL-terminated). */
extern const char *const tok_minivocab_kinds[];

#endif
