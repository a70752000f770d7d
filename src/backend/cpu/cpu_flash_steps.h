/*
 * cpu_flash_steps.h -- the scalar pieces of the flash path's online
 * softmax that every flash_weights kernel (AVX2, AVX-512) and the
 * portable loop share: pl_flash_step over a run of scores, and the running
 * sum over a block whose weights are already out.  The product and the sum
 * are two statements so that no compiler fuses them into one fma (clang
 * contracts within a statement by default; the reference rounds both).
 */
#ifndef PL_CPU_FLASH_STEPS_H
#define PL_CPU_FLASH_STEPS_H

#include <stdbool.h>
#include <stdint.h>

#include "ops/ref.h"

/* pl_flash_step over w[0 .. n), continuing *m and *sum: w[p] becomes row
 * p's V weight, ms[p] the rescale before it (1: none) */
static inline void pl_flash_steps(float *w, float *ms, int64_t n, float *m, float *sum) {
    for (int64_t p = 0; p < n; p++) {
        float vs;
        if (!pl_flash_step(w[p], m, &ms[p], &vs)) ms[p] = 1.0f;
        w[p] = vs;
        const float rescaled = *sum * ms[p];
        *sum = rescaled + vs;
    }
}

/* sum = sum * ms[i] + w[i] for i = 0 .. n-1 in order; any_rescale false
 * says every ms[i] is 1, and sum * 1 is sum */
static inline float pl_flash_block_sum(const float *w, const float *ms, int n, bool any_rescale, float sum) {
    if (!any_rescale) {
        for (int i = 0; i < n; i++) sum += w[i];
        return sum;
    }
    for (int i = 0; i < n; i++) {
        const float rescaled = sum * ms[i];
        sum = rescaled + w[i];
    }
    return sum;
}

#endif
