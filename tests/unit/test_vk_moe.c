/*
 * test_vk_moe.c -- the Vulkan backend's mixture-of-experts ops against the
 * scalar reference (src/ops/ref_moe.c), each with its stated tolerance:
 *
 *   moe_route     ids exactly the reference's, weights within 6 ulps.  The
 *                 device's probabilities are within 2 ulps of the
 *                 reference's (its exp is within an ulp of libm's expf --
 *                 checked exhaustively on the host; the sum, reciprocal and
 *                 product round as the reference's do), so on random logits
 *                 two experts may trade places only where the reference's
 *                 own probabilities are within 4 ulps: such a swap is
 *                 allowed, counted and reported, nothing else is.  The
 *                 weights add the renormalisation (a sum of k such values,
 *                 a division) and the scale: 6 ulps.  Exact ties (all
 *                 logits equal, groups of equal ones, a NaN) follow the
 *                 reference's introsort: ids exactly.
 *   moe_ffn       in stages, because the 8-bit rounding of the down
 *                 products' input turns a last-bit difference of h into a
 *                 whole step of its block: h = silu(gate x) (up x) within
 *                 test_vk_types' product tolerance (1e-4 of sum |w x|, plus
 *                 1e-6) carried through silu_mul (|silu'| <= 1.1) plus
 *                 test_vk_ops' silu_mul bound (1e-5 relative + 1e-6); then
 *                 y within the same product tolerance of the reference's down
 *                 products of the device's own h, weighted by |w| and summed
 *                 (plus k ulps of the sum); and y within 1e-3 of the
 *                 reference end to end, as a norm (a wrong expert, weight or
 *                 slot is off by far more).  Expert products bit for bit
 *                 pl_vk_mul_mat's on the expert's matrix where both take the
 *                 same shader (decode; an expert with over 16 tokens).
 *   sigmoid_gate  within 6 ulps, and bit for bit in all but a few values in
 *                 a thousand: the device's exp is within one ulp of libm's
 *                 (0.3% of arguments differ), and one ulp of e^-g moves
 *                 1 + e^-g by one, which the two divisions and the product
 *                 can grow to 5 (the worst over every float gate, on the
 *                 host).
 *
 * moe_ffn runs every shape through both paths (a matrix-vector row per
 * pair for 16 tokens or fewer, the grouped GEMM above), for gate/up/down in
 * f32, f16, bf16, q8_0, q4_0, q4_K, q5_K, q6_K, q2_K, q3_K, iq2_xxs, iq4_nl
 * and q4_K/q4_K/q6_K, with and without int8 dot products; routing at
 * random, skewed (one expert in every token's first slot: more than a
 * tile) and with experts no token chose.  Also: the observer sees the
 * input rows and the h rows, ids out of range touch nothing outside the
 * tensor and change no other token, a pass is one submission, and the
 * scratch limits are enforced.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/quant_testdata.h"
#include "../common/vk_test.h"
#include "backend/vulkan/vk_compute.h"
#include "base/rng.h"
#include "ops/ref.h"
#include "pltest.h"
#include "quant/types.h"

static pl_rng rng;
static vkt T;
static bool verbose;

#define N_BATCH 300
#define N_EMBD 256
#define N_FF 256
#define MAX_USED 8

/* ---- helpers ------------------------------------------------------------------ */

static float *rnd(int64_t n, float lo, float hi) {
    float *f = malloc((size_t)(n > 0 ? n : 1) * sizeof *f);
    for (int64_t i = 0; i < n; i++) f[i] = lo + (hi - lo) * pl_rng_uniform(&rng);
    return f;
}

static void *dev(const void *h, size_t bytes) { return vkt_buf(&T, h, bytes); }

static void drop(void *d) { T.c->ops->release(T.c, d); }

/* ---- moe_route ------------------------------------------------------------------ */

static int64_t route_swaps, route_worst_w;

