/*
 * cpu_moe.c -- mixture of experts on the CPU: the router, the routed
 * experts' FFN, and qwen2moe's shared-expert gate.
 *
 * moe_ffn reads only the rows of the experts the router chose.  The
 * (token, slot) pairs of a pass are grouped by expert, so that each chosen
 * expert's gate, up and down matrices are streamed once per pass whatever
 * the number of tokens that chose it (a decode reads the 8 chosen experts'
 * rows; a 512-token prefill reads each expert once, not once per token):
 *
 *   1. group: count the pairs per expert; pair p = t * n_used + j gets
 *      grouped row k, the pairs of expert e taking rows off[e] .. off[e+1]
 *      in token order;
 *   2. gate and up: x converted once per token to the experts' vec_dot
 *      type, gathered into grouped rows; then one ranged job over the rows
 *      of every chosen expert laid end to end, each block of 8 rows taking
 *      all of that expert's tokens through the tile kernels, silu(gate) *
 *      up written to h[k] at once (the two products never stored whole);
 *   3. h converted to down's vec_dot type, in place of the gathered x;
 *   4. down and the weighted sum: one ranged job over blocks of down's
 *      output rows; a block runs every chosen expert's rows for its tokens
 *      into a per-thread buffer and then adds, per token, the slots in
 *      slot order -- so the products of a token are never stored whole
 *      either.
 *
 * Threads take contiguous ranges of rows and steal from the fullest range
 * when done (pl_pool_run_ranges): a popular expert's rows cost more, and a
 * thread that lands on them simply keeps fewer of them.  Every entry is
 * the kernels' vec_dot bit for bit, silu_mul is the backend's, and the sum
 * is pl_ref_moe_sum's order, so the result does not depend on the grouping
 * or the thread count; it is the reference composition within
 * silu_mul's bound (unit/test_moe_ops).
 */
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_compute.h"
#include "base/error.h"
#include "quant/kernels.h"
#include "quant/types.h"

/* Output rows of down per block of stage 4 (the per-thread buffer holds
 * this many columns of every pair). */
#define MOE_DOWN_BLOCK 32

pocketllm_status pl_cpu_moe_reserve(pl_cpu_compute *cc, const pl_compute_limits *lim) {
    free(cc->moe_order);
    free(cc->moe_act);
    free(cc->moe_h);
    free(cc->moe_tmp);
    cc->moe_order = NULL, cc->moe_act = NULL, cc->moe_h = NULL, cc->moe_tmp = NULL;
    cc->moe_pairs = 0;
    if (lim->moe_n_used <= 0) return POCKETLLM_OK;
    const uint64_t pairs = (uint64_t)lim->n_batch * (uint64_t)lim->moe_n_used;
    /* a grouped row in the widest vec_dot type (f32) with a block's slack,
     * for rows of n_embd (gate, up) and of n_ff (down): max_in covers both */
    const uint64_t act = pairs * ((uint64_t)lim->max_in * 4 + 512), h = pairs * (uint64_t)lim->moe_n_ff;
    const uint64_t tmp = pairs * MOE_DOWN_BLOCK > 2 * (uint64_t)lim->n_batch * PL_MM_ROW_BLOCK
                             ? pairs * MOE_DOWN_BLOCK
                             : 2 * (uint64_t)lim->n_batch * PL_MM_ROW_BLOCK;
    if (pairs > INT32_MAX || act > SIZE_MAX / 4 || h > SIZE_MAX / 8 || tmp > SIZE_MAX / 8 / (uint64_t)cc->n_threads)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "expert scratch sizes overflow (batch %lld, %lld experts a token)",
                       (long long)lim->n_batch, (long long)lim->moe_n_used);
    /* left to fault in as used, like the matmul scratch: a decode touches
     * a few kilobytes of it */
    cc->moe_order = malloc((size_t)pairs * 2 * sizeof *cc->moe_order);
    cc->moe_h = malloc((size_t)(h ? h : 1) * sizeof *cc->moe_h);
    cc->moe_tmp = malloc((size_t)tmp * (size_t)cc->n_threads * sizeof *cc->moe_tmp);
    if (posix_memalign(&cc->moe_act, 64, (size_t)act) != 0) cc->moe_act = NULL;
    if (!cc->moe_order || !cc->moe_h || !cc->moe_tmp || !cc->moe_act)
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for the expert scratch of %llu pairs",
                       (unsigned long long)pairs);
    cc->moe_pairs = (int64_t)pairs;
    cc->moe_act_bytes = (size_t)act;
    cc->moe_h_floats = (size_t)h;
    cc->moe_tmp_stride = (size_t)tmp;
    cc->base.reserved_bytes += act + h * 4 + pairs * 8 + tmp * 4 * (uint64_t)cc->n_threads;
    return POCKETLLM_OK;
}

