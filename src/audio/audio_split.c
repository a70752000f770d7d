/*
 * audio_split.c -- cut points for a long recording (audio_split.h).
 *
 * Each piece starts where the previous cut is and may run max_seconds;
 * when the rest does not fit, the last search_seconds before that limit
 * are cut into 100 ms frames (the latest ending at the limit) and the cut
 * goes to the middle of the one with the least energy.  Frames are the
 * same length, so their sums of squares rank them as their RMS does.  A
 * tie goes to the latest frame: the longest piece, the fewest pieces.
 */
#include "audio/audio_split.h"

#include <math.h>
#include <stdlib.h>

#include "base/error.h"

/* the frame the energy is measured over: 100 ms */
#define FRAMES_PER_SECOND 10

static double energy(const float *x, size_t n) {
    double e = 0;
    for (size_t i = 0; i < n; i++) e += (double)x[i] * (double)x[i];
    return e;
}

pocketllm_status pl_audio_split(const float *samples, size_t n, uint32_t rate, double max_seconds,
                                double search_seconds, size_t **cuts, size_t *n_cuts) {
    if (!cuts || !n_cuts) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "audio split: no output");
    *cuts = NULL;
    *n_cuts = 0;
    if (max_seconds == 0) max_seconds = PL_AUDIO_SPLIT_MAX_SECONDS;
    if (search_seconds == 0) search_seconds = PL_AUDIO_SPLIT_SEARCH_SECONDS;
    if (rate < 2 * FRAMES_PER_SECOND)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "audio split: a rate of %u Hz is too low", rate);
    if (!(max_seconds > 0) || !isfinite(max_seconds) || !(search_seconds > 0) || !isfinite(search_seconds))
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "audio split: bad lengths (pieces of %g s, search %g s)",
                       max_seconds, search_seconds);
    if (n && !samples) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "audio split: no samples");
    /* fits whole (compared in double first: a huge limit is no size_t) */
    if (max_seconds * rate >= (double)n) return POCKETLLM_OK;
    const size_t max_len = (size_t)llround(max_seconds * rate);
    if (max_len < 1)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "audio split: pieces of %g s are under one sample", max_seconds);
    if (max_len >= n) return POCKETLLM_OK;
    const size_t frame = rate / FRAMES_PER_SECOND;
    const double search_d = search_seconds * rate;
    size_t search = search_d >= (double)max_len ? max_len : (size_t)llround(search_d);
    if (search < 1) search = 1;

    size_t *out = NULL, count = 0, cap = 0, start = 0;
    while (n - start > max_len) {
        const size_t limit = start + max_len, lo = limit - search;
        /* frames [limit - (f + 1) frame, limit - f frame) that lie in the
         * search span; one shorter frame when the span is under a frame */
        const size_t n_frames = search >= frame ? search / frame : 1;
        const size_t flen = search >= frame ? frame : search;
        size_t best = 0;
        double best_e = energy(samples + limit - flen, flen);
        for (size_t f = 1; f < n_frames; f++) {
            const double e = energy(samples + limit - (f + 1) * flen, flen);
            if (e < best_e) { /* strictly: a tie keeps the later frame */
                best_e = e;
                best = f;
            }
        }
        size_t cut = limit - (best + 1) * flen + flen / 2;
        if (cut <= start || cut < lo) cut = limit; /* (cannot happen with frames of 2+ samples; progress regardless) */
        if (count == cap) {
            cap = cap ? 2 * cap : 8;
            size_t *grown = realloc(out, cap * sizeof *out);
            if (!grown) {
                free(out);
                return pl_fail(POCKETLLM_ERR_NO_MEMORY, "audio split: out of memory");
            }
            out = grown;
        }
        out[count++] = cut;
        start = cut;
    }
    *cuts = out;
    *n_cuts = count;
    return POCKETLLM_OK;
}
