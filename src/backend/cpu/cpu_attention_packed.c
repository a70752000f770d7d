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
 * The default path's work is split over (KV head, token, query head) units
 * as in cpu_attention.c, flash's over blocks of queries sharing a KV head
 * (packed_flash_block), each thread in its own slice of the attention
 * scratch.
 */
#include <math.h>
#include <string.h>

#include "backend/cpu/cpu_compute.h"
#include "base/error.h"
#include "base/half.h"
#include "quant/kernels.h"
#include "quant/kv_types.h"
#include "quant/types.h"

typedef struct {
    pl_cpu_compute *cc;
    const pl_attn_params *ap;
    const float *q;
    const char *k, *v;
    int64_t n_tok, pos0;
    float *out;
    uint32_t kt, vt;      /* the types the arithmetic sees (flash: f32 read as f16) */
    size_t k_row, v_row;  /* bytes from one position of a head to the next */
    size_t k_head, v_head; /* bytes from KV head 0 to KV head 1 (pl_attn_params.kv_cap) */
    const pl_quant_kernel_set *kk, *vk, *qk; /* K's, V's kernels; those of K's vec_dot type */
    const pl_quant_kernel_set *f16k;         /* f16's (an f32 row read as f16) */
} packed_job;

static inline int64_t kv_len(const packed_job *j, int64_t t) { return j->ap->n_kv > 0 ? j->ap->n_kv : j->pos0 + t + 1; }

/* w[p] = scale * q . K row p of KV head kvh, for the rows token t sees
 * (the default path: K is read in its own type). */
