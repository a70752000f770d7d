/*
 * pl_audio_tower.c -- PocketLLM's Qwen3-ASR audio tower
 * (src/audio/audio_tower_*.c) as a command, for shell tests against
 * libmtmd, fed exactly the mel libmtmd fed its own tower:
 *
 *   pl_audio_tower TEXT.gguf MMPROJ.gguf MEL_FILE --lens L1,L2,... --out FILE
 *                  [--threads N] [--device D]
 *       MEL_FILE: mel windows as `pl_mtmd audio-encode --out-mel` (or
 *       `pl_mtmd audio-mel --out`) writes them -- raw f32, n_mel rows of
 *       n_len per window, window after window -- with their n_len in
 *       --lens.  Encodes each window, writes all the embeddings (raw f32,
 *       window after window: pl_audio_window_tokens(n_len) rows of the
 *       text model's n_embd, as `pl_mtmd audio-encode --out` does) and
 *       prints "windows N", per window "tokens T", then "n_embd E"; the
 *       encode time goes to stderr.
 *   Compare two outputs with `pl_vision_encode compare OURS REF N_EMBD 1`.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audio/audio_mel.h"
#include "audio/audio_tower.h"
#include "pocketllm.h"

#define TOOL_NAME "pl_audio_tower"
#include "tool_io.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int fail_lib(const char *what, pocketllm_status st) {
    fprintf(stderr, "pl_audio_tower: %s: %s (status %d)\n", what, pocketllm_last_error(), (int)st);
    return 2;
}

int main(int argc, char **argv) {
    if (argc < 4)
        die("%s", "usage: pl_audio_tower TEXT.gguf MMPROJ.gguf MEL_FILE --lens L1,L2,... --out FILE [--threads N] "
                  "[--device D]");
    const char *out = NULL, *device = NULL, *lens_s = NULL;
    long threads = 0;
    for (int i = 4; i < argc; i++) {
        if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(argv[i], "--lens") && i + 1 < argc) lens_s = argv[++i];
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = parse_l(argv[++i], 0, 1024);
        else if (!strcmp(argv[i], "--device") && i + 1 < argc) device = argv[++i];
        else die("unknown or incomplete argument '%s'", argv[i]);
    }
    if (!out || !lens_s) die("%s", "needs --lens L1,L2,... and --out FILE");
    int64_t lens[4096];
    size_t n_win = 0;
    char *copy = strdup(lens_s), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n_win == sizeof lens / sizeof lens[0]) die("%s", "too many windows");
        lens[n_win++] = parse_l(tok, 100, 1 << 20);
    }
    free(copy);

    pocketllm_model_params mp = pocketllm_model_default_params();
    mp.n_threads = (int)threads;
    mp.device = device;
    pocketllm_model *text = NULL;
    pocketllm_status st;
    if ((st = pocketllm_model_open(argv[1], &mp, &text))) return fail_lib("text model", st);
    pl_audio_tower *a = NULL;
    if ((st = pl_audio_open(text, argv[2], &a))) return fail_lib("mmproj", st);
    const pl_audio_hparams *hp = pl_audio_hparams_of(a);

    size_t bytes;
    float *mel = slurp(argv[3], &bytes);
    size_t need = 0;
    for (size_t w = 0; w < n_win; w++) need += (size_t)(hp->n_mel * lens[w]);
    if (bytes != need * sizeof(float)) die("%s does not hold the windows --lens names (n_mel x n_len floats each)", argv[3]);
    FILE *f = fopen(out, "wb");
    if (!f) die("cannot create %s", out);
    printf("windows %zu\n", n_win);
    double ms = 0;
    size_t off = 0;
    for (size_t w = 0; w < n_win; w++) {
        pl_mel m = {.n_mel = hp->n_mel, .n_len = lens[w], .n_len_org = lens[w], .data = mel + off};
        off += (size_t)(hp->n_mel * lens[w]);
        const int64_t n_tok = pl_audio_window_tokens(lens[w]);
        float *emb = malloc((size_t)(n_tok * hp->n_embd_text) * sizeof *emb);
        if (!emb) die("%s", "out of memory");
        const double t0 = now_ms();
        if ((st = pl_audio_encode(a, &m, emb))) return fail_lib("encode", st);
        ms += now_ms() - t0;
        if (fwrite(emb, sizeof *emb, (size_t)(n_tok * hp->n_embd_text), f) != (size_t)(n_tok * hp->n_embd_text))
            die("cannot write %s", out);
        free(emb);
        printf("tokens %lld\n", (long long)n_tok);
    }
    if (fclose(f)) die("cannot write %s", out);
    printf("n_embd %lld\n", (long long)hp->n_embd_text);
    fprintf(stderr, "pl_audio_tower: %zu windows, encode %.1f ms\n", n_win, ms);
    free(mel);
    pl_audio_close(a);
    pocketllm_model_close(text);
    return 0;
}