static void check_route(int64_t ne, int64_t k, bool norm, float scale, const float *lg, int64_t n_tok, bool exact,
                        const char *what) {
    const pl_moe_route_params p = {ne, k, norm, scale};
    int32_t *ids = malloc(sizeof(int32_t) * (size_t)(n_tok * k)), *gids = malloc(sizeof(int32_t) * (size_t)(n_tok * k));
    float *w = malloc(sizeof(float) * (size_t)(n_tok * k)), *gw = malloc(sizeof(float) * (size_t)(n_tok * k));
    float prob[PL_MAX_EXPERTS];
    pl_ref_moe_route(&p, lg, n_tok, ids, w);
    float *dl = dev(lg, sizeof(float) * (size_t)(n_tok * ne));
    int32_t *di = vkt_out(&T, sizeof(int32_t) * (size_t)(n_tok * k));
    float *dw = vkt_out(&T, sizeof(float) * (size_t)(n_tok * k));
    T.c->ops->moe_route(T.c, &p, dl, n_tok, di, dw);
    int st = vkt_get(&T, gids, di, sizeof(int32_t) * (size_t)(n_tok * k));
    if (!st) st = vkt_get(&T, gw, dw, sizeof(float) * (size_t)(n_tok * k));
    CHECK_MSG(st == 0, "moe_route %s: %s", what, pocketllm_last_error());
    int64_t bad_id = -1, bad_w = -1;
    for (int64_t t = 0; st == 0 && t < n_tok; t++) {
        pl_ref_softmax(lg + t * ne, prob, ne);
        for (int64_t j = 0; j < k; j++) {
            const int64_t i = t * k + j;
            const int32_t a = ids[i], b = gids[i];
            if (a != b) {
                /* a near-tie of the reference's own probabilities (random logits only) */
                const bool near = !exact && b >= 0 && b < ne && vkt_ulps(prob[a], prob[b]) <= 4;
                if (near) route_swaps++;
                else if (bad_id < 0) bad_id = i;
            }
            const int64_t u = vkt_ulps(w[i], gw[i]);
            if (u > route_worst_w && u != INT64_MAX) route_worst_w = u;
            if (u > 6 && bad_w < 0) bad_w = i;
        }
    }
    CHECK_MSG(bad_id < 0,
              "moe_route %s (%lld of %lld, norm %d, scale %g): token %lld slot %lld: expert %d, the reference's %d",
              what, (long long)k, (long long)ne, norm, (double)scale, (long long)(bad_id / k), (long long)(bad_id % k),
              bad_id >= 0 ? gids[bad_id] : 0, bad_id >= 0 ? ids[bad_id] : 0);
    CHECK_MSG(bad_w < 0, "moe_route %s (%lld of %lld, norm %d, scale %g): weight [%lld] %.9g, the reference's %.9g", what,
              (long long)k, (long long)ne, norm, (double)scale, (long long)bad_w, bad_w >= 0 ? gw[bad_w] : 0.0,
              bad_w >= 0 ? w[bad_w] : 0.0);
    drop(dl), drop(di), drop(dw);
    vkt_reset(&T);
    free(ids), free(gids), free(w), free(gw);
}

static void test_route(void) {
    static const int64_t nes[] = {8, 60, 128, 256}, ks[] = {1, 4, 8};
    const int64_t n_tok = 200;
    for (size_t a = 0; a < 4; a++)
        for (size_t b = 0; b < 3; b++) {
            const int64_t ne = nes[a], k = ks[b];
            if (k > ne) continue;
            float *lg = rnd(n_tok * ne, -6, 6);
            for (int norm = 0; norm < 2; norm++)
                for (int sc = 0; sc < 3; sc++) check_route(ne, k, norm, sc == 0 ? 0.0f : sc == 1 ? 1.0f : 2.5f, lg, n_tok, false, "random");
            /* exact ties: all equal; groups of equal values (the first k
             * reach into a group); a group at the top; a NaN */
            for (int64_t t = 0; t < n_tok; t++) {
                float *l = lg + t * ne;
                const int kind = (int)(t % 4);
                for (int64_t e = 0; e < ne; e++) {
                    if (kind == 0) l[e] = 0.75f;
                    else if (kind == 1) l[e] = 0.5f * (float)pl_rng_below(&rng, 4);
                    else if (kind == 2) l[e] = e % 5 == 1 ? 3.0f : -4.0f + 6.0f * pl_rng_uniform(&rng);
                    else l[e] = -2.0f + (float)pl_rng_below(&rng, 3);
                }
                if (kind == 3 && t % 8 == 3) l[pl_rng_below(&rng, (uint64_t)ne)] = NAN;
            }
            check_route(ne, k, true, 0.0f, lg, n_tok, true, "ties");
            check_route(ne, k, false, 2.5f, lg, n_tok, true, "ties");
            free(lg);
        }
    /* parameters the op refuses */
    const pl_moe_route_params bad = {4, 5, true, 0.0f};
    float *dl = vkt_out(&T, 64);
    int32_t *di = vkt_out(&T, 64);
    T.c->ops->moe_route(T.c, &bad, dl, 1, di, (float *)di);
    CHECK(T.c->status == POCKETLLM_ERR_INVALID_ARGUMENT);
    vkt_reset(&T);
    drop(dl), drop(di);
    fprintf(stderr, "moe_route: weights within %lld ulps; %lld near-tie swaps of the reference's probabilities\n",
            (long long)route_worst_w, (long long)route_swaps);
}

/* ---- sigmoid_gate ------------------------------------------------------------------ */

static void test_sigmoid_gate(void) {
    static const int64_t shapes[][2] = {{1, 1}, {7, 64}, {300, 257}, {2048, 16}};
    int64_t worst = 0, over2 = 0, all = 0;
    for (size_t s = 0; s < 4; s++) {
        const int64_t rows = shapes[s][0], n = shapes[s][1];
        float *x = rnd(rows * n, -4, 4), *g = rnd(rows, -12, 12), *ref = rnd(rows * n, 0, 0), *got = rnd(rows * n, 0, 0);
        for (int64_t r = 0; r < rows; r += 5) g[r] = r % 3 ? 1e-3f * g[r] : 9.0f * g[r]; /* small and large gates */
        if (rows > 2) g[1] = 0.0f;                                                    /* NaN, as the reference */
        pl_ref_sigmoid_gate(x, g, ref, rows, n);
        float *dx = dev(x, sizeof(float) * (size_t)(rows * n)), *dg = dev(g, sizeof(float) * (size_t)rows);
        float *dy = vkt_out(&T, sizeof(float) * (size_t)(rows * n));
        T.c->ops->sigmoid_gate(T.c, dx, dg, dy, rows, n);
        int st = vkt_get(&T, got, dy, sizeof(float) * (size_t)(rows * n));
        CHECK_MSG(st == 0, "sigmoid_gate: %s", pocketllm_last_error());
        for (int64_t i = 0; st == 0 && i < rows * n; i++) {
            const int64_t u = vkt_ulps(ref[i], got[i]);
            CHECK_MSG(u <= 6, "sigmoid_gate %lldx%lld [%lld]: %.9g, the reference's %.9g", (long long)rows, (long long)n,
                      (long long)i, (double)got[i], (double)ref[i]);
            worst = u > worst ? u : worst;
            over2 += u > 2;
            all++;
        }
        drop(dx), drop(dg), drop(dy);
        vkt_reset(&T);
        free(x), free(g), free(ref), free(got);
    }
    CHECK_MSG(over2 * 200 <= all, "sigmoid_gate: %lld of %lld values beyond 2 ulps", (long long)over2, (long long)all);
    fprintf(stderr, "sigmoid_gate: within %lld ulps, %lld of %lld values beyond 2\n", (long long)worst, (long long)over2,
            (long long)all);
}

