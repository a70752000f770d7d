/*
 * cpu_attention_packed.c -- attention over a KV cache kept in a packed
 * type (bf16, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl) or with K and V of
 * different types: the blocks are decoded inside the loops, never widened
 * into a copy of the cache.
 *
 * The arithmetic is llama.cpp's, as ops/ref_attention.c spells it out: q
 * converted once per head to K's vec_dot type, each score one vec_dot of
 * the quant module's kernels of this instance's tier (the decode-shaped
 * rows kernel where the tier has one: the same bits); the default path
 * rounds the softmax weights to V's type (f32, f16, bf16); flash keeps an
 * f16 V's sum in f16 and any other V's in f32, a row decoded at a time.
 * Work is split over (KV head, token, query head) units as in
 * cpu_attention.c, each thread in its own slice of the attention scratch:
 * the scores (n_ctx floats), then q in K's vec_dot type (at most 4 bytes a
 * value), then one decoded row (f32, or a K row in f16 for flash on an f32
 * K) -- 8 bytes a head value in all, what reserve() gives.
 */
#include <math.h>
#include <string.h>

#include "backend/cpu/cpu_compute.h"
#include "base/error.h"
#include "base/half.h"
#include "quant/kernels.h"
#include "quant/types.h"

typedef struct {
    pl_cpu_compute *cc;
    const pl_attn_params *ap;
    const float *q;
    const char *k, *v;
    int64_t n_tok, pos0;
    float *out;
    uint32_t kt, vt;      /* the types the arithmetic sees (flash: f32 read as f16) */
    size_t k_row, v_row;  /* bytes of a cache row */
    size_t k_head, v_head; /* bytes of one KV head within a row */
    const pl_quant_kernel_set *kk, *vk, *qk; /* K's, V's kernels; those of K's vec_dot type */
    const pl_quant_kernel_set *f16k;         /* f16's (an f32 row read as f16) */
} packed_job;

static inline int64_t kv_len(const packed_job *j, int64_t t) { return j->ap->n_kv > 0 ? j->ap->n_kv : j->pos0 + t + 1; }

/* w[p] = scale * q . K row p of KV head kvh, for the rows token t sees. */
static void packed_scores(const packed_job *j, int64_t kvh, int64_t n_kv, const void *qc, float *w, uint16_t *krow16) {
    const pl_attn_params *ap = j->ap;
    const int64_t hd = ap->head_dim;
    const char *k0 = j->k + (size_t)kvh * j->k_head;
    if (j->kt != j->ap->k_type) { /* flash on an f32 K: each row through f16 */
        for (int64_t p = 0; p < n_kv; p++) {
            j->f16k->act_from_float((const float *)(k0 + (size_t)p * j->k_row), krow16, hd);
            w[p] = j->kk->vec_dot(hd, krow16, qc) * ap->scale;
        }
        return;
    }
    int64_t p = 0;
    if (j->kk->vec_dot_rows)
        for (; p + j->kk->dot_rows <= n_kv; p += j->kk->dot_rows)
            j->kk->vec_dot_rows(hd, k0 + (size_t)p * j->k_row, j->k_row, qc, 0, w + p, 0);
    for (; p < n_kv; p++) w[p] = j->kk->vec_dot(hd, k0 + (size_t)p * j->k_row, qc);
    for (p = 0; p < n_kv; p++) w[p] *= ap->scale;
}

/* The default path's values: softmax of w, the weights rounded to V's
 * type, their sum of V rows. */
static void packed_values(const packed_job *j, int64_t kvh, int64_t n_kv, float *w, float *o) {
    const pl_cpu_isa *isa = j->cc->isa;
    const int64_t hd = j->ap->head_dim;
    const char *v0 = j->v + (size_t)kvh * j->v_head;
    const double sum = isa->exp_sum(w, isa->max(w, n_kv), w, n_kv);
    const float inv = (float)(1.0 / sum);
    memset(o, 0, (size_t)hd * sizeof(float));
    for (int64_t p = 0; p < n_kv; p++) {
        const char *vr = v0 + (size_t)p * j->v_row;
        const float a = w[p] * inv;
        if (j->vt == PL_TYPE_F16) {
            isa->axpy_f16(pl_f16_to_f32(pl_f32_to_f16(a)), (const uint16_t *)vr, o, hd);
        } else if (j->vt == PL_TYPE_BF16) {
            const float ab = pl_bf16_to_f32(pl_f32_to_bf16(a));
            const uint16_t *v = (const uint16_t *)vr;
            for (int64_t d = 0; d < hd; d++) o[d] += ab * pl_bf16_to_f32(v[d]);
        } else {
            isa->axpy_f32(a, (const float *)vr, o, hd);
        }
    }
}

/* The flash path's values: w folded in position order into a running
 * maximum and sum; an f16 V (or an f32 one read as f16) summed in f16
 * after every row, any other decoded to f32 (vf) and summed in f32. */
