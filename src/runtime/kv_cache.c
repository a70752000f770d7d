/*
 * kv_cache.c -- allocate and free the per-layer K and V caches, with every
 * size checked before it is multiplied.
 */
#include "runtime/kv_cache.h"

#include <stdlib.h>

#include "base/checked.h"
#include "base/error.h"
#include "quant/types.h"

pocketllm_status pl_kv_cache_new(pl_compute *c, uint32_t type, int64_t n_layer, int64_t n_ctx, int64_t kv_dim,
                                 pl_kv_cache **out) {
    *out = NULL;
    if (type != PL_TYPE_F16 && type != PL_TYPE_F32)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "KV cache type %u: only f16 (1) and f32 (0) are supported", type);
    uint64_t bytes;
    if (n_layer < 1 || n_ctx < 1 || kv_dim < 1 ||
        !pl_mul_u64((uint64_t)n_ctx, (uint64_t)kv_dim * (type == PL_TYPE_F16 ? 2 : 4), &bytes) || bytes > SIZE_MAX / 4)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "KV cache of %lld positions x %lld is too large", (long long)n_ctx,
                       (long long)kv_dim);
    pl_kv_cache *kv = calloc(1, sizeof *kv);
    if (!kv) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    kv->type = type;
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
        kv->k[l] = c->ops->alloc(c, (size_t)bytes);
        kv->v[l] = kv->k[l] ? c->ops->alloc(c, (size_t)bytes) : NULL;
        if (!kv->v[l]) {
            pl_kv_cache_free(c, kv);
            return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for a KV cache of %lld positions (%llu bytes a layer)",
                           (long long)n_ctx, (unsigned long long)bytes * 2);
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