/* ---- moe_ffn ------------------------------------------------------------------ */

/* host weights stay registered with the device (their address is the
 * key) until it closes: freed at the end */
static void *kept[64];
static size_t n_kept;

/* An expert tensor: n_expert matrices of n_out rows of n_in, uploaded. */
static pl_weight experts(uint32_t type, int64_t n_in, int64_t n_out, int64_t n_expert, const char *name) {
    const pl_type_traits *t = pl_type_get(type);
    uint64_t rb;
    pl_type_row_bytes(type, (uint64_t)n_in, &rb);
    const int64_t rows = n_out * n_expert;
    uint8_t *data = malloc((size_t)rb * (size_t)rows + 64);
    if (type == PL_TYPE_F32 || type == PL_TYPE_F16 || type == PL_TYPE_BF16) {
        float *f = malloc((size_t)n_in * sizeof *f);
        for (int64_t r = 0; r < rows; r++) {
            qt_gen_floats(&rng, f, n_in, (int)(r % 2));
            t->from_float(f, data + (size_t)r * rb, n_in, NULL);
        }
        free(f);
    } else {
        qt_gen_blocks(type, QT_RANDOM, &rng, data, rows * n_in / t->block);
    }
    CHECK(vkt_weight(&T, data, (size_t)rb * (size_t)rows) == POCKETLLM_OK);
    if (n_kept < sizeof kept / sizeof kept[0]) kept[n_kept++] = data;
    else abort();
    return (pl_weight){.name = name, .data = data, .type = type, .n_in = n_in, .n_out = n_out, .row_bytes = (size_t)rb,
                       .n_expert = n_expert, .expert_bytes = (size_t)rb * (size_t)n_out};
}

/* mag[p][o] = sum_i |w_i x_i| over output o of expert ids[p] and x row
 * p / x_div, for the pairs p < n (each expert decoded once) */
static double *magnitudes(const pl_weight *w, const int32_t *ids, int64_t n, const float *x, int64_t x_div) {
    double *mag = malloc(sizeof(double) * (size_t)(n * w->n_out));
    float *m = malloc(sizeof(float) * (size_t)(w->n_out * w->n_in));
    int32_t *rows = malloc(sizeof(int32_t) * (size_t)w->n_out);
    for (int64_t o = 0; o < w->n_out; o++) rows[o] = (int32_t)o;
    for (int64_t e = 0; e < w->n_expert; e++) {
        bool decoded = false;
        for (int64_t p = 0; p < n; p++) {
            if (ids[p] != e) continue;
            if (!decoded) {
                const pl_weight v = pl_weight_expert(w, e);
                pl_ref_get_rows(&v, rows, w->n_out, m);
                decoded = true;
            }
            const float *xr = x + (p / x_div) * w->n_in;
            for (int64_t o = 0; o < w->n_out; o++) {
                double s = 0;
                for (int64_t i = 0; i < w->n_in; i++) s += fabs((double)m[o * w->n_in + i] * (double)xr[i]);
                mag[p * w->n_out + o] = s;
            }
        }
    }
    free(m), free(rows);
    return mag;
}

/* the root mean square of expert 0's weights */
static double rms(const pl_weight *w) {
    const pl_weight v = pl_weight_expert(w, 0);
    float *row = malloc(sizeof(float) * (size_t)w->n_in);
    double s = 0;
    for (int32_t o = 0; o < (int32_t)w->n_out; o++) {
        pl_ref_get_rows(&v, &o, 1, row);
        for (int64_t i = 0; i < w->n_in; i++) s += (double)row[i] * row[i];
    }
    free(row);
    return sqrt(s / (double)(w->n_in * w->n_out));
}

enum { ROUTE_RANDOM, ROUTE_SKEW, ROUTE_EVEN };

/* n_used distinct experts per token; ROUTE_SKEW puts expert 3 first in
 * every token, ROUTE_EVEN uses only even experts (half never chosen) */
static int32_t *routing(int64_t n_tok, int64_t k, int64_t ne, int mode) {
    int32_t *ids = malloc(sizeof(int32_t) * (size_t)(n_tok * k));
    for (int64_t t = 0; t < n_tok; t++)
        for (int64_t j = 0; j < k; j++) {
            int32_t e;
            bool again;
            do {
                e = (int32_t)pl_rng_below(&rng, (uint64_t)ne);
                if (mode == ROUTE_EVEN) e &= ~1;
                if (mode == ROUTE_SKEW && j == 0) e = 3;
                again = mode == ROUTE_SKEW && j > 0 && e == 3;
                for (int64_t i = 0; i < j; i++) again = again || ids[t * k + i] == e;
            } while (again);
            ids[t * k + j] = e;
        }
    return ids;
}

