/*
 * audio_decode.h -- audio in: files or memory (WAV, FLAC, MP3, Ogg/Vorbis,
 * Opus and whatever else Debian's libsndfile 1.2 reads) decoded, mixed to
 * mono (the mean of the channels) and resampled (libsoxr, high quality) to
 * the rate a model wants -- Qwen3-ASR's 16 kHz.
 *
 * Decoding streams: blocks of frames are read, mixed and fed to the
 * resampler one at a time, so the recording is held once, as the output
 * floats; never as the whole file's multi-channel floats.  Input that is
 * already mono at the target rate goes through no resampler: the output is
 * a bit-exact copy of what libsndfile decodes (16-bit PCM as x / 32768).
 *
 * Refused, with a one-line message: data that is not audio, corrupt or
 * truncated data (a WAV/AIFF whose data chunk is shorter than its header
 * says included -- libsndfile itself only shortens the frame count and
 * logs it), no frames, a rate of 0 or over PL_AUDIO_MAX_RATE, 0 or over
 * PL_AUDIO_MAX_CHANNELS channels, a sample that is not finite (a float
 * file's NaN or Inf) or beyond +-PL_AUDIO_MAX_ABS, a duration over the limit (from the header before
 * decoding when the header says, and while decoding otherwise).
 *
 * Built with PL_AUDIO_DECODE=OFF (the static ARM64 CLI: Debian ships no
 * libsndfile.a or libsoxr.a) pl_audio_load and pl_audio_decode fail with a
 * message saying so, and pl_audio_from_pcm takes only PCM already at the
 * target rate (mixing still works).
 */
#ifndef PL_AUDIO_DECODE_H
#define PL_AUDIO_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "pocketllm.h"

/* the highest sample rate accepted (768 kHz: the highest any real
 * converter runs at; more is a corrupt header) */
#define PL_AUDIO_MAX_RATE 768000u
/* the most channels accepted (libsndfile itself takes up to 1024) */
#define PL_AUDIO_MAX_CHANNELS 64u
/* the largest sample magnitude accepted: a float file written in 16-bit
 * scale (+-32768, a tool that forgot to normalise) still passes; beyond
 * is corrupt data -- and huge finite floats (1e38) overflow the
 * resampler's FFT into Inf and NaN */
#define PL_AUDIO_MAX_ABS 65536.0f
/* the default duration limit, pl_audio_limits.max_seconds = 0: 3 hours */
#define PL_AUDIO_DEFAULT_MAX_SECONDS (3.0 * 3600.0)

typedef struct pl_audio_pcm {
    float *samples; /* mono, n of them, at rate Hz (malloc'd; pl_audio_pcm_free) */
    size_t n;
    uint32_t rate;
} pl_audio_pcm;

typedef struct pl_audio_limits {
    double max_seconds; /* refuse longer recordings (0: PL_AUDIO_DEFAULT_MAX_SECONDS) */
} pl_audio_limits;

/* Decode the file at path (errors prefixed with it) or len bytes in memory
 * to mono at `rate` Hz.  lim may be NULL (the defaults).  On failure *out
 * is empty and the status and pocketllm_last_error() say why. */
pocketllm_status pl_audio_load(const char *path, uint32_t rate, const pl_audio_limits *lim, pl_audio_pcm *out);
pocketllm_status pl_audio_decode(const void *data, size_t len, uint32_t rate, const pl_audio_limits *lim,
                                 pl_audio_pcm *out);
/* PCM the caller has -- `frames` frames of `channels` interleaved f32
 * samples at in_rate Hz -- mixed and resampled the same way. */
pocketllm_status pl_audio_from_pcm(const float *pcm, size_t frames, uint32_t channels, uint32_t in_rate, uint32_t rate,
                                   const pl_audio_limits *lim, pl_audio_pcm *out);
void pl_audio_pcm_free(pl_audio_pcm *p);

#endif
