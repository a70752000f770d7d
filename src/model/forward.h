/*
 * forward.h -- one pass of a model graph: the tokens going in (ids, or
 * embeddings an image became), where their rows go in the KV cache, their
 * rotary positions, the scratch the activations live in, and where the
 * logits go.  Filled by the session (runtime/session.c), consumed by an
 * architecture's forward function.
 *
 * A token's cache row and its rotary position are separate: they are equal
 * for text on every model, but an image's tokens share one time position
 * and the text after an image continues from the image's last position,
 * not from its token count (Qwen3-VL's multi-axis rotary).
 */
#ifndef PL_FORWARD_H
#define PL_FORWARD_H

#include <stdbool.h>
#include <stdint.h>

#include "backend/compute.h"

typedef struct pl_forward {
    pl_compute *c;
    const int32_t *ids; /* n_tok token ids (host memory, checked against the vocabulary); NULL when embd is set */
    /* instead of ids: [n_tok][n_embd] input embeddings (compute memory),
     * and, when not NULL, the DeepStack feature sets [n_deepstack][n_tok]
     * [n_embd] (compute memory) added to the output of layers 0 ..
     * n_deepstack-1 (a model without DeepStack ignores them) */
    const float *embd;
    const float *deepstack;
    int64_t n_deepstack;
    /* rotary positions (host memory): n_pos_axes <= 1: pos[t], every axis
     * of a multi-axis model at that position (text); n_pos_axes == 4:
     * pos[a * n_tok + t] for axis a = time, height, width, extra */
    const int32_t *pos;
    int n_pos_axes;
    /* cache rows (one sequence: kv_base NULL): the tokens take rows row0 ..
     * row0 + n_tok - 1, and token i attends to rows 0 .. row0 + i */
    int64_t n_tok, row0;
    /* several sequences in one cache (NULL: one sequence, rows from row0):
     * per token, the first cache row of its sequence and its row within
     * the sequence; its K and V go to row kv_base[i] + row[i], and it
     * attends to rows kv_base[i] .. kv_base[i] + row[i].  The tokens of one
     * sequence need not be adjacent. */
    const int64_t *kv_base;
    const int32_t *row;
    uint32_t k_type, v_type; /* the caches' types (quant/kv_types.h) */
    size_t k_row, v_row;     /* bytes of one cache row of each */
    /* 0: a sequence's block of the caches is rows of all KV heads; > 0:
     * head-major, each KV head's kv_cap rows in a run (pl_attn_params.kv_cap;
     * the backend's choice, pl_kv_head_major).  A block is kv_cap rows of
     * k_row bytes either way, so kv_base and row keep their meaning. */
    int64_t kv_cap;
    bool flash_attn;    /* llama.cpp's flash-attention arithmetic (pl_attn_params.flash) */
    void **k_cache;     /* per layer: n_ctx rows of k_row bytes (compute memory) */
    void **v_cache;
    float *scratch;     /* scratch_floats(n_batch) floats of compute memory */
    float *logits;      /* out: n_tok rows (all_logits) or 1 row (the last token) of n_vocab */
    bool all_logits;
    int64_t n_out;      /* when not 0: logits of the last n_out tokens (1..n_tok), whatever all_logits says */
    /* embeddings out: when not NULL, the kept rows' hidden states after the
     * final norm ([n_out][n_embd], compute memory; llama.cpp's t_embd,
     * "result_norm") go here instead, and no logits are computed */
    float *hidden;
} pl_forward;

#endif