typedef struct ffn_case {
    const pl_moe_ffn_weights *e;
    int64_t n_tok, k;
    int mode;
    bool bits; /* compare the expert products with pl_vk_mul_mat's */
    const char *what;
} ffn_case;

/* rows of expert e's product (w's) over the rows `x` (x_slots per token)
 * of the pairs routed to it, by pl_vk_mul_mat, against the device's own
 * rows `got` of moe_ffn: bit for bit where both take the same shader */
static void check_bits(const pl_weight *w, const int32_t *ids, int64_t n_tok, int64_t k, const float *x, int64_t xs,
                       const float *got, const char *what) {
    float *rows = malloc(sizeof(float) * (size_t)(n_tok * k * w->n_in));
    int64_t *which = malloc(sizeof(int64_t) * (size_t)(n_tok * k));
    const bool grouped = pl_vk_moe_grouped(pl_vkc(T.c), n_tok, k, w->n_expert);
    for (int64_t e = 0; e < w->n_expert; e++) {
        int64_t n = 0;
        for (int64_t i = 0; i < n_tok * k; i++)
            if (ids[i] == e) {
                memcpy(rows + n * w->n_in, x + (xs == 1 ? i / k : i) * w->n_in, sizeof(float) * (size_t)w->n_in);
                which[n++] = i;
            }
        /* the same shader: the GEMM for both or the matrix-vector one for both */
        if (n == 0 || grouped != pl_vk_use_gemm(pl_vkc(T.c), n)) continue;
        const pl_weight v = pl_weight_expert(w, e);
        float *dx = dev(rows, sizeof(float) * (size_t)(n * w->n_in)), *dy = vkt_out(&T, sizeof(float) * (size_t)(n * w->n_out));
        float *y = malloc(sizeof(float) * (size_t)(n * w->n_out));
        T.c->ops->mul_mat(T.c, &v, dx, n, dy);
        int st = vkt_get(&T, y, dy, sizeof(float) * (size_t)(n * w->n_out));
        CHECK_MSG(st == 0, "%s: %s", what, pocketllm_last_error());
        int64_t bad = -1;
        for (int64_t r = 0; st == 0 && r < n && bad < 0; r++)
            if (memcmp(y + r * w->n_out, got + which[r] * w->n_out, sizeof(float) * (size_t)w->n_out)) bad = which[r];
        CHECK_MSG(bad < 0, "%s: %s of expert %lld, pair %lld: not mul_mat's bits", what, w->name, (long long)e, (long long)bad);
        drop(dx), drop(dy);
        free(y);
    }
    free(rows), free(which);
}

