/*
 * audio_split.h -- where to cut a long recording so that each piece fits
 * what one transcription takes (Qwen3-ASR: 30 s).  A cut is never made
 * blindly at the limit, where it would split a word, but at the quietest
 * 100 ms of the last seconds before it -- in a pause, when there is one.
 */
#ifndef PL_AUDIO_SPLIT_H
#define PL_AUDIO_SPLIT_H

#include <stddef.h>
#include <stdint.h>

#include "pocketllm.h"

/* the defaults: pieces of at most 30 s, a cut looked for in the last 5 s */
#define PL_AUDIO_SPLIT_MAX_SECONDS 30.0
#define PL_AUDIO_SPLIT_SEARCH_SECONDS 5.0

/* Cut points for transcribing n samples at `rate` in pieces of at most max_seconds (0: 30): no cut
 * when n fits; otherwise each cut is at the quietest point (lowest RMS energy over 100 ms frames,
 * ties to the latest) in the last `search_seconds` (0: 5) before the piece's limit -- never blindly
 * at the limit.  *cuts (malloc'd) receives the sample index where each piece after the first
 * starts; *n_cuts their count (pieces = n_cuts + 1).
 * The frames end at the limit and go back from it; a cut is the middle of the chosen frame, so a
 * piece is never longer than max_seconds (rounded to whole samples).  No cut: *cuts is NULL. */
pocketllm_status pl_audio_split(const float *samples, size_t n, uint32_t rate, double max_seconds,
                                double search_seconds, size_t **cuts, size_t *n_cuts);

#endif
