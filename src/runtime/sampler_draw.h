/*
 * sampler_draw.h -- the seeded draw over weighted candidates, in the order
 * the sampler defines (descending logit, then ascending id): the candidate
 * whose span of the cumulative weights, summed in that order, holds r.
 * Sorting 151936 candidates for every sampled token costs more than the
 * forward pass of a small model, so the draw is made by selection instead
 * (quickselect on the order, descending into the side whose weight holds
 * r); the sorted walk it must agree with is kept for the tests.
 */
#ifndef PL_SAMPLER_DRAW_H
#define PL_SAMPLER_DRAW_H

#include <stddef.h>
#include <stdint.h>

typedef struct pl_wcand {
    double w;      /* the weight (exp of the tempered logit, relative to the best) */
    float logit;   /* the order: descending logit, then ascending id */
    int32_t id;
} pl_wcand;

/* The index into c of the candidate drawn for r in [0, total weight);
 * reorders c.  Past the total (rounding): the last in the order. */
size_t pl_draw_select(pl_wcand *c, size_t n, double r);
/* The same when c is in that order already: the walk along it. */
size_t pl_draw_walk(const pl_wcand *c, size_t n, double r);
/* The same by sorting c and walking it (the reference). */
size_t pl_draw_sorted(pl_wcand *c, size_t n, double r);

#endif
