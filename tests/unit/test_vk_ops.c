/*
 * test_vk_ops.c -- the Vulkan backend's ops without a weight operand
 * against the scalar reference, each with its stated tolerance:
 *   add, mul (one row broadcast or not), scale, kv_store (f16, f32, odd
 *   offsets; bf16, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl at byte offsets
 *   that straddle words, with values of every sign, ties and zero blocks), rope (normal, neox, partial rotation, frequency factors, in
 *   place; the multi-axis VISION and MROPE_INTERLEAVED modes), gelu (every
 *   f16 value and the ties between), argmax (ties: the first), im2col
 *   (with and without f16 rounding), transpose  bit for bit
 *   gelu_erf                                 6 * 2^-24 * |x| (a float
 *                                            polynomial erf against libm's
 *                                            erff)
 *   silu_mul, rms_norm, softmax              1e-5 relative + 1e-6 (the
 *                                            device's exp and sqrt, sums in
 *                                            another order than the
 *                                            reference's doubles)
 *   layer_norm                               1e-6 relative + 1e-6 (f32
 *                                            work-group sums of the mean
 *                                            and the variance where the
 *                                            reference sums in double)
 *   attention                                f32 cache: 2e-6; f16 cache and
 *                                            flash: 2e-3 with at most 10% of
 *                                            the values beyond 1e-5 (a
 *                                            softmax weight beside an f16
 *                                            rounding boundary may round the
 *                                            other way; a missing rounding
 *                                            step moves most values);
 *                                            packed caches (K and V of each
 *                                            block type and bf16, alike or
 *                                            mixed with f16, default and
 *                                            flash) the same bounds as f16
 * for heads of 64 and 128 (and odd sizes), grouped-query ratios 1, 2, 4 and
 * 8, 1, 2, 7 and 64 query rows, and contexts past the 2048 positions whose
 * scores fit the device's shared memory (the scratch path); not causal
 * (the vision tower's n_kv > 0: attention_tile.comp, and attention.comp
 * for heads over 128) over 1, 17, 300, 1100 and 2500 rows.  Also: a chain
 * of dependent ops recorded in one pass with no wait between them gives
 * the result of running them one by one (the barriers are where they must
 * be), and independent ops are recorded without a barrier between them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/vk_test.h"
#include "backend/vulkan/vk_compute.h"
#include "base/half.h"
#include "base/rng.h"
#include "ops/ref.h"
#include "pltest.h"
#include "quant/kv_types.h"
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

/* The device's rope of random x, out of place and in place, bit for bit
 * against pl_ref_rope; `what` names the case in a failure. */
static void check_rope(const pl_rope_params *rp, int64_t n_tok, int64_t n_head, int64_t hd, const int32_t *pos,
                       const char *what) {
    const int64_t all = n_tok * n_head * hd;
    float *x = rnd(all, -2, 2), *r = rnd(all, 0, 0), *g = rnd(all, 0, 0);
    pl_ref_rope(rp, x, r, n_tok, n_head, hd, pos);
    for (int inplace = 0; inplace < 2; inplace++) {
        float *dx = dev_f(x, all), *dy = inplace ? dx : vkt_out(&T, (size_t)all * 4);
        T.c->ops->rope(T.c, rp, dx, dy, n_tok, n_head, hd, pos);
        if (fetch(g, dy, all, "rope"))
            CHECK_MSG(same_bits(g, r, (size_t)all * 4), "rope %s%s differs", what, inplace ? " in place" : "");
        if (!inplace) T.c->ops->release(T.c, dx);
    }
    free(x), free(r), free(g);
}

