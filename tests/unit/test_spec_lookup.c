/*
 * test_spec_lookup.c -- prompt-lookup drafting (src/runtime/spec_lookup.c)
 * against a naive scan: the longest n-gram first, the latest match, the
 * draft cut at max and at the history's end, no match, bad arguments.
 */
#include <stdlib.h>
#include <string.h>

#include "pltest.h"
#include "runtime/spec_lookup.h"

/* the definition, spelled out the slow way */
static size_t naive(const int32_t *h, size_t n, int lo, int hi, int32_t *out, size_t max) {
    for (int k = hi; k >= lo; k--) {
        if ((size_t)k >= n) continue;
        long best = -1;
        for (size_t i = 0; i + (size_t)k < n; i++) {
            int same = 1;
            for (int j = 0; j < k; j++) same = same && h[i + (size_t)j] == h[n - (size_t)k + (size_t)j];
            if (same) best = (long)i;
        }
        if (best < 0) continue;
        size_t take = 0;
        for (size_t p = (size_t)best + (size_t)k; p < n && take < max; p++) out[take++] = h[p];
        return take;
    }
    return 0;
}

int main(void) {
    int32_t out[16], want[16];
    /* "a b c d a b" -> the 2-gram "a b" matched at 0: c d a b follow */
    const int32_t h1[] = {1, 2, 3, 4, 1, 2};
    size_t n = pl_lookup_draft(h1, 6, 1, 3, out, 8);
    CHECK(n == 4 && out[0] == 3 && out[1] == 4 && out[2] == 1 && out[3] == 2);
    CHECK(pl_lookup_draft(h1, 6, 1, 3, out, 2) == 2 && out[0] == 3 && out[1] == 4);
    /* the latest of two matches */
    const int32_t h2[] = {7, 8, 9, 7, 8, 5, 7, 8};
    n = pl_lookup_draft(h2, 8, 2, 2, out, 4);
    CHECK(n == 3 && out[0] == 5 && out[1] == 7 && out[2] == 8);
    /* no match; arguments refused */
    const int32_t h3[] = {1, 2, 3};
    CHECK(pl_lookup_draft(h3, 3, 1, 2, out, 4) == 0);
    CHECK(pl_lookup_draft(h3, 3, 0, 2, out, 4) == 0 && pl_lookup_draft(h3, 3, 3, 2, out, 4) == 0);
    CHECK(pl_lookup_draft(h3, 3, 1, 2, out, 0) == 0 && pl_lookup_draft(NULL, 3, 1, 2, out, 4) == 0);
    /* random histories over a small alphabet, against the naive scan */
    srand(7);
    int32_t h[64];
    for (int t = 0; t < 20000; t++) {
        size_t len = 1 + (size_t)(rand() % 64);
        for (size_t i = 0; i < len; i++) h[i] = rand() % 4;
        int lo = 1 + rand() % 3, hi = lo + rand() % 4;
        size_t max = (size_t)(1 + rand() % 16);
        size_t a = pl_lookup_draft(h, len, lo, hi, out, max), b = naive(h, len, lo, hi, want, max);
        CHECK_MSG(a == b && memcmp(out, want, a * sizeof *out) == 0, "history of %zu, n-grams %d..%d", len, lo, hi);
    }
    TEST_DONE();
}
