/*
 * kv_cache.h -- the keys and values of every position of one sequence, per
 * layer, in the cache type (f16 as llama.cpp by default, or f32).  Rows are
 * [n_ctx][kv_dim]; memory comes from the compute instance.
 */
#ifndef PL_KV_CACHE_H
#define PL_KV_CACHE_H

#include <stdint.h>

#include "backend/compute.h"

typedef struct pl_kv_cache {
    uint32_t type; /* PL_TYPE_F16 or PL_TYPE_F32 */
    int64_t n_ctx, n_layer, kv_dim;
    void **k, **v; /* n_layer each */
} pl_kv_cache;

pocketllm_status pl_kv_cache_new(pl_compute *c, uint32_t type, int64_t n_layer, int64_t n_ctx, int64_t kv_dim,
                                 pl_kv_cache **out);
void pl_kv_cache_free(pl_compute *c, pl_kv_cache *kv);

#endif
