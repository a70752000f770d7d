/*
 * test_ops.c -- every CPU kernel against the scalar reference op, on
 * random inputs and shape edges, for every instruction-set tier this host
 * runs (generic, AVX2, AVX-512 on x86-64; generic, NEON on AArch64) and 1
 * and 3 threads (more threads than this machine's cores).  Also: results
 * do not depend on the thread count (bit for bit, 1..4 threads), and the
 * support table lists exactly the kernels there are.  Each reference
 * result is computed once and every instance (tier x threads) is checked
 * against it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/compute.h"
#include "backend/cpu/cpu_erf.h"
#include "backend/cpu/cpu_expf.h"
#include "backend/cpu/cpu_isa.h"
#include "base/half.h"
#include "base/rng.h"
#include "../common/kv_layout.h"
#include "ops/ref.h"
#include "pltest.h"
#include "quant/kernels.h"
#include "quant/types.h"

static pl_rng rng;

/* The instances under test: every usable tier at 1 and 3 threads. */
typedef struct inst {
    pl_compute *c;
    const char *isa;
    int nt;
} inst;
static inst insts[8];
static int n_insts;

#define FOR_INST(v) for (inst *v = insts; v < insts + n_insts; v++)

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

/* n floats bit for bit, but any NaN matching any NaN */
static bool same_f32s(const float *a, const float *b, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        if (!same_bits(&a[i], &b[i], 4) && !(isnan(a[i]) && isnan(b[i]))) return false;
    return true;
}

/* Share of the n values further apart than abs_tol + rel_tol * |b|. */
static double share_off(const float *a, const float *b, int64_t n, double abs_tol, double rel_tol) {
    int64_t off = 0;
    for (int64_t i = 0; i < n; i++) off += !(fabs((double)a[i] - (double)b[i]) <= abs_tol + rel_tol * fabs((double)b[i]));
    return (double)off / (double)n;
}

static pl_compute *make(const pl_cpu_isa *isa, int nt) {
    pl_compute *c = NULL;
    CHECK(pl_cpu_compute_new(nt, isa, &c) == POCKETLLM_OK);
    pl_compute_limits lim = {.n_batch = 64, .max_in = 1024, .n_ctx = 300, .head_dim = PL_MAX_HEAD_DIM};
    CHECK(c && c->ops->reserve(c, &lim) == POCKETLLM_OK);
    return c;
}

static const int64_t sizes[] = {1, 3, 7, 8, 15, 16, 17, 31, 33, 64, 100, 257, 1024, 4099};
#define N_SIZES (sizeof sizes / sizeof sizes[0])

static void test_elementwise(void) {
    for (size_t si = 0; si < N_SIZES; si++) {
        const int64_t n = sizes[si], rows = si % 3 + 1, all = rows * n;
        float *x = rnd(all, -3, 3), *b = rnd(all, -3, 3), *w = rnd(n, 0.5f, 1.5f), *g = rnd(all, -30, 30);
        float *s = rnd(all, -20, 20), *y = rnd(all, 0, 0);
        if (n > 4) g[0] = -120.0f, g[1] = 95.0f, g[2] = 0.0f, g[3] = -88.5f; /* the exp approximation's edges */
        if (n > 2) s[1] = -1e30f;
        float *r_norm[2] = {rnd(all, 0, 0), rnd(all, 0, 0)}, *r_add[2] = {rnd(all, 0, 0), rnd(all, 0, 0)};
        float *r_mul[2] = {rnd(all, 0, 0), rnd(all, 0, 0)}, *r_scale = rnd(all, 0, 0), *r_silu = rnd(all, 0, 0);
        float *r_soft = rnd(all, 0, 0);
        uint16_t *h1 = malloc((size_t)all * 2), *h2 = malloc((size_t)all * 2);
        for (int k = 0; k < 2; k++) {
            pl_ref_rms_norm(x, k ? w : NULL, r_norm[k], rows, n, 1e-5f);
            pl_ref_add(x, b, r_add[k], rows, n, k ? 1 : rows);
            pl_ref_mul(x, b, r_mul[k], rows, n, k ? 1 : rows);
        }
        pl_ref_scale(x, 0.37f, r_scale, all);
        pl_ref_silu_mul(g, b, r_silu, all);
        for (int64_t k = 0; k < rows; k++) pl_ref_softmax(s + k * n, r_soft + k * n, n);
        pl_ref_kv_store(PL_TYPE_F16, x, h2, all);
        FOR_INST(v) {
            pl_compute *c = v->c;
            for (int k = 0; k < 2; k++) {
                c->ops->rms_norm(c, x, k ? w : NULL, y, rows, n, 1e-5f);
                CHECK_MSG(worst(y, r_norm[k], all, 1e-6, 2e-6) <= 1, "%s/%d rms_norm n=%lld", v->isa, v->nt, (long long)n);
                /* add, mul, scale: the same single float operation, so bitwise */
                c->ops->add(c, x, b, y, rows, n, k ? 1 : rows);
                CHECK_MSG(same_bits(y, r_add[k], (size_t)all * 4), "%s/%d add n=%lld", v->isa, v->nt, (long long)n);
                c->ops->mul(c, x, b, y, rows, n, k ? 1 : rows);
                CHECK_MSG(same_bits(y, r_mul[k], (size_t)all * 4), "%s/%d mul n=%lld", v->isa, v->nt, (long long)n);
            }
            c->ops->scale(c, x, 0.37f, y, all);
            CHECK_MSG(same_bits(y, r_scale, (size_t)all * 4), "%s/%d scale n=%lld", v->isa, v->nt, (long long)n);
            c->ops->silu_mul(c, g, b, y, all);
            CHECK_MSG(worst(y, r_silu, all, 1e-30, 1e-6) <= 1, "%s/%d silu_mul n=%lld", v->isa, v->nt, (long long)n);
            c->ops->softmax(c, s, y, rows, n);
            CHECK_MSG(worst(y, r_soft, all, 1e-12, 2e-6) <= 1, "%s/%d softmax n=%lld", v->isa, v->nt, (long long)n);
            /* f16 rounding is exact, so bitwise */
            c->ops->kv_store(c, PL_TYPE_F16, x, h1, all);
            CHECK_MSG(same_bits(h1, h2, (size_t)all * 2), "%s/%d kv_store f16 n=%lld", v->isa, v->nt, (long long)n);
            c->ops->kv_store(c, PL_TYPE_F32, x, y, all);
            CHECK(same_bits(y, x, (size_t)all * 4));
            CHECK(c->ops->argmax(c, x, all) == pl_ref_argmax(x, all));
        }
        for (int k = 0; k < 2; k++) free(r_norm[k]), free(r_add[k]), free(r_mul[k]);
        free(r_scale), free(r_silu), free(r_soft), free(h1), free(h2);
        free(x), free(b), free(w), free(g), free(s), free(y);
    }
}

static void test_rope(void) {
    /* head size, rotated elements (0 = none) */
    const int64_t dims[][2] = {{8, 8}, {16, 16}, {64, 32}, {128, 128}, {128, 64}, {96, 0}, {10, 6}};
    for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++) {
        for (int mode = 0; mode <= PL_ROPE_NEOX; mode += PL_ROPE_NEOX) {
            const int64_t hd = dims[d][0], n_tok = 5, n_head = 3, all = n_tok * n_head * hd;
            float *ff = rnd(dims[d][1] / 2 + 1, 1, 8);
            pl_rope_params rp = {mode, dims[d][1], d % 2 ? 1e6f : 1e4f, d == 3 ? 0.25f : 1.0f, d == 4 ? ff : NULL, {0, 0, 0, 0}};
            int32_t pos[5] = {0, 1, 17, 4095, 40000};
            float *x = rnd(all, -2, 2), *y = rnd(all, 0, 0), *r = rnd(all, 0, 0), *xc = rnd(all, 0, 0);
            pl_ref_rope(&rp, x, r, n_tok, n_head, hd, pos);
            FOR_INST(v) {
                v->c->ops->rope(v->c, &rp, x, y, n_tok, n_head, hd, pos);
                CHECK_MSG(worst(y, r, all, 1e-6, 1e-6) <= 1, "%s/%d rope mode %d hd %lld rot %lld", v->isa, v->nt, mode,
                          (long long)hd, (long long)rp.n_rot);
                memcpy(xc, x, (size_t)all * 4); /* in place gives the same */
                v->c->ops->rope(v->c, &rp, xc, xc, n_tok, n_head, hd, pos);
                CHECK(same_bits(xc, y, (size_t)all * 4));
            }
            free(x), free(y), free(r), free(ff), free(xc);
        }
    }
}

