/*
 * fuzz_audio_decode.c -- libFuzzer target for audio in (src/audio/: the
 * libsndfile memory reader, the header checks, mixing and libsoxr
 * resampling): any bytes must give either mono samples at the rate asked
 * for, within the duration limit and all finite, or a one-line message
 * and an empty result.  A short limit (60 s) keeps each run fast; the
 * first byte picks the target rate (16 kHz, or the input's own rate path
 * by asking 8 kHz / 44.1 kHz).  Seeds: tests/fuzz/seeds/
 * fuzz_audio_decode.sh (tiny files sox writes at fuzz time).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "audio/audio_decode.h"

/* Leaks inside the codec libraries are theirs, not ours: libvorbis leaks
 * its codec setup (5784 bytes) when libsndfile's Ogg open fails on a
 * malformed stream (xiph/vorbis#125, open upstream; in Debian 12's 1.3.7).
 * Only allocations whose stack runs through these libraries are ignored --
 * ours (the sink, the read buffer) are made from our own frames. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) {
    return "leak:libvorbis.so\nleak:libvorbisenc.so\nleak:libogg.so\nleak:libFLAC.so\nleak:libopus.so\n"
           "leak:libmpg123.so\nleak:libsndfile.so\n";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const uint32_t rates[4] = {16000, 16000, 8000, 44100};
    const uint32_t rate = size ? rates[data[0] & 3] : 16000;
    const pl_audio_limits lim = {60.0};
    pl_audio_pcm pcm;
    if (pl_audio_decode(data, size, rate, &lim, &pcm) != POCKETLLM_OK) {
        const char *msg = pocketllm_last_error();
        if (!msg || !*msg || strchr(msg, '\n')) abort();
        if (pcm.samples || pcm.n) abort();
        return 0;
    }
    /* (the limit plus the resampler's slack) */
    if (!pcm.samples || pcm.n == 0 || pcm.rate != rate || pcm.n > (size_t)(lim.max_seconds * rate) + 4096) abort();
    for (size_t i = 0; i < pcm.n; i++)
        if (!isfinite(pcm.samples[i])) abort();
    pl_audio_pcm_free(&pcm);
    return 0;
}
