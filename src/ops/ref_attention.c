/*
 * ref_attention.c -- causal grouped-query attention over the KV cache,
 * computed as llama.cpp computes it without flash attention: scores
 * q.k (q rounded to the cache type first), scaled, softmax over the
 * positions up to the query's own, then the weighted sum of V rows with the
 * weights rounded to the cache type.
 */
#include <math.h>
#include <stdlib.h>

#include "base/error.h"
#include "base/half.h"
#include "ops/ref.h"
#include "quant/types.h"

/* Element i of a cache row in its type, as f32. */
static inline float cache_at(uint32_t type, const void *row, int64_t i) {
    return type == PL_TYPE_F16 ? pl_f16_to_f32(((const uint16_t *)row)[i]) : ((const float *)row)[i];
}

/* x rounded through the cache type (f16) or kept (f32). */
static inline float round_to(uint32_t type, float x) {
    return type == PL_TYPE_F16 ? pl_f16_to_f32(pl_f32_to_f16(x)) : x;
}

pocketllm_status pl_ref_attention(const pl_attn_params *ap, const float *q, const void *k_cache, const void *v_cache,
                                  int64_t n_tok, int64_t pos0, float *out) {
    const int64_t hd = ap->head_dim, kv_dim = ap->n_head_kv * hd, group = ap->n_head / ap->n_head_kv;
    const size_t esz = ap->kv_type == PL_TYPE_F16 ? 2 : 4;
    float *w = malloc(sizeof(float) * (size_t)(pos0 + n_tok));
    float *qr = malloc(sizeof(float) * (size_t)hd);
    if (!w || !qr) {
        free(w);
        free(qr);
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "attention: out of memory");
    }
    for (int64_t t = 0; t < n_tok; t++) {
        const int64_t n_kv = pos0 + t + 1; /* causal: positions 0 .. own */
        for (int64_t h = 0; h < ap->n_head; h++) {
            const float *qh = q + (t * ap->n_head + h) * hd;
            const int64_t kvh = h / group;
            for (int64_t d = 0; d < hd; d++) qr[d] = round_to(ap->kv_type, qh[d]);
            for (int64_t j = 0; j < n_kv; j++) {
                const void *krow = (const char *)k_cache + ((size_t)j * (size_t)kv_dim + (size_t)(kvh * hd)) * esz;
                double s = 0.0;
                for (int64_t d = 0; d < hd; d++) s += (double)(qr[d] * cache_at(ap->kv_type, krow, d));
                w[j] = (float)s * ap->scale;
            }
            pl_ref_softmax(w, w, n_kv);
            float *oh = out + (t * ap->n_head + h) * hd;
            for (int64_t d = 0; d < hd; d++) {
                double s = 0.0;
                for (int64_t j = 0; j < n_kv; j++) {
                    const void *vrow = (const char *)v_cache + ((size_t)j * (size_t)kv_dim + (size_t)(kvh * hd)) * esz;
                    s += (double)(round_to(ap->kv_type, w[j]) * cache_at(ap->kv_type, vrow, d));
                }
                oh[d] = (float)s;
            }
        }
    }
    free(w);
    free(qr);
    return POCKETLLM_OK;
}
