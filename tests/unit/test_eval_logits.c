/*
 * test_eval_logits.c -- the per-row arithmetic of perplexity and KL
 * divergence, and the saved log-probability files: negative log-likelihood
 * against a direct double-precision computation, KL of a row against itself
 * (exactly 0 in f32, within the 16-bit step in llama.cpp's layout) and
 * against another row (Gibbs: positive, and equal to the textbook sum),
 * the u16 layout's step size, and every way a saved file can be malformed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/rng.h"
#include "eval/logits_file.h"
#include "eval/logprob.h"
#include "pltest.h"

#define V 301

static void random_logits(uint64_t seed, float *l, float scale) {
    pl_rng r;
    pl_rng_seed(&r, seed);
    for (int i = 0; i < V; i++) l[i] = scale * (2 * pl_rng_uniform(&r) - 1);
}

static void rows(void) {
    float a[V], b[V], la[V], lb[V];
    random_logits(1, a, 8);
    random_logits(2, b, 8);
    /* nll against double precision */
    double mx = a[0], s = 0;
    for (int i = 0; i < V; i++) mx = fmax(mx, a[i]);
    for (int i = 0; i < V; i++) s += exp(a[i] - mx);
    for (int t = 0; t < V; t += 37) {
        double want = -(a[t] - mx - log(s));
        CHECK_MSG(fabs(pl_nll(a, V, t) - want) < 1e-5, "nll of %d: %.9g vs %.9g", t, pl_nll(a, V, t), want);
    }
    pl_log_softmax(a, V, la);
    pl_log_softmax(b, V, lb);
    double total = 0;
    for (int i = 0; i < V; i++) total += exp(la[i]);
    CHECK_MSG(fabs(total - 1) < 1e-5, "softmax sums to %.9g", total);

    /* against itself: exactly 0, the same top token */
    pl_kl_row r;
    pl_kl_row_f32(la, la, V, 7, &r);
    CHECK(r.kl == 0 && r.same_top);
    CHECK(fabs(r.nll_base - pl_nll(a, V, 7)) < 1e-5);
    /* against another: the textbook sum, positive */
    double want = 0;
    for (int i = 0; i < V; i++) want += exp((double)la[i]) * ((double)la[i] - (double)lb[i]);
    pl_kl_row_f32(la, lb, V, 7, &r);
    CHECK_MSG(r.kl > 0.1 && fabs(r.kl - want) < 1e-9 * fmax(1, want), "kl %.9g vs %.9g", r.kl, want);

    /* llama.cpp's 16-bit layout: the top 16 nats in 65535 steps */
    uint16_t q[4 + V + 1];
    CHECK(pl_logprob_u16_row_len(V) == 4 + V + 1);
    CHECK(pl_logprob_u16_row_len(300) == 4 + 300);
    pl_logprob_u16_encode(a, V, q);
    double worst = 0;
    for (int i = 0; i < V; i++)
        if (a[i] > mx - 16) worst = fmax(worst, fabs(pl_logprob_u16_get(q, i) - la[i]));
    CHECK_MSG(worst <= 1.3e-4, "u16 step error %.3g", worst);
    pl_kl_row_u16(q, la, V, 7, &r);
    CHECK_MSG(fabs(r.kl) < 1.3e-4 && r.same_top, "u16 self kl %.3g", r.kl);
    pl_kl_row_u16(q, lb, V, 7, &r);
    CHECK_MSG(fabs(r.kl - want) < 1e-3 * want, "u16 kl %.9g vs %.9g", r.kl, want);
    /* a flat row: scale 0, every value the minimum */
    float flat[V];
    for (int i = 0; i < V; i++) flat[i] = 1.5f;
    pl_logprob_u16_encode(flat, V, q);
    CHECK(fabs(pl_logprob_u16_get(q, 3) + log((double)V)) < 1e-5);
}

/* A valid f32 file image of 2 windows of 8 tokens, vocabulary 5. */
static size_t good_image(uint8_t *buf) {
    uint32_t h[4] = {1, 8, 5, 2};
    memcpy(buf, PL_LP_MAGIC_F32, 8);
    memcpy(buf + 8, h, 16);
    size_t off = 24;
    for (int i = 0; i < 16; i++) {
        int32_t t = i % 5;
        memcpy(buf + off, &t, 4), off += 4;
    }
    for (int r = 0; r < 2 * 3; r++)
        for (int i = 0; i < 5; i++) {
            float v = -logf(5.0f);
            memcpy(buf + off, &v, 4), off += 4;
        }
    return off;
}

