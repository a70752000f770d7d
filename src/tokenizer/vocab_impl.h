/*
 * vocab_impl.h -- the inside of a loaded vocabulary, shared by the files of
 * src/tokenizer/ (loader, SentencePiece, BPE, special-token splitting,
 * detokenization).  Nothing outside the tokenizer includes this.
 */
#ifndef PL_TOK_VOCAB_IMPL_H
#define PL_TOK_VOCAB_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/strmap.h"
#include "tokenizer/pretok.h"
#include "tokenizer/tokenizer.h"

typedef enum pl_vocab_type { PL_VOCAB_SPM = 1, PL_VOCAB_BPE = 2 } pl_vocab_type;

/* Token attributes: the bits of llama.cpp's llama_token_attr. */
enum {
    PL_ATTR_UNDEFINED = 0,
    PL_ATTR_UNKNOWN = 1 << 0,
    PL_ATTR_UNUSED = 1 << 1,
    PL_ATTR_NORMAL = 1 << 2,
    PL_ATTR_CONTROL = 1 << 3,
    PL_ATTR_USER_DEFINED = 1 << 4,
    PL_ATTR_BYTE = 1 << 5,
    PL_ATTR_NORMALIZED = 1 << 6,
    PL_ATTR_LSTRIP = 1 << 7,
    PL_ATTR_RSTRIP = 1 << 8,
    PL_ATTR_SINGLE_WORD = 1 << 9
};

typedef struct pl_token {
    const char *text;   /* as stored in the file (NUL-terminated; may hold NULs) */
    uint32_t len;
    uint32_t attr;      /* PL_ATTR_* */
    float score;
    const char *piece;  /* its text as llama_token_to_piece(special=true) renders it */
    uint32_t piece_len;
} pl_token;

/* Byte-level BPE state (bpe.c).  Strings are interned as "sids": a token's
 * sid is its id; strings that occur only inside merge rules get sids from
 * n_tokens up.  All text here is raw bytes, the GPT-2 byte-to-character
 * mapping undone, so the merge loop never touches the mapped form. */
typedef struct pl_bpe {
    pl_strmap raw_to_sid;        /* raw bytes -> sid */
    int32_t byte_sid[256];       /* sid of each single raw byte, -1 if none */
    int32_t byte_fallback[256][2]; /* ids emitted for a raw byte of an unknown piece, -1 = none */
    uint64_t *merge_key;         /* open addressing: (left sid << 32 | right sid) */
    uint64_t *merge_val;         /* (rank << 32) | result sid (0xffffffff: no sid) */
    size_t merge_mask;
    int32_t n_sids;
} pl_bpe;

/* A trie node over special-token texts: children are a sibling list. */
typedef struct pl_trie_node {
    int32_t child, sibling; /* node indexes, -1 = none */
    int32_t rank;           /* a special text ends here: its index in ids[], else -1 */
    uint8_t byte;
} pl_trie_node;

/* The special tokens that text is searched for, longest first (the order
 * of llama.cpp's cache_special_tokens), a first-byte filter and a trie to
 * find which of them occur in a text in one pass. */
typedef struct pl_specials {
    int32_t *ids;
    size_t n;
    uint8_t first_byte[256];     /* nonzero when some special text starts with the byte */
    pl_trie_node *trie;          /* node 0 is the root */
    size_t n_nodes;
} pl_specials;

struct pl_vocab {
    pl_vocab_type type;
    int32_t n_tokens;
    pl_token *tokens;
    pl_strmap text_to_id;        /* token text as stored -> id */

    int32_t bos, eos, eot, eom, unk, sep, pad, mask;
    int32_t fim_pre, fim_suf, fim_mid, fim_pad, fim_rep, fim_sep;
    bool add_bos, add_eos, add_space_prefix, clean_spaces, ignore_merges;
    uint8_t *eog;                /* per id: ends generation */

    pl_specials specials;
    int32_t spm_byte_token[256]; /* SPM byte fallback (<0xXX>), -1 if missing */

    const pl_pretok *pretok;     /* BPE only */
    pl_bpe bpe;

    char model_name[32], pre_name[64];
    pl_arena arena;
};

/* Token text lookup in the stored form; -1 when absent. */
int32_t pl_vocab_find(const pl_vocab *v, const char *text, size_t len);

/* Growable id list used while tokenizing. */
typedef struct pl_ids {
    int32_t *v;
    size_t n, cap;
} pl_ids;
pocketllm_status pl_ids_push(pl_ids *ids, int32_t id);
pocketllm_status pl_ids_append(pl_ids *ids, const int32_t *src, size_t n);

/* bpe.c */
pocketllm_status pl_bpe_build(pl_vocab *v, const pocketllm_gguf_value *merges);
void pl_bpe_free(pl_bpe *b);
/* Tokenize one fragment of plain text (no special tokens in it). */
pocketllm_status pl_bpe_tokenize(const pl_vocab *v, const char *text, size_t len, pl_ids *out);
/* GPT-2's byte <-> character mapping. */
uint32_t pl_bpe_byte_to_cp(uint8_t b);
int pl_bpe_cp_to_byte(uint32_t cp); /* -1 when cp is not one of the 256 */

/* spm.c: one fragment of plain text; prefix_space puts a space before it
 * (llama.cpp's leading-space rule, decided by the caller). */
pocketllm_status pl_spm_tokenize(const pl_vocab *v, const char *text, size_t len, bool prefix_space, pl_ids *out);

/* special.c: split text into plain fragments and special tokens. */
typedef struct pl_fragment {
    size_t off, len;   /* plain text: a range of the input */
    int32_t token;     /* a special token, or -1 for plain text */
} pl_fragment;
pocketllm_status pl_specials_build(pl_vocab *v);
pocketllm_status pl_split_specials(const pl_vocab *v, const char *text, size_t len, bool parse_special,
                                   pl_fragment **frags, size_t *n_frags);

/* detok.c: the piece cache and clean-up rules. */
pocketllm_status pl_pieces_build(pl_vocab *v);

#endif
