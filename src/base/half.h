/*
 * half.h -- IEEE half (f16) and bfloat16 conversions, bit-exact with
 * llama.cpp's scalar paths: f32 -> f16 rounds to nearest even (as F16C
 * does), f32 -> bf16 rounds to nearest even and keeps NaNs quiet.
 */
#ifndef PL_HALF_H
#define PL_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t pl_f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static inline float pl_bits_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* f16 -> f32, exact. */
static inline float pl_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    if (exp == 0x1f) return pl_bits_f32(sign | 0x7f800000u | (man << 13)); /* inf / nan */
    if (exp == 0) {
        if (man == 0) return pl_bits_f32(sign);
        /* subnormal: value = man * 2^-24 */
        float f = (float)man * 5.9604644775390625e-8f;
        return sign ? -f : f;
    }
    return pl_bits_f32(sign | ((exp + 112) << 23) | (man << 13));
}

/* f32 -> f16, round to nearest even; overflow to inf; NaN stays NaN. */
static inline uint16_t pl_f32_to_f16(float f) {
    uint32_t x = pl_f32_bits(f);
    uint32_t sign = (x >> 16) & 0x8000;
    uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00 | ((ax >> 13) & 0x3ff)); /* nan */
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00);                         /* >= 65520: inf */
    if (ax < 0x38800000u) {
        /* result is subnormal or zero: scale so the integer part is the mantissa */
        float a = pl_bits_f32(ax) * 16777216.0f; /* * 2^24, exact */
        /* rint with the default rounding mode rounds half to even */
        uint32_t m = (uint32_t)__builtin_rintf(a);
        return (uint16_t)(sign | m);
    }
    uint32_t mant_odd = (ax >> 13) & 1;
    ax += 0xfff + mant_odd;          /* round to nearest even at bit 13 */
    ax -= 0x38000000u;               /* rebias exponent 127 -> 15 */
    return (uint16_t)(sign | (ax >> 13));
}

/* bf16 -> f32, exact. */
static inline float pl_bf16_to_f32(uint16_t h) { return pl_bits_f32((uint32_t)h << 16); }

/* f32 -> bf16, round to nearest even; NaN forced quiet (as ggml does). */
static inline uint16_t pl_f32_to_bf16(float f) {
    uint32_t u = pl_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 64);
    return (uint16_t)((u + (0x7fffu + ((u >> 16) & 1))) >> 16);
}

#endif
