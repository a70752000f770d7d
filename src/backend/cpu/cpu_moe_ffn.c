/*
 * cpu_moe_ffn.c -- the routed experts' FFN of a mixture of experts on the
 * CPU (moe_ffn), reading only the rows of the experts the router chose.
 *
 * The (token, slot) pairs of a pass are grouped by expert, so that each
 * chosen expert's gate, up and down matrices are streamed once per pass
 * whatever the number of tokens that chose it (a decode reads the 8 chosen
 * experts' rows; a 512-token prefill reads each expert once, not once per
 * token):
 *
 *   1. group: count the pairs per expert; pair p = t * n_used + j gets
 *      grouped row k, the pairs of expert e taking rows off[e] .. off[e+1]
 *      in token order;
 *   2. gate and up: x converted once per token to the experts' vec_dot
 *      type; one ranged job over grains of 256 rows of every chosen expert
 *      laid end to end: a grain gathers its expert's tokens' rows (64 at a
 *      time, kept while the thread's next grain is the same expert's), runs
 *      gate and up over them through the tile kernels, and writes
 *      silu(gate) * up of its 256 columns straight into
 *      h in down's vec_dot type (its blocks are whole: 256 is a multiple of
 *      every activation block) -- so neither product, nor h in f32, is ever
 *      stored whole;
 *   3. down and the weighted sum: one ranged job over blocks of down's
 *      output rows; a block runs every chosen expert's rows for its tokens
 *      into a per-thread buffer and then adds, per token, the slots in slot
 *      order -- the products of a token are never stored whole either.
 *
 * Memory: h (in its 8-bit blocks) and the per-thread buffers go in the
 * rows the graph hands over (its attention's, dead during the FFN) when
 * they fit, else in the instance's scratch; a 512-token pass of the
 * 30B-A3B shape then adds nothing to what the session already holds.
 *
 * Threads take contiguous ranges of grains and steal from the fullest
 * range when done (pl_pool_run_ranges): a popular expert's grains cost
 * more, and a thread that lands on them simply keeps fewer of them.  Every
 * entry is the kernels' vec_dot bit for bit, silu_mul is the backend's and
 * the sum is pl_ref_moe_sum's order, so the result does not depend on the
 * grouping or the thread count; it is the reference composition within
 * silu_mul's bound (unit/test_moe_ops).
 */
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_compute.h"
#include "base/error.h"
#include "quant/kernels.h"
#include "quant/types.h"

/* Columns of h one grain of stage 2 makes: a multiple of every activation
 * block (32 and 256), so a grain's piece of a row converts on its own. */
#define MOE_GRAIN 256
/* Tokens of an expert a grain runs at once: its weights (a grain of gate
 * and up is 256 rows) stay in the core's cache across the chunks of a
 * popular expert, and a thread's buffers stay small. */
#define MOE_TOK_CHUNK 64
/* Output rows of down per block of stage 3 (the per-thread buffer holds
 * this many columns of every pair). */
#define MOE_DOWN_BLOCK 32
/* Bytes of the widest activation row of n elements (f32) with a block's slack. */
#define ACT_ROW_MAX(n) ((uint64_t)(n) * 4 + 512)

/* A thread's region: stage 2's gathered rows of x (a chunk of tokens,
 * twice when gate and up read different types) and its gate and up
 * columns, or stage 3's products -- whichever is larger; which expert's
 * chunk is gathered heads it. */
static uint64_t up64(uint64_t n) { return (n + 63) / 64 * 64; }
static uint64_t thread_bytes(uint64_t x_row, bool two, uint64_t pairs) {
    const uint64_t stage2 = up64(MOE_TOK_CHUNK * x_row) * (two ? 2 : 1) + 2 * MOE_TOK_CHUNK * MOE_GRAIN * 4;
    const uint64_t stage3 = pairs * MOE_DOWN_BLOCK * 4;
    return 64 + up64(stage2 > stage3 ? stage2 : stage3);
}

