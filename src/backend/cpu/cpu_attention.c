/*
 * cpu_attention.c -- rotary embedding and grouped-query attention on the
 * CPU, parallel over (token, head) pairs taken KV head by KV head; not
 * causal (a vision tower), over (head, block of queries) -- see full_run.
 *
 * A decode query with fewer work units than threads is split over the
 * context instead (see attention_split), with the same bits.  With
 * pl_attn_params.flash each head goes through llama.cpp's flash-attention
 * arithmetic instead (attend_flash).
 *
 * Attention follows llama.cpp's non-flash path step for step, so that the
 * same roundings happen: q is rounded to the cache type before q.k, the
 * softmax weights are rounded to it before they weight the V rows.  Each
 * thread owns a slice of the scratch reserved at session start: the scores
 * of one query (up to n_ctx) and q in f16.  The dot products and the f16
 * rounding are the quant module's kernels of the instance's tier.  A
 * packed cache (bf16, a block type, or K and V of different types) goes
 * through cpu_attention_packed.c instead.
 */
#include <math.h>
#include <string.h>

#include "backend/cpu/cpu_compute.h"
#include "backend/cpu/cpu_expf.h"
#include "backend/cpu/cpu_flash_steps.h"
#include "base/error.h"
#include "base/half.h"
#include "quant/types.h"

typedef struct {
    const pl_rope_params *rp;
    const float *x;
    float *y;
    int64_t n_tok, n_head, head_dim;
    const int32_t *pos;
} rope_job;

static void rope_run(void *ctx, int chunk, int n_chunks, int thread) {
    rope_job *j = ctx;
    const pl_rope_params *rp = j->rp;
    const int64_t half = rp->n_rot / 2, hd = j->head_dim;
    const bool multi = pl_rope_is_multi(rp->mode);
    float cache[PL_MAX_HEAD_DIM];
    int64_t cached_tok = -1;
    long long lo, hi;
    pl_pool_split(j->n_tok * j->n_head, chunk, n_chunks, &lo, &hi);
    for (int64_t k = lo; k < hi; k++) {
        const int64_t t = k / j->n_head;
        if (t != cached_tok) {
            if (multi) {
                const int32_t p4[4] = {j->pos[t], j->pos[j->n_tok + t], j->pos[2 * j->n_tok + t], j->pos[3 * j->n_tok + t]};
                pl_rope_angles_multi(rp, p4, cache);
            } else {
                pl_rope_angles(rp, j->pos[t], cache);
            }
            cached_tok = t;
        }
        const float *x = j->x + k * hd;
        float *y = j->y + k * hd;
        if (multi || rp->mode == PL_ROPE_NEOX) {
            for (int64_t i = 0; i < half; i++) {
                const float c = cache[2 * i], s = cache[2 * i + 1], a = x[i], b = x[i + half];
                y[i] = a * c - b * s;
                y[i + half] = a * s + b * c;
            }
        } else {
            for (int64_t i = 0; i < half; i++) {
                const float c = cache[2 * i], s = cache[2 * i + 1], a = x[2 * i], b = x[2 * i + 1];
                y[2 * i] = a * c - b * s;
                y[2 * i + 1] = a * s + b * c;
            }
        }
        if (y != x)
            for (int64_t i = rp->n_rot; i < hd; i++) y[i] = x[i];
    }
}

void pl_cpu_rope(pl_compute *c, const pl_rope_params *rp, const float *x, float *y, int64_t n_tok, int64_t n_head,
                 int64_t head_dim, const int32_t *pos) {
    if (rp->n_rot > head_dim || rp->n_rot % 2 || head_dim > PL_MAX_HEAD_DIM) {
        pl_fail(POCKETLLM_ERR_INTERNAL, "rope: %lld rotated of %lld per head", (long long)rp->n_rot, (long long)head_dim);
        pl_compute_fail(c, POCKETLLM_ERR_INTERNAL);
        return;
    }
    if (pl_rope_is_multi(rp->mode)) {
        const int32_t *s = rp->sections;
        /* ggml's conditions: some section, none negative; VISION rotates
         * the whole head in two halves of an even n_dims */
        const bool ok = s[0] >= 0 && s[1] >= 0 && s[2] >= 0 && s[3] >= 0 && s[0] + s[1] + s[2] > 0 &&
                        (rp->mode != PL_ROPE_VISION || (rp->n_rot == head_dim && head_dim % 4 == 0));
        if (!ok) {
            pl_fail(POCKETLLM_ERR_INTERNAL, "rope: sections %d,%d,%d,%d with %lld rotated of %lld per head do not fit mode %d",
                    s[0], s[1], s[2], s[3], (long long)rp->n_rot, (long long)head_dim, rp->mode);
            pl_compute_fail(c, POCKETLLM_ERR_INTERNAL);
            return;
        }
    }
    rope_job j = {rp, x, y, n_tok, n_head, head_dim, pos};
    pl_cpu_parallel(pl_cpu(c), rope_run, &j, n_tok * n_head * head_dim);
}

