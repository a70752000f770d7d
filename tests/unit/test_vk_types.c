/*
 * test_vk_types.c -- every weight type the CPU runs, on the Vulkan
 * backend, against the scalar reference:
 *  - the block decode inside the shaders (get_rows) is the reference
 *    decode bit for bit, on random, wild (any bytes: inf/NaN/huge scales)
 *    and edge blocks;
 *  - the activations rounded to 8-bit blocks on the device are the
 *    reference's act_from_float (the same integers but where x * id falls
 *    within a rounding of a .5 boundary -- the device's division may
 *    differ from the host's in the last bit: at most 1 in 1000 values, off
 *    by one);
 *  - mul_mat for n_tok 1, 2, 7, 17, 64 and 512 (both matrix-vector and
 *    GEMM shapes), rows not a multiple of any
 *    tile, matches the reference within 1e-4 of sum |w x| over the row (an
 *    order-of-summation and rounding-boundary allowance; a wrong scale,
 *    element or block moves results by far more), with and without the
 *    int8 dot-product shaders.
 * A type with no shader fails: the list is the CPU's.  PL_VK_TYPES="q4_K,f16"
 * narrows a run to those types (for work on one of them).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/vulkan/vk_compute.h"
#include "base/half.h"
#include "base/rng.h"
#include "ops/ref.h"
#include "pltest.h"
#include "quant/types.h"
#include "../common/quant_testdata.h"
#include "../common/vk_test.h"

static pl_rng rng;
static vkt T;

/* every weight type of the CPU backend */
static const uint32_t types[] = {
    PL_TYPE_F32,    PL_TYPE_F16,     PL_TYPE_BF16,   PL_TYPE_Q4_0,   PL_TYPE_Q4_1,    PL_TYPE_Q5_0,   PL_TYPE_Q5_1,
    PL_TYPE_Q8_0,   PL_TYPE_MXFP4,   PL_TYPE_Q2_K,   PL_TYPE_Q3_K,   PL_TYPE_Q4_K,    PL_TYPE_Q5_K,   PL_TYPE_Q6_K,
    PL_TYPE_IQ1_S,  PL_TYPE_IQ1_M,   PL_TYPE_IQ2_XXS, PL_TYPE_IQ2_XS, PL_TYPE_IQ2_S,  PL_TYPE_IQ3_XXS, PL_TYPE_IQ3_S,
    PL_TYPE_IQ4_NL, PL_TYPE_IQ4_XS,  PL_TYPE_TQ1_0,  PL_TYPE_TQ2_0,
};
#define N_TYPES (sizeof types / sizeof types[0])

/* PL_VK_TYPES, when set: a comma-separated list of type names to test */
static bool wanted(const char *name) {
    const char *only = getenv("PL_VK_TYPES");
    if (!only || !*only) return true;
    const size_t n = strlen(name);
    for (const char *p = only; (p = strstr(p, name)); p += n)
        if ((p == only || p[-1] == ',') && (p[n] == 0 || p[n] == ',')) return true;
    return false;
}

static bool is_float(uint32_t t) { return t == PL_TYPE_F32 || t == PL_TYPE_F16 || t == PL_TYPE_BF16; }

static int same_float(float a, float b) { return memcmp(&a, &b, 4) == 0 || (isnan(a) && isnan(b)); }

/* host weights stay registered with the device (their address is the
 * key) until it closes: freed at the end */
static void *kept[256];
static size_t n_kept;

/* n_out rows of n_in of `type`: random blocks (or, for the float types,
 * random values) of mode. */
static void *make_weight(uint32_t type, qt_mode mode, int64_t n_in, int64_t n_out, pl_weight *w) {
    const pl_type_traits *t = pl_type_get(type);
    uint64_t rb;
    pl_type_row_bytes(type, (uint64_t)n_in, &rb);
    uint8_t *data = malloc((size_t)rb * (size_t)n_out + 64);
    if (is_float(type)) {
        float *f = malloc((size_t)n_in * sizeof *f);
        for (int64_t r = 0; r < n_out; r++) {
            qt_gen_floats(&rng, f, n_in, (int)(r % 4));
            t->from_float(f, data + (size_t)r * rb, n_in, NULL);
        }
        free(f);
    } else {
        qt_gen_blocks(type, mode, &rng, data, n_out * n_in / t->block);
    }
    *w = (pl_weight){.name = t->name, .data = data, .type = type, .n_in = n_in, .n_out = n_out, .row_bytes = (size_t)rb};
    if (n_kept < sizeof kept / sizeof kept[0]) kept[n_kept++] = data;
    return data;
}

