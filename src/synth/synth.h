/*
 * synth.h -- pieces of the synthetic-checkpoint writer shared between its
 * files: the tokenizer part (synth_vocab.c) and the quantized rung written
 * directly (synth_quant.c).
 */
#ifndef PL_SYNTH_H
#define PL_SYNTH_H

#include <stdbool.h>
#include <stdint.h>

#include "base/rng.h"
#include "gguf/gguf.h"
#include "pocketllm.h"

/* Tokens the tokenizer will have before padding. */
pocketllm_status pl_synth_vocab_count(const char *vocab_path, uint32_t *n);
/* Write tokenizer.* (built-in or copied, padded to n_vocab) and the chat
 * template, if any.  asr: a Qwen3-ASR text model's (its audio and
 * <asr_text> tokens at their ids, BOS = EOS = <|im_end|>, the converter's
 * chatml template unless template_path). */
pocketllm_status pl_synth_vocab_write(pocketllm_gguf_writer *w, const char *vocab_path, const char *template_path,
                                      uint32_t n_vocab, bool asr);

/* How a tensor's values are drawn: uniform in [-scale, scale] (see
 * pl_synth_scale), norms around 1. */
typedef enum pl_synth_fill {
    PL_FILL_MATRIX, /* variance 1/fan_in (ne[0]) */
    PL_FILL_NORM,   /* 1 +- 0.1 */
    PL_FILL_EMBED,  /* unit-order entries */
    PL_FILL_ROUTER, /* an MoE router: variance 4/fan_in, so its logits spread ~2 */
    PL_FILL_BIAS    /* +- 0.5 */
} pl_synth_fill;

/* One tensor of the checkpoint. */
typedef struct pl_synth_tensor {
    char name[64];
    uint32_t n_dims;
    int64_t ne[3];
    uint32_t type;
    pl_synth_fill fill;
} pl_synth_tensor;

/* Half-width of the tensor's uniform distribution (norms: around 1). */
float pl_synth_scale(const pl_synth_tensor *t);
uint64_t pl_synth_elements(const pl_synth_tensor *t);

/* ---- a quantized rung written directly (synth_quant.c) ---- */

/* The model facts llama.cpp's recipe depends on, as the file will hold them. */
typedef struct pl_synth_facts {
    const char *arch;
    uint32_t n_layer, n_head, n_head_kv, n_expert, n_expert_used;
} pl_synth_facts;

/* Give each tensor of t[0..n) (holding the converter's types: f16 matrices,
 * f32 vectors and router) the type llama-quantize would give it under
 * `name` (a recipe or a tensor type, as pocketllm_quantize takes it), by
 * running the quantizer's own rule (quantize/recipe.c).  *ftype gets the
 * file type to record.  Refused: an unknown name, a type this build cannot
 * encode. */
pocketllm_status pl_synth_quant_types(const char *name, const pl_synth_facts *f, pl_synth_tensor *t, size_t n,
                                      uint32_t *ftype);

/* Random valid blocks: a pool of blocks per (type, scale), made once by
 * the reference encoders from random values, from which each block of a
 * tensor is drawn with the tensor's generator. */
typedef struct pl_synth_pools pl_synth_pools;
pocketllm_status pl_synth_pools_new(uint64_t seed, pl_synth_pools **out);
void pl_synth_pools_free(pl_synth_pools *p);
/* Fill n_blocks blocks of `type` whose values are uniform in [-scale, scale]. */
pocketllm_status pl_synth_quant_fill(pl_synth_pools *p, uint32_t type, float scale, pl_rng *r, uint64_t n_blocks,
                                     void *out);

#endif
