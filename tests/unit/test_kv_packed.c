/*
 * test_kv_packed.c -- the packed KV cache on the CPU against the scalar
 * reference ops, for every instruction-set tier this host runs at 1 and 3
 * threads: kv_store writes the same bytes as pl_ref_kv_store for every
 * cache type (the reference encoders are checked against llama.cpp's by
 * tests/oracle/test_kv_quant.sh), and attention over every K type x V type
 * (default path: V in f32, f16 or bf16; flash: any V) agrees with
 * pl_ref_attention, the same bits whatever the thread count and whether
 * a query comes in a batch or alone.  Under PL_TEST_EMULATED (the ARM64
 * tiers under qemu) one shape, and each type once as K and once as V.
 * Also: the
 * type table (names, what heads a type fits, row bytes) and the refusals.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/compute.h"
#include "backend/cpu/cpu_isa.h"
#include "base/error.h"
#include "base/rng.h"
#include "../common/kv_layout.h"
#include "ops/ref.h"
#include "pltest.h"
#include "quant/kv_types.h"
#include "quant/types.h"

static pl_rng rng;

typedef struct inst {
    pl_compute *c;
    const char *isa;
    int nt;
} inst;
static inst insts[8];
static int n_insts;

static const uint32_t types[] = {PL_TYPE_F32,  PL_TYPE_F16,  PL_TYPE_BF16, PL_TYPE_Q8_0,  PL_TYPE_Q4_0,
                                 PL_TYPE_Q4_1, PL_TYPE_Q5_0, PL_TYPE_Q5_1, PL_TYPE_IQ4_NL};
#define N_TYPES (sizeof types / sizeof types[0])

static float *rnd(int64_t n, float lo, float hi) {
    float *f = malloc((size_t)(n > 0 ? n : 1) * sizeof *f);
    for (int64_t i = 0; i < n; i++) f[i] = lo + (hi - lo) * pl_rng_uniform(&rng);
    return f;
}

static void test_table(void) {
    for (size_t i = 0; i < N_TYPES; i++) {
        const pl_type_traits *t = pl_type_get(types[i]);
        CHECK(pl_kv_type_supported(types[i]));
        CHECK(pl_kv_type_from_name(t->name) == types[i]);
        CHECK(pl_kv_encoder(types[i]) != NULL);
        CHECK(pl_kv_row_bytes(types[i], 1024) == 1024 / t->block * t->bytes);
        CHECK(pl_kv_type_check(types[i], 128, "K") == POCKETLLM_OK);
        /* stories260K's heads of 8: only the one-value types fit */
        CHECK((pl_kv_type_check(types[i], 8, "K") == POCKETLLM_OK) == (t->block == 1));
    }
    CHECK(pl_kv_type_from_name("Q8_0") == PL_TYPE_Q8_0);
    CHECK(pl_kv_type_from_name("q4_K") == UINT32_MAX); /* a weight type, not a cache type */
    CHECK(pl_kv_type_from_name("nonsense") == UINT32_MAX);
    CHECK(!pl_kv_type_supported(PL_TYPE_Q4_K));
    CHECK(pl_kv_type_check(PL_TYPE_Q4_K, 128, "V") != POCKETLLM_OK);
    CHECK(strstr(pocketllm_last_error(), "q4_K") != NULL);
}

static void test_store(void) {
    const int64_t n = 4 * 1024; /* 4 rows of a 1024-wide cache */
    float *x = rnd(n, -3, 3);
    x[5] = 0.0f, x[40] = -0.0f; /* zeros and a block of equal values */
    for (int i = 64; i < 96; i++) x[i] = 0.75f;
    for (size_t ti = 0; ti < N_TYPES; ti++) {
        const uint64_t bytes = pl_kv_row_bytes(types[ti], n);
        uint8_t *ref = malloc(bytes), *got = malloc(bytes);
        pl_ref_kv_store(types[ti], x, ref, n);
        for (inst *v = insts; v < insts + n_insts; v++) {
            memset(got, 0xa5, bytes);
            v->c->ops->kv_store(v->c, types[ti], x, got, n);
            CHECK_MSG(memcmp(got, ref, bytes) == 0, "%s/%d kv_store %s differs from the reference", v->isa, v->nt,
                      pl_type_get(types[ti])->name);
        }
        /* into a head-major block (8 heads of 128, room for 7 positions):
         * the rows' bytes, each head's at its place, rows 2..5 after the
         * first two were stored by themselves */
        uint8_t *want = pl_test_kv_head_major(types[ti], ref, 4, 8, 128, 7), *hm = malloc(bytes / 4 * 7);
        for (inst *v = insts; v < insts + n_insts && want && hm; v++) {
            if (!v->c->ops->kv_store_heads) continue;
            memset(hm, 0xa5, bytes / 4 * 7);
            v->c->ops->kv_store_heads(v->c, types[ti], x, hm, 2, 0, 8, 128, 7);
            v->c->ops->kv_store_heads(v->c, types[ti], x + 2 * 1024, hm, 2, 2, 8, 128, 7);
            CHECK_MSG(v->c->status == POCKETLLM_OK && memcmp(hm, want, bytes / 4 * 7) == 0,
                      "%s/%d kv_store_heads %s differs from the reference's rows", v->isa, v->nt, pl_type_get(types[ti])->name);
            /* past the block: refused, nothing written */
            v->c->ops->kv_store_heads(v->c, types[ti], x, hm, 2, 6, 8, 128, 7);
            CHECK(v->c->status != POCKETLLM_OK && memcmp(hm, want, bytes / 4 * 7) == 0);
            v->c->status = POCKETLLM_OK;
        }
        free(want), free(hm);
        free(ref), free(got);
    }
    free(x);
}

