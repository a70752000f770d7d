/*
 * compare.c -- the agreement rules of compare.h.
 */
#include "compare.h"

#include <math.h>
#include <stdbool.h>

size_t row_argmax(const float *row, size_t n, double *margin) {
    size_t best = 0;
    double top = -INFINITY, second = -INFINITY;
    for (size_t j = 0; j < n; j++) {
        double v = row[j];
        if (v > top) {
            second = top;
            top = v;
            best = j;
        } else if (v > second) {
            second = v;
        }
    }
    if (margin) *margin = n > 1 ? top - second : INFINITY;
    return best;
}

void compare_logits(const float *ours, const float *ref, size_t positions, size_t vocab, double margin,
                    const unsigned char *skip, logit_report *r) {
    r->positions = positions;
    r->decidable = r->skipped = r->agree = r->router_skipped = 0;
    r->first_disagree = SIZE_MAX;
    r->max_abs_diff = r->max_abs_diff_skipped = 0;
    r->min_margin = INFINITY;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t p = 0; p < positions; p++) {
        const float *a = ours + p * vocab, *b = ref + p * vocab;
        const bool router_tie = skip && skip[p];
        double *diff = router_tie ? &r->max_abs_diff_skipped : &r->max_abs_diff;
        for (size_t j = 0; j < vocab; j++) {
            double d = fabs((double)a[j] - (double)b[j]);
            if (d > *diff || isnan(d)) *diff = isnan(d) ? INFINITY : d;
            if (b[j] < lo) lo = b[j];
            if (b[j] > hi) hi = b[j];
        }
        double m;
        size_t rb = row_argmax(b, vocab, &m);
        if (m < r->min_margin) r->min_margin = m;
        if (router_tie) {
            r->router_skipped++;
            continue;
        }
        if (m <= margin) {
            r->skipped++;
            continue;
        }
        r->decidable++;
        if (row_argmax(a, vocab, NULL) == rb) r->agree++;
        else if (r->first_disagree == SIZE_MAX) r->first_disagree = p;
    }
    r->ref_range = hi - lo;
}

void compare_tokens(const int32_t *ours, size_t n_ours, const int32_t *ref, size_t n_ref,
                    const double *ref_margins, double margin, token_report *r) {
    r->compared = 0;
    r->first_diff = SIZE_MAX;
    r->first_tie = SIZE_MAX;
    size_t n = n_ours < n_ref ? n_ours : n_ref;
    for (size_t i = 0; i < n; i++) {
        if (ref_margins && ref_margins[i] <= margin && r->first_tie == SIZE_MAX) r->first_tie = i;
        if (r->first_tie != SIZE_MAX) break; /* past a near-tie either continuation is right */
        r->compared++;
        if (ours[i] != ref[i]) {
            r->first_diff = i;
            break;
        }
    }
    /* one sequence ending early (an end-of-generation token) before a tie is a difference */
    if (r->first_diff == SIZE_MAX && r->first_tie == SIZE_MAX && n_ours != n_ref) r->first_diff = n;
    r->agree = r->first_diff == SIZE_MAX;
}
