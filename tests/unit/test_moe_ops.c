/*
 * test_moe_ops.c -- the CPU backend's mixture-of-experts ops against the
 * reference, on every instruction-set tier this host runs and 1 and 3
 * threads:
 *  - moe_route and sigmoid_gate: the reference's arithmetic, bit for bit;
 *  - moe_ffn (experts grouped, only their rows read): bit for bit what the
 *    same instance's own mul_mat, silu_mul and the reference sum give pair
 *    by pair -- so the grouping, the tiles, the row split over threads, the
 *    per-block sum and where the products are kept (the caller's work rows
 *    or the instance's scratch) change nothing -- and within the float-order bound
 *    of pl_ref_moe_ffn; for the weight types of the ladder, mixed per
 *    tensor as llama.cpp's recipes mix them, decode and prefill batch
 *    sizes, uniform and skewed routing (one expert chosen by every token);
 *  - the importance-matrix observer sees each expert tensor once with the
 *    rows the reference multiplies;
 *  - bad ids and shapes fail the pass with a message, never a crash.
 * Under emulation (PL_TEST_EMULATED: the ARM64 build under qemu) the SIMD
 * tables only, a family of types, and no reference comparison: what is
 * checked there is that the tier's kernels through moe_ffn give its own
 * mul_mat's bits (mul_mat against the reference is test_ops' there, and
 * the reference's arithmetic is the same C on every host).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/compute.h"
#include "backend/cpu/cpu_isa.h"
#include "base/error.h"
#include "base/half.h"
#include "base/rng.h"
#include "ops/ref.h"
#include "pltest.h"
#include "../common/quant_testdata.h"
#include "quant/types.h"

static pl_rng rng;

typedef struct inst {
    pl_compute *c;
    const char *isa;
    int nt;
} inst;
static inst insts[8];
static int n_insts;
#define FOR_INST(v) for (inst *v = insts; v < insts + n_insts; v++)

enum { MAX_TOK = 64, MAX_USED = 8, N_EMBD = 256, MAX_FF = 512 };

static float *rnd(int64_t n, float lo, float hi) {
    float *f = malloc((size_t)(n > 0 ? n : 1) * sizeof *f);
    for (int64_t i = 0; i < n; i++) f[i] = lo + (hi - lo) * pl_rng_uniform(&rng);
    return f;
}

static pl_compute *make(const pl_cpu_isa *isa, int nt) {
    pl_compute *c = NULL;
    CHECK(pl_cpu_compute_new(nt, isa, &c) == POCKETLLM_OK);
    pl_compute_limits lim = {.n_batch = MAX_TOK, .max_in = MAX_FF, .n_ctx = 16, .head_dim = 64,
                             .moe_n_used = MAX_USED, .moe_n_ff = MAX_FF};
    CHECK(c && c->ops->reserve(c, &lim) == POCKETLLM_OK);
    return c;
}

/* A 3-D expert tensor [n_in, n_out, n_expert] of `type`, random blocks with
 * sane scales (float types: values in -1..1). */
static pl_weight make_experts(const char *name, uint32_t type, int64_t n_in, int64_t n_out, int64_t n_expert) {
    uint64_t row;
    CHECK(pl_type_row_bytes(type, (uint64_t)n_in, &row));
    const size_t bytes = (size_t)row * (size_t)n_out * (size_t)n_expert;
    uint8_t *d = malloc(bytes);
    const pl_type_traits *t = pl_type_get(type);
    const int64_t n = n_in * n_out * n_expert;
    if (t->block == 1) {
        for (int64_t i = 0; i < n; i++) {
            const float v = -1 + 2 * pl_rng_uniform(&rng);
            if (type == PL_TYPE_F32) ((float *)d)[i] = v;
            else if (type == PL_TYPE_F16) ((uint16_t *)d)[i] = pl_f32_to_f16(v);
            else ((uint16_t *)d)[i] = pl_f32_to_bf16(v);
        }
    } else {
        qt_gen_blocks(type, QT_RANDOM, &rng, d, n / (int64_t)t->block);
    }
    pl_weight w = {.name = name, .data = d, .type = type, .n_in = n_in, .n_out = n_out, .row_bytes = (size_t)row,
                   .n_expert = n_expert, .expert_bytes = (size_t)row * (size_t)n_out};
    return w;
}