void pl_cpu_moe_free(pl_cpu_compute *cc) {
    free(cc->moe_order);
    free(cc->moe_act);
    free(cc->moe_h);
    free(cc->moe_tmp);
}

/* ---- moe_route / sigmoid_gate: the reference's arithmetic, rows over the
 * threads (a router's row is 128 exps and a sort: nothing to vectorise
 * that would keep llama.cpp's ties) ---- */

typedef struct {
    const pl_moe_route_params *p;
    const float *logits;
    int64_t n_tok;
    int32_t *ids;
    float *w;
} route_job;

static void route_rows(void *ctx, int chunk, int n_chunks, int thread) {
    (void)thread;
    route_job *j = ctx;
    long long lo, hi;
    pl_pool_split(j->n_tok, chunk, n_chunks, &lo, &hi);
    const int64_t ne = j->p->n_expert, k = j->p->n_used;
    pl_ref_moe_route(j->p, j->logits + lo * ne, hi - lo, j->ids + lo * k, j->w + lo * k);
}

void pl_cpu_moe_route(pl_compute *c, const pl_moe_route_params *p, const float *logits, int64_t n_tok, int32_t *ids,
                          float *w) {
    if (p->n_expert < 1 || p->n_expert > PL_MAX_EXPERTS || p->n_used < 1 || p->n_used > p->n_expert) {
        pl_compute_fail(c, pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "moe_route: %lld of %lld experts",
                                   (long long)p->n_used, (long long)p->n_expert));
        return;
    }
    route_job j = {p, logits, n_tok, ids, w};
    pl_cpu_parallel(pl_cpu(c), route_rows, &j, n_tok * p->n_expert * 16);
}

typedef struct {
    const float *x, *g;
    float *y;
    int64_t rows, n;
} gate_job;

static void gate_rows(void *ctx, int chunk, int n_chunks, int thread) {
    (void)thread;
    gate_job *j = ctx;
    long long lo, hi;
    pl_pool_split(j->rows, chunk, n_chunks, &lo, &hi);
    pl_ref_sigmoid_gate(j->x + lo * j->n, j->g + lo, j->y + lo * j->n, hi - lo, j->n);
}

void pl_cpu_sigmoid_gate(pl_compute *c, const float *x, const float *g, float *y, int64_t rows, int64_t n) {
    gate_job j = {x, g, y, rows, n};
    pl_cpu_parallel(pl_cpu(c), gate_rows, &j, rows * n);
}

/* ---- moe_ffn ----------------------------------------------------------- */

typedef struct {
    pl_cpu_compute *cc;
    const pl_moe_ffn_weights *e;
    const float *x, *w;
    const int32_t *ids;
    int64_t n_used, n_tok, pairs, n_ff, n_out;
    float *y;
    /* the grouping: pairs of expert e are grouped rows off[e] .. off[e+1] */
    int32_t off[PL_MAX_EXPERTS + 1];
    int32_t active[PL_MAX_EXPERTS]; /* the experts with pairs, ascending */
    int n_active;
    const int32_t *order; /* grouped row k -> pair */
    int32_t *row_of;      /* pair -> grouped row */
    /* stage 2 */
    const pl_quant_kernel_set *kg, *ku, *kd;
    pl_act_from_float_fn act_fn;
    size_t act_row;           /* bytes of a converted row (x, then h) */
    const void *act_src;      /* the rows being converted: per token (x) or per grouped row (h) */
    uint8_t *tok_act;         /* x converted per token */
    bool gate_up_shared;      /* gate and up read the same converted rows */
    int pass;                 /* 0: gate and up together; 1: gate only; 2: up only */
} moe_job;

/* x rows of tokens lo .. hi-1 converted into tok_act, or h rows of grouped
 * rows lo .. hi-1 into moe_act */
