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
    const int32_t *pos; /* their positions, pos0 .. pos0 + n_tok - 1 */
    int64_t n_tok, pos0;
    uint32_t kv_type;   /* PL_TYPE_F16 or PL_TYPE_F32 */
    void **k_cache;     /* per layer: [n_ctx][kv_dim] of kv_type (compute memory) */
    void **v_cache;
    float *scratch;     /* scratch_floats(n_batch) floats of compute memory */
    float *logits;      /* out: n_tok rows (all_logits) or 1 row (the last token) of n_vocab */
    bool all_logits;
} pl_forward;

#endif