/* Routing of n_tok tokens: distinct experts per token (a random draw
 * without replacement), weights in 0..1; skewed: every token has expert
 * `hot` among its choices. */
static void make_routing(int64_t n_expert, int64_t n_used, int64_t n_tok, bool skewed, int32_t *ids, float *w) {
    const int32_t hot = (int32_t)(n_expert / 3);
    int32_t perm[PL_MAX_EXPERTS];
    for (int64_t t = 0; t < n_tok; t++) {
        for (int64_t e = 0; e < n_expert; e++) perm[e] = (int32_t)e;
        for (int64_t j = 0; j < n_used; j++) {
            const int64_t r = j + (int64_t)(pl_rng_next(&rng) % (uint64_t)(n_expert - j));
            const int32_t v = perm[r];
            perm[r] = perm[j], perm[j] = v;
        }
        if (skewed) {
            int64_t at = 0;
            while (perm[at] != hot) at++;
            const int64_t slot = t % n_used;
            perm[at] = perm[slot], perm[slot] = hot;
        }
        for (int64_t j = 0; j < n_used; j++) ids[t * n_used + j] = perm[j], w[t * n_used + j] = pl_rng_uniform(&rng);
    }
}

/* What instance c gives pair by pair with its own mul_mat and silu_mul and
 * the reference sum: moe_ffn must equal it bit for bit. */
static void compose(pl_compute *c, const pl_moe_ffn_weights *e, const float *x, const int32_t *ids, const float *w,
                    int64_t n_used, int64_t n_tok, float *y, float *h_out) {
    const int64_t n_ff = e->gate->n_out, n_out = e->down->n_out;
    float *g = rnd(n_ff, 0, 0), *u = rnd(n_ff, 0, 0), *d = rnd(n_tok * n_used * n_out, 0, 0);
    for (int64_t p = 0; p < n_tok * n_used; p++) {
        const pl_weight ge = pl_weight_expert(e->gate, ids[p]), ue = pl_weight_expert(e->up, ids[p]);
        const pl_weight de = pl_weight_expert(e->down, ids[p]);
        c->ops->mul_mat(c, &ge, x + (p / n_used) * e->gate->n_in, 1, g);
        c->ops->mul_mat(c, &ue, x + (p / n_used) * e->gate->n_in, 1, u);
        c->ops->silu_mul(c, g, u, h_out + p * n_ff, n_ff);
        c->ops->mul_mat(c, &de, h_out + p * n_ff, 1, d + p * n_out);
    }
    pl_ref_moe_sum(d, w, y, n_tok, n_used, n_out);
    free(g), free(u), free(d);
}

/* The float-order bound against the reference: a few ulps of the largest
 * sum of |products| a result is made of (through the SwiGLU, bounded by
 * measuring the reference's own |h| and |w| sums). */
