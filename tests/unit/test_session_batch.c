/*
 * test_session_batch.c -- several sequences in one session (continuous
 * batching): every logit a sequence gets from pocketllm_session_eval_batch,
 * whatever else shares its batches -- other sequences' prompts and decode
 * steps, in any order, in passes that split sequences anywhere -- is bit
 * for bit the logit the same tokens give in a session of its own.  On
 * llama, qwen2 (biases) and qwen3 (QK norm) shapes, f16 and f32 caches, 1
 * and 2 threads.  Also: truncating a sequence and evaluating again gives
 * the same logits; bad batches are refused and advance nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pltest.h"
#include "pocketllm.h"
#include "../common/tiny_model.h"

#define N_SEQ 3
#define N_GEN 8

static char dir[] = "/tmp/pl_test_session_batch.XXXXXX";

static pocketllm_session *session(pocketllm_model *m, uint32_t n_seq, uint32_t n_batch, uint32_t kv, int nt) {
    pocketllm_session_params sp = pocketllm_session_default_params();
    sp.n_ctx = 48;
    sp.n_batch = n_batch;
    sp.kv_type = kv;
    sp.n_threads = nt;
    pocketllm_session *s = NULL;
    CHECK_MSG(pocketllm_session_new_multi(m, &sp, n_seq, &s) == POCKETLLM_OK, "%s", pocketllm_last_error());
    return s;
}

static int32_t argmax(const float *l, int32_t n) {
    int32_t b = 0;
    for (int32_t i = 1; i < n; i++)
        if (l[i] > l[b]) b = i;
    return b;
}

/* What one sequence sees alone: the logits of every prompt position, then
 * of N_GEN greedy steps; and the ids it generates. */
typedef struct ref {
    int32_t ids[64];
    int n_prompt;
    float *logits; /* (n_prompt + N_GEN) rows */
} ref;

static void reference(pocketllm_model *m, ref *r, uint32_t kv, int nt, int32_t nv) {
    pocketllm_session *s = session(m, 1, 0, kv, nt);
    r->logits = malloc(sizeof(float) * (size_t)nv * (size_t)(r->n_prompt + N_GEN));
    if (!s || !r->logits) return;
    CHECK(pocketllm_session_eval(s, r->ids, (size_t)r->n_prompt, 1) == POCKETLLM_OK);
    for (int i = 0; i < r->n_prompt; i++)
        memcpy(r->logits + (size_t)i * nv, pocketllm_session_logits(s, i), sizeof(float) * (size_t)nv);
    for (int g = 0; g < N_GEN; g++) {
        const float *last = r->logits + (size_t)(r->n_prompt + g - 1) * nv;
        r->ids[r->n_prompt + g] = argmax(last, nv);
        CHECK(pocketllm_session_eval(s, &r->ids[r->n_prompt + g], 1, 0) == POCKETLLM_OK);
        memcpy(r->logits + (size_t)(r->n_prompt + g) * nv, pocketllm_session_logits(s, -1), sizeof(float) * (size_t)nv);
    }
    pocketllm_session_free(s);
}

/* Feed the three sequences together: prompts in chunks mixed with the
 * others' decode steps, orders varying per step, every logit compared. */