static void packed_scores(const packed_job *j, int64_t kvh, int64_t n_kv, const void *qc, float *w) {
    const pl_attn_params *ap = j->ap;
    const int64_t hd = ap->head_dim;
    const char *k0 = j->k + (size_t)kvh * j->k_head;
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

/* ---- flash, over blocks of queries ---------------------------------------
 * The queries of one KV head -- the heads of its group, and in a prefill
 * several tokens -- read the same rows: each V row is decoded (an f32 row
 * converted) once for the block instead of once per query.  Each query
 * folds the rows it sees in position order into a running maximum and sum
 * (an f16 V's sum rounded to f16 after every row, any other's in f32) by
 * operations of its own, so its bits do not depend on the block it is in
 * (a decode with one query per block is the same arithmetic).  The
 * thread's scratch holds a decoded row (4 bytes a value), a K row in f16
 * (2) and the block's q in K's vec_dot type (at most 4 each): at least one
 * query's worth, as reserve() sizes it. */
#define PL_PACKED_QB 16
#define PL_PACKED_CHUNK 32

/* Queries a block holds in the thread's scratch: reserve() leaves room
 * for at least one, at most PL_PACKED_QB are taken. */
static int64_t block_queries(const packed_job *j) {
    const int64_t hd = j->ap->head_dim;
    const int64_t room = ((int64_t)j->cc->attn_stride - 6 * hd - 32) / (4 * hd);
    return room < PL_PACKED_QB ? room : PL_PACKED_QB;
}

/* A block's queries: q in K's vec_dot type (qc, 4 bytes a value apart),
 * outputs zeroed, the running maxima and sums reset, the rows each sees;
 * returns the most rows any sees. */
static int64_t block_setup(const packed_job *j, int64_t t0, int64_t nt, int64_t h0, int64_t nh, uint8_t *qc, float **o,
                           float *M, float *S, int64_t *len) {
    const pl_attn_params *ap = j->ap;
    const int64_t hd = ap->head_dim;
    int64_t rows = 0;
    for (int64_t i = 0; i < nt * nh; i++) {
        const int64_t t = t0 + i / nh, h = h0 + i % nh;
        j->qk->act_from_float(j->q + (t * ap->n_head + h) * hd, qc + (size_t)i * hd * 4, hd);
        o[i] = j->out + (t * ap->n_head + h) * hd;
        memset(o[i], 0, (size_t)hd * sizeof(float));
        M[i] = -INFINITY, S[i] = 0.0f;
        len[i] = kv_len(j, t);
        rows = len[i] > rows ? len[i] : rows;
    }
    return rows;
}

/* Each query's V sum divided by its sum of weights. */
static void block_finish(int64_t nq, int64_t hd, float **o, const float *S) {
    for (int64_t i = 0; i < nq; i++) {
        const float inv = S[i] == 0.0f ? 0.0f : 1.0f / S[i];
        for (int64_t d = 0; d < hd; d++) o[i][d] *= inv;
    }
}

/* Tokens t0 .. t0+nt-1 x heads h0 .. h0+nh-1 of KV head kvh (nt * nh <=
 * PL_PACKED_QB queries), a row at a time: the path of a K or V read
 * through f16 from an f32 cache, and of a table without the fold kernels. */
static void packed_flash_rows(const packed_job *j, int64_t kvh, int64_t t0, int64_t nt, int64_t h0, int64_t nh,
                              uint8_t *mine) {
    const pl_attn_params *ap = j->ap;
    const pl_cpu_isa *isa = j->cc->isa;
    const int64_t hd = ap->head_dim, nq = nt * nh;
    float *vf = (float *)mine;
    uint16_t *k16 = (uint16_t *)(mine + (size_t)hd * 4), *v16 = (uint16_t *)vf;
    uint8_t *qc = mine + (size_t)hd * 6 + 32;
    const size_t qstride = (size_t)hd * 4;
    const bool f16 = j->vt == PL_TYPE_F16, k_as_16 = j->kt != ap->k_type, v_as_16 = f16 && ap->v_type == PL_TYPE_F32;
    float *o[PL_PACKED_QB], M[PL_PACKED_QB], S[PL_PACKED_QB];
    int64_t len[PL_PACKED_QB]; /* rows each query sees */
    const int64_t rows = block_setup(j, t0, nt, h0, nh, qc, o, M, S, len);
    const char *k0 = j->k + (size_t)kvh * j->k_head, *v0 = j->v + (size_t)kvh * j->v_head;
    /* the scores of PL_PACKED_CHUNK rows at a time, by the rows kernel
     * where the tier has one (the same bits as vec_dot row by row) */
    float sc[PL_PACKED_QB][PL_PACKED_CHUNK];
    for (int64_t p = 0; p < rows; p++) {
        const int64_t c = p % PL_PACKED_CHUNK;
        if (c == 0 && !k_as_16) {
            const int64_t n = rows - p < PL_PACKED_CHUNK ? rows - p : PL_PACKED_CHUNK;
            for (int64_t i = 0; i < nq; i++) {
                const int64_t ni = len[i] - p < n ? len[i] - p : n;
                const uint8_t *qi = qc + (size_t)i * qstride;
                int64_t r = 0;
                if (j->kk->vec_dot_rows)
                    for (; r + j->kk->dot_rows <= ni; r += j->kk->dot_rows)
                        j->kk->vec_dot_rows(hd, k0 + (size_t)(p + r) * j->k_row, j->k_row, qi, 0, &sc[i][r], 0);
                for (; r < ni; r++) sc[i][r] = j->kk->vec_dot(hd, k0 + (size_t)(p + r) * j->k_row, qi);
            }
        }
        const char *kr = k0 + (size_t)p * j->k_row, *vr = v0 + (size_t)p * j->v_row;
        if (k_as_16) {
            j->f16k->act_from_float((const float *)kr, k16, hd);
            kr = (const char *)k16;
        }
        if (v_as_16) {
            j->f16k->act_from_float((const float *)vr, v16, hd);
            vr = (const char *)v16;
        } else if (!f16) {
            j->vk->to_float(vr, vf, hd);
        }
        for (int64_t i = 0; i < nq; i++) {
            if (p >= len[i]) continue; /* causal: a later row than the query's own */
            float ms, vs;
            const float si = (k_as_16 ? j->kk->vec_dot(hd, kr, qc + (size_t)i * qstride) : sc[i][c]) * ap->scale;
            float *oi = o[i];
            if (pl_flash_step(si, &M[i], &ms, &vs)) {
                if (!f16)
                    for (int64_t d = 0; d < hd; d++) oi[d] *= ms;
                else if (isa->scale_round_f16) isa->scale_round_f16(oi, ms, oi, hd);
                else
                    for (int64_t d = 0; d < hd; d++) oi[d] = pl_f16_to_f32(pl_f32_to_f16(oi[d] * ms));
            }
            if (!f16) {
                isa->axpy_f32(vs, vf, oi, hd);
            } else if (isa->mad_round_f16) {
                isa->mad_round_f16(vs, (const uint16_t *)vr, oi, hd);
            } else {
                const uint16_t *v = (const uint16_t *)vr;
                for (int64_t d = 0; d < hd; d++) oi[d] = pl_f16_to_f32(pl_f32_to_f16(fmaf(pl_f16_to_f32(v[d]), vs, oi[d])));
            }
            S[i] = S[i] * ms + vs;
        }
    }
    block_finish(nq, hd, o, S);
}

/* Asks for rows p .. p+n-1 of K and V (n <= 0: none) to be brought into
 * the cache while the chunk before them is worked on: a chunk's scores,
 * softmax and fold interrupt the reading of each stream, and a decode's
 * scores kernel otherwise waits on its K rows (the loads of each row were
 * the hottest instructions of a q8_0 decode at depth 4096). */
static void prefetch_next(const char *k0, size_t k_row, const char *v0, size_t v_row, int64_t p, int64_t n) {
    if (n <= 0) return;
    pl_prefetch_bytes(k0 + (size_t)p * k_row, n * (int64_t)k_row);
    pl_prefetch_bytes(v0 + (size_t)p * v_row, n * (int64_t)v_row);
}

/* Decoded V rows a chunk holds (floats, on the thread's stack). */
#define PL_PACKED_VBUF 4096

/* packed_flash_rows's arithmetic, a chunk of rows at a time: the chunk's
 * scores, its V rows decoded once (f16 V is read in place), then per query
 * the running maximum stepped over the chunk (the V weights and rescales)
 * and the whole chunk folded into the query's sum by one ISA call with the
 * sum in registers -- the same operations in the same order per query, so
 * the same bits. */
static void packed_flash_block(const packed_job *j, int64_t kvh, int64_t t0, int64_t nt, int64_t h0, int64_t nh,
                               uint8_t *mine) {
    const pl_attn_params *ap = j->ap;
    const pl_cpu_isa *isa = j->cc->isa;
    const int64_t hd = ap->head_dim, nq = nt * nh;
    const bool f16 = j->vt == PL_TYPE_F16, k_as_16 = j->kt != ap->k_type, v_as_16 = f16 && ap->v_type == PL_TYPE_F32;
    if (k_as_16 || v_as_16 || hd > PL_PACKED_VBUF || (f16 ? !isa->flash_rows_f16 : !isa->flash_rows_f32)) {
        packed_flash_rows(j, kvh, t0, nt, h0, nh, mine);
        return;
    }
    uint8_t *qc = mine + (size_t)hd * 6 + 32;
    const size_t qstride = (size_t)hd * 4;
    float *o[PL_PACKED_QB], M[PL_PACKED_QB], S[PL_PACKED_QB];
    int64_t len[PL_PACKED_QB]; /* rows each query sees */
    const int64_t rows = block_setup(j, t0, nt, h0, nh, qc, o, M, S, len);
    const char *k0 = j->k + (size_t)kvh * j->k_head, *v0 = j->v + (size_t)kvh * j->v_head;
    const int64_t chunk = PL_PACKED_VBUF / hd < PL_PACKED_CHUNK ? PL_PACKED_VBUF / hd : PL_PACKED_CHUNK;
    float vbuf[PL_PACKED_VBUF], sc[PL_PACKED_QB][PL_PACKED_CHUNK], ms[PL_PACKED_CHUNK];
    /* q8_0 V is decoded inside the fold where the table can */
    const bool q8 = ap->v_type == PL_TYPE_Q8_0 && isa->flash_rows_q8_0;
    for (int64_t p0 = 0; p0 < rows; p0 += chunk) {
        const int64_t n = rows - p0 < chunk ? rows - p0 : chunk;
        prefetch_next(k0, j->k_row, v0, j->v_row, p0 + n, rows - p0 - n < chunk ? rows - p0 - n : chunk);
        if (!f16 && !q8)
            for (int64_t r = 0; r < n; r++) j->vk->to_float(v0 + (size_t)(p0 + r) * j->v_row, vbuf + r * hd, hd);
        /* a prefill's queries share each K row: whole tiles of rows x
         * queries first (every row of the chunk exists for the query that
         * sees most; a score past a query's own row is computed and left) */
        int64_t tiled = 0, tq = 0;
        const pl_quant_kernel_set *kk = j->kk;
        if (kk->vec_dot_tile && nq >= kk->tile_cols && n >= kk->tile_rows) {
            tiled = n / kk->tile_rows * kk->tile_rows, tq = nq / kk->tile_cols * kk->tile_cols;
            for (int64_t i0 = 0; i0 < tq; i0 += kk->tile_cols)
                for (int64_t r0 = 0; r0 < tiled; r0 += kk->tile_rows)
                    kk->vec_dot_tile(hd, k0 + (size_t)(p0 + r0) * j->k_row, j->k_row, qc + (size_t)i0 * qstride, qstride,
                                     &sc[i0][r0], PL_PACKED_CHUNK);
        }
        for (int64_t i = 0; i < nq; i++) {
            const int64_t ni = len[i] - p0 < n ? len[i] - p0 : n;
            if (ni <= 0) continue; /* causal: the query's own row came earlier */
            const uint8_t *qi = qc + (size_t)i * qstride;
            float *w = sc[i];
            int64_t r = i < tq ? (tiled < ni ? tiled : ni) : 0;
            if (kk->vec_dot_rows)
                for (; r + kk->dot_rows <= ni; r += kk->dot_rows)
                    kk->vec_dot_rows(hd, k0 + (size_t)(p0 + r) * j->k_row, j->k_row, qi, 0, &w[r], 0);
            for (; r < ni; r++) w[r] = kk->vec_dot(hd, k0 + (size_t)(p0 + r) * j->k_row, qi);
            for (r = 0; r < ni; r++) w[r] *= ap->scale;
            pl_cpu_flash_weights(isa, w, ms, ni, &M[i], &S[i]);
            if (f16)
                isa->flash_rows_f16(w, ms, (const uint16_t *)(v0 + (size_t)p0 * j->v_row), (int64_t)(j->v_row / 2), ni, o[i], hd);
            else if (q8)
                isa->flash_rows_q8_0(w, ms, v0 + (size_t)p0 * j->v_row, (int64_t)j->v_row, ni, o[i], hd);
            else
                isa->flash_rows_f32(w, ms, vbuf, hd, ni, o[i], hd);
        }
    }
    block_finish(nq, hd, o, S);
}

/* The blocks: per KV head, its group's heads in chunks of nh, tokens in
 * blocks of nt (nt * nh <= the queries the scratch holds). */
typedef struct {
    const packed_job *j;
    int64_t nh, nt;
} block_job;

static void block_run(void *ctx, int chunk, int n_chunks, int thread) {
    const block_job *b = ctx;
    const packed_job *j = b->j;
    const pl_attn_params *ap = j->ap;
    const int64_t group = ap->n_head / ap->n_head_kv, hchunks = (group + b->nh - 1) / b->nh;
    const int64_t tblocks = (j->n_tok + b->nt - 1) / b->nt, per_kv = tblocks * hchunks;
    uint8_t *mine = (uint8_t *)j->cc->attn + (size_t)thread * j->cc->attn_stride;
    long long lo, hi;
    pl_pool_split(ap->n_head_kv * per_kv, chunk, n_chunks, &lo, &hi);
    for (int64_t k = lo; k < hi; k++) {
        /* KV head, then token block, then head chunk: consecutive units
         * read the same rows */
        const int64_t kvh = k / per_kv, tb = k % per_kv / hchunks, hc = k % hchunks;
        const int64_t t0 = tb * b->nt, nt = j->n_tok - t0 < b->nt ? j->n_tok - t0 : b->nt;
        const int64_t h0 = kvh * group + hc * b->nh, nh = group - hc * b->nh < b->nh ? group - hc * b->nh : b->nh;
        packed_flash_block(j, kvh, t0, nt, h0, nh, mine);
    }
}

/* The default path, one (token, head) at a time: the scores (n_ctx
 * floats of the thread's scratch), then q in K's vec_dot type. */
static void packed_run(void *ctx, int chunk, int n_chunks, int thread) {
    packed_job *j = ctx;
    const pl_attn_params *ap = j->ap;
    const int64_t hd = ap->head_dim, group = ap->n_head / ap->n_head_kv;
    uint8_t *mine = (uint8_t *)j->cc->attn + (size_t)thread * j->cc->attn_stride;
    float *w = (float *)mine;
    uint8_t *qc = mine + (size_t)j->cc->lim.n_ctx * 2 * sizeof(float); /* q: at most 4 bytes a value */
    long long lo, hi;
    pl_pool_split(j->n_tok * ap->n_head, chunk, n_chunks, &lo, &hi);
    for (int64_t k = lo; k < hi; k++) {
        /* KV-head-major units: consecutive units read the same rows */
        const int64_t per_kv = j->n_tok * group, kvh = k / per_kv, t = k % per_kv / group, h = kvh * group + k % group;
        const int64_t n_kv = kv_len(j, t);
        j->qk->act_from_float(j->q + (t * ap->n_head + h) * hd, qc, hd);
        packed_scores(j, kvh, n_kv, qc, w);
        packed_values(j, kvh, n_kv, w, j->out + (t * ap->n_head + h) * hd);
    }
}

void pl_cpu_attention_packed(pl_compute *c, const pl_attn_params *ap, const float *q, const void *k_cache,
                             const void *v_cache, int64_t n_tok, int64_t pos0, float *out) {
    pl_cpu_compute *cc = pl_cpu(c);
    const uint32_t kt = ap->flash && ap->k_type == PL_TYPE_F32 ? PL_TYPE_F16 : ap->k_type;
    const uint32_t vt = ap->flash && ap->v_type == PL_TYPE_F32 ? PL_TYPE_F16 : ap->v_type;
    const pl_type_traits *tk = pl_type_get(ap->k_type), *tv = pl_type_get(ap->v_type), *tkt = pl_type_get(kt);
    const int64_t hd = ap->head_dim;
    packed_job j = {.cc = cc, .ap = ap, .q = q, .k = k_cache, .v = v_cache, .n_tok = n_tok, .pos0 = pos0, .out = out,
                    .kt = kt, .vt = vt};
    if (tk && tv && tkt && hd % tk->block == 0 && hd % tv->block == 0) {
        j.k_row = pl_attn_pos_stride(ap, ap->k_type), j.v_row = pl_attn_pos_stride(ap, ap->v_type);
        j.k_head = pl_attn_head_offset(ap, ap->k_type, 1), j.v_head = pl_attn_head_offset(ap, ap->v_type, 1);
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
    const int64_t work = n_tok * ap->n_head * (ap->n_kv > 0 ? ap->n_kv : pos0 + n_tok) * hd;
    if (ap->flash) {
        const int64_t qb = block_queries(&j), group = ap->n_head / ap->n_head_kv;
        block_job b = {&j, group < qb ? group : qb, 0};
        b.nt = qb / b.nh;
        pl_cpu_parallel(cc, block_run, &b, work);
        return;
    }
    pl_cpu_parallel(cc, packed_run, &j, work);
}
