/*
 * test_vk_ops.c -- the Vulkan backend's ops without a weight operand
 * against the scalar reference, each with its stated tolerance:
 *   add, mul (one row broadcast or not), scale, kv_store (f16, f32, odd
 *   offsets), rope (normal, neox, partial rotation, frequency factors, in
 *   place), argmax (ties: the first)         bit for bit
 *   silu_mul, rms_norm, softmax              1e-5 relative + 1e-6 (the
 *                                            device's exp and sqrt, sums in
 *                                            another order than the
 *                                            reference's doubles)
 *   attention                                f32 cache: 2e-6; f16 cache and
 *                                            flash: 2e-3 with at most 10% of
 *                                            the values beyond 1e-5 (a
 *                                            softmax weight beside an f16
 *                                            rounding boundary may round the
 *                                            other way; a missing rounding
 *                                            step moves most values)
 * for heads of 64 and 128 (and odd sizes), grouped-query ratios 1, 2, 4 and
 * 8, 1, 2, 7 and 64 query rows, and contexts past the 2048 positions whose
 * scores fit the device's shared memory (the scratch path).  Also: a chain
 * of dependent ops recorded in one pass with no wait between them gives
 * the result of running them one by one (the barriers are where they must
 * be), and independent ops are recorded without a barrier between them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/vk_test.h"
#include "backend/vulkan/vk_compute.h"
#include "base/half.h"
#include "base/rng.h"
#include "ops/ref.h"
#include "pltest.h"
#include "quant/types.h"

static pl_rng rng;
static vkt T;

static float *rnd(int64_t n, float lo, float hi) {
    float *f = malloc((size_t)(n > 0 ? n : 1) * sizeof *f);
    for (int64_t i = 0; i < n; i++) f[i] = lo + (hi - lo) * pl_rng_uniform(&rng);
    return f;
}

static bool same_bits(const void *a, const void *b, size_t bytes) { return memcmp(a, b, bytes) == 0; }

/* Largest |a - b| / (abs_tol + rel_tol * |b|); <= 1 passes. */
static double worst(const float *a, const float *b, int64_t n, double abs_tol, double rel_tol) {
    double w = 0;
    for (int64_t i = 0; i < n; i++) {
        double e = fabs((double)a[i] - (double)b[i]) / (abs_tol + rel_tol * fabs((double)b[i]));
        if (isnan(a[i]) != isnan(b[i]) || !(e == e)) e = INFINITY;
        if (e > w) w = e;
    }
    return w;
}

static double share_off(const float *a, const float *b, int64_t n, double abs_tol, double rel_tol) {
    int64_t off = 0;
    for (int64_t i = 0; i < n; i++) off += !(fabs((double)a[i] - (double)b[i]) <= abs_tol + rel_tol * fabs((double)b[i]));
    return (double)off / (double)n;
}

/* Device copy of n floats. */
static float *dev_f(const float *h, int64_t n) { return vkt_buf(&T, h, (size_t)n * 4); }

/* Read n floats back and free the device buffer; false on failure. */
static bool fetch(float *host, float *dev, int64_t n, const char *what) {
    int st = vkt_get(&T, host, dev, (size_t)n * 4);
    CHECK_MSG(st == 0, "%s: %s", what, pocketllm_last_error());
    T.c->ops->release(T.c, dev);
    vkt_reset(&T);
    return st == 0;
}

