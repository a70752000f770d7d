/*
 * test_model_mutate.c -- loading and running damaged checkpoints: small
 * qwen3, llama, qwen3moe and qwen2moe files have bytes of their header and
 * metadata overwritten at random (seeded, printed) and hyperparameters set
 * to edge values (the experts' among them: none, more used than there
 * are, more than the kernels take, tensors that disagree with the keys);
 * every open must either fail with a message or give a model that
 * evaluates a few tokens without crashing (ASan/UBSan run this too).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/tiny_model.h"
#include "base/rng.h"
#include "pltest.h"
#include "pocketllm.h"

static unsigned char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *p = malloc((size_t)sz);
    if (p && fread(p, 1, (size_t)sz, f) != (size_t)sz) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *n = (size_t)sz;
    return p;
}

static void spit(const char *path, const unsigned char *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fwrite(p, 1, n, f);
    fclose(f);
}

/* Open, and when that works, evaluate 5 tokens; returns 1 if it ran. */
static int try_model(const char *path) {
    pocketllm_model *m = NULL;
    pocketllm_status st = pocketllm_model_open(path, NULL, &m);
    if (st) {
        CHECK_MSG(pocketllm_last_error()[0] != '\0', "failed open without a message (status %d)", st);
        return 0;
    }
    pocketllm_session_params sp = pocketllm_session_default_params();
    sp.n_ctx = 16;
    pocketllm_session *s = NULL;
    int ran = 0;
    if (pocketllm_session_new(m, &sp, &s) == POCKETLLM_OK) {
        int32_t ids[5] = {0, 1, 2, 3, 4};
        const int32_t nv = pocketllm_session_n_vocab(s);
        for (int i = 0; i < 5; i++) ids[i] = nv > 0 ? ids[i] % nv : 0;
        if (pocketllm_session_eval(s, ids, 5, 1) == POCKETLLM_OK) ran = pocketllm_session_logits(s, 4) != NULL;
        pocketllm_session_free(s);
    }
    pocketllm_model_close(m);
    return ran;
}

static void mutate(const char *good, const char *bad, uint64_t seed, int rounds) {
    size_t n;
    unsigned char *orig = slurp(good, &n);
    CHECK(orig != NULL);
    if (!orig) return;
    /* the header and metadata come first; the tensor data after them is
     * only numbers, which any value may take */
    pocketllm_gguf *g = NULL;
    CHECK(pocketllm_gguf_open(good, &g) == POCKETLLM_OK);
    size_t meta = (size_t)pocketllm_gguf_data_offset(g);
    pocketllm_gguf_close(g);
    pl_rng r;
    pl_rng_seed(&r, seed);
    unsigned char *p = malloc(n);
    int opened = 0;
    for (int k = 0; k < rounds; k++) {
        memcpy(p, orig, n);
        const int flips = 1 + (int)pl_rng_below(&r, 4);
        for (int f = 0; f < flips; f++) {
            size_t at = (size_t)pl_rng_below(&r, meta);
            p[at] = (unsigned char)pl_rng_next(&r);
        }
        spit(bad, p, n);
        opened += try_model(bad);
    }
    fprintf(stderr, "%s: %d of %d mutations still ran (seed %llu)\n", good, opened, rounds, (unsigned long long)seed);
    free(p);
    free(orig);
}

int main(void) {
    char dir[] = "/tmp/pl_test_mutate.XXXXXX";
    if (!mkdtemp(dir)) return 1;
    char good[256], bad[256];
    snprintf(good, sizeof good, "%s/good.gguf", dir);
    snprintf(bad, sizeof bad, "%s/bad.gguf", dir);

    tiny_model_spec s = tiny_model_default();
    s.n_layer = 1;
    CHECK(tiny_model_write(&s, good) == POCKETLLM_OK);
    CHECK(try_model(good) == 1);
    mutate(good, bad, 1234, 300);

    s.arch = "llama";
    s.n_rot = 8;
    s.qkv_bias = true;
    CHECK(tiny_model_write(&s, good) == POCKETLLM_OK);
    CHECK(try_model(good) == 1);
    mutate(good, bad, 5678, 300);

    /* edge hyperparameters written on purpose */
    tiny_model_spec e = tiny_model_default();
    e.n_layer = 1;
    e.n_head = 4, e.n_head_kv = 4, e.head_dim = 2, e.n_ff = 1, e.n_vocab = 1;
    CHECK(tiny_model_write(&e, good) == POCKETLLM_OK);
    CHECK(try_model(good) == 1); /* a one-token vocabulary still runs */
    e = tiny_model_default();
    e.head_dim = 2048; /* beyond the largest head the kernels take */
    e.n_head = 1, e.n_head_kv = 1, e.n_layer = 1;
    CHECK(tiny_model_write(&e, good) == POCKETLLM_OK);
    CHECK(try_model(good) == 0);
    CHECK(strstr(pocketllm_last_error(), "key_length") != NULL);

    /* mixtures of experts: damaged at random, then malformed on purpose */
    const char *moe_archs[] = {"qwen3moe", "qwen2moe"};
    for (int i = 0; i < 2; i++) {
        tiny_model_spec m = tiny_model_default();
        m.arch = moe_archs[i];
        m.n_layer = 1;
        if (i == 1) m.head_dim = 16, m.n_head = 4, m.n_head_kv = 4, m.qkv_bias = true;
        CHECK(tiny_model_write(&m, good) == POCKETLLM_OK);
        CHECK_MSG(try_model(good) == 1, "%s: %s", m.arch, pocketllm_last_error());
        mutate(good, bad, 91 + (uint64_t)i, 300);
    }
    struct {
        int64_t n_expert, n_used, n_tensors, n_ff_exp, n_ff;
        const char *says;
    } bad_moe[] = {
        {0, 2, 8, 32, 96, "expert_count = 0"},
        {8, 0, 8, 32, 96, "expert_used_count = 0"},
        {8, 9, 8, 32, 96, "expert_used_count = 9"},
        {300, 2, 300, 32, 96, "at most 256 experts"},
        {8, 2, 6, 32, 96, "ffn_gate_exps"},
        {8, 2, 8, 0, 0, "expert_feed_forward_length"},
    };
    for (size_t i = 0; i < sizeof bad_moe / sizeof bad_moe[0]; i++) {
        tiny_model_spec m = tiny_model_default();
        m.arch = "qwen3moe";
        m.n_layer = 1;
        m.n_expert = bad_moe[i].n_expert, m.n_expert_used = bad_moe[i].n_used;
        m.n_expert_tensors = bad_moe[i].n_tensors, m.n_ff_exp = bad_moe[i].n_ff_exp, m.n_ff = bad_moe[i].n_ff;
        CHECK(tiny_model_write(&m, good) == POCKETLLM_OK);
        CHECK_MSG(try_model(good) == 0, "bad MoE case %zu loaded", i);
        CHECK_MSG(strstr(pocketllm_last_error(), bad_moe[i].says) != NULL, "case %zu: '%s', expected '%s'", i,
                  pocketllm_last_error(), bad_moe[i].says);
    }

    remove(good), remove(bad);
    rmdir(dir);
    TEST_DONE();
}