pocketllm_status pl_cpu_moe_reserve(pl_cpu_compute *cc, const pl_compute_limits *lim) {
    pl_cpu_moe_free(cc);
    cc->moe_order = NULL, cc->moe_h = NULL, cc->moe_tok2 = NULL, cc->moe_thread = NULL;
    cc->moe_pairs = 0;
    if (lim->moe_n_used <= 0) return POCKETLLM_OK;
    const uint64_t pairs = (uint64_t)lim->n_batch * (uint64_t)lim->moe_n_used;
    const uint64_t h = pairs * ACT_ROW_MAX(lim->moe_n_ff), tok2 = (uint64_t)lim->n_batch * ACT_ROW_MAX(lim->max_in);
    const uint64_t per = thread_bytes(ACT_ROW_MAX(lim->max_in), true, pairs);
    if (pairs > INT32_MAX || h > SIZE_MAX / 4 || tok2 > SIZE_MAX / 4 || per > SIZE_MAX / 4 / (uint64_t)cc->n_threads)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "expert scratch sizes overflow (batch %lld, %lld experts a token)",
                       (long long)lim->n_batch, (long long)lim->moe_n_used);
    /* sized for the widest types, left to fault in as used: a pass whose
     * products fit the graph's work rows touches none of it */
    cc->moe_order = malloc((size_t)pairs * 2 * sizeof *cc->moe_order);
    if (posix_memalign(&cc->moe_h, 64, (size_t)h) != 0) cc->moe_h = NULL;
    if (posix_memalign(&cc->moe_tok2, 64, (size_t)tok2) != 0) cc->moe_tok2 = NULL;
    if (posix_memalign(&cc->moe_thread, 64, (size_t)(per * (uint64_t)cc->n_threads)) != 0) cc->moe_thread = NULL;
    if (!cc->moe_order || !cc->moe_h || !cc->moe_tok2 || !cc->moe_thread)
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for the expert scratch of %llu pairs",
                       (unsigned long long)pairs);
    cc->moe_pairs = (int64_t)pairs;
    cc->moe_h_bytes = (size_t)h;
    cc->moe_thread_bytes = (size_t)per;
    cc->base.reserved_bytes += pairs * 8 + h + tok2 + per * (uint64_t)cc->n_threads;
    return POCKETLLM_OK;
}

void pl_cpu_moe_free(pl_cpu_compute *cc) {
    free(cc->moe_order);
    free(cc->moe_h);
    free(cc->moe_tok2);
    free(cc->moe_thread);
}

/* One activation type of the op: its row bytes and converter. */
typedef struct act_kind {
    uint32_t type;
    size_t row; /* bytes of a converted row */
    pl_act_from_float_fn from_float;
} act_kind;

static act_kind act_of(const pl_cpu_compute *cc, const pl_weight *w) {
    act_kind a = {pl_type_get(w->type)->vec_dot_type, 0, NULL};
    uint64_t row = 0;
    pl_type_row_bytes(a.type, (uint64_t)w->n_in, &row);
    a.row = (size_t)row;
    a.from_float = pl_quant_kernels_tier(a.type, cc->qtier)->act_from_float;
    return a;
}

typedef struct {
    pl_cpu_compute *cc;
    const pl_moe_ffn_weights *e;
    const float *x, *w;
    const int32_t *ids;
    int64_t n_used, n_tok, pairs, n_ff, n_out, grains; /* grains: of MOE_GRAIN columns per expert */
    float *y;
    /* the grouping: pairs of expert e are grouped rows off[e] .. off[e+1] */
    int32_t off[PL_MAX_EXPERTS + 1];
    int32_t active[PL_MAX_EXPERTS]; /* the experts with pairs, ascending */
    int n_active;
    const int32_t *order; /* grouped row k -> pair */
    const int32_t *row_of; /* pair -> grouped row */
    const pl_quant_kernel_set *kg, *ku, *kd;
    act_kind ag, au, ad;      /* x for gate, x for up, h for down */
    const uint8_t *xg, *xu;   /* x converted per token (the same rows when ag and au agree) */
    uint8_t *h;               /* [pairs][ad.row], grouped rows */
    uint8_t *thread;          /* n_threads regions of thread_stride bytes */
    size_t thread_stride;
    float *h_seen;            /* observing: h in f32, [n_tok][n_used][n_ff], else NULL */
    /* the per-token conversion (convert_rows) */
    const act_kind *conv;
    uint8_t *conv_dst;
} moe_job;

static void convert_rows(void *ctx, int chunk, int n_chunks, int thread) {
    (void)thread;
    moe_job *j = ctx;
    long long lo, hi;
    pl_pool_split(j->n_tok, chunk, n_chunks, &lo, &hi);
    const int64_t n = j->e->gate->n_in;
    for (int64_t t = lo; t < hi; t++) j->conv->from_float(j->x + t * n, j->conv_dst + (size_t)t * j->conv->row, n);
}