static void convert_rows(void *ctx, int chunk, int n_chunks, int thread) {
    (void)thread;
    moe_job *j = ctx;
    const bool per_token = j->act_src == j->x;
    const int64_t n = per_token ? j->n_tok : j->pairs, width = per_token ? j->e->gate->n_in : j->n_ff;
    uint8_t *dst = per_token ? j->tok_act : j->cc->moe_act;
    long long lo, hi;
    pl_pool_split(n, chunk, n_chunks, &lo, &hi);
    for (int64_t r = lo; r < hi; r++) j->act_fn((const float *)j->act_src + r * width, dst + (size_t)r * j->act_row, width);
}

static void gather_rows(void *ctx, int chunk, int n_chunks, int thread) {
    (void)thread;
    moe_job *j = ctx;
    long long lo, hi;
    pl_pool_split(j->pairs, chunk, n_chunks, &lo, &hi);
    uint8_t *dst = j->cc->moe_act;
    for (int64_t k = lo; k < hi; k++)
        memcpy(dst + (size_t)k * j->act_row, j->tok_act + (size_t)(j->order[k] / j->n_used) * j->act_row, j->act_row);
}

/* Stage 2 over virtual rows [lo, hi): expert a = lo / n_ff of the active
 * list, its row lo % n_ff. */
static void gate_up_rows(void *ctx, int64_t lo, int64_t hi, int thread) {
    moe_job *j = ctx;
    float *lg = j->cc->moe_tmp + (size_t)thread * j->cc->moe_tmp_stride, *lu = lg + (size_t)j->n_tok * PL_MM_ROW_BLOCK;
    for (int64_t v = lo; v < hi;) {
        const int64_t a = v / j->n_ff, r0 = v % j->n_ff;
        const int64_t r1 = r0 + PL_MM_ROW_BLOCK < j->n_ff ? r0 + PL_MM_ROW_BLOCK : j->n_ff;
        const int64_t end = r1 - r0 < hi - v ? r1 : r0 + (hi - v), rb = end - r0;
        const int32_t e = j->active[a];
        const int64_t k0 = j->off[e], cnt = j->off[e + 1] - k0;
        const void *act = j->cc->moe_act + (size_t)k0 * j->act_row;
        float *h = j->cc->moe_h + (size_t)k0 * (size_t)j->n_ff;
        if (j->pass != 2) {
            const pl_weight g = pl_weight_expert(j->e->gate, e);
            pl_cpu_mm_rows(&g, j->kg, act, j->act_row, cnt, j->pass == 0 ? lg : h + r0, j->pass == 0 ? (size_t)rb : (size_t)j->n_ff,
                           r0, end);
        }
        if (j->pass != 1) {
            const pl_weight u = pl_weight_expert(j->e->up, e);
            pl_cpu_mm_rows(&u, j->ku, act, j->act_row, cnt, lu, (size_t)rb, r0, end);
            /* gate already in h (pass 2) or in lg (pass 0) */
            for (int64_t t = 0; t < cnt; t++) {
                float *hr = h + (size_t)t * (size_t)j->n_ff + r0;
                j->cc->isa->silu_mul(j->pass == 0 ? lg + t * rb : hr, lu + t * rb, hr, rb);
            }
        }
        v += rb;
    }
}

/* Stage 4 over rows [lo, hi) of down's output, in blocks of MOE_DOWN_BLOCK. */
static void down_rows(void *ctx, int64_t lo, int64_t hi, int thread) {
    moe_job *j = ctx;
    float *d = j->cc->moe_tmp + (size_t)thread * j->cc->moe_tmp_stride;
    for (int64_t c0 = lo; c0 < hi; c0 += MOE_DOWN_BLOCK) {
        const int64_t c1 = c0 + MOE_DOWN_BLOCK < hi ? c0 + MOE_DOWN_BLOCK : hi, bw = c1 - c0;
        for (int a = 0; a < j->n_active; a++) {
            const int32_t e = j->active[a];
            const int64_t k0 = j->off[e], cnt = j->off[e + 1] - k0;
            const pl_weight dw = pl_weight_expert(j->e->down, e);
            pl_cpu_mm_rows(&dw, j->kd, j->cc->moe_act + (size_t)k0 * j->act_row, j->act_row, cnt, d + (size_t)k0 * (size_t)bw,
                           (size_t)bw, c0, c1);
        }
        /* pl_ref_moe_sum's order: slot 0's product, then each slot's added */
        for (int64_t t = 0; t < j->n_tok; t++) {
            const float *wt = j->w + t * j->n_used;
            float *yt = j->y + t * j->n_out + c0;
            const float *d0 = d + (size_t)j->row_of[t * j->n_used] * (size_t)bw;
            for (int64_t i = 0; i < bw; i++) yt[i] = d0[i] * wt[0];
            for (int64_t s = 1; s < j->n_used; s++) {
                const float *ds = d + (size_t)j->row_of[t * j->n_used + s] * (size_t)bw, ws = wt[s];
                for (int64_t i = 0; i < bw; i++) {
                    const float v = ds[i] * ws;
                    yt[i] = yt[i] + v;
                }
            }
        }
    }
}