static void test_rope(void) {
    const int64_t shapes[][3] = {{4, 64, 64}, {8, 128, 128}, {2, 128, 64}, {3, 10, 6}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int mode = 0; mode < 4; mode++) {
            const int64_t n_head = shapes[si][0], hd = shapes[si][1], n_rot = shapes[si][2], n_tok = 7;
            float *ff = rnd(n_rot / 2, 1, 8);
            pl_rope_params rp = {.mode = mode & 1 ? PL_ROPE_NEOX : PL_ROPE_NORMAL,
                                 .n_rot = n_rot,
                                 .freq_base = 1e6f,
                                 .freq_scale = mode & 2 ? 0.25f : 1.0f,
                                 .freq_factors = mode & 2 ? ff : NULL};
            int32_t pos[7] = {0, 1, 2, 100, 4095, 70000, 3};
            char what[128];
            snprintf(what, sizeof what, "%s heads %lld hd %lld n_rot %lld%s", mode & 1 ? "neox" : "normal",
                     (long long)n_head, (long long)hd, (long long)n_rot, mode & 2 ? " freq factors" : "");
            check_rope(&rp, n_tok, n_head, hd, pos, what);
            free(ff);
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

/* The packed types: whole blocks of values (spread, all one sign, a
 * zero block, values at q8_0's rounding ties) written at byte offsets that
 * put the blocks across 32-bit words; the bytes around must be kept. */
static void test_kv_store_packed(void) {
    const uint32_t types[] = {PL_TYPE_BF16, PL_TYPE_Q8_0, PL_TYPE_Q4_0, PL_TYPE_Q4_1,
                              PL_TYPE_Q5_0, PL_TYPE_Q5_1, PL_TYPE_IQ4_NL};
    const int64_t offs[] = {0, 2, 18, 34, 6};
    for (size_t ti = 0; ti < sizeof types / sizeof *types; ti++)
        for (size_t oi = 0; oi < sizeof offs / sizeof *offs; oi++)
            for (int64_t n = 32; n <= 32 * 37; n = n * 6 + 32) {
                const uint32_t type = types[ti];
                const int64_t off = offs[oi];
                const size_t bytes = (size_t)pl_kv_row_bytes(type, n), total = bytes + (size_t)off + 8;
                float *x = rnd(n, -3, 3);
                for (int64_t j = 32; j < 64 && j < n; j++) x[j] = 0.0f;           /* a zero block */
                for (int64_t j = 64; j < 96 && j < n; j++) x[j] = 0.5f + (float)j; /* one sign */
                for (int64_t j = 96; j < 128 && j < n; j++) x[j] = (float)(j - 112) * 0.5f; /* ties */
                unsigned char *ref = malloc(total), *got = malloc(total);
                memset(ref, 0xa5, total);
                void *dst = vkt_buf(&T, ref, total);
                pl_ref_kv_store(type, x, ref + off, n);
                float *dx = dev_f(x, n);
                T.c->ops->kv_store(T.c, type, dx, (char *)dst + off, n);
                int st = vkt_get(&T, got, dst, total);
                CHECK_MSG(st == 0 && same_bits(got, ref, total), "kv_store %s n %lld at byte %lld differs",
                          pl_type_get(type)->name, (long long)n, (long long)off);
                T.c->ops->release(T.c, dst);
                T.c->ops->release(T.c, dx);
                vkt_reset(&T);
                free(x), free(ref), free(got);
            }
}

/* the largest |device - reference| of the non-causal cases: f32 default,
 * and f16 cache or flash (printed) */
static double nc_err[2];

/* One attention call against the reference: n_tok query rows; causal
 * (ap->n_kv == 0) from pos0, or over ap->n_kv rows (pos0 then ignored by
 * both).  Bounds as the file's comment says. */
static void check_attention(const pl_attn_params *ap, int64_t n_tok, int64_t pos0) {
    /* f16 stands for any cache type but f32 (the bounds are f16's) */
    const int f16 = ap->k_type != PL_TYPE_F32 || ap->v_type != PL_TYPE_F32, flash = ap->flash;
    const int64_t nh = ap->n_head, nkv = ap->n_head_kv, hd = ap->head_dim;
    const int64_t n_kv = ap->n_kv > 0 ? ap->n_kv : pos0 + n_tok, all = n_tok * nh * hd;
    const size_t kb = (size_t)pl_kv_row_bytes(ap->k_type, n_kv * nkv * hd);
    const size_t vb = (size_t)pl_kv_row_bytes(ap->v_type, n_kv * nkv * hd);
    float *kf = rnd(n_kv * nkv * hd, -2, 2), *vf = rnd(n_kv * nkv * hd, -2, 2);
    void *k = malloc(kb), *v = malloc(vb);
    pl_ref_kv_store(ap->k_type, kf, k, n_kv * nkv * hd);
    pl_ref_kv_store(ap->v_type, vf, v, n_kv * nkv * hd);
    float *q = rnd(all, -2, 2), *r = rnd(all, 0, 0), *g = rnd(all, 0, 0);
    CHECK(pl_ref_attention(ap, q, k, v, n_tok, pos0, r) == POCKETLLM_OK);
    void *dk = vkt_buf(&T, k, kb), *dv = vkt_buf(&T, v, vb);
    float *dq = dev_f(q, all), *dy = vkt_out(&T, (size_t)all * 4);
    T.c->ops->attention(T.c, ap, dq, dk, dv, n_tok, pos0, dy);
    char what[160];
    snprintf(what, sizeof what, "attention K %s V %s%s%s heads %lld/%lld hd %lld tok %lld %s %lld",
             pl_type_get(ap->k_type)->name, pl_type_get(ap->v_type)->name,
             flash ? " flash" : "", ap->n_kv > 0 ? " non-causal" : "", (long long)nh, (long long)nkv, (long long)hd,
             (long long)n_tok, ap->n_kv > 0 ? "n_kv" : "pos0", (long long)(ap->n_kv > 0 ? n_kv : pos0));
    if (fetch(g, dy, all, what)) {
        const double tol = f16 || flash ? 2e-3 : 2e-6;
        CHECK_MSG(worst(g, r, all, tol, tol) <= 1, "%s", what);
        const double off = share_off(g, r, all, 1e-5, 1e-5);
        CHECK_MSG(off <= 0.10 || off * (double)all <= (double)hd, "%s: %.1f%% of the values off", what, off * 100);
        if (ap->n_kv > 0)
            for (int64_t i = 0; i < all; i++) {
                const double e = fabs((double)g[i] - (double)r[i]);
                if (e > nc_err[f16 || flash]) nc_err[f16 || flash] = e;
            }
    }
    T.c->ops->release(T.c, dk);
    T.c->ops->release(T.c, dv);
    T.c->ops->release(T.c, dq);
    free(kf), free(vf), free(k), free(v), free(q), free(r), free(g);
}

static void test_attention(void) {
    /* heads, KV heads, head size: GQA 1, 2, 4, 8; heads of 64 and 128 */
    const int64_t shapes[][3] = {{4, 4, 64}, {8, 4, 128}, {16, 4, 64}, {16, 2, 128}, {6, 3, 72}, {3, 1, 10}};
    /* rows in the pass, positions already in the cache */
    const int64_t cases[][2] = {{1, 0}, {2, 5}, {7, 0}, {64, 30}, {1, 2100}, {3, 2046}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int mode = 0; mode < 4; mode++)
            for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
                const int64_t n_tok = cases[ci][0], pos0 = cases[ci][1];
                if (pos0 + n_tok > 2000 && si > 1) continue; /* the long contexts on two shapes are enough */
                const pl_attn_params ap = {.n_head = shapes[si][0],
                                           .n_head_kv = shapes[si][1],
                                           .head_dim = shapes[si][2],
                                           .scale = 1.0f / sqrtf((float)shapes[si][2]),
                                           .k_type = mode & 1 ? PL_TYPE_F16 : PL_TYPE_F32,
                                           .v_type = mode & 1 ? PL_TYPE_F16 : PL_TYPE_F32,
                                           .flash = mode >> 1};
                check_attention(&ap, n_tok, pos0);
            }
}

/* Packed caches: each block type and bf16 as K and V (flash; bf16 also
 * default), and as K beside an f16 V (both paths), on a GQA shape with
 * heads of 128 and one of 64, from one query to a 64-row pass, and one
 * context past the shared scores. */
static void test_attention_packed(void) {
    const uint32_t types[] = {PL_TYPE_BF16, PL_TYPE_Q8_0, PL_TYPE_Q4_0, PL_TYPE_Q4_1,
                              PL_TYPE_Q5_0, PL_TYPE_Q5_1, PL_TYPE_IQ4_NL};
    const int64_t shapes[][3] = {{8, 4, 128}, {4, 4, 64}};
    const int64_t cases[][2] = {{1, 0}, {7, 3}, {64, 30}, {1, 2100}};
    for (size_t ti = 0; ti < sizeof types / sizeof *types; ti++)
        for (size_t si = 0; si < 2; si++)
            for (int mode = 0; mode < 4; mode++)
                for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
                    const bool same = mode < 2, flash = mode & 1;
                    const pl_type_traits *tt = pl_type_get(types[ti]);
                    if (same && !flash && tt->quantized) continue; /* a quantized V needs flash */
                    if (cases[ci][1] > 2000 && si > 0) continue;
                    const pl_attn_params ap = {.n_head = shapes[si][0],
                                               .n_head_kv = shapes[si][1],
                                               .head_dim = shapes[si][2],
                                               .scale = 1.0f / sqrtf((float)shapes[si][2]),
                                               .k_type = types[ti],
                                               .v_type = same ? types[ti] : PL_TYPE_F16,
                                               .flash = flash};
                    check_attention(&ap, cases[ci][0], cases[ci][1]);
                }
}

