/*
 * srv_engine.h -- what the scheduler needs from the engine: several
 * sequences in one KV cache, a batch of tokens from any of them evaluated
 * in one forward pass, the logits of the tokens that asked for them, and a
 * sequence cleared for its next request.
 */
#ifndef PL_SRV_ENGINE_H
#define PL_SRV_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pocketllm.h"

typedef struct srv_engine srv_engine;

typedef struct srv_tok {
    int32_t id;
    uint32_t seq;
    bool logits;
} srv_tok;

pocketllm_status srv_engine_new(pocketllm_model *m, uint32_t n_seq, uint32_t n_ctx, uint32_t n_batch, uint32_t kv_type,
                                int n_threads, srv_engine **out);
void srv_engine_free(srv_engine *e);
/* Each token goes at its sequence's next position, in batch order. */
pocketllm_status srv_engine_eval(srv_engine *e, const srv_tok *toks, size_t n);
/* Logits of token i of the last eval (one that asked for them). */
const float *srv_engine_logits(const srv_engine *e, size_t i);
uint32_t srv_engine_n_past(const srv_engine *e, uint32_t seq);
void srv_engine_clear(srv_engine *e, uint32_t seq);
int32_t srv_engine_n_vocab(const srv_engine *e);

#endif