typedef struct {
    pl_cpu_compute *cc;
    const pl_attn_params *ap;
    const float *q;
    const void *k, *v;
    int64_t n_tok, pos0;
    float *out;
    pl_vec_dot_fn dot;            /* q . k in the cache type */
    pl_vec_dot_fn dot16;          /* q . k in f16 (the flash path) */
    pl_act_from_float_fn to_f16;  /* q to f16 for an f16 cache */
    /* `dot` over many rows, when the ISA table's equals the quant tier's */
    void (*dot_rows)(const uint16_t *x, int64_t stride, int64_t n_rows, const uint16_t *q, int64_t n, float *y);
    bool pair; /* heads taken two at a time by the ISA's two-head row kernels */
    bool flash_pair; /* the same for the flash path (dot_rows2_f16, flash_rows2_f16) */
    /* not causal: queries per block, and where a thread's block scratch is */
    int64_t qb;
    bool scores_in_act; /* the scores in the matmul scratch (else the attention scratch) */
    bool fast;          /* f32 default arithmetic through the ISA's block kernels (full_block_fast) */
    size_t act_slice;   /* bytes of it per thread */
    /* in cache elements: from KV head 0 to KV head 1, and from one position
     * of a head to the next (pl_attn_params.kv_cap's layout; K and V have
     * one type here) */
    int64_t hs, ps;
} attn_job;

/* The rows query t reads: all n_kv when not causal, else up to its own. */
static inline int64_t kv_len(const attn_job *j, int64_t t) { return j->ap->n_kv > 0 ? j->ap->n_kv : j->pos0 + t + 1; }

/* x = f16(x * s) in place: the ISA's kernel, or its scalar form */
static void scale_round_f16(const pl_cpu_isa *isa, float *x, float s, int64_t n) {
    if (isa->scale_round_f16) {
        isa->scale_round_f16(x, s, x, n);
    } else {
        for (int64_t p = 0; p < n; p++) x[p] = pl_f16_to_f32(pl_f32_to_f16(x[p] * s));
    }
}

/* w (n scores) -> softmax weights rounded to f16, as llama.cpp's f16 path */
static void softmax_f16(const pl_cpu_isa *isa, float *w, int64_t n) {
    const double sum = isa->exp_sum(w, isa->max(w, n), w, n);
    scale_round_f16(isa, w, (float)(1.0 / sum), n);
}

/* w[p] = scale * (q of head h, token t, to f16 in q16) . (f16 K row p of
 * KV head kvh) for the positions the token sees */
static void scores_f16(const attn_job *j, int64_t kvh, int64_t t, int64_t h, float *w, uint16_t *q16) {
    const pl_attn_params *ap = j->ap;
    const int64_t hd = ap->head_dim, n_kv = kv_len(j, t);
    const uint16_t *kc = (const uint16_t *)j->k + kvh * j->hs;
    j->to_f16(j->q + (t * ap->n_head + h) * hd, q16, hd);
    if (j->dot_rows) {
        j->dot_rows(kc, j->ps, n_kv, q16, hd, w);
        for (int64_t p = 0; p < n_kv; p++) w[p] *= ap->scale;
    } else {
        for (int64_t p = 0; p < n_kv; p++) w[p] = j->dot(hd, kc + p * j->ps, q16) * ap->scale;
    }
}

/* Both heads h and h + 1 of one KV head's group for one token, with the
 * two-head row kernels: each K and V row is read once for the pair. */
static void attend_pair(const attn_job *j, int64_t kvh, int64_t t, int64_t h, float *w, uint16_t *q16) {
    const pl_attn_params *ap = j->ap;
    const pl_cpu_isa *isa = j->cc->isa;
    const int64_t hd = ap->head_dim, n_kv = kv_len(j, t), n_ctx = j->cc->lim.n_ctx;
    const float *qa = j->q + (t * ap->n_head + h) * hd;
    float *oa = j->out + (t * ap->n_head + h) * hd, *wb = w + n_ctx;
    j->to_f16(qa, q16, hd);
    j->to_f16(qa + hd, q16 + hd, hd);
    isa->dot_rows2_f16((const uint16_t *)j->k + kvh * j->hs, j->ps, n_kv, q16, q16 + hd, hd, w, wb);
    for (int64_t p = 0; p < n_kv; p++) w[p] *= ap->scale;
    for (int64_t p = 0; p < n_kv; p++) wb[p] *= ap->scale;
    softmax_f16(isa, w, n_kv);
    softmax_f16(isa, wb, n_kv);
    memset(oa, 0, (size_t)(2 * hd) * sizeof(float));
    isa->axpy_rows2_f16(w, wb, (const uint16_t *)j->v + kvh * j->hs, j->ps, n_kv, oa, oa + hd, hd);
}

/* o = f16(fma(v, a, o)): the ISA's kernel, or its scalar form */
static void mad_round_f16(const pl_cpu_isa *isa, float a, const uint16_t *v, float *o, int64_t n) {
    if (isa->mad_round_f16) {
        isa->mad_round_f16(a, v, o, n);
    } else {
        for (int64_t d = 0; d < n; d++) o[d] = pl_f16_to_f32(pl_f32_to_f16(fmaf(pl_f16_to_f32(v[d]), a, o[d])));
    }
}