static double ref_bound(const pl_moe_ffn_weights *e, const float *x, const int32_t *ids, const float *w,
                        int64_t n_used, int64_t n_tok) {
    const int64_t n_in = e->gate->n_in, n_ff = e->gate->n_out, n_out = e->down->n_out;
    float *row = rnd(n_in > n_ff ? n_in : n_ff, 0, 0), *h = rnd(n_ff, 0, 0);
    double bound = 0;
    for (int64_t p = 0; p < n_tok * n_used; p++) {
        const pl_weight ge = pl_weight_expert(e->gate, ids[p]), ue = pl_weight_expert(e->up, ids[p]);
        const pl_weight de = pl_weight_expert(e->down, ids[p]);
        double gmax = 0, umax = 0;
        for (int64_t o = 0; o < n_ff; o++) {
            double sg = 0, su = 0;
            int32_t r = (int32_t)o;
            pl_ref_get_rows(&ge, &r, 1, row);
            for (int64_t i = 0; i < n_in; i++) sg += fabs((double)row[i] * x[(p / n_used) * n_in + i]);
            pl_ref_get_rows(&ue, &r, 1, row);
            for (int64_t i = 0; i < n_in; i++) su += fabs((double)row[i] * x[(p / n_used) * n_in + i]);
            gmax = sg > gmax ? sg : gmax, umax = su > umax ? su : umax;
            h[o] = (float)(sg * su);
        }
        for (int64_t o = 0; o < n_out; o++) {
            double s = 0;
            int32_t r = (int32_t)o;
            pl_ref_get_rows(&de, &r, 1, row);
            for (int64_t i = 0; i < n_ff; i++) s += fabs((double)row[i]) * (gmax * umax + 1e-3);
            s *= fabs((double)w[p]) * (double)n_used;
            bound = s > bound ? s : bound;
        }
    }
    free(row), free(h);
    return bound * 4e-6 + 1e-30;
}

/* The observer: what it was shown, checked against the composition. */
typedef struct seen {
    const pl_weight *w[4];
    int64_t slots[4];
    float *x[4];
    int n;
} seen;

static void observer(void *user, pl_compute *c, const pl_weight *w, const float *x, int64_t x_slots, const int32_t *ids,
                     int64_t n_used, int64_t n_tok) {
    (void)ids;
    seen *s = user;
    if (s->n >= 4) return;
    const size_t n = (size_t)(n_tok * x_slots * w->n_in);
    s->x[s->n] = malloc(n * sizeof(float));
    c->ops->download(c, s->x[s->n], x, n * sizeof(float));
    s->w[s->n] = w;
    s->slots[s->n] = x_slots;
    s->n++;
    (void)n_used;
}

/* Token counts of a case: a decode, small batches (tiles with leftovers)
 * and a pass larger than the tile and row blocks. */
static const int64_t toks_few[] = {1, 7, 33, 0}, toks_all[] = {1, 2, 17, MAX_TOK, 0};

