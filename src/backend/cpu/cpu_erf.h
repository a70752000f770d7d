/*
 * cpu_erf.h -- the erf of the vector gelu_erf kernels (AVX2, AVX-512, NEON):
 * erf(s) = s * g(s^2) with g(u) = erf(sqrt u) / sqrt u, a degree-22
 * polynomial in t = u / 8 - 1 over u in [0, 16] (Chebyshev interpolant of
 * g converted to powers of t), evaluated in double by Horner with fused
 * multiply-adds; s clamped to [-4, 4] (past 4, erf rounds to 1 in float).
 * Relative error about 4e-13 before the rounding to float, so the float
 * erf is the correctly rounded one but where the true value lies within
 * 4e-13 of a rounding boundary; libm's erff (which the reference and ggml
 * call) is within an ulp of it, so most results are bit for bit the
 * reference's.  GELU is then formed in float in ggml's order.
 *
 * pl_gelu_erf_model is the scalar statement of what every vector kernel
 * computes, lane for lane, bit for bit (unit/test_ops holds them to it).
 */
#ifndef PL_CPU_ERF_H
#define PL_CPU_ERF_H

#include <math.h>

#define PL_ERF_NCOEF 23
/* powers t^0 .. t^22 */
static const double pl_erf_coef[PL_ERF_NCOEF] = {
    0.35353099564338764,
    -0.17657623330399316,
    0.13167511689968869,
    -0.10771044229947456,
    0.090208993875337179,
    -0.074727871662727208,
    0.059886909381808469,
    -0.045765039920974332,
    0.033060590467983222,
    -0.022474034391340183,
    0.014349837455242995,
    -0.0086043438673272521,
    0.0048526991480117229,
    -0.0025830616260720521,
    0.0012946077416273029,
    -0.0006048212241895356,
    0.00027244095229377762,
    -0.00012652732473185325,
    5.0998210780335286e-05,
    -1.2620635793609832e-05,
    4.8665918620827149e-06,
    -4.5892181697126946e-06,
    1.525252555438783e-06,
};
#define PL_ERF_SQRT_2_INV 0.70710678118654752440084436210484f

static inline float pl_gelu_erf_model(float x) {
    const float s = x * PL_ERF_SQRT_2_INV;
    /* NaN stays NaN through the clamp */
    const double c = s > 4.0f ? 4.0 : s < -4.0f ? -4.0 : (double)s;
    const double t = c * c * 0.125 - 1.0; /* exact: c * c has 48 bits */
    double p = pl_erf_coef[PL_ERF_NCOEF - 1];
    for (int k = PL_ERF_NCOEF - 2; k >= 0; k--) p = fma(p, t, pl_erf_coef[k]);
    const float e = (float)(c * p);
    return x == -INFINITY ? -0.0f : 0.5f * x * (1.0f + e);
}

#endif