bool pl_expf_matches_libm(void) {
    /* 0: not yet known, 1: yes, 2: no; racing first callers find the same */
    static int known;
    int k = __atomic_load_n(&known, __ATOMIC_ACQUIRE);
    if (!k) {
        k = 1;
        /* 4096 arguments of each sign spread over the fast path's range
         * (every exponent): well under a millisecond, once per process */
        for (uint32_t u = 0; u < 0x42b00000u && k == 1; u += 0x42b00u)
            for (uint32_t sign = 0; sign < 2; sign++) {
                const uint32_t bits = u | sign << 31;
                float x;
                memcpy(&x, &bits, 4);
                const float a = pl_expf_model(x), b = pl_libm_expf(x);
                if (memcmp(&a, &b, 4)) k = 2;
            }
        /* an expf whose r is not fused agrees everywhere else it looks */
        const float odd = PL_EXPF_FUSED_R_ARG, a = pl_expf_model(odd), b = pl_libm_expf(odd);
        if (memcmp(&a, &b, 4)) k = 2;
        __atomic_store_n(&known, k, __ATOMIC_RELEASE);
    }
    return k == 1;
}

/* The flash path's running maximum (*M) and sum (*S) stepped over the
 * scores w[0 .. n) first: w[p] becomes row p's V weight and ms[p] the
 * rescale before it (1: none), as pl_flash_step gives them.  The V fold
 * then runs in one ISA call (flash_rows_*) -- the same operations in the
 * same order as a row-by-row loop.  The ISA's flash_weights does these
 * steps with a vector expf, where its expf is this libm's. */
void pl_cpu_flash_weights(const pl_cpu_isa *isa, float *w, float *ms, int64_t n, float *M, float *S) {
    if (isa->flash_weights && pl_expf_matches_libm()) {
        isa->flash_weights(w, ms, n, M, S);
        return;
    }
    pl_flash_steps(w, ms, n, M, S);
}

/* one head's whole fold from scratch: returns the sum S */
static float flash_weights(const pl_cpu_isa *isa, float *w, float *ms, int64_t n) {
    float S = 0.0f, M = -INFINITY;
    pl_cpu_flash_weights(isa, w, ms, n, &M, &S);
    return S;
}

/* Both heads h and h + 1 of one KV head's group by the flash arithmetic:
 * the two-head score and fold kernels read each K and V row once for the
 * pair; each head's bits are attend_flash's. */
static void attend_flash_pair(const attn_job *j, int64_t kvh, int64_t t, int64_t h, float *w, uint16_t *q16) {
    const pl_attn_params *ap = j->ap;
    const pl_cpu_isa *isa = j->cc->isa;
    const int64_t hd = ap->head_dim, n_kv = kv_len(j, t), n_ctx = j->cc->lim.n_ctx;
    const float *qa = j->q + (t * ap->n_head + h) * hd;
    float *oa = j->out + (t * ap->n_head + h) * hd, *wb = w + n_ctx, *msa = w + 2 * n_ctx, *msb = w + 3 * n_ctx;
    j->to_f16(qa, q16, hd);
    j->to_f16(qa + hd, q16 + hd, hd);
    isa->dot_rows2_f16((const uint16_t *)j->k + kvh * j->hs, j->ps, n_kv, q16, q16 + hd, hd, w, wb);
    for (int64_t p = 0; p < n_kv; p++) w[p] *= ap->scale;
    for (int64_t p = 0; p < n_kv; p++) wb[p] *= ap->scale;
    const float Sa = flash_weights(isa, w, msa, n_kv), Sb = flash_weights(isa, wb, msb, n_kv);
    memset(oa, 0, (size_t)(2 * hd) * sizeof(float));
    isa->flash_rows2_f16(w, msa, wb, msb, (const uint16_t *)j->v + kvh * j->hs, j->ps, n_kv, oa, oa + hd, hd);
    const float ia = Sa == 0.0f ? 0.0f : 1.0f / Sa, ib = Sb == 0.0f ? 0.0f : 1.0f / Sb;
    for (int64_t d = 0; d < hd; d++) oa[d] *= ia;
    for (int64_t d = 0; d < hd; d++) oa[hd + d] *= ib;
}

/* One query head by llama.cpp's flash-attention arithmetic (see
 * pl_attn_params.flash): scores of f16 q against f16 K rows, folded in
 * position order into a running maximum, sum and V sum kept in f16, as
 * ops/ref_attention.c spells out.  An f32 cache is read through f16, as
 * llama.cpp casts it for flash attention; q16 holds q, then a K row and a
 * V row in that case. */
