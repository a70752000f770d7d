/*
 * isa_neon.c -- the row kernels for AArch64 (NEON, Armv8.0-A): elementwise
 * ops, softmax helpers and the attention row kernels, 128-bit vectors.
 * One table serves every AArch64 quant tier (neon, dotprod, i8mm): its f16
 * kernels reproduce the NEON tier's f16 vec_dot, which the higher tiers
 * inherit.
 */
#include "backend/cpu/cpu_isa.h"

#if defined(__aarch64__)
const pl_cpu_isa *pl_cpu_isa_neon(void) { return 0; }
#else
const pl_cpu_isa *pl_cpu_isa_neon(void) { return 0; }
#endif
