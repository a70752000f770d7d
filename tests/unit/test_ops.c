/*
 * test_ops.c -- every CPU kernel against the scalar reference op, on
 * random inputs and shape edges, for every instruction-set tier this host
 * runs (generic, AVX2, AVX-512) and 1 and 3 threads.  Also: results do not
 * depend on the thread count (bit for bit), and the support table lists
 * exactly the kernels there are.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/compute.h"
#include "backend/cpu/cpu_isa.h"
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

/* Largest |a - b| / (abs_tol + rel_tol * |b|) over n values; <= 1 passes. */
static double worst(const float *a, const float *b, int64_t n, double abs_tol, double rel_tol) {
    double w = 0;
    for (int64_t i = 0; i < n; i++) {
        double e = fabs((double)a[i] - (double)b[i]) / (abs_tol + rel_tol * fabs((double)b[i]));
        if (isnan(a[i]) != isnan(b[i])) e = INFINITY;
        if (e > w) w = e;
    }
    return w;
}

static bool same_bits(const void *a, const void *b, size_t bytes) { return memcmp(a, b, bytes) == 0; }

static pl_compute *make(const pl_cpu_isa *isa, int nt, int64_t n_batch, int64_t max_in, int64_t n_ctx, int64_t hd) {
    pl_compute *c = NULL;
    CHECK(pl_cpu_compute_new(nt, isa, &c) == POCKETLLM_OK);
    pl_compute_limits lim = {n_batch, max_in, n_ctx, hd};
    CHECK(c && c->ops->reserve(c, &lim) == POCKETLLM_OK);
    return c;
}

static const int64_t sizes[] = {1, 3, 7, 8, 15, 16, 17, 31, 33, 64, 100, 257, 1024, 4099};
#define N_SIZES (sizeof sizes / sizeof sizes[0])

static void test_elementwise(const pl_cpu_isa *isa, int nt) {
    pl_compute *c = make(isa, nt, 1, 1, 1, 1);
    for (size_t si = 0; si < N_SIZES; si++) {
        const int64_t n = sizes[si], rows = si % 3 + 1;
        float *x = rnd(rows * n, -3, 3), *b = rnd(rows * n, -3, 3), *w = rnd(n, 0.5f, 1.5f);
        float *y = rnd(rows * n, 0, 0), *r = rnd(rows * n, 0, 0);
        /* rms_norm with and without a weight */
        for (int with_w = 0; with_w < 2; with_w++) {
            c->ops->rms_norm(c, x, with_w ? w : NULL, y, rows, n, 1e-5f);
            pl_ref_rms_norm(x, with_w ? w : NULL, r, rows, n, 1e-5f);
            CHECK_MSG(worst(y, r, rows * n, 1e-6, 2e-6) <= 1, "%s rms_norm n=%lld rows=%lld", isa->name, (long long)n,
                      (long long)rows);
        }
        /* add and mul: flat and with one broadcast row (bitwise: same float op) */
        for (int bcast = 0; bcast < 2; bcast++) {
            const int64_t br = bcast ? 1 : rows;
            c->ops->add(c, x, b, y, rows, n, br);
            pl_ref_add(x, b, r, rows, n, br);
            CHECK_MSG(same_bits(y, r, (size_t)(rows * n) * 4), "%s add n=%lld b_rows=%lld", isa->name, (long long)n, (long long)br);
            c->ops->mul(c, x, b, y, rows, n, br);
            pl_ref_mul(x, b, r, rows, n, br);
            CHECK_MSG(same_bits(y, r, (size_t)(rows * n) * 4), "%s mul n=%lld", isa->name, (long long)n);
        }
        c->ops->scale(c, x, 0.37f, y, rows * n);
        pl_ref_scale(x, 0.37f, r, rows * n);
        CHECK_MSG(same_bits(y, r, (size_t)(rows * n) * 4), "%s scale n=%lld", isa->name, (long long)n);
        /* silu_mul over a wide input range, the exp approximation's edges included */
        float *g = rnd(rows * n, -30, 30);
        if (n > 4) g[0] = -120.0f, g[1] = 95.0f, g[2] = 0.0f, g[3] = -88.5f;
        c->ops->silu_mul(c, g, b, y, rows * n);
        pl_ref_silu_mul(g, b, r, rows * n);
        CHECK_MSG(worst(y, r, rows * n, 1e-30, 1e-6) <= 1, "%s silu_mul n=%lld", isa->name, (long long)n);
        /* softmax, with very negative entries */
        float *s = rnd(rows * n, -20, 20);
        if (n > 2) s[1] = -1e30f;
        c->ops->softmax(c, s, y, rows, n);
        for (int64_t k = 0; k < rows; k++) pl_ref_softmax(s + k * n, r + k * n, n);
        CHECK_MSG(worst(y, r, rows * n, 1e-12, 2e-6) <= 1, "%s softmax n=%lld", isa->name, (long long)n);
        /* kv_store: f16 rounding is exact, so bitwise */
        uint16_t *h1 = malloc((size_t)(rows * n) * 2), *h2 = malloc((size_t)(rows * n) * 2);
        c->ops->kv_store(c, PL_TYPE_F16, x, h1, rows * n);
        pl_ref_kv_store(PL_TYPE_F16, x, h2, rows * n);
        CHECK_MSG(same_bits(h1, h2, (size_t)(rows * n) * 2), "%s kv_store f16 n=%lld", isa->name, (long long)n);
        c->ops->kv_store(c, PL_TYPE_F32, x, y, rows * n);
        CHECK(same_bits(y, x, (size_t)(rows * n) * 4));
        CHECK(c->ops->argmax(c, x, rows * n) == pl_ref_argmax(x, rows * n));
        free(h1), free(h2), free(g), free(s);
        free(x), free(b), free(w), free(y), free(r);
    }
    CHECK(c->status == POCKETLLM_OK);
    c->ops->free(c);
}