static void test_attention(void) {
    /* heads, KV heads (grouped-query when fewer), head size */
    const int64_t shapes[][3] = {{4, 4, 8}, {8, 2, 16}, {16, 8, 128}, {6, 3, 72}, {2, 1, 256}, {3, 1, 10}, {4, 1, 128}, {2, 2, 64}};
    /* tokens in the pass, positions already in the cache */
    const int64_t cases[][2] = {{1, 0}, {5, 0}, {1, 200}, {33, 17}, {20, 120}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        for (int mode = 0; mode < 4; mode++) {
            const int f16 = mode & 1, flash = mode >> 1;
            const int64_t nh = shapes[si][0], nkv = shapes[si][1], hd = shapes[si][2];
            for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
                const int64_t n_tok = cases[ci][0], pos0 = cases[ci][1], n_kv = pos0 + n_tok, all = n_tok * nh * hd;
                pl_attn_params ap = {nh, nkv, hd, 1.0f / sqrtf((float)hd), f16 ? PL_TYPE_F16 : PL_TYPE_F32, f16 ? PL_TYPE_F16 : PL_TYPE_F32, flash, 0, 0};
                float *kf = rnd(n_kv * nkv * hd, -2, 2), *vf = rnd(n_kv * nkv * hd, -2, 2);
                void *k = malloc((size_t)(n_kv * nkv * hd) * 4), *vc = malloc((size_t)(n_kv * nkv * hd) * 4);
                pl_ref_kv_store(ap.k_type, kf, k, n_kv * nkv * hd);
                pl_ref_kv_store(ap.k_type, vf, vc, n_kv * nkv * hd);
                float *q = rnd(all, -2, 2), *y = rnd(all, 0, 0), *r = rnd(all, 0, 0);
                CHECK(pl_ref_attention(&ap, q, k, vc, n_tok, pos0, r) == POCKETLLM_OK);
                /* f16: a softmax weight next to an f16 rounding boundary may
                 * round the other way (the exp differs in its last bit): one
                 * f16 step (2^-11 relative) of one weight, times |v| <= 2.
                 * That is rare: nearly every value must agree to 1e-5 (a
                 * missing rounding step would move most of them). */
                const double tol = f16 || flash ? 2e-3 : 2e-6; /* flash works in f16 whatever the cache */
                float *ys[6] = {0};
                FOR_INST(v) {
                    v->c->ops->attention(v->c, &ap, q, k, vc, n_tok, pos0, y);
                    /* bit for bit the same whatever the thread count: with
                     * fewer heads than threads a decode splits the context */
                    ys[v - insts] = malloc((size_t)all * sizeof(float));
                    memcpy(ys[v - insts], y, (size_t)all * sizeof(float));
                    for (inst *u = insts; u < v; u++)
                        if (!strcmp(u->isa, v->isa))
                            CHECK_MSG(same_bits(ys[u - insts], y, (size_t)all * sizeof(float)),
                                      "%s attention %s%s heads %lld/%lld hd %lld tok %lld pos0 %lld: %d threads differ from %d",
                                      v->isa, f16 ? "f16" : "f32", flash ? " flash" : "", (long long)nh, (long long)nkv, (long long)hd,
                                      (long long)n_tok, (long long)pos0, v->nt, u->nt);
                    CHECK_MSG(worst(y, r, all, tol, tol) <= 1, "%s/%d attention %s%s heads %lld/%lld hd %lld tok %lld pos0 %lld",
                              v->isa, v->nt, f16 ? "f16" : "f32", flash ? " flash" : "", (long long)nh, (long long)nkv, (long long)hd,
                              (long long)n_tok, (long long)pos0);
                    /* one flipped weight moves one head's hd values, and
                     * a few flips happen among thousands of weights: allow
                     * 10% (a missing rounding step moves most values), or
                     * one head's worth in the smallest shapes */
                    const double off = share_off(y, r, all, 1e-5, 1e-5);
                    CHECK_MSG(off <= 0.10 || off * (double)all <= (double)hd, "%s/%d attention %s%s heads %lld/%lld hd %lld tok %lld pos0 %lld: %.1f%% of the values off",
                              v->isa, v->nt, f16 ? "f16" : "f32", flash ? " flash" : "", (long long)nh, (long long)nkv, (long long)hd,
                              (long long)n_tok, (long long)pos0, off * 100);
                }
                /* the same caches head-major (pl_attn_params.kv_cap, room
                 * for 3 positions more): every instance's bits and the
                 * reference's are those of the rows */
                pl_attn_params hm = ap;
                hm.kv_cap = n_kv + 3;
                void *hk = pl_test_kv_head_major(ap.k_type, k, n_kv, nkv, hd, hm.kv_cap);
                void *hv = pl_test_kv_head_major(ap.v_type, vc, n_kv, nkv, hd, hm.kv_cap);
                CHECK(hk && hv && pl_ref_attention(&hm, q, hk, hv, n_tok, pos0, y) == POCKETLLM_OK);
                CHECK_MSG(same_bits(y, r, (size_t)all * sizeof(float)), "reference attention: head-major differs from rows");
                FOR_INST(v) {
                    v->c->ops->attention(v->c, &hm, q, hk, hv, n_tok, pos0, y);
                    CHECK_MSG(v->c->status == POCKETLLM_OK && same_bits(y, ys[v - insts], (size_t)all * sizeof(float)),
                              "%s/%d attention %s%s heads %lld/%lld hd %lld tok %lld pos0 %lld: head-major differs from rows",
                              v->isa, v->nt, f16 ? "f16" : "f32", flash ? " flash" : "", (long long)nh, (long long)nkv,
                              (long long)hd, (long long)n_tok, (long long)pos0);
                }
                free(hk), free(hv);
                for (int i = 0; i < 6; i++) free(ys[i]);
                free(kf), free(vf), free(k), free(vc), free(q), free(y), free(r);
            }
        }
    }
}

/* ---- the vision tower's ops --------------------------------------------- */

/* gelu(x) in double, the tanh form */
static double gelu_d(double x) { return 0.5 * x * (1.0 + tanh(0.7978845608028654 * x * (1.0 + 0.044715 * x * x))); }

static void test_layer_norm_gelu(void) {
    const int64_t rows_[] = {1, 7, 1000}, ns[] = {1024, 4096, 777};
    for (size_t ri = 0; ri < 3; ri++)
        for (size_t ni = 0; ni < 3; ni++) {
            const int64_t rows = rows_[ri], n = ns[ni], all = rows * n;
            if (rows == 1000 && n == 4096) continue; /* 4M values: enough with the others */
            float *x = rnd(all, -3, 5), *w = rnd(n, 0.5f, 1.5f), *b = rnd(n, -1, 1), *y = rnd(all, 0, 0);
            float *r[2] = {rnd(all, 0, 0), rnd(all, 0, 0)};
            pl_ref_layer_norm(x, NULL, NULL, r[0], rows, n, 1e-6f);
            pl_ref_layer_norm(x, w, b, r[1], rows, n, 1e-6f);
            /* the reference against the formula in double */
            double bad = 0;
            for (int64_t k = 0; k < rows; k += rows > 7 ? 97 : 1) {
                double m = 0, v = 0;
                for (int64_t i = 0; i < n; i++) m += x[k * n + i];
                m /= (double)n;
                for (int64_t i = 0; i < n; i++) v += (x[k * n + i] - m) * (x[k * n + i] - m);
                v /= (double)n;
                for (int64_t i = 0; i < n; i++) {
                    const double want = (x[k * n + i] - m) / sqrt(v + 1e-6) * w[i] + b[i];
                    const double e = fabs(r[1][k * n + i] - want) / (1e-5 + 1e-5 * fabs(want));
                    bad = e > bad ? e : bad;
                }
            }
            CHECK_MSG(bad <= 1, "reference layer_norm %lldx%lld off the double formula (%.2f)", (long long)rows, (long long)n, bad);
            FOR_INST(v) {
                /* the same arithmetic (the double sums in order): bitwise */
                v->c->ops->layer_norm(v->c, x, NULL, NULL, y, rows, n, 1e-6f);
                CHECK_MSG(same_bits(y, r[0], (size_t)all * 4), "%s/%d layer_norm %lldx%lld", v->isa, v->nt, (long long)rows, (long long)n);
                v->c->ops->layer_norm(v->c, x, w, b, y, rows, n, 1e-6f);
                CHECK_MSG(same_bits(y, r[1], (size_t)all * 4), "%s/%d layer_norm w b %lldx%lld", v->isa, v->nt, (long long)rows, (long long)n);
            }
            /* gelu over the table's range and past its ends */
            for (int64_t i = 0; i < all; i++) x[i] = -12.0f + 24.0f * pl_rng_uniform(&rng);
            const float edges[] = {-10.0f, 10.0f, -10.000001f, 9.999999f, 0.0f, -0.0f, 1e-8f, -3.0f, 65504.0f, -1e30f};
            for (size_t e = 0; e < sizeof edges / sizeof *edges && (int64_t)e < all; e++) x[e] = edges[e];
            pl_ref_gelu(x, r[0], all);
            bad = 0;
            for (int64_t i = 0; i < all; i++) {
                /* x rounded to f16, the result rounded to f16: 2^-11 relative each */
                const double want = x[i] <= -10 ? 0 : x[i] >= 10 ? x[i] : gelu_d(x[i]);
                const double e = fabs(r[0][i] - want) / (1e-6 + 2e-3 * fabs(want) + 1e-3 * fabs((double)x[i]));
                bad = e > bad ? e : bad;
            }
            CHECK_MSG(bad <= 1, "reference gelu off the formula (%.2f)", bad);
            FOR_INST(v) {
                v->c->ops->gelu(v->c, x, y, all); /* a table lookup: bitwise */
                CHECK_MSG(same_bits(y, r[0], (size_t)all * 4), "%s/%d gelu n=%lld", v->isa, v->nt, (long long)all);
            }
            free(x), free(w), free(b), free(y), free(r[0]), free(r[1]);
        }
}

/* The multi-axis ropes: CPU against the reference (the same angles and
 * products: bitwise), and the reference against what ggml computes. */
