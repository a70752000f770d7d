/*
 * cpu.h -- host CPU facts for the engine: the SIMD features kernels may use.
 */
#ifndef PL_CPU_H
#define PL_CPU_H

#include <stdbool.h>
#include <stdint.h>

#include "pocketllm.h"

/* POCKETLLM_CPU_* bits usable on this host (cached after the first call). */
uint32_t pl_cpu_features(void);

#endif
