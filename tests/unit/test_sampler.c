/*
 * test_sampler.c -- the sampler: greedy (and its tie rule), each filter
 * (top-k, top-p, min-p) on logits where the answer is known, the three
 * penalties worked by hand, the empirical distribution of a draw against
 * the softmax it should follow, temperature, seeding and reproducibility,
 * and refusal of bad parameters.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pltest.h"
#include "pocketllm.h"

static pocketllm_sampler *make(pocketllm_sampler_params p) {
    pocketllm_sampler *s = NULL;
    CHECK(pocketllm_sampler_new(&p, &s) == POCKETLLM_OK && s);
    return s;
}

static int32_t draw(pocketllm_sampler *s, const float *l, int32_t n) {
    int32_t id = -1;
    CHECK(pocketllm_sampler_sample(s, l, n, &id) == POCKETLLM_OK);
    return id;
}

/* a sampler with every filter off */
static pocketllm_sampler_params plain(float temp, uint64_t seed) {
    pocketllm_sampler_params p = pocketllm_sampler_default_params();
    p.temperature = temp;
    p.top_k = 0;
    p.top_p = 1.0f;
    p.min_p = 0.0f;
    p.seed = seed;
    return p;
}

static void test_greedy(void) {
    pocketllm_sampler_params p = pocketllm_sampler_default_params();
    CHECK(p.temperature == 0.0f); /* greedy is the default */
    pocketllm_sampler *s = make(p);
    float l[6] = {0.5f, 2.0f, -1.0f, 2.0f, 1.9f, NAN};
    CHECK(draw(s, l, 6) == 1); /* the lowest id among equal maxima; NaN never wins */
    l[3] = 2.5f;
    CHECK(draw(s, l, 6) == 3);
    float big[1000];
    for (int i = 0; i < 1000; i++) big[i] = (float)((i * 37) % 1000) / 100.0f;
    int best = 0;
    for (int i = 1; i < 1000; i++)
        if (big[i] > big[best]) best = i;
    CHECK(draw(s, big, 1000) == best);
    pocketllm_sampler_free(s);
}

static void test_penalties(void) {
    /* repeat penalty 2: positive logits halved, negative doubled */
    pocketllm_sampler_params p = plain(0, 1);
    p.repeat_penalty = 2.0f;
    p.penalty_last_n = 2;
    pocketllm_sampler *s = make(p);
    float l[4] = {3.0f, 2.0f, -0.5f, -0.6f};
    pocketllm_sampler_accept(s, 0); /* 3 -> 1.5: id 1 (2.0) wins */
    CHECK(draw(s, l, 4) == 1);
    pocketllm_sampler_accept(s, 1); /* window {0, 1}: 1.5, 1.0 -> id 0 again */
    CHECK(draw(s, l, 4) == 0);
    pocketllm_sampler_accept(s, 3); /* window {1, 3}: id 0 unpenalised (3.0) */
    CHECK(draw(s, l, 4) == 0);
    pocketllm_sampler_free(s);

    /* frequency 1 per occurrence, presence 0.5 once: 3 - 2*1 - 0.5 = 0.5 < 2 - 0 */
    p = plain(0, 1);
    p.frequency_penalty = 1.0f;
    p.presence_penalty = 0.5f;
    p.penalty_last_n = -1;
    s = make(p);
    pocketllm_sampler_accept(s, 0);
    pocketllm_sampler_accept(s, 0);
    CHECK(draw(s, l, 4) == 1);
    /* ids outside the vocabulary in the history are ignored */
    pocketllm_sampler_accept(s, 1000);
    pocketllm_sampler_accept(s, -5);
    CHECK(draw(s, l, 4) == 1);
    pocketllm_sampler_reset(s); /* history gone: 3.0 wins */
    CHECK(draw(s, l, 4) == 0);
    pocketllm_sampler_free(s);
}

static void test_filters(void) {
    float l[5] = {2.0f, 1.0f, 0.0f, -1.0f, -3.0f};
    /* top-k 1 at any temperature is greedy */
    pocketllm_sampler_params p = plain(5.0f, 7);
    p.top_k = 1;
    pocketllm_sampler *s = make(p);
    for (int i = 0; i < 200; i++) CHECK(draw(s, l, 5) == 0);
    pocketllm_sampler_free(s);
    /* top-k 2: only ids 0 and 1 ever */
    p.top_k = 2;
    s = make(p);
    int seen[5] = {0};
    for (int i = 0; i < 2000; i++) seen[draw(s, l, 5)]++;
    CHECK(seen[0] > 0 && seen[1] > 0 && seen[2] + seen[3] + seen[4] == 0);
    pocketllm_sampler_free(s);
    /* top-p: the softmax is 0.641, 0.236, 0.087, ...: top_p 0.6 keeps only id 0, 0.85 keeps 0 and 1 */
    p = plain(1.0f, 3);
    p.top_p = 0.6f;
    s = make(p);
    for (int i = 0; i < 200; i++) CHECK(draw(s, l, 5) == 0);
    pocketllm_sampler_free(s);
    p.top_p = 0.85f;
    s = make(p);
    memset(seen, 0, sizeof seen);
    for (int i = 0; i < 2000; i++) seen[draw(s, l, 5)]++;
    CHECK(seen[0] > 0 && seen[1] > 0 && seen[2] + seen[3] + seen[4] == 0);
    pocketllm_sampler_free(s);
    /* min-p 0.3: keeps p_i >= 0.3 p_max, i.e. logit >= 2 + ln 0.3 = 0.796: ids 0, 1 */
    p = plain(1.0f, 4);
    p.min_p = 0.3f;
    s = make(p);
    memset(seen, 0, sizeof seen);
    for (int i = 0; i < 2000; i++) seen[draw(s, l, 5)]++;
    CHECK(seen[0] > 0 && seen[1] > 0 && seen[2] + seen[3] + seen[4] == 0);
    pocketllm_sampler_free(s);
}

