/*
 * cpu_support.c -- which ops the CPU backend has kernels for, by weight
 * type.  Kept beside the kernels so that adding a kernel and declaring it
 * happen in one place: every op of the vocabulary has a CPU driver
 * (cpu_compute.c, cpu_matmul.c, cpu_attention.c); the ops over weights run
 * on the types cpu_matmul.c accepts.
 */
#include "backend/backend.h"
#include "backend/cpu/cpu_compute.h"

bool pl_cpu_supports(pl_op op, uint32_t weight_type) {
    switch (op) {
    case PL_OP_GET_ROWS:
    case PL_OP_MUL_MAT:
    case PL_OP_MOE_FFN: return pl_cpu_weight_type_ok(weight_type);
    case PL_OP_RMS_NORM:
    case PL_OP_ADD:
    case PL_OP_MUL:
    case PL_OP_SCALE:
    case PL_OP_ROPE_NORMAL:
    case PL_OP_ROPE_NEOX:
    case PL_OP_SILU_MUL:
    case PL_OP_SOFTMAX:
    case PL_OP_ATTENTION:
    case PL_OP_KV_STORE:
    case PL_OP_ARGMAX:
    case PL_OP_LAYER_NORM:
    case PL_OP_GELU:
    case PL_OP_ROPE_VISION:
    case PL_OP_ROPE_IMROPE:
    case PL_OP_GELU_ERF:
    case PL_OP_IM2COL:
    case PL_OP_TRANSPOSE:
    case PL_OP_MOE_ROUTE:
    case PL_OP_SIGMOID_GATE: return true;
    default: return false;
    }
}
