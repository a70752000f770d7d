/*
 * simd_arm.h -- small NEON helpers shared by the AArch64 kernel files.
 * Included by files compiled for different -march levels (kernels_neon.c at
 * Armv8.0-A, kernels_dotprod.c with +dotprod, kernels_i8mm.c with +i8mm):
 * every helper is static inline and picks its instructions from the
 * compiler's feature macros, so one source serves each tier.
 */
#ifndef PL_QUANT_SIMD_ARM_H
#define PL_QUANT_SIMD_ARM_H

#include <arm_neon.h>
#include <stdint.h>
#include <string.h>

#define PL_ALWAYS_INLINE static inline __attribute__((always_inline))

/* acc + the dot products of a and b, four bytes per lane.  With dotprod one
 * SDOT; without it two widening multiplies and pairwise adds.  The lanes'
 * split of the 16 products differs between the two, their sum does not (all
 * of it is exact integer arithmetic), and callers only use the sum of the
 * four lanes (vaddvq_s32) or scale whole lanes by one factor. */
PL_ALWAYS_INLINE int32x4_t pl_dot_s8(int32x4_t acc, int8x16_t a, int8x16_t b) {
#if defined(__ARM_FEATURE_DOTPROD)
    return vdotq_s32(acc, a, b);
#else
    const int16x8_t lo = vmull_s8(vget_low_s8(a), vget_low_s8(b));
    const int16x8_t hi = vmull_high_s8(a, b);
    return vpadalq_s16(vpadalq_s16(acc, lo), hi);
#endif
}

/* f16 bits -> f32 (exact; FCVTL is Armv8.0-A) */
PL_ALWAYS_INLINE float32x4_t pl_f16x4_to_f32(const uint16_t *p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }

PL_ALWAYS_INLINE float pl_f16_to_f32_neon(uint16_t h) { return vgetq_lane_f32(vcvt_f32_f16(vreinterpret_f16_u16(vdup_n_u16(h))), 0); }

#endif