/* frequencies of a plain draw follow softmax(l / T) within 5 standard errors */
static void test_distribution(float temp) {
    float l[4] = {1.0f, 0.5f, 0.0f, -2.0f};
    double w[4], sum = 0;
    for (int i = 0; i < 4; i++) sum += (w[i] = exp(l[i] / temp));
    pocketllm_sampler *s = make(plain(temp, 99));
    const int n = 40000;
    int seen[4] = {0};
    for (int i = 0; i < n; i++) seen[draw(s, l, 4)]++;
    for (int i = 0; i < 4; i++) {
        double pr = w[i] / sum, se = sqrt(pr * (1 - pr) / n);
        CHECK_MSG(fabs((double)seen[i] / n - pr) <= 5 * se + 1e-9, "T=%g id %d: %.4f vs %.4f", (double)temp, i,
                  (double)seen[i] / n, pr);
    }
    pocketllm_sampler_free(s);
}

static void test_seeds(void) {
    float l[50];
    for (int i = 0; i < 50; i++) l[i] = (float)((i * 7) % 13) * 0.2f;
    int32_t a[100], b[100], c[100];
    pocketllm_sampler *s1 = make(plain(1.0f, 42)), *s2 = make(plain(1.0f, 42)), *s3 = make(plain(1.0f, 43));
    for (int i = 0; i < 100; i++) a[i] = draw(s1, l, 50), b[i] = draw(s2, l, 50), c[i] = draw(s3, l, 50);
    CHECK(memcmp(a, b, sizeof a) == 0);
    CHECK(memcmp(a, c, sizeof a) != 0);
    pocketllm_sampler_reset(s1); /* the generator restarts from the seed */
    for (int i = 0; i < 100; i++) b[i] = draw(s1, l, 50);
    CHECK(memcmp(a, b, sizeof a) == 0);
    pocketllm_sampler_free(s1), pocketllm_sampler_free(s2), pocketllm_sampler_free(s3);
}

static void test_bad(void) {
    pocketllm_sampler *s = NULL;
    pocketllm_sampler_params p = pocketllm_sampler_default_params();
    p.top_p = 1.5f;
    CHECK(pocketllm_sampler_new(&p, &s) == POCKETLLM_ERR_INVALID_ARGUMENT && !s);
    p = pocketllm_sampler_default_params();
    p.min_p = -0.1f;
    CHECK(pocketllm_sampler_new(&p, &s) == POCKETLLM_ERR_INVALID_ARGUMENT);
    p = pocketllm_sampler_default_params();
    p.repeat_penalty = 0.0f;
    CHECK(pocketllm_sampler_new(&p, &s) == POCKETLLM_ERR_INVALID_ARGUMENT);
    p = pocketllm_sampler_default_params();
    p.temperature = INFINITY;
    CHECK(pocketllm_sampler_new(&p, &s) == POCKETLLM_ERR_INVALID_ARGUMENT);
    p = pocketllm_sampler_default_params();
    p.penalty_last_n = -2;
    CHECK(pocketllm_sampler_new(&p, &s) == POCKETLLM_ERR_INVALID_ARGUMENT);
    CHECK(pocketllm_sampler_new(NULL, &s) == POCKETLLM_OK && s);
    int32_t id;
    float l[2] = {0, 1};
    CHECK(pocketllm_sampler_sample(s, l, 0, &id) == POCKETLLM_ERR_INVALID_ARGUMENT);
    CHECK(pocketllm_sampler_sample(s, NULL, 2, &id) == POCKETLLM_ERR_INVALID_ARGUMENT);
    /* all logits unusable: still an answer, never a crash */
    float bad[3] = {NAN, -INFINITY, NAN};
    pocketllm_sampler_free(s);
    s = make(plain(1.0f, 1));
    CHECK(pocketllm_sampler_sample(s, bad, 3, &id) == POCKETLLM_OK && id >= 0 && id < 3);
    pocketllm_sampler_free(s);
    pocketllm_sampler_free(NULL);
}

int main(void) {
    test_greedy();
    test_penalties();
    test_filters();
    test_distribution(1.0f);
    test_distribution(0.5f);
    test_distribution(3.0f);
    test_seeds();
    test_bad();
    TEST_DONE();
}
