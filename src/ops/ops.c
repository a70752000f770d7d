/*
 * ops.c -- names and descriptions of the op vocabulary, and the public
 * queries over which backend implements which op for which weight type.
 */
#include "ops/ops.h"

#include <string.h>

#include "backend/backend.h"
#include "pocketllm.h"

static const pl_op_desc pl_ops[PL_OP_COUNT] = {
    [PL_OP_GET_ROWS] = {"get_rows", "embedding lookup: rows of a weight matrix selected by token id", true},
    [PL_OP_RMS_NORM] = {"rms_norm", "x / sqrt(mean(x^2) + eps) * weight", false},
    [PL_OP_MUL_MAT] = {"mul_mat", "y = W x with W kept packed in its stored type", true},
    [PL_OP_ADD] = {"add", "elementwise sum (residuals, biases)", false},
    [PL_OP_MUL] = {"mul", "elementwise product", false},
    [PL_OP_SCALE] = {"scale", "multiply by a scalar", false},
    [PL_OP_ROPE_NORMAL] = {"rope_normal", "rotary position embedding on adjacent pairs (llama)", false},
    [PL_OP_ROPE_NEOX] = {"rope_neox", "rotary position embedding on split halves (qwen)", false},
    [PL_OP_SILU_MUL] = {"silu_mul", "silu(gate) * up (SwiGLU feed-forward)", false},
    [PL_OP_SOFTMAX] = {"softmax", "numerically stable softmax over a row", false},
    [PL_OP_ATTENTION] = {"attention", "grouped-query attention over the KV cache, causal or full (vision)", false},
    [PL_OP_KV_STORE] = {"kv_store", "write key/value rows into the cache in its type", false},
    [PL_OP_ARGMAX] = {"argmax", "index of the largest value of a row", false},
    [PL_OP_LAYER_NORM] = {"layer_norm", "(x - mean) / sqrt(variance + eps) * weight + bias", false},
    [PL_OP_GELU] = {"gelu", "gelu(x), the tanh approximation through an f16 table (llama.cpp's CPU)", false},
    [PL_OP_ROPE_VISION] = {"rope_vision", "rotary position embedding over 2-D patch positions (Qwen2/3-VL vision)", false},
    [PL_OP_ROPE_IMROPE] = {"rope_imrope", "interleaved multi-axis rotary position embedding (Qwen3-VL text)", false},
    [PL_OP_GELU_ERF] = {"gelu_erf", "0.5 x (1 + erf(x / sqrt 2)), the exact GELU (Qwen3-ASR audio)", false},
    [PL_OP_IM2COL] = {"im2col", "2-D convolution patches of channel-last images: a conv2d as one matmul", false},
    [PL_OP_TRANSPOSE] = {"transpose", "a batch of matrices transposed", false},
    [PL_OP_MOE_ROUTE] = {"moe_route", "mixture of experts: softmax router, top-k in llama.cpp's order, renormalised weights", false},
    [PL_OP_MOE_FFN] = {"moe_ffn", "mixture of experts: the chosen experts' SwiGLU FFNs (only their rows read) and their weighted sum", true},
    [PL_OP_SIGMOID_GATE] = {"sigmoid_gate", "x * sigmoid(g) per row (qwen2moe's shared-expert gate)", false},
};

const pl_op_desc *pl_op_get(uint32_t op) { return op < PL_OP_COUNT ? &pl_ops[op] : NULL; }

uint32_t pocketllm_op_count(void) { return PL_OP_COUNT; }

const char *pocketllm_op_name(uint32_t op) { return op < PL_OP_COUNT ? pl_ops[op].name : NULL; }

const char *pocketllm_op_summary(uint32_t op) { return op < PL_OP_COUNT ? pl_ops[op].summary : NULL; }

int pocketllm_op_has_weight(uint32_t op) { return op < PL_OP_COUNT && pl_ops[op].has_weight; }

int pocketllm_op_supported(const char *backend, uint32_t op, uint32_t type) {
    const pl_backend *b = pl_backend_find(backend);
    if (!b || !b->supports || op >= PL_OP_COUNT) return 0;
    if (!pl_ops[op].has_weight) type = 0;
    return b->supports((pl_op)op, type);
}
