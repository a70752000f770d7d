/*
 * ops.h -- the op vocabulary of the kernel ABI: every computation a model
 * graph may ask of a backend.  Each op has a scalar reference
 * implementation (the normative one) and, per backend, kernels that are
 * tested against it.  An op with a weight operand is implemented per weight
 * type.
 */
#ifndef PL_OPS_H
#define PL_OPS_H

#include <stdbool.h>
#include <stdint.h>

typedef enum pl_op {
    PL_OP_GET_ROWS,    /* embedding lookup: rows of a weight matrix by token id */
    PL_OP_RMS_NORM,    /* x / sqrt(mean(x^2) + eps) * w */
    PL_OP_MUL_MAT,     /* y = W x for a packed weight matrix W */
    PL_OP_ADD,         /* elementwise a + b (residuals, biases) */
    PL_OP_MUL,         /* elementwise a * b */
    PL_OP_SCALE,       /* a * s */
    PL_OP_ROPE_NORMAL, /* rotary embedding on adjacent pairs (llama) */
    PL_OP_ROPE_NEOX,   /* rotary embedding on split halves (qwen) */
    PL_OP_SILU_MUL,    /* silu(gate) * up (SwiGLU) */
    PL_OP_SOFTMAX,     /* numerically stable softmax over a row */
    PL_OP_ATTENTION,   /* grouped-query attention against the KV cache: causal, or full (a tower) */
    PL_OP_KV_STORE,    /* write K/V rows into the cache (f32 -> cache type) */
    PL_OP_ARGMAX,      /* index of the largest value of a row */
    PL_OP_LAYER_NORM,  /* (x - mean) / sqrt(var + eps) * w + b */
    PL_OP_GELU,        /* gelu(x), tanh approximation through an f16 table */
    PL_OP_ROPE_VISION, /* rotary embedding on 2-D positions, independent sections (Qwen2/3-VL tower) */
    PL_OP_ROPE_IMROPE, /* interleaved multi-axis rotary embedding (Qwen3-VL text) */
    PL_OP_GELU_ERF,    /* 0.5 x (1 + erf(x / sqrt 2)), the exact GELU (Qwen3-ASR audio tower) */
    PL_OP_IM2COL,      /* 2-D convolution patches of channel-last images, one row per output pixel */
    PL_OP_TRANSPOSE,   /* a batch of matrices transposed */
    PL_OP_MOE_ROUTE,   /* a router's softmax, top-k in llama.cpp's order, weights renormalised */
    PL_OP_MOE_FFN,     /* the chosen experts' SwiGLU FFNs and their weighted sum */
    PL_OP_SIGMOID_GATE, /* x * sigmoid(g), one g per row (qwen2moe's shared expert) */
    PL_OP_COUNT
} pl_op;

typedef struct pl_op_desc {
    const char *name;
    const char *summary;
    bool has_weight; /* the kernel is chosen by the type of a weight operand */
} pl_op_desc;

const pl_op_desc *pl_op_get(uint32_t op);

#endif
