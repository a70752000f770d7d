/*
 * test_audio_split.c -- pl_audio_split (src/audio/audio_split.c) on
 * synthetic signals whose quiet places are known: tone bursts with silent
 * gaps (every cut lands in a gap, in the search span before its limit);
 * pieces never longer than the limit, at the default and at other limits;
 * audio of exactly the limit (and shorter) gets no cut; a signal with no
 * quiet point (a steady tone, white noise) still cuts inside the span; a
 * tie (digital silence everywhere) goes to the latest frame; the
 * refusals.
 */
#include <math.h>
#include <stdlib.h>

#include "audio/audio_split.h"
#include "base/rng.h"
#include "pltest.h"

#define RATE 16000u

/* a 440 Hz tone at amplitude 0.5 over [from, to) seconds of x (n samples) */
static void tone(float *x, size_t n, double from, double to) {
    for (size_t i = (size_t)(from * RATE); i < (size_t)(to * RATE) && i < n; i++)
        x[i] = 0.5f * (float)sin(2 * M_PI * 440.0 * (double)i / RATE);
}

/* the pieces the cuts make: each at most max_len samples, the cuts rising;
 * each cut within the search span [limit - search, limit] of its piece */
static void check_pieces(const size_t *cuts, size_t n_cuts, size_t n, size_t max_len, size_t search) {
    size_t start = 0;
    for (size_t i = 0; i <= n_cuts; i++) {
        const size_t end = i < n_cuts ? cuts[i] : n;
        CHECK_MSG(end > start && end - start <= max_len, "piece %zu is [%zu, %zu), limit %zu", i, start, end, max_len);
        if (i < n_cuts)
            CHECK_MSG(end >= start + max_len - search, "cut %zu at %zu is before the search span of [%zu, ...)", i,
                      end, start);
        start = end;
    }
}

/* Bursts of tone with gaps of silence: speech 0-27.0 s, gap 27.0-27.6,
 * speech to 55.2, gap 55.2-55.5, speech to 80.0, gap 80.0-81.0, speech to
 * 100 s.  The cuts must land in the first gap (the only quiet place in
 * 25-30 s), then in the second (within 5 s before 27.x + 30), and so on. */
static void test_gaps(void) {
    const size_t n = 100 * RATE;
    float *x = calloc(n, sizeof *x);
    CHECK(x != NULL);
    if (!x) return;
    tone(x, n, 0.0, 27.0);
    tone(x, n, 27.6, 55.2);
    tone(x, n, 55.5, 80.0);
    tone(x, n, 81.0, 100.0);
    size_t *cuts = NULL, n_cuts = 0;
    CHECK(pl_audio_split(x, n, RATE, 0, 0, &cuts, &n_cuts) == POCKETLLM_OK);
    CHECK_EQ_U64(n_cuts, 3);
    const double gaps[3][2] = {{27.0, 27.6}, {55.2, 55.5}, {80.0, 81.0}};
    for (size_t i = 0; i < n_cuts && i < 3; i++) {
        const double t = (double)cuts[i] / RATE;
        CHECK_MSG(t >= gaps[i][0] && t <= gaps[i][1], "cut %zu at %.3f s is not in the gap %.1f-%.1f s", i, t,
                  gaps[i][0], gaps[i][1]);
        /* and the samples around it are silence */
        CHECK_MSG(x[cuts[i]] == 0.0f && x[cuts[i] - 1] == 0.0f, "cut %zu at %zu is not in silence", i, cuts[i]);
    }
    check_pieces(cuts, n_cuts, n, 30 * RATE, 5 * RATE);
    free(cuts);

    /* shorter pieces: 10 s with a 3 s search span -- still never over 10 s */
    CHECK(pl_audio_split(x, n, RATE, 10, 3, &cuts, &n_cuts) == POCKETLLM_OK);
    CHECK(n_cuts >= 9);
    check_pieces(cuts, n_cuts, n, 10 * RATE, 3 * RATE);
    free(cuts);
    free(x);
}

/* Exactly 30 s (and less) is one piece; one sample more is two. */
static void test_fits(void) {
    const size_t n = 30 * RATE + 1;
    float *x = calloc(n, sizeof *x);
    CHECK(x != NULL);
    if (!x) return;
    tone(x, n, 0, 31);
    size_t *cuts = (size_t *)1, n_cuts = 99;
    CHECK(pl_audio_split(x, 30 * RATE, RATE, 0, 0, &cuts, &n_cuts) == POCKETLLM_OK);
    CHECK_EQ_U64(n_cuts, 0);
    CHECK(cuts == NULL);
    CHECK(pl_audio_split(x, 30 * RATE, RATE, 30.0, 5.0, &cuts, &n_cuts) == POCKETLLM_OK);
    CHECK_EQ_U64(n_cuts, 0);
    CHECK(pl_audio_split(x, 1, RATE, 0, 0, &cuts, &n_cuts) == POCKETLLM_OK);
    CHECK_EQ_U64(n_cuts, 0);
    CHECK(pl_audio_split(NULL, 0, RATE, 0, 0, &cuts, &n_cuts) == POCKETLLM_OK);
    CHECK_EQ_U64(n_cuts, 0);
    CHECK(pl_audio_split(x, n, RATE, 0, 0, &cuts, &n_cuts) == POCKETLLM_OK);
    CHECK_EQ_U64(n_cuts, 1);
    check_pieces(cuts, n_cuts, n, 30 * RATE, 5 * RATE);
    free(cuts);
    free(x);
}