/* x per token in a's type: x itself for f32, else converted into dst. */
static const uint8_t *convert_x(moe_job *j, const act_kind *a, uint8_t *dst) {
    if (a->type == PL_TYPE_F32) return (const uint8_t *)j->x;
    j->conv = a;
    j->conv_dst = dst;
    pl_cpu_parallel(j->cc, convert_rows, j, j->n_tok * j->e->gate->n_in);
    return dst;
}

/* Stage 2 over grains [lo, hi): expert active[g / grains], columns
 * (g % grains) * MOE_GRAIN onwards, its tokens a chunk at a time. */
static void gate_up_grains(void *ctx, int64_t lo, int64_t hi, int thread) {
    moe_job *j = ctx;
    uint8_t *region = j->thread + (size_t)thread * j->thread_stride;
    int32_t *gathered = (int32_t *)(void *)region; /* expert and first row of the chunk xg holds, or -1 */
    uint8_t *xg = region + 64, *xu = j->xu == j->xg ? xg : xg + up64((uint64_t)MOE_TOK_CHUNK * j->ag.row);
    float *lg = (float *)(void *)(xu + up64((uint64_t)MOE_TOK_CHUNK * j->au.row)), *lu = lg + MOE_TOK_CHUNK * MOE_GRAIN;
    for (int64_t g = lo; g < hi; g++) {
        const int32_t e = j->active[g / j->grains];
        const int64_t r0 = g % j->grains * MOE_GRAIN, r1 = r0 + MOE_GRAIN < j->n_ff ? r0 + MOE_GRAIN : j->n_ff;
        const int64_t rb = r1 - r0;
        const pl_weight gw = pl_weight_expert(j->e->gate, e), uw = pl_weight_expert(j->e->up, e);
        uint64_t at = 0;
        pl_type_row_bytes(j->ad.type, (uint64_t)r0, &at);
        for (int64_t k0 = j->off[e]; k0 < j->off[e + 1]; k0 += MOE_TOK_CHUNK) {
            const int64_t cnt = j->off[e + 1] - k0 < MOE_TOK_CHUNK ? j->off[e + 1] - k0 : MOE_TOK_CHUNK;
            if (gathered[0] != e || gathered[1] != k0) {
                for (int64_t t = 0; t < cnt; t++) {
                    const size_t tok = (size_t)(j->order[k0 + t] / j->n_used);
                    memcpy(xg + (size_t)t * j->ag.row, j->xg + tok * j->ag.row, j->ag.row);
                    if (xu != xg) memcpy(xu + (size_t)t * j->au.row, j->xu + tok * j->au.row, j->au.row);
                }
                gathered[0] = e, gathered[1] = (int32_t)k0;
            }
            pl_cpu_mm_rows(&gw, j->kg, xg, j->ag.row, cnt, lg, (size_t)rb, r0, r1);
            pl_cpu_mm_rows(&uw, j->ku, xu, j->au.row, cnt, lu, (size_t)rb, r0, r1);
            for (int64_t t = 0; t < cnt; t++) {
                float *ht = lg + t * rb;
                j->cc->isa->silu_mul(ht, lu + t * rb, ht, rb);
                if (j->h_seen)
                    memcpy(j->h_seen + (size_t)j->order[k0 + t] * (size_t)j->n_ff + r0, ht, (size_t)rb * sizeof *ht);
                uint8_t *dst = j->h + (size_t)(k0 + t) * j->ad.row + at;
                if (j->ad.type == PL_TYPE_F32) memcpy(dst, ht, (size_t)rb * sizeof *ht);
                else j->ad.from_float(ht, dst, rb);
            }
        }
    }
}