static void run_ffn(const ffn_case *cs) {
    const pl_moe_ffn_weights *e = cs->e;
    const int64_t n_tok = cs->n_tok, k = cs->k, ne = e->gate->n_expert, pairs = n_tok * k;
    const int64_t n_in = e->gate->n_in, n_ff = e->gate->n_out, n_out = e->down->n_out;
    /* gate products of a few units (random blocks have scales up to 16:
     * unscaled, h would overflow the f16 scale of its 8-bit blocks) */
    const double xs = 3.0 / (rms(e->gate) * sqrt((double)n_in));
    float *x = malloc(sizeof(float) * (size_t)(n_tok * n_in));
    for (int64_t t = 0; t < n_tok; t++) qt_gen_floats(&rng, x + t * n_in, n_in, (int)(t % 3));
    for (int64_t i = 0; i < n_tok * n_in; i++) x[i] = (float)(x[i] * xs);
    int32_t *ids = routing(n_tok, k, ne, cs->mode);
    float *w = rnd(pairs, 0.05f, 1.0f);
    float *y = malloc(sizeof(float) * (size_t)(n_tok * n_out)), *h = malloc(sizeof(float) * (size_t)(pairs * n_ff));
    float *u = malloc(sizeof(float) * (size_t)(pairs * n_ff)), *d = malloc(sizeof(float) * (size_t)(pairs * n_out));

    pl_vk_compute *vc = pl_vkc(T.c);
    float *dx = dev(x, sizeof(float) * (size_t)(n_tok * n_in)), *dw = dev(w, sizeof(float) * (size_t)pairs);
    int32_t *di = dev(ids, sizeof(int32_t) * (size_t)pairs);
    float *dy = vkt_out(&T, sizeof(float) * (size_t)(n_tok * n_out));
    vkt_get(&T, y, dy, 4); /* (the uploads done: count this pass alone) */
    const uint64_t d0 = vc->n_dispatch, s0 = vc->n_submit;
    T.c->ops->moe_ffn(T.c, e, dx, di, dw, k, n_tok, dy, NULL, 0);
    const uint64_t n_disp = vc->n_dispatch - d0;
    CHECK_MSG(vc->n_submit == s0, "%s: moe_ffn submitted work before its result was asked for", cs->what);
    int st = vkt_get(&T, y, dy, sizeof(float) * (size_t)(n_tok * n_out));
    if (!st) st = vkt_get(&T, h, vc->moe_gu, sizeof(float) * (size_t)(pairs * n_ff));
    if (!st) st = vkt_get(&T, u, vc->moe_gu + vc->moe_pairs * N_FF, sizeof(float) * (size_t)(pairs * n_ff));
    if (!st) st = vkt_get(&T, d, vc->moe_d, sizeof(float) * (size_t)(pairs * n_out));
    CHECK_MSG(st == 0, "%s: %s", cs->what, pocketllm_last_error());
    const bool grouped = pl_vk_moe_grouped(vc, n_tok, k, ne);
    /* quant_act or round_act x (none for f32; two when gate and up differ),
     * gate, up, silu_mul, the same for h, down, the sum, and the grouping */
    const int conv_gu = e->gate->type == PL_TYPE_F32 ? 0 : 1, conv_d = e->down->type == PL_TYPE_F32 ? 0 : 1;
    const uint64_t want = (uint64_t)(conv_gu + 2 + 1 + conv_d + 1 + 1 + grouped);
    if (e->gate->type == e->up->type) CHECK_MSG(n_disp == want, "%s: %llu dispatches, expected %llu", cs->what,
                                                (unsigned long long)n_disp, (unsigned long long)want);

    if (st == 0) {
        /* stage 1: h against the reference's gate and up products */
        float *g_ref = malloc(sizeof(float) * (size_t)(pairs * n_ff)), *u_ref = malloc(sizeof(float) * (size_t)(pairs * n_ff));
        double *mg = magnitudes(e->gate, ids, pairs, x, k), *mu = magnitudes(e->up, ids, pairs, x, k);
        CHECK(pl_ref_mul_mat_id(e->gate, x, 1, ids, k, n_tok, g_ref) == POCKETLLM_OK);
        CHECK(pl_ref_mul_mat_id(e->up, x, 1, ids, k, n_tok, u_ref) == POCKETLLM_OK);
        int64_t bad = -1;
        double worst = 0;
        for (int64_t p = 0; p < pairs; p++) {
            for (int64_t i = 0; i < n_ff; i++) {
                const double gr = g_ref[p * n_ff + i], ur = u_ref[p * n_ff + i];
                const double tg = 1e-4 * mg[p * n_ff + i] + 1e-6, tu = 1e-4 * mu[p * n_ff + i] + 1e-6;
                const double sg = gr / (1.0 + exp(-gr)), hr = sg * ur;
                const double tol = 1.1 * tg * fabs(ur) + fabs(sg) * tu + tg * tu + 1e-5 * fabs(hr) + 1e-6;
                const double err = fabs(h[p * n_ff + i] - hr) / tol;
                if (!(err <= 1) && bad < 0) bad = p * n_ff + i;
                if (err > worst) worst = err;
            }
        }
        CHECK_MSG(bad < 0, "%s: h[%lld] %.9g, the reference's %.9g", cs->what, (long long)bad,
                  bad >= 0 ? h[bad] : 0.0, bad >= 0 ? g_ref[bad] / (1.0 + exp(-g_ref[bad])) * u_ref[bad] : 0.0);
        /* stage 2: y against the reference's down products of the device's h */
        float *d_ref = malloc(sizeof(float) * (size_t)(pairs * n_out)), *y_ref = malloc(sizeof(float) * (size_t)(n_tok * n_out));
        double *md = magnitudes(e->down, ids, pairs, h, 1);
        CHECK(pl_ref_mul_mat_id(e->down, h, k, ids, k, n_tok, d_ref) == POCKETLLM_OK);
        pl_ref_moe_sum(d_ref, w, y_ref, n_tok, k, n_out);
        int64_t bad_y = -1;
        double worst_y = 0;
        for (int64_t t = 0; t < n_tok; t++)
            for (int64_t o = 0; o < n_out; o++) {
                double tol = 0, sum = 0;
                for (int64_t j = 0; j < k; j++) {
                    const int64_t p = t * k + j;
                    tol += w[p] * (1e-4 * md[p * n_out + o] + 1e-6);
                    sum += fabs(w[p] * d_ref[p * n_out + o]);
                }
                tol += (double)k * sum * 0x1p-23;
                const double err = fabs(y[t * n_out + o] - y_ref[t * n_out + o]) / tol;
                if (!(err <= 1) && bad_y < 0) bad_y = t * n_out + o;
                if (err > worst_y) worst_y = err;
            }
        CHECK_MSG(bad_y < 0, "%s: y[%lld] %.9g, the reference's from the device's h %.9g", cs->what, (long long)bad_y,
                  bad_y >= 0 ? y[bad_y] : 0.0, bad_y >= 0 ? y_ref[bad_y] : 0.0);
        /* end to end, as a norm */
        CHECK(pl_ref_moe_ffn(e, x, ids, w, k, n_tok, y_ref) == POCKETLLM_OK);
        const double rel = vkt_rel_l2(y, y_ref, n_tok * n_out);
        CHECK_MSG(rel <= 1e-3, "%s: |y - ref| / |ref| = %.3g", cs->what, rel);
        if (verbose)
            fprintf(stderr, "  %-26s n_tok %3lld k %lld of %3lld %-7s: h %.3f y %.3f of tolerance, end to end %.2g, "
                            "%llu dispatches\n", cs->what, (long long)n_tok, (long long)k, (long long)ne,
                    grouped ? "grouped" : "rows", worst, worst_y, rel, (unsigned long long)n_disp);
        if (cs->bits) {
            check_bits(e->up, ids, n_tok, k, x, 1, u, cs->what);
            check_bits(e->down, ids, n_tok, k, h, k, d, cs->what);
        }
        free(g_ref), free(u_ref), free(mg), free(mu), free(d_ref), free(y_ref), free(md);
    }
    drop(dx), drop(dw), drop(di), drop(dy);
    vkt_reset(&T);
    free(x), free(ids), free(w), free(y), free(h), free(u), free(d);
}