static double worst(const float *a, const float *b, int64_t n, double tol) {
    double w = 0;
    for (int64_t i = 0; i < n; i++) {
        double e = fabs((double)a[i] - (double)b[i]) / (tol + tol * fabs((double)b[i]));
        if (isnan(a[i]) != isnan(b[i])) e = INFINITY;
        if (e > w) w = e;
    }
    return w;
}

/* One K/V pair in one mode over a few shapes and pass sizes. */
static bool emulated; /* PL_TEST_EMULATED (qemu): one shape, each type once as K and once as V */

static void check_pair(uint32_t kt, uint32_t vt, bool flash) {
    const int64_t shapes[][3] = {{4, 2, 64}, {8, 2, 128}, {4, 4, 64}, {2, 1, 32}};
    const int64_t cases[][2] = {{1, 0}, {7, 0}, {1, 150}, {20, 90}};
    const size_t n_shapes = emulated ? 1 : sizeof shapes / sizeof shapes[0];
    for (size_t si = 0; si < n_shapes; si++)
        for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
            const int64_t nh = shapes[si][0], nkv = shapes[si][1], hd = shapes[si][2];
            const int64_t n_tok = cases[ci][0], pos0 = cases[ci][1], rows = pos0 + n_tok, all = n_tok * nh * hd;
            const pl_attn_params ap = {nh, nkv, hd, 1.0f / sqrtf((float)hd), kt, vt, flash, 0, 0};
            float *kf = rnd(rows * nkv * hd, -2, 2), *vf = rnd(rows * nkv * hd, -2, 2);
            void *k = malloc(pl_kv_row_bytes(kt, rows * nkv * hd)), *vc = malloc(pl_kv_row_bytes(vt, rows * nkv * hd));
            pl_ref_kv_store(kt, kf, k, rows * nkv * hd);
            pl_ref_kv_store(vt, vf, vc, rows * nkv * hd);
            float *q = rnd(all, -2, 2), *r = rnd(all, 0, 0), *y = rnd(all, 0, 0), *y1 = rnd(all, 0, 0);
            CHECK(pl_ref_attention(&ap, q, k, vc, n_tok, pos0, r) == POCKETLLM_OK);
            /* the kernels' dot products sum in another order than the
             * reference's, and a weight next to a rounding boundary of V's
             * type may round the other way: 2e-3, as test_ops allows f16 */
            const double tol = 2e-3;
            const char *prev_isa = NULL;
            for (inst *v = insts; v < insts + n_insts; v++) {
                v->c->ops->attention(v->c, &ap, q, k, vc, n_tok, pos0, y);
                CHECK_MSG(v->c->status == POCKETLLM_OK, "%s/%d attention K %s V %s%s failed: %s", v->isa, v->nt,
                          pl_type_get(kt)->name, pl_type_get(vt)->name, flash ? " flash" : "", pocketllm_last_error());
                CHECK_MSG(worst(y, r, all, tol) <= 1, "%s/%d attention K %s V %s%s heads %lld/%lld hd %lld tok %lld pos0 %lld",
                          v->isa, v->nt, pl_type_get(kt)->name, pl_type_get(vt)->name, flash ? " flash" : "", (long long)nh,
                          (long long)nkv, (long long)hd, (long long)n_tok, (long long)pos0);
                if (prev_isa && !strcmp(prev_isa, v->isa))
                    CHECK_MSG(!memcmp(y, y1, (size_t)all * sizeof(float)), "%s: %d threads differ from 1 (K %s V %s)", v->isa,
                              v->nt, pl_type_get(kt)->name, pl_type_get(vt)->name);
                memcpy(y1, y, (size_t)all * sizeof(float));
                prev_isa = v->isa;
                /* the same caches head-major (room for 2 positions more): the same bits */
                pl_attn_params hm = ap;
                hm.kv_cap = rows + 2;
                void *hk = pl_test_kv_head_major(kt, k, rows, nkv, hd, hm.kv_cap), *hv = pl_test_kv_head_major(vt, vc, rows, nkv, hd, hm.kv_cap);
                float *yh = rnd(all, 0, 0);
                if (hk && hv) v->c->ops->attention(v->c, &hm, q, hk, hv, n_tok, pos0, yh);
                CHECK_MSG(hk && hv && v->c->status == POCKETLLM_OK && !memcmp(yh, y, (size_t)all * sizeof(float)),
                          "%s/%d attention K %s V %s%s: head-major differs from rows", v->isa, v->nt, pl_type_get(kt)->name,
                          pl_type_get(vt)->name, flash ? " flash" : "");
                free(hk), free(hv), free(yh);
                /* a batched pass gives each query the bits of that query
                 * alone (flash takes blocks of queries in a prefill) */
                if (n_tok > 1 && v->nt == 1) {
                    float *one = rnd(nh * hd, 0, 0);
                    for (int64_t t = 0; t < n_tok; t++) {
                        v->c->ops->attention(v->c, &ap, q + t * nh * hd, k, vc, 1, pos0 + t, one);
                        CHECK_MSG(!memcmp(one, y + t * nh * hd, (size_t)(nh * hd) * sizeof(float)),
                                  "%s: K %s V %s%s token %lld of %lld: batched differs from alone", v->isa,
                                  pl_type_get(kt)->name, pl_type_get(vt)->name, flash ? " flash" : "", (long long)t,
                                  (long long)n_tok);
                    }
                    free(one);
                }
            }
            free(kf), free(vf), free(k), free(vc), free(q), free(r), free(y), free(y1);
        }
}

