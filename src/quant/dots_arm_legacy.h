/*
 * dots_arm_legacy.h -- NEON kernels for the 32-element block types (q4_0, q4_1, q5_0, q5_1, q8_0, iq4_nl, mxfp4).
 * A template: included by the AArch64 tier files with PL_SUFFIX defined;
 * defines PL_SUFFIX(fill_legacy), which sets the entries it implements.
 */
static void PL_SUFFIX(fill_legacy)(pl_quant_kernel_set *t) { (void)t; }
