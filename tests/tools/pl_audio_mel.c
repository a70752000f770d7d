/*
 * pl_audio_mel.c -- PocketLLM's Qwen3-ASR log-mel front end
 * (src/audio/audio_mel.c) on raw PCM, for the comparison with libmtmd
 * (tests/oracle/test_audio_mel.sh):
 *
 *   pl_audio_mel PCM.f32 --n-mel M --out FILE [--threads N]
 *                [--ref REF.f32 --max-diff D]
 *
 * PCM.f32: mono 16 kHz samples, raw f32 (what `pl_mtmd audio-mel
 * --out-pcm` writes, so both sides see the same samples).  Writes every
 * window's mel (raw f32, n_mel rows of n_len, window after window) to FILE
 * and prints what `pl_mtmd audio-mel` prints: "samples S", "windows N",
 * "n_mel M", one "len L org O" line per window; then "ms T" (the front
 * end's time).  With --ref (libmtmd's FILE for the same PCM, same window
 * lengths assumed: the caller compares the len lines) it prints
 * "max_abs X" and "differing K" (values not bit-identical) and exits 1
 * when X > D.  Exit 2 on bad input or a refusal (its message on stderr).
 *
 *   pl_audio_mel selftest
 *       the memory bound, which needs no reference: the mel of a 20-minute
 *       clip (noise) grows the peak resident size by no more than the
 *       windows themselves and a little (the samples are never copied:
 *       the padded edges are read by reflection).  Exit 0 when it holds.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "audio/audio_mel.h"
#include "pocketllm.h"

#define TOOL_NAME "pl_audio_mel"
#include "tool_io.h"

static long peak_rss_kib(void) {
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) ? -1 : ru.ru_maxrss;
}

static int selftest(void) {
    const size_t n = (size_t)16000 * 60 * 20;
    float *x = malloc(n * sizeof *x);
    if (!x) die("%s", "out of memory");
    uint64_t r = 88172645463325252ull; /* xorshift64: noise, every frame different */
    for (size_t i = 0; i < n; i++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        x[i] = (float)((double)(r >> 40) / 16777216.0 - 0.5);
    }
    const pl_mel_params p = pl_mel_params_qwen3a(128);
    const long before = peak_rss_kib();
    pl_mel *w = NULL;
    size_t nw = 0;
    if (pl_mel_qwen3a(&p, x, n, 0, &w, &nw) != POCKETLLM_OK) die("%s", pocketllm_last_error());
    const long after = peak_rss_kib();
    size_t mel = 0;
    for (size_t i = 0; i < nw; i++) mel += (size_t)w[i].n_mel * (size_t)w[i].n_len * sizeof(float);
    /* the windows, plus 16 MiB for the threads' stacks, the tables and the
     * allocator; a copy of the samples would be 75 MiB more */
    const long mel_kib = (long)(mel / 1024), slack = 16 * 1024;
    const int good = before > 0 && after - before <= mel_kib + slack && nw == 151;
    printf("%s: %zu samples (20 min) -> %zu windows; peak memory grew %ld KiB (windows %ld KiB, samples %zu KiB)\n",
           good ? "ok" : "FAIL", n, nw, after - before, mel_kib, n * sizeof(float) / 1024);
    pl_mel_free(w, nw);
    free(x);
    return good ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc == 2 && !strcmp(argv[1], "selftest")) return selftest();
    if (argc < 2) die("%s", "usage: pl_audio_mel PCM.f32 --n-mel M --out FILE [--threads N] [--ref REF.f32 --max-diff D]");
    const char *out = NULL, *ref = NULL;
    long n_mel = 0, threads = 0;
    double max_diff = 1e-5;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--n-mel") && i + 1 < argc) n_mel = parse_l(argv[++i], 1, 4096);
        else if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = parse_l(argv[++i], 0, 1024);
        else if (!strcmp(argv[i], "--ref") && i + 1 < argc) ref = argv[++i];
        else if (!strcmp(argv[i], "--max-diff") && i + 1 < argc) max_diff = atof(argv[++i]);
        else die("unknown argument '%s'", argv[i]);
    }
    if (!n_mel || !out) die("%s", "--n-mel and --out are needed");
    size_t bytes;
    float *pcm = slurp(argv[1], &bytes);
    if (bytes % sizeof(float)) die("%s is not raw f32", argv[1]);
    const size_t n = bytes / sizeof(float);

    const pl_mel_params p = pl_mel_params_qwen3a((uint32_t)n_mel);
    pl_mel *w = NULL;
    size_t nw = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (pl_mel_qwen3a(&p, pcm, n, (int)threads, &w, &nw) != POCKETLLM_OK) die("%s", pocketllm_last_error());
    clock_gettime(CLOCK_MONOTONIC, &t1);

    /* the window plan without computing must agree with what was computed */
    int64_t *lens = calloc(nw + 1, sizeof *lens);
    if (!lens || pl_mel_qwen3a_windows(n, lens) != nw) die("%s", "pl_mel_qwen3a_windows disagrees on the count");
    for (size_t i = 0; i < nw; i++)
        if (lens[i] != w[i].n_len) die("%s", "pl_mel_qwen3a_windows disagrees on a length");
    free(lens);

    FILE *f = fopen(out, "wb");
    if (!f) die("cannot create %s", out);
    for (size_t i = 0; i < nw; i++) {
        const size_t k = (size_t)w[i].n_mel * (size_t)w[i].n_len;
        if (fwrite(w[i].data, sizeof(float), k, f) != k) die("cannot write %s", out);
    }
    if (fclose(f)) die("cannot write %s", out);
    printf("samples %zu\nwindows %zu\nn_mel %lld\n", n, nw, nw ? (long long)w[0].n_mel : 0LL);
    for (size_t i = 0; i < nw; i++) printf("len %lld org %lld\n", (long long)w[i].n_len, (long long)w[i].n_len_org);
    printf("ms %.1f\n", (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);

    int rc = 0;
    if (ref) {
        size_t rbytes;
        float *r = slurp(ref, &rbytes);
        size_t total = 0;
        for (size_t i = 0; i < nw; i++) total += (size_t)w[i].n_mel * (size_t)w[i].n_len;
        if (rbytes != total * sizeof(float)) {
            fprintf(stderr, TOOL_NAME ": %s has %zu floats, ours %zu\n", ref, rbytes / sizeof(float), total);
            return 1;
        }
        double max_abs = 0;
        size_t differing = 0, at = 0, nans = 0;
        for (size_t i = 0; i < nw; i++) {
            const size_t k = (size_t)w[i].n_mel * (size_t)w[i].n_len;
            for (size_t j = 0; j < k; j++, at++) {
                const double d = fabs((double)w[i].data[j] - (double)r[at]);
                if (memcmp(&w[i].data[j], &r[at], sizeof(float))) differing++;
                if (isnan(d)) nans++;
                else if (d > max_abs) max_abs = d;
            }
        }
        printf("max_abs %.3g\ndiffering %zu of %zu\nnan %zu\n", max_abs, differing, total, nans);
        if (!(max_abs <= max_diff) || nans) rc = 1;
        free(r);
    }
    pl_mel_free(w, nw);
    free(pcm);
    return rc;
}