static void test_rope_multi(void) {
    const int64_t n_tok = 6, n_head = 3;
    for (int m = 0; m < 3; m++) {
        /* VISION, head 64, sections 16 x 4; MROPE_INTERLEAVED, head 128,
         * sections {24, 20, 20, 0}; and one with a partial rotation */
        const int mode = m == 0 ? PL_ROPE_VISION : PL_ROPE_MROPE_INTERLEAVED;
        const int64_t hd = m == 0 ? 64 : 128, n_rot = m == 2 ? 96 : hd;
        pl_rope_params rp = {mode, n_rot, m == 0 ? 1e4f : 5e6f, 1.0f, NULL, {16, 16, 16, 16}};
        if (m > 0) rp.sections[0] = 24, rp.sections[1] = 20, rp.sections[2] = 20, rp.sections[3] = 0;
        if (m == 2) rp.sections[0] = 16, rp.sections[1] = 12, rp.sections[2] = 12;
        int32_t pos[4 * 6];
        for (int64_t t = 0; t < n_tok; t++) /* distinct axes */
            pos[t] = (int32_t)(3 * t + 1), pos[n_tok + t] = (int32_t)(7 * t), pos[2 * n_tok + t] = (int32_t)(40 - 5 * t),
            pos[3 * n_tok + t] = (int32_t)(t * t);
        const int64_t all = n_tok * n_head * hd;
        float *x = rnd(all, -2, 2), *y = rnd(all, 0, 0), *r = rnd(all, 0, 0), *xc = rnd(all, 0, 0);
        pl_ref_rope(&rp, x, r, n_tok, n_head, hd, pos);
        FOR_INST(v) {
            v->c->ops->rope(v->c, &rp, x, y, n_tok, n_head, hd, pos);
            CHECK_MSG(same_bits(y, r, (size_t)all * 4), "%s/%d rope mode %d hd %lld", v->isa, v->nt, mode, (long long)hd);
            memcpy(xc, x, (size_t)all * 4);
            v->c->ops->rope(v->c, &rp, xc, xc, n_tok, n_head, hd, pos);
            CHECK(same_bits(xc, y, (size_t)all * 4));
        }
        if (mode == PL_ROPE_MROPE_INTERLEAVED) {
            /* all four axes at p: exactly NEOX (every axis's angle is the
             * same iterated product).  llama.cpp gives text tokens (p, p,
             * p, 0): then the pairs whose sector takes the extra axis
             * (sectors past 3 x sections[1] / [2] that are not time's: 61
             * and 62 of {24, 20, 20, 0}; 37 and 38 of {16, 12, 12, 0} over 48
             * pairs) are not rotated, the others are NEOX's. */
            int32_t p4[4 * 6];
            int32_t p1[6];
            for (int64_t t = 0; t < n_tok; t++) p1[t] = pos[t], p4[t] = p4[n_tok + t] = p4[2 * n_tok + t] = p4[3 * n_tok + t] = pos[t];
            pl_rope_params np = rp;
            np.mode = PL_ROPE_NEOX;
            float *rn = rnd(all, 0, 0);
            pl_ref_rope(&np, x, rn, n_tok, n_head, hd, p1);
            pl_ref_rope(&rp, x, r, n_tok, n_head, hd, p4);
            CHECK_MSG(same_bits(r, rn, (size_t)all * 4), "imrope with equal axes differs from neox (rot %lld)", (long long)n_rot);
            for (int64_t t = 0; t < n_tok; t++) p4[3 * n_tok + t] = 0;
            pl_ref_rope(&rp, x, r, n_tok, n_head, hd, p4);
            const int64_t half = n_rot / 2;
            int extra = 0;
            for (int64_t i = 0; i < half; i++) {
                const int sec = (int)(i % (rp.sections[0] + rp.sections[1] + rp.sections[2] + rp.sections[3]));
                const bool e = !((sec % 3 == 1 && sec < 3 * rp.sections[1]) || (sec % 3 == 2 && sec < 3 * rp.sections[2]) ||
                                 (sec % 3 == 0 && sec < 3 * rp.sections[0]));
                extra += e;
                CHECK_MSG(e == (m == 1 ? i == 61 || i == 62 : i == 37 || i == 38), "pair %lld: extra axis %d", (long long)i, e);
                for (int64_t k = 0; k < n_tok * n_head; k++) {
                    const float *want = e ? x : rn;
                    const int64_t a = k * hd + i, b = k * hd + i + half;
                    if (pos[k / n_head] == 0) continue; /* position 0 rotates nothing either way */
                    CHECK_MSG(same_bits(&r[a], &want[a], 4) && same_bits(&r[b], &want[b], 4), "imrope (p,p,p,0) pair %lld", (long long)i);
                }
            }
            CHECK(extra == 2);
            free(rn);
        } else {
            /* (y, x, y, x): pairs 0..15 turn by y * 10000^(-i/16), pairs
             * 16..31 by x * 10000^(-(i-16)/16) (ggml: n_dims = 32, theta_scale
             * = 10000^(-2/32), the height section restarting at x) */
            float cache[PL_MAX_HEAD_DIM];
            const int32_t yx[4] = {9, 23, 9, 23};
            pl_rope_angles_multi(&rp, yx, cache);
            const int pairs[] = {0, 1, 5, 15, 16, 17, 24, 31};
            for (size_t k = 0; k < sizeof pairs / sizeof *pairs; k++) {
                const int i = pairs[k];
                const double th = i < 16 ? 9.0 * pow(1e4, -(double)i / 16) : 23.0 * pow(1e4, -(double)(i - 16) / 16);
                CHECK_MSG(fabs(cache[2 * i] - cos(th)) < 2e-5 && fabs(cache[2 * i + 1] - sin(th)) < 2e-5,
                          "vision pair %d: cos %g sin %g, want %g %g", i, cache[2 * i], cache[2 * i + 1], cos(th), sin(th));
            }
            /* the rotation pairs element i with i + 32 */
            float xh[64], yh[64];
            for (int i = 0; i < 64; i++) xh[i] = i == 5 ? 1.0f : i == 37 ? 0.5f : 0.0f;
            pl_rope_params one = rp;
            int32_t p4[4] = {9, 23, 9, 23};
            pl_ref_rope(&one, xh, yh, 1, 1, 64, p4);
            const double th = 9.0 * pow(1e4, -5.0 / 16);
            CHECK(fabs(yh[5] - (cos(th) - 0.5 * sin(th))) < 3e-5 && fabs(yh[37] - (sin(th) + 0.5 * cos(th))) < 3e-5);
            for (int i = 0; i < 64; i++)
                if (i != 5 && i != 37) CHECK(yh[i] == 0.0f);
        }
        free(x), free(y), free(r), free(xc);
    }
    /* sections that do not fit are refused with a message, not run */
    pl_compute *c = make(pl_cpu_isa_generic(), 1);
    pl_rope_params bad = {PL_ROPE_VISION, 32, 1e4f, 1.0f, NULL, {0, 0, 0, 4}};
    float xb[64] = {0};
    int32_t pb[4] = {0};
    c->ops->rope(c, &bad, xb, xb, 1, 1, 64, pb);
    CHECK(c->status != POCKETLLM_OK);
    c->ops->free(c);
}

/* Not causal: every query over the same n_kv rows, against the reference;
 * the same bits whatever the thread count and block scratch (matmul
 * scratch or attention scratch); and each query as a causal last token
 * over those rows gives the same bits in the reference, and on the CPU too
 * except for the default arithmetic on an f32 cache (the tower's), whose
 * block kernels sum in another order than the causal path's: there within
 * the tolerance of the reference. */
static void test_attention_full(void) {
    /* heads, KV heads, head size, queries, rows, modes (bit m: f16 = m & 1,
     * flash = m >> 1); the tower's shape (16 heads of 64, 1024 patches) in
     * its mode only, the others being the per-query path's loops */
    const int64_t cases[][6] = {{4, 4, 64, 1, 1, 15},     {4, 4, 64, 17, 17, 15},  {4, 2, 64, 17, 17, 15},  {2, 2, 64, 300, 300, 15},
                                {2, 2, 64, 40, 2048, 15}, {3, 1, 40, 33, 100, 15}, {4, 4, 64, 5, 1, 15},    {2, 2, 64, 17, 3, 15},
                                {2, 1, 72, 33, 17, 15},   {3, 3, 20, 16, 33, 15},  {2, 2, 288, 5, 33, 15},  {16, 16, 64, 1024, 1024, 1}};
    inst mine[16];
    int n_mine = 0;
    FOR_INST(v) {
        /* a large matmul scratch (16 or 12 queries a block) and none (2) */
        for (int big = 0; big < 2; big++) {
            pl_compute *c = NULL;
            CHECK(pl_cpu_compute_new(v->nt, pl_cpu_isa_by_name(v->isa), &c) == POCKETLLM_OK);
            pl_compute_limits lim = {.n_batch = big ? 300 : 1, .max_in = big ? 1024 : 16, .n_ctx = 2048, .head_dim = 288};
            CHECK(c && c->ops->reserve(c, &lim) == POCKETLLM_OK);
            mine[n_mine++] = (inst){c, v->isa, v->nt};
        }
    }
    /* under an emulator (the ARM64 tests run this under qemu and say so) and
     * under the sanitizers the tower-sized case costs minutes (141 s of
     * this test's 234 under ASan) for kernels the smaller cases already run
     * on every tile and tail; the release tree runs it */
#ifdef PL_SANITIZE_BUILD
    const bool small_only = true;
#else
    const bool small_only = getenv("PL_TEST_EMULATED") != NULL;
#endif
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++)
        for (int mode = 0; mode < 4; mode++) {
            if (!(cases[ci][5] >> mode & 1)) continue;
            if (small_only && cases[ci][3] * cases[ci][4] > 100000) continue;
            const int f16 = mode & 1, flash = mode >> 1;
            const int64_t nh = cases[ci][0], nkv = cases[ci][1], hd = cases[ci][2], n_tok = cases[ci][3], n_kv = cases[ci][4];
            const int64_t all = n_tok * nh * hd, kv_all = n_kv * nkv * hd;
            pl_attn_params ap = {nh, nkv, hd, 1.0f / sqrtf((float)hd), f16 ? PL_TYPE_F16 : PL_TYPE_F32, f16 ? PL_TYPE_F16 : PL_TYPE_F32, flash, n_kv, 0};
            float *kf = rnd(kv_all, -2, 2), *vf = rnd(kv_all, -2, 2), *q = rnd(all, -2, 2), *y = rnd(all, 0, 0), *r = rnd(all, 0, 0);
            void *k = malloc((size_t)kv_all * 4), *vc = malloc((size_t)kv_all * 4);
            pl_ref_kv_store(ap.k_type, kf, k, kv_all);
            pl_ref_kv_store(ap.k_type, vf, vc, kv_all);
            CHECK(pl_ref_attention(&ap, q, k, vc, n_tok, 12345, r) == POCKETLLM_OK); /* pos0 unused */
            pl_attn_params cp = ap;
            cp.n_kv = 0;
            const int64_t probe = n_tok / 2; /* one query as the causal last token */
            float *rc = rnd(nh * hd, 0, 0), *yc = rnd(nh * hd, 0, 0);
            CHECK(pl_ref_attention(&cp, q + probe * nh * hd, k, vc, 1, n_kv - 1, rc) == POCKETLLM_OK);
            CHECK_MSG(same_bits(rc, r + probe * nh * hd, (size_t)(nh * hd) * 4), "reference full attention differs from causal");
            const double tol = f16 || flash ? 2e-3 : 2e-6;
            float *first = NULL;
            for (inst *v = mine; v < mine + n_mine; v++) {
                v->c->ops->attention(v->c, &ap, q, k, vc, n_tok, 0, y);
                char what[160];
                snprintf(what, sizeof what, "%s/%d full attention %s%s heads %lld/%lld hd %lld tok %lld rows %lld", v->isa,
                         v->nt, f16 ? "f16" : "f32", flash ? " flash" : "", (long long)nh, (long long)nkv, (long long)hd,
                         (long long)n_tok, (long long)n_kv);
                CHECK_MSG(v->c->status == POCKETLLM_OK, "%s: failed", what);
                CHECK_MSG(worst(y, r, all, tol, tol) <= 1, "%s", what);
                const double off = share_off(y, r, all, 1e-5, 1e-5);
                CHECK_MSG(off <= 0.10 || off * (double)all <= (double)hd, "%s: %.1f%% of the values off", what, off * 100);
                if (v == mine || strcmp(v[-1].isa, v->isa)) {
                    free(first);
                    first = malloc((size_t)all * 4);
                    memcpy(first, y, (size_t)all * 4);
                } else {
                    CHECK_MSG(same_bits(first, y, (size_t)all * 4), "%s: differs with other threads / scratch", what);
                }
                v->c->ops->attention(v->c, &cp, q + probe * nh * hd, k, vc, 1, n_kv - 1, yc);
                if (f16 || flash)
                    CHECK_MSG(same_bits(yc, y + probe * nh * hd, (size_t)(nh * hd) * 4), "%s: differs from causal", what);
                else
                    CHECK_MSG(worst(yc, r + probe * nh * hd, nh * hd, tol, tol) <= 1, "%s: causal differs from the reference", what);
            }
            free(first), free(rc), free(yc);
            free(kf), free(vf), free(k), free(vc), free(q), free(y), free(r);
        }
    for (int i = 0; i < n_mine; i++) mine[i].c->ops->free(mine[i].c);
}

