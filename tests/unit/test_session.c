/*
 * test_session.c -- sessions on small random-weight llama / qwen2 / qwen3
 * checkpoints: batched prefill and one token at a time give the same
 * logits bit for bit, as do 1, 2 and 3 threads and any pass size; the
 * context limit refuses without changing the session; bad ids and empty
 * batches are refused; reset starts over; and malformed checkpoints are
 * refused at open with a message naming the problem.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pltest.h"
#include "pocketllm.h"
#include "quant/types.h"
#include "../common/tiny_model.h"

static char dir[] = "/tmp/pl_test_session.XXXXXX";

static pocketllm_model *open_model(const char *path, int n_threads) {
    pocketllm_model_params mp = pocketllm_model_default_params();
    mp.n_threads = n_threads;
    pocketllm_model *m = NULL;
    pocketllm_status st = pocketllm_model_open(path, &mp, &m);
    CHECK_MSG(st == POCKETLLM_OK, "%s: %s", path, pocketllm_last_error());
    return m;
}

static pocketllm_session *new_session(pocketllm_model *m, uint32_t n_ctx, uint32_t n_batch, uint32_t kv, int nt) {
    pocketllm_session_params sp = pocketllm_session_default_params();
    sp.n_ctx = n_ctx;
    sp.n_batch = n_batch;
    sp.kv_type = kv;
    sp.n_threads = nt;
    pocketllm_session *s = NULL;
    CHECK_MSG(pocketllm_session_new(m, &sp, &s) == POCKETLLM_OK, "%s", pocketllm_last_error());
    return s;
}

/* Logits of every position of ids, evaluated in one call (passes of
 * n_batch) or one token at a time. */
static float *all_logits(pocketllm_model *m, const int32_t *ids, int n, uint32_t n_batch, bool one_by_one, int nt,
                         uint32_t kv) {
    pocketllm_session *s = new_session(m, 64, n_batch, kv, nt);
    if (!s) return NULL;
    const int32_t nv = pocketllm_session_n_vocab(s);
    float *out = malloc(sizeof(float) * (size_t)nv * (size_t)n);
    if (one_by_one) {
        for (int i = 0; i < n; i++) {
            CHECK(pocketllm_session_eval(s, ids + i, 1, 0) == POCKETLLM_OK);
            memcpy(out + (size_t)i * nv, pocketllm_session_logits(s, -1), sizeof(float) * (size_t)nv);
        }
    } else {
        CHECK(pocketllm_session_eval(s, ids, (size_t)n, 1) == POCKETLLM_OK);
        for (int i = 0; i < n; i++) memcpy(out + (size_t)i * nv, pocketllm_session_logits(s, i), sizeof(float) * (size_t)nv);
        CHECK(pocketllm_session_logits(s, n) == NULL);
        CHECK(memcmp(pocketllm_session_logits(s, -1), out + (size_t)(n - 1) * nv, sizeof(float) * (size_t)nv) == 0);
    }
    CHECK(pocketllm_session_n_past(s) == (uint32_t)n);
    pocketllm_session_free(s);
    return out;
}

static void test_invariances(const char *path, const char *what) {
    pocketllm_model *m = open_model(path, 0);
    if (!m) return;
    pocketllm_session *probe = new_session(m, 64, 0, 1, 1);
    const int32_t nv = pocketllm_session_n_vocab(probe);
    pocketllm_session_free(probe);
    int32_t ids[23];
    for (int i = 0; i < 23; i++) ids[i] = (i * 131 + 7) % nv;
    const size_t bytes = sizeof(float) * (size_t)nv * 23;
    for (uint32_t kv = 0; kv <= 1; kv++) {
        float *batched = all_logits(m, ids, 23, 0, false, 2, kv);
        float *single = all_logits(m, ids, 23, 0, true, 2, kv);
        float *split = all_logits(m, ids, 23, 5, false, 2, kv);
        float *t1 = all_logits(m, ids, 23, 0, false, 1, kv);
        float *t3 = all_logits(m, ids, 23, 0, false, 3, kv);
        CHECK_MSG(memcmp(batched, single, bytes) == 0, "%s kv %u: batched prefill != one at a time", what, kv);
        CHECK_MSG(memcmp(batched, split, bytes) == 0, "%s kv %u: passes of 5 differ", what, kv);
        CHECK_MSG(memcmp(batched, t1, bytes) == 0, "%s kv %u: 1 thread differs from 2", what, kv);
        CHECK_MSG(memcmp(batched, t3, bytes) == 0, "%s kv %u: 3 threads differ from 2", what, kv);
        bool finite = true;
        for (size_t i = 0; i < (size_t)nv * 23; i++) finite = finite && isfinite(batched[i]);
        CHECK_MSG(finite, "%s: non-finite logits", what);
        free(batched), free(single), free(split), free(t1), free(t3);
    }
    pocketllm_model_close(m);
}

