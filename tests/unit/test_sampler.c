/*
 * test_sampler.c -- the sampler: greedy (and its tie rule), each filter
 * (top-k, top-p, min-p) on logits where the answer is known, the three
 * penalties worked by hand, the empirical distribution of a draw against
 * the softmax it should follow, temperature, seeding and reproducibility,
 * and refusal of bad parameters.  pocketllm_sampler_probs against the
 * draw it describes, and speculative sampling's step: the id it gives
 * follows p whatever q proposed (empirically, within 5 standard errors).
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

/* probs: greedy one-hot at the sampled id; the softmax of l / T without
 * filters; zero outside what top-k keeps; a sum of 1 */
static void test_probs(void) {
    float l[6] = {0.3f, 2.0f, -1.0f, 2.0f, 0.9f, -0.5f}, pr[6];
    pocketllm_sampler *g = make(pocketllm_sampler_default_params());
    CHECK(pocketllm_sampler_probs(g, l, 6, pr) == POCKETLLM_OK);
    CHECK(pr[draw(g, l, 6)] == 1.0f && pr[1] == 1.0f); /* the lowest id of the tie */
    pocketllm_sampler_free(g);
    pocketllm_sampler *s = make(plain(2.0f, 5));
    CHECK(pocketllm_sampler_probs(s, l, 6, pr) == POCKETLLM_OK);
    double sum = 0, z = 0;
    for (int i = 0; i < 6; i++) z += exp(l[i] / 2.0);
    for (int i = 0; i < 6; i++) {
        CHECK_MSG(fabs(pr[i] - exp(l[i] / 2.0) / z) < 1e-6, "probs[%d] %g", i, (double)pr[i]);
        sum += pr[i];
    }
    CHECK(fabs(sum - 1) < 1e-6);
    pocketllm_sampler_free(s);
    pocketllm_sampler_params p = plain(1.0f, 5);
    p.top_k = 3;
    s = make(p);
    CHECK(pocketllm_sampler_probs(s, l, 6, pr) == POCKETLLM_OK);
    CHECK(pr[1] > 0 && pr[3] > 0 && pr[4] > 0 && pr[0] == 0 && pr[2] == 0 && pr[5] == 0);
    /* the draw never leaves the support */
    for (int i = 0; i < 500; i++) CHECK(pr[draw(s, l, 6)] > 0);
    pocketllm_sampler_free(s);
    CHECK(pocketllm_sampler_probs(NULL, l, 6, pr) == POCKETLLM_ERR_INVALID_ARGUMENT);
}

/* spec_step: draft drawn from q, then kept or replaced: the result follows
 * p, for a q far from p and for lookup's certain proposal (q NULL) */
static void test_spec_step(void) {
    const float p[4] = {0.5f, 0.3f, 0.15f, 0.05f}, q[4] = {0.05f, 0.15f, 0.3f, 0.5f};
    pocketllm_sampler *s = make(plain(1.0f, 7)), *d = make(plain(1.0f, 8));
    const float lq[4] = {logf(q[0]), logf(q[1]), logf(q[2]), logf(q[3])};
    const int n = 40000;
    for (int mode = 0; mode < 2; mode++) {
        int seen[4] = {0};
        for (int i = 0; i < n; i++) {
            const int32_t x = mode == 0 ? draw(d, lq, 4) : 3; /* lookup: always proposes 3 */
            int32_t id = -1;
            CHECK(pocketllm_sampler_spec_step(s, p, mode == 0 ? q : NULL, 4, x, &id) == POCKETLLM_OK);
            seen[id]++;
        }
        for (int i = 0; i < 4; i++) {
            const double se = sqrt(p[i] * (1 - p[i]) / n);
            CHECK_MSG(fabs((double)seen[i] / n - p[i]) <= 5 * se, "mode %d id %d: %.4f vs %.4f", mode, i,
                      (double)seen[i] / n, (double)p[i]);
        }
    }
    /* p == q: always kept; p zero at the draft: never */
    int32_t id;
    for (int i = 0; i < 100; i++) {
        CHECK(pocketllm_sampler_spec_step(s, p, p, 4, i % 4, &id) == POCKETLLM_OK && id == i % 4);
        const float z[4] = {0.0f, 0.5f, 0.5f, 0.0f};
        CHECK(pocketllm_sampler_spec_step(s, z, q, 4, 3, &id) == POCKETLLM_OK && (id == 1 || id == 2));
    }
    CHECK(pocketllm_sampler_spec_step(s, p, q, 4, 4, &id) == POCKETLLM_ERR_INVALID_ARGUMENT);
    pocketllm_sampler_free(s), pocketllm_sampler_free(d);
}

int main(void) {
    test_probs();
    test_spec_step();
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
