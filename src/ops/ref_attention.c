/*
 * ref_attention.c -- grouped-query attention over the KV cache,
 * computed as llama.cpp computes it without flash attention: scores
 * q.k (q rounded to the cache type first), scaled, softmax over the
 * positions up to the query's own, then the weighted sum of V rows with the
 * weights rounded to the cache type.  With ap->flash, the same scores go
 * through llama.cpp's flash-attention arithmetic instead (ref_flash_values).
 * With ap->n_kv > 0 (a vision tower) it is not causal: every query reads
 * the same n_kv rows, by the same arithmetic.
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

/* The flash path's second half for one query: the scores w[0 .. n_kv)
 * folded in order into a running maximum M, sum S and V sum acc, as
 * llama.cpp's CPU flash attention does (V read as f16 and acc rounded to
 * f16 after every step; a new maximum rescales acc and S by e^(old - new)). */
static void ref_flash_values(const pl_attn_params *ap, const float *w, int64_t n_kv, const char *v0, size_t v_stride,
                             float *oh) {
    const int64_t hd = ap->head_dim;
    float S = 0.0f, M = -INFINITY;
    for (int64_t d = 0; d < hd; d++) oh[d] = 0.0f;
    for (int64_t j = 0; j < n_kv; j++) {
        float ms, vs;
        if (pl_flash_step(w[j], &M, &ms, &vs))
            for (int64_t d = 0; d < hd; d++) oh[d] = round_to(PL_TYPE_F16, oh[d] * ms);
        const char *vrow = v0 + (size_t)j * v_stride;
        for (int64_t d = 0; d < hd; d++)
            oh[d] = round_to(PL_TYPE_F16, fmaf(round_to(PL_TYPE_F16, cache_at(ap->kv_type, vrow, d)), vs, oh[d]));
        S = S * ms + vs;
    }
    const float inv = S == 0.0f ? 0.0f : 1.0f / S;
    for (int64_t d = 0; d < hd; d++) oh[d] *= inv;
}

pocketllm_status pl_ref_attention(const pl_attn_params *ap, const float *q, const void *k_cache, const void *v_cache,
                                  int64_t n_tok, int64_t pos0, float *out) {
    const int64_t hd = ap->head_dim, kv_dim = ap->n_head_kv * hd, group = ap->n_head / ap->n_head_kv;
    const size_t esz = ap->kv_type == PL_TYPE_F16 ? 2 : 4;
    /* the type the arithmetic rounds to: the cache's, or f16 for flash */
    const uint32_t at = ap->flash ? PL_TYPE_F16 : ap->kv_type;
    /* not causal (n_kv > 0): every query reads rows 0 .. n_kv-1 */
    const int64_t most = ap->n_kv > 0 ? ap->n_kv : pos0 + n_tok;
    float *w = malloc(sizeof(float) * (size_t)most);
    float *qr = malloc(sizeof(float) * (size_t)hd);
    if (!w || !qr) {
        free(w);
        free(qr);
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "attention: out of memory");
    }
    for (int64_t t = 0; t < n_tok; t++) {
        const int64_t n_kv = ap->n_kv > 0 ? ap->n_kv : pos0 + t + 1; /* causal: positions 0 .. own */
        for (int64_t h = 0; h < ap->n_head; h++) {
            const float *qh = q + (t * ap->n_head + h) * hd;
            const int64_t kvh = h / group;
            for (int64_t d = 0; d < hd; d++) qr[d] = round_to(at, qh[d]);
            for (int64_t j = 0; j < n_kv; j++) {
                const void *krow = (const char *)k_cache + ((size_t)j * (size_t)kv_dim + (size_t)(kvh * hd)) * esz;
                double s = 0.0;
                for (int64_t d = 0; d < hd; d++) s += (double)(qr[d] * round_to(at, cache_at(ap->kv_type, krow, d)));
                w[j] = (float)s * ap->scale;
            }
            float *oh = out + (t * ap->n_head + h) * hd;
            if (ap->flash) {
                ref_flash_values(ap, w, n_kv, (const char *)v_cache + (size_t)(kvh * hd) * esz, (size_t)kv_dim * esz, oh);
                continue;
            }
            pl_ref_softmax(w, w, n_kv);
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