/* A weight matrix of n_out rows of n_in in `type`: random f32 encoded by
 * the type's encoder (with a flat importance matrix where the encoder
 * demands one), or, for a type that has kernels but no encoder, random
 * bytes -- redrawn row by row until the row decodes to finite values. */
static pl_weight make_weight(uint32_t type, int64_t n_in, int64_t n_out, void **keep) {
    pl_weight w = {.name = "test", .type = type, .n_in = n_in, .n_out = n_out};
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

static void test_matmul(uint32_t type) {
    const uint32_t block = pl_type_get(type)->block;
    /* row lengths: odd ones for the float types; one block, two blocks and a
     * long row for the block types */
    const int64_t float_ins[] = {7, 33, 96, 1024}, block_ins[] = {(int64_t)block, 2 * (int64_t)block, 1024};
    const bool is_float = block == 1;
    const int64_t *ins = is_float ? float_ins : block_ins;
    const size_t n_ins = is_float ? 4 : 3;
    const int64_t outs[] = {1, 17, 64}, toks[] = {1, 2, 5, 16};
    for (size_t a = 0; a < n_ins; a++) {
        if (ins[a] % block || ins[a] > 1024) continue;
        for (size_t b = 0; b < sizeof outs / sizeof outs[0]; b++) {
            const int64_t n_in = ins[a], n_out = outs[b], n_tok = toks[(a + b) % 4];
            void *keep;
            pl_weight w = make_weight(type, n_in, n_out, &keep);
            float *x = rnd(n_tok * n_in, -2, 2), *y = rnd(n_tok * n_out, 0, 0), *r = rnd(n_tok * n_out, 0, 0);
            CHECK(pl_ref_mul_mat(&w, x, n_tok, r) == POCKETLLM_OK);
            /* the sums differ only in their order: a few ulps of sum |w x| */
            float *wf = rnd(n_in, 0, 0);
            double bound = 0;
            for (int64_t o = 0; o < n_out; o++) {
                int32_t id = (int32_t)o;
                pl_ref_get_rows(&w, &id, 1, wf);
                for (int64_t tk = 0; tk < n_tok; tk++) {
                    double s = 0;
                    for (int64_t i = 0; i < n_in; i++) s += fabs((double)wf[i] * x[tk * n_in + i]);
                    bound = s > bound ? s : bound;
                }
            }
            int32_t ids[3] = {0, (int32_t)(n_out - 1), (int32_t)(n_out / 2)};
            float *g = rnd(3 * n_in, 0, 0), *gr = rnd(3 * n_in, 0, 0);
            pl_ref_get_rows(&w, ids, 3, gr);
            FOR_INST(v) {
                v->c->ops->mul_mat(v->c, &w, x, n_tok, y);
                CHECK_MSG(worst(y, r, n_tok * n_out, 1e-6 * bound + 1e-30, 0) <= 1, "%s/%d mul_mat %s %lldx%lld tok %lld",
                          v->isa, v->nt, pl_type_get(type)->name, (long long)n_out, (long long)n_in, (long long)n_tok);
                v->c->ops->get_rows(v->c, &w, ids, 3, g); /* decodes exactly */
                CHECK_MSG(same_bits(g, gr, (size_t)(3 * n_in) * 4), "%s/%d get_rows %s", v->isa, v->nt,
                          pl_type_get(type)->name);
            }
            free(keep), free(x), free(y), free(r), free(g), free(gr), free(wf);
        }
    }
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
        pl_compute *c = make(isa, nt);
        float *y = rnd(n_tok * n_out, 0, 0), *a = rnd(n_tok * nh * hd, 0, 0);
        c->ops->mul_mat(c, &w, x, n_tok, y);
        pl_attn_params ap = {nh, nkv, hd, 0.17f, PL_TYPE_F16, PL_TYPE_F16, false, 0, 0};
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
    /* every op has a CPU kernel; the weighted ops exactly for the types the
     * reference can also compute (decode, activation encoder, dot) */
    for (uint32_t op = 0; op < PL_OP_COUNT; op++) {
        if (pl_op_get(op)->has_weight) continue;
        CHECK_MSG(pl_cpu_supports((pl_op)op, 0), "op %s has no CPU kernel", pl_op_get(op)->name);
    }
    CHECK(pl_cpu_supports(PL_OP_MUL_MAT, PL_TYPE_F32) && pl_cpu_supports(PL_OP_MUL_MAT, PL_TYPE_F16) &&
          pl_cpu_supports(PL_OP_MUL_MAT, PL_TYPE_BF16) && pl_cpu_supports(PL_OP_MUL_MAT, PL_TYPE_Q8_0));
    for (uint32_t t = 0; t < PL_TYPE_COUNT; t++) {
        CHECK_MSG(pl_cpu_supports(PL_OP_MUL_MAT, t) == pl_ref_type_ok(t), "type %u", t);
        CHECK(pl_cpu_supports(PL_OP_GET_ROWS, t) == pl_cpu_supports(PL_OP_MUL_MAT, t));
    }
    CHECK(!pl_cpu_supports(PL_OP_MUL_MAT, PL_TYPE_COUNT + 5));
}

/* axpy_rows_f16, where a table has it, gives bit for bit what axpy_f16
 * row by row gives (attention relies on it: the weighted sum of V rows must
 * not depend on which kernel ran), for widths around its 128-column block
 * and row counts from 0. */
static void test_axpy_rows(const pl_cpu_isa *isa) {
    if (!isa->axpy_rows_f16) return;
    static const int64_t widths[] = {1, 15, 16, 64, 100, 128, 129, 200, 256, 300};
    static const int64_t rows[] = {0, 1, 2, 7, 33};
    for (size_t wi = 0; wi < sizeof widths / sizeof *widths; wi++)
        for (size_t ri = 0; ri < sizeof rows / sizeof *rows; ri++) {
            const int64_t n = widths[wi], nr = rows[ri], stride = n + 3;
            float *a = rnd(nr + 1, -1.f, 1.f), *y0 = rnd(n + 16, -2.f, 2.f), *y1 = malloc((size_t)(n + 16) * sizeof *y1);
            uint16_t *x = malloc((size_t)(stride * (nr + 1)) * sizeof *x);
            for (int64_t i = 0; i < stride * (nr + 1); i++) x[i] = pl_f32_to_f16(pl_rng_uniform(&rng) * 4.f - 2.f);
            memcpy(y1, y0, (size_t)(n + 16) * sizeof *y1);
            for (int64_t r = 0; r < nr; r++) isa->axpy_f16(a[r], x + r * stride, y0, n);
            isa->axpy_rows_f16(a, x, stride, nr, y1, n);
            CHECK_MSG(same_bits(y0, y1, (size_t)(n + 16) * sizeof *y0), "%s axpy_rows_f16 n=%lld rows=%lld", isa->name,
                      (long long)n, (long long)nr);
            free(a), free(y0), free(y1), free(x);
        }
}

/* dot_rows_f16, where a table has it, gives bit for bit the f16 vec_dot of
 * the quant tier attention pairs it with (its f16_dot_tier: AVX-512 for the
 * AVX-512 table, NEON for the NEON one). */
static void test_dot_rows(const pl_cpu_isa *isa) {
    if (!isa->dot_rows_f16) return;
    const pl_quant_kernel_set *k = pl_quant_kernels_tier(PL_TYPE_F16, (pl_quant_tier)isa->f16_dot_tier);
    CHECK(k && k->vec_dot);
    if (!k || !k->vec_dot) return;
    static const int64_t widths[] = {1, 10, 16, 64, 100, 128, 130, 256, 1024};
    for (size_t wi = 0; wi < sizeof widths / sizeof *widths; wi++) {
        const int64_t n = widths[wi], nr = 37, stride = n + 5;
        uint16_t *x = malloc((size_t)(stride * nr) * sizeof *x), *q = malloc((size_t)n * sizeof *q);
        float *y0 = malloc((size_t)nr * sizeof *y0), *y1 = malloc((size_t)nr * sizeof *y1);
        for (int64_t i = 0; i < stride * nr; i++) x[i] = pl_f32_to_f16(pl_rng_uniform(&rng) * 4.f - 2.f);
        for (int64_t i = 0; i < n; i++) q[i] = pl_f32_to_f16(pl_rng_uniform(&rng) * 4.f - 2.f);
        for (int64_t r = 0; r < nr; r++) y0[r] = k->vec_dot(n, x + r * stride, q);
        isa->dot_rows_f16(x, stride, nr, q, n, y1);
        CHECK_MSG(same_bits(y0, y1, (size_t)nr * sizeof *y0), "%s dot_rows_f16 n=%lld", isa->name, (long long)n);
        free(x), free(q), free(y0), free(y1);
    }
}

/* The two-head row kernels, where a table has them, give each head bit
 * for bit what the one-head kernels give it (attention pairs the heads of
 * a group only because of this), at the fast width and off it. */
static void test_rows2(const pl_cpu_isa *isa) {
    if (!isa->dot_rows2_f16 && !isa->axpy_rows2_f16) return;
    CHECK_MSG(isa->dot_rows2_f16 && isa->axpy_rows2_f16 && isa->dot_rows_f16 && isa->axpy_rows_f16,
              "%s: the two-head kernels come with both one-head ones", isa->name);
    if (!isa->dot_rows2_f16 || !isa->axpy_rows2_f16 || !isa->dot_rows_f16 || !isa->axpy_rows_f16) return;
    static const int64_t widths[] = {100, 128, 256};
    static const int64_t rows[] = {0, 1, 7, 33};
    for (size_t wi = 0; wi < sizeof widths / sizeof *widths; wi++)
        for (size_t ri = 0; ri < sizeof rows / sizeof *rows; ri++) {
            const int64_t n = widths[wi], nr = rows[ri], stride = 2 * n + 8;
            uint16_t *x = malloc((size_t)(stride * (nr + 1)) * sizeof *x), *q = malloc((size_t)(2 * n) * sizeof *q);
            for (int64_t i = 0; i < stride * (nr + 1); i++) x[i] = pl_f32_to_f16(pl_rng_uniform(&rng) * 4.f - 2.f);
            for (int64_t i = 0; i < 2 * n; i++) q[i] = pl_f32_to_f16(pl_rng_uniform(&rng) * 4.f - 2.f);
            float *s1 = rnd(2 * nr + 2, 0, 0), *s2 = rnd(2 * nr + 2, 0, 0);
            isa->dot_rows_f16(x, stride, nr, q, n, s1);
            isa->dot_rows_f16(x, stride, nr, q + n, n, s1 + nr + 1);
            isa->dot_rows2_f16(x, stride, nr, q, q + n, n, s2, s2 + nr + 1);
            CHECK_MSG(same_bits(s1, s2, (size_t)(2 * nr + 2) * sizeof *s1), "%s dot_rows2_f16 n=%lld rows=%lld", isa->name,
                      (long long)n, (long long)nr);
            float *wa = rnd(nr + 1, 0, 1), *wb = rnd(nr + 1, 0, 1), *y1 = rnd(2 * n, -2, 2), *y2 = malloc((size_t)(2 * n) * sizeof *y2);
            memcpy(y2, y1, (size_t)(2 * n) * sizeof *y2);
            isa->axpy_rows_f16(wa, x, stride, nr, y1, n);
            isa->axpy_rows_f16(wb, x, stride, nr, y1 + n, n);
            isa->axpy_rows2_f16(wa, wb, x, stride, nr, y2, y2 + n, n);
            CHECK_MSG(same_bits(y1, y2, (size_t)(2 * n) * sizeof *y1), "%s axpy_rows2_f16 n=%lld rows=%lld", isa->name,
                      (long long)n, (long long)nr);
            free(x), free(q), free(s1), free(s2), free(wa), free(wb), free(y1), free(y2);
        }
}

/* scale_round_f16, where a table has it, gives bit for bit the scalar
 * f16 round trip, over values that land in f16's normal, subnormal,
 * underflow and overflow ranges, for lengths around the vector width. */
/* mad_round_f16, where a table has it: bit for bit the scalar fused
 * multiply-add rounded through f16, for lengths around the vector width. */
static void test_mad_round(const pl_cpu_isa *isa) {
    if (!isa->mad_round_f16) return;
    static const int64_t lens[] = {0, 1, 15, 16, 17, 100};
    static const float as[] = {1.0f, 0.37f, 1e-4f, 3e-8f};
    for (size_t li = 0; li < sizeof lens / sizeof *lens; li++)
        for (size_t ai = 0; ai < sizeof as / sizeof *as; ai++) {
            const int64_t n = lens[li];
            float *y = rnd(n + 1, -1.f, 1.f), *y0 = malloc((size_t)(n + 1) * sizeof *y0);
            uint16_t *x = malloc((size_t)(n + 1) * sizeof *x);
            for (int64_t i = 0; i < n; i++) {
                x[i] = pl_f32_to_f16(pl_rng_uniform(&rng) * 4.f - 2.f);
                y[i] = pl_f16_to_f32(pl_f32_to_f16(y[i])); /* a running f16 sum */
                y0[i] = pl_f16_to_f32(pl_f32_to_f16(fmaf(pl_f16_to_f32(x[i]), as[ai], y[i])));
            }
            isa->mad_round_f16(as[ai], x, y, n);
            CHECK_MSG(n == 0 || same_bits(y, y0, (size_t)n * sizeof *y), "%s mad_round_f16 n=%lld a=%g", isa->name,
                      (long long)n, as[ai]);
            free(x), free(y), free(y0);
        }
}

/* The scalar steps flash_weights must reproduce, with the e^x of
 * cpu_expf.h (pl_expf_model) where pl_flash_step calls libm's expf. */
static void model_weights(float *w, float *ms, int64_t n, float *M, float *S) {
    for (int64_t p = 0; p < n; p++) {
        const float s = w[p];
        float vs;
        if (s > *M) {
            ms[p] = pl_expf_model(*M - s), *M = s, vs = 1.0f;
        } else {
            ms[p] = 1.0f, vs = pl_expf_model(s - *M);
        }
        w[p] = vs;
        const float rescaled = *S * ms[p];
        *S = rescaled + vs;
    }
}

/* flash_weights: (1) its e^x is pl_expf_model's, and libm's here, over a
 * sweep of the arguments the online softmax makes (x <= 0: every
 * 509th float from -0 to -inf, and NaN); (2) its maximum, rescales and
 * sum are the scalar steps' bit for bit on sequences that rise (a rescale
 * at every position), tie, start at -inf, leave expf's fast path (scores
 * 100s apart, -inf), hold a NaN, and continue over a second call. */
static void test_flash_weights(const pl_cpu_isa *isa) {
    if (!isa->flash_weights) return;
    const bool libm = pl_expf_matches_libm();
#if defined(__GLIBC__) && defined(__x86_64__)
    /* glibc's x86-64 expf on a machine with FMA (every machine an AVX2 or
     * AVX-512 table runs on) is the one the model states: a probe that says
     * otherwise is wrong, and would turn the vector kernels off unseen */
    CHECK_MSG(libm, "%s flash_weights: pl_expf_matches_libm says glibc's x86-64 expf is not the model's", isa->name);
#else
    if (!libm) fprintf(stderr, "note: this C library's expf is not glibc's: flash_weights is checked against its model only\n");
#endif
    enum { CH = 4099 };
    float *x = malloc(CH * sizeof *x), *w = malloc(CH * sizeof *w), *ms = malloc(CH * sizeof *ms);
    int64_t bad_model = 0, bad_libm = 0, total = 0;
    uint64_t u = 0x80000000u;
    while (u <= 0xff800001u) {
        int64_t k = 0;
        for (; k < CH && u <= 0xff800001u; k++, u += 509) {
            const uint32_t bits = (uint32_t)u;
            memcpy(&x[k], &bits, 4);
        }
        memcpy(w, x, (size_t)k * sizeof *w);
        float M = 0.0f, S = 0.0f;
        isa->flash_weights(w, ms, k, &M, &S);
        for (int64_t i = 0; i < k; i++) {
            const float em = pl_expf_model(x[i]), el = pl_libm_expf(x[i]);
            bad_model += !same_bits(&w[i], &em, 4) && !(isnan(w[i]) && isnan(em));
            bad_libm += libm && !same_bits(&w[i], &el, 4) && !(isnan(w[i]) && isnan(el));
        }
        total += k;
    }
    /* and chosen arguments: the edges of expf's fast path, and the one
     * negative float whose e^x comes out one ulp off if r is formed by a
     * multiply and a subtraction instead of glibc's fused multiply-subtract */
    static const float chosen[] = {PL_EXPF_FUSED_R_ARG, -0.0f, -0x1p-149f, -87.9f, -88.0f, -88.1f, -103.9f, -104.0f, -INFINITY};
    const int64_t n_chosen = (int64_t)(sizeof chosen / sizeof *chosen);
    /* in a call of 32, so that they go through the vector lanes, not the tail */
    for (int64_t i = 0; i < 32; i++) w[i] = i < n_chosen ? chosen[i] : -1.0f;
    float Mc = 0.0f, Sc = 0.0f;
    isa->flash_weights(w, ms, 32, &Mc, &Sc);
    for (int64_t i = 0; i < n_chosen; i++) {
        const float em = pl_expf_model(chosen[i]), el = pl_libm_expf(chosen[i]);
        bad_model += !same_bits(&w[i], &em, 4);
        bad_libm += libm && !same_bits(&w[i], &el, 4);
        total++;
    }
    CHECK_MSG(total > 4000000 && bad_model == 0, "%s flash_weights: %lld of %lld e^x differ from pl_expf_model", isa->name,
              (long long)bad_model, (long long)total);
    CHECK_MSG(bad_libm == 0, "%s flash_weights: %lld of %lld e^x differ from libm's expf", isa->name, (long long)bad_libm,
              (long long)total);
    static const int64_t lens[] = {1, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 257, 1024, 4099};
    for (int kind = 0; kind < 6; kind++)
        for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
            const int64_t n = lens[li];
            for (int64_t i = 0; i < n; i++) {
                const float r = pl_rng_uniform(&rng);
                x[i] = kind == 0   ? 30.f * r - 15.f                           /* plain */
                       : kind == 1 ? (float)i * 0.37f + r                       /* rising: a rescale at each */
                       : kind == 2 ? (float)((int)(r * 4.f)) - 2.f              /* ties */
                       : kind == 3 ? (r < 0.1f ? -INFINITY : 400.f * r - 200.f) /* off the fast path */
                       : kind == 4 ? (i == n / 2 ? NAN : 10.f * r)              /* a NaN */
                                   : (i % 3 ? -r : 0.0f) * (i % 2 ? 1.f : -1.f); /* signed zeros */
            }
            /* one call from scratch, and the same scores in two calls */
            const int64_t cut = n / 3;
            float M0 = -INFINITY, S0 = 0.0f, M1 = -INFINITY, S1 = 0.0f, M2 = -INFINITY, S2 = 0.0f;
            float *w0 = malloc((size_t)n * sizeof *w0), *ms0 = malloc((size_t)n * sizeof *ms0);
            memcpy(w0, x, (size_t)n * sizeof *w0);
            model_weights(w0, ms0, n, &M0, &S0);
            memcpy(w, x, (size_t)n * sizeof *w);
            isa->flash_weights(w, ms, n, &M1, &S1);
            CHECK_MSG(same_f32s(w, w0, n) && same_f32s(ms, ms0, n) && same_f32s(&M1, &M0, 1) && same_f32s(&S1, &S0, 1),
                      "%s flash_weights kind %d n=%lld differs from the scalar steps", isa->name, kind, (long long)n);
            memcpy(w, x, (size_t)n * sizeof *w);
            isa->flash_weights(w, ms, cut, &M2, &S2);
            isa->flash_weights(w + cut, ms + cut, n - cut, &M2, &S2);
            CHECK_MSG(same_f32s(w, w0, n) && same_f32s(ms, ms0, n) && same_f32s(&M2, &M0, 1) && same_f32s(&S2, &S0, 1),
                      "%s flash_weights kind %d n=%lld in two calls differs from the scalar steps", isa->name, kind,
                      (long long)n);
            if (libm) {
                /* and the model is pl_flash_step's loop (libm's expf) */
                float M3 = -INFINITY, S3 = 0.0f;
                memcpy(w, x, (size_t)n * sizeof *w);
                for (int64_t p = 0; p < n; p++) {
                    float vs;
                    if (!pl_flash_step(w[p], &M3, &ms[p], &vs)) ms[p] = 1.0f;
                    w[p] = vs;
                    S3 = S3 * ms[p] + vs;
                }
                CHECK_MSG(same_f32s(w, w0, n) && same_f32s(ms, ms0, n) && same_f32s(&M3, &M0, 1) && same_f32s(&S3, &S0, 1),
                          "flash_weights' model differs from pl_flash_step's loop (kind %d n=%lld)", kind, (long long)n);
            }
            free(w0), free(ms0);
        }
    free(x), free(w), free(ms);
}