static void test_ffn_case(uint32_t tg, uint32_t tu, uint32_t td, int64_t n_expert, int64_t n_used, int64_t n_ff,
                          bool skewed, bool observe, const int64_t *toks) {
    pl_weight gate = make_experts("gate_exps", tg, N_EMBD, n_ff, n_expert);
    pl_weight up = make_experts("up_exps", tu, N_EMBD, n_ff, n_expert);
    pl_weight down = make_experts("down_exps", td, n_ff, N_EMBD, n_expert);
    const pl_moe_ffn_weights e = {&gate, &up, &down};
    for (size_t ti = 0; toks[ti]; ti++) {
        const int64_t n_tok = toks[ti];
        float *x = rnd(n_tok * N_EMBD, -2, 2), *w = rnd(n_tok * n_used, 0, 0);
        int32_t *ids = malloc((size_t)(n_tok * n_used) * sizeof *ids);
        make_routing(n_expert, n_used, n_tok, skewed, ids, w);
        float *ref = rnd(n_tok * N_EMBD, 0, 0), *want = rnd(n_tok * N_EMBD, 0, 0), *y = rnd(n_tok * N_EMBD, 0, 0);
        float *h = rnd(n_tok * n_used * n_ff, 0, 0);
        const bool emulated = getenv("PL_TEST_EMULATED") != NULL;
        CHECK(emulated || pl_ref_moe_ffn(&e, x, ids, w, n_used, n_tok, ref) == POCKETLLM_OK);
        const double bound = emulated ? INFINITY : ref_bound(&e, x, ids, w, n_used, n_tok);
        /* the products in the caller's work rows, in too few of them (the
         * instance's scratch then), or with none */
        const size_t work_bytes = ti % 3 == 1 ? (size_t)16 << 20 : ti % 3 == 2 ? 100 : 0;
        void *work = work_bytes ? malloc(work_bytes) : NULL;
        FOR_INST(v) {
            pl_compute *c = v->c;
            compose(c, &e, x, ids, w, n_used, n_tok, want, h);
            seen s = {0};
            if (observe) c->observe_mul_mat_id = observer, c->observe_user = &s;
            c->ops->moe_ffn(c, &e, x, ids, w, n_used, n_tok, y, work, work_bytes);
            c->observe_mul_mat_id = NULL;
            CHECK_MSG(c->status == POCKETLLM_OK, "%s/%d moe_ffn failed: %s", v->isa, v->nt, pocketllm_last_error());
            CHECK_MSG(memcmp(y, want, (size_t)(n_tok * N_EMBD) * 4) == 0, "%s/%d moe_ffn %s/%s/%s %lld of %lld, %lld tok%s: "
                      "not its own ops' bits", v->isa, v->nt, pl_type_get(tg)->name, pl_type_get(tu)->name,
                      pl_type_get(td)->name, (long long)n_used, (long long)n_expert, (long long)n_tok, skewed ? ", skewed" : "");
            double err = 0;
            for (int64_t i = 0; i < n_tok * N_EMBD && !emulated; i++) err = fmax(err, fabs((double)y[i] - ref[i]));
            CHECK_MSG(err <= bound, "%s/%d moe_ffn %s/%s/%s %lld tok: %g from the reference, bound %g", v->isa, v->nt,
                      pl_type_get(tg)->name, pl_type_get(tu)->name, pl_type_get(td)->name, (long long)n_tok, err, bound);
            if (observe) {
                CHECK_MSG(s.n == 3 && s.w[0] == &gate && s.w[1] == &up && s.w[2] == &down && s.slots[0] == 1 &&
                              s.slots[1] == 1 && s.slots[2] == n_used, "%s/%d observer calls: %d", v->isa, v->nt, s.n);
                if (s.n == 3) {
                    CHECK(memcmp(s.x[0], x, (size_t)(n_tok * N_EMBD) * 4) == 0);
                    CHECK_MSG(memcmp(s.x[2], h, (size_t)(n_tok * n_used * n_ff) * 4) == 0, "%s/%d down's observed rows",
                              v->isa, v->nt);
                }
                for (int i = 0; i < s.n; i++) free(s.x[i]);
            }
        }
        free(x), free(w), free(ids), free(ref), free(want), free(y), free(h), free(work);
    }
    free((void *)gate.data), free((void *)up.data), free((void *)down.data);
}

