/*
 * kquant_scales.h -- unpacking the packed sub-block scales of the
 * k-quants: q3_K's sixteen 6-bit scales (stored with a +32 bias) and the
 * eight 6-bit scale/min pairs of q4_K and q5_K.
 */
#ifndef PL_QUANT_KQUANT_SCALES_H
#define PL_QUANT_KQUANT_SCALES_H

#include <stdint.h>

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

#endif