static void packed_flash_values(const packed_job *j, int64_t kvh, int64_t n_kv, const float *w, float *vf, float *o) {
    const pl_cpu_isa *isa = j->cc->isa;
    const int64_t hd = j->ap->head_dim;
    const char *v0 = j->v + (size_t)kvh * j->v_head;
    const bool f16 = j->vt == PL_TYPE_F16, f32_as_16 = f16 && j->ap->v_type == PL_TYPE_F32;
    uint16_t *v16 = (uint16_t *)vf;
    float S = 0.0f, M = -INFINITY;
    memset(o, 0, (size_t)hd * sizeof(float));
    for (int64_t p = 0; p < n_kv; p++) {
        float ms, vs;
        const char *vr = v0 + (size_t)p * j->v_row;
        if (pl_flash_step(w[p], &M, &ms, &vs)) {
            if (!f16)
                for (int64_t d = 0; d < hd; d++) o[d] *= ms;
            else if (isa->scale_round_f16) isa->scale_round_f16(o, ms, o, hd);
            else
                for (int64_t d = 0; d < hd; d++) o[d] = pl_f16_to_f32(pl_f32_to_f16(o[d] * ms));
        }
        if (f16) {
            if (f32_as_16) {
                j->f16k->act_from_float((const float *)vr, v16, hd);
                vr = (const char *)v16;
            }
            if (isa->mad_round_f16) {
                isa->mad_round_f16(vs, (const uint16_t *)vr, o, hd);
            } else {
                const uint16_t *v = (const uint16_t *)vr;
                for (int64_t d = 0; d < hd; d++) o[d] = pl_f16_to_f32(pl_f32_to_f16(fmaf(pl_f16_to_f32(v[d]), vs, o[d])));
            }
        } else {
            j->vk->to_float(vr, vf, hd);
            for (int64_t d = 0; d < hd; d++) o[d] = fmaf(vf[d], vs, o[d]);
        }
        S = S * ms + vs;
    }
    const float inv = S == 0.0f ? 0.0f : 1.0f / S;
    for (int64_t d = 0; d < hd; d++) o[d] *= inv;
}

static void packed_run(void *ctx, int chunk, int n_chunks, int thread) {
    packed_job *j = ctx;
    const pl_attn_params *ap = j->ap;
    const int64_t hd = ap->head_dim, group = ap->n_head / ap->n_head_kv;
    uint8_t *mine = (uint8_t *)j->cc->attn + (size_t)thread * j->cc->attn_stride;
    float *w = (float *)mine;
    uint8_t *qc = mine + (size_t)j->cc->lim.n_ctx * 2 * sizeof(float); /* q: at most 4 bytes a value */
    float *vf = (float *)(qc + (size_t)hd * 4);                          /* a decoded row */
    long long lo, hi;
    pl_pool_split(j->n_tok * ap->n_head, chunk, n_chunks, &lo, &hi);
    for (int64_t k = lo; k < hi; k++) {
        /* KV-head-major units: consecutive units read the same rows */
        const int64_t per_kv = j->n_tok * group, kvh = k / per_kv, t = k % per_kv / group, h = kvh * group + k % group;
        const int64_t n_kv = kv_len(j, t);
        j->qk->act_from_float(j->q + (t * ap->n_head + h) * hd, qc, hd);
        packed_scores(j, kvh, n_kv, qc, w, (uint16_t *)vf);
        float *o = j->out + (t * ap->n_head + h) * hd;
        if (ap->flash) packed_flash_values(j, kvh, n_kv, w, vf, o);
        else packed_values(j, kvh, n_kv, w, o);
    }
}

void pl_cpu_attention_packed(pl_compute *c, const pl_attn_params *ap, const float *q, const void *k_cache,
                             const void *v_cache, int64_t n_tok, int64_t pos0, float *out) {
    pl_cpu_compute *cc = pl_cpu(c);
    const uint32_t kt = ap->flash && ap->k_type == PL_TYPE_F32 ? PL_TYPE_F16 : ap->k_type;
    const uint32_t vt = ap->flash && ap->v_type == PL_TYPE_F32 ? PL_TYPE_F16 : ap->v_type;
    const pl_type_traits *tk = pl_type_get(ap->k_type), *tv = pl_type_get(ap->v_type), *tkt = pl_type_get(kt);
    const int64_t hd = ap->head_dim, kv_dim = ap->n_head_kv * hd;
    packed_job j = {.cc = cc, .ap = ap, .q = q, .k = k_cache, .v = v_cache, .n_tok = n_tok, .pos0 = pos0, .out = out,
                    .kt = kt, .vt = vt};
    if (tk && tv && tkt && hd % tk->block == 0 && hd % tv->block == 0) {
        j.k_row = (size_t)(kv_dim / tk->block * tk->bytes), j.v_row = (size_t)(kv_dim / tv->block * tv->bytes);
        j.k_head = (size_t)(hd / tk->block * tk->bytes), j.v_head = (size_t)(hd / tv->block * tv->bytes);
        j.kk = pl_quant_kernels_tier(kt, cc->qtier);
        j.vk = pl_quant_kernels_tier(ap->v_type, cc->qtier);
        j.qk = pl_quant_kernels_tier(tkt->vec_dot_type, cc->qtier);
        j.f16k = pl_quant_kernels_tier(PL_TYPE_F16, cc->qtier);
    }
    if (!j.kk || !j.kk->vec_dot || !j.qk || !j.qk->act_from_float || !j.vk || !j.vk->to_float || !j.f16k ||
        (!ap->flash && tv->quantized)) {
        pl_fail(POCKETLLM_ERR_INTERNAL, "attention: a K %s / V %s cache%s", tk ? tk->name : "?", tv ? tv->name : "?",
                !ap->flash && tv && tv->quantized ? " needs flash attention (a quantized V)" : " is not supported");
        pl_compute_fail(c, POCKETLLM_ERR_INTERNAL);
        return;
    }
    pl_cpu_parallel(cc, packed_run, &j, n_tok * ap->n_head * (ap->n_kv > 0 ? ap->n_kv : pos0 + n_tok) * hd);
}