/* No quiet point: a steady tone and white noise of 95 s.  Cuts still come
 * in the search span, never at the limit by default. */
static void test_no_quiet(void) {
    const size_t n = 95 * RATE;
    float *x = calloc(n, sizeof *x);
    CHECK(x != NULL);
    if (!x) return;
    tone(x, n, 0, 95);
    size_t *cuts = NULL, n_cuts = 0;
    CHECK(pl_audio_split(x, n, RATE, 0, 0, &cuts, &n_cuts) == POCKETLLM_OK);
    CHECK_EQ_U64(n_cuts, 3);
    check_pieces(cuts, n_cuts, n, 30 * RATE, 5 * RATE);
    free(cuts);

    pl_rng rng;
    pl_rng_seed(&rng, 16);
    for (size_t i = 0; i < n; i++) x[i] = pl_rng_uniform(&rng) - 0.5f;
    CHECK(pl_audio_split(x, n, RATE, 0, 0, &cuts, &n_cuts) == POCKETLLM_OK);
    CHECK_EQ_U64(n_cuts, 3);
    check_pieces(cuts, n_cuts, n, 30 * RATE, 5 * RATE);
    free(cuts);

    /* all silence: every frame ties, the latest wins -- the middle of the
     * last 100 ms before each limit */
    for (size_t i = 0; i < n; i++) x[i] = 0;
    CHECK(pl_audio_split(x, n, RATE, 0, 0, &cuts, &n_cuts) == POCKETLLM_OK);
    CHECK_EQ_U64(n_cuts, 3);
    size_t start = 0;
    for (size_t i = 0; i < n_cuts; i++) {
        CHECK_EQ_U64(cuts[i], start + 30 * RATE - RATE / 20);
        start = cuts[i];
    }
    free(cuts);

    /* a quiet frame late in the span beats louder ones after it only if
     * quieter: a dip of amplitude 0.1 at 28.0-28.3 s in a tone of 0.5 */
    tone(x, n, 0, 95);
    for (size_t i = 28 * RATE; i < (size_t)(28.3 * RATE); i++) x[i] *= 0.2f;
    CHECK(pl_audio_split(x, n, RATE, 0, 0, &cuts, &n_cuts) == POCKETLLM_OK);
    CHECK(n_cuts >= 1);
    if (n_cuts) {
        const double t = (double)cuts[0] / RATE;
        CHECK_MSG(t >= 28.0 && t <= 28.3, "cut at %.3f s is not in the dip 28.0-28.3 s", t);
    }
    free(cuts);
    free(x);
}

static void test_refusals(void) {
    float x[16] = {0};
    size_t *cuts = NULL, n_cuts = 0;
    CHECK(pl_audio_split(x, 16, RATE, 0, 0, NULL, &n_cuts) == POCKETLLM_ERR_INVALID_ARGUMENT);
    CHECK(pl_audio_split(x, 16, RATE, 0, 0, &cuts, NULL) == POCKETLLM_ERR_INVALID_ARGUMENT);
    CHECK(pl_audio_split(x, 16, 0, 0, 0, &cuts, &n_cuts) == POCKETLLM_ERR_INVALID_ARGUMENT);
    CHECK(pl_audio_split(x, 16, RATE, -1, 0, &cuts, &n_cuts) == POCKETLLM_ERR_INVALID_ARGUMENT);
    CHECK(pl_audio_split(x, 16, RATE, 0, -2, &cuts, &n_cuts) == POCKETLLM_ERR_INVALID_ARGUMENT);
    CHECK(pl_audio_split(x, 16, RATE, NAN, 0, &cuts, &n_cuts) == POCKETLLM_ERR_INVALID_ARGUMENT);
    CHECK(pl_audio_split(x, 16, RATE, INFINITY, 0, &cuts, &n_cuts) == POCKETLLM_ERR_INVALID_ARGUMENT);
    CHECK(pl_audio_split(NULL, 16, RATE, 0, 0, &cuts, &n_cuts) == POCKETLLM_ERR_INVALID_ARGUMENT);
    CHECK(pocketllm_last_error()[0] != '\0');
    CHECK(cuts == NULL && n_cuts == 0);
}

int main(void) {
    test_gaps();
    test_fits();
    test_no_quiet();
    test_refusals();
    TEST_DONE();
}
