/*
 * test_audio_mel.c -- what the Qwen3-ASR front end (src/audio/audio_mel.c)
 * must do without a reference (the comparison with libmtmd, value for
 * value, is oracle/test_audio_mel.sh): the window plan
 * (pl_mel_qwen3a_windows) is what the front end makes, for lengths around
 * every boundary (a window of 800 frames, a chunk of 100, one hop); the
 * result is bit-identical for 1, 2, 3 and 8 threads; padding frames are
 * 0 and audio frames finite and within the normalisation's range (the
 * peak at (max + 4) / 4, nothing below it minus 2); a pure tone puts its
 * energy in the mel bin of its frequency; the refusals.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audio/audio_mel.h"
#include "pltest.h"

/* a 440 Hz tone plus a little of 3 kHz, n samples at 16 kHz */
static float *make_signal(size_t n) {
    float *x = malloc(n * sizeof *x + 1);
    if (!x) return NULL;
    for (size_t i = 0; i < n; i++)
        x[i] = 0.4f * (float)sin(2 * M_PI * 440.0 * (double)i / 16000) +
               0.05f * (float)sin(2 * M_PI * 3000.0 * (double)i / 16000);
    return x;
}

static void test_plan(void) {
    const pl_mel_params p = pl_mel_params_qwen3a(128);
    CHECK(p.sample_rate == 16000 && p.n_fft == 400 && p.window == 400 && p.hop == 160 && p.n_mel == 128);
    CHECK_EQ_U64(pl_mel_qwen3a_windows(0, NULL), 0);
    /* frames = n / 160 + 1: around one chunk, one window, two windows */
    const size_t ns[] = {1, 159, 160, 161, 15839, 15840, 15999, 16000, 127839, 127840, 128000, 128160, 16000 * 31};
    const size_t big = 16000 * 31;
    float *x = make_signal(big);
    CHECK(x != NULL);
    if (!x) return;
    for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
        const size_t n = ns[t];
        int64_t lens[64];
        const size_t nw = pl_mel_qwen3a_windows(n, lens);
        const int64_t frames = (int64_t)(n / 160) + 1;
        CHECK_EQ_U64(nw, (size_t)((frames + 799) / 800));
        pl_mel *w = NULL;
        size_t got = 0;
        CHECK(pl_mel_qwen3a(&p, x, n, 2, &w, &got) == POCKETLLM_OK);
        CHECK_EQ_U64(got, nw);
        int64_t org = 0;
        for (size_t i = 0; i < got && i < nw; i++) {
            CHECK_EQ_U64(w[i].n_mel, 128);
            CHECK_EQ_U64(w[i].n_len, lens[i]);
            CHECK(w[i].n_len % 100 == 0 && w[i].n_len >= w[i].n_len_org && w[i].n_len - w[i].n_len_org < 100);
            CHECK(w[i].n_len_org == (i + 1 < nw ? 800 : frames - 800 * (int64_t)i));
            org += w[i].n_len_org;
        }
        CHECK_EQ_U64(org, frames);
        pl_mel_free(w, got);
    }
    free(x);
}

static void test_threads_and_range(void) {
    const size_t n = 16000 * 9 + 1234; /* two windows, the second part-padded */
    float *x = make_signal(n);
    CHECK(x != NULL);
    if (!x) return;
    const pl_mel_params p = pl_mel_params_qwen3a(128);
    pl_mel *ref = NULL;
    size_t nref = 0;
    CHECK(pl_mel_qwen3a(&p, x, n, 1, &ref, &nref) == POCKETLLM_OK);
    CHECK_EQ_U64(nref, 2);
    const int threads[] = {2, 3, 8, 0};
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        pl_mel *w = NULL;
        size_t nw = 0;
        CHECK(pl_mel_qwen3a(&p, x, n, threads[t], &w, &nw) == POCKETLLM_OK);
        CHECK_EQ_U64(nw, nref);
        for (size_t i = 0; i < nw && i < nref; i++)
            CHECK_MSG(!memcmp(w[i].data, ref[i].data, sizeof(float) * 128 * (size_t)ref[i].n_len),
                      "window %zu differs with %d threads", i, threads[t]);
        pl_mel_free(w, nw);
    }
    /* the normalisation: the peak is (max + 4) / 4, nothing below (max - 8 + 4) / 4,
     * padding is 0 */
    float hi = -1e30f, lo = 1e30f;
    int pad_ok = 1, finite = 1;
    for (size_t i = 0; i < nref; i++)
        for (int64_t m = 0; m < 128; m++)
            for (int64_t c = 0; c < ref[i].n_len; c++) {
                const float v = ref[i].data[m * ref[i].n_len + c];
                if (c >= ref[i].n_len_org) {
                    pad_ok &= v == 0.0f;
                    continue;
                }
                finite &= isfinite(v) != 0;
                if (v > hi) hi = v;
                if (v < lo) lo = v;
            }
    CHECK(pad_ok);
    CHECK(finite);
    CHECK_MSG(hi - lo <= 2.0f + 1e-6f && hi - lo > 1.0f, "range %g .. %g", lo, hi);

    /* the tone: at a frame in the middle, the loudest bin is 440 Hz's.
     * Slaney mel of 440 Hz = 6.6; bins are 0 .. 128 over 0 .. 8 kHz's
     * ~45.2 mel, so about bin 6.6 / (45.25 / 129) - 1 ~ 17-18. */
    int best = 0;
    const pl_mel *w0 = &ref[0];
    for (int m = 1; m < 128; m++)
        if (w0->data[m * w0->n_len + 400] > w0->data[best * w0->n_len + 400]) best = m;
    CHECK_MSG(best >= 16 && best <= 19, "the 440 Hz tone peaks in bin %d", best);
    pl_mel_free(ref, nref);
    free(x);
}

