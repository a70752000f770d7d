/*
 * spec_lookup.h -- prompt-lookup drafting for speculative decoding: the
 * tokens that followed the latest earlier occurrence of the sequence's
 * last n-gram, proposed as the next ones (no draft model).  The target
 * then verifies them in one batched pass.
 */
#ifndef PL_SPEC_LOOKUP_H
#define PL_SPEC_LOOKUP_H

#include <stddef.h>
#include <stdint.h>

/* Up to max tokens drafted after hist[0..n): for k from ngram_max down to
 * ngram_min, the latest i < n - k with hist[i..i+k) == hist[n-k..n) gives
 * hist[i+k..] (at most max of them, not past n); the first k that matches
 * wins.  Returns how many were written to out (0: no match). */
size_t pl_lookup_draft(const int32_t *hist, size_t n, int ngram_min, int ngram_max, int32_t *out, size_t max);

#endif
