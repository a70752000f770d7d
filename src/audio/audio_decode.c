/*
 * audio_decode.c -- audio files and memory through libsndfile into the
 * mixing/resampling sink (audio_decode.h, audio_sink.h): the header
 * checks, a memory reader for sf_open_virtual, the streaming read loop,
 * and pl_audio_from_pcm over the same sink.
 *
 * Truncation, as libsndfile 1.2 handles it (measured, tests/unit/
 * test_audio_decode.c): a WAV or AIFF whose data chunk is cut short opens
 * fine with the frame count shortened to what the file holds -- only its
 * log says "data : 32000 (should be 19956)" -- so we read that log and
 * refuse such a file as truncated, except where the claimed size is one
 * of the placeholders a writer that could not seek back leaves (0,
 * 0xFFFFFFFF, or anything from 0x7FFF0000 up: ffmpeg or arecord writing
 * to a pipe), where the data present is the recording.  A FLAC file cut
 * short fails in the decoder ("flac decoder lost sync") or, cut at a frame
 * boundary, holds fewer frames than its STREAMINFO says: both refused.
 * Formats that carry no length we can trust (AU, W64, CAF, Ogg, MP3) give
 * the frames that are there, as a stream would.
 */
#include "audio/audio_decode.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audio/audio_sink.h"
#include "base/error.h"

#ifdef PL_HAVE_AUDIO_DECODE
#include <sndfile.h>
#include <stdio.h>

/* ---- memory input: sf_open_virtual over a buffer ------------------------- */

typedef struct mem_reader {
    const unsigned char *data;
    sf_count_t len, pos;
} mem_reader;

static sf_count_t mem_len(void *user) { return ((mem_reader *)user)->len; }

static sf_count_t mem_seek(sf_count_t offset, int whence, void *user) {
    mem_reader *m = user;
    sf_count_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? m->pos : whence == SEEK_END ? m->len : -1;
    if (base < 0) return -1;
    /* (no overflow: positions stay within [0, len], offsets from libsndfile are file-sized) */
    if (offset < -base || offset > m->len - base) return -1;
    m->pos = base + offset;
    return m->pos;
}

static sf_count_t mem_read(void *ptr, sf_count_t count, void *user) {
    mem_reader *m = user;
    if (count <= 0 || m->pos >= m->len) return 0;
    if (count > m->len - m->pos) count = m->len - m->pos;
    memcpy(ptr, m->data + m->pos, (size_t)count);
    m->pos += count;
    return count;
}

static sf_count_t mem_write(const void *ptr, sf_count_t count, void *user) { return 0; }

static sf_count_t mem_tell(void *user) { return ((mem_reader *)user)->pos; }

/* ---- checks ---------------------------------------------------------------- */

/* a claimed data size that means "length unknown": what a writer that
 * cannot seek back to fix its header leaves */
static int placeholder_size(unsigned long long claimed) { return claimed == 0 || claimed >= 0x7FFF0000ull; }

/* libsndfile's log says when a WAV's "data" or an AIFF's "SSND" chunk
 * claims more than the file holds ("data : 32000 (should be 19956)") */
static pocketllm_status check_truncation_log(SNDFILE *sf) {
    char log[4096];
    sf_command(sf, SFC_GET_LOG_INFO, log, sizeof log);
    log[sizeof log - 1] = '\0';
    for (const char *line = log; *line;) {
        const char *end = strchr(line, '\n');
        const size_t n = end ? (size_t)(end - line) : strlen(line);
        char buf[128];
        if (n < sizeof buf) {
            memcpy(buf, line, n);
            buf[n] = '\0';
            char name[8];
            unsigned long long claimed, present;
            if (sscanf(buf, " %7s : %llu (should be %llu)", name, &claimed, &present) == 3 &&
                (!strcmp(name, "data") || !strcmp(name, "SSND")) && claimed > present && !placeholder_size(claimed))
                return pl_fail(POCKETLLM_ERR_FORMAT,
                               "truncated audio: its '%s' chunk says %llu bytes, the file holds %llu", name, claimed,
                               present);
        }
        line += n;
        if (*line == '\n') line++;
    }
    return POCKETLLM_OK;
}

/* the subtypes whose frame count is the data present (no decoder guesses
 * it): the output buffer is reserved for it */
