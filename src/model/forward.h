/*
 * forward.h -- one pass of a model graph: the tokens going in, the KV
 * cache they extend, the scratch the activations live in, and where the
 * logits go.  Filled by the session (runtime/session.c), consumed by an
 * architecture's forward function.
 */
#ifndef PL_FORWARD_H
#define PL_FORWARD_H

#include <stdbool.h>
#include <stdint.h>

#include "backend/compute.h"

typedef struct pl_forward {
    pl_compute *c;
    const int32_t *ids; /* n_tok token ids (host memory, checked against the vocabulary) */
    const int32_t *pos; /* their positions: pos0 .. pos0 + n_tok - 1 for one sequence */
    int64_t n_tok, pos0;
    /* several sequences in one cache (NULL: one sequence, rows from pos0):
     * per token, the first cache row of its sequence; its K and V go to row
     * kv_base[i] + pos[i], and it attends to rows kv_base[i] .. kv_base[i] +
     * pos[i].  The tokens of one sequence need not be adjacent. */
    const int64_t *kv_base;
    uint32_t kv_type;   /* PL_TYPE_F16 or PL_TYPE_F32 */
    bool flash_attn;    /* llama.cpp's flash-attention arithmetic (pl_attn_params.flash) */
    void **k_cache;     /* per layer: [n_ctx][kv_dim] of kv_type (compute memory) */
    void **v_cache;
    float *scratch;     /* scratch_floats(n_batch) floats of compute memory */
    float *logits;      /* out: n_tok rows (all_logits) or 1 row (the last token) of n_vocab */
    bool all_logits;
    int64_t n_out;      /* when not 0: logits of the last n_out tokens (1..n_tok), whatever all_logits says */
} pl_forward;

#endif