static void test_rope(const pl_cpu_isa *isa, int nt) {
    pl_compute *c = make(isa, nt, 1, 1, 1, PL_MAX_HEAD_DIM);
    const int64_t dims[][2] = {{8, 8}, {16, 16}, {64, 32}, {128, 128}, {128, 64}, {96, 0}, {10, 6}};
    for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++) {
        for (int mode = 0; mode <= PL_ROPE_NEOX; mode += PL_ROPE_NEOX) {
            const int64_t hd = dims[d][0], n_tok = 5, n_head = 3;
            float *ff = rnd(dims[d][1] / 2 + 1, 1, 8);
            pl_rope_params rp = {mode, dims[d][1], d % 2 ? 1e6f : 1e4f, d == 3 ? 0.25f : 1.0f, d == 4 ? ff : NULL};
            int32_t pos[5] = {0, 1, 17, 4095, 40000};
            float *x = rnd(n_tok * n_head * hd, -2, 2), *y = rnd(n_tok * n_head * hd, 0, 0), *r = rnd(n_tok * n_head * hd, 0, 0);
            c->ops->rope(c, &rp, x, y, n_tok, n_head, hd, pos);
            pl_ref_rope(&rp, x, r, n_tok, n_head, hd, pos);
            CHECK_MSG(worst(y, r, n_tok * n_head * hd, 1e-6, 1e-6) <= 1, "%s rope mode %d hd %lld rot %lld", isa->name, mode,
                      (long long)hd, (long long)rp.n_rot);
            /* in place gives the same */
            c->ops->rope(c, &rp, x, x, n_tok, n_head, hd, pos);
            CHECK(same_bits(x, y, (size_t)(n_tok * n_head * hd) * 4));
            free(x), free(y), free(r), free(ff);
        }
    }
    CHECK(c->status == POCKETLLM_OK);
    c->ops->free(c);
}

