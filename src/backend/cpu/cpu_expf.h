/*
 * cpu_expf.h -- e^x for the flash path's online softmax (the vector
 * flash_weights kernels, AVX2 and AVX-512), bit for bit the expf of glibc
 * 2.28 and later as its x86-64 FMA build computes it (__expf_fma): the
 * expf the reference op's pl_flash_step calls, and llama.cpp's CPU flash
 * attention with it.  A vector e^x of our own (exp8 / exp16) would differ
 * from it in the last bit now and then, and the flash path must keep the
 * reference's bits.
 *
 * The method is glibc's (from ARM's optimized-routines): in double, z = x *
 * 32/ln2, k = z rounded to an integer by adding 1.5 * 2^52, r = z - k; then
 * e^x = 2^(k/32) * (1 + C2 r + C1 r^2 + C0 r^3), where 2^(k/32) is 2^(k div
 * 32) put into the exponent of table entry k mod 32; one rounding to float
 * at the end.  It holds for |x| < 88 (glibc's fast path; its top 12 bits
 * below PL_EXPF_TOP_LIMIT): the kernels hand anything else (large
 * magnitudes, infinities, NaN) to libm's expf itself.
 *
 * pl_expf_model is the scalar statement of what every vector lane
 * computes; unit/test_ops holds the kernels to it and to libm's expf.
 * Where the C library's expf is another one (musl, an old glibc),
 * pl_expf_matches_libm says so and the callers keep the scalar loop.
 * Debian's arm64 glibc is one: it agrees with the model on a sweep of 4.2
 * million arguments but not on -0x1.f8cbb2p+5 (its r is not formed by one
 * fused operation), so NEON has no flash_weights kernel.
 */
#ifndef PL_CPU_EXPF_H
#define PL_CPU_EXPF_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Entry i: the bits of 2^(i/32) rounded to double, minus i << 47, so that
 * adding k << 47 (k's low 5 bits being i) yields the bits of 2^(k/32).
 * The values of glibc's __exp2f_data.tab; they are also what
 *   python3 -c "from decimal import *; import struct; getcontext().prec=60;
 *   [print(hex(struct.unpack('<Q', struct.pack('<d', float(Decimal(2) **
 *   (Decimal(i) / 32))))[0] - (i << 47))) for i in range(32)]"
 * prints. */
static const uint64_t pl_expf_tab[32] = {
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51, 0x3fef72b83c7d517b,
    0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1, 0x3fef06fe0a31b715, 0x3feef1a7373aa9cb,
    0x3feedea64c123422, 0x3feece086061892d, 0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429,
    0x3feea47eb03a5585, 0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d, 0x3feee89f995ad3ad,
    0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069, 0x3fef5818dcfba487, 0x3fef7c97337b9b5f,
    0x3fefa4afa2a490da, 0x3fefd0765b6e4540,
};

/* glibc's constants (__exp2f_data): 32/ln2, the rounding shift 1.5 * 2^52,
 * and its cubic's coefficients scaled by 32^-3, 32^-2, 32^-1 */
#define PL_EXPF_INVLN2N 0x1.71547652b82fep+5
#define PL_EXPF_SHIFT 0x1.8p+52
#define PL_EXPF_C0 0x1.c6af84b912394p-20
#define PL_EXPF_C1 0x1.ebfce50fac4f3p-13
#define PL_EXPF_C2 0x1.62e42ff0c52d6p-6
/* the fast path: (bits of x >> 20) & 0x7ff below this (|x| < 88) */
#define PL_EXPF_TOP_LIMIT 0x42b
/* The one negative float of the fast path whose e^x changes when r is
 * formed by a multiply and a subtraction instead of one fused operation
 * (an exhaustive search here): the argument that tells such an expf
 * (Debian's arm64 glibc) from glibc's x86-64 FMA build. */
#define PL_EXPF_FUSED_R_ARG (-0x1.f8cbb2p+5f)

/* e^x as one vector lane computes it; libm's expf outside the fast path */
static inline float pl_expf_model(float x) {
    uint32_t ux;
    memcpy(&ux, &x, 4);
    if (((ux >> 20) & 0x7ff) >= PL_EXPF_TOP_LIMIT) return expf(x);
    const double xd = x, z = fma(PL_EXPF_INVLN2N, xd, PL_EXPF_SHIFT);
    uint64_t ki, t;
    memcpy(&ki, &z, 8);
    const double kd = z - PL_EXPF_SHIFT, r = fma(PL_EXPF_INVLN2N, xd, -kd);
    t = pl_expf_tab[ki & 31] + (ki << 47);
    double s;
    memcpy(&s, &t, 8);
    const double p = fma(PL_EXPF_C0, r, PL_EXPF_C1), r2 = r * r;
    const double y = fma(p, r2, fma(PL_EXPF_C2, r, 1.0));
    return (float)(y * s);
}

/* The C library's expf of x, called at run time.  A compiler folds expf of
 * a constant argument into its own correctly rounded e^x (GCC through
 * MPFR), which is not what the library computes: probing libm with a
 * literal argument asks the compiler instead. */
static inline float pl_libm_expf(float x) {
    volatile float v = x;
    return expf(v);
}

/* Whether this C library's expf agrees with pl_expf_model, judged on a
 * spread of arguments over the fast path (every exponent, both signs) and
 * PL_EXPF_FUSED_R_ARG; computed once (cpu_attention.c). */
bool pl_expf_matches_libm(void);

#endif
