/*
 * grammar_vocab.h -- the vocabulary as constrained decoding sees it: each
 * token's text (as the detokenizer writes it, special tokens as nothing),
 * which tokens end generation, and a byte trie of the texts in pre-order,
 * so the tokens a grammar state allows are found by one walk that skips
 * every subtree whose prefix the grammar already refuses.
 */
#ifndef PL_GRAMMAR_VOCAB_H
#define PL_GRAMMAR_VOCAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pocketllm.h"

typedef struct pl_gvocab {
    int32_t n_vocab;
    uint32_t *piece_off;   /* n_vocab + 1: token t's text is bytes[piece_off[t] .. piece_off[t + 1]) */
    uint8_t *bytes;
    uint8_t *eog;          /* per token: ends generation */
    /* the trie, pre-order: node i holds byte[i] at depth[i] (1 = a first
     * byte), its subtree ends before skip[i], and the tokens whose text
     * ends there are tok[tok_first[i] .. tok_first[i + 1]) */
    uint8_t *byte;
    uint16_t *depth;
    uint32_t *skip;
    uint32_t *tok_first;   /* n_nodes + 1 */
    int32_t *tok;
    size_t n_nodes;
    uint32_t max_depth;
} pl_gvocab;

/* The model's trie, made on first use and kept with the model (NULL with
 * the error set: no tokenizer, out of memory). */
const pl_gvocab *pl_gvocab_of(pocketllm_model *m);
void pl_gvocab_free(pl_gvocab *v);

#endif
