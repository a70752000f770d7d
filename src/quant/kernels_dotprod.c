/*
 * kernels_dotprod.c -- the dotprod tier (compiled with
 * -march=armv8.2-a+dotprod, CMakeLists.txt): the integer types' kernels
 * again from the same templates, now with SDOT for the int8 products.  The
 * float kernels and activation encoders are the NEON tier's (inherited).
 * Only called after the CPU check in kernels.c.
 */
#if defined(__aarch64__)
#include "quant/blocks.h"
#include "quant/kernels_arm.h"
#include "quant/simd_arm.h"

#define PL_SUFFIX(name) name##_dotprod
#include "quant/dots_arm_legacy.h"
#include "quant/dots_arm_kquants.h"
#include "quant/dots_arm_iq.h"

void pl_quant_fill_dotprod(pl_quant_kernel_set t[PL_TYPE_COUNT]) {
    fill_legacy_dotprod(t);
    fill_kquants_dotprod(t);
    fill_iq_dotprod(t);
}
#endif
