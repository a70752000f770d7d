/*
 * audio_sink.c -- checks, mixes to mono and resamples blocks of PCM onto
 * the one output buffer (audio_sink.h).  libsoxr (high quality, linear
 * phase: soxr_quality_spec(SOXR_HQ, 0)) resamples through its streaming
 * soxr_process; input already at the target rate is copied as it is, so
 * a mono file at that rate comes out bit-exact.
 */
#include "audio/audio_sink.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

#ifdef PL_HAVE_AUDIO_DECODE
#include <soxr.h>
#endif

double pl_audio_max_seconds(const pl_audio_limits *lim) {
    return lim && lim->max_seconds > 0 ? lim->max_seconds : PL_AUDIO_DEFAULT_MAX_SECONDS;
}

static pocketllm_status too_long(const pl_audio_sink *s, uint64_t frames) {
    return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "audio is longer than the limit of %.0f s (%llu frames at %u Hz or more)",
                   s->max_seconds, (unsigned long long)frames, s->in_rate);
}

/* room for `need` more output samples; the limit (with the slack the
 * resampler's rounding needs) caps the buffer, so a lying length can
 * never make it grow past what the duration limit allows */
static pocketllm_status reserve(pl_audio_sink *s, size_t need) {
    if (s->cap - s->n >= need) return POCKETLLM_OK;
    uint64_t want = (uint64_t)s->n + need, grown = (uint64_t)s->cap + s->cap / 2;
    if (grown > want) want = grown;
    if (want > s->max_out) want = s->max_out;
    if (want < (uint64_t)s->n + need || want > SIZE_MAX / sizeof(float))
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "audio is longer than the limit of %.0f s", s->max_seconds);
    float *p = realloc(s->out, (size_t)want * sizeof(float));
    if (!p) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "cannot allocate %llu audio samples", (unsigned long long)want);
    s->out = p;
    s->cap = (size_t)want;
    return POCKETLLM_OK;
}

pocketllm_status pl_audio_sink_init(pl_audio_sink *s, uint32_t channels, uint32_t in_rate, uint32_t rate,
                                    const pl_audio_limits *lim, uint64_t expect_frames) {
    memset(s, 0, sizeof *s);
    if (channels == 0 || channels > PL_AUDIO_MAX_CHANNELS)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "audio has %u channels (1 to %u are taken)", channels,
                       PL_AUDIO_MAX_CHANNELS);
    if (in_rate == 0 || in_rate > PL_AUDIO_MAX_RATE)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "audio sample rate %u Hz (1 to %u Hz are taken)", in_rate,
                       PL_AUDIO_MAX_RATE);
    if (rate == 0 || rate > PL_AUDIO_MAX_RATE)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "target sample rate %u Hz (1 to %u Hz are taken)", rate,
                       PL_AUDIO_MAX_RATE);
    s->channels = channels;
    s->in_rate = in_rate;
    s->rate = rate;
    s->max_seconds = pl_audio_max_seconds(lim);
    const double max_in = floor(s->max_seconds * in_rate);
    s->max_in_frames = max_in >= 1.8e19 ? UINT64_MAX : (uint64_t)max_in;
    const double max_out = ceil(s->max_seconds * rate) + 8192.0;
    s->max_out = max_out >= 1.8e19 ? UINT64_MAX : (uint64_t)max_out;
    if (expect_frames > s->max_in_frames) return too_long(s, expect_frames);
    if (in_rate != rate) {
#ifdef PL_HAVE_AUDIO_DECODE
        soxr_error_t err = NULL;
        const soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I);
        const soxr_quality_spec_t q = soxr_quality_spec(SOXR_HQ, 0);
        s->soxr = soxr_create(in_rate, rate, 1, &err, &io, &q, NULL);
        if (!s->soxr || err) {
            if (s->soxr) soxr_delete(s->soxr);
            s->soxr = NULL;
            return pl_fail(POCKETLLM_ERR_INTERNAL, "libsoxr: cannot resample %u Hz to %u Hz: %s", in_rate, rate,
                           err ? err : "soxr_create failed");
        }
#else
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED,
                       "audio at %u Hz would need resampling to %u Hz, which this build has not (no audio decoders: "
                       "built with PL_AUDIO_DECODE=OFF)",
                       in_rate, rate);
#endif
    }
    if (channels > 1 || s->soxr) {
        s->mono = malloc(PL_AUDIO_BLOCK_FRAMES * sizeof(float));
        if (!s->mono) {
            pl_audio_sink_free(s);
            return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
        }
    }
    /* the output buffer, at the length expected when that is known (capped
     * by the limit), else at a first guess that grows */
    uint64_t first = expect_frames ? (uint64_t)ceil((double)expect_frames * rate / in_rate) + 256 : (1u << 16);
    if (first > s->max_out) first = s->max_out;
    pocketllm_status st = reserve(s, (size_t)first);
    if (st) pl_audio_sink_free(s);
    return st;
}