/* the weights viewed as a tensor of its first n experts */
static pl_moe_ffn_weights first(const pl_moe_ffn_weights *e, int64_t n, pl_weight v[3]) {
    v[0] = *e->gate, v[1] = *e->up, v[2] = *e->down;
    for (int i = 0; i < 3; i++) v[i].n_expert = n;
    return (pl_moe_ffn_weights){&v[0], &v[1], &v[2]};
}

static void test_ffn_types(bool has_dot) {
    static const uint32_t types[][3] = {
        {PL_TYPE_F32, PL_TYPE_F32, PL_TYPE_F32},          {PL_TYPE_F16, PL_TYPE_F16, PL_TYPE_F16},
        {PL_TYPE_BF16, PL_TYPE_BF16, PL_TYPE_BF16},       {PL_TYPE_Q8_0, PL_TYPE_Q8_0, PL_TYPE_Q8_0},
        {PL_TYPE_Q4_0, PL_TYPE_Q4_0, PL_TYPE_Q4_0},       {PL_TYPE_Q4_K, PL_TYPE_Q4_K, PL_TYPE_Q4_K},
        {PL_TYPE_Q5_K, PL_TYPE_Q5_K, PL_TYPE_Q5_K},       {PL_TYPE_Q6_K, PL_TYPE_Q6_K, PL_TYPE_Q6_K},
        {PL_TYPE_Q2_K, PL_TYPE_Q2_K, PL_TYPE_Q2_K},       {PL_TYPE_Q3_K, PL_TYPE_Q3_K, PL_TYPE_Q3_K},
        {PL_TYPE_IQ2_XXS, PL_TYPE_IQ2_XXS, PL_TYPE_IQ2_XXS}, {PL_TYPE_IQ4_NL, PL_TYPE_IQ4_NL, PL_TYPE_IQ4_NL},
        {PL_TYPE_Q4_K, PL_TYPE_Q4_K, PL_TYPE_Q6_K},       {PL_TYPE_F16, PL_TYPE_Q8_0, PL_TYPE_Q4_K},
    };
    pl_vk_device *d = (pl_vk_device *)T.dev;
    const bool saved = d->no_int_dot;
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
#ifdef PL_SANITIZE_BUILD
        /* The sanitizers check the host code, which is the same for every
         * weight type (the shaders run in lavapipe, uninstrumented): the
         * sanitizer pass takes a float, a k-quant, an i-quant and the two
         * mixes; the release pass runs every type. */
        if (ti != 1 && ti != 5 && ti != 10 && ti != 12 && ti != 13) continue;
#endif
        const uint32_t *ty = types[ti];
        const bool flt = ty[0] == PL_TYPE_F32 || ty[0] == PL_TYPE_F16 || ty[0] == PL_TYPE_BF16;
        const int64_t ne = flt ? 16 : 128; /* (float experts are big) */
        pl_weight gate = experts(ty[0], N_EMBD, N_FF, ne, "gate_exps");
        pl_weight up = experts(ty[1], N_EMBD, N_FF, ne, "up_exps");
        pl_weight down = experts(ty[2], N_FF, N_EMBD, ne, "down_exps");
        const pl_moe_ffn_weights all = {&gate, &up, &down};
        pl_weight v8[3], v16[3];
        const pl_moe_ffn_weights e8 = first(&all, 8, v8), e16 = first(&all, 16, v16);
        char what[80];
        const bool quant = !flt || ty[1] != ty[0];
        for (int dot = 0; dot < 2; dot++) {
            if (dot && !(quant && has_dot)) continue;
            d->no_int_dot = !dot;
            /* mul_mat's bits in one of the two (its pipelines take time to make) */
            const bool bits = dot == (quant && has_dot);
            snprintf(what, sizeof what, "%s/%s/%s%s", pl_type_get(ty[0])->name, pl_type_get(ty[1])->name,
                     pl_type_get(ty[2])->name, quant ? (dot ? " dot" : " nodot") : "");
            const ffn_case cases[] = {
                {&all, 1, 8, ROUTE_RANDOM, bits, what},
                {&e16, 2, 2, ROUTE_RANDOM, false, what},
                {&e8, 7, 1, ROUTE_EVEN, bits, what},
                {&e8, 17, 8, ROUTE_RANDOM, bits, what},
                {&all, 17, flt ? 2 : 8, ROUTE_RANDOM, false, what},
                {&e16, 64, 2, ROUTE_SKEW, bits, what},
            };
            for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) run_ffn(&cases[ci]);
            /* a batch of several tiles, one expert in every token */
            if (ti == 0 || ti == 5 || ti == 12) {
                const ffn_case big = {&e16, 300, 2, ROUTE_SKEW, false, what};
                run_ffn(&big);
            }
        }
    }
    d->no_int_dot = saved;
}

