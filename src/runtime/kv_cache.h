/*
 * kv_cache.h -- the keys and values of every position of one sequence, per
 * layer, each in its own type (f16 as llama.cpp by default; any of
 * quant/kv_types.h, kept packed: attention decodes the blocks).  A layer's
 * cache is n_ctx rows' worth of kv_dim values, k_row / v_row bytes a row;
 * how a sequence's block of it is laid out -- rows of all heads, or
 * head-major on a backend with kv_store_heads -- is the graph's and the
 * backend's business (pl_forward.kv_cap).  Memory comes from the compute
 * instance.
 */
#ifndef PL_KV_CACHE_H
#define PL_KV_CACHE_H

#include <stdint.h>

#include "backend/compute.h"

typedef struct pl_kv_cache {
    uint32_t k_type, v_type;
    size_t k_row, v_row; /* bytes of one row (kv_dim values) */
    int64_t n_ctx, n_layer, kv_dim;
    void **k, **v; /* n_layer each */
} pl_kv_cache;

pocketllm_status pl_kv_cache_new(pl_compute *c, uint32_t k_type, uint32_t v_type, int64_t n_layer, int64_t n_ctx,
                                 int64_t kv_dim, pl_kv_cache **out);
void pl_kv_cache_free(pl_compute *c, pl_kv_cache *kv);

/* Bytes of the whole cache: n_layer x n_ctx rows of K and of V. */
uint64_t pl_kv_cache_bytes(uint32_t k_type, uint32_t v_type, int64_t n_layer, int64_t n_ctx, int64_t kv_dim);

#endif
