/*
 * quant_testdata.h -- test inputs for the quant kernels: blocks of any
 * type (random with sane scales, fully random bytes, "exact" blocks whose
 * dot products are exact in float whatever the summation order, and edge
 * blocks: zero/extreme/inf/NaN scales, all-equal bytes), f32 rows of
 * several distributions, importance matrices, and the tolerance that float
 * summation order allows between two dot products of the same bytes.
 */
#ifndef PL_TEST_QUANT_TESTDATA_H
#define PL_TEST_QUANT_TESTDATA_H

#include <stdint.h>

#include "base/rng.h"

typedef enum qt_mode {
    QT_RANDOM, /* random quants, scales finite and moderate */
    QT_WILD,   /* every byte random (scales may be inf/NaN/huge) */
    QT_EXACT,  /* power-of-two scales, small integers: every sum exact in f32 */
    QT_EDGE    /* block i gets edge case i mod QT_EDGE_KINDS */
} qt_mode;

#define QT_EDGE_KINDS 14

/* Fill nblocks blocks of `type` at dst.  Activation types (q8_0, q8_1,
 * q8_K) come out as a real activation encoder would make them: quants in
 * [-127, 127] (QT_EXACT: [-3, 3]) and consistent sums. */
void qt_gen_blocks(uint32_t type, qt_mode mode, pl_rng *r, void *dst, int64_t nblocks);

/* n f32 values of distribution `dist` (0..QT_DISTS-1): normal, uniform,
 * normal with outliers, with zero runs, constant, tiny, large, heavy-tailed,
 * rounding ties (half-integers, every 16th value +-127 so scales come out
 * exact and x*scale lands on .5), small integers. */
#define QT_DISTS 10
void qt_gen_floats(pl_rng *r, float *dst, int64_t n, int dist);

/* n importance weights (positive, a few zero, widely spread). */
void qt_gen_imatrix(pl_rng *r, float *dst, int64_t n);

/* The largest difference two correct dot products of weight row w (type
 * wtype) and activation row a may show from summing in different orders:
 * 2 * (blocks + 64) * 2^-24 * M, where M bounds every partial sum by
 * sum_i (|w_i| + |offset of w_i's block|) * |a_i| over decoded values. */
double qt_dot_tolerance(uint32_t wtype, const void *w, const void *a, int64_t n);

#endif
