/*
 * sampler_draw.c -- the draw of sampler_draw.h: by selection, and the
 * walk along sorted candidates (top-p's draw, and with a sort the
 * reference the selection is tested against).
 */
#include <stdlib.h>

#include "runtime/sampler_draw.h"

/* before(a, b): a comes first in the order */
static int cmp(const pl_wcand *a, const pl_wcand *b) {
    if (a->logit != b->logit) return a->logit > b->logit ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

static int cmp_q(const void *a, const void *b) { return cmp(a, b); }

static void swap(pl_wcand *a, pl_wcand *b) {
    const pl_wcand t = *a;
    *a = *b;
    *b = t;
}

size_t pl_draw_walk(const pl_wcand *c, size_t n, double r) {
    double acc = 0.0;
    for (size_t i = 0; i < n; i++) {
        acc += c[i].w;
        if (r < acc) return i;
    }
    return n - 1;
}

size_t pl_draw_sorted(pl_wcand *c, size_t n, double r) {
    qsort(c, n, sizeof *c, cmp_q);
    return pl_draw_walk(c, n, r);
}

size_t pl_draw_select(pl_wcand *c, size_t n, double r) {
    size_t lo = 0, hi = n; /* the pick lies in [lo, hi); r is relative to c[lo]'s start */
    while (hi - lo > 1) {
        /* three-way partition around the middle element: [lo, lt) before
         * it, [lt, gt) equal to it (one candidate: ids are distinct), [gt, hi) after */
        const pl_wcand pivot = c[lo + (hi - lo) / 2];
        size_t lt = lo, i = lo, gt = hi;
        double w_before = 0.0;
        while (i < gt) {
            const int o = cmp(&c[i], &pivot);
            if (o < 0) {
                w_before += c[i].w;
                swap(&c[lt++], &c[i++]);
            } else if (o > 0) {
                swap(&c[--gt], &c[i]);
            } else {
                i++;
            }
        }
        if (r < w_before) {
            hi = lt;
            continue;
        }
        r -= w_before;
        /* the pivot itself (ids are distinct, so [lt, gt) is just it) */
        if (r < c[lt].w || gt == hi) return lt;
        r -= c[lt].w;
        lo = gt;
    }
    return lo;
}
