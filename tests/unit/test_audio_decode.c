/*
 * test_audio_decode.c -- audio in (src/audio/): bad inputs from memory each
 * get a status and a one-line message, never a crash (this runs under ASan
 * in CI too); good files written here by libsndfile decode to exactly
 * their samples at 16 kHz mono, and to the right length and pitch when
 * they need mixing and resampling.  In a build without the decoders
 * (PL_AUDIO_DECODE=OFF) the refusals that build makes are checked instead.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audio/audio_decode.h"
#include "pltest.h"
#include "pocketllm.h"

#ifdef PL_HAVE_AUDIO_DECODE
#include <sndfile.h>
#endif

static uint32_t rng_state = 12345u;
static uint32_t rnd(void) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return rng_state >> 8;
}

/* the decode must fail with a one-line message and an empty result */
static void expect_refused(const char *what, const void *data, size_t len, const pl_audio_limits *lim) {
    pl_audio_pcm pcm;
    pocketllm_status st = pl_audio_decode(data, len, 16000, lim, &pcm);
    const char *msg = pocketllm_last_error();
    CHECK_MSG(st != POCKETLLM_OK, "%s: accepted (%zu samples)", what, pcm.n);
    CHECK_MSG(msg && *msg && !strchr(msg, '\n'), "%s: no one-line message", what);
    CHECK_MSG(pcm.samples == NULL && pcm.n == 0, "%s: a result on failure", what);
    if (st == POCKETLLM_OK) pl_audio_pcm_free(&pcm);
    else fprintf(stderr, "  %s: %s\n", what, msg);
}

/* ---- hand-made headers ----------------------------------------------------- */

static size_t put32le(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
    return 4;
}
static size_t put16le(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    return 2;
}
static size_t put32be(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (24 - 8 * i));
    return 4;
}

/* a PCM WAV whose header says what it is told, followed by `data_len`
 * bytes of a rising ramp; returns the file's length */
static size_t make_wav(uint8_t *buf, uint32_t rate, uint32_t channels, uint32_t bits, uint32_t data_size,
                       size_t data_len) {
    size_t n = 0;
    memcpy(buf, "RIFF", 4), n += 4;
    n += put32le(buf + n, (uint32_t)(36 + data_len));
    memcpy(buf + n, "WAVEfmt ", 8), n += 8;
    n += put32le(buf + n, 16);
    n += put16le(buf + n, 1);
    n += put16le(buf + n, channels);
    n += put32le(buf + n, rate);
    n += put32le(buf + n, rate * channels * bits / 8);
    n += put16le(buf + n, channels * bits / 8);
    n += put16le(buf + n, bits);
    memcpy(buf + n, "data", 4), n += 4;
    n += put32le(buf + n, data_size);
    for (size_t i = 0; i < data_len; i++) buf[n++] = (uint8_t)(i * 7);
    return n;
}

static void test_bad_headers(void) {
    static uint8_t buf[1 << 16];
    size_t n = 0;
    expect_refused("empty", buf, 0, NULL);
    expect_refused("3 bytes", "RIF", 3, NULL);
    /* random garbage: several buffers, some large */
    for (int k = 0; k < 20; k++) {
        const size_t len = 16 + rnd() % (sizeof buf - 16);
        for (size_t i = 0; i < len; i++) buf[i] = (uint8_t)rnd();
        char what[64];
        snprintf(what, sizeof what, "garbage #%d (%zu bytes)", k, len);
        expect_refused(what, buf, len, NULL);
    }
    /* frame-shaped garbage: 40 MPEG-1 Layer III headers (128 kb/s, 44.1
     * kHz) each followed by random bytes, which libmpg123 decodes without
     * an error into noise far over full scale */
    n = 0;
    for (int f = 0; f < 40; f++) {
        memcpy(buf + n, "\xff\xfb\x90\x00", 4);
        n += 4;
        for (int i = 0; i < 413; i++) buf[n++] = (uint8_t)rnd();
    }
    expect_refused("MPEG frame headers around random bytes", buf, n, NULL);
    const char *text = "This is not audio at all, just some text in a file that came as an upload.\n";
    expect_refused("text", text, strlen(text), NULL);
    expect_refused("WAV 0 Hz", buf, make_wav(buf, 0, 1, 16, 2000, 2000), NULL);
    expect_refused("WAV 1 MHz", buf, make_wav(buf, 1000000, 1, 16, 2000, 2000), NULL);
    expect_refused("WAV 0 channels", buf, make_wav(buf, 16000, 0, 16, 2000, 2000), NULL);
    expect_refused("WAV 100 channels", buf, make_wav(buf, 16000, 100, 16, 2000, 2000), NULL);
    expect_refused("WAV 65535 channels", buf, make_wav(buf, 16000, 65535, 16, 2000, 2000), NULL);
    /* 2^31 frames of 8-bit mono claimed, no data (0x80000000 reads as a
     * streaming writer's placeholder: nothing is there, so no frames) */
    expect_refused("WAV 2^31 frames, no data", buf, make_wav(buf, 16000, 1, 8, 0x80000000u, 0), NULL);
    expect_refused("WAV data size 0", buf, make_wav(buf, 16000, 1, 16, 0, 0), NULL);
    /* a data chunk claimed longer than what follows: truncated */
    expect_refused("WAV claims 20000 bytes, holds 200", buf, make_wav(buf, 16000, 1, 16, 20000, 200), NULL);
    /* AU (Sun .snd): a 32-bit channel count, so 10^9 channels can be claimed */
    n = 0;
    memcpy(buf, ".snd", 4), n += 4;
    n += put32be(buf + n, 24);
    n += put32be(buf + n, 2000);
    n += put32be(buf + n, 3); /* 16-bit linear */
    n += put32be(buf + n, 16000);
    n += put32be(buf + n, 1000000000u);
    memset(buf + n, 0, 2000);
    expect_refused("AU 10^9 channels", buf, n + 2000, NULL);
    put32be(buf + 20, 1);
    put32be(buf + 16, 0);
    expect_refused("AU 0 Hz", buf, n + 2000, NULL);
}