static void attend_flash(const attn_job *j, int64_t kvh, int64_t t, int64_t h, float *w, uint16_t *q16) {
    const pl_attn_params *ap = j->ap;
    const pl_cpu_isa *isa = j->cc->isa;
    const int64_t hd = ap->head_dim, n_kv = kv_len(j, t);
    const bool f32c = ap->k_type == PL_TYPE_F32;
    uint16_t *krow = q16 + hd, *vrow = q16 + 2 * hd;
    float *o = j->out + (t * ap->n_head + h) * hd;
    if (!f32c) {
        scores_f16(j, kvh, t, h, w, q16);
    } else {
        j->to_f16(j->q + (t * ap->n_head + h) * hd, q16, hd);
        for (int64_t p = 0; p < n_kv; p++) {
            j->to_f16((const float *)j->k + p * j->ps + kvh * j->hs, krow, hd);
            w[p] = j->dot16(hd, krow, q16) * ap->scale;
        }
    }
    memset(o, 0, (size_t)hd * sizeof(float));
    float S = 0.0f, M = -INFINITY;
    if (!f32c && isa->flash_rows_f16) {
        float *ms = w + j->cc->lim.n_ctx;
        S = flash_weights(isa, w, ms, n_kv);
        isa->flash_rows_f16(w, ms, (const uint16_t *)j->v + kvh * j->hs, j->ps, n_kv, o, hd);
    } else {
        for (int64_t p = 0; p < n_kv; p++) {
            float ms, vs;
            if (pl_flash_step(w[p], &M, &ms, &vs)) scale_round_f16(isa, o, ms, hd);
            const uint16_t *vr = (const uint16_t *)j->v + p * j->ps + kvh * j->hs;
            if (f32c) {
                j->to_f16((const float *)j->v + p * j->ps + kvh * j->hs, vrow, hd);
                vr = vrow;
            }
            mad_round_f16(isa, vs, vr, o, hd);
            S = S * ms + vs;
        }
    }
    const float inv = S == 0.0f ? 0.0f : 1.0f / S;
    for (int64_t d = 0; d < hd; d++) o[d] *= inv;
}

static void attn_run(void *ctx, int chunk, int n_chunks, int thread) {
    attn_job *j = ctx;
    const pl_attn_params *ap = j->ap;
    const pl_cpu_isa *isa = j->cc->isa;
    const int64_t hd = ap->head_dim, group = ap->n_head / ap->n_head_kv;
    const bool f16 = ap->k_type == PL_TYPE_F16;
    const pl_vec_dot_fn dot = j->dot;
    uint8_t *mine = (uint8_t *)j->cc->attn + (size_t)thread * j->cc->attn_stride;
    float *w = (float *)mine;
    uint16_t *q16 = (uint16_t *)(mine + (size_t)j->cc->lim.n_ctx * 4 * sizeof(float));
    /* a unit of work is one query head, or two of the same group */
    const int64_t per_unit = j->pair || j->flash_pair ? 2 : 1, units_per_group = group / per_unit;
    long long lo, hi;
    pl_pool_split(j->n_tok * ap->n_head / per_unit, chunk, n_chunks, &lo, &hi);
    for (int64_t k = lo; k < hi; k++) {
        /* work units in KV-head-major order (KV head, token, query heads of
         * its group): consecutive units read the same K and V rows, which
         * stay in cache, instead of sweeping every head's rows per token */
        const int64_t per_kv = j->n_tok * units_per_group, kvh = k / per_kv, t = k % per_kv / units_per_group;
        const int64_t h = kvh * group + k % units_per_group * per_unit, n_kv = kv_len(j, t);
        if (j->flash_pair) {
            attend_flash_pair(j, kvh, t, h, w, q16);
            continue;
        }
        if (ap->flash) {
            for (int64_t g = 0; g < per_unit; g++) attend_flash(j, kvh, t, h + g, w, q16);
            continue;
        }
        if (j->pair) {
            attend_pair(j, kvh, t, h, w, q16);
            continue;
        }
        const float *q = j->q + (t * ap->n_head + h) * hd;
        float *out = j->out + (t * ap->n_head + h) * hd;
        if (f16) {
            scores_f16(j, kvh, t, h, w, q16);
            softmax_f16(isa, w, n_kv);
            memset(out, 0, (size_t)hd * sizeof(float));
            const uint16_t *vc = (const uint16_t *)j->v + kvh * j->hs;
            if (isa->axpy_rows_f16) {
                isa->axpy_rows_f16(w, vc, j->ps, n_kv, out, hd);
            } else {
                for (int64_t p = 0; p < n_kv; p++) isa->axpy_f16(w[p], vc + p * j->ps, out, hd);
            }
        } else {
            const float *kc = (const float *)j->k + kvh * j->hs;
            for (int64_t p = 0; p < n_kv; p++) w[p] = dot(hd, kc + p * j->ps, q) * ap->scale;
            const double sum = isa->exp_sum(w, isa->max(w, n_kv), w, n_kv);
            const float inv = (float)(1.0 / sum);
            memset(out, 0, (size_t)hd * sizeof(float));
            const float *vc = (const float *)j->v + kvh * j->hs;
            for (int64_t p = 0; p < n_kv; p++) isa->axpy_f32(w[p] * inv, vc + p * j->ps, out, hd);
        }
    }
}

