/*
 * quant_util.h -- small numeric helpers shared by the quant kernels, each
 * reproducing one conversion exactly as llama.cpp's compiled code performs
 * it on x86-64 (so results match bit for bit, including the odd cases).
 */
#ifndef PL_QUANT_UTIL_H
#define PL_QUANT_UTIL_H

#include <stdint.h>
#include <string.h>

#include "base/half.h"

/* f16 -> f32 as ggml's scalar path computes it: exact, and NaNs come out
 * quiet (ggml's multiply-based conversion quiets a signalling NaN). */
static inline float pl_q_f16(uint16_t h) {
    if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff))
        return pl_bits_f32(((uint32_t)(h & 0x8000) << 16) | 0x7fc00000u | ((uint32_t)(h & 0x3ff) << 13));
    return pl_f16_to_f32(h);
}

/* An e8m0 exponent byte as the float 2^(e-128): half the MX scale, since
 * the e2m1 value table is stored doubled.  e = 0 and 1 are subnormal. */
static inline float pl_q_e8m0_half(uint8_t e) {
    return pl_bits_f32(e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23);
}

/* llama.cpp's nearest_int: round half to even through the 1.5*2^23 magic
 * constant.  Exact for |x| <= 2^22; outside that (or for inf/NaN) it still
 * returns what the bit trick gives, as llama.cpp's does. */
static inline int pl_q_nearest_int(float x) {
    float v = x + 12582912.f;
    int32_t i;
    memcpy(&i, &v, sizeof i);
    return (i & 0x007fffff) - 0x00400000;
}

/* What x86's cvttss2si / cvtps2dq give for a float already integral or to
 * be truncated: the integer when it fits in int32, INT32_MIN otherwise
 * (NaN, inf, out of range) -- the "integer indefinite" value.  Used where
 * llama.cpp converts floats to small ints with a plain C cast, whose
 * out-of-range behaviour on x86 is this. */
static inline int32_t pl_q_trunc_i32(float x) {
    if (!(x > -2147483904.0f && x < 2147483648.0f)) return INT32_MIN;
    return (int32_t)x;
}

/* Round to nearest, ties to even, then convert as cvtps2dq does. */
static inline int32_t pl_q_rne_i32(float x) { return pl_q_trunc_i32(__builtin_rintf(x)); }

/* Saturate an int32 to int8 as the packs_epi32 + packs_epi16 pair does. */
static inline int8_t pl_q_sat_i8(int32_t v) { return (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v); }

#endif