#ifdef PL_HAVE_AUDIO_DECODE
/* ---- files written by libsndfile ------------------------------------------- */

static char tmp_path[64];

/* write frames x channels samples (float x, or 16-bit q when not NULL:
 * libsndfile scales floats by 32767 on the way to 16 bits but reads 16
 * bits back as q / 32768) as `format` to a temp file and read it back into
 * a malloc'd buffer */
static uint8_t *write_audio(int format, int rate, int channels, const float *x, const int16_t *q, size_t frames,
                            size_t *len) {
    strcpy(tmp_path, "/tmp/pl_test_audio_XXXXXX");
    int fd = mkstemp(tmp_path);
    if (fd < 0) return NULL;
    close(fd);
    SF_INFO info = {0};
    info.samplerate = rate;
    info.channels = channels;
    info.format = format;
    SNDFILE *sf = sf_open(tmp_path, SFM_WRITE, &info);
    if (!sf) {
        fprintf(stderr, "libsndfile cannot write: %s\n", sf_strerror(NULL));
        return NULL;
    }
    if (q) sf_writef_short(sf, q, (sf_count_t)frames);
    else sf_writef_float(sf, x, (sf_count_t)frames);
    sf_close(sf);
    FILE *f = fopen(tmp_path, "rb");
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *d = malloc(*len);
    if (fread(d, 1, *len, f) != *len) {
        free(d);
        d = NULL;
    }
    fclose(f);
    return d;
}

/* sign changes of x over [from, to) */
static size_t zero_crossings(const float *x, size_t from, size_t to) {
    size_t c = 0;
    for (size_t i = from + 1; i < to; i++)
        if ((x[i - 1] < 0) != (x[i] < 0)) c++;
    return c;
}

static void test_exact_16k_mono(void) {
    /* 16-bit samples: libsndfile's float read is x / 32768, exactly */
    enum { N = 40000 };
    static float x[N];
    static int16_t q[N];
    for (size_t i = 0; i < N; i++) {
        q[i] = (int16_t)(rnd() & 0xFFFF);
        x[i] = q[i] / 32768.0f;
    }
    const int formats[] = {SF_FORMAT_WAV | SF_FORMAT_PCM_16, SF_FORMAT_FLAC | SF_FORMAT_PCM_16};
    for (int k = 0; k < 2; k++) {
        size_t len = 0;
        uint8_t *d = write_audio(formats[k], 16000, 1, x, q, N, &len);
        CHECK(d != NULL);
        if (!d) continue;
        pl_audio_pcm pcm;
        pocketllm_status st = pl_audio_decode(d, len, 16000, NULL, &pcm);
        CHECK_MSG(st == POCKETLLM_OK, "%s", pocketllm_last_error());
        if (st == POCKETLLM_OK) {
            CHECK_EQ_U64(pcm.n, N);
            CHECK_EQ_U64(pcm.rate, 16000);
            size_t bad = 0;
            for (size_t i = 0; i < N && i < pcm.n; i++) bad += pcm.samples[i] != q[i] / 32768.0f;
            CHECK_MSG(bad == 0, "%zu samples differ (format %d)", bad, k);
            pl_audio_pcm_free(&pcm);
        }
        /* the same through the path */
        st = pl_audio_load(tmp_path, 16000, NULL, &pcm);
        CHECK_MSG(st == POCKETLLM_OK && pcm.n == N && !memcmp(pcm.samples, x, sizeof x), "load: %s",
                  pocketllm_last_error());
        pl_audio_pcm_free(&pcm);
        /* the public handle */
        pocketllm_audio *a = NULL;
        CHECK(pocketllm_audio_decode(d, len, &a) == POCKETLLM_OK);
        CHECK_EQ_U64(pocketllm_audio_n_samples(a), N);
        CHECK(fabs(pocketllm_audio_seconds(a) - N / 16000.0) < 1e-9);
        pocketllm_audio_free(a);

        /* cut: a WAV's data chunk then says more than is there; a FLAC's
         * decoder loses sync or ends early */
        const size_t cut = len * 2 / 3;
        expect_refused(k ? "truncated FLAC" : "truncated WAV", d, cut, NULL);
        /* the header's length over the limit: refused before decoding */
        pl_audio_limits lim = {1.0};
        expect_refused("over a 1 s limit", d, len, &lim);
        free(d);
        unlink(tmp_path);
    }
    /* a missing file */
    pl_audio_pcm pcm;
    CHECK(pl_audio_load("/nonexistent/x.wav", 16000, NULL, &pcm) == POCKETLLM_ERR_IO);
    CHECK(strstr(pocketllm_last_error(), "/nonexistent/x.wav") != NULL);
}

