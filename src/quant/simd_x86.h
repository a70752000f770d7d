/*
 * simd_x86.h -- small vector helpers shared by the x86 kernel files.  Only
 * included by files compiled with the matching -m flags; every helper is
 * static inline so nothing ISA-specific leaks into other objects.
 */
#ifndef PL_QUANT_SIMD_X86_H
#define PL_QUANT_SIMD_X86_H

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

/* Sum of the 8 floats of v (pairwise: high+low halves, then within). */
static inline float pl_hsum_ps256(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_extractf128_ps(v, 1), _mm256_castps256_ps128(v));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

static inline int32_t pl_hsum_epi32_256(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_extracti128_si256(v, 1), _mm256_castsi256_si128(v));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    return _mm_cvtsi128_si32(s);
}

/* Max of the 8 floats of v. */
static inline float pl_hmax_ps256(__m256 v) {
    __m128 m = _mm_max_ps(_mm256_extractf128_ps(v, 1), _mm256_castps256_ps128(v));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}

/* Load an f16 pair-free scalar as float (F16C, exact). */
static inline float pl_f16_load(uint16_t h) { return _cvtsh_ss(h); }

/* Signed bytes x.y summed in pairs to 16 int16 -> pairs again to 8 int32.
 * |x| is unsigned, y takes x's sign: valid for y != -128. */
static inline __m256i pl_dot_i8_256(__m256i x, __m256i y) {
    __m256i ax = _mm256_sign_epi8(x, x);
    __m256i sy = _mm256_sign_epi8(y, x);
    __m256i p16 = _mm256_maddubs_epi16(ax, sy);
    return _mm256_madd_epi16(p16, _mm256_set1_epi16(1));
}

#endif
