/*
 * test_matmul_batch.c -- a token's matmul result does not depend on the
 * batch it is computed in: for every CPU tier this host runs and the
 * weight types with tile kernels (plus f16 and a type without one), the
 * product of a batch of n_tok activation rows equals, bit for bit, each
 * row multiplied alone (n_tok = 1, the decode path) -- with token counts
 * and row counts that are not multiples of the tile, so tiles, leftover
 * rows and leftover tokens all meet.  Continuous batching in the server
 * promises exactly this (tests/unit/test_session_batch.c checks it end to
 * end).  The kernels' agreement with the reference is test_quant_kernels'
 * and test_ops' job.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/compute.h"
#include "backend/cpu/cpu_compute.h"
#include "backend/cpu/cpu_isa.h"
#include "base/rng.h"
#include "pltest.h"
#include "quant/types.h"

static pl_rng rng;

static float *rnd(int64_t n, float lo, float hi) {
    float *f = malloc((size_t)(n > 0 ? n : 1) * sizeof *f);
    for (int64_t i = 0; i < n; i++) f[i] = lo + (hi - lo) * pl_rng_uniform(&rng);
    return f;
}

/* n_out rows of n_in random weights quantized to `type` (random floats
 * through the type's own encoder, so scales are realistic) */
static pl_weight make_weight(uint32_t type, int64_t n_in, int64_t n_out, void **keep) {
    const pl_type_traits *t = pl_type_get(type);
    uint64_t row = 0;
    CHECK(pl_type_row_bytes(type, (uint64_t)n_in, &row));
    uint8_t *d = malloc((size_t)row * (size_t)n_out);
    float *f = rnd(n_in, -1, 1);
    for (int64_t o = 0; o < n_out; o++) {
        for (int64_t i = 0; i < n_in; i++) f[i] = (float)(pl_rng_uniform(&rng) * 2 - 1);
        t->from_float(f, d + (size_t)o * row, n_in, NULL);
    }
    free(f);
    *keep = d;
    return (pl_weight){.name = "w", .data = d, .type = type, .n_in = n_in, .n_out = n_out, .row_bytes = (size_t)row};
}

static void check_type(pl_compute *c, const char *isa, uint32_t type) {
    static const int64_t toks[] = {2, 3, 4, 5, 7, 9, 13};
    static const int64_t outs[] = {1, 5, 19, 37};
    const int64_t n_in = type == PL_TYPE_F16 ? 100 : 512; /* f16: whole 64s, 16s and a masked tail */
    int bad = 0;
    for (size_t oi = 0; oi < sizeof outs / sizeof outs[0]; oi++) {
        void *keep;
        const int64_t n_out = outs[oi];
        pl_weight w = make_weight(type, n_in, n_out, &keep);
        for (size_t ti = 0; ti < sizeof toks / sizeof toks[0]; ti++) {
            const int64_t n_tok = toks[ti];
            float *x = rnd(n_tok * n_in, -2, 2), *y = rnd(n_tok * n_out, 0, 0), *y1 = rnd(n_out, 0, 0);
            c->ops->mul_mat(c, &w, x, n_tok, y);
            CHECK(c->status == POCKETLLM_OK);
            for (int64_t t = 0; t < n_tok; t++) {
                c->ops->mul_mat(c, &w, x + t * n_in, 1, y1);
                if (memcmp(y1, y + t * n_out, (size_t)n_out * sizeof(float)) && bad++ < 3)
                    fprintf(stderr, "  %s %s: %lld rows, token %lld of %lld differs from the token alone\n", isa,
                            pl_type_get(type)->name, (long long)n_out, (long long)t, (long long)n_tok);
            }
            free(x), free(y), free(y1);
        }
        free(keep);
    }
    CHECK_MSG(bad == 0, "%s %s: %d batched products differ from the single-token ones", isa, pl_type_get(type)->name, bad);
}

/* mul_mat_multi: each weight's result bit for bit its own mul_mat, for
 * mixes that share the activation conversion (q4_K with q6_K, like a
 * Q4_K_M layer's q/k/v), that do not (q8_0 with q4_K: a different vec_dot
 * type) and f32 weights, and row counts that split unevenly over the
 * chunks. */