static void check_decode(uint32_t type) {
    const pl_type_traits *t = pl_type_get(type);
    const int64_t n_in = t->block == 32 ? 96 : 512, n_out = 29;
    static const qt_mode modes[] = {QT_RANDOM, QT_WILD, QT_EDGE};
    for (size_t mi = 0; mi < 3; mi++) {
        if (is_float(type) && mi) break;
        pl_weight w;
        void *data = make_weight(type, modes[mi], n_in, n_out, &w);
        CHECK(vkt_weight(&T, data, w.row_bytes * (size_t)n_out) == POCKETLLM_OK);
        int32_t ids[40];
        for (int i = 0; i < 40; i++) ids[i] = (int32_t)(pl_rng_next(&rng) % (uint64_t)n_out);
        ids[0] = 0, ids[1] = (int32_t)n_out - 1;
        const size_t yb = sizeof(float) * 40 * (size_t)n_in;
        float *ref = malloc(yb), *got = malloc(yb);
        pl_ref_get_rows(&w, ids, 40, ref);
        float *dy = vkt_out(&T, yb);
        T.c->ops->get_rows(T.c, &w, ids, 40, dy);
        int st = vkt_get(&T, got, dy, yb);
        CHECK_MSG(st == 0, "%s get_rows: %s", t->name, pocketllm_last_error());
        int64_t bad = 0, first = -1;
        for (int64_t i = 0; st == 0 && i < 40 * n_in; i++)
            if (!same_float(ref[i], got[i])) {
                if (first < 0) first = i;
                bad++;
            }
        CHECK_MSG(bad == 0, "%s decode (mode %zu): %lld of %lld values differ from the reference bits, first at %lld: %.9g vs %.9g",
                  t->name, mi, (long long)bad, (long long)(40 * n_in), (long long)first, first >= 0 ? ref[first] : 0.0,
                  first >= 0 ? got[first] : 0.0);
        T.c->ops->release(T.c, dy);
        vkt_reset(&T);
        free(ref);
        free(got);
        /* the weight stays registered under its host range: keep it */
    }
}

/* sum_i |w_i x_i| of each output, from the decoded weight */
static void magnitudes(const pl_weight *w, const float *x, int64_t n_tok, double *mag) {
    float *row = malloc(sizeof(float) * (size_t)w->n_in);
    for (int64_t o = 0; o < w->n_out; o++) {
        int32_t id = (int32_t)o;
        pl_ref_get_rows(w, &id, 1, row);
        for (int64_t t = 0; t < n_tok; t++) {
            double s = 0;
            for (int64_t i = 0; i < w->n_in; i++) s += fabs((double)row[i] * (double)x[t * w->n_in + i]);
            mag[t * w->n_out + o] = s;
        }
    }
    free(row);
}