/* Not causal (n_kv > 0: the vision tower's): the tower's heads (16 of 64),
 * qwen-like heads of 128 with GQA, odd sizes, and heads of 256 (too large
 * for attention_tile.comp: attention.comp's path); n_kv 1, 17, 300 and
 * 1100, with as many queries (the tower's self-attention) up to 300, fewer
 * beyond (lavapipe runs the shaders on the CPU), and 2500 rows (past
 * attention.comp's shared scores); pos0 is passed as garbage (unused). */
static void test_attention_noncausal(void) {
    const int64_t shapes[][3] = {{16, 16, 64}, {8, 2, 128}, {6, 3, 72}, {3, 1, 10}, {2, 2, 256}};
    const int64_t cases[][2] = {{1, 1}, {17, 17}, {5, 300}, {300, 300}, {9, 1100}, {3, 2500}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int mode = 0; mode < 4; mode++)
            for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
                const int64_t n_tok = cases[ci][0], n_kv = cases[ci][1];
                /* the tower's own square case once a cache type, in its
                 * default arithmetic (libmtmd's); the long ones on the
                 * tower's heads and the large ones */
                if (n_tok == 300 && (si != 0 || mode > 0)) continue;
                if (n_kv > 1000 && si != 0 && si != 4) continue;
                const pl_attn_params ap = {.n_head = shapes[si][0],
                                           .n_head_kv = shapes[si][1],
                                           .head_dim = shapes[si][2],
                                           .scale = 1.0f / sqrtf((float)shapes[si][2]),
                                           .k_type = mode & 1 ? PL_TYPE_F16 : PL_TYPE_F32,
                                           .v_type = mode & 1 ? PL_TYPE_F16 : PL_TYPE_F32,
                                           .flash = mode >> 1,
                                           .n_kv = n_kv};
                check_attention(&ap, n_tok, 12345);
            }
    fprintf(stderr, "non-causal attention: max |error| %.3g (f32 default), %.3g (f16 cache or flash)\n", nc_err[0],
            nc_err[1]);
}