static pocketllm_status bad_sample(const pl_audio_sink *s, float v, size_t i, uint32_t c) {
    if (!isfinite(v))
        return pl_fail(POCKETLLM_ERR_FORMAT, "audio sample at frame %llu, channel %u is not a finite number",
                       (unsigned long long)(s->in_frames + i), c);
    return pl_fail(POCKETLLM_ERR_FORMAT, "audio sample at frame %llu, channel %u is %.3g, beyond +-%.0f (corrupt data)",
                   (unsigned long long)(s->in_frames + i), c, (double)v, (double)PL_AUDIO_MAX_ABS);
}

/* mixed (or checked, for mono) block `in` of m frames into s->mono, or
 * pointed at directly when it is already mono and needs no copy */
static pocketllm_status mix(pl_audio_sink *s, const float *in, size_t m, const float **mono) {
    const uint32_t ch = s->channels;
    if (ch == 1) {
        for (size_t i = 0; i < m; i++)
            if (!(fabsf(in[i]) <= PL_AUDIO_MAX_ABS)) return bad_sample(s, in[i], i, 0);
        *mono = in;
        return POCKETLLM_OK;
    }
    for (size_t i = 0; i < m; i++) {
        double sum = 0;
        for (uint32_t c = 0; c < ch; c++) {
            const float v = in[i * ch + c];
            if (!(fabsf(v) <= PL_AUDIO_MAX_ABS)) return bad_sample(s, v, i, c);
            sum += v;
        }
        s->mono[i] = (float)(sum / ch);
    }
    *mono = s->mono;
    return POCKETLLM_OK;
}

#ifdef PL_HAVE_AUDIO_DECODE
/* room enough for what soxr may give back for m more input samples */
static size_t out_room(const pl_audio_sink *s, size_t m) {
    return (size_t)ceil((double)m * s->rate / s->in_rate) + 1024;
}

static pocketllm_status resample(pl_audio_sink *s, const float *in, size_t m) {
    while (m > 0) {
        pocketllm_status st = reserve(s, out_room(s, m));
        if (st) return st;
        size_t idone = 0, odone = 0;
        soxr_error_t err = soxr_process(s->soxr, in, m, &idone, s->out + s->n, s->cap - s->n, &odone);
        if (err) return pl_fail(POCKETLLM_ERR_INTERNAL, "libsoxr: %s", err);
        if (idone == 0 && odone == 0) return pl_fail(POCKETLLM_ERR_INTERNAL, "libsoxr made no progress");
        in += idone;
        m -= idone;
        s->n += odone;
    }
    return POCKETLLM_OK;
}
#endif

pocketllm_status pl_audio_sink_push(pl_audio_sink *s, const float *frames_in, size_t frames) {
    while (frames > 0) {
        size_t m = frames < PL_AUDIO_BLOCK_FRAMES ? frames : PL_AUDIO_BLOCK_FRAMES;
        if (s->in_frames + m > s->max_in_frames) return too_long(s, s->in_frames + m);
        const float *mono = NULL;
        pocketllm_status st = mix(s, frames_in, m, &mono);
        if (st) return st;
#ifdef PL_HAVE_AUDIO_DECODE
        if (s->soxr) st = resample(s, mono, m);
        else
#endif
        {
            if (!(st = reserve(s, m))) {
                memcpy(s->out + s->n, mono, m * sizeof(float));
                s->n += m;
            }
        }
        if (st) return st;
        s->in_frames += m;
        frames_in += m * s->channels;
        frames -= m;
    }
    return POCKETLLM_OK;
}

pocketllm_status pl_audio_sink_finish(pl_audio_sink *s, pl_audio_pcm *out) {
    memset(out, 0, sizeof *out);
    pocketllm_status st = POCKETLLM_OK;
    if (s->in_frames == 0) st = pl_fail(POCKETLLM_ERR_FORMAT, "audio has no frames");
#ifdef PL_HAVE_AUDIO_DECODE
    /* the resampler's tail: what its filter still holds */
    while (!st && s->soxr) {
        if ((st = reserve(s, 4096))) break;
        size_t odone = 0;
        soxr_error_t err = soxr_process(s->soxr, NULL, 0, NULL, s->out + s->n, s->cap - s->n, &odone);
        if (err) st = pl_fail(POCKETLLM_ERR_INTERNAL, "libsoxr: %s", err);
        s->n += odone;
        if (odone == 0) break;
    }
#endif
    if (!st && s->n == 0) st = pl_fail(POCKETLLM_ERR_FORMAT, "audio too short: no samples at %u Hz", s->rate);
    if (!st) {
        float *p = s->n < s->cap ? realloc(s->out, s->n * sizeof(float)) : s->out;
        out->samples = p ? p : s->out; /* (a failed shrink keeps the larger buffer) */
        out->n = s->n;
        out->rate = s->rate;
        s->out = NULL;
    }
    pl_audio_sink_free(s);
    return st;
}

void pl_audio_sink_free(pl_audio_sink *s) {
#ifdef PL_HAVE_AUDIO_DECODE
    if (s->soxr) soxr_delete(s->soxr);
#endif
    free(s->mono);
    free(s->out);
    memset(s, 0, sizeof *s);
}
