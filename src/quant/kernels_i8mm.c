/*
 * kernels_i8mm.c -- the i8mm tier (compiled with
 * -march=armv8.2-a+dotprod+i8mm, CMakeLists.txt): prefill tiles of two
 * weight rows by several tokens through SMMLA, each entry bit for bit the
 * dotprod tier's vec_dot, which this tier inherits with everything else.
 * Only called after the CPU check in kernels.c.
 */
#if defined(__aarch64__)
#include "quant/blocks.h"
#include "quant/kernels_arm.h"
#include "quant/simd_arm.h"

#define PL_SUFFIX(name) name##_i8mm
#include "quant/dots_arm_mmla.h"

void pl_quant_fill_i8mm(pl_quant_kernel_set t[PL_TYPE_COUNT]) { fill_mmla_i8mm(t); }
#endif