/* Checks, and the grouping of the pairs by expert (stage 1). */
static bool moe_group(pl_compute *c, moe_job *j) {
    pocketllm_status st = pl_moe_ffn_check(j->e, j->n_used);
    if (!st && j->e->gate->n_expert > PL_MAX_EXPERTS)
        st = pl_fail(POCKETLLM_ERR_UNSUPPORTED, "moe_ffn: %lld experts (at most %d)", (long long)j->e->gate->n_expert,
                     PL_MAX_EXPERTS);
    if (!st && (j->pairs > j->cc->moe_pairs || j->n_tok > j->cc->lim.n_batch || j->e->gate->n_in > j->cc->lim.max_in || j->n_ff > j->cc->lim.max_in ||
                (uint64_t)j->pairs * (uint64_t)j->n_ff > j->cc->moe_h_floats))
        st = pl_fail(POCKETLLM_ERR_INTERNAL, "moe_ffn %s: %lld tokens x %lld experts exceed the reserved scratch",
                     j->e->gate->name, (long long)j->n_tok, (long long)j->n_used);
    if (st) {
        pl_compute_fail(c, st);
        return false;
    }
    const int64_t ne = j->e->gate->n_expert;
    int32_t cnt[PL_MAX_EXPERTS] = {0};
    for (int64_t p = 0; p < j->pairs; p++) {
        const int32_t e = j->ids[p];
        if (e < 0 || e >= ne) {
            pl_compute_fail(c, pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "moe_ffn %s: expert %d of token %lld is not in 0..%lld",
                                       j->e->gate->name, (int)e, (long long)(p / j->n_used), (long long)ne - 1));
            return false;
        }
        cnt[e]++;
    }
    j->off[0] = 0;
    j->n_active = 0;
    for (int64_t e = 0; e < ne; e++) {
        j->off[e + 1] = j->off[e] + cnt[e];
        if (cnt[e]) j->active[j->n_active++] = (int32_t)e;
    }
    int32_t *order = j->cc->moe_order, *row_of = order + j->cc->moe_pairs;
    int32_t fill[PL_MAX_EXPERTS];
    memcpy(fill, j->off, (size_t)ne * sizeof *fill);
    for (int64_t p = 0; p < j->pairs; p++) {
        const int32_t k = fill[j->ids[p]]++;
        order[k] = (int32_t)p;
        row_of[p] = k;
    }
    j->order = order;
    j->row_of = row_of;
    return true;
}

/* The expert products' inputs for the importance-matrix observer: h back
 * in [n_tok][n_used][n_ff] order (a copy made only while observing). */
