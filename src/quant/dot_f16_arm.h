/*
 * dot_f16_arm.h -- the NEON f16 dot product, one always-inlined core for
 * the quant NEON tier's vec_dot, tile and rows kernels
 * (quant/dots_arm_float.h) and the CPU backend's attention row kernels
 * (backend/cpu/isa_neon.c), so that all of them give the same bits.
 *
 * The dot of n f16 values, by definition:
 *   - the elements are taken in chunks of 4 (element 4c .. 4c + 3 is chunk
 *     c); the row is zero-padded to a whole number of 16-element groups;
 *   - chunk c is widened to f32 (exact) and added by one FMA per lane into
 *     accumulator c % 4 (four f32x4 accumulators starting at +0), chunks in
 *     order;
 *   - the result is vaddvq_f32((s0 + s1) + (s2 + s3)), i.e. lanes
 *     (l0 + l1) + (l2 + l3).
 * The padding only adds fma(0, 0, acc) = acc + 0, which changes no bits (a
 * sum that starts at +0 never becomes -0 under round-to-nearest), but it is
 * part of the definition all the kernels share.  Products of f16 values
 * are exact in f32, so only the summation order differs from the
 * reference's; the arithmetic is f32 FMA, never f16.
 */
#ifndef PL_QUANT_DOT_F16_ARM_H
#define PL_QUANT_DOT_F16_ARM_H

#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "quant/simd_arm.h"

/* The most rows and columns one core call takes (accumulators: 4 per
 * entry, so rows x cols <= 4 keeps them in 16 registers). */
#define PL_F16_CORE_MAX 4

/* full unrolling of the constant-count loops over rows, columns and
 * accumulators, so that the accumulator arrays become registers */
#define PL_UNROLL _Pragma("GCC unroll 16")

/* One 16-element group of every (row, column) pair: x rows' 16 values at
 * xr[r], columns' at yc[c] (f16) or ycf[c] (already f32, when pre). */
PL_ALWAYS_INLINE void pl_f16_core_group(const uint16_t *const *xr, const uint16_t *const *yc, const float *const *ycf,
                                        float32x4_t acc[PL_F16_CORE_MAX][PL_F16_CORE_MAX][4], const int nr, const int nc,
                                        const int pre) {
    PL_UNROLL for (int h = 0; h < 2; h++) {
        float32x4_t xv[PL_F16_CORE_MAX][2];
        PL_UNROLL for (int r = 0; r < nr; r++) {
            const uint16x8_t raw = vld1q_u16(xr[r] + 8 * h);
            xv[r][0] = vcvt_f32_f16(vreinterpret_f16_u16(vget_low_u16(raw)));
            xv[r][1] = vcvt_high_f32_f16(vreinterpretq_f16_u16(raw));
        }
        PL_UNROLL for (int c = 0; c < nc; c++) {
            float32x4_t y0, y1;
            if (pre) {
                y0 = vld1q_f32(ycf[c] + 8 * h);
                y1 = vld1q_f32(ycf[c] + 8 * h + 4);
            } else {
                const uint16x8_t raw = vld1q_u16(yc[c] + 8 * h);
                y0 = vcvt_f32_f16(vreinterpret_f16_u16(vget_low_u16(raw)));
                y1 = vcvt_high_f32_f16(vreinterpretq_f16_u16(raw));
            }
            PL_UNROLL for (int r = 0; r < nr; r++) {
                acc[r][c][2 * h] = vfmaq_f32(acc[r][c][2 * h], xv[r][0], y0);
                acc[r][c][2 * h + 1] = vfmaq_f32(acc[r][c][2 * h + 1], xv[r][1], y1);
            }
        }
    }
}

/* out[c][r] = dot(n, x[r], y[c]) for r < nr, c < nc (constants where
 * inlined).  y is f16 (y16) or, when pre, f32 values already widened
 * (yf[c], zero-padded to a multiple of 16 floats).  Reads no element past
 * n of any f16 row. */
PL_ALWAYS_INLINE void pl_f16_dot_core(int64_t n, const uint16_t *const *x, const uint16_t *const *y16, const float *const *yf,
                                      float *const *out, const int nr, const int nc, const int pre) {
    float32x4_t acc[PL_F16_CORE_MAX][PL_F16_CORE_MAX][4];
    PL_UNROLL for (int r = 0; r < nr; r++)
        PL_UNROLL for (int c = 0; c < nc; c++)
            PL_UNROLL for (int k = 0; k < 4; k++) acc[r][c][k] = vdupq_n_f32(0.0f);
    const int64_t n16 = n & ~(int64_t)15;
    const uint16_t *xr[PL_F16_CORE_MAX] = {0}, *yc[PL_F16_CORE_MAX] = {0};
    const float *ycf[PL_F16_CORE_MAX] = {0};
    for (int64_t i = 0; i < n16; i += 16) {
        PL_UNROLL for (int r = 0; r < nr; r++) xr[r] = x[r] + i;
        PL_UNROLL for (int c = 0; c < nc; c++) {
            if (pre) ycf[c] = yf[c] + i;
            else yc[c] = y16[c] + i;
        }
        pl_f16_core_group(xr, yc, ycf, acc, nr, nc, pre);
    }
    if (n16 < n) { /* the last group, zero-padded copies of the rows' ends */
        const size_t left = (size_t)(n - n16);
        uint16_t xt[PL_F16_CORE_MAX][16], yt[PL_F16_CORE_MAX][16];
        PL_UNROLL for (int r = 0; r < nr; r++) {
            memset(xt[r], 0, sizeof xt[r]);
            memcpy(xt[r], x[r] + n16, left * sizeof(uint16_t));
            xr[r] = xt[r];
        }
        PL_UNROLL for (int c = 0; c < nc; c++) {
            if (pre) {
                ycf[c] = yf[c] + n16;
            } else {
                memset(yt[c], 0, sizeof yt[c]);
                memcpy(yt[c], y16[c] + n16, left * sizeof(uint16_t));
                yc[c] = yt[c];
            }
        }
        pl_f16_core_group(xr, yc, ycf, acc, nr, nc, pre);
    }
    PL_UNROLL for (int r = 0; r < nr; r++)
        PL_UNROLL for (int c = 0; c < nc; c++)
            out[c][r] = vaddvq_f32(vaddq_f32(vaddq_f32(acc[r][c][0], acc[r][c][1]), vaddq_f32(acc[r][c][2], acc[r][c][3])));
}

/* q (n f16 values) widened once into qf, zero-padded to a multiple of 16
 * floats: the `pre` operand of pl_f16_dot_core. */
PL_ALWAYS_INLINE void pl_f16_widen_padded(const uint16_t *q, int64_t n, float *qf) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const uint16x8_t raw = vld1q_u16(q + i);
        vst1q_f32(qf + i, vcvt_f32_f16(vreinterpret_f16_u16(vget_low_u16(raw))));
        vst1q_f32(qf + i + 4, vcvt_high_f32_f16(vreinterpretq_f16_u16(raw)));
    }
    const int64_t end = (n + 15) & ~(int64_t)15;
    if (i < end) {
        uint16_t t[16] = {0};
        memcpy(t, q + i, (size_t)(n - i) * sizeof(uint16_t));
        for (int64_t j = 0; i + j < end; j += 4) vst1q_f32(qf + i + j, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(t + j))));
    }
}

#endif