static void files(const char *dir) {
    static uint32_t store[1024];
    uint8_t *buf = (uint8_t *)store;
    pl_lp_file f;
    size_t n = good_image(buf);
    CHECK(pl_lp_parse(buf, n, "img", &f) == POCKETLLM_OK);
    CHECK(f.n_ctx == 8 && f.n_vocab == 5 && f.n_chunk == 2 && f.rows_per_chunk == 3);
    CHECK(pl_lp_row(&f, 1, 2) != NULL);
    /* truncated anywhere, or one byte too long */
    for (size_t k = 0; k < n; k++) CHECK_MSG(pl_lp_parse(buf, k, "img", &f) != POCKETLLM_OK, "truncated at %zu", k);
    CHECK(pl_lp_parse(buf, n + 4, "img", &f) == POCKETLLM_ERR_FORMAT);
    /* bad magic, version, window, vocabulary, window count, token id */
    struct { size_t off; uint32_t v; pocketllm_status want; } bad[] = {
        {0, 0x41414141, POCKETLLM_ERR_FORMAT}, {8, 2, POCKETLLM_ERR_UNSUPPORTED}, {12, 3, POCKETLLM_ERR_FORMAT},
        {12, 0x7fffffff, POCKETLLM_ERR_FORMAT}, {16, 1, POCKETLLM_ERR_FORMAT}, {16, 0xffffffff, POCKETLLM_ERR_FORMAT},
        {20, 0, POCKETLLM_ERR_FORMAT}, {20, 0xffffffff, POCKETLLM_ERR_FORMAT}, {24, 5, POCKETLLM_ERR_FORMAT},
        {28, 0xffffffff, POCKETLLM_ERR_FORMAT},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        good_image(buf);
        memcpy(buf + bad[i].off, &bad[i].v, 4);
        pocketllm_status st = pl_lp_parse(buf, n, "img", &f);
        CHECK_MSG(st == bad[i].want, "case %zu: status %d (%s)", i, st, pocketllm_last_error());
    }
    /* a row that is not log-probabilities is refused when read */
    good_image(buf);
    float nan = NAN, pos = 3.0f;
    memcpy(buf + 24 + 64 + 4 * 7, &nan, 4);
    CHECK(pl_lp_parse(buf, n, "img", &f) == POCKETLLM_OK);
    CHECK(pl_lp_row(&f, 0, 1) == NULL && pl_lp_row(&f, 0, 0) != NULL);
    memcpy(buf + 24 + 64 + 4 * 7, &pos, 4);
    CHECK(pl_lp_row(&f, 0, 1) == NULL);

    /* written and read back, both layouts */
    char path[512];
    snprintf(path, sizeof path, "%s/lp", dir);
    int32_t toks[16];
    for (int i = 0; i < 16; i++) toks[i] = (i * 7) % V;
    for (int type = POCKETLLM_LOGITS_F32; type <= POCKETLLM_LOGITS_U16; type++) {
        pl_lp_writer w;
        CHECK(pl_lp_writer_open(&w, path, type, 8, V, 2, toks) == POCKETLLM_OK);
        float l[V], lp[V];
        for (int r = 0; r < 6; r++) {
            random_logits(10 + (uint64_t)r, l, 6);
            CHECK(pl_lp_writer_row(&w, l) == POCKETLLM_OK);
        }
        CHECK(access(path, F_OK) != 0); /* only the .partial until finished */
        CHECK(pl_lp_writer_finish(&w) == POCKETLLM_OK);
        CHECK(pl_lp_open(path, &f) == POCKETLLM_OK);
        CHECK(f.type == type && f.n_chunk == 2 && f.n_vocab == V && f.tokens[9] == toks[9]);
        random_logits(10 + 4, l, 6);
        pl_log_softmax(l, V, lp);
        const void *row = pl_lp_row(&f, 1, 1);
        pl_kl_row r;
        if (type == POCKETLLM_LOGITS_F32) pl_kl_row_f32(row, lp, V, 3, &r);
        else pl_kl_row_u16(row, lp, V, 3, &r);
        CHECK_MSG(type == POCKETLLM_LOGITS_F32 ? r.kl == 0 : fabs(r.kl) < 1.3e-4, "layout %d: self kl %.3g", type, r.kl);
        pl_lp_close(&f);
        /* an aborted writer leaves nothing */
        remove(path);
        CHECK(pl_lp_writer_open(&w, path, type, 8, V, 2, toks) == POCKETLLM_OK);
        pl_lp_writer_abort(&w);
        char partial[600];
        snprintf(partial, sizeof partial, "%s.partial", path);
        CHECK(access(path, F_OK) != 0 && access(partial, F_OK) != 0);
    }
    pl_lp_writer w;
    CHECK(pl_lp_writer_open(&w, path, 3, 8, V, 2, toks) == POCKETLLM_ERR_INVALID_ARGUMENT);
    CHECK(pl_lp_writer_open(&w, path, 1, 2, V, 2, toks) == POCKETLLM_ERR_INVALID_ARGUMENT);
    CHECK(pl_lp_open("/nonexistent/lp", &f) == POCKETLLM_ERR_IO);
}

int main(void) {
    char dir[] = "/tmp/pl_test_evallp.XXXXXX";
    if (!mkdtemp(dir)) return 1;
    rows();
    files(dir);
    rmdir(dir);
    TEST_DONE();
}