static void test_elementwise(void) {
    const int64_t shapes[][2] = {{1, 1}, {1, 300}, {7, 64}, {33, 1000}, {512, 257}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        const int64_t rows = shapes[si][0], n = shapes[si][1], all = rows * n;
        float *a = rnd(all, -4, 4), *b = rnd(all, -4, 4), *r = rnd(all, 0, 0), *g = rnd(all, 0, 0);
        for (int op = 0; op < 6; op++) {
            /* 0 add, 1 add broadcast, 2 mul, 3 mul broadcast, 4 scale, 5 silu_mul */
            const bool bc = op == 1 || op == 3;
            const int64_t b_rows = bc ? 1 : rows;
            float *da = dev_f(a, all), *db = dev_f(b, b_rows * n), *dy = vkt_out(&T, (size_t)all * 4);
            const char *name = op < 2 ? "add" : op < 4 ? "mul" : op == 4 ? "scale" : "silu_mul";
            if (op < 2) {
                pl_ref_add(a, b, r, rows, n, b_rows);
                T.c->ops->add(T.c, da, db, dy, rows, n, b_rows);
            } else if (op < 4) {
                pl_ref_mul(a, b, r, rows, n, b_rows);
                T.c->ops->mul(T.c, da, db, dy, rows, n, b_rows);
            } else if (op == 4) {
                pl_ref_scale(a, 0.37f, r, all);
                T.c->ops->scale(T.c, da, 0.37f, dy, all);
            } else {
                pl_ref_silu_mul(a, b, r, all);
                T.c->ops->silu_mul(T.c, da, db, dy, all);
            }
            if (fetch(g, dy, all, name)) {
                if (op < 5)
                    CHECK_MSG(same_bits(g, r, (size_t)all * 4), "%s%s %lldx%lld differs from the reference", name,
                              bc ? " (broadcast)" : "", (long long)rows, (long long)n);
                else
                    CHECK_MSG(worst(g, r, all, 1e-6, 1e-5) <= 1, "silu_mul %lldx%lld", (long long)rows, (long long)n);
            }
            T.c->ops->release(T.c, da);
            T.c->ops->release(T.c, db);
        }
        free(a), free(b), free(r), free(g);
    }
}

static void test_rows_ops(void) {
    const int64_t shapes[][2] = {{1, 64}, {16, 128}, {3, 1000}, {9, 2048}, {1, 151936}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        const int64_t rows = shapes[si][0], n = shapes[si][1], all = rows * n;
        float *x = rnd(all, -3, 3), *w = rnd(n, 0.5f, 1.5f), *r = rnd(all, 0, 0), *g = rnd(all, 0, 0);
        for (int with_w = 0; with_w < 2; with_w++) {
            float *dx = dev_f(x, all), *dw = dev_f(w, n), *dy = vkt_out(&T, (size_t)all * 4);
            pl_ref_rms_norm(x, with_w ? w : NULL, r, rows, n, 1e-6f);
            T.c->ops->rms_norm(T.c, dx, with_w ? dw : NULL, dy, rows, n, 1e-6f);
            if (fetch(g, dy, all, "rms_norm"))
                CHECK_MSG(worst(g, r, all, 1e-6, 1e-5) <= 1, "rms_norm %lldx%lld%s", (long long)rows, (long long)n,
                          with_w ? "" : " (no weight)");
            T.c->ops->release(T.c, dx);
            T.c->ops->release(T.c, dw);
        }
        /* softmax, out of place and in place */
        for (int inplace = 0; inplace < 2; inplace++) {
            float *dx = dev_f(x, all), *dy = inplace ? dx : vkt_out(&T, (size_t)all * 4);
            for (int64_t i = 0; i < rows; i++) pl_ref_softmax(x + i * n, r + i * n, n);
            T.c->ops->softmax(T.c, dx, dy, rows, n);
            if (fetch(g, dy, all, "softmax"))
                CHECK_MSG(worst(g, r, all, 1e-7, 1e-5) <= 1, "softmax %lldx%lld%s", (long long)rows, (long long)n,
                          inplace ? " in place" : "");
            if (!inplace) T.c->ops->release(T.c, dx);
        }
        /* argmax: the first of equal maxima */
        for (int64_t i = 0; i < rows; i++) {
            float *xr = x + i * n;
            if (n > 10) xr[n - 3] = xr[n / 2] = 9.0f; /* a tie: n/2 wins */
            float *dx = dev_f(xr, n);
            const int64_t got = T.c->ops->argmax(T.c, dx, n), want = pl_ref_argmax(xr, n);
            CHECK_MSG(got == want && T.c->status == 0, "argmax of %lld: %lld, reference %lld", (long long)n, (long long)got,
                      (long long)want);
            T.c->ops->release(T.c, dx);
            vkt_reset(&T);
        }
        free(x), free(w), free(r), free(g);
    }
}

