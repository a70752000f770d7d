/*
 * audio_sink.h -- the streaming half of audio in, shared by the decoders
 * and pl_audio_from_pcm: blocks of interleaved frames go in, are checked
 * (finite samples, the duration limit), mixed to mono and resampled
 * (libsoxr's streaming soxr_process) onto the end of the one output
 * buffer.  Internal to src/audio.
 */
#ifndef PL_AUDIO_SINK_H
#define PL_AUDIO_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "audio/audio_decode.h"

typedef struct pl_audio_sink {
    uint32_t channels, in_rate, rate;
    double max_seconds;
    uint64_t max_in_frames; /* the duration limit, in input frames */
    uint64_t in_frames;     /* taken so far */
    uint64_t max_out;       /* the most output samples the limit allows (with the resampler's slack) */
    void *soxr;             /* the resampler (soxr_t); NULL when in_rate == rate */
    float *mono;            /* mixing scratch: PL_AUDIO_BLOCK_FRAMES samples */
    float *out;             /* the result so far: n samples of cap */
    size_t n, cap;
} pl_audio_sink;

/* frames per block a decoder reads and the sink mixes at a time, and the
 * most floats one block of interleaved frames may have (many channels:
 * fewer frames a block) */
#define PL_AUDIO_BLOCK_FRAMES 65536u
#define PL_AUDIO_BLOCK_FLOATS (1u << 20)

/* Check the format and set up (lim may be NULL).  expect_frames, when not
 * 0, is the input's length as far as known (the output buffer is reserved
 * for it, so pass it only when the data exists: a header's claim is capped
 * by the caller).  Refuses a rate of 0 or over PL_AUDIO_MAX_RATE, channel
 * counts of 0 or over PL_AUDIO_MAX_CHANNELS, and expect_frames over the
 * duration limit. */
pocketllm_status pl_audio_sink_init(pl_audio_sink *s, uint32_t channels, uint32_t in_rate, uint32_t rate,
                                    const pl_audio_limits *lim, uint64_t expect_frames);
/* Take `frames` interleaved frames (any number; processed a block at a time). */
pocketllm_status pl_audio_sink_push(pl_audio_sink *s, const float *frames_in, size_t frames);
/* Flush the resampler and move the result to *out (the sink is then
 * freed, whatever the outcome).  No input frames at all is an error. */
pocketllm_status pl_audio_sink_finish(pl_audio_sink *s, pl_audio_pcm *out);
void pl_audio_sink_free(pl_audio_sink *s);

/* The duration limit lim sets, in seconds (NULL or 0: the default). */
double pl_audio_max_seconds(const pl_audio_limits *lim);

#endif
