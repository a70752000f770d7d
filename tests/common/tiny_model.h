/*
 * tiny_model.h -- small random-weight checkpoints of the llama / qwen2 /
 * qwen3 family (and qwen2moe / qwen3moe, their mixture-of-experts forms)
 * written in-process, with every variant switch the loader
 * and graph have (biases, partial rotary, rope frequency factors, tied or
 * untied output, weight type), for tests that need a model of a precise
 * form.  The tokenizer, when wanted, is copied from another GGUF.
 */
#ifndef PL_TEST_TINY_MODEL_H
#define PL_TEST_TINY_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "pocketllm.h"

typedef struct tiny_model_spec {
    const char *arch;  /* "llama", "qwen2", "qwen3", "qwen2moe" or "qwen3moe" */
    int64_t n_embd, n_layer, n_head, n_head_kv, head_dim, n_ff;
    int64_t n_vocab;   /* ignored when vocab_from is set: its token count */
    int64_t n_rot;     /* rope.dimension_count; 0 = head_dim */
    int64_t n_ctx;     /* context_length; 0 = 4096 */
    uint32_t type;     /* weight matrices: f32, f16, bf16 or q8_0 (type ids) */
    bool tied;         /* no output.weight */
    bool qkv_bias;     /* attn_q/k/v.bias (qwen2 has them; the others may) */
    bool rope_freqs;   /* llama: a rope_freqs.weight of n_rot/2 factors */
    float freq_base;   /* 0 = 10000 (llama) / 1e6 (qwen) */
    /* the MoE architectures: expert_count and expert_used_count as
     * written, the experts' and the shared expert's FFN widths (0: the
     * key is left out), and the expert count the 3-D tensors have (0:
     * n_expert; another value makes a file whose tensors disagree) */
    int64_t n_expert, n_expert_used, n_ff_exp, n_ff_shexp, n_expert_tensors;
    uint64_t seed;
    const char *vocab_from; /* copy tokenizer.* from this GGUF, or NULL: no tokenizer */
} tiny_model_spec;

/* The defaults: a qwen3 of 2 layers of 64, 4 heads (2 KV) of 16, FFN 96,
 * vocabulary 300, f32, untied, no tokenizer; with a MoE architecture, 8
 * experts of FFN 32, 2 of them a token, and a shared expert of FFN 48. */
tiny_model_spec tiny_model_default(void);

pocketllm_status tiny_model_write(const tiny_model_spec *s, const char *path);

#endif