/* ---- one decode query split over the context ----------------------------
 * With fewer work units (heads, or head pairs) than threads, the threads
 * beyond them would idle through a decode's attention.  Then the scores
 * are computed in position ranges (each score is one dot, whichever thread
 * computes it), the softmax of each head runs whole, and the weighted V
 * sum is split by columns (each output column sums its rows in the same
 * order): every bit as the unsplit path.  Head h's scores and q live in
 * half h % 2 of thread slot h / 2 of the attention scratch. */

static float *split_scores(const attn_job *j, int64_t h) {
    return (float *)((uint8_t *)j->cc->attn + (size_t)(h / 2) * j->cc->attn_stride) + (h % 2) * j->cc->lim.n_ctx;
}

static uint16_t *split_q16(const attn_job *j, int64_t h) {
    return (uint16_t *)((uint8_t *)j->cc->attn + (size_t)(h / 2) * j->cc->attn_stride + (size_t)j->cc->lim.n_ctx * 2 * sizeof(float)) +
           (h % 2) * j->ap->head_dim;
}

static void split_scores_run(void *ctx, int chunk, int n_chunks, int thread) {
    (void)thread;
    attn_job *j = ctx;
    const pl_attn_params *ap = j->ap;
    const int64_t n_kv = j->pos0 + 1, hd = ap->head_dim, per = n_chunks / ap->n_head;
    const int64_t h = chunk / per, kvh = h / (ap->n_head / ap->n_head_kv);
    long long lo, hi;
    pl_pool_split(n_kv, chunk % per, (int)per, &lo, &hi);
    float *w = split_scores(j, h);
    j->dot_rows((const uint16_t *)j->k + kvh * j->hs + lo * j->ps, j->ps, hi - lo, split_q16(j, h), hd, w + lo);
    for (int64_t p = lo; p < hi; p++) w[p] *= ap->scale;
}

static void split_softmax_run(void *ctx, int chunk, int n_chunks, int thread) {
    (void)thread, (void)n_chunks;
    attn_job *j = ctx;
    softmax_f16(j->cc->isa, split_scores(j, chunk), j->pos0 + 1);
}

static void split_values_run(void *ctx, int chunk, int n_chunks, int thread) {
    (void)thread;
    attn_job *j = ctx;
    const pl_attn_params *ap = j->ap;
    const int64_t hd = ap->head_dim, per = n_chunks / ap->n_head;
    const int64_t h = chunk / per, kvh = h / (ap->n_head / ap->n_head_kv), piece = chunk % per;
    /* whole 16-column vectors per piece */
    long long lo, hi;
    pl_pool_split((hd + 15) / 16, (int)piece, (int)per, &lo, &hi);
    lo *= 16, hi = hi * 16 < hd ? hi * 16 : hd;
    if (hi <= lo) return;
    float *out = j->out + h * hd + lo;
    memset(out, 0, (size_t)(hi - lo) * sizeof(float));
    j->cc->isa->axpy_rows_f16(split_scores(j, h), (const uint16_t *)j->v + kvh * j->hs + lo, j->ps, j->pos0 + 1, out, hi - lo);
}

/* Whether one decode query goes the split way: f16 cache with the row
 * kernels, fewer units than threads, a context worth splitting, and every
 * head's scores fitting the scratch (two per thread slot). */
static bool split_pays(const attn_job *j, int64_t n_tok) {
    const pl_cpu_compute *cc = j->cc;
    const int64_t units = j->ap->n_head / (j->pair ? 2 : 1);
    return n_tok == 1 && j->dot_rows && cc->isa->axpy_rows_f16 && units < cc->n_threads &&
           j->ap->n_head <= 2 * (int64_t)cc->n_threads && (j->pos0 + 1) * j->ap->head_dim >= 16384;
}

static void attention_split(attn_job *j) {
    const pl_attn_params *ap = j->ap;
    const int nt = j->cc->n_threads;
    for (int64_t h = 0; h < ap->n_head; h++) j->to_f16(j->q + h * ap->head_dim, split_q16(j, h), ap->head_dim);
    const int per_head = (int)((nt + ap->n_head - 1) / ap->n_head);
    pl_pool_run_chunks(j->cc->pool, split_scores_run, j, (int)ap->n_head * per_head);
    pl_pool_run_chunks(j->cc->pool, split_softmax_run, j, (int)ap->n_head);
    const int pieces = per_head < ap->head_dim / 16 ? per_head : (int)(ap->head_dim / 16 > 0 ? ap->head_dim / 16 : 1);
    pl_pool_run_chunks(j->cc->pool, split_values_run, j, (int)ap->n_head * pieces);
}

/* ---- not causal (a vision tower) -----------------------------------------
 * Every query of a head reads the same n_kv rows, so the queries of a head
 * are taken in blocks of j->qb: each K and V row is read (and, for flash
 * on an f32 cache, converted to f16) once per block instead of once per
 * query.  In full_block_f32 and full_block_flash, per query, the
 * operations and their order are those of the one-query path above -- only
 * the loops are interchanged -- so the bits are the same, whatever the
 * block size.  The tower's case, the default arithmetic on an f32 cache,
 * goes through full_block_fast instead: register-blocked kernels of the ISA
 * table, another summation order (within the tests' tolerance of the
 * reference, not its bits), still independent of blocks and threads. */