static void test_ffn(void) {
    /* every type the CPU multiplies with (under emulation, PL_TEST_EMULATED,
     * one of each kernel family: the per-type kernels themselves are
     * test_ops' and test_quant_kernels' on every tier; what is moe_ffn's own
     * -- grouping, tiles over gathered rows, the per-block sum -- does not
     * depend on the type), experts as the 30B-A3B model has them (128, 8
     * used) and few (8, 2 used) */
    const bool emulated = getenv("PL_TEST_EMULATED") != NULL;
    const uint32_t family[] = {PL_TYPE_F16, PL_TYPE_Q8_0, PL_TYPE_Q4_K, PL_TYPE_Q6_K, PL_TYPE_IQ2_XXS, PL_TYPE_IQ4_NL};
    for (uint32_t t = 0; t < PL_TYPE_COUNT; t++) {
        if (!pl_cpu_supports(PL_OP_MOE_FFN, t) || (N_EMBD % pl_type_get(t)->block) || (256 % pl_type_get(t)->block))
            continue;
        bool in_family = false;
        for (size_t i = 0; i < sizeof family / sizeof family[0]; i++) in_family = in_family || family[i] == t;
        if (emulated && !in_family) continue;
        test_ffn_case(t, t, t, 8, 2, 256, false, false, toks_few);
    }
    const uint32_t q4k = PL_TYPE_Q4_K, q6k = PL_TYPE_Q6_K;
    /* llama.cpp's Q4_K_M gives ffn_down_exps q6_K in some layers */
    test_ffn_case(q4k, q4k, q6k, 128, 8, 256, false, true, toks_few);
    test_ffn_case(q4k, q4k, q6k, 16, 8, 256, true, true, emulated ? toks_few : toks_all);
    /* gate and up of different vec_dot types (two conversions of x) */
    test_ffn_case(PL_TYPE_Q8_0, PL_TYPE_Q4_K, PL_TYPE_F16, 16, 4, 256, true, false, emulated ? toks_few : toks_all);
    test_ffn_case(PL_TYPE_F32, PL_TYPE_F16, PL_TYPE_Q2_K, 8, 1, 256, false, true, toks_few);
    test_ffn_case(PL_TYPE_IQ2_XXS, PL_TYPE_IQ2_XXS, PL_TYPE_Q3_K, 60, 4, 512, true, false, toks_few);
}

static void test_route(void) {
    const int64_t shapes[][2] = {{8, 2}, {60, 4}, {128, 8}, {256, 8}, {4, 4}, {1, 1}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int64_t ne = shapes[s][0], k = shapes[s][1], n_tok = 37;
        float *lg = rnd(n_tok * ne, -4, 4);
        for (int64_t i = 0; i < n_tok * ne; i += 5) lg[i] = 0.5f; /* exact ties */
        for (int64_t i = 0; i < ne; i++) lg[i] = 1.0f;            /* a token of all ties */
        for (int norm = 0; norm < 2; norm++) {
            const pl_moe_route_params p = {ne, k, norm, norm ? 0.0f : 2.5f};
            int32_t *ri = malloc((size_t)(n_tok * k) * 4), *ci = malloc((size_t)(n_tok * k) * 4);
            float *rw = rnd(n_tok * k, 0, 0), *cw = rnd(n_tok * k, 0, 0);
            pl_ref_moe_route(&p, lg, n_tok, ri, rw);
            FOR_INST(v) {
                v->c->ops->moe_route(v->c, &p, lg, n_tok, ci, cw);
                CHECK_MSG(!memcmp(ri, ci, (size_t)(n_tok * k) * 4) && !memcmp(rw, cw, (size_t)(n_tok * k) * 4),
                          "%s/%d moe_route %lld of %lld", v->isa, v->nt, (long long)k, (long long)ne);
            }
            free(ri), free(ci), free(rw), free(cw);
        }
        free(lg);
    }
}

static void test_sigmoid_gate(void) {
    const int64_t rows = 9, n = 1000;
    float *x = rnd(rows * n, -3, 3), *g = rnd(rows, -8, 8), *r = rnd(rows * n, 0, 0), *y = rnd(rows * n, 0, 0);
    pl_ref_sigmoid_gate(x, g, r, rows, n);
    FOR_INST(v) {
        v->c->ops->sigmoid_gate(v->c, x, g, y, rows, n);
        CHECK_MSG(!memcmp(y, r, (size_t)(rows * n) * 4), "%s/%d sigmoid_gate", v->isa, v->nt);
    }
    free(x), free(g), free(r), free(y);
}

/* Bad ids, shapes and sizes fail the pass (status and a message), and
 * nothing is read outside the tensors. */