static void test_attention(const pl_cpu_isa *isa, int nt) {
    const int64_t n_ctx = 300;
    pl_compute *c = make(isa, nt, 64, 1, n_ctx, 256);
    const int64_t shapes[][3] = {{4, 4, 8}, {8, 2, 16}, {16, 8, 128}, {6, 3, 72}, {2, 1, 256}, {3, 1, 10}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        for (int f16 = 0; f16 < 2; f16++) {
            const int64_t nh = shapes[si][0], nkv = shapes[si][1], hd = shapes[si][2];
            const int64_t cases[][2] = {{1, 0}, {5, 0}, {1, 200}, {33, 17}, {20, 120}};
            for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
                const int64_t n_tok = cases[ci][0], pos0 = cases[ci][1], n_kv = pos0 + n_tok;
                pl_attn_params ap = {nh, nkv, hd, 1.0f / sqrtf((float)hd), f16 ? PL_TYPE_F16 : PL_TYPE_F32};
                float *kf = rnd(n_kv * nkv * hd, -2, 2), *vf = rnd(n_kv * nkv * hd, -2, 2);
                void *k = malloc((size_t)(n_kv * nkv * hd) * 4), *v = malloc((size_t)(n_kv * nkv * hd) * 4);
                pl_ref_kv_store(ap.kv_type, kf, k, n_kv * nkv * hd);
                pl_ref_kv_store(ap.kv_type, vf, v, n_kv * nkv * hd);
                float *q = rnd(n_tok * nh * hd, -2, 2), *y = rnd(n_tok * nh * hd, 0, 0), *r = rnd(n_tok * nh * hd, 0, 0);
                c->ops->attention(c, &ap, q, k, v, n_tok, pos0, y);
                CHECK(pl_ref_attention(&ap, q, k, v, n_tok, pos0, r) == POCKETLLM_OK);
                /* f16: a weight that lands next to an f16 rounding boundary may
                 * round the other way (exp differs in the last bit): one f16
                 * step (2^-11 relative) of one weight, times |v| <= 2 */
                const double tol = f16 ? 2e-3 : 2e-6;
                CHECK_MSG(worst(y, r, n_tok * nh * hd, tol, tol) <= 1, "%s attention %s heads %lld/%lld hd %lld tok %lld pos0 %lld",
                          isa->name, f16 ? "f16" : "f32", (long long)nh, (long long)nkv, (long long)hd, (long long)n_tok,
                          (long long)pos0);
                free(kf), free(vf), free(k), free(v), free(q), free(y), free(r);
            }
        }
    }
    CHECK(c->status == POCKETLLM_OK);
    c->ops->free(c);
}

/* A weight matrix of n_out rows of n_in in `type`: random f32 encoded by
 * the type's encoder (with a flat importance matrix where the encoder
 * demands one), or, for a type that has kernels but no encoder yet, random
 * bytes -- redrawn row by row until the row decodes to finite values. */
static pl_weight make_weight(uint32_t type, int64_t n_in, int64_t n_out, void **keep) {
    pl_weight w = {"test", NULL, type, n_in, n_out, 0};
    uint64_t row;
    pl_type_row_bytes(type, (uint64_t)n_in, &row);
    w.row_bytes = (size_t)row;
    uint8_t *d = malloc((size_t)row * (size_t)n_out);
    float *f = rnd(n_in, -1, 1), *ones = rnd(n_in, 1, 1);
    const pl_type_traits *t = pl_type_get(type);
    for (int64_t o = 0; o < n_out; o++) {
        for (int64_t i = 0; i < n_in; i++) f[i] = -1 + 2 * pl_rng_uniform(&rng);
        uint8_t *dst = d + (size_t)o * row;
        if (type == PL_TYPE_F32) memcpy(dst, f, (size_t)n_in * 4);
        else if (type == PL_TYPE_F16) for (int64_t i = 0; i < n_in; i++) ((uint16_t *)dst)[i] = pl_f32_to_f16(f[i]);
        else if (type == PL_TYPE_BF16) for (int64_t i = 0; i < n_in; i++) ((uint16_t *)dst)[i] = pl_f32_to_bf16(f[i]);
        else if (t->from_float) t->from_float(f, dst, n_in, t->requires_imatrix ? ones : NULL);
        else {
            for (int tries = 0; tries < 1000; tries++) {
                for (size_t k = 0; k < (size_t)row; k++) dst[k] = (uint8_t)pl_rng_next(&rng);
                t->to_float(dst, f, n_in);
                bool finite = true;
                for (int64_t i = 0; i < n_in; i++) finite = finite && isfinite(f[i]) && fabsf(f[i]) < 1e4f;
                if (finite) break;
            }
        }
    }
    free(f), free(ones);
    w.data = d;
    *keep = d;
    return w;
}