/* flash_rows_f16 (and flash_rows2_f16, each head; flash_rows_f32 over f32
 * rows without the rounding), where a table has it:
 * bit for bit the scalar fold --
 * per row a rescale f16(y * ms) where ms != 1, then f16(fma(x, vs, y)) --
 * for head sizes around the vector widths and the register blocks (1, 7,
 * 8, 16, 64, 72, 128, 200), strided rows, rescales of every kind (0 at
 * the first row, tiny, near 1, exactly 1) and weights down to f16's
 * subnormals. */
static void test_flash_rows(const pl_cpu_isa *isa) {
    if (!isa->flash_rows_f16 && !isa->flash_rows_f32 && !isa->flash_rows_q8_0) return;
    static const int64_t lens[] = {1, 7, 8, 16, 32, 64, 72, 96, 128, 200, 256};
    const int64_t rows = 37, stride = 263;
    for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
        const int64_t n = lens[li];
        uint16_t *x = malloc((size_t)(rows * stride) * sizeof *x);
        float vs[37], ms[37], *y = calloc((size_t)n, sizeof *y), *y0 = calloc((size_t)n, sizeof *y0);
        for (int64_t i = 0; i < rows * stride; i++) x[i] = pl_f32_to_f16(pl_rng_uniform(&rng) * 4.f - 2.f);
        for (int64_t r = 0; r < rows; r++) {
            const float u = pl_rng_uniform(&rng);
            vs[r] = r % 5 == 3 ? 1.0f : r % 7 == 2 ? 3e-7f * u : u;
            ms[r] = r == 0 ? 0.0f : r % 4 == 1 ? u : r % 9 == 4 ? 0.99999994f : 1.0f;
        }
        for (int64_t r = 0; r < rows; r++)
            for (int64_t d = 0; d < n; d++) {
                if (ms[r] != 1.0f) y0[d] = pl_f16_to_f32(pl_f32_to_f16(y0[d] * ms[r]));
                y0[d] = pl_f16_to_f32(pl_f32_to_f16(fmaf(pl_f16_to_f32(x[r * stride + d]), vs[r], y0[d])));
            }
        if (isa->flash_rows_f16) {
            isa->flash_rows_f16(vs, ms, x, stride, rows, y, n);
            CHECK_MSG(same_bits(y, y0, (size_t)n * sizeof *y), "%s flash_rows_f16 n=%lld differs from the scalar fold",
                      isa->name, (long long)n);
        }
        if (isa->flash_rows2_f16) {
            /* the pair kernel: head a as above, head b with other weights
             * and rescales (its first row's 0 from the other side) */
            float vb[37], mb[37], *ya = calloc((size_t)n, sizeof *ya), *yb = calloc((size_t)n, sizeof *yb),
                                  *yb0 = calloc((size_t)n, sizeof *yb0);
            for (int64_t r = 0; r < rows; r++) {
                vb[r] = vs[(r * 7 + 3) % rows] * 0.5f;
                mb[r] = r == 0 ? 0.0f : ms[(r * 5 + 1) % rows];
            }
            for (int64_t r = 0; r < rows; r++)
                for (int64_t d = 0; d < n; d++) {
                    if (mb[r] != 1.0f) yb0[d] = pl_f16_to_f32(pl_f32_to_f16(yb0[d] * mb[r]));
                    yb0[d] = pl_f16_to_f32(pl_f32_to_f16(fmaf(pl_f16_to_f32(x[r * stride + d]), vb[r], yb0[d])));
                }
            isa->flash_rows2_f16(vs, ms, vb, mb, x, stride, rows, ya, yb, n);
            CHECK_MSG(same_bits(ya, y0, (size_t)n * sizeof *ya) && same_bits(yb, yb0, (size_t)n * sizeof *yb),
                      "%s flash_rows2_f16 n=%lld differs from the scalar fold", isa->name, (long long)n);
            free(ya), free(yb), free(yb0);
        }
        if (isa->flash_rows_f32) {
            /* the f32 fold: the same weights over f32 rows (the V rows
             * decoded), no rounding */
            float *xf = malloc((size_t)(rows * stride) * sizeof *xf), *yf = calloc((size_t)n, sizeof *yf),
                  *yf0 = calloc((size_t)n, sizeof *yf0);
            for (int64_t i = 0; i < rows * stride; i++) xf[i] = pl_rng_uniform(&rng) * 4.f - 2.f;
            for (int64_t r = 0; r < rows; r++)
                for (int64_t d = 0; d < n; d++) {
                    if (ms[r] != 1.0f) yf0[d] = yf0[d] * ms[r];
                    yf0[d] = fmaf(xf[r * stride + d], vs[r], yf0[d]);
                }
            isa->flash_rows_f32(vs, ms, xf, stride, rows, yf, n);
            CHECK_MSG(same_bits(yf, yf0, (size_t)n * sizeof *yf), "%s flash_rows_f32 n=%lld differs from the scalar fold",
                      isa->name, (long long)n);
            free(xf), free(yf), free(yf0);
        }
        if (isa->flash_rows_q8_0 && n % 32 == 0) {
            /* over q8_0 rows (stride in bytes, not a multiple of 4): to_float
             * then the f32 fold */
            const size_t rb = (size_t)n / 32 * 34 + 6;
            uint8_t *xq = malloc(rb * (size_t)rows);
            float *row = malloc((size_t)n * sizeof *row), *yq = calloc((size_t)n, sizeof *yq),
                  *yq0 = calloc((size_t)n, sizeof *yq0);
            for (int64_t r = 0; r < rows; r++) {
                for (int64_t d = 0; d < n; d++) row[d] = pl_rng_uniform(&rng) * 6.f - 3.f;
                pl_ref_kv_store(PL_TYPE_Q8_0, row, xq + (size_t)r * rb, n);
            }
            for (int64_t r = 0; r < rows; r++) {
                pl_type_get(PL_TYPE_Q8_0)->to_float(xq + (size_t)r * rb, row, n);
                for (int64_t d = 0; d < n; d++) {
                    if (ms[r] != 1.0f) yq0[d] = yq0[d] * ms[r];
                    yq0[d] = fmaf(row[d], vs[r], yq0[d]);
                }
            }
            isa->flash_rows_q8_0(vs, ms, xq, (int64_t)rb, rows, yq, n);
            CHECK_MSG(same_bits(yq, yq0, (size_t)n * sizeof *yq), "%s flash_rows_q8_0 n=%lld differs from decode + fold",
                      isa->name, (long long)n);
            free(xq), free(row), free(yq), free(yq0);
        }
        free(x), free(y), free(y0);
    }
}