static void test_rope(void) {
    const int64_t shapes[][3] = {{4, 64, 64}, {8, 128, 128}, {2, 128, 64}, {3, 10, 6}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int mode = 0; mode < 4; mode++) {
            const int64_t n_head = shapes[si][0], hd = shapes[si][1], n_rot = shapes[si][2], n_tok = 7;
            float *ff = rnd(n_rot / 2, 1, 8);
            pl_rope_params rp = {mode & 1 ? PL_ROPE_NEOX : PL_ROPE_NORMAL, n_rot, 1e6f, mode & 2 ? 0.25f : 1.0f,
                                 mode & 2 ? ff : NULL};
            int32_t pos[7] = {0, 1, 2, 100, 4095, 70000, 3};
            const int64_t all = n_tok * n_head * hd;
            float *x = rnd(all, -2, 2), *r = rnd(all, 0, 0), *g = rnd(all, 0, 0);
            pl_ref_rope(&rp, x, r, n_tok, n_head, hd, pos);
            for (int inplace = 0; inplace < 2; inplace++) {
                float *dx = dev_f(x, all), *dy = inplace ? dx : vkt_out(&T, (size_t)all * 4);
                T.c->ops->rope(T.c, &rp, dx, dy, n_tok, n_head, hd, pos);
                if (fetch(g, dy, all, "rope"))
                    CHECK_MSG(same_bits(g, r, (size_t)all * 4), "rope %s heads %lld hd %lld n_rot %lld%s%s differs",
                              mode & 1 ? "neox" : "normal", (long long)n_head, (long long)hd, (long long)n_rot,
                              mode & 2 ? " freq factors" : "", inplace ? " in place" : "");
                if (!inplace) T.c->ops->release(T.c, dx);
            }
            free(ff), free(x), free(r), free(g);
        }
}

static void test_kv_store(void) {
    for (int f16 = 0; f16 < 2; f16++)
        for (int64_t off = 0; off < 3; off++)
            for (int64_t n = 1; n < 300; n = n * 3 + 1) {
                const uint32_t type = f16 ? PL_TYPE_F16 : PL_TYPE_F32;
                const size_t esz = f16 ? 2 : 4, total = (size_t)(n + 6) * esz;
                float *x = rnd(n, -70000, 70000);
                x[0] = 1e-7f; /* an f16 subnormal */
                unsigned char *ref = malloc(total), *got = malloc(total);
                memset(ref, 0x5a, total);
                void *dst = vkt_buf(&T, ref, total); /* the bytes around the store must be kept */
                pl_ref_kv_store(type, x, ref + (size_t)off * esz, n);
                float *dx = dev_f(x, n);
                T.c->ops->kv_store(T.c, type, dx, (char *)dst + (size_t)off * esz, n);
                int st = vkt_get(&T, got, dst, total);
                CHECK_MSG(st == 0 && same_bits(got, ref, total), "kv_store %s n %lld at element %lld differs",
                          f16 ? "f16" : "f32", (long long)n, (long long)off);
                T.c->ops->release(T.c, dst);
                T.c->ops->release(T.c, dx);
                vkt_reset(&T);
                free(x), free(ref), free(got);
            }
}

static void test_attention(void) {
    /* heads, KV heads, head size: GQA 1, 2, 4, 8; heads of 64 and 128 */
    const int64_t shapes[][3] = {{4, 4, 64}, {8, 4, 128}, {16, 4, 64}, {16, 2, 128}, {6, 3, 72}, {3, 1, 10}};
    /* rows in the pass, positions already in the cache */
    const int64_t cases[][2] = {{1, 0}, {2, 5}, {7, 0}, {64, 30}, {1, 2100}, {3, 2046}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int mode = 0; mode < 4; mode++)
            for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
                const int f16 = mode & 1, flash = mode >> 1;
                const int64_t nh = shapes[si][0], nkv = shapes[si][1], hd = shapes[si][2];
                const int64_t n_tok = cases[ci][0], pos0 = cases[ci][1], n_kv = pos0 + n_tok, all = n_tok * nh * hd;
                if (n_kv > 2000 && si > 1) continue; /* the long contexts on two shapes are enough */
                pl_attn_params ap = {nh, nkv, hd, 1.0f / sqrtf((float)hd), f16 ? PL_TYPE_F16 : PL_TYPE_F32, flash};
                const size_t cb = (size_t)(n_kv * nkv * hd) * (f16 ? 2 : 4);
                float *kf = rnd(n_kv * nkv * hd, -2, 2), *vf = rnd(n_kv * nkv * hd, -2, 2);
                void *k = malloc(cb), *v = malloc(cb);
                pl_ref_kv_store(ap.kv_type, kf, k, n_kv * nkv * hd);
                pl_ref_kv_store(ap.kv_type, vf, v, n_kv * nkv * hd);
                float *q = rnd(all, -2, 2), *r = rnd(all, 0, 0), *g = rnd(all, 0, 0);
                CHECK(pl_ref_attention(&ap, q, k, v, n_tok, pos0, r) == POCKETLLM_OK);
                void *dk = vkt_buf(&T, k, cb), *dv = vkt_buf(&T, v, cb);
                float *dq = dev_f(q, all), *dy = vkt_out(&T, (size_t)all * 4);
                T.c->ops->attention(T.c, &ap, dq, dk, dv, n_tok, pos0, dy);
                if (fetch(g, dy, all, "attention")) {
                    const double tol = f16 || flash ? 2e-3 : 2e-6;
                    CHECK_MSG(worst(g, r, all, tol, tol) <= 1, "attention %s%s heads %lld/%lld hd %lld tok %lld pos0 %lld",
                              f16 ? "f16" : "f32", flash ? " flash" : "", (long long)nh, (long long)nkv, (long long)hd,
                              (long long)n_tok, (long long)pos0);
                    const double off = share_off(g, r, all, 1e-5, 1e-5);
                    CHECK_MSG(off <= 0.10 || off * (double)all <= (double)hd,
                              "attention %s%s heads %lld/%lld hd %lld tok %lld pos0 %lld: %.1f%% of the values off",
                              f16 ? "f16" : "f32", flash ? " flash" : "", (long long)nh, (long long)nkv, (long long)hd,
                              (long long)n_tok, (long long)pos0, off * 100);
                }
                T.c->ops->release(T.c, dk);
                T.c->ops->release(T.c, dv);
                T.c->ops->release(T.c, dq);
                free(kf), free(vf), free(k), free(v), free(q), free(r), free(g);
            }
}