/* layer norm, with and without weight and bias, rows of the tower's width
 * (1024), the text model's (2048), short and odd ones, and rows far from
 * zero mean (where E[x^2] - mean^2 would cancel). */
static void test_layer_norm(void) {
    double most = 0;
    const int64_t shapes[][2] = {{1, 1}, {1, 64}, {16, 1024}, {3, 1000}, {5, 2048}, {64, 1152}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        const int64_t rows = shapes[si][0], n = shapes[si][1], all = rows * n;
        float *x = rnd(all, -3, 3), *w = rnd(n, 0.5f, 1.5f), *b = rnd(n, -1, 1), *r = rnd(all, 0, 0),
              *g = rnd(all, 0, 0);
        for (int64_t i = 0; i < n; i++) x[(rows - 1) * n + i] += 100.0f; /* the last row: mean ~100 */
        for (int wb = 0; wb < 4; wb++) {
            const float *hw = wb & 1 ? w : NULL, *hb = wb & 2 ? b : NULL;
            float *dx = dev_f(x, all), *dw = dev_f(w, n), *db = dev_f(b, n), *dy = vkt_out(&T, (size_t)all * 4);
            pl_ref_layer_norm(x, hw, hb, r, rows, n, 1e-6f);
            T.c->ops->layer_norm(T.c, dx, hw ? dw : NULL, hb ? db : NULL, dy, rows, n, 1e-6f);
            if (fetch(g, dy, all, "layer_norm")) {
                const double wv = worst(g, r, all, 1e-6, 1e-6);
                if (wv > most) most = wv;
                CHECK_MSG(wv <= 1, "layer_norm %lldx%lld%s%s: worst %.3g of the bound",
                          (long long)rows, (long long)n, hw ? " weight" : "", hb ? " bias" : "",
                          wv);
            }
            T.c->ops->release(T.c, dx);
            T.c->ops->release(T.c, dw);
            T.c->ops->release(T.c, db);
        }
        free(x), free(w), free(b), free(r), free(g);
    }
    fprintf(stderr, "layer_norm: worst error %.3g of the bound (1e-6 + 1e-6 |ref|)\n", most);
}

