/*
 * types.h -- the table of tensor element types, indexed by ggml type id:
 * name, elements per block, bytes per block, and the scalar reference
 * kernels of every type the engine computes with.  A quant type is added by
 * adding its row here and its kernels in src/quant/; nothing else switches
 * on the type.  The host's fastest kernels (SIMD chosen at run time) come
 * from pl_quant_kernels() in quant/kernels.h and are tested against these.
 */
#ifndef PL_TYPES_H
#define PL_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "pocketllm.h"

/* ggml type ids as of llama.cpp v0.4.0 (ggml.h, enum ggml_type). */
enum pl_type {
    PL_TYPE_F32 = 0,
    PL_TYPE_F16 = 1,
    PL_TYPE_Q4_0 = 2,
    PL_TYPE_Q4_1 = 3,
    PL_TYPE_Q5_0 = 6,
    PL_TYPE_Q5_1 = 7,
    PL_TYPE_Q8_0 = 8,
    PL_TYPE_Q8_1 = 9,
    PL_TYPE_Q2_K = 10,
    PL_TYPE_Q3_K = 11,
    PL_TYPE_Q4_K = 12,
    PL_TYPE_Q5_K = 13,
    PL_TYPE_Q6_K = 14,
    PL_TYPE_Q8_K = 15,
    PL_TYPE_IQ2_XXS = 16,
    PL_TYPE_IQ2_XS = 17,
    PL_TYPE_IQ3_XXS = 18,
    PL_TYPE_IQ1_S = 19,
    PL_TYPE_IQ4_NL = 20,
    PL_TYPE_IQ3_S = 21,
    PL_TYPE_IQ2_S = 22,
    PL_TYPE_IQ4_XS = 23,
    PL_TYPE_I8 = 24,
    PL_TYPE_I16 = 25,
    PL_TYPE_I32 = 26,
    PL_TYPE_I64 = 27,
    PL_TYPE_F64 = 28,
    PL_TYPE_IQ1_M = 29,
    PL_TYPE_BF16 = 30,
    PL_TYPE_TQ1_0 = 34,
    PL_TYPE_TQ2_0 = 35,
    PL_TYPE_MXFP4 = 39,
    PL_TYPE_NVFP4 = 40,
    PL_TYPE_Q1_0 = 41,
    PL_TYPE_Q2_0 = 42,
    PL_TYPE_COUNT = 43
};

/* Decode n elements (whole blocks) to f32; bit for bit llama.cpp's
 * to_float.  Reads exactly n / block blocks. */
typedef void (*pl_to_float_fn)(const void *src, float *dst, int64_t n);
/* Encode one row of n f32 values (whole blocks), byte-equal to llama.cpp's
 * ggml_quantize_chunk for the same row; imatrix (n importance weights, may
 * be NULL) is used by the types whose quantizer takes one.  A row is the
 * unit: some quantizers use statistics of the whole row.  Callers should go
 * through pl_quant_from_float(), which checks n and the imatrix rule. */
typedef void (*pl_from_float_fn)(const float *src, void *dst, int64_t n, const float *imatrix);
/* Convert one activation row of n f32 values to this (vec_dot) type the
 * way llama.cpp's x86 CPU backend does before its dot products (for q8_0
 * and q8_1 that is NOT the ggml_quantize_chunk rounding; see ref_q8.c). */
typedef void (*pl_act_from_float_fn)(const float *src, void *dst, int64_t n);
/* Dot product of one weight row (this type) with one activation row (in
 * vec_dot_type), both n elements long. */
typedef float (*pl_vec_dot_fn)(int64_t n, const void *w, const void *a);

typedef struct pl_type_traits {
    const char *name;   /* llama.cpp's spelling */
    uint32_t block;     /* elements per block; 0 = id no longer valid in GGUF */
    uint32_t bytes;     /* bytes per block */
    bool quantized;
    /* Filled for the types the engine computes with; NULL otherwise.  These
     * are the scalar reference versions -- short, obvious, normative. */
    pl_to_float_fn to_float;
    pl_from_float_fn from_float;
    uint32_t vec_dot_type;  /* the type activations are converted to for vec_dot */
    pl_vec_dot_fn vec_dot;
    /* Only on rows that are some type's vec_dot_type (f32, f16, bf16, q8_0,
     * q8_1, q8_K). */
    pl_act_from_float_fn act_from_float;
    /* from_float refuses to run without an importance matrix (IQ1/IQ2:
     * garbage without one, and llama.cpp refuses too). */
    bool requires_imatrix;
} pl_type_traits;

/* Row for `type`, or NULL when the id is outside the table. */
const pl_type_traits *pl_type_get(uint32_t type);

/* True when tensors of this type can appear in a GGUF file. */
bool pl_type_valid(uint32_t type);

/* Bytes for n elements of `type` (n a multiple of the block size); false
 * when the type is invalid, n is not whole blocks, or the size overflows. */
bool pl_type_row_bytes(uint32_t type, uint64_t n, uint64_t *bytes);

/* Quantize nrows rows of n_per_row f32 values into dst (nrows whole rows of
 * `type`), byte-equal to ggml_quantize_chunk(type, src, dst, 0, nrows,
 * n_per_row, imatrix).  imatrix holds n_per_row weights shared by every row,
 * or is NULL.  Fails with a message when the type has no encoder, n_per_row
 * is not whole blocks, or the type requires an imatrix and none is given. */
pocketllm_status pl_quant_from_float(uint32_t type, const float *src, void *dst, int64_t nrows,
                                     int64_t n_per_row, const float *imatrix);

#endif