static void batched(pocketllm_model *m, ref *refs, uint32_t n_batch, uint32_t kv, int nt, int32_t nv, const char *what) {
    pocketllm_session *s = session(m, N_SEQ, n_batch, kv, nt);
    if (!s) return;
    int fed[N_SEQ] = {0};
    const int total[N_SEQ] = {refs[0].n_prompt + N_GEN, refs[1].n_prompt + N_GEN, refs[2].n_prompt + N_GEN};
    pocketllm_batch_token toks[64];
    int tok_seq[64], tok_pos[64];
    int mismatches = 0;
    for (int step = 0; step < 64; step++) {
        int n = 0;
        for (int k = 0; k < N_SEQ; k++) {
            /* vary who goes first, and how much of a prompt each step takes */
            const int q = (step % 2) ? N_SEQ - 1 - k : (k + step) % N_SEQ;
            const ref *r = &refs[q];
            int take = fed[q] < r->n_prompt ? 1 + (step * 5 + q * 3) % 6 : 1;
            if (fed[q] < r->n_prompt && fed[q] + take > r->n_prompt) take = r->n_prompt - fed[q];
            if (q == 2 && step < 2) take = 0; /* sequence 2 arrives late */
            for (int t = 0; t < take && fed[q] < total[q]; t++) {
                /* logits for every token (a prompt's included), to compare all */
                toks[n] = (pocketllm_batch_token){r->ids[fed[q]], (uint32_t)q, (t + step) % 3 != 1 || fed[q] + 1 >= r->n_prompt};
                tok_seq[n] = q;
                tok_pos[n] = fed[q]++;
                n++;
            }
        }
        if (n == 0) break;
        pocketllm_status st = pocketllm_session_eval_batch(s, toks, (size_t)n);
        CHECK_MSG(st == POCKETLLM_OK, "%s: step %d: %s", what, step, pocketllm_last_error());
        if (st) break;
        for (int i = 0; i < n; i++) {
            const float *got = pocketllm_session_batch_logits(s, (size_t)i);
            CHECK(!toks[i].logits == !got);
            if (!got) continue;
            const float *want = refs[tok_seq[i]].logits + (size_t)tok_pos[i] * nv;
            if (memcmp(got, want, sizeof(float) * (size_t)nv) != 0) mismatches++;
        }
    }
    CHECK_MSG(mismatches == 0, "%s: %d rows of logits differ from the sequences alone", what, mismatches);
    for (int q = 0; q < N_SEQ; q++) {
        CHECK_MSG(fed[q] == total[q], "%s: sequence %d fed %d of %d", what, q, fed[q], total[q]);
        CHECK(pocketllm_session_seq_n_past(s, (uint32_t)q) == (uint32_t)total[q]);
    }
    pocketllm_session_free(s);
}

/* Truncate, evaluate again: the same logits; refusals advance nothing. */
static void edges(pocketllm_model *m, ref *refs, int32_t nv) {
    pocketllm_session *s = session(m, 2, 0, 1, 2);
    if (!s) return;
    const ref *r = &refs[1];
    pocketllm_batch_token toks[64];
    for (int i = 0; i < r->n_prompt; i++) toks[i] = (pocketllm_batch_token){r->ids[i], 1, i == r->n_prompt - 1};
    CHECK(pocketllm_session_eval_batch(s, toks, (size_t)r->n_prompt) == POCKETLLM_OK);
    CHECK(pocketllm_session_batch_logits(s, 0) == NULL);
    const size_t row = sizeof(float) * (size_t)nv;
    const float *last = pocketllm_session_batch_logits(s, (size_t)r->n_prompt - 1);
    CHECK(last && memcmp(last, r->logits + (size_t)(r->n_prompt - 1) * nv, row) == 0);
    CHECK(pocketllm_session_seq_n_past(s, 1) == (uint32_t)r->n_prompt && pocketllm_session_seq_n_past(s, 0) == 0);
    /* back to 3 positions, then the rest again */
    CHECK(pocketllm_session_seq_truncate(s, 1, 3) == POCKETLLM_OK);
    CHECK(pocketllm_session_seq_n_past(s, 1) == 3);
    CHECK(pocketllm_session_batch_logits(s, 0) == NULL);
    int n = 0;
    for (int i = 3; i < r->n_prompt; i++) toks[n++] = (pocketllm_batch_token){r->ids[i], 1, 1};
    CHECK(pocketllm_session_eval_batch(s, toks, (size_t)n) == POCKETLLM_OK);
    for (int i = 0; i < n; i++) {
        const float *got = pocketllm_session_batch_logits(s, (size_t)i);
        CHECK(got && memcmp(got, r->logits + (size_t)(3 + i) * nv, row) == 0);
    }
    /* a logits token before a plain one of the same sequence keeps its position */
    CHECK(pocketllm_session_seq_truncate(s, 1, 3) == POCKETLLM_OK);
    toks[0] = (pocketllm_batch_token){r->ids[3], 1, 1};
    toks[1] = (pocketllm_batch_token){r->ids[4], 1, 0};
    CHECK(pocketllm_session_eval_batch(s, toks, 2) == POCKETLLM_OK);
    const float *got = pocketllm_session_batch_logits(s, 0);
    CHECK(got && memcmp(got, r->logits + (size_t)3 * nv, row) == 0);
    /* refusals */
    const uint32_t before0 = pocketllm_session_seq_n_past(s, 0), before1 = pocketllm_session_seq_n_past(s, 1);
    toks[0] = (pocketllm_batch_token){1, 0, 1};
    toks[1] = (pocketllm_batch_token){1, 2, 1};
    CHECK(pocketllm_session_eval_batch(s, toks, 2) == POCKETLLM_ERR_INVALID_ARGUMENT);
    toks[1] = (pocketllm_batch_token){-1, 1, 1};
    CHECK(pocketllm_session_eval_batch(s, toks, 2) == POCKETLLM_ERR_INVALID_ARGUMENT);
    toks[1] = (pocketllm_batch_token){nv, 1, 1};
    CHECK(pocketllm_session_eval_batch(s, toks, 2) == POCKETLLM_ERR_INVALID_ARGUMENT);
    CHECK(pocketllm_session_eval_batch(s, toks, 0) == POCKETLLM_ERR_INVALID_ARGUMENT);
    pocketllm_batch_token many[100];
    for (int i = 0; i < 100; i++) many[i] = (pocketllm_batch_token){1, (uint32_t)(i % 2), 0};
    CHECK(pocketllm_session_eval_batch(s, many, 100) == POCKETLLM_ERR_CONTEXT_FULL); /* 50 more do not fit 48 */
    CHECK(pocketllm_session_seq_n_past(s, 0) == before0 && pocketllm_session_seq_n_past(s, 1) == before1);
    CHECK(pocketllm_session_seq_truncate(s, 2, 0) == POCKETLLM_ERR_INVALID_ARGUMENT);
    /* the single-sequence calls act on sequence 0 */
    CHECK(pocketllm_session_n_seq(s) == 2);
    pocketllm_session_reset(s);
    CHECK(pocketllm_session_seq_n_past(s, 1) == 0);
    CHECK(pocketllm_session_eval(s, refs[0].ids, (size_t)refs[0].n_prompt, 0) == POCKETLLM_OK);
    CHECK(pocketllm_session_seq_n_past(s, 0) == (uint32_t)refs[0].n_prompt && pocketllm_session_n_past(s) == pocketllm_session_seq_n_past(s, 0));
    last = pocketllm_session_logits(s, -1);
    CHECK(last && memcmp(last, refs[0].logits + (size_t)(refs[0].n_prompt - 1) * nv, row) == 0);
    pocketllm_session_free(s);
}

