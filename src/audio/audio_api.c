/*
 * audio_api.c -- the public audio handle (pocketllm_audio: mono, 16 kHz)
 * over the internal decoder, audio_decode.h, with its default limits.
 */
#include <stdlib.h>

#include "audio/audio_api_internal.h"
#include "base/error.h"

struct pocketllm_audio {
    pl_audio_pcm pcm;
};

const pl_audio_pcm *pl_audio_of(const pocketllm_audio *a) { return &a->pcm; }

static pocketllm_status new_audio(pocketllm_audio **out, pocketllm_audio **a) {
    if (!out) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "audio: no output pointer");
    *out = NULL;
    *a = calloc(1, sizeof **a);
    return *a ? POCKETLLM_OK : pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
}

/* hand *a out on success, free it on failure */
static pocketllm_status finish(pocketllm_status st, pocketllm_audio *a, pocketllm_audio **out) {
    if (st) {
        free(a);
        return st;
    }
    *out = a;
    return POCKETLLM_OK;
}

pocketllm_status pocketllm_audio_load(const char *path, pocketllm_audio **out) {
    pocketllm_audio *a;
    pocketllm_status st = new_audio(out, &a);
    if (st) return st;
    if (!path) st = pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "audio_load: no path");
    if (!st) st = pl_audio_load(path, PL_AUDIO_API_RATE, NULL, &a->pcm);
    return finish(st, a, out);
}

pocketllm_status pocketllm_audio_decode(const void *data, size_t len, pocketllm_audio **out) {
    pocketllm_audio *a;
    pocketllm_status st = new_audio(out, &a);
    if (st) return st;
    if (!data && len) st = pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "audio_decode: no data");
    if (!st) st = pl_audio_decode(data, len, PL_AUDIO_API_RATE, NULL, &a->pcm);
    return finish(st, a, out);
}

pocketllm_status pocketllm_audio_from_pcm(const float *pcm, size_t frames, uint32_t channels, uint32_t sample_rate,
                                          pocketllm_audio **out) {
    pocketllm_audio *a;
    pocketllm_status st = new_audio(out, &a);
    if (st) return st;
    st = pl_audio_from_pcm(pcm, frames, channels, sample_rate, PL_AUDIO_API_RATE, NULL, &a->pcm);
    return finish(st, a, out);
}

void pocketllm_audio_free(pocketllm_audio *a) {
    if (!a) return;
    pl_audio_pcm_free(&a->pcm);
    free(a);
}

size_t pocketllm_audio_n_samples(const pocketllm_audio *a) { return a ? a->pcm.n : 0; }

double pocketllm_audio_seconds(const pocketllm_audio *a) {
    return a && a->pcm.rate ? (double)a->pcm.n / a->pcm.rate : 0.0;
}