static void test_limits(const char *path) {
    pocketllm_model *m = open_model(path, 1);
    if (!m) return;
    pocketllm_session *s = new_session(m, 16, 0, 1, 1);
    const int32_t nv = pocketllm_session_n_vocab(s);
    int32_t ids[20] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
    CHECK(pocketllm_session_n_ctx(s) == 16);
    CHECK(pocketllm_session_eval(s, ids, 10, 0) == POCKETLLM_OK);
    float *first = malloc(sizeof(float) * (size_t)nv);
    memcpy(first, pocketllm_session_logits(s, -1), sizeof(float) * (size_t)nv);
    /* 7 more do not fit 16: refused, nothing changes */
    CHECK(pocketllm_session_eval(s, ids + 10, 7, 0) == POCKETLLM_ERR_CONTEXT_FULL);
    CHECK(strstr(pocketllm_last_error(), "context") != NULL);
    CHECK(pocketllm_session_n_past(s) == 10);
    CHECK(pocketllm_session_eval(s, ids + 10, 6, 0) == POCKETLLM_OK);
    CHECK(pocketllm_session_n_past(s) == 16);
    CHECK(pocketllm_session_eval(s, ids, 1, 0) == POCKETLLM_ERR_CONTEXT_FULL);
    /* bad input */
    int32_t bad[2] = {3, nv};
    pocketllm_session_reset(s);
    CHECK(pocketllm_session_n_past(s) == 0 && pocketllm_session_logits(s, -1) == NULL);
    CHECK(pocketllm_session_eval(s, bad, 2, 0) == POCKETLLM_ERR_INVALID_ARGUMENT);
    bad[1] = -1;
    CHECK(pocketllm_session_eval(s, bad, 2, 0) == POCKETLLM_ERR_INVALID_ARGUMENT);
    CHECK(pocketllm_session_eval(s, ids, 0, 0) == POCKETLLM_ERR_INVALID_ARGUMENT);
    CHECK(pocketllm_session_n_past(s) == 0);
    /* after reset the same ids give the same logits */
    CHECK(pocketllm_session_eval(s, ids, 10, 0) == POCKETLLM_OK);
    CHECK(memcmp(first, pocketllm_session_logits(s, -1), sizeof(float) * (size_t)nv) == 0);
    CHECK(pocketllm_session_logits(s, 1) == NULL); /* only the last was kept */
    free(first);
    pocketllm_session_free(s);
    /* bad parameters */
    pocketllm_session_params sp = pocketllm_session_default_params();
    pocketllm_session *t = NULL;
    sp.kv_type = PL_TYPE_Q8_0;
    CHECK(pocketllm_session_new(m, &sp, &t) == POCKETLLM_ERR_INVALID_ARGUMENT && !t);
    sp = pocketllm_session_default_params();
    sp.n_ctx = 1u << 30;
    CHECK(pocketllm_session_new(m, &sp, &t) != POCKETLLM_OK && !t);
    CHECK(pocketllm_session_new(NULL, NULL, &t) == POCKETLLM_ERR_INVALID_ARGUMENT);
    /* defaults: the model's context (4096 here, the cap) */
    CHECK(pocketllm_session_new(m, NULL, &t) == POCKETLLM_OK && pocketllm_session_n_ctx(t) == 4096);
    CHECK(pocketllm_model_n_ctx_train(m) == 4096);
    pocketllm_session_free(t);
    pocketllm_model_close(m);
}

/* Rewrite `src` without the tensor or key `drop` (NULL: none), with key `key` set to
 * the u32 `val` or the string `sval` (NULL: no change). */
static void rewrite(const char *src, const char *dst, const char *drop, const char *key, uint32_t val, const char *sval) {
    pocketllm_gguf *g = NULL;
    pocketllm_gguf_writer *w = NULL;
    CHECK(pocketllm_gguf_open(src, &g) == POCKETLLM_OK);
    CHECK(pocketllm_gguf_writer_new(&w) == POCKETLLM_OK);
    for (uint64_t i = 0; i < pocketllm_gguf_kv_count(g); i++)
        pocketllm_gguf_writer_set_value(w, pocketllm_gguf_kv_key(g, i), pocketllm_gguf_kv_value(g, i));
    if (drop) pocketllm_gguf_writer_remove(w, drop); /* a key of that name, if any */
    if (key && sval) pocketllm_gguf_writer_set_str(w, key, sval);
    else if (key) pocketllm_gguf_writer_set_u32(w, key, val);
    for (uint64_t i = 0; i < pocketllm_gguf_tensor_count(g); i++) {
        pocketllm_tensor_info t;
        pocketllm_gguf_tensor(g, i, &t);
        if (drop && !strcmp(drop, t.name)) continue;
        pocketllm_gguf_writer_add_tensor(w, t.name, t.type, t.n_dims, t.ne, t.data);
    }
    CHECK(pocketllm_gguf_writer_write(w, dst) == POCKETLLM_OK);
    pocketllm_gguf_writer_free(w);
    pocketllm_gguf_close(g);
}