/* a single sample and fewer samples than half a frame: accepted, as libmtmd
 * accepts them (the reflection reads zeros past the clip) */
static void test_short_and_silent(void) {
    const pl_mel_params p = pl_mel_params_qwen3a(128);
    float one = 0.25f;
    pl_mel *w = NULL;
    size_t nw = 0;
    CHECK(pl_mel_qwen3a(&p, &one, 1, 1, &w, &nw) == POCKETLLM_OK);
    CHECK_EQ_U64(nw, 1);
    if (nw) CHECK(w[0].n_len == 100 && w[0].n_len_org == 1);
    pl_mel_free(w, nw);
    /* silence: every value is log10(2^-24) normalised to (v + 4) / 4 */
    float *z = calloc(16000, sizeof *z);
    CHECK(z != NULL);
    if (!z) return;
    CHECK(pl_mel_qwen3a(&p, z, 16000, 2, &w, &nw) == POCKETLLM_OK);
    CHECK_EQ_U64(nw, 1);
    if (nw) {
        const float logged = (float)log10((double)5.960464477539063e-08f); /* stored as float first */
        const float want = (float)(((double)logged + 4.0) / 4.0);
        CHECK(w[0].n_len_org == 101 && w[0].n_len == 200);
        int all = 1;
        for (int64_t m = 0; m < 128; m++)
            for (int64_t c = 0; c < 101; c++) all &= w[0].data[m * 200 + c] == want;
        CHECK(all);
    }
    pl_mel_free(w, nw);
    free(z);
}

static void test_refusals(void) {
    const pl_mel_params p = pl_mel_params_qwen3a(128);
    float x[1000] = {0};
    pl_mel *w = (pl_mel *)1;
    size_t nw = 7;
    CHECK(pl_mel_qwen3a(&p, x, 0, 1, &w, &nw) == POCKETLLM_ERR_INVALID_ARGUMENT);
    CHECK(w == NULL && nw == 0);
    CHECK(strstr(pocketllm_last_error(), "no audio") != NULL);
    CHECK(pl_mel_qwen3a(&p, NULL, 10, 1, &w, &nw) == POCKETLLM_ERR_INVALID_ARGUMENT);
    CHECK(pl_mel_qwen3a(NULL, x, 10, 1, &w, &nw) == POCKETLLM_ERR_INVALID_ARGUMENT);
    CHECK(pl_mel_qwen3a(&p, x, 10, 1, NULL, &nw) == POCKETLLM_ERR_INVALID_ARGUMENT);
    pl_mel_params bad = p;
    bad.n_fft = 401;
    CHECK(pl_mel_qwen3a(&bad, x, 1000, 1, &w, &nw) == POCKETLLM_ERR_INVALID_ARGUMENT);
    bad = p;
    bad.window = 401;
    CHECK(pl_mel_qwen3a(&bad, x, 1000, 1, &w, &nw) == POCKETLLM_ERR_INVALID_ARGUMENT);
    bad = p;
    bad.hop = 0;
    CHECK(pl_mel_qwen3a(&bad, x, 1000, 1, &w, &nw) == POCKETLLM_ERR_INVALID_ARGUMENT);
    bad = p;
    bad.n_mel = 0;
    CHECK(pl_mel_qwen3a(&bad, x, 1000, 1, &w, &nw) == POCKETLLM_ERR_INVALID_ARGUMENT);
    CHECK(w == NULL && nw == 0);
    pl_mel_free(NULL, 0);
}

int main(void) {
    test_plan();
    test_threads_and_range();
    test_short_and_silent();
    test_refusals();
    TEST_DONE();
}