static void test_streamed_wav(void) {
    /* a streaming writer's placeholder size (0xFFFFFFFF): the data there is taken */
    static uint8_t buf[4096];
    const size_t len = make_wav(buf, 16000, 1, 16, 0xFFFFFFFFu, 2000);
    pl_audio_pcm pcm;
    pocketllm_status st = pl_audio_decode(buf, len, 16000, NULL, &pcm);
    CHECK_MSG(st == POCKETLLM_OK && pcm.n == 1000, "placeholder-size WAV: %s", pocketllm_last_error());
    pl_audio_pcm_free(&pcm);
}

static void test_not_finite(void) {
    float x[1000];
    for (int i = 0; i < 1000; i++) x[i] = 0.1f * (float)sin(i * 0.1);
    x[500] = NAN;
    size_t len = 0;
    uint8_t *d = write_audio(SF_FORMAT_WAV | SF_FORMAT_FLOAT, 16000, 1, x, NULL, 1000, &len);
    CHECK(d != NULL);
    if (d) expect_refused("float WAV with a NaN", d, len, NULL);
    free(d);
    unlink(tmp_path);
}

static void test_stereo_44k(void) {
    /* 2 s of a 440 Hz sine at 44.1 kHz, stereo (the right channel at half
     * amplitude, so the mean is 0.75 of the left) */
    enum { R = 44100, N = 2 * R };
    float *x = malloc(sizeof(float) * N * 2);
    for (size_t i = 0; i < N; i++) {
        const float v = 0.5f * (float)sin(2 * M_PI * 440.0 * i / R);
        x[2 * i] = v;
        x[2 * i + 1] = 0.5f * v;
    }
    size_t len = 0;
    uint8_t *d = write_audio(SF_FORMAT_WAV | SF_FORMAT_PCM_16, R, 2, x, NULL, N, &len);
    CHECK(d != NULL);
    pl_audio_pcm pcm;
    for (int via = 0; via < 2 && d; via++) {
        pocketllm_status st = via ? pl_audio_from_pcm(x, N, 2, R, 16000, NULL, &pcm)
                                  : pl_audio_decode(d, len, 16000, NULL, &pcm);
        CHECK_MSG(st == POCKETLLM_OK, "%s", pocketllm_last_error());
        if (st) continue;
        const double want = 2.0 * 16000;
        CHECK_MSG(fabs((double)pcm.n - want) <= 1, "%zu samples, want %.0f +-1", pcm.n, want);
        /* the pitch: zero crossings over the middle 1.5 s */
        const size_t from = 4000, to = 28000;
        const double f = zero_crossings(pcm.samples, from, to) / 2.0 / ((to - from) / 16000.0);
        CHECK_MSG(fabs(f - 440) / 440 < 0.01, "frequency %.2f Hz, want 440", f);
        /* the amplitude: the mean of the channels, 0.375 */
        float peak = 0;
        for (size_t i = from; i < to; i++) peak = fmaxf(peak, fabsf(pcm.samples[i]));
        CHECK_MSG(fabsf(peak - 0.375f) < 0.005f, "peak %.4f, want 0.375", peak);
        fprintf(stderr, "  stereo 44.1 kHz (%s): %zu samples, %.2f Hz, peak %.4f\n", via ? "pcm" : "wav", pcm.n, f,
                peak);
        pl_audio_pcm_free(&pcm);
    }
    free(d);
    unlink(tmp_path);
    free(x);
}