static int uncompressed(int format) {
    switch (format & SF_FORMAT_SUBMASK) {
    case SF_FORMAT_PCM_S8: case SF_FORMAT_PCM_16: case SF_FORMAT_PCM_24: case SF_FORMAT_PCM_32:
    case SF_FORMAT_PCM_U8: case SF_FORMAT_FLOAT: case SF_FORMAT_DOUBLE: case SF_FORMAT_ULAW:
    case SF_FORMAT_ALAW:
        return 1;
    default:
        return 0;
    }
}

/* MPEG audio has no container and no checksum a decoder must check:
 * libmpg123 syncs to anything frame-shaped, and random bytes that happen
 * to carry frame headers decode, with no error, to noise of absurd level
 * (measured: peaks of 2e5).  Real MP3s peak near full scale (a clipped
 * master a little over 1), so a sample past this is taken as such data. */
#define MPEG_MAX_ABS 32.0f

static pocketllm_status check_mpeg_level(const float *x, size_t n, uint64_t at) {
    for (size_t i = 0; i < n; i++)
        if (fabsf(x[i]) > MPEG_MAX_ABS)
            return pl_fail(POCKETLLM_ERR_FORMAT,
                           "corrupt MPEG audio: a sample of %.3g at sample %llu, far over full scale (not audio that "
                           "decodes cleanly)",
                           (double)x[i], (unsigned long long)(at + i));
    return POCKETLLM_OK;
}

/* ---- the read loop -------------------------------------------------------- */

static pocketllm_status decode_open(SNDFILE *sf, const SF_INFO *info, uint32_t rate, const pl_audio_limits *lim,
                                    pl_audio_pcm *out) {
    if (info->channels <= 0 || (unsigned)info->channels > PL_AUDIO_MAX_CHANNELS)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "audio has %d channels (1 to %u are taken)", info->channels,
                       PL_AUDIO_MAX_CHANNELS);
    if (info->samplerate <= 0 || (unsigned)info->samplerate > PL_AUDIO_MAX_RATE)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "audio sample rate %d Hz (1 to %u Hz are taken)", info->samplerate,
                       PL_AUDIO_MAX_RATE);
    const uint32_t ch = (uint32_t)info->channels, in_rate = (uint32_t)info->samplerate;
    const int known = info->frames > 0 && info->frames != SF_COUNT_MAX;
    const double max_s = pl_audio_max_seconds(lim);
    if (known && (double)info->frames / in_rate > max_s)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "audio is %.0f s long (its header says), over the limit of %.0f s",
                       (double)info->frames / in_rate, max_s);
    pocketllm_status st = check_truncation_log(sf);
    if (st) return st;

    pl_audio_sink sink;
    if ((st = pl_audio_sink_init(&sink, ch, in_rate, rate, lim,
                                 known && uncompressed(info->format) ? (uint64_t)info->frames : 0)))
        return st;
    const size_t block = PL_AUDIO_BLOCK_FLOATS / ch < PL_AUDIO_BLOCK_FRAMES ? PL_AUDIO_BLOCK_FLOATS / ch
                                                                             : PL_AUDIO_BLOCK_FRAMES;
    float *buf = malloc(block * ch * sizeof(float));
    if (!buf) {
        pl_audio_sink_free(&sink);
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    }
    const int mpeg = (info->format & SF_FORMAT_TYPEMASK) == SF_FORMAT_MPEG;
    uint64_t got = 0;
    for (;;) {
        const sf_count_t k = sf_readf_float(sf, buf, (sf_count_t)block);
        if (k <= 0) break;
        if (mpeg && (st = check_mpeg_level(buf, (size_t)k * ch, got * ch))) break;
        got += (uint64_t)k;
        if ((st = pl_audio_sink_push(&sink, buf, (size_t)k))) break;
    }
    free(buf);
    if (!st && sf_error(sf) != SF_ERR_NO_ERROR)
        st = pl_fail(POCKETLLM_ERR_FORMAT, "corrupt audio data after %llu frames: %s", (unsigned long long)got,
                     sf_strerror(sf));
    /* FLAC's STREAMINFO gives the exact length: fewer frames is a file cut
     * at a frame boundary (the decoder sees a clean end) */
    if (!st && known && (info->format & SF_FORMAT_TYPEMASK) == SF_FORMAT_FLAC && got < (uint64_t)info->frames)
        st = pl_fail(POCKETLLM_ERR_FORMAT, "truncated FLAC: %llu frames of the %lld its header says",
                     (unsigned long long)got, (long long)info->frames);
    if (st) {
        pl_audio_sink_free(&sink);
        return st;
    }
    return pl_audio_sink_finish(&sink, out);
}