static void observe_down(pl_compute *c, moe_job *j) {
    float *h = malloc((size_t)j->pairs * (size_t)j->n_ff * sizeof *h);
    if (!h) {
        pl_compute_fail(c, pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory observing %s", j->e->down->name));
        return;
    }
    for (int64_t p = 0; p < j->pairs; p++)
        memcpy(h + p * j->n_ff, j->cc->moe_h + (size_t)j->row_of[p] * (size_t)j->n_ff, (size_t)j->n_ff * sizeof *h);
    c->observe_mul_mat_id(c->observe_user, c, j->e->down, h, j->n_used, j->ids, j->n_used, j->n_tok);
    free(h);
}

/* x converted per token to `type`'s vec_dot type and gathered into the
 * grouped rows (stage 2's input). */
static void gather_x(moe_job *j, uint32_t type) {
    const uint32_t act_type = pl_type_get(type)->vec_dot_type;
    uint64_t row = 0;
    pl_type_row_bytes(act_type, (uint64_t)j->e->gate->n_in, &row);
    j->act_row = (size_t)row;
    j->act_fn = pl_quant_kernels_tier(act_type, j->cc->qtier)->act_from_float;
    if (act_type == PL_TYPE_F32) {
        j->tok_act = (uint8_t *)(uintptr_t)j->x; /* f32 rows are used as they are */
    } else {
        j->tok_act = j->cc->act;
        j->act_src = j->x;
        pl_cpu_parallel(j->cc, convert_rows, j, j->n_tok * j->e->gate->n_in);
    }
    pl_cpu_parallel(j->cc, gather_rows, j, j->pairs * (int64_t)j->act_row / 4);
}

void pl_cpu_moe_ffn(pl_compute *c, const pl_moe_ffn_weights *e, const float *x, const int32_t *ids, const float *w,
                        int64_t n_used, int64_t n_tok, float *y) {
    pl_cpu_compute *cc = pl_cpu(c);
    moe_job j = {.cc = cc, .e = e, .x = x, .w = w, .ids = ids, .n_used = n_used, .n_tok = n_tok, .y = y,
                 .pairs = n_tok * n_used};
    if (n_tok < 1) return;
    if (!pl_cpu_weight_type_ok(e->gate->type) || !pl_cpu_weight_type_ok(e->up->type) || !pl_cpu_weight_type_ok(e->down->type)) {
        pl_compute_fail(c, pl_fail(POCKETLLM_ERR_UNSUPPORTED, "moe_ffn: no CPU kernel for %s (%s, %s, %s)",
                                   pocketllm_type_name(e->gate->type), e->gate->name, e->up->name, e->down->name));
        return;
    }
    j.n_ff = e->gate->n_out;
    j.n_out = e->down->n_out;
    if (!moe_group(c, &j)) return;
    if (c->observe_mul_mat_id) {
        c->observe_mul_mat_id(c->observe_user, c, e->gate, x, 1, ids, n_used, n_tok);
        if (!c->status) c->observe_mul_mat_id(c->observe_user, c, e->up, x, 1, ids, n_used, n_tok);
        if (c->status) return;
    }
    j.kg = pl_quant_kernels_tier(e->gate->type, cc->qtier);
    j.ku = pl_quant_kernels_tier(e->up->type, cc->qtier);
    j.kd = pl_quant_kernels_tier(e->down->type, cc->qtier);

    /* stage 2: gate and up in one job when they read the same converted
     * rows (every recipe of llama.cpp gives them one vec_dot type), else
     * gate into h, then up with silu against it */
    const int64_t rows = (int64_t)j.n_active * j.n_ff, work = j.pairs * e->gate->n_in / (j.n_active ? j.n_active : 1);
    j.gate_up_shared = pl_type_get(e->gate->type)->vec_dot_type == pl_type_get(e->up->type)->vec_dot_type;
    gather_x(&j, e->gate->type);
    j.pass = j.gate_up_shared ? 0 : 1;
    pl_cpu_parallel_ranges(cc, gate_up_rows, &j, rows, 2 * work, PL_MM_ROW_BLOCK);
    if (!j.gate_up_shared) {
        gather_x(&j, e->up->type);
        j.pass = 2;
        pl_cpu_parallel_ranges(cc, gate_up_rows, &j, rows, work, PL_MM_ROW_BLOCK);
    }
    if (c->observe_mul_mat_id) {
        observe_down(c, &j);
        if (c->status) return;
    }

    /* stage 3: h to down's vec_dot type, over the gathered x */
    const uint32_t dt = pl_type_get(e->down->type)->vec_dot_type;
    uint64_t row = 0;
    pl_type_row_bytes(dt, (uint64_t)j.n_ff, &row);
    j.act_row = (size_t)row;
    if (dt == PL_TYPE_F32) {
        memcpy(cc->moe_act, cc->moe_h, (size_t)j.pairs * (size_t)j.n_ff * sizeof(float));
    } else {
        j.act_fn = pl_quant_kernels_tier(dt, cc->qtier)->act_from_float;
        j.act_src = cc->moe_h;
        pl_cpu_parallel(cc, convert_rows, &j, j.pairs * j.n_ff);
    }

    /* stage 4 */
    pl_cpu_parallel_ranges(cc, down_rows, &j, j.n_out, j.pairs * j.n_ff, MOE_DOWN_BLOCK);
}