static void check_multi(pl_compute *c, const char *isa) {
    static const uint32_t mixes[][3] = {{PL_TYPE_Q4_K, PL_TYPE_Q4_K, PL_TYPE_Q6_K},
                                        {PL_TYPE_Q8_0, PL_TYPE_Q4_K, PL_TYPE_Q8_0},
                                        {PL_TYPE_F32, PL_TYPE_F32, PL_TYPE_F32}};
    static const int64_t outs[3] = {37, 5, 19}, toks[] = {1, 5};
    const int64_t n_in = 512;
    CHECK_MSG(c->ops->mul_mat_multi != NULL, "%s: the CPU backend lost mul_mat_multi", isa);
    if (!c->ops->mul_mat_multi) return;
    for (size_t mi = 0; mi < sizeof mixes / sizeof mixes[0]; mi++)
        for (size_t ti = 0; ti < sizeof toks / sizeof toks[0]; ti++) {
            const int64_t n_tok = toks[ti];
            void *keep[3];
            pl_weight w[3];
            float *y[3], *y1[3];
            for (int i = 0; i < 3; i++) {
                w[i] = make_weight(mixes[mi][i], n_in, outs[i], &keep[i]);
                y[i] = rnd(n_tok * outs[i], 0, 0), y1[i] = rnd(n_tok * outs[i], 0, 0);
            }
            float *x = rnd(n_tok * n_in, -2, 2);
            const pl_weight *wp[3] = {&w[0], &w[1], &w[2]};
            c->ops->mul_mat_multi(c, 3, wp, x, n_tok, y);
            CHECK(c->status == POCKETLLM_OK);
            for (int i = 0; i < 3; i++) {
                c->ops->mul_mat(c, &w[i], x, n_tok, y1[i]);
                CHECK_MSG(!memcmp(y[i], y1[i], (size_t)(n_tok * outs[i]) * sizeof(float)),
                          "%s mul_mat_multi %s: weight %d differs from its mul_mat (%lld tokens)", isa,
                          pl_type_get(mixes[mi][i])->name, i, (long long)n_tok);
                free(keep[i]), free(y[i]), free(y1[i]);
            }
            free(x);
        }
}

int main(void) {
    pl_rng_seed(&rng, 20261130);
    /* (the NEON table carries the best ARM quant tier this CPU runs --
     * neon, dotprod or i8mm -- and with it the i8mm tiles of 2 weight rows,
     * whose leftover rows mul_mat must route as the x86 one-row tiles never
     * make it) */
    const pl_cpu_isa *all[] = {pl_cpu_isa_generic(), pl_cpu_isa_avx2(), pl_cpu_isa_avx512(), pl_cpu_isa_neon()};
    static const uint32_t types[] = {PL_TYPE_Q8_0, PL_TYPE_Q2_K, PL_TYPE_Q3_K, PL_TYPE_Q4_K,
                                     PL_TYPE_Q5_K, PL_TYPE_Q6_K, PL_TYPE_F16,  PL_TYPE_Q4_0};
    int tested = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (!all[i] || !pl_cpu_isa_usable(all[i])) {
            fprintf(stderr, "NOTE: %s is not usable on this host: not tested here\n", all[i] ? all[i]->name : "(tier)");
            continue;
        }
        pl_compute *c = NULL;
        CHECK(pl_cpu_compute_new(2, all[i], &c) == POCKETLLM_OK);
        pl_compute_limits lim = {.n_batch = 64, .max_in = 1024, .n_ctx = 64, .head_dim = PL_MAX_HEAD_DIM};
        CHECK(c && c->ops->reserve(c, &lim) == POCKETLLM_OK);
        if (!c) continue;
        for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) check_type(c, all[i]->name, types[k]);
        check_multi(c, all[i]->name);
        c->ops->free(c);
        tested++;
    }
    CHECK_MSG(tested > 0, "no CPU tier could be tested");
    TEST_DONE();
}
