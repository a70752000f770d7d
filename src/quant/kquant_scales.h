/*
 * kquant_scales.h -- unpacking the packed sub-block scales of the
 * k-quants: q3_K's sixteen 6-bit scales (stored with a +32 bias) and the
 * eight 6-bit scale/min pairs of q4_K and q5_K.
 */
#ifndef PL_QUANT_KQUANT_SCALES_H
#define PL_QUANT_KQUANT_SCALES_H

#include <stdint.h>
#include <string.h>

/* q3_K: sc[k] in [0, 63]; the scale is sc[k] - 32.  Low 4 bits in the
 * nibbles of bytes 0..7, high 2 bits in bytes 8..11. */
static inline void pl_q3k_scales(const uint8_t packed[12], int8_t sc[16]) {
    for (int k = 0; k < 16; k++) {
        int lo = k < 8 ? packed[k] & 0xf : packed[k - 8] >> 4;
        int hi = (packed[8 + k % 4] >> (2 * (k / 4))) & 3;
        sc[k] = (int8_t)(lo | (hi << 4));
    }
}

/* q4_K/q5_K: scale and min of sub-block j (0..7), each 6 bits. */
static inline void pl_k4_scale_min(int j, const uint8_t *q, uint8_t *d, uint8_t *m) {
    if (j < 4) {
        *d = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *d = (uint8_t)((q[j + 4] & 0xf) | ((q[j - 4] >> 6) << 4));
        *m = (uint8_t)((q[j + 4] >> 4) | ((q[j - 0] >> 6) << 4));
    }
}

/* q4_K/q5_K: all 8 scales and 8 mins at once, llama.cpp's 32-bit
 * unpacking: bytes 0-7 of u are the scales, bytes 8-15 the mins (the SIMD
 * kernels widen them from there). */
static inline void pl_k4_scales_mins_words(const uint8_t packed[12], uint32_t u[4]) {
    memcpy(u, packed, 12);
    u[3] = ((u[2] >> 4) & 0x0f0f0f0f) | (((u[1] >> 6) & 0x03030303) << 4);
    const uint32_t uaux = u[1] & 0x3f3f3f3f;
    u[1] = (u[2] & 0x0f0f0f0f) | (((u[0] >> 6) & 0x03030303) << 4);
    u[2] = uaux;
    u[0] &= 0x3f3f3f3f;
}

#endif
