/*
 * rng.h -- a small, fast, seedable generator (xoshiro256** seeded through
 * splitmix64) so that synthetic weights, sampling and test inputs are the
 * same on every machine for the same seed.
 */
#ifndef PL_RNG_H
#define PL_RNG_H

#include <stdint.h>

typedef struct pl_rng {
    uint64_t s[4];
} pl_rng;

static inline uint64_t pl_splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline void pl_rng_seed(pl_rng *r, uint64_t seed) {
    for (int i = 0; i < 4; i++) r->s[i] = pl_splitmix64(&seed);
}

static inline uint64_t pl_rng_next(pl_rng *r) {
    uint64_t *s = r->s;
    uint64_t x = s[1] * 5;
    uint64_t result = ((x << 7) | (x >> 57)) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return result;
}

/* Uniform in [0, 1) with 24 bits (exactly representable as float). */
static inline float pl_rng_uniform(pl_rng *r) { return (float)(pl_rng_next(r) >> 40) * (1.0f / 16777216.0f); }

/* Uniform in [0, 1) with 53 bits. */
static inline double pl_rng_uniform_f64(pl_rng *r) { return (double)(pl_rng_next(r) >> 11) * (1.0 / 9007199254740992.0); }

/* Uniform integer in [0, n), n > 0 (rejection-free multiply-shift; bias < 2^-32 for n < 2^32). */
static inline uint64_t pl_rng_below(pl_rng *r, uint64_t n) {
    return (uint64_t)(((unsigned __int128)pl_rng_next(r) * n) >> 64);
}

#endif