#define PL_ATTN_QBLOCK 16

/* The default arithmetic on an f32 cache for queries t0 .. t0+nq-1 of head
 * h: scores (nq rows of n_kv in w), softmax, weighted V sum. */
/* Query head h's columns of an f32 cache: its KV head's first K and V
 * elements (rows kv_dim apart). */
static void head_kv_f32(const attn_job *j, int64_t h, const float **kc, const float **vc) {
    const pl_attn_params *ap = j->ap;
    const int64_t kvh = h / (ap->n_head / ap->n_head_kv);
    *kc = (const float *)j->k + kvh * ap->head_dim;
    *vc = (const float *)j->v + kvh * ap->head_dim;
}

static void full_block_f32(const attn_job *j, int64_t h, int64_t t0, int64_t nq, float *w) {
    const pl_attn_params *ap = j->ap;
    const pl_cpu_isa *isa = j->cc->isa;
    const int64_t hd = ap->head_dim, kv_dim = ap->n_head_kv * hd, n_kv = ap->n_kv;
    const float *kc, *vc;
    head_kv_f32(j, h, &kc, &vc);
    const float *q[PL_ATTN_QBLOCK];
    float *out[PL_ATTN_QBLOCK], inv[PL_ATTN_QBLOCK];
    for (int64_t i = 0; i < nq; i++) {
        q[i] = j->q + ((t0 + i) * ap->n_head + h) * hd;
        out[i] = j->out + ((t0 + i) * ap->n_head + h) * hd;
    }
    for (int64_t p = 0; p < n_kv; p++)
        for (int64_t i = 0; i < nq; i++) w[i * n_kv + p] = j->dot(hd, kc + p * kv_dim, q[i]) * ap->scale;
    for (int64_t i = 0; i < nq; i++) {
        float *wi = w + i * n_kv;
        inv[i] = (float)(1.0 / isa->exp_sum(wi, isa->max(wi, n_kv), wi, n_kv));
        memset(out[i], 0, (size_t)hd * sizeof(float));
    }
    for (int64_t p = 0; p < n_kv; p++)
        for (int64_t i = 0; i < nq; i++) isa->axpy_f32(w[i * n_kv + p] * inv[i], vc + p * kv_dim, out[i], hd);
}

/* The block's q and outputs live on the stack of the thread, up to this
 * head size (a larger head takes full_block_f32 above). */
#define PL_ATTN_FAST_HD 256
/* rows a scores / values call: the scores of a chunk stay in L1 between
 * the exponentials and the weighted V sum */
#define PL_ATTN_CHUNK 64

/* The default arithmetic on an f32 cache, PL_ATTN_QB queries t0 .. t0+nq-1
 * of head h at a time through the ISA's block kernels (unused lanes get
 * q = 0): the scores (all n_kv rows of them in `all`, or NULL: recomputed
 * chunk by chunk in a second pass, the same bits) with the maximum of
 * each query, then e^(s - max), their sum in f64 and the V rows weighted
 * by them; the output is that weighted sum times 1 / sum.  Every query's arithmetic is its
 * own (the kernels' contract) in a fixed order (the rows in chunks of
 * PL_ATTN_CHUNK from 0): the bits depend neither on the block nor on the
 * scratch nor on the thread count. */
static void full_block_fast(const attn_job *j, int64_t h, int64_t t0, int64_t nq, float *all) {
    const pl_attn_params *ap = j->ap;
    const pl_cpu_isa *isa = j->cc->isa;
    const int64_t hd = ap->head_dim, kv_dim = ap->n_head_kv * hd, n_kv = ap->n_kv;
    const float *kc, *vc;
    head_kv_f32(j, h, &kc, &vc);
    float qt[PL_ATTN_FAST_HD * PL_ATTN_QB], ob[PL_ATTN_QB * PL_ATTN_FAST_HD], chunk[PL_ATTN_CHUNK * PL_ATTN_QB];
    float m[PL_ATTN_QB];
    double sum[PL_ATTN_QB];
    for (int64_t i = 0; i < PL_ATTN_QB; i++) {
        const float *q = i < nq ? j->q + ((t0 + i) * ap->n_head + h) * hd : NULL;
        for (int64_t d = 0; d < hd; d++) qt[d * PL_ATTN_QB + i] = q ? q[d] : 0.0f;
        m[i] = -INFINITY, sum[i] = 0.0;
    }
    for (int64_t p0 = 0; p0 < n_kv; p0 += PL_ATTN_CHUNK) {
        const int64_t rows = n_kv - p0 < PL_ATTN_CHUNK ? n_kv - p0 : PL_ATTN_CHUNK;
        isa->attn_scores_f32(qt, kc + p0 * kv_dim, kv_dim, rows, hd, ap->scale, all ? all + p0 * PL_ATTN_QB : chunk, m);
    }
    memset(ob, 0, sizeof(float) * (size_t)(PL_ATTN_QB * hd));
    for (int64_t p0 = 0; p0 < n_kv; p0 += PL_ATTN_CHUNK) {
        const int64_t rows = n_kv - p0 < PL_ATTN_CHUNK ? n_kv - p0 : PL_ATTN_CHUNK;
        float *sc = all ? all + p0 * PL_ATTN_QB : chunk;
        if (!all) isa->attn_scores_f32(qt, kc + p0 * kv_dim, kv_dim, rows, hd, ap->scale, sc, NULL);
        isa->attn_values_f32(sc, m, sum, vc + p0 * kv_dim, kv_dim, rows, hd, ob);
    }
    for (int64_t i = 0; i < nq; i++) {
        const float inv = (float)(1.0 / sum[i]);
        float *o = j->out + ((t0 + i) * ap->n_head + h) * hd;
        for (int64_t d = 0; d < hd; d++) o[d] = ob[i * hd + d] * inv;
    }
}