/* ---- the observer, bad ids, limits ------------------------------------------ */

typedef struct obs_rec {
    int calls;
    const pl_weight *w[3];
    int64_t x_slots[3], n_used[3], n_tok[3];
    float *x[3];
    int32_t *ids[3];
} obs_rec;

static void observer(void *user, pl_compute *c, const pl_weight *w, const float *x, int64_t x_slots, const int32_t *ids,
                     int64_t n_used, int64_t n_tok) {
    obs_rec *r = user;
    if (r->calls >= 3) {
        r->calls++;
        return;
    }
    const int i = r->calls++;
    r->w[i] = w, r->x_slots[i] = x_slots, r->n_used[i] = n_used, r->n_tok[i] = n_tok;
    r->x[i] = malloc(sizeof(float) * (size_t)(n_tok * x_slots * w->n_in));
    r->ids[i] = malloc(sizeof(int32_t) * (size_t)(n_tok * n_used));
    c->ops->download(c, r->x[i], x, sizeof(float) * (size_t)(n_tok * x_slots * w->n_in));
    c->ops->download(c, r->ids[i], ids, sizeof(int32_t) * (size_t)(n_tok * n_used));
}

/* y of moe_ffn (and h, when asked) for host inputs */
static int ffn_once(const pl_moe_ffn_weights *e, const float *x, const int32_t *ids, const float *w, int64_t k,
                    int64_t n_tok, float *y, float *h) {
    const int64_t n_in = e->gate->n_in, n_out = e->down->n_out;
    float *dx = dev(x, sizeof(float) * (size_t)(n_tok * n_in)), *dw = dev(w, sizeof(float) * (size_t)(n_tok * k));
    int32_t *di = dev(ids, sizeof(int32_t) * (size_t)(n_tok * k));
    float *dy = vkt_out(&T, sizeof(float) * (size_t)(n_tok * n_out));
    T.c->ops->moe_ffn(T.c, e, dx, di, dw, k, n_tok, dy, NULL, 0);
    int st = vkt_get(&T, y, dy, sizeof(float) * (size_t)(n_tok * n_out));
    if (!st && h) st = vkt_get(&T, h, pl_vkc(T.c)->moe_gu, sizeof(float) * (size_t)(n_tok * k * e->gate->n_out));
    drop(dx), drop(dw), drop(di), drop(dy);
    return st;
}