/* gelu, bit for bit: every f16 value, the midpoints between neighbours
 * (ties of the rounding to f16), +-10 and its neighbours, zeros, infinities,
 * NaN, and random values over [-12, 12]; in place and not. */
static void test_gelu(void) {
    const int64_t n = 65536 * 2 + 4096 + 16;
    float *x = malloc((size_t)n * sizeof *x), *r = rnd(n, 0, 0), *g = rnd(n, 0, 0);
    int64_t k = 0;
    for (uint32_t h = 0; h < 65536; h++) x[k++] = pl_f16_to_f32((uint16_t)h);
    for (uint32_t h = 0; h < 65536; h++) {
        const float a = pl_f16_to_f32((uint16_t)h), b = pl_f16_to_f32((uint16_t)(h + 1));
        x[k++] = isfinite(a) && isfinite(b) ? a + (b - a) * 0.5f : 1.0f;
    }
    const float special[16] = {10.0f, -10.0f, nextafterf(10.0f, 0.0f), -nextafterf(10.0f, 0.0f),
                               nextafterf(10.0f, 20.0f), -nextafterf(10.0f, 20.0f), 0.0f, -0.0f, INFINITY,
                               -INFINITY, NAN, 9.9990234375f, -9.9990234375f, 1e-30f, -1e-30f, 65520.0f};
    for (int i = 0; i < 16; i++) x[k++] = special[i];
    while (k < n) x[k++] = -12.0f + 24.0f * pl_rng_uniform(&rng);
    pl_ref_gelu(x, r, n);
    for (int inplace = 0; inplace < 2; inplace++) {
        float *dx = dev_f(x, n), *dy = inplace ? dx : vkt_out(&T, (size_t)n * 4);
        T.c->ops->gelu(T.c, dx, dy, n);
        if (fetch(g, dy, n, "gelu")) {
            int64_t bad = 0, first = -1;
            for (int64_t i = 0; i < n; i++)
                if (memcmp(&g[i], &r[i], 4) != 0 && bad++ == 0) first = i;
            CHECK_MSG(bad == 0, "gelu%s: %lld of %lld values differ from the reference (first: x %.9g -> %.9g, ref %.9g)",
                      inplace ? " in place" : "", (long long)bad, (long long)n, first >= 0 ? x[first] : 0.0,
                      first >= 0 ? g[first] : 0.0, first >= 0 ? r[first] : 0.0);
        }
        if (!inplace) T.c->ops->release(T.c, dx);
    }
    free(x), free(r), free(g);
}

/* The multi-axis rope modes, bit for bit: the tower's (VISION, heads of 64,
 * sections {16,16,16,16}, positions (row, column, row, column) of a patch
 * grid) and Qwen3-VL's text model's (MROPE_INTERLEAVED, heads of 128,
 * sections {24,20,20,0}, an image span's (t, h, w) after text); in place
 * and not; and more tokens than one angle table of the ring holds. */
