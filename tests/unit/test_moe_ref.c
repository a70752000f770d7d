/*
 * test_moe_ref.c -- the reference ops of a mixture-of-experts FFN
 * (src/ops/ref_moe.c) against their definitions: the router's choice and
 * weights, expert products addressed per token and slot, the weighted sum
 * in slot order, the shared-expert gate, and refusals of bad ids.  The
 * argsort's agreement with libstdc++'s std::sort itself is
 * test_argsort_stdsort (C++).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/half.h"
#include "base/rng.h"
#include "ops/ref.h"
#include "pltest.h"
#include "quant/types.h"

static pl_rng rng;

static float *rnd(int64_t n, float lo, float hi) {
    float *f = malloc((size_t)(n > 0 ? n : 1) * sizeof *f);
    for (int64_t i = 0; i < n; i++) f[i] = lo + (hi - lo) * pl_rng_uniform(&rng);
    return f;
}

/* argsort: a permutation, descending */
static void test_argsort(void) {
    const int64_t sizes[] = {1, 2, 5, 16, 17, 60, 128, 256};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const int64_t n = sizes[s];
        float *x = rnd(n, -1, 1);
        for (int64_t i = 0; i < n; i += 3) x[i] = 0.25f; /* ties */
        int32_t idx[256];
        bool seen[256] = {0};
        pl_ref_argsort_desc(x, idx, n);
        bool perm = true, sorted = true;
        for (int64_t i = 0; i < n; i++) {
            perm = perm && idx[i] >= 0 && idx[i] < n && !seen[idx[i]];
            if (idx[i] >= 0 && idx[i] < n) seen[idx[i]] = true;
            if (i) sorted = sorted && x[idx[i - 1]] >= x[idx[i]];
        }
        CHECK_MSG(perm && sorted, "n %lld", (long long)n);
        free(x);
    }
}

/* the router on distinct logits: the k largest in descending order,
 * weights as the definition (softmax, optional renormalisation, scale) */
static void test_route(void) {
    const int64_t ne = 128, k = 8, n_tok = 5;
    float *lg = rnd(n_tok * ne, -4, 4);
    for (int norm = 0; norm < 2; norm++)
        for (int sc = 0; sc < 3; sc++) {
            const float scale = sc == 0 ? 0.0f : sc == 1 ? 1.0f : 2.5f;
            const pl_moe_route_params p = {ne, k, norm, scale};
            int32_t ids[5 * 8];
            float w[5 * 8];
            pl_ref_moe_route(&p, lg, n_tok, ids, w);
            for (int64_t t = 0; t < n_tok; t++) {
                const float *l = lg + t * ne;
                double mx = -INFINITY, z = 0;
                for (int64_t e = 0; e < ne; e++) mx = l[e] > mx ? l[e] : mx;
                for (int64_t e = 0; e < ne; e++) z += exp((double)l[e] - mx);
                /* the k largest, by selection */
                bool used[128] = {0};
                double chosen = 0;
                for (int64_t j = 0; j < k; j++) {
                    int64_t best = -1;
                    for (int64_t e = 0; e < ne; e++)
                        if (!used[e] && (best < 0 || l[e] > l[best])) best = e;
                    used[best] = true;
                    CHECK_MSG(ids[t * k + j] == best, "token %lld slot %lld: %d, expected %lld", (long long)t,
                              (long long)j, ids[t * k + j], (long long)best);
                    chosen += exp((double)l[best] - mx) / z;
                }
                for (int64_t j = 0; j < k; j++) {
                    double want = exp((double)l[ids[t * k + j]] - mx) / z;
                    if (norm) want /= chosen;
                    if (scale != 0.0f && scale != 1.0f) want *= scale;
                    CHECK_MSG(fabs(w[t * k + j] - want) <= 1e-5 * fabs(want) + 1e-7, "weight %g, expected %g",
                              (double)w[t * k + j], want);
                }
            }
        }
    /* all logits equal: every probability 1/ne, renormalised to 1/k */
    float flat[16] = {0};
    int32_t ids[4];
    float w[4];
    const pl_moe_route_params p = {16, 4, true, 0.0f};
    pl_ref_moe_route(&p, flat, 1, ids, w);
    for (int j = 0; j < 4; j++) CHECK(fabsf(w[j] - 0.25f) < 1e-6f && ids[j] >= 0 && ids[j] < 16);
    free(lg);
}

/* one expert tensor made of n_expert separately encoded matrices: each
 * product equals pl_ref_mul_mat on the matrix the id names */