/* The flash arithmetic (attend_flash) for queries t0 .. t0+nq-1 of head h;
 * buf holds their q in f16, then a K row and a V row in f16. */
static void full_block_flash(const attn_job *j, int64_t h, int64_t t0, int64_t nq, uint16_t *buf) {
    const pl_attn_params *ap = j->ap;
    const pl_cpu_isa *isa = j->cc->isa;
    const int64_t hd = ap->head_dim, kv_dim = ap->n_head_kv * hd, n_kv = ap->n_kv, kvh = h / (ap->n_head / ap->n_head_kv);
    const bool f32c = ap->k_type == PL_TYPE_F32;
    uint16_t *krow = buf + nq * hd, *vrow = krow + hd;
    float *o[PL_ATTN_QBLOCK], M[PL_ATTN_QBLOCK], S[PL_ATTN_QBLOCK];
    for (int64_t i = 0; i < nq; i++) {
        j->to_f16(j->q + ((t0 + i) * ap->n_head + h) * hd, buf + i * hd, hd);
        o[i] = j->out + ((t0 + i) * ap->n_head + h) * hd;
        memset(o[i], 0, (size_t)hd * sizeof(float));
        M[i] = -INFINITY, S[i] = 0.0f;
    }
    for (int64_t p = 0; p < n_kv; p++) {
        const size_t at = (size_t)(p * kv_dim + kvh * hd);
        const uint16_t *kr = (const uint16_t *)j->k + at, *vr = (const uint16_t *)j->v + at;
        if (f32c) {
            j->to_f16((const float *)j->k + at, krow, hd);
            j->to_f16((const float *)j->v + at, vrow, hd);
            kr = krow, vr = vrow;
        }
        for (int64_t i = 0; i < nq; i++) {
            float ms, vs;
            if (pl_flash_step(j->dot16(hd, kr, buf + i * hd) * ap->scale, &M[i], &ms, &vs)) scale_round_f16(isa, o[i], ms, hd);
            mad_round_f16(isa, vs, vr, o[i], hd);
            S[i] = S[i] * ms + vs;
        }
    }
    for (int64_t i = 0; i < nq; i++) {
        const float inv = S[i] == 0.0f ? 0.0f : 1.0f / S[i];
        for (int64_t d = 0; d < hd; d++) o[i][d] *= inv;
    }
}

static void full_run(void *ctx, int chunk, int n_chunks, int thread) {
    attn_job *j = ctx;
    const pl_attn_params *ap = j->ap;
    const int64_t blocks = (j->n_tok + j->qb - 1) / j->qb;
    uint8_t *mine = j->scores_in_act ? (uint8_t *)j->cc->act + (size_t)thread * j->act_slice
                                     : (uint8_t *)j->cc->attn + (size_t)thread * j->cc->attn_stride;
    long long lo, hi;
    pl_pool_split(ap->n_head * blocks, chunk, n_chunks, &lo, &hi);
    for (int64_t k = lo; k < hi; k++) {
        /* head-major: consecutive blocks read the same head's rows */
        const int64_t h = k / blocks, t0 = k % blocks * j->qb, nq = j->n_tok - t0 < j->qb ? j->n_tok - t0 : j->qb;
        if (ap->flash) full_block_flash(j, h, t0, nq, (uint16_t *)mine);
        else if (j->fast) full_block_fast(j, h, t0, nq, j->scores_in_act ? (float *)mine : NULL);
        else full_block_f32(j, h, t0, nq, (float *)mine);
    }
}

/* The block size and its scratch: the flash path keeps nq + 2 rows of f16
 * in the attention scratch; the default path's nq rows of scores go to the
 * matmul scratch (idle during attention) when it holds at least two per
 * thread, else two to the attention scratch (2 n_ctx floats a thread).
 * full_block_fast takes PL_ATTN_QB queries a block, their scores in the
 * matmul scratch when they fit, else recomputed (no other scratch). */