static void test_rope_multi(void) {
    struct {
        int mode;
        int64_t n_head, hd, n_tok;
        int32_t sec[4];
        float base;
    } cases[] = {
        {PL_ROPE_VISION, 16, 64, 48, {16, 16, 16, 16}, 10000.0f},
        {PL_ROPE_VISION, 3, 64, 7, {16, 16, 16, 16}, 10000.0f},
        {PL_ROPE_MROPE_INTERLEAVED, 16, 128, 40, {24, 20, 20, 0}, 5e6f},
        {PL_ROPE_MROPE_INTERLEAVED, 8, 128, 5, {24, 20, 20, 0}, 1e6f},
        {PL_ROPE_VISION, 1, 64, 17000, {16, 16, 16, 16}, 10000.0f}, /* tables in chunks */
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const int64_t n_head = cases[ci].n_head, hd = cases[ci].hd, n_tok = cases[ci].n_tok;
        pl_rope_params rp = {.mode = cases[ci].mode, .n_rot = hd, .freq_base = cases[ci].base, .freq_scale = 1.0f};
        memcpy(rp.sections, cases[ci].sec, sizeof rp.sections);
        int32_t *pos = malloc((size_t)(4 * n_tok) * sizeof *pos);
        for (int64_t t = 0; t < n_tok; t++) {
            if (rp.mode == PL_ROPE_VISION) {
                const int32_t row = (int32_t)(t / 8), col = (int32_t)(t % 8);
                pos[t] = row, pos[n_tok + t] = col, pos[2 * n_tok + t] = row, pos[3 * n_tok + t] = col;
            } else {
                /* text, then an image span at t = 9 with a 4-wide grid */
                const int32_t img = t >= 9 && t < 33, i = (int32_t)(t - 9);
                pos[t] = img ? 9 : (int32_t)(t < 9 ? t : t - 24 + 9 + 6);
                pos[n_tok + t] = img ? 9 + i / 4 : pos[t];
                pos[2 * n_tok + t] = img ? 9 + i % 4 : pos[t];
                pos[3 * n_tok + t] = 0;
            }
        }
        char what[128];
        snprintf(what, sizeof what, "%s heads %lld hd %lld tokens %lld", rp.mode == PL_ROPE_VISION ? "vision" : "imrope",
                 (long long)n_head, (long long)hd, (long long)n_tok);
        check_rope(&rp, n_tok, n_head, hd, pos, what);
        free(pos);
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

/* gelu_erf within 6 * 2^-24 * |x| of the reference (the shader's erf is the
 * CPU vector kernels' polynomial evaluated in float; libm's erff in the
 * reference): random values over [-8, 8] and near 0, any magnitude, and
 * zeros, infinities (-inf -> -0), NaN; in place and not. */
static void test_gelu_erf(void) {
    const int64_t n = 300007;
    float *x = rnd(n, -8, 8), *r = rnd(n, 0, 0), *g = rnd(n, 0, 0);
    for (int64_t i = 0; i < n; i += 7) x[i] *= 1e-3f;
    for (int64_t i = 3; i < n; i += 11) {
        const uint32_t u = (uint32_t)pl_rng_next(&rng);
        float f;
        memcpy(&f, &u, 4);
        x[i] = isnan(f) ? 2.5f : f;
    }
    const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-40f, -1e-40f, 3.4e38f, -3.4e38f, 5.66f, -5.66f};
    for (size_t i = 0; i < sizeof special / sizeof *special; i++) x[i] = special[i];
    pl_ref_gelu_erf(x, r, n);
    for (int inplace = 0; inplace < 2; inplace++) {
        float *dx = dev_f(x, n), *dy = inplace ? dx : vkt_out(&T, (size_t)n * 4);
        pl_gelu_erf(T.c, dx, dy, n);
        if (fetch(g, dy, n, "gelu_erf")) {
            double most = 0;
            int64_t at = 0;
            for (int64_t i = 0; i < n; i++) {
                double e = fabs((double)g[i] - r[i]) / (6 * ldexp(fabs((double)x[i]), -24));
                if (same_bits(&g[i], &r[i], 4) || (isnan(g[i]) && isnan(r[i]))) e = 0;
                else if (isnan(g[i]) || isnan(r[i]) || !(e == e)) e = INFINITY;
                if (e > most) most = e, at = i;
            }
            CHECK_MSG(most <= 1, "gelu_erf%s: %.3g of the bound at x %.9g -> %.9g (ref %.9g)", inplace ? " in place" : "",
                      most, x[at], g[at], r[at]);
            CHECK(g[3] == 0.0f && signbit(g[3]) && g[2] == INFINITY && isnan(g[4]));
            if (!inplace) fprintf(stderr, "gelu_erf: worst %.2f x 2^-24 |x| (bound 6)\n", 6 * most);
        }
        if (!inplace) T.c->ops->release(T.c, dx);
    }
    free(x), free(r), free(g);
}

/* im2col and transpose bit for bit: the tower's shapes (the first conv's
 * one channel; 480 channels), odd sizes, padding edges, strides 1 and 2,
 * and f16 rounding (values past f16's range, its subnormals, halfway
 * points). */
static void test_im2col_transpose(void) {
    static const int64_t cases[][10] = {
        {2, 1, 128, 100, 3, 3, 2, 2, 1, 1}, {2, 480, 16, 13, 3, 3, 2, 2, 1, 1}, {1, 5, 7, 6, 3, 3, 1, 1, 1, 1},
        {3, 17, 9, 13, 3, 3, 2, 2, 1, 1},   {1, 3, 5, 5, 2, 3, 1, 2, 0, 2},     {1, 2, 12, 12, 9, 9, 1, 1, 4, 4},
        {1, 1, 1, 1, 1, 1, 1, 1, 0, 0},     {4, 33, 6, 5, 3, 2, 2, 1, 2, 0},
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
        const int64_t *k = cases[ci];
        for (int round = 0; round < 2; round++) {
            const pl_im2col_params p = {k[0], k[1], k[2], k[3], (int32_t)k[4], (int32_t)k[5], (int32_t)k[6],
                                        (int32_t)k[7], (int32_t)k[8], (int32_t)k[9], round};
            const int64_t n_in = p.n * p.h * p.w * p.c_in;
            const int64_t n_out = p.n * pl_im2col_out_h(&p) * pl_im2col_out_w(&p) * p.c_in * p.kh * p.kw;
            float *x = rnd(n_in, -4, 4), *r = rnd(n_out, 0, 0), *g = rnd(n_out, 0, 0);
            for (int64_t i = 0; i < n_in; i += 3) x[i] *= i % 2 ? 30000.0f : 1e-6f;
            for (int64_t i = 1; i < n_in; i += 5) x[i] = pl_f16_to_f32((uint16_t)(pl_rng_next(&rng) & 0x7bff)) + ldexpf(1.0f, -12);
            pl_ref_im2col(&p, x, r);
            float *dx = dev_f(x, n_in), *dy = vkt_out(&T, (size_t)n_out * 4);
            pl_im2col(T.c, &p, dx, dy);
            if (fetch(g, dy, n_out, "im2col")) {
                int64_t bad = 0, first = -1;
                for (int64_t i = 0; i < n_out; i++)
                    if (!same_bits(&g[i], &r[i], 4) && bad++ == 0) first = i;
                CHECK_MSG(bad == 0, "im2col case %zu round %d: %lld of %lld values differ (first at %lld: %.9g, ref %.9g)", ci,
                          round, (long long)bad, (long long)n_out, (long long)first, first >= 0 ? g[first] : 0.0,
                          first >= 0 ? r[first] : 0.0);
            }
            T.c->ops->release(T.c, dx);
            free(x), free(r), free(g);
        }
    }
    static const int64_t shapes[][3] = {{1, 1, 1}, {8, 16, 6240}, {3, 33, 65}, {2, 1, 100}, {2, 100, 1}, {5, 31, 32}};
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
        const int64_t b = shapes[si][0], rows = shapes[si][1], cols = shapes[si][2], all = b * rows * cols;
        float *x = rnd(all, -5, 5), *r = rnd(all, 0, 0), *g = rnd(all, 0, 0);
        pl_ref_transpose(x, r, b, rows, cols);
        float *dx = dev_f(x, all), *dy = vkt_out(&T, (size_t)all * 4);
        pl_transpose(T.c, dx, dy, b, rows, cols);
        if (fetch(g, dy, all, "transpose"))
            CHECK_MSG(same_bits(g, r, (size_t)all * 4), "transpose %lldx%lldx%lld", (long long)b, (long long)rows,
                      (long long)cols);
        T.c->ops->release(T.c, dx);
        free(x), free(r), free(g);
    }
    CHECK_MSG(T.c->status == POCKETLLM_OK, "the audio ops failed the pass: %s", pocketllm_last_error());
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
    test_layer_norm();
    test_gelu();
    test_rope_multi();
    test_attention_noncausal();
    test_gelu_erf();
    test_im2col_transpose();
    /* last: the random values the tests above draw stay as they were */
    test_kv_store_packed();
    test_attention_packed();
    vkt_close(&T);
    TEST_DONE();
}