static void run_model(const tiny_model_spec *spec, const char *name) {
    char path[128];
    snprintf(path, sizeof path, "%s/%s.gguf", dir, name);
    CHECK_MSG(tiny_model_write(spec, path) == POCKETLLM_OK, "%s: %s", name, pocketllm_last_error());
    pocketllm_model_params mp = pocketllm_model_default_params();
    pocketllm_model *m = NULL;
    CHECK_MSG(pocketllm_model_open(path, &mp, &m) == POCKETLLM_OK, "%s: %s", name, pocketllm_last_error());
    if (!m) return;
    pocketllm_session *probe = session(m, 1, 0, 1, 1);
    const int32_t nv = pocketllm_session_n_vocab(probe);
    pocketllm_session_free(probe);
    ref refs[N_SEQ];
    const int lens[N_SEQ] = {7, 13, 5};
    for (uint32_t kv = 0; kv <= 1; kv++)
        for (int nt = 1; nt <= 2; nt++) {
            for (int q = 0; q < N_SEQ; q++) {
                refs[q].n_prompt = lens[q];
                for (int i = 0; i < lens[q]; i++) refs[q].ids[i] = (i * 37 + q * 101 + 11) % nv;
                reference(m, &refs[q], kv, nt, nv);
            }
            char what[96];
            snprintf(what, sizeof what, "%s kv=%s threads=%d", name, kv ? "f16" : "f32", nt);
            batched(m, refs, 0, kv, nt, nv, what);
            strcat(what, " n_batch=4");
            batched(m, refs, 4, kv, nt, nv, what);
            if (kv == 1 && nt == 2) edges(m, refs, nv);
            for (int q = 0; q < N_SEQ; q++) free(refs[q].logits);
        }
    pocketllm_model_close(m);
    unlink(path);
}

int main(void) {
    CHECK(mkdtemp(dir) != NULL);
    tiny_model_spec q3 = tiny_model_default();
    run_model(&q3, "qwen3");
    tiny_model_spec q2 = tiny_model_default();
    q2.arch = "qwen2";
    q2.qkv_bias = true;
    q2.tied = true;
    q2.type = 1; /* f16 weights */
    run_model(&q2, "qwen2");
    tiny_model_spec ll = tiny_model_default();
    ll.arch = "llama";
    ll.n_head = 4;
    ll.n_head_kv = 4;
    ll.n_rot = 8;
    run_model(&ll, "llama");
    rmdir(dir);
    TEST_DONE();
}
