/*
 * pl_audio_decode.c -- PocketLLM's audio decoding (src/audio/) for shell
 * tests:
 *
 *   pl_audio_decode FILE [--rate R] [--memory] [--out RAW] [--ref RAW]
 *
 * decodes FILE to mono at R Hz (default 16000) with pl_audio_load (with
 * --memory: read whole, then pl_audio_decode, the server's path), prints
 * "samples N", "rate R" and "seconds S", and with --out writes the samples
 * as raw native f32.  --ref compares them with another decode (raw f32)
 * over the common length and prints "ref_samples M", "max_abs_diff D",
 * "rms_diff E" and "corr C" (Pearson's correlation).  Exit 0 on success,
 * 1 when the audio is refused (the one-line message on stderr), 2 on bad
 * usage or a file that cannot be read or written.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOL_NAME "pl_audio_decode"
#include "audio/audio_decode.h"
#include "pocketllm.h"
#include "tool_io.h"

static int compare(const pl_audio_pcm *pcm, const char *ref) {
    size_t n_bytes;
    float *r = slurp(ref, &n_bytes);
    const size_t m = n_bytes / sizeof(float), n = m < pcm->n ? m : pcm->n;
    double max = 0, se = 0, sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) {
        const double x = pcm->samples[i], y = r[i], d = fabs(x - y);
        if (d > max) max = d;
        se += d * d;
        sx += x, sy += y, sxx += x * x, syy += y * y, sxy += x * y;
    }
    const double cov = sxy - sx * sy / n, vx = sxx - sx * sx / n, vy = syy - sy * sy / n;
    printf("ref_samples %zu\nmax_abs_diff %.9g\nrms_diff %.9g\ncorr %.9f\n", m, max, n ? sqrt(se / n) : 0.0,
           vx > 0 && vy > 0 ? cov / sqrt(vx * vy) : 0.0);
    free(r);
    return 0;
}

int main(int argc, char **argv) {
    const char *path = NULL, *out = NULL, *ref = NULL;
    long rate = 16000;
    int memory = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(argv[i], "--ref") && i + 1 < argc) ref = argv[++i];
        else if (!strcmp(argv[i], "--rate") && i + 1 < argc) rate = parse_l(argv[++i], 1, 768000);
        else if (!strcmp(argv[i], "--memory")) memory = 1;
        else if (!path && argv[i][0] != '-') path = argv[i];
        else die("usage: pl_audio_decode FILE [--rate R] [--memory] [--out RAW] [--ref RAW] (at '%s')", argv[i]);
    }
    if (!path) die("usage: pl_audio_decode FILE [--rate R] [--memory] [--out RAW] [--ref RAW]%s", "");
    pl_audio_pcm pcm;
    pocketllm_status st;
    if (memory) {
        size_t n;
        void *d = slurp(path, &n);
        st = pl_audio_decode(d, n, (uint32_t)rate, NULL, &pcm);
        free(d);
    } else {
        st = pl_audio_load(path, (uint32_t)rate, NULL, &pcm);
    }
    if (st != POCKETLLM_OK) {
        fprintf(stderr, "pl_audio_decode: %s\n", pocketllm_last_error());
        return 1;
    }
    printf("samples %zu\nrate %u\nseconds %.6f\n", pcm.n, pcm.rate, (double)pcm.n / pcm.rate);
    int rc = 0;
    if (out) {
        FILE *f = fopen(out, "wb");
        if (!f || fwrite(pcm.samples, sizeof(float), pcm.n, f) != pcm.n || fclose(f) != 0) {
            fprintf(stderr, "pl_audio_decode: cannot write %s\n", out);
            rc = 2;
        }
    }
    if (ref && rc == 0) rc = compare(&pcm, ref);
    pl_audio_pcm_free(&pcm);
    return rc;
}
