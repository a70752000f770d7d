/*
 * kv_types.h -- the element types a KV cache may be kept in (llama.cpp's
 * --cache-type-k / --cache-type-v set: f32, f16, bf16, q8_0, q4_0, q4_1,
 * q5_0, q5_1, iq4_nl) and how a row is written into one, byte for byte as
 * llama.cpp's CPU backend writes it (ggml_set_rows through the CPU type
 * table's from_float).
 */
#ifndef PL_KV_TYPES_H
#define PL_KV_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "pocketllm.h"

/* The names, in llama.cpp's spelling, for messages and --help. */
#define PL_KV_TYPE_NAMES "f16, bf16, f32, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl"

/* Encode n values (whole blocks) of a cache row. */
typedef void (*pl_kv_encode_fn)(const float *src, void *dst, int64_t n);

/* True when a cache may hold `type`. */
bool pl_kv_type_supported(uint32_t type);

/* The type named `name` (llama.cpp's spelling, any case), or UINT32_MAX. */
uint32_t pl_kv_type_from_name(const char *name);

/* The scalar reference encoder of a supported type (NULL otherwise): the
 * quantizer llama.cpp's CPU backend stores cache rows with -- for q8_0 the
 * activation rounding (quantize_row_q8_0), for iq4_nl its row quantizer
 * without the scale search of ggml_quantize_chunk. */
pl_kv_encode_fn pl_kv_encoder(uint32_t type);

/* Whether a cache of this type can hold heads of head_dim: the block must
 * divide a head (llama.cpp's rule); fails with a message naming both. */
pocketllm_status pl_kv_type_check(uint32_t type, int64_t head_dim, const char *which);

/* Bytes of one cache row of kv_dim values (kv_dim whole blocks). */
uint64_t pl_kv_row_bytes(uint32_t type, int64_t kv_dim);

/* The V cache's type from the params' pair (kv_type_v POCKETLLM_KV_AS_K:
 * the K cache's). */
static inline uint32_t pl_kv_v_type(uint32_t kv_type, uint32_t kv_type_v) {
    return kv_type_v == POCKETLLM_KV_AS_K ? kv_type : kv_type_v;
}

#endif