static void test_refusals(void) {
    pl_weight gate = make_experts("gate_exps", PL_TYPE_Q8_0, N_EMBD, 64, 4);
    pl_weight up = make_experts("up_exps", PL_TYPE_Q8_0, N_EMBD, 64, 4);
    pl_weight down = make_experts("down_exps", PL_TYPE_Q8_0, 64, N_EMBD, 4);
    pl_weight down3 = make_experts("down_exps", PL_TYPE_Q8_0, 64, N_EMBD, 3);
    float *x = rnd(2 * N_EMBD, -1, 1), *w = rnd(4, 0, 1), *y = rnd(2 * N_EMBD, 0, 0);
    struct {
        const pl_weight *d;
        int32_t ids[4];
        int64_t n_used, n_tok;
        const char *what;
    } cases[] = {
        {&down, {0, 4, 1, 2}, 2, 2, "is not in 0..3"},
        {&down, {0, -1, 1, 2}, 2, 2, "is not in 0..3"},
        {&down3, {0, 1, 1, 2}, 2, 2, "experts"},
        {&down, {0, 1, 2, 3}, 5, 1, "experts per token"},
        {&down, {0, 1, 2, 3}, 2, MAX_TOK + 1, "exceed the reserved scratch"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const pl_moe_ffn_weights e = {&gate, &up, cases[i].d};
        pl_compute *c = insts[0].c;
        int32_t *ids = calloc((size_t)(cases[i].n_tok * cases[i].n_used), sizeof *ids);
        memcpy(ids, cases[i].ids, 4 * sizeof *ids);
        float *xx = rnd(cases[i].n_tok * N_EMBD, 0, 0), *yy = rnd(cases[i].n_tok * N_EMBD, 0, 0);
        float *ww = rnd(cases[i].n_tok * cases[i].n_used, 0, 1);
        c->ops->moe_ffn(c, &e, xx, ids, ww, cases[i].n_used, cases[i].n_tok, yy, NULL, 0);
        CHECK_MSG(c->status != POCKETLLM_OK && strstr(pocketllm_last_error(), cases[i].what), "case %zu: %s", i,
                  pocketllm_last_error());
        c->status = POCKETLLM_OK;
        free(ids), free(xx), free(yy), free(ww);
    }
    pl_moe_route_params bad = {4, 5, true, 0};
    int32_t ids[8];
    insts[0].c->ops->moe_route(insts[0].c, &bad, x, 1, ids, w);
    CHECK(insts[0].c->status != POCKETLLM_OK);
    insts[0].c->status = POCKETLLM_OK;
    /* a dense instance (no expert scratch) refuses rather than overruns */
    pl_compute *c = NULL;
    CHECK(pl_cpu_compute_new(1, NULL, &c) == POCKETLLM_OK);
    pl_compute_limits lim = {.n_batch = 4, .max_in = N_EMBD, .n_ctx = 4, .head_dim = 64};
    CHECK(c->ops->reserve(c, &lim) == POCKETLLM_OK);
    const pl_moe_ffn_weights e = {&gate, &up, &down};
    int32_t ok[2] = {0, 1};
    c->ops->moe_ffn(c, &e, x, ok, w, 2, 1, y, NULL, 0);
    CHECK_MSG(c->status != POCKETLLM_OK, "a dense instance ran moe_ffn");
    c->ops->free(c);
    free((void *)gate.data), free((void *)up.data), free((void *)down.data), free((void *)down3.data);
    free(x), free(w), free(y);
}

int main(void) {
    pl_rng_seed(&rng, 20261205);
    const pl_cpu_isa *all[] = {pl_cpu_isa_generic(), pl_cpu_isa_avx2(), pl_cpu_isa_avx512(), pl_cpu_isa_neon()};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (!pl_cpu_isa_usable(all[i]) || (getenv("PL_TEST_EMULATED") && all[i] == pl_cpu_isa_generic())) continue;
        for (int nt = 1; nt <= 3; nt += 2) insts[n_insts++] = (inst){make(all[i], nt), all[i]->name, nt};
    }
    CHECK(n_insts >= 2);
    test_route();
    test_sigmoid_gate();
    test_ffn();
    test_refusals();
    FOR_INST(v) v->c->ops->free(v->c);
    TEST_DONE();
}