static void test_observer_and_ids(void) {
    pl_weight gate = experts(PL_TYPE_Q4_K, N_EMBD, N_FF, 16, "gate_exps");
    pl_weight up = experts(PL_TYPE_Q4_K, N_EMBD, N_FF, 16, "up_exps");
    pl_weight down = experts(PL_TYPE_Q6_K, N_FF, N_EMBD, 16, "down_exps");
    const pl_moe_ffn_weights e = {&gate, &up, &down};
    const double xs = 3.0 / (rms(&gate) * 16.0);
    static const int64_t toks[] = {5, 40};
    for (int ti = 0; ti < 2; ti++) {
        const int64_t n_tok = toks[ti], k = 4, pairs = n_tok * k;
        float *x = rnd(n_tok * N_EMBD, (float)-xs, (float)xs), *w = rnd(pairs, 0.1f, 1.0f);
        int32_t *ids = routing(n_tok, k, 16, ROUTE_RANDOM);
        float *y0 = malloc(sizeof(float) * (size_t)(n_tok * N_EMBD)), *y1 = malloc(sizeof(float) * (size_t)(n_tok * N_EMBD));
        float *h = malloc(sizeof(float) * (size_t)(pairs * N_FF));
        /* the observer: gate, up (the token rows), down (the h rows) */
        obs_rec r = {0};
        T.c->observe_mul_mat_id = observer, T.c->observe_user = &r;
        int st = ffn_once(&e, x, ids, w, k, n_tok, y0, h);
        T.c->observe_mul_mat_id = NULL, T.c->observe_user = NULL;
        CHECK_MSG(st == 0 && r.calls == 3, "observer (n_tok %lld): %d calls: %s", (long long)n_tok, r.calls,
                  st ? pocketllm_last_error() : "");
        if (st == 0 && r.calls == 3) {
            CHECK(r.w[0] == &gate && r.w[1] == &up && r.w[2] == &down);
            for (int i = 0; i < 3; i++) {
                CHECK(r.x_slots[i] == (i < 2 ? 1 : k) && r.n_used[i] == k && r.n_tok[i] == n_tok);
                CHECK(memcmp(r.ids[i], ids, sizeof(int32_t) * (size_t)pairs) == 0);
            }
            CHECK_MSG(memcmp(r.x[0], x, sizeof(float) * (size_t)(n_tok * N_EMBD)) == 0 &&
                          memcmp(r.x[1], x, sizeof(float) * (size_t)(n_tok * N_EMBD)) == 0,
                      "observer: gate/up rows are not x");
            CHECK_MSG(memcmp(r.x[2], h, sizeof(float) * (size_t)(pairs * N_FF)) == 0, "observer: down rows are not h");
        }
        for (int i = 0; i < 3 && i < r.calls; i++) free(r.x[i]), free(r.ids[i]);
        /* the observer's waits change nothing */
        st = ffn_once(&e, x, ids, w, k, n_tok, y1, NULL);
        CHECK_MSG(st == 0 && memcmp(y0, y1, sizeof(float) * (size_t)(n_tok * N_EMBD)) == 0, "observer changed y");

        /* ids out of range (tokens 1 and 2): as if clamped to the first or
         * the last expert; no other token changes */
        int32_t *bad = malloc(sizeof(int32_t) * (size_t)pairs), *clamped = malloc(sizeof(int32_t) * (size_t)pairs);
        memcpy(bad, ids, sizeof(int32_t) * (size_t)pairs);
        bad[1 * k] = -1, bad[1 * k + 1] = 16, bad[2 * k] = INT32_MIN, bad[2 * k + 2] = 0, bad[2 * k + 3] = 1000000;
        for (int64_t i = 0; i < pairs; i++) clamped[i] = bad[i] < 0 ? 0 : bad[i] > 15 ? 15 : bad[i];
        st = ffn_once(&e, x, bad, w, k, n_tok, y0, NULL);
        CHECK_MSG(st == 0, "ids out of range: %s", pocketllm_last_error());
        if (!st) st = ffn_once(&e, x, clamped, w, k, n_tok, y1, NULL);
        CHECK_MSG(st == 0 && memcmp(y0, y1, sizeof(float) * (size_t)(n_tok * N_EMBD)) == 0,
                  "ids out of range (n_tok %lld) are not the clamped ids", (long long)n_tok);
        /* (token 2 now has expert 0 twice: the reference's sum of both) */
        float *y_ref = malloc(sizeof(float) * (size_t)(n_tok * N_EMBD));
        CHECK(pl_ref_moe_ffn(&e, x, clamped, w, k, n_tok, y_ref) == POCKETLLM_OK);
        const double rel = vkt_rel_l2(y1, y_ref, n_tok * N_EMBD);
        CHECK_MSG(rel <= 1e-3, "a repeated expert (n_tok %lld): |y - ref| / |ref| = %.3g", (long long)n_tok, rel);
        free(y_ref);
        vkt_reset(&T);
        free(x), free(w), free(ids), free(y0), free(y1), free(h), free(bad), free(clamped);
    }

    /* beyond the reserved scratch, n_used beyond the experts, a dense
     * instance: refused with a message, nothing recorded */
    const int64_t n = N_BATCH + 1;
    float *dx = vkt_out(&T, sizeof(float) * (size_t)(n * N_EMBD)), *dw = vkt_out(&T, sizeof(float) * (size_t)(n * 8));
    int32_t *di = vkt_out(&T, sizeof(int32_t) * (size_t)(n * 8));
    float *dy = vkt_out(&T, sizeof(float) * (size_t)(n * N_EMBD));
    T.c->ops->moe_ffn(T.c, &e, dx, di, dw, 8, n, dy, NULL, 0);
    CHECK_MSG(T.c->status == POCKETLLM_ERR_INTERNAL && strstr(pocketllm_last_error(), "scratch"), "%s",
              pocketllm_last_error());
    vkt_reset(&T);
    T.c->ops->moe_ffn(T.c, &e, dx, di, dw, 17, 1, dy, NULL, 0);
    CHECK(T.c->status == POCKETLLM_ERR_INVALID_ARGUMENT);
    vkt_reset(&T);
    const uint64_t moe_bytes = T.c->reserved_bytes;
    pl_compute_limits dense = {.n_batch = N_BATCH, .max_in = N_EMBD, .n_ctx = 64, .head_dim = 64};
    CHECK(T.c->ops->reserve(T.c, &dense) == POCKETLLM_OK && pl_vkc(T.c)->moe_gu == NULL);
    CHECK(T.c->reserved_bytes < moe_bytes);
    T.c->ops->moe_ffn(T.c, &e, dx, di, dw, 2, 1, dy, NULL, 0);
    CHECK_MSG(T.c->status == POCKETLLM_ERR_INTERNAL && strstr(pocketllm_last_error(), "dense"), "%s",
              pocketllm_last_error());
    vkt_reset(&T);
    pl_compute_limits lim = {.n_batch = N_BATCH, .max_in = N_EMBD, .n_ctx = 64, .head_dim = 64,
                             .moe_n_used = MAX_USED, .moe_n_ff = N_FF};
    CHECK(T.c->ops->reserve(T.c, &lim) == POCKETLLM_OK && T.c->reserved_bytes == moe_bytes);
    drop(dx), drop(dw), drop(di), drop(dy);
}

int main(void) {
    pl_rng_seed(&rng, 4242);
    verbose = getenv("PL_TEST_VERBOSE") != NULL;
    pl_compute_limits lim = {.n_batch = N_BATCH, .max_in = N_EMBD, .n_ctx = 64, .head_dim = 64,
                             .moe_n_used = MAX_USED, .moe_n_ff = N_FF};
    int rc = vkt_open(&T, &lim);
    if (rc) return rc;
    const bool has_dot = !((pl_vk_device *)T.dev)->no_int_dot;
    test_route();
    test_sigmoid_gate();
    test_ffn_types(has_dot);
    test_observer_and_ids();
    if (verbose) fprintf(stderr, "%zu pipelines\n", ((pl_vk_device *)T.dev)->n_pipes);
    if (!has_dot) fprintf(stderr, "note: %s has no int8 dot products: only the _nodot shaders ran\n", T.dev->name);
    vkt_close(&T);
    for (size_t i = 0; i < n_kept; i++) free(kept[i]);
    TEST_DONE();
}
