/*
 * checked.h -- overflow-safe size arithmetic.  Every size that comes from a
 * file goes through these before it is used to index or allocate.
 */
#ifndef PL_CHECKED_H
#define PL_CHECKED_H

#include <stdbool.h>
#include <stdint.h>

/* *out = a + b; false on overflow. */
static inline bool pl_add_u64(uint64_t a, uint64_t b, uint64_t *out) {
    return !__builtin_add_overflow(a, b, out);
}

/* *out = a * b; false on overflow. */
static inline bool pl_mul_u64(uint64_t a, uint64_t b, uint64_t *out) {
    return !__builtin_mul_overflow(a, b, out);
}

/* Round x up to a multiple of the power of two `align`; false on overflow. */
static inline bool pl_align_up_u64(uint64_t x, uint64_t align, uint64_t *out) {
    uint64_t t;
    if (!pl_add_u64(x, align - 1, &t)) return false;
    *out = t & ~(align - 1);
    return true;
}

static inline bool pl_is_pow2(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

#endif