static void expect_refused(const char *path, pocketllm_status want, const char *words) {
    pocketllm_model *m = NULL;
    pocketllm_status st = pocketllm_model_open(path, NULL, &m);
    CHECK_MSG(st == want && !m, "%s: status %d, expected %d", path, st, want);
    CHECK_MSG(strstr(pocketllm_last_error(), words) != NULL, "message '%s' lacks '%s'", pocketllm_last_error(), words);
    pocketllm_model_close(m);
}

static void test_bad_models(const char *good) {
    char p[256];
    snprintf(p, sizeof p, "%s/bad.gguf", dir);
    rewrite(good, p, "blk.1.attn_k_norm.weight", NULL, 0, NULL);
    expect_refused(p, POCKETLLM_ERR_FORMAT, "blk.1.attn_k_norm.weight is missing");
    rewrite(good, p, NULL, "qwen3.feed_forward_length", 95, NULL);
    expect_refused(p, POCKETLLM_ERR_FORMAT, "blk.0.ffn_gate.weight has shape");
    rewrite(good, p, NULL, "qwen3.attention.head_count_kv", 3, NULL);
    expect_refused(p, POCKETLLM_ERR_FORMAT, "cannot be shared");
    rewrite(good, p, NULL, "qwen3.block_count", 0, NULL);
    expect_refused(p, POCKETLLM_ERR_FORMAT, "block_count");
    rewrite(good, p, NULL, "qwen3.rope.dimension_count", 15, NULL);
    expect_refused(p, POCKETLLM_ERR_FORMAT, "odd");
    rewrite(good, p, NULL, "qwen3.rope.scaling.type", 0, "yarn");
    expect_refused(p, POCKETLLM_ERR_UNSUPPORTED, "yarn");
    rewrite(good, p, "qwen3.embedding_length", NULL, 0, NULL);
    expect_refused(p, POCKETLLM_ERR_FORMAT, "missing hyperparameter qwen3.embedding_length");
    rewrite(good, p, NULL, "general.architecture", 0, "gpt-j");
    expect_refused(p, POCKETLLM_ERR_UNSUPPORTED, "gpt-j");
    rewrite(good, p, "token_embd.weight", NULL, 0, NULL);
    expect_refused(p, POCKETLLM_ERR_FORMAT, "token_embd.weight is missing");
    /* a weight type without kernels */
    tiny_model_spec s = tiny_model_default();
    s.type = PL_TYPE_I32;
    CHECK(tiny_model_write(&s, p) == POCKETLLM_ERR_UNSUPPORTED); /* the builder cannot even encode it */
    remove(p);
}

int main(void) {
    if (!mkdtemp(dir)) {
        fprintf(stderr, "FAIL: cannot make a temporary folder\n");
        return 1;
    }
    char q3[256], q3t[256], ll[256], q2[256];
    snprintf(q3, sizeof q3, "%s/qwen3.gguf", dir);
    snprintf(q3t, sizeof q3t, "%s/qwen3_f16_tied.gguf", dir);
    snprintf(ll, sizeof ll, "%s/llama.gguf", dir);
    snprintf(q2, sizeof q2, "%s/qwen2.gguf", dir);
    tiny_model_spec s = tiny_model_default();
    CHECK(tiny_model_write(&s, q3) == POCKETLLM_OK);
    s.type = PL_TYPE_F16;
    s.tied = true;
    CHECK(tiny_model_write(&s, q3t) == POCKETLLM_OK);
    s = tiny_model_default();
    s.arch = "llama";
    s.type = PL_TYPE_BF16;
    s.n_rot = 8; /* half of each head rotates */
    s.rope_freqs = true;
    s.n_head_kv = 4;
    CHECK(tiny_model_write(&s, ll) == POCKETLLM_OK);
    s = tiny_model_default();
    s.arch = "qwen2";
    s.qkv_bias = true;
    s.n_head_kv = 1;
    CHECK(tiny_model_write(&s, q2) == POCKETLLM_OK);

    test_invariances(q3, "qwen3 f32");
    test_invariances(q3t, "qwen3 f16 tied");
    test_invariances(ll, "llama bf16 partial rotary");
    test_invariances(q2, "qwen2 biases");
    test_limits(q3);
    test_bad_models(q3);

    remove(q3), remove(q3t), remove(ll), remove(q2);
    rmdir(dir);
    TEST_DONE();
}