static void test_scale_round(const pl_cpu_isa *isa) {
    if (!isa->scale_round_f16) return;
    static const int64_t lens[] = {0, 1, 15, 16, 17, 100};
    static const float scales[] = {1.0f, 0.37f, 1e-4f, 3e-8f, 7e4f};
    for (size_t li = 0; li < sizeof lens / sizeof *lens; li++)
        for (size_t si = 0; si < sizeof scales / sizeof *scales; si++) {
            const int64_t n = lens[li];
            float *x = rnd(n + 1, -1.f, 1.f), *y = malloc((size_t)(n + 1) * sizeof *y);
            for (int64_t i = 0; i < n; i += 3) x[i] *= 1e-3f; /* mixed magnitudes within one call */
            isa->scale_round_f16(x, scales[si], y, n);
            for (int64_t i = 0; i < n; i++) {
                const float want = pl_f16_to_f32(pl_f32_to_f16(x[i] * scales[si]));
                CHECK_MSG(same_bits(&want, &y[i], sizeof want), "%s scale_round_f16 n=%lld s=%g: %g at %lld, want %g",
                          isa->name, (long long)n, scales[si], y[i], (long long)i, want);
            }
            free(x), free(y);
        }
}

/* ---- the audio tower's ops ---------------------------------------------- */

