/*
 * clock.h -- monotonic time for progress reports and benchmarks.
 */
#ifndef PL_CLOCK_H
#define PL_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t pl_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline double pl_now_s(void) { return (double)pl_now_ns() * 1e-9; }

#endif
