/*
 * kernels_arm.h -- how the AArch64 kernel files plug into the dispatcher:
 * each tier's file fills the entries it implements in a table indexed by
 * type id (already a copy of its parent tier's) and leaves the others.
 */
#ifndef PL_QUANT_KERNELS_ARM_H
#define PL_QUANT_KERNELS_ARM_H

#include "quant/kernels.h"

void pl_quant_fill_neon(pl_quant_kernel_set table[PL_TYPE_COUNT]);
void pl_quant_fill_dotprod(pl_quant_kernel_set table[PL_TYPE_COUNT]);
void pl_quant_fill_i8mm(pl_quant_kernel_set table[PL_TYPE_COUNT]);

#endif