static pocketllm_status open_failed(void) {
    /* (sf_strerror(NULL): libsndfile's message for the last failed open) */
    return pl_fail(POCKETLLM_ERR_FORMAT, "not audio that libsndfile can decode: %s", sf_strerror(NULL));
}

pocketllm_status pl_audio_decode(const void *data, size_t len, uint32_t rate, const pl_audio_limits *lim,
                                 pl_audio_pcm *out) {
    memset(out, 0, sizeof *out);
    if (!data || len == 0) return pl_fail(POCKETLLM_ERR_FORMAT, "no audio data (0 bytes)");
    if (len > (size_t)INT64_MAX) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "audio data too large");
    mem_reader m = {data, (sf_count_t)len, 0};
    SF_VIRTUAL_IO io = {mem_len, mem_seek, mem_read, mem_write, mem_tell};
    SF_INFO info;
    memset(&info, 0, sizeof info);
    SNDFILE *sf = sf_open_virtual(&io, SFM_READ, &info, &m);
    if (!sf) return open_failed();
    pocketllm_status st = decode_open(sf, &info, rate, lim, out);
    sf_close(sf);
    return st;
}

pocketllm_status pl_audio_load(const char *path, uint32_t rate, const pl_audio_limits *lim, pl_audio_pcm *out) {
    memset(out, 0, sizeof *out);
    if (!path) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "audio_load: no path");
    /* libsndfile reads the file itself, a block at a time: it is never
     * held whole */
    FILE *probe = fopen(path, "rb");
    if (!probe) {
        pl_fail(POCKETLLM_ERR_IO, "cannot open the file");
        pl_error_prefix(path);
        return POCKETLLM_ERR_IO;
    }
    fclose(probe);
    SF_INFO info;
    memset(&info, 0, sizeof info);
    SNDFILE *sf = sf_open(path, SFM_READ, &info);
    pocketllm_status st = sf ? decode_open(sf, &info, rate, lim, out) : open_failed();
    if (sf) sf_close(sf);
    if (st) pl_error_prefix(path);
    return st;
}

#else /* PL_AUDIO_DECODE=OFF */

#define NO_DECODERS "this build has no audio decoders (built with PL_AUDIO_DECODE=OFF)"

pocketllm_status pl_audio_decode(const void *data, size_t len, uint32_t rate, const pl_audio_limits *lim,
                                 pl_audio_pcm *out) {
    memset(out, 0, sizeof *out);
    return pl_fail(POCKETLLM_ERR_UNSUPPORTED, NO_DECODERS);
}

pocketllm_status pl_audio_load(const char *path, uint32_t rate, const pl_audio_limits *lim, pl_audio_pcm *out) {
    memset(out, 0, sizeof *out);
    pl_fail(POCKETLLM_ERR_UNSUPPORTED, NO_DECODERS);
    if (path) pl_error_prefix(path);
    return POCKETLLM_ERR_UNSUPPORTED;
}

#endif

pocketllm_status pl_audio_from_pcm(const float *pcm, size_t frames, uint32_t channels, uint32_t in_rate, uint32_t rate,
                                   const pl_audio_limits *lim, pl_audio_pcm *out) {
    memset(out, 0, sizeof *out);
    if (!pcm && frames) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "audio_from_pcm: no samples");
    pl_audio_sink sink;
    pocketllm_status st = pl_audio_sink_init(&sink, channels, in_rate, rate, lim, frames);
    if (st) return st;
    if ((st = pl_audio_sink_push(&sink, pcm, frames))) {
        pl_audio_sink_free(&sink);
        return st;
    }
    return pl_audio_sink_finish(&sink, out);
}

void pl_audio_pcm_free(pl_audio_pcm *p) {
    if (!p) return;
    free(p->samples);
    memset(p, 0, sizeof *p);
}
