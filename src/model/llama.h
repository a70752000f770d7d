/*
 * llama.h -- the decoder-only family that llama, qwen2 and qwen3 share:
 * hyperparameters and weights as named in the GGUF file.  The variants
 * differ only in which optional tensors exist (qwen2: Q/K/V biases; qwen3:
 * per-head Q/K RMSNorm; qwen3vl: qwen3's tensors, multi-axis rotary
 * sections and DeepStack) and in the rotary mode (llama: adjacent pairs;
 * qwen: split halves).  qwen2moe and qwen3moe are qwen2 and qwen3 with a
 * mixture of experts in place of every layer's dense FFN.
 */
#ifndef PL_MODEL_LLAMA_H
#define PL_MODEL_LLAMA_H

#include "model/model.h"
#include "ops/ref.h"
#include "ops/weight.h"

typedef struct pl_llama_hparams {
    int64_t n_vocab, n_embd, n_layer, n_ff;
    int64_t n_head, n_head_kv, head_dim; /* head_dim = attention.key_length */
    int64_t n_ctx_train;
    float rms_eps;
    float attn_scale; /* 1/sqrt(head_dim) unless the file says otherwise */
    /* qwen3vl: rotary pairs per position axis (time, height, width, extra;
     * rope.dimension_sections) and the DeepStack feature sets added to the
     * first layers' outputs.  A text token's axes all hold its position, so
     * for text the rotation is qwen3's; both matter once images come. */
    int32_t rope_sections[4];
    int64_t n_deepstack;
    /* mixture of experts (qwen3moe, qwen2moe; 0 for the dense variants):
     * experts per layer, routed per token, one expert's FFN width, and
     * qwen2moe's shared expert's */
    int64_t n_expert, n_expert_used, n_ff_exp, n_ff_shexp;
} pl_llama_hparams;

/* One transformer block.  Vectors (norm weights, biases) are f32; a bias
 * or norm the variant does not have is NULL. */
typedef struct pl_llama_layer {
    const float *attn_norm;
    pl_weight attn_q, attn_k, attn_v, attn_output;
    const float *attn_q_bias, *attn_k_bias, *attn_v_bias, *attn_output_bias;
    const float *attn_q_norm, *attn_k_norm; /* qwen3: RMSNorm of each head before rotary */
    const float *ffn_norm;
    pl_weight ffn_gate, ffn_up, ffn_down;
    const float *ffn_gate_bias, *ffn_up_bias, *ffn_down_bias;
    /* mixture of experts in place of the dense FFN: the router
     * [n_embd -> n_expert], the experts (3-D tensors), and qwen2moe's
     * shared expert with its gate (a [n_embd] vector, a one-row matrix) */
    pl_weight ffn_gate_inp, ffn_gate_exps, ffn_up_exps, ffn_down_exps;
    pl_weight ffn_gate_inp_shexp, ffn_gate_shexp, ffn_up_shexp, ffn_down_shexp;
} pl_llama_layer;

typedef struct pl_llama {
    pl_llama_hparams hp;
    pl_rope_params rope;
    /* qwen3vl: the rotation of a pass with four positions per token (an
     * image's span): PL_ROPE_MROPE_INTERLEAVED over the file's sections.
     * Text passes use `rope` (NEOX): with every axis at the token's
     * position the two are the same arithmetic, in ggml as here. */
    pl_rope_params rope_multi;
    /* mixture of experts: the router's parameters (n_expert 0: dense) */
    pl_moe_route_params route;
    pl_weight token_embd;
    pl_llama_layer *layers;
    const float *output_norm;
    pl_weight output; /* token_embd itself when the embeddings are tied */
    const float *output_bias;
    /* (f32 copies of vectors stored in f16/bf16 are the model's consts:
     * small, and matrices are never copied) */
} pl_llama;

void pl_llama_forward(const pl_model *m, struct pl_forward *f);
uint64_t pl_llama_scratch_floats(const pl_model *m, int64_t n_batch);

extern const pl_arch pl_arch_llama, pl_arch_qwen2, pl_arch_qwen3, pl_arch_qwen3vl, pl_arch_qwen2moe, pl_arch_qwen3moe;

#endif
