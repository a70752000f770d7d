/*
 * bench_audio.c -- the audio-encode measurement of `pocketllm bench`: an
 * audio file decoded (mono, 16 kHz), cut into log-mel windows and every
 * window run through the audio tower, each repetition timed in its three
 * parts, as `pl_mtmd audio-bench` times libmtmd (the helper's file decode,
 * mtmd_tokenize, which makes the mel, and mtmd_encode_chunk on every audio
 * chunk), so bench/compare --audio can set them side by side.
 */
#include <stdlib.h>
#include <string.h>

#include "audio/audio_decode.h"
#include "audio/audio_mel.h"
#include "audio/audio_tower.h"
#include "base/clock.h"
#include "base/error.h"
#include "model/model.h"

/* One run: file -> every window's embeddings (into out, one window's
 * worth, reused); the three times in *r. */
static pocketllm_status run_once(pl_model *m, pl_audio_tower *a, const char *path, float **out, size_t *out_cap,
                                 pocketllm_bench_audio *r) {
    const pl_audio_hparams *hp = pl_audio_hparams_of(a);
    const pl_mel_params mp = pl_mel_params_qwen3a((uint32_t)hp->n_mel);
    pl_audio_pcm pcm = {NULL, 0, 0};
    pl_mel *win = NULL;
    size_t n_win = 0;
    const double t0 = pl_now_s();
    pocketllm_status st = pl_audio_load(path, mp.sample_rate, NULL, &pcm);
    const double t1 = pl_now_s();
    if (!st) st = pl_mel_qwen3a(&mp, pcm.samples, pcm.n, m->n_threads, &win, &n_win);
    const double t2 = pl_now_s();
    uint64_t n_tok = 0;
    for (size_t w = 0; w < n_win && !st; w++) {
        const size_t need = (size_t)pl_audio_window_tokens(win[w].n_len) * (size_t)hp->n_embd_text;
        if (need > *out_cap) {
            float *p = realloc(*out, need * sizeof *p);
            if (!p) {
                st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for a window's embeddings");
                break;
            }
            *out = p, *out_cap = need;
        }
        st = pl_audio_encode(a, &win[w], *out);
        n_tok += (uint64_t)pl_audio_window_tokens(win[w].n_len);
    }
    const double t3 = pl_now_s();
    if (!st)
        *r = (pocketllm_bench_audio){(double)pcm.n / mp.sample_rate, (uint32_t)n_win, (uint32_t)n_tok,
                                     (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3};
    pl_mel_free(win, n_win);
    pl_audio_pcm_free(&pcm);
    return st;
}

pocketllm_status pocketllm_bench_audio_encode(pocketllm_model *model, const char *mmproj, const char *audio_path,
                                              int reps, pocketllm_bench_audio *runs) {
    if (!model || !mmproj || !audio_path || !runs || reps < 1 || reps > 1000)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "bench_audio_encode: bad arguments");
    pl_audio_tower *a = NULL;
    pocketllm_status st = pl_audio_open(model, mmproj, &a);
    if (st) return st;
    float *out = NULL;
    size_t cap = 0;
    /* one untimed run first: pages in the weights, starts the threads */
    pocketllm_bench_audio warm;
    for (int r = -1; r < reps && !st; r++) st = run_once(model, a, audio_path, &out, &cap, r < 0 ? &warm : &runs[r]);
    free(out);
    pl_audio_close(a);
    return st;
}
