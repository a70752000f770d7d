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
    uint32_t *in_trie;     /* bitset: the tokens with text (those the trie holds) */
    /* the trie, pre-order: node i holds byte[i] at depth[i] (1 = a first
     * byte), its subtree ends before skip[i], and the tokens whose text
     * ends there are tok[tok_first[i] .. tok_first[i + 1]) */
    uint8_t *byte;
    uint16_t *depth;
    uint32_t *skip;
    uint32_t *tok_first;   /* n_nodes + 1 */
    int32_t *tok;
    /* per node, what its subtree's bytes are (PL_GV_CLASS bits, OR over the
     * node and everything below it), so a walk can take a whole subtree at
     * once when the state it starts from loops on all of them; plus
     * PL_GV_BAD when some text in the subtree is not a UTF-8 prefix and
     * PL_GV_MIDCHAR when the node's own text starts inside a character --
     * such a subtree is always walked */
    uint64_t *sub_cls;
    uint8_t *sub_chars;    /* per node: the most characters on a path from it down (255 at most) */
    uint8_t *chars_above;  /* per node: the characters begun on the path above it (255 at most) */
    uint8_t *tok_chars;    /* per entry of tok: the characters begun in that token's text (255 at most) */
    size_t n_nodes;
    uint32_t max_depth;
} pl_gvocab;

/* Byte classes for sub_cls: control (and DEL), every non-ASCII byte (a
 * subtree of whole or partial UTF-8 characters), digits, A-F, G-Z, a-f,
 * g-z, and space and each ASCII punctuation mark on its own -- the
 * distinctions JSON strings and schema patterns make. */
#define PL_GV_CLS_CTRL 0
#define PL_GV_CLS_HIGH 1
#define PL_GV_N_CLASSES 40
#define PL_GV_MIDCHAR (1ull << 62)
#define PL_GV_BAD (1ull << 63)
int pl_gvocab_byte_class(uint8_t b);
/* Where a UTF-8 prefix is after one more byte: 0 between characters,
 * another value while a character is partly read, -1 when the text is no
 * longer a UTF-8 prefix (start from 0). */
int pl_utf8_prefix_next(int u, uint8_t b);

/* The model's trie, made on first use and kept with the model (NULL with
 * the error set: no tokenizer, out of memory). */
const pl_gvocab *pl_gvocab_of(pocketllm_model *m);
void pl_gvocab_free(pl_gvocab *v);

#endif
