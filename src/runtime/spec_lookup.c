/*
 * spec_lookup.c -- prompt-lookup drafting (spec_lookup.h): a backwards
 * scan of the history for the longest recent n-gram match.  Linear in the
 * history per draft, which is small next to a forward pass.
 */
#include "runtime/spec_lookup.h"

#include <string.h>

#include "pocketllm.h"

size_t pl_lookup_draft(const int32_t *hist, size_t n, int ngram_min, int ngram_max, int32_t *out, size_t max) {
    if (!hist || !out || max == 0 || ngram_min < 1 || ngram_max < ngram_min) return 0;
    for (size_t k = (size_t)ngram_max; k >= (size_t)ngram_min; k--) {
        if (k >= n) continue; /* an earlier occurrence needs k + 1 tokens at least */
        const int32_t *tail = hist + n - k;
        /* the latest start i with i + k < n, so a token follows the match */
        for (size_t i = n - k; i-- > 0;) {
            if (memcmp(hist + i, tail, k * sizeof *hist) != 0) continue;
            size_t take = n - (i + k);
            if (take > max) take = max;
            memcpy(out, hist + i + k, take * sizeof *out);
            return take;
        }
    }
    return 0;
}

size_t pocketllm_lookup_draft(const int32_t *hist, size_t n, int ngram_min, int ngram_max, int32_t *out, size_t max) {
    return pl_lookup_draft(hist, n, ngram_min, ngram_max, out, max);
}