/* y = ((x + x) * x) + 1 * ..., recorded in one pass: every op reads the
 * previous one's output, so a missing barrier shows as a wrong value; and
 * two independent adds are recorded with no barrier between them. */
static void test_ordering(void) {
    const int64_t n = 1 << 16;
    float *x = rnd(n, -1, 1), *r = rnd(n, 0, 0), *g = rnd(n, 0, 0);
    float *dx = dev_f(x, n), *d1 = vkt_out(&T, (size_t)n * 4), *d2 = vkt_out(&T, (size_t)n * 4);
    pl_vk_compute *vc = pl_vkc(T.c);
    memcpy(r, x, (size_t)n * 4);
    for (int i = 0; i < 20; i++) {
        pl_ref_add(r, x, r, 1, n, 1);
        pl_ref_mul(r, x, r, 1, n, 1);
        pl_ref_scale(r, 0.5f, r, n);
    }
    T.c->ops->add(T.c, dx, dx, d1, 1, n, 1);
    T.c->ops->scale(T.c, dx, 1.0f, d1, n); /* d1 = x, after the add: a write after a write */
    for (int i = 0; i < 20; i++) {
        T.c->ops->add(T.c, d1, dx, d2, 1, n, 1);
        T.c->ops->mul(T.c, d2, dx, d1, 1, n, 1);
        T.c->ops->scale(T.c, d1, 0.5f, d1, n);
    }
    if (fetch(g, d1, n, "ordering")) CHECK_MSG(same_bits(g, r, (size_t)n * 4), "a chain of ops in one pass differs");
    /* two adds into different outputs from the same inputs: no barrier */
    float *d3 = vkt_out(&T, (size_t)n * 4), *d4 = vkt_out(&T, (size_t)n * 4);
    pl_vk_sync(vc);
    T.c->ops->add(T.c, dx, dx, d3, 1, n, 1);
    const uint64_t before = vc->n_barrier;
    T.c->ops->add(T.c, dx, dx, d4, 1, n, 1);
    CHECK_MSG(vc->n_barrier == before, "independent ops were separated by a barrier");
    pl_vk_sync(vc);
    T.c->ops->release(T.c, d3);
    T.c->ops->release(T.c, d4);
    T.c->ops->release(T.c, dx);
    T.c->ops->release(T.c, d2);
    vkt_reset(&T);
    free(x), free(r), free(g);
}

int main(void) {
    pl_rng_seed(&rng, 4321);
    pl_compute_limits lim = {.n_batch = 64, .max_in = 1024, .n_ctx = 4096, .head_dim = 128};
    int rc = vkt_open(&T, &lim);
    if (rc) return rc;
    test_elementwise();
    test_rows_ops();
    test_rope();
    test_kv_store();
    test_ordering();
    test_attention();
    vkt_close(&T);
    TEST_DONE();
}
