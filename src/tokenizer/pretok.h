/*
 * pretok.h -- BPE pre-tokenizers: how tokenizer.ggml.pre names cut text
 * into words before merging, reproducing what llama.cpp does for each name
 * (its hand-written splitters, and its std::regex passes over "collapsed"
 * or wide text) without a regex engine.
 */
#ifndef PL_TOK_PRETOK_H
#define PL_TOK_PRETOK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pocketllm.h"

typedef struct pl_pretok {
    const char *name;       /* llama.cpp's pre-tokenizer type this behaves as */
    const uint8_t *stages;  /* pl_pretok_stage values, 0-terminated */
} pl_pretok;

/* Per-name settings that llama.cpp ties to the pre-tokenizer name. */
typedef struct pl_pretok_info {
    const pl_pretok *pretok;
    bool clean_spaces;
    bool ignore_merges;
    bool add_bos;
} pl_pretok_info;

/* The pre-tokenizer called `name` (tokenizer.ggml.pre); false when this
 * build does not implement it. */
bool pl_pretok_find(const char *name, pl_pretok_info *out);

/* A growable list of word lengths, in code points. */
typedef struct pl_lens {
    uint32_t *v;
    size_t n, cap;
} pl_lens;

/* Split the code points cps[0..n) (flags fl[i] = pl_ucp_flags(cps[i]))
 * into words; their lengths, in order, replace the contents of *out.
 * *tmp is scratch space kept by the caller between calls. */
pocketllm_status pl_pretok_split(const pl_pretok *p, const uint32_t *cps, const uint16_t *fl, size_t n,
                                 pl_lens *out, pl_lens *tmp);

void pl_lens_free(pl_lens *l);

#endif