static void check_mul_mat(uint32_t type, bool int_dot) {
    const pl_type_traits *t = pl_type_get(type);
    static const int64_t toks[] = {1, 2, 7, 17, 64, 512};
    const int64_t n_in = t->block == 32 ? 96 : 256, n_out = 67;
    pl_weight w;
    void *data = make_weight(type, QT_RANDOM, n_in, n_out, &w);
    CHECK(vkt_weight(&T, data, w.row_bytes * (size_t)n_out) == POCKETLLM_OK);
    pl_vk_device *d = (pl_vk_device *)T.dev;
    const bool saved = d->no_int_dot;
    d->no_int_dot = !int_dot;
    for (size_t ti = 0; ti < sizeof toks / sizeof toks[0]; ti++) {
        const int64_t n_tok = toks[ti];
        float *x = malloc(sizeof(float) * (size_t)(n_tok * n_in));
        for (int64_t r = 0; r < n_tok; r++) qt_gen_floats(&rng, x + r * n_in, n_in, (int)(r % 3));
        float *ref = malloc(sizeof(float) * (size_t)(n_tok * n_out)), *got = malloc(sizeof(float) * (size_t)(n_tok * n_out));
        double *mag = malloc(sizeof(double) * (size_t)(n_tok * n_out));
        CHECK(pl_ref_mul_mat(&w, x, n_tok, ref) == POCKETLLM_OK);
        magnitudes(&w, x, n_tok, mag);
        float *dx = vkt_buf(&T, x, sizeof(float) * (size_t)(n_tok * n_in));
        float *dy = vkt_out(&T, sizeof(float) * (size_t)(n_tok * n_out));
        T.c->ops->mul_mat(T.c, &w, dx, n_tok, dy);
        int st = vkt_get(&T, got, dy, sizeof(float) * (size_t)(n_tok * n_out));
        CHECK_MSG(st == 0, "%s mul_mat: %s", t->name, pocketllm_last_error());
        int64_t bad = 0, first = -1;
        double worst = 0;
        for (int64_t i = 0; st == 0 && i < n_tok * n_out; i++) {
            const double tol = 1e-4 * mag[i] + 1e-6, e = fabs((double)got[i] - (double)ref[i]);
            if (!(e <= tol)) {
                if (first < 0) first = i;
                bad++;
            }
            if (e / tol > worst) worst = e / tol;
        }
        CHECK_MSG(bad == 0, "%s mul_mat (n_tok %lld, %s): %lld of %lld outputs beyond tolerance, first [%lld]: ref %.9g got %.9g",
                  t->name, (long long)n_tok, int_dot ? "int8 dot" : "no int8 dot", (long long)bad,
                  (long long)(n_tok * n_out), (long long)first, first >= 0 ? ref[first] : 0.0,
                  first >= 0 ? got[first] : 0.0);
        if (getenv("PL_TEST_VERBOSE"))
            fprintf(stderr, "  %-8s n_tok %3lld %-6s worst |diff|/tol %.4f\n", t->name, (long long)n_tok,
                    int_dot ? "dot" : "nodot", worst);
        T.c->ops->release(T.c, dx);
        T.c->ops->release(T.c, dy);
        vkt_reset(&T);
        free(x);
        free(ref);
        free(got);
        free(mag);
    }
    d->no_int_dot = saved;
}

