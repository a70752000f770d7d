/*
 * kernels_neon.c -- the NEON tier (AArch64 Advanced SIMD at the Armv8.0-A
 * baseline, which every AArch64 CPU has): every type's kernels, the int8
 * products through widening multiplies (pl_dot_s8 without dotprod).  Only
 * called after the CPU check in kernels.c.
 */
#if defined(__aarch64__)
#include "quant/blocks.h"
#include "quant/kernels_arm.h"
#include "quant/simd_arm.h"

#define PL_SUFFIX(name) name##_neon
#include "quant/dots_arm_float.h"
#include "quant/dots_arm_legacy.h"
#include "quant/dots_arm_kquants.h"
#include "quant/dots_arm_iq.h"

void pl_quant_fill_neon(pl_quant_kernel_set t[PL_TYPE_COUNT]) {
    fill_float_neon(t);
    fill_legacy_neon(t);
    fill_kquants_neon(t);
    fill_iq_neon(t);
}
#endif
