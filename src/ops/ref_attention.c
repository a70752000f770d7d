/*
 * ref_attention.c -- grouped-query attention over the KV cache,
 * computed as llama.cpp computes it without flash attention: q converted
 * to K's vec_dot type and dotted with each K row by that type's vec_dot
 * (f16: q rounded to f16; q8_0: q quantized to q8_0 blocks), scaled,
 * softmax over the positions up to the query's own, then the weighted sum
 * of V rows with the weights rounded to V's type.  With ap->flash, the same
 * scores go through llama.cpp's flash-attention arithmetic instead
 * (ref_flash_values).  With ap->n_kv > 0 (a vision tower) it is not causal:
 * every query reads the same n_kv rows, by the same arithmetic.
 */
#include <math.h>
#include <stdlib.h>

#include "base/error.h"
#include "base/half.h"
#include "ops/ref.h"
#include "quant/kv_types.h"
#include "quant/types.h"

/* x rounded through a float cache type (f16, bf16) or kept (f32). */
static inline float round_to(uint32_t type, float x) {
    return type == PL_TYPE_F16 ? pl_f16_to_f32(pl_f32_to_f16(x)) : type == PL_TYPE_BF16 ? pl_bf16_to_f32(pl_f32_to_bf16(x)) : x;
}

/* The flash path's second half for one query: the scores w[0 .. n_kv)
 * folded in order into a running maximum M, sum S and V sum acc, as
 * llama.cpp's CPU flash attention does.  For an f16 V the sum is rounded
 * to f16 after every step; any other V row is decoded to f32 and summed in
 * f32.  A new maximum rescales acc and S by e^(old - new).  vf is scratch
 * for one decoded row. */
static void ref_flash_values(const pl_attn_params *ap, uint32_t vt, const float *w, int64_t n_kv, const char *v0,
                             size_t v_stride, float *vf, float *oh) {
    const int64_t hd = ap->head_dim;
    const pl_type_traits *tv = pl_type_get(ap->v_type); /* the stored rows */
    const bool f16 = vt == PL_TYPE_F16;
    float S = 0.0f, M = -INFINITY;
    for (int64_t d = 0; d < hd; d++) oh[d] = 0.0f;
    for (int64_t j = 0; j < n_kv; j++) {
        float ms, vs;
        if (pl_flash_step(w[j], &M, &ms, &vs))
            for (int64_t d = 0; d < hd; d++) oh[d] = f16 ? round_to(PL_TYPE_F16, oh[d] * ms) : oh[d] * ms;
        tv->to_float(v0 + (size_t)j * v_stride, vf, hd);
        if (f16)
            for (int64_t d = 0; d < hd; d++) vf[d] = round_to(PL_TYPE_F16, vf[d]);
        for (int64_t d = 0; d < hd; d++) oh[d] = f16 ? round_to(PL_TYPE_F16, fmaf(vf[d], vs, oh[d])) : fmaf(vf[d], vs, oh[d]);
        S = S * ms + vs;
    }
    const float inv = S == 0.0f ? 0.0f : 1.0f / S;
    for (int64_t d = 0; d < hd; d++) oh[d] *= inv;
}

/* f32 K rows keep the double-accumulated dot this file always had (the
 * tests' tolerance covers the summation order of any kernel). */
static float ref_dot_f32(int64_t n, const float *k, const float *q) {
    double s = 0.0;
    for (int64_t d = 0; d < n; d++) s += (double)(q[d] * k[d]);
    return (float)s;
}

