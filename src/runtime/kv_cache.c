/*
 * kv_cache.c -- allocate and free the per-layer K and V caches, with every
 * size checked before it is multiplied.
 */
#include "runtime/kv_cache.h"

#include <stdlib.h>

#include "base/checked.h"
#include "base/error.h"
#include "quant/kv_types.h"
#include "quant/types.h"

uint64_t pl_kv_cache_bytes(uint32_t k_type, uint32_t v_type, int64_t n_layer, int64_t n_ctx, int64_t kv_dim) {
    uint64_t row = pl_kv_row_bytes(k_type, kv_dim) + pl_kv_row_bytes(v_type, kv_dim), all;
    if (!pl_mul_u64(row, (uint64_t)n_ctx, &all) || !pl_mul_u64(all, (uint64_t)n_layer, &all)) return UINT64_MAX;
    return all;
}

pocketllm_status pl_kv_cache_new(pl_compute *c, uint32_t k_type, uint32_t v_type, int64_t n_layer, int64_t n_ctx,
                                 int64_t kv_dim, pl_kv_cache **out) {
    *out = NULL;
    if (!pl_kv_type_supported(k_type) || !pl_kv_type_supported(v_type))
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "KV cache types %u/%u: use " PL_KV_TYPE_NAMES, k_type, v_type);
    if (n_layer < 1 || n_ctx < 1 || kv_dim < 1 || kv_dim % pl_type_get(k_type)->block || kv_dim % pl_type_get(v_type)->block)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "KV cache of %lld layers x %lld positions x %lld", (long long)n_layer,
                       (long long)n_ctx, (long long)kv_dim);
    const uint64_t k_row = pl_kv_row_bytes(k_type, kv_dim), v_row = pl_kv_row_bytes(v_type, kv_dim);
    uint64_t k_bytes, v_bytes;
    if (!pl_mul_u64((uint64_t)n_ctx, k_row, &k_bytes) || !pl_mul_u64((uint64_t)n_ctx, v_row, &v_bytes) ||
        k_bytes > SIZE_MAX / 4 || v_bytes > SIZE_MAX / 4)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "KV cache of %lld positions x %lld is too large", (long long)n_ctx,
                       (long long)kv_dim);
    pl_kv_cache *kv = calloc(1, sizeof *kv);
    if (!kv) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    kv->k_type = k_type;
    kv->v_type = v_type;
    kv->k_row = (size_t)k_row;
    kv->v_row = (size_t)v_row;
    kv->n_ctx = n_ctx;
    kv->n_layer = n_layer;
    kv->kv_dim = kv_dim;
    kv->k = calloc((size_t)n_layer, sizeof *kv->k);
    kv->v = calloc((size_t)n_layer, sizeof *kv->v);
    if (!kv->k || !kv->v) {
        pl_kv_cache_free(c, kv);
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    }
    for (int64_t l = 0; l < n_layer; l++) {
        kv->k[l] = c->ops->alloc(c, (size_t)k_bytes);
        kv->v[l] = kv->k[l] ? c->ops->alloc(c, (size_t)v_bytes) : NULL;
        if (!kv->v[l]) {
            pl_kv_cache_free(c, kv);
            return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for a KV cache of %lld positions (%llu bytes a layer)",
                           (long long)n_ctx, (unsigned long long)(k_bytes + v_bytes));
        }
    }
    *out = kv;
    return POCKETLLM_OK;
}

void pl_kv_cache_free(pl_compute *c, pl_kv_cache *kv) {
    if (!kv) return;
    for (int64_t l = 0; l < kv->n_layer; l++) {
        if (kv->k) c->ops->release(c, kv->k[l]);
        if (kv->v) c->ops->release(c, kv->v[l]);
    }
    free(kv->k);
    free(kv->v);
    free(kv);
}