/* gelu_erf.  A table without a gelu_erf kernel runs the reference's libm
 * loop: bit for bit.  The vector tables (AVX2, AVX-512, NEON) compute
 * cpu_erf.h's model lane for lane: bit for bit pl_gelu_erf_model, and the
 * model within 3 * 2^-24 * |x| of the reference (its erf within an ulp of
 * libm's erff, carried through 0.5 x (1 + erf): one ulp of 1 + erf near 2
 * is 2^-23, times 0.5 |x|, plus the product's rounding); the model's erf
 * the correctly rounded one, where libm's is not always. */
static void test_gelu_erf(void) {
    const bool emulated = getenv("PL_TEST_EMULATED") != NULL;
    const int64_t n = emulated ? 200003 : 2000003;
    float *x = rnd(n, -8, 8), *r = rnd(n, 0, 0), *m = rnd(n, 0, 0), *y = rnd(n, 0, 0);
    /* the wide range too: a tenth of the values of any magnitude */
    for (int64_t i = 0; i < n; i += 10) {
        uint32_t u = (uint32_t)pl_rng_next(&rng);
        float f;
        memcpy(&f, &u, 4);
        x[i] = isnan(f) ? 1.5f : f;
    }
    const float edges[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-40f, -1e-40f, 3.4e38f, -3.4e38f, 5.65f, -5.65f,
                           4.0f * 1.41421356f, -4.0f * 1.41421356f, 1e-3f, -1e-3f, 0.5f, -0.5f, 2.0f, -2.0f};
    const size_t n_edges = sizeof edges / sizeof *edges;
    for (size_t e = 0; e < n_edges; e++) x[e] = edges[e];
    pl_ref_gelu_erf(x, r, n);
    /* the reference against the formula in double (erf in double): an ulp
     * or so of erff, carried as above */
    double bad = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(x[i])) continue;
        const double want = 0.5 * x[i] * (1.0 + erf((double)x[i] / sqrt(2.0)));
        const double e = fabs(r[i] - want) / (1e-38 + 4 * ldexp(fabs((double)x[i]), -24));
        bad = e > bad ? e : bad;
    }
    CHECK_MSG(bad <= 1, "reference gelu_erf off the formula (%.2f)", bad);
    CHECK(r[2] == INFINITY && r[3] == 0.0f && signbit(r[3]) && isnan(r[4]) && r[0] == 0.0f);
    for (int64_t i = 0; i < n; i++) CHECK_MSG(!isnan(r[i]) || isnan(x[i]), "gelu_erf(%g) is NaN", x[i]);
    for (int64_t i = 0; i < n; i++) m[i] = pl_gelu_erf_model(x[i]);
    int64_t off = 0;
    bad = 0;
    for (int64_t i = 0; i < n; i++) {
        if (same_bits(&m[i], &r[i], 4)) continue;
        off++;
        const double e = isnan(m[i]) != isnan(r[i]) ? INFINITY : fabs((double)m[i] - r[i]) / (3 * ldexp(fabs((double)x[i]), -24));
        bad = e > bad ? e : bad;
    }
    fprintf(stderr, "gelu_erf: the vector model differs from libm's in %.4f%% of %lld values, by <= %.2f x 2^-24 |x|\n",
            100.0 * (double)off / (double)n, (long long)n, 3 * bad);
    CHECK_MSG(bad <= 1, "the vector gelu_erf model is off the reference (%.2f of the bound)", bad);
    /* where they differ it is libm's erff that is off (glibc 2.36's is not
     * correctly rounded on about 1.5% of [-6, 6]): the model gives the
     * correctly rounded erf (the double erf rounded to float) all but
     * about once in a million */
    int64_t off_cr = 0;
    for (int64_t i = 0; i < n; i++) {
        const float s = x[i] * PL_ERF_SQRT_2_INV, e = (float)erf((double)s);
        const float want = x[i] == -INFINITY ? -0.0f : 0.5f * x[i] * (1.0f + e);
        off_cr += !same_bits(&want, &m[i], 4) && !(isnan(want) && isnan(m[i]));
    }
    fprintf(stderr, "gelu_erf: the model's erf is not the correctly rounded one in %lld of %lld values\n", (long long)off_cr,
            (long long)n);
    CHECK_MSG(off_cr <= n / 100000, "the vector gelu_erf model is off the correctly rounded erf in %lld of %lld values",
              (long long)off_cr, (long long)n);
    static const int64_t lens[] = {1, 3, 4, 7, 8, 15, 16, 17, 31, 33, 100, 4099, 0};
    FOR_INST(v) {
        const pl_cpu_isa *isa = pl_cpu_isa_by_name(v->isa);
        const float *want = isa && isa->gelu_erf ? m : r;
        const char *what = isa && isa->gelu_erf ? "the model" : "the reference";
        for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
            /* the whole array starts at 0: an offset would read (and the sentinel
             * write) past its end */
            const int64_t k = lens[li] ? lens[li] : n - 1, at = lens[li] ? (int64_t)li * 5 : 0;
            for (int64_t i = 0; i < k + 1; i++) y[i] = -7.0f;
            v->c->ops->gelu_erf(v->c, x + at, y, k);
            CHECK_MSG(same_bits(y, want + at, (size_t)k * 4), "%s/%d gelu_erf n=%lld is not %s's bits", v->isa, v->nt,
                      (long long)k, what);
            CHECK_MSG(y[k] == -7.0f, "%s/%d gelu_erf n=%lld wrote past the end", v->isa, v->nt, (long long)k);
        }
        memcpy(y, x, (size_t)n * 4); /* in place */
        pl_gelu_erf(v->c, y, y, n);
        CHECK_MSG(same_bits(y, want, (size_t)n * 4), "%s/%d gelu_erf in place", v->isa, v->nt);
    }
    free(x), free(r), free(m), free(y);
}

typedef struct im2col_case {
    int64_t n, c_in, h, w;
    int32_t kh, kw, sh, sw, ph, pw;
} im2col_case;

/* im2col: the reference against the layout written out (each input value
 * its own index + 1, so every output value names where it came from), then
 * every instance bit for bit against the reference, with and without f16
 * rounding (values past f16's range, subnormal in f16, halfway cases). */