/* Stage 3 over rows [lo, hi) of down's output, in blocks of MOE_DOWN_BLOCK. */
static void down_rows(void *ctx, int64_t lo, int64_t hi, int thread) {
    moe_job *j = ctx;
    float *d = (float *)(void *)(j->thread + (size_t)thread * j->thread_stride + 64);
    for (int64_t c0 = lo; c0 < hi; c0 += MOE_DOWN_BLOCK) {
        const int64_t c1 = c0 + MOE_DOWN_BLOCK < hi ? c0 + MOE_DOWN_BLOCK : hi, bw = c1 - c0;
        for (int a = 0; a < j->n_active; a++) {
            const int32_t e = j->active[a];
            const int64_t k0 = j->off[e], cnt = j->off[e + 1] - k0;
            const pl_weight dw = pl_weight_expert(j->e->down, e);
            pl_cpu_mm_rows(&dw, j->kd, j->h + (size_t)k0 * j->ad.row, j->ad.row, cnt, d + (size_t)k0 * (size_t)bw,
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
    pl_cpu_compute *cc = j->cc;
    pocketllm_status st = pl_moe_ffn_check(j->e, j->n_used);
    if (!st && j->e->gate->n_expert > PL_MAX_EXPERTS)
        st = pl_fail(POCKETLLM_ERR_UNSUPPORTED, "moe_ffn: %lld experts (at most %d)", (long long)j->e->gate->n_expert,
                     PL_MAX_EXPERTS);
    if (!st && (j->pairs > cc->moe_pairs || j->n_tok > cc->lim.n_batch || j->e->gate->n_in > cc->lim.max_in ||
                j->n_ff > cc->lim.moe_n_ff))
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
    int32_t *order = cc->moe_order, *row_of = order + cc->moe_pairs;
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

/* Where h and the per-thread regions go: the graph's work rows when both
 * fit, else the instance's scratch. */
static void place(moe_job *j, void *work, size_t work_bytes) {
    pl_cpu_compute *cc = j->cc;
    const size_t h = ((size_t)j->pairs * j->ad.row + 63) / 64 * 64;
    const size_t per = (size_t)thread_bytes(j->ag.row > j->au.row ? j->ag.row : j->au.row, j->xu != j->xg,
                                            (uint64_t)j->pairs);
    uint8_t *w = work ? (uint8_t *)(((uintptr_t)work + 63) / 64 * 64) : NULL;
    const size_t skew = w ? (size_t)(w - (uint8_t *)work) : 0;
    if (w && work_bytes >= skew && work_bytes - skew >= h + per * (size_t)cc->n_threads) {
        j->h = w;
        j->thread = w + h;
        j->thread_stride = per;
    } else {
        j->h = cc->moe_h;
        j->thread = cc->moe_thread;
        j->thread_stride = cc->moe_thread_bytes;
    }
}

void pl_cpu_moe_ffn(pl_compute *c, const pl_moe_ffn_weights *e, const float *x, const int32_t *ids, const float *w,
                    int64_t n_used, int64_t n_tok, float *y, void *work, size_t work_bytes) {
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
    j.grains = (j.n_ff + MOE_GRAIN - 1) / MOE_GRAIN;
    if (!moe_group(c, &j)) return;
    if (c->observe_mul_mat_id) {
        c->observe_mul_mat_id(c->observe_user, c, e->gate, x, 1, ids, n_used, n_tok);
        if (!c->status) c->observe_mul_mat_id(c->observe_user, c, e->up, x, 1, ids, n_used, n_tok);
        if (c->status) return;
        /* down's input in f32, in the observer's order: only while observing */
        j.h_seen = malloc((size_t)j.pairs * (size_t)j.n_ff * sizeof *j.h_seen);
        if (!j.h_seen) {
            pl_compute_fail(c, pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory observing %s", e->down->name));
            return;
        }
    }
    j.kg = pl_quant_kernels_tier(e->gate->type, cc->qtier);
    j.ku = pl_quant_kernels_tier(e->up->type, cc->qtier);
    j.kd = pl_quant_kernels_tier(e->down->type, cc->qtier);
    j.ag = act_of(cc, e->gate);
    j.au = act_of(cc, e->up);
    j.ad = act_of(cc, e->down);

    /* stage 2: x converted once per token (once for both when gate and up
     * read one type, as every llama.cpp recipe has them) */
    j.xg = convert_x(&j, &j.ag, cc->act);
    j.xu = j.au.type == j.ag.type ? j.xg : convert_x(&j, &j.au, cc->moe_tok2);
    place(&j, work, work_bytes);
    for (int t = 0; t < cc->n_threads; t++) *(int32_t *)(void *)(j.thread + (size_t)t * j.thread_stride) = -1;
    /* (stage 3 overwrites the gathered rows: the tags are set again here
     * for the next call) */
    const int64_t grains = (int64_t)j.n_active * j.grains;
    pl_cpu_parallel_ranges(cc, gate_up_grains, &j, grains, 2 * j.pairs / j.n_active * e->gate->n_in * MOE_GRAIN, 1);
    if (j.h_seen) {
        c->observe_mul_mat_id(c->observe_user, c, e->down, j.h_seen, n_used, ids, n_used, n_tok);
        free(j.h_seen);
        if (c->status) return;
    }

    /* stage 3 */
    pl_cpu_parallel_ranges(cc, down_rows, &j, j.n_out, j.pairs * j.n_ff, MOE_DOWN_BLOCK);
}