static void test_attention(void) {
    for (size_t ki = 0; ki < N_TYPES; ki++)
        for (size_t vi = 0; vi < N_TYPES; vi++) {
            const uint32_t kt = types[ki], vt = types[vi];
            /* the f16/f32 pairs of one type are test_ops's */
            if (kt == vt && (kt == PL_TYPE_F16 || kt == PL_TYPE_F32)) continue;
            /* every K with the V types, every V with f16 K: the pairs
             * llama.cpp users pick, and each kernel path once */
            if (kt != vt && kt != PL_TYPE_F16 && vt != PL_TYPE_F16 && vt != PL_TYPE_F32) continue;
            /* emulated: each type once as K (V f16) and once as V (K f16) */
            if (emulated && kt != PL_TYPE_F16 && vt != PL_TYPE_F16) continue;
            check_pair(kt, vt, true);
            if (!pl_type_get(vt)->quantized) check_pair(kt, vt, false);
        }
    /* a quantized V without flash is refused, not computed wrongly */
    const pl_attn_params ap = {2, 1, 32, 0.2f, PL_TYPE_Q8_0, PL_TYPE_Q8_0, false, 0, 0};
    float q[64] = {0}, out[64];
    uint8_t k[34] = {0}, v[34] = {0};
    CHECK(pl_ref_attention(&ap, q, k, v, 1, 0, out) != POCKETLLM_OK);
    insts[0].c->ops->attention(insts[0].c, &ap, q, k, v, 1, 0, out);
    CHECK(insts[0].c->status != POCKETLLM_OK);
    insts[0].c->status = POCKETLLM_OK;
}

int main(void) {
    pl_rng_seed(&rng, 20261206);
    emulated = getenv("PL_TEST_EMULATED") != NULL;
    const pl_cpu_isa *all[] = {pl_cpu_isa_generic(), pl_cpu_isa_avx2(), pl_cpu_isa_avx512(), pl_cpu_isa_neon()};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (!pl_cpu_isa_usable(all[i])) continue;
        if (all[i] == pl_cpu_isa_generic() && pl_test_skip_generic()) continue;
        for (int nt = 1; nt <= 3; nt += 2) {
            pl_compute *c = NULL;
            CHECK(pl_cpu_compute_new(nt, all[i], &c) == POCKETLLM_OK);
            pl_compute_limits lim = {.n_batch = 64, .max_in = 1024, .n_ctx = 300, .head_dim = 128};
            CHECK(c && c->ops->reserve(c, &lim) == POCKETLLM_OK);
            CHECK(c->kv_packed);
            insts[n_insts++] = (inst){c, all[i]->name, nt};
        }
    }
    CHECK(n_insts >= 2);
    test_table();
    test_store();
    test_attention();
    for (inst *v = insts; v < insts + n_insts; v++) v->c->ops->free(v->c);
    TEST_DONE();
}
