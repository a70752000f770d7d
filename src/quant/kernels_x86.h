/*
 * kernels_x86.h -- how the per-ISA kernel files plug into the dispatcher:
 * each fills the entries it implements in a table indexed by type id and
 * leaves the others alone (they inherit the lower tier's).
 */
#ifndef PL_QUANT_KERNELS_X86_H
#define PL_QUANT_KERNELS_X86_H

#include "quant/kernels.h"

void pl_quant_fill_avx2(pl_quant_kernel_set table[PL_TYPE_COUNT]);
void pl_quant_fill_avx512(pl_quant_kernel_set table[PL_TYPE_COUNT]);

#endif