static void full_plan(attn_job *j) {
    const pl_cpu_compute *cc = j->cc;
    const int64_t hd = j->ap->head_dim, n_kv = j->ap->n_kv;
    if (j->ap->flash) {
        const int64_t rows = (int64_t)(cc->attn_stride / (2 * (size_t)hd)) - 2;
        j->qb = rows < PL_ATTN_QBLOCK ? rows : PL_ATTN_QBLOCK;
        return;
    }
    j->act_slice = cc->act_bytes / (size_t)cc->n_threads / 64 * 64;
    const int64_t rows = (int64_t)(j->act_slice / ((size_t)n_kv * sizeof(float)));
    j->fast = hd <= PL_ATTN_FAST_HD && cc->isa->attn_scores_f32 && cc->isa->attn_values_f32;
    if (j->fast) {
        /* the scores of a whole block in the matmul scratch, else recomputed */
        j->qb = PL_ATTN_QB;
        j->scores_in_act = rows >= PL_ATTN_QB;
        return;
    }
    j->scores_in_act = rows >= 2;
    j->qb = !j->scores_in_act ? 2 : rows < PL_ATTN_QBLOCK ? rows : PL_ATTN_QBLOCK;
}

/* whether the ISA's f16 row kernels are bit for bit the f16 vec_dot this
 * compute runs (they reproduce one tier's; another tier's may differ) */
static bool f16_rows_match(const pl_cpu_compute *cc) {
    if (!cc->isa->dot_rows_f16) return false;
    const pl_quant_kernel_set *mine = pl_quant_kernels_tier(PL_TYPE_F16, cc->qtier);
    const pl_quant_kernel_set *theirs = pl_quant_kernels_tier(PL_TYPE_F16, (pl_quant_tier)cc->isa->f16_dot_tier);
    return mine && theirs && mine->vec_dot == theirs->vec_dot;
}

void pl_cpu_attention(pl_compute *c, const pl_attn_params *ap, const float *q, const void *k_cache,
                      const void *v_cache, int64_t n_tok, int64_t pos0, float *out) {
    pl_cpu_compute *cc = pl_cpu(c);
    const int64_t rows = ap->n_kv > 0 ? ap->n_kv : pos0 + n_tok;
    if (ap->n_kv < 0 || rows > cc->lim.n_ctx || ap->head_dim > cc->lim.head_dim || ap->n_head_kv < 1 ||
        ap->n_head % ap->n_head_kv || ap->kv_cap < 0 || (ap->kv_cap > 0 && (ap->n_kv > 0 || rows > ap->kv_cap))) {
        pl_fail(POCKETLLM_ERR_INTERNAL, "attention: %lld positions against %lld reserved (a head-major cache of %lld)", (long long)rows,
                (long long)cc->lim.n_ctx, (long long)ap->kv_cap);
        pl_compute_fail(c, POCKETLLM_ERR_INTERNAL);
        return;
    }
    if (ap->k_type != ap->v_type || (ap->k_type != PL_TYPE_F16 && ap->k_type != PL_TYPE_F32)) {
        pl_cpu_attention_packed(c, ap, q, k_cache, v_cache, n_tok, pos0, out);
        return;
    }
    const size_t el = ap->k_type == PL_TYPE_F16 ? sizeof(uint16_t) : sizeof(float);
    attn_job j = {cc, ap, q, k_cache, v_cache, n_tok, pos0, out,
                  pl_quant_kernels_tier(ap->k_type, cc->qtier)->vec_dot,
                  pl_quant_kernels_tier(PL_TYPE_F16, cc->qtier)->vec_dot,
                  pl_quant_kernels_tier(PL_TYPE_F16, cc->qtier)->act_from_float,
                  /* the ISA's row kernel where it reproduces this tier's f16 dot */
                  ap->k_type == PL_TYPE_F16 && f16_rows_match(cc) ? cc->isa->dot_rows_f16 : NULL, false, false, 0, false, false, 0,
                  (int64_t)(pl_attn_head_offset(ap, ap->k_type, 1) / el), (int64_t)(pl_attn_pos_stride(ap, ap->k_type) / el)};
    if (ap->n_kv > 0 && (ap->flash || ap->k_type == PL_TYPE_F32)) {
        full_plan(&j);
        pl_cpu_parallel(cc, full_run, &j, n_tok * ap->n_head * rows * ap->head_dim);
        return;
    }
    /* the two-head kernels equal the one-head ones, so pairing is used
     * exactly where those would be */
    j.pair = !ap->flash && j.dot_rows && cc->isa->dot_rows2_f16 && cc->isa->axpy_rows2_f16 && cc->isa->axpy_rows_f16 &&
             (ap->n_head / ap->n_head_kv) % 2 == 0;
    j.flash_pair = ap->flash && j.dot_rows && cc->isa->dot_rows2_f16 && cc->isa->flash_rows2_f16 &&
                   (ap->n_head / ap->n_head_kv) % 2 == 0;
    if (!ap->flash && ap->n_kv == 0 && split_pays(&j, n_tok)) {
        attention_split(&j);
        return;
    }
    pl_cpu_parallel(cc, attn_run, &j, n_tok * ap->n_head * rows * ap->head_dim);
}