static void test_matmul(const pl_cpu_isa *isa, int nt, uint32_t type) {
    const uint32_t block = pl_type_get(type)->block;
    const int64_t ins[] = {32, 64, 96, 256, 1024, 7, 33};
    const int64_t outs[] = {1, 3, 17, 64};
    const int64_t toks[] = {1, 2, 5, 16};
    pl_compute *c = make(isa, nt, 16, 1024, 1, 1);
    for (size_t a = 0; a < sizeof ins / sizeof ins[0]; a++) {
        if (ins[a] % block) continue;
        for (size_t b = 0; b < sizeof outs / sizeof outs[0]; b++) {
            const int64_t n_in = ins[a], n_out = outs[b], n_tok = toks[(a + b) % 4];
            void *keep;
            pl_weight w = make_weight(type, n_in, n_out, &keep);
            float *x = rnd(n_tok * n_in, -2, 2), *y = rnd(n_tok * n_out, 0, 0), *r = rnd(n_tok * n_out, 0, 0);
            c->ops->mul_mat(c, &w, x, n_tok, y);
            CHECK(pl_ref_mul_mat(&w, x, n_tok, r) == POCKETLLM_OK);
            /* the sums differ only in their order: a few ulps of sum |w x| */
            float *wf = rnd(n_in, 0, 0);
            double bound = 0;
            for (int64_t o = 0; o < n_out; o++) {
                int32_t id = (int32_t)o;
                pl_ref_get_rows(&w, &id, 1, wf);
                for (int64_t tk = 0; tk < n_tok; tk++) {
                    double b = 0;
                    for (int64_t i = 0; i < n_in; i++) b += fabs((double)wf[i] * x[tk * n_in + i]);
                    bound = b > bound ? b : bound;
                }
            }
            free(wf);
            CHECK_MSG(worst(y, r, n_tok * n_out, 1e-6 * bound + 1e-30, 0) <= 1, "%s mul_mat %s %lldx%lld tok %lld",
                      isa->name, pl_type_get(type)->name, (long long)n_out, (long long)n_in, (long long)n_tok);
            /* get_rows decodes exactly */
            int32_t ids[3] = {0, (int32_t)(n_out - 1), (int32_t)(n_out / 2)};
            float *g = rnd(3 * n_in, 0, 0), *gr = rnd(3 * n_in, 0, 0);
            c->ops->get_rows(c, &w, ids, 3, g);
            pl_ref_get_rows(&w, ids, 3, gr);
            CHECK_MSG(same_bits(g, gr, (size_t)(3 * n_in) * 4), "%s get_rows %s", isa->name, pl_type_get(type)->name);
            free(keep), free(x), free(y), free(r), free(g), free(gr);
        }
    }
    CHECK(c->status == POCKETLLM_OK);
    c->ops->free(c);
}

/* The same inputs through 1..4 threads give the same bits: every output
 * element is computed whole by one thread, in the same order. */