static void test_im2col(void) {
    static const im2col_case cases[] = {
        {2, 1, 11, 9, 3, 3, 2, 2, 1, 1},   {1, 1, 128, 100, 3, 3, 2, 2, 1, 1}, {1, 5, 7, 6, 3, 3, 1, 1, 1, 1},
        {3, 17, 9, 13, 3, 3, 2, 2, 1, 1},  {1, 3, 5, 5, 2, 3, 1, 2, 0, 2},    {2, 480, 8, 7, 3, 3, 2, 2, 1, 1},
        {1, 2, 12, 12, 9, 9, 1, 1, 4, 4},  {2, 4, 3, 3, 3, 3, 2, 2, 1, 1},    {1, 7, 4, 9, 1, 1, 1, 1, 0, 0},
        {1, 1, 1, 1, 1, 1, 1, 1, 0, 0},    {1, 3, 2, 2, 3, 3, 3, 3, 1, 1},    {4, 33, 6, 5, 3, 2, 2, 1, 2, 0},
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
        const im2col_case *k = &cases[ci];
        pl_im2col_params p = {k->n, k->c_in, k->h, k->w, k->kh, k->kw, k->sh, k->sw, k->ph, k->pw, false};
        CHECK(pl_im2col_check(&p) == POCKETLLM_OK);
        const int64_t oh = pl_im2col_out_h(&p), ow = pl_im2col_out_w(&p), cols = p.c_in * p.kh * p.kw;
        const int64_t n_in = p.n * p.h * p.w * p.c_in, n_out = p.n * oh * ow * cols;
        CHECK(oh == (k->h + 2 * k->ph - k->kh) / k->sh + 1 && ow == (k->w + 2 * k->pw - k->kw) / k->sw + 1);
        float *x = rnd(n_in, 0, 0), *r = rnd(n_out, 0, 0), *y = rnd(n_out + 1, 0, 0);
        for (int64_t i = 0; i < n_in; i++) x[i] = (float)(i + 1);
        pl_ref_im2col(&p, x, r);
        int64_t wrong = 0;
        for (int64_t b = 0; b < p.n; b++)
            for (int64_t oy = 0; oy < oh; oy++)
                for (int64_t ox = 0; ox < ow; ox++)
                    for (int64_t ch = 0; ch < p.c_in; ch++)
                        for (int64_t ky = 0; ky < p.kh; ky++)
                            for (int64_t kx = 0; kx < p.kw; kx++) {
                                const int64_t iy = oy * p.sh - p.ph + ky, ix = ox * p.sw - p.pw + kx;
                                const bool in = iy >= 0 && iy < p.h && ix >= 0 && ix < p.w;
                                const float want = in ? (float)(((b * p.h + iy) * p.w + ix) * p.c_in + ch + 1) : 0.0f;
                                const int64_t col = ch * p.kh * p.kw + ky * p.kw + kx;
                                wrong += r[((b * oh + oy) * ow + ox) * cols + col] != want;
                            }
        CHECK_MSG(wrong == 0, "reference im2col case %zu: %lld values out of place", ci, (long long)wrong);
        for (int round = 0; round < 2; round++) {
            p.round_f16 = round;
            for (int64_t i = 0; i < n_in; i++) {
                /* f16's range and past it, its subnormals, exact halfway points */
                const int kind = (int)((uint32_t)pl_rng_next(&rng) % 8);
                float v = pl_rng_uniform(&rng) * 8 - 4;
                if (kind == 0) v *= 30000.0f;
                else if (kind == 1) v *= 1e-6f;
                else if (kind == 2) v = pl_f16_to_f32((uint16_t)(uint32_t)pl_rng_next(&rng)) + ldexpf(1.0f, -12);
                x[i] = isfinite(v) ? v : 1.0f;
            }
            pl_ref_im2col(&p, x, r);
            if (round) {
                for (int64_t i = 0; i < n_out; i++)
                    CHECK_MSG(r[i] == pl_f16_to_f32(pl_f32_to_f16(r[i])) || isinf(r[i]), "reference im2col did not round");
            }
            FOR_INST(v) {
                y[n_out] = -7.0f;
                pl_im2col(v->c, &p, x, y);
                CHECK_MSG(v->c->status == POCKETLLM_OK, "%s/%d im2col failed", v->isa, v->nt);
                CHECK_MSG(same_bits(y, r, (size_t)n_out * 4) && y[n_out] == -7.0f, "%s/%d im2col case %zu round %d", v->isa,
                          v->nt, ci, round);
            }
        }
        free(x), free(r), free(y);
    }
    /* bad shapes: a message and a failed pass, no kernel run; a backend
     * without the ops fails the pass too */
    pl_compute *c = insts[0].c;
    const pl_im2col_params bad[] = {
        {1, 1, 2, 2, 3, 3, 1, 1, 0, 0, false}, {0, 1, 4, 4, 3, 3, 1, 1, 0, 0, false}, {1, 1, 4, 4, 3, 3, 0, 1, 0, 0, false},
        {1, 1, 4, 4, 3, 3, 1, 1, -1, 0, false}, {1, 0, 4, 4, 3, 3, 1, 1, 0, 0, false}, {1, 1, 4, 1, 3, 3, 2, 2, 0, 0, false},
    };
    float out[64];
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        c->status = POCKETLLM_OK;
        pl_im2col(c, &bad[i], out, out);
        CHECK_MSG(c->status == POCKETLLM_ERR_INVALID_ARGUMENT, "bad im2col shape %zu accepted", i);
        CHECK(strstr(pocketllm_last_error(), "im2col") != NULL);
    }
    c->status = POCKETLLM_OK;
    pl_compute_ops none = *c->ops;
    none.gelu_erf = NULL, none.im2col = NULL, none.transpose = NULL;
    pl_compute lack = *c;
    lack.ops = &none;
    const pl_im2col_params good = {1, 1, 4, 4, 3, 3, 1, 1, 0, 0, false};
    pl_im2col(&lack, &good, out, out);
    CHECK(lack.status == POCKETLLM_ERR_UNSUPPORTED && strstr(pocketllm_last_error(), "im2col"));
    lack.status = POCKETLLM_OK;
    pl_gelu_erf(&lack, out, out, 4);
    CHECK(lack.status == POCKETLLM_ERR_UNSUPPORTED && strstr(pocketllm_last_error(), "gelu_erf"));
    lack.status = POCKETLLM_OK;
    pl_transpose(&lack, out, out + 32, 1, 2, 2);
    CHECK(lack.status == POCKETLLM_ERR_UNSUPPORTED && strstr(pocketllm_last_error(), "transpose"));
}

/* transpose: the reference against the formula, the instances bit for bit
 * (it only moves values) over shapes around the 32 x 32 tiles and the
 * tower's 8 x 16 x 6240. */
static void test_transpose(void) {
    static const int64_t shapes[][3] = {{1, 1, 1}, {8, 16, 6240}, {3, 33, 65}, {2, 1, 100}, {2, 100, 1}, {5, 31, 32}, {1, 64, 64}, {2, 97, 3}};
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
        const int64_t b = shapes[si][0], rows = shapes[si][1], cols = shapes[si][2], all = b * rows * cols;
        float *x = rnd(all, -5, 5), *r = rnd(all, 0, 0), *y = rnd(all + 1, 0, 0);
        pl_ref_transpose(x, r, b, rows, cols);
        int64_t wrong = 0;
        for (int64_t k = 0; k < b; k++)
            for (int64_t i = 0; i < rows; i++)
                for (int64_t j = 0; j < cols; j++) wrong += !same_bits(&r[k * rows * cols + j * rows + i], &x[(k * rows + i) * cols + j], 4);
        CHECK_MSG(wrong == 0, "reference transpose %lldx%lldx%lld", (long long)b, (long long)rows, (long long)cols);
        FOR_INST(v) {
            y[all] = -7.0f;
            pl_transpose(v->c, x, y, b, rows, cols);
            CHECK_MSG(same_bits(y, r, (size_t)all * 4) && y[all] == -7.0f, "%s/%d transpose %lldx%lldx%lld", v->isa, v->nt,
                      (long long)b, (long long)rows, (long long)cols);
        }
        free(x), free(r), free(y);
    }
}

int main(void) {
    pl_rng_seed(&rng, 20261130);
    const pl_cpu_isa *all[] = {pl_cpu_isa_generic(), pl_cpu_isa_avx2(), pl_cpu_isa_avx512(), pl_cpu_isa_neon()};
    const size_t n_all = sizeof all / sizeof all[0];
    for (size_t i = 0; i < n_all; i++) {
        if (!pl_cpu_isa_usable(all[i])) {
            fprintf(stderr, "note: %s kernels not runnable on this host, not tested here\n", all[i] ? all[i]->name : "(absent)");
            all[i] = NULL;
            continue;
        }
        if (all[i] == pl_cpu_isa_generic() && pl_test_skip_generic()) {
            all[i] = NULL;
            continue;
        }
        for (int nt = 1; nt <= 3; nt += 2) insts[n_insts++] = (inst){make(all[i], nt), all[i]->name, nt};
    }
    CHECK(n_insts >= 2);
    for (size_t i = 0; i < n_all; i++)
        if (all[i]) test_axpy_rows(all[i]), test_dot_rows(all[i]), test_scale_round(all[i]), test_rows2(all[i]), test_mad_round(all[i]),
            test_flash_rows(all[i]), test_flash_weights(all[i]);
    CHECK_MSG(!pl_cpu_isa_usable(pl_cpu_isa_avx512()) || pl_cpu_isa_avx512()->axpy_rows_f16,
              "the AVX-512 table lost axpy_rows_f16");
    CHECK_MSG(!pl_cpu_isa_usable(pl_cpu_isa_avx512()) || pl_cpu_isa_avx512()->dot_rows_f16,
              "the AVX-512 table lost dot_rows_f16");
    CHECK_MSG(!pl_cpu_isa_usable(pl_cpu_isa_avx512()) || pl_cpu_isa_avx512()->dot_rows2_f16,
              "the AVX-512 table lost dot_rows2_f16");
    CHECK_MSG(!pl_cpu_isa_usable(pl_cpu_isa_avx512()) || pl_cpu_isa_avx512()->flash_weights,
              "the AVX-512 table lost flash_weights");
    CHECK_MSG(!pl_cpu_isa_usable(pl_cpu_isa_avx512()) || pl_cpu_isa_avx512()->scale_round_f16,
              "the AVX-512 table lost scale_round_f16");
    CHECK_MSG(!pl_cpu_isa_usable(pl_cpu_isa_neon()) || pl_cpu_isa_neon()->axpy_rows_f16, "the NEON table lost axpy_rows_f16");
    CHECK_MSG(!pl_cpu_isa_usable(pl_cpu_isa_neon()) || pl_cpu_isa_neon()->dot_rows_f16, "the NEON table lost dot_rows_f16");
    CHECK_MSG(!pl_cpu_isa_usable(pl_cpu_isa_neon()) || pl_cpu_isa_neon()->dot_rows2_f16, "the NEON table lost dot_rows2_f16");
    CHECK_MSG(!pl_cpu_isa_usable(pl_cpu_isa_neon()) || pl_cpu_isa_neon()->scale_round_f16,
              "the NEON table lost scale_round_f16");
    CHECK_MSG(!pl_cpu_isa_usable(pl_cpu_isa_neon()) || pl_cpu_isa_neon()->f16_dot_tier == PL_TIER_NEON,
              "the NEON table's f16 row kernels are not paired with the NEON tier");
    test_elementwise();
    test_rope();
    test_attention();
    test_layer_norm_gelu();
    test_rope_multi();
    test_attention_full();
    test_gelu_erf();
    test_im2col();
    test_transpose();
    for (uint32_t t = 0; t < PL_TYPE_COUNT; t++)
        if (pl_cpu_supports(PL_OP_MUL_MAT, t)) test_matmul(t);
    FOR_INST(v) {
        CHECK_MSG(v->c->status == POCKETLLM_OK, "%s/%d recorded a failure", v->isa, v->nt);
        if (v->nt == 1) test_thread_invariance(pl_cpu_isa_by_name(v->isa));
        v->c->ops->free(v->c);
    }
    test_support_table();
    TEST_DONE();
}