/* The device's 8-bit activations against act_from_float, value by value. */
static void check_act(uint32_t act_type) {
    const pl_type_traits *at = pl_type_get(act_type);
    /* a weight whose vec_dot type is act_type */
    const uint32_t wt = act_type == PL_TYPE_Q8_0 ? PL_TYPE_Q8_0 : act_type == PL_TYPE_Q8_1 ? PL_TYPE_Q4_1 : PL_TYPE_Q4_K;
    const int64_t n_in = 512, n_tok = 8;
    pl_weight w;
    void *data = make_weight(wt, QT_RANDOM, n_in, 4, &w);
    CHECK(vkt_weight(&T, data, w.row_bytes * 4) == POCKETLLM_OK);
    float *x = malloc(sizeof(float) * (size_t)(n_tok * n_in));
    for (int64_t r = 0; r < n_tok; r++) qt_gen_floats(&rng, x + r * n_in, n_in, (int)(r % QT_DISTS));
    float *dx = vkt_buf(&T, x, sizeof(float) * (size_t)(n_tok * n_in));
    float *dy = vkt_out(&T, sizeof(float) * (size_t)(n_tok * 4));
    T.c->ops->mul_mat(T.c, &w, dx, n_tok, dy);
    pl_vk_compute *vc = pl_vkc(T.c);
    int8_t *qs = malloc((size_t)(n_tok * n_in));
    float *dd = malloc(sizeof(float) * (size_t)(n_tok * n_in / 32));
    /* the act scratch has no key: read it through a copy */
    void *key = T.c->ops->alloc(T.c, vc->act->bytes);
    pl_vk_buffer *kb;
    size_t koff;
    pl_vk_resolve(vc->d, key, 1, &kb, &koff);
    pl_vk_copy(vc, vc->act->buf, 0, vc->act->addr, kb->buf, koff, kb->addr + koff, vc->act->bytes);
    int st = vkt_get(&T, qs, key, (size_t)(n_tok * n_in));
    if (!st) st = vkt_get(&T, dd, (char *)key + vc->act_d_off, sizeof(float) * (size_t)(n_tok * n_in / 32));
    CHECK_MSG(st == 0, "%s act: %s", at->name, pocketllm_last_error());
    uint64_t rb;
    pl_type_row_bytes(act_type, (uint64_t)n_in, &rb);
    uint8_t *ref = malloc((size_t)rb);
    int64_t off1 = 0, offmore = 0, dbad = 0;
    for (int64_t r = 0; st == 0 && r < n_tok; r++) {
        at->act_from_float(x + r * n_in, ref, n_in);
        /* the reference's integers and scales, block by block */
        for (int64_t b = 0; b < n_in / (int64_t)at->block; b++) {
            const uint8_t *blk = ref + (size_t)b * at->bytes;
            const int8_t *q;
            float scale;
            if (act_type == PL_TYPE_Q8_K) {
                memcpy(&scale, blk, 4);
                q = (const int8_t *)(blk + 4);
            } else {
                uint16_t h;
                memcpy(&h, blk, 2);
                scale = pl_f16_to_f32(h);
                q = (const int8_t *)(blk + (act_type == PL_TYPE_Q8_1 ? 4 : 2));
            }
            for (uint32_t j = 0; j < at->block; j++) {
                const int diff = abs((int)q[j] - (int)qs[r * n_in + b * at->block + j]);
                off1 += diff == 1;
                offmore += diff > 1;
            }
            for (uint32_t j = 0; j < at->block / 32; j++) {
                const float g = dd[(r * n_in + b * at->block) / 32 + j];
                if (!(fabsf(g - scale) <= 1e-6f * fabsf(scale))) dbad++;
            }
        }
    }
    CHECK_MSG(offmore == 0, "%s act: %lld values differ by more than 1 from act_from_float", at->name, (long long)offmore);
    CHECK_MSG(off1 * 1000 <= n_tok * n_in, "%s act: %lld of %lld values off by one from act_from_float", at->name,
              (long long)off1, (long long)(n_tok * n_in));
    CHECK_MSG(dbad == 0, "%s act: %lld block scales differ from act_from_float's", at->name, (long long)dbad);
    T.c->ops->release(T.c, key);
    T.c->ops->release(T.c, dx);
    T.c->ops->release(T.c, dy);
    vkt_reset(&T);
    free(x);
    free(qs);
    free(dd);
    free(ref);
}

int main(void) {
    pl_rng_seed(&rng, 1234);
    pl_compute_limits lim = {.n_batch = 512, .max_in = 512, .n_ctx = 64, .head_dim = 64};
    int rc = vkt_open(&T, &lim);
    if (rc) return rc;
    const bool has_dot = !((pl_vk_device *)T.dev)->no_int_dot;
    for (size_t i = 0; i < N_TYPES; i++) {
        const pl_type_traits *t = pl_type_get(types[i]);
        if (!wanted(t->name)) continue;
        CHECK_MSG(pl_vk_weight_type_ok(types[i]), "no Vulkan shader for %s weights", t->name);
        if (!pl_vk_weight_type_ok(types[i])) continue;
        check_decode(types[i]);
        check_mul_mat(types[i], false);
        if (!is_float(types[i]) && has_dot) check_mul_mat(types[i], true);
    }
    if (wanted("q8_0")) check_act(PL_TYPE_Q8_0);
    if (wanted("q4_1")) check_act(PL_TYPE_Q8_1);
    if (wanted("q4_K")) check_act(PL_TYPE_Q8_K);
    if (!has_dot) fprintf(stderr, "note: %s has no int8 dot products: only the _nodot shaders ran\n", T.dev->name);
    vkt_close(&T);
    for (size_t i = 0; i < n_kept; i++) free(kept[i]);
    TEST_DONE();
}