static void test_from_pcm(void) {
    /* mixing alone (no resampler at the same rate): the mean of the channels */
    enum { N = 3000 };
    static float x[N * 3];
    for (size_t i = 0; i < N * 3; i++) x[i] = (float)(rnd() % 20001) / 10000.0f - 1.0f;
    pl_audio_pcm pcm;
    CHECK(pl_audio_from_pcm(x, N, 3, 16000, 16000, NULL, &pcm) == POCKETLLM_OK);
    CHECK_EQ_U64(pcm.n, N);
    size_t bad = 0;
    for (size_t i = 0; i < N && i < pcm.n; i++)
        bad += pcm.samples[i] != (float)(((double)x[3 * i] + x[3 * i + 1] + x[3 * i + 2]) / 3);
    CHECK_MSG(bad == 0, "%zu mixed samples differ", bad);
    pl_audio_pcm_free(&pcm);
    /* 48 kHz -> 16 kHz: a third of the length */
    CHECK(pl_audio_from_pcm(x, N, 1, 48000, 16000, NULL, &pcm) == POCKETLLM_OK);
    CHECK_MSG(pcm.n + 1 >= N * 3 / 9 && pcm.n <= N * 3 / 9 + 1, "%zu samples from 9000 at 48 kHz", pcm.n);
    pl_audio_pcm_free(&pcm);
    /* refusals */
    pl_audio_limits lim = {0.1};
    CHECK(pl_audio_from_pcm(x, N, 1, 16000, 16000, &lim, &pcm) != POCKETLLM_OK);
    CHECK(pl_audio_from_pcm(x, 0, 1, 16000, 16000, NULL, &pcm) != POCKETLLM_OK);
    CHECK(pl_audio_from_pcm(x, N, 0, 16000, 16000, NULL, &pcm) != POCKETLLM_OK);
    CHECK(pl_audio_from_pcm(x, N, 65, 16000, 16000, NULL, &pcm) != POCKETLLM_OK);
    CHECK(pl_audio_from_pcm(x, N, 1, 0, 16000, NULL, &pcm) != POCKETLLM_OK);
    CHECK(pl_audio_from_pcm(x, N, 1, 800000, 16000, NULL, &pcm) != POCKETLLM_OK);
    CHECK(pl_audio_from_pcm(NULL, N, 1, 16000, 16000, NULL, &pcm) != POCKETLLM_OK);
    x[7] = 1e38f; /* (finite, but it would overflow the resampler into Inf/NaN) */
    CHECK(pl_audio_from_pcm(x, N, 1, 48000, 16000, NULL, &pcm) != POCKETLLM_OK);
    x[7] = -40000.0f; /* (a float file in 16-bit scale passes) */
    CHECK(pl_audio_from_pcm(x, N, 1, 48000, 16000, NULL, &pcm) == POCKETLLM_OK);
    pl_audio_pcm_free(&pcm);
    x[7] = INFINITY;
    CHECK(pl_audio_from_pcm(x, N, 1, 16000, 16000, NULL, &pcm) != POCKETLLM_OK);
    CHECK(pcm.samples == NULL && pcm.n == 0);
    pocketllm_audio *a = (pocketllm_audio *)(uintptr_t)1; /* (set to NULL on failure) */
    CHECK(pocketllm_audio_from_pcm(x, N, 1, 16000, &a) != POCKETLLM_OK && a == NULL);
}
#else
static void test_no_decoders(void) {
    static const float x[480] = {0};
    pl_audio_pcm pcm;
    CHECK(pl_audio_decode("RIFF", 4, 16000, NULL, &pcm) == POCKETLLM_ERR_UNSUPPORTED);
    CHECK(strstr(pocketllm_last_error(), "PL_AUDIO_DECODE=OFF") != NULL);
    CHECK(pl_audio_load("/tmp/x.wav", 16000, NULL, &pcm) == POCKETLLM_ERR_UNSUPPORTED);
    CHECK(strstr(pocketllm_last_error(), "PL_AUDIO_DECODE=OFF") != NULL);
    CHECK(pl_audio_from_pcm(x, 240, 2, 16000, 16000, NULL, &pcm) == POCKETLLM_OK && pcm.n == 240);
    pl_audio_pcm_free(&pcm);
    CHECK(pl_audio_from_pcm(x, 480, 1, 48000, 16000, NULL, &pcm) == POCKETLLM_ERR_UNSUPPORTED);
    CHECK(strstr(pocketllm_last_error(), "PL_AUDIO_DECODE=OFF") != NULL);
}
#endif

int main(void) {
    test_bad_headers(); /* (without the decoders: each refused saying so) */
#ifdef PL_HAVE_AUDIO_DECODE
    test_exact_16k_mono();
    test_streamed_wav();
    test_not_finite();
    test_stereo_44k();
    test_from_pcm();
#else
    test_no_decoders();
#endif
    TEST_DONE();
}