pocketllm_status pl_ref_attention(const pl_attn_params *ap, const float *q, const void *k_cache, const void *v_cache,
                                  int64_t n_tok, int64_t pos0, float *out) {
    const int64_t hd = ap->head_dim, group = ap->n_head / ap->n_head_kv;
    /* the types the arithmetic sees: flash reads an f32 cache through f16 */
    const uint32_t kt = ap->flash && ap->k_type == PL_TYPE_F32 ? PL_TYPE_F16 : ap->k_type;
    const uint32_t vt = ap->flash && ap->v_type == PL_TYPE_F32 ? PL_TYPE_F16 : ap->v_type;
    const pl_type_traits *tk = pl_type_get(ap->k_type), *tkv = pl_type_get(kt), *tv = pl_type_get(ap->v_type);
    const pl_type_traits *tq = tkv ? pl_type_get(tkv->vec_dot_type) : NULL;
    if (!tk || !tv || !tkv->vec_dot || !tq || !tq->act_from_float || !tv->to_float || hd % tk->block || hd % tv->block ||
        (!ap->flash && tv->quantized))
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "attention: K %s / V %s caches are not supported here%s",
                       tk ? tk->name : "?", tv ? tv->name : "?", !ap->flash ? " (a quantized V needs flash attention)" : "");
    if (ap->kv_cap < 0 || (ap->kv_cap > 0 && (ap->n_kv > 0 || pos0 + n_tok > ap->kv_cap)))
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "attention: %lld positions in a head-major cache of %lld",
                       (long long)(pos0 + n_tok), (long long)ap->kv_cap);
    const size_t k_row = pl_attn_pos_stride(ap, ap->k_type), v_row = pl_attn_pos_stride(ap, ap->v_type);
    /* not causal (n_kv > 0): every query reads rows 0 .. n_kv-1 */
    const int64_t most = ap->n_kv > 0 ? ap->n_kv : pos0 + n_tok;
    float *w = malloc(sizeof(float) * (size_t)most);
    float *qf = malloc(sizeof(float) * (size_t)hd * 3); /* q rounded; a K row; a V row (f32) */
    void *qc = malloc((size_t)hd * 4 + 64);             /* q in K's vec_dot type */
    if (!w || !qf || !qc) {
        free(w);
        free(qf);
        free(qc);
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "attention: out of memory");
    }
    float *kf = qf + hd, *vf = qf + 2 * hd;
    for (int64_t t = 0; t < n_tok; t++) {
        const int64_t n_kv = ap->n_kv > 0 ? ap->n_kv : pos0 + t + 1; /* causal: positions 0 .. own */
        for (int64_t h = 0; h < ap->n_head; h++) {
            const float *qh = q + (t * ap->n_head + h) * hd;
            const int64_t kvh = h / group;
            /* this KV head's position 0 in each cache */
            const char *k0 = (const char *)k_cache + pl_attn_head_offset(ap, ap->k_type, kvh);
            const char *v0 = (const char *)v_cache + pl_attn_head_offset(ap, ap->v_type, kvh);
            const bool plain = kt == PL_TYPE_F32 || kt == PL_TYPE_F16;
            if (plain)
                for (int64_t d = 0; d < hd; d++) qf[d] = round_to(kt, qh[d]);
            else tq->act_from_float(qh, qc, hd);
            for (int64_t j = 0; j < n_kv; j++) {
                const char *krow = k0 + (size_t)j * k_row;
                float s;
                if (plain) {
                    tk->to_float(krow, kf, hd);
                    for (int64_t d = 0; d < hd; d++) kf[d] = round_to(kt, kf[d]);
                    s = ref_dot_f32(hd, kf, qf);
                } else {
                    s = tkv->vec_dot(hd, krow, qc);
                }
                w[j] = s * ap->scale;
            }
            float *oh = out + (t * ap->n_head + h) * hd;
            if (ap->flash) {
                ref_flash_values(ap, vt, w, n_kv, v0, v_row, vf, oh);
                continue;
            }
            pl_ref_softmax(w, w, n_kv);
            for (int64_t d = 0; d < hd; d++) oh[d] = 0.0f;
            for (int64_t d = 0; d < hd; d++) {
                double s = 0.0;
                for (int64_t j = 0; j < n_kv; j++) {
                    const char *vrow = v0 + (size_t)j * v_row;
                    const float v = ap->v_type == PL_TYPE_F16    ? pl_f16_to_f32(((const uint16_t *)vrow)[d])
                                    : ap->v_type == PL_TYPE_BF16 ? pl_bf16_to_f32(((const uint16_t *)vrow)[d])
                                                                 : ((const float *)vrow)[d];
                    s += (double)(round_to(ap->v_type, w[j]) * v);
                }
                oh[d] = (float)s;
            }
        }
    }
    free(w);
    free(qf);
    free(qc);
    return POCKETLLM_OK;
}