static void test_thread_invariance(const pl_cpu_isa *isa) {
    const int64_t n_in = 256, n_out = 300, n_tok = 9, nh = 8, nkv = 2, hd = 32, n_ctx = 64;
    void *keep;
    pl_weight w = make_weight(PL_TYPE_F16, n_in, n_out, &keep);
    float *x = rnd(n_tok * n_in, -1, 1), *q = rnd(n_tok * nh * hd, -1, 1), *kv = rnd(n_ctx * nkv * hd, -1, 1);
    uint16_t *k16 = malloc((size_t)(n_ctx * nkv * hd) * 2);
    pl_ref_kv_store(PL_TYPE_F16, kv, k16, n_ctx * nkv * hd);
    float *y1 = NULL, *a1 = NULL;
    for (int nt = 1; nt <= 4; nt++) {
        pl_compute *c = make(isa, nt, n_tok, n_in, n_ctx, hd);
        float *y = rnd(n_tok * n_out, 0, 0), *a = rnd(n_tok * nh * hd, 0, 0);
        c->ops->mul_mat(c, &w, x, n_tok, y);
        pl_attn_params ap = {nh, nkv, hd, 0.17f, PL_TYPE_F16};
        c->ops->attention(c, &ap, q, k16, k16, n_tok, n_ctx - n_tok, a);
        if (nt == 1) {
            y1 = y, a1 = a;
        } else {
            CHECK_MSG(same_bits(y, y1, (size_t)(n_tok * n_out) * 4), "%s mul_mat differs with %d threads", isa->name, nt);
            CHECK_MSG(same_bits(a, a1, (size_t)(n_tok * nh * hd) * 4), "%s attention differs with %d threads", isa->name, nt);
            free(y), free(a);
        }
        c->ops->free(c);
    }
    free(y1), free(a1), free(keep), free(x), free(q), free(kv), free(k16);
}

static void test_support_table(void) {
    /* every op has a CPU kernel; weighted ops exactly for the types the
     * matmul accepts: f32/f16/bf16 always, others when the type table has
     * their reference kernels */
    for (uint32_t op = 0; op < PL_OP_COUNT; op++) {
        if (pl_op_get(op)->has_weight) continue;
        CHECK_MSG(pl_cpu_supports((pl_op)op, 0), "op %s has no CPU kernel", pl_op_get(op)->name);
    }
    CHECK(pl_cpu_supports(PL_OP_MUL_MAT, PL_TYPE_F32) && pl_cpu_supports(PL_OP_MUL_MAT, PL_TYPE_F16) &&
          pl_cpu_supports(PL_OP_MUL_MAT, PL_TYPE_BF16));
    for (uint32_t t = 0; t < PL_TYPE_COUNT; t++)
        if (t != PL_TYPE_F32 && t != PL_TYPE_F16 && t != PL_TYPE_BF16)
            CHECK_MSG(pl_cpu_supports(PL_OP_MUL_MAT, t) == pl_ref_type_ok(t), "type %u", t);
    CHECK(!pl_cpu_supports(PL_OP_MUL_MAT, PL_TYPE_COUNT + 5));
}

int main(void) {
    pl_rng_seed(&rng, 20261130);
    const pl_cpu_isa *all[] = {pl_cpu_isa_generic(), pl_cpu_isa_avx2(), pl_cpu_isa_avx512()};
    int tiers = 0;
    for (size_t i = 0; i < 3; i++) {
        const pl_cpu_isa *isa = all[i];
        if (!pl_cpu_isa_usable(isa)) {
            fprintf(stderr, "note: %s kernels not runnable on this host, not tested here\n", isa ? isa->name : "(absent)");
            continue;
        }
        tiers++;
        for (int nt = 1; nt <= 3; nt += 2) {
            test_elementwise(isa, nt);
            test_rope(isa, nt);
            test_attention(isa, nt);
            for (uint32_t t = 0; t < PL_TYPE_COUNT; t++)
                if (pl_cpu_supports(PL_OP_MUL_MAT, t)) test_matmul(isa, nt, t);
        }
        test_thread_invariance(isa);
    }
    CHECK(tiers >= 1);
    test_support_table();
    TEST_DONE();
}