static void test_mul_mat_id(uint32_t type) {
    const int64_t n_in = 256, n_out = 24, n_exp = 6, k = 3, n_tok = 4;
    const pl_type_traits *t = pl_type_get(type);
    uint64_t row;
    CHECK(pl_type_row_bytes(type, (uint64_t)n_in, &row));
    const size_t eb = (size_t)row * (size_t)n_out;
    uint8_t *d = malloc(eb * (size_t)n_exp);
    float *f = rnd(n_in, -1, 1), *ones = rnd(n_in, 1, 1);
    for (int64_t r = 0; r < n_out * n_exp; r++) {
        for (int64_t i = 0; i < n_in; i++) f[i] = -1 + 2 * pl_rng_uniform(&rng);
        uint8_t *dst = d + (size_t)r * row;
        if (type == PL_TYPE_F32) memcpy(dst, f, (size_t)n_in * 4);
        else if (type == PL_TYPE_F16) for (int64_t i = 0; i < n_in; i++) ((uint16_t *)dst)[i] = pl_f32_to_f16(f[i]);
        else t->from_float(f, dst, n_in, t->requires_imatrix ? ones : NULL);
    }
    const pl_weight w = {.name = "exps", .data = d, .type = type, .n_in = n_in, .n_out = n_out,
                         .row_bytes = (size_t)row, .n_expert = n_exp, .expert_bytes = eb};
    /* the same expert twice for one token, the last expert, the first */
    const int32_t ids[4 * 3] = {0, 5, 2, 3, 3, 1, 5, 0, 4, 2, 1, 0};
    for (int slots = 0; slots < 2; slots++) {
        const int64_t xs = slots ? k : 1;
        float *x = rnd(n_tok * xs * n_in, -2, 2), *y = rnd(n_tok * k * n_out, 0, 0), *want = rnd(n_out, 0, 0);
        CHECK(pl_ref_mul_mat_id(&w, x, xs, ids, k, n_tok, y) == POCKETLLM_OK);
        for (int64_t tk = 0; tk < n_tok; tk++)
            for (int64_t j = 0; j < k; j++) {
                const pl_weight one = {.name = "one", .data = d + (size_t)ids[tk * k + j] * eb, .type = type,
                                       .n_in = n_in, .n_out = n_out, .row_bytes = (size_t)row};
                CHECK(pl_ref_mul_mat(&one, x + (slots ? tk * k + j : tk) * n_in, 1, want) == POCKETLLM_OK);
                CHECK_MSG(memcmp(want, y + (tk * k + j) * n_out, (size_t)n_out * 4) == 0, "%s token %lld slot %lld",
                          t->name, (long long)tk, (long long)j);
            }
        free(x), free(y), free(want);
    }
    /* bad ids and slot counts are refused */
    float x[256] = {0}, y[3 * 24];
    const int32_t bad[3] = {0, 6, 1}, neg[3] = {-1, 0, 1};
    CHECK(pl_ref_mul_mat_id(&w, x, 1, bad, k, 1, y) == POCKETLLM_ERR_INVALID_ARGUMENT);
    CHECK(pl_ref_mul_mat_id(&w, x, 1, neg, k, 1, y) == POCKETLLM_ERR_INVALID_ARGUMENT);
    CHECK(pl_ref_mul_mat_id(&w, x, 2, ids, k, 1, y) == POCKETLLM_ERR_INVALID_ARGUMENT);
    free(d), free(f), free(ones);
}

static void test_sum_gate(void) {
    /* values exact in f32: the sum's order cannot hide */
    const float e[2 * 3 * 2] = {1, 10, 2, 20, 3, 30, -1, 4, 0.5f, 8, 16, 0};
    const float w[2 * 3] = {0.5f, 0.25f, 2, 1, 1, 0.125f};
    float y[4];
    pl_ref_moe_sum(e, w, y, 2, 3, 2);
    CHECK(y[0] == 7.0f && y[1] == 70.0f && y[2] == 1.5f && y[3] == 12.0f);
    /* left to right in f32: (1e8 + 1) - 1e8 is 0 in f32, 1 in any other order */
    const float e2[3] = {1e8f, 1, -1e8f}, w2[3] = {1, 1, 1};
    pl_ref_moe_sum(e2, w2, y, 1, 3, 1);
    CHECK(y[0] == 0.0f);

    const int64_t rows = 7, n = 5;
    float *x = rnd(rows * n, -3, 3), *g = rnd(rows, -8, 8), *yg = rnd(rows * n, 0, 0);
    pl_ref_sigmoid_gate(x, g, yg, rows, n);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t i = 0; i < n; i++) {
            const double want = x[r * n + i] / (1.0 + exp(-(double)g[r]));
            CHECK_MSG(fabs(yg[r * n + i] - want) <= 4e-7 * fabs(want) + 1e-9, "%g vs %g", (double)yg[r * n + i], want);
        }
    free(x), free(g), free(yg);
}

int main(void) {
    pl_rng_seed(&rng, 17);
    test_argsort();
    test_route();
    const uint32_t types[] = {PL_TYPE_F32, PL_TYPE_F16, PL_TYPE_Q8_0, PL_TYPE_Q4_0, PL_TYPE_Q4_K,
                              PL_TYPE_Q3_K, PL_TYPE_Q2_K, PL_TYPE_Q6_K, PL_TYPE_IQ2_XXS, PL_TYPE_IQ4_XS};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) test_mul_mat_id(types[i]);
    test_sum_gate();
    TEST_DONE();
}
