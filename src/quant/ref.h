/*
 * ref.h -- the scalar reference kernels of every type, wired into the type
 * table by types.c.  Each follows llama.cpp v0.4.0's arithmetic operation
 * for operation (same order, same float/int conversions), which is what
 * makes decode bit-exact and encode byte-exact with it; the source files
 * say where llama.cpp's CPU backend does something other than its reference.
 *
 * Naming: pl_ref_<type>_to_float / _from_float / _act / _vec_dot, with the
 * signatures of pl_to_float_fn, pl_from_float_fn, pl_act_from_float_fn and
 * pl_vec_dot_fn (quant/types.h).
 */
#ifndef PL_QUANT_REF_H
#define PL_QUANT_REF_H

#include <stdint.h>

/* ref_float.c: f32, f16, bf16 (activations of f16/bf16 weights stay f16/bf16) */
void pl_ref_f32_to_float(const void *src, float *dst, int64_t n);
void pl_ref_f32_from_float(const float *src, void *dst, int64_t n, const float *imatrix);
void pl_ref_f32_act(const float *src, void *dst, int64_t n);
float pl_ref_f32_vec_dot(int64_t n, const void *w, const void *a);
void pl_ref_f16_to_float(const void *src, float *dst, int64_t n);
void pl_ref_f16_from_float(const float *src, void *dst, int64_t n, const float *imatrix);
void pl_ref_f16_act(const float *src, void *dst, int64_t n);
float pl_ref_f16_vec_dot(int64_t n, const void *w, const void *a);
void pl_ref_bf16_to_float(const void *src, float *dst, int64_t n);
void pl_ref_bf16_from_float(const float *src, void *dst, int64_t n, const float *imatrix);
void pl_ref_bf16_act(const float *src, void *dst, int64_t n);
float pl_ref_bf16_vec_dot(int64_t n, const void *w, const void *a);

/* ref_q8.c: q8_0 is a weight and an activation type; q8_1 and q8_K are
 * activation types only (llama.cpp has no dot with them as weights). */
void pl_ref_q8_0_to_float(const void *src, float *dst, int64_t n);
void pl_ref_q8_0_from_float(const float *src, void *dst, int64_t n, const float *imatrix);
void pl_ref_q8_0_act(const float *src, void *dst, int64_t n);
float pl_ref_q8_0_vec_dot(int64_t n, const void *w, const void *a);
void pl_ref_q8_1_to_float(const void *src, float *dst, int64_t n);
void pl_ref_q8_1_from_float(const float *src, void *dst, int64_t n, const float *imatrix);
void pl_ref_q8_1_act(const float *src, void *dst, int64_t n);
void pl_ref_q8_K_to_float(const void *src, float *dst, int64_t n);
void pl_ref_q8_K_from_float(const float *src, void *dst, int64_t n, const float *imatrix);
void pl_ref_q8_K_act(const float *src, void *dst, int64_t n);

/* ref_legacy.c: 32-element blocks against q8_0 (q4_0, q5_0) or q8_1 (q4_1, q5_1) */
void pl_ref_q4_0_to_float(const void *src, float *dst, int64_t n);
void pl_ref_q4_0_from_float(const float *src, void *dst, int64_t n, const float *imatrix);
float pl_ref_q4_0_vec_dot(int64_t n, const void *w, const void *a);
void pl_ref_q4_1_to_float(const void *src, float *dst, int64_t n);
void pl_ref_q4_1_from_float(const float *src, void *dst, int64_t n, const float *imatrix);
float pl_ref_q4_1_vec_dot(int64_t n, const void *w, const void *a);
void pl_ref_q5_0_to_float(const void *src, float *dst, int64_t n);
void pl_ref_q5_0_from_float(const float *src, void *dst, int64_t n, const float *imatrix);
float pl_ref_q5_0_vec_dot(int64_t n, const void *w, const void *a);
void pl_ref_q5_1_to_float(const void *src, float *dst, int64_t n);
void pl_ref_q5_1_from_float(const float *src, void *dst, int64_t n, const float *imatrix);
float pl_ref_q5_1_vec_dot(int64_t n, const void *w, const void *a);

/* ref_kquants.c (decode, dot) and quantize_kquants.c (encode): against q8_K */
void pl_ref_q2_K_to_float(const void *src, float *dst, int64_t n);
void pl_ref_q2_K_from_float(const float *src, void *dst, int64_t n, const float *imatrix);
float pl_ref_q2_K_vec_dot(int64_t n, const void *w, const void *a);
void pl_ref_q3_K_to_float(const void *src, float *dst, int64_t n);
void pl_ref_q3_K_from_float(const float *src, void *dst, int64_t n, const float *imatrix);
float pl_ref_q3_K_vec_dot(int64_t n, const void *w, const void *a);
void pl_ref_q4_K_to_float(const void *src, float *dst, int64_t n);
void pl_ref_q4_K_from_float(const float *src, void *dst, int64_t n, const float *imatrix);
float pl_ref_q4_K_vec_dot(int64_t n, const void *w, const void *a);
void pl_ref_q5_K_to_float(const void *src, float *dst, int64_t n);
void pl_ref_q5_K_from_float(const float *src, void *dst, int64_t n, const float *imatrix);
float pl_ref_q5_K_vec_dot(int64_t n, const void *w, const void *a);
void pl_ref_q6_K_to_float(const void *src, float *dst, int64_t n);
void pl_ref_q6_K_from_float(const float *src, void *dst, int64_t n, const float *imatrix);
float pl_ref_q6_K_vec_dot(int64_t n, const void *w, const void *a);

/* ref_iq.c (decode, dot), quantize_nonlinear.c and quantize_iq*.c (encode) */
void pl_ref_iq2_xxs_to_float(const void *src, float *dst, int64_t n);
void pl_ref_iq2_xxs_from_float(const float *src, void *dst, int64_t n, const float *imatrix);
float pl_ref_iq2_xxs_vec_dot(int64_t n, const void *w, const void *a);
void pl_ref_iq2_xs_to_float(const void *src, float *dst, int64_t n);
void pl_ref_iq2_xs_from_float(const float *src, void *dst, int64_t n, const float *imatrix);
float pl_ref_iq2_xs_vec_dot(int64_t n, const void *w, const void *a);
void pl_ref_iq2_s_to_float(const void *src, float *dst, int64_t n);
void pl_ref_iq2_s_from_float(const float *src, void *dst, int64_t n, const float *imatrix);
float pl_ref_iq2_s_vec_dot(int64_t n, const void *w, const void *a);
void pl_ref_iq3_xxs_to_float(const void *src, float *dst, int64_t n);
void pl_ref_iq3_xxs_from_float(const float *src, void *dst, int64_t n, const float *imatrix);
float pl_ref_iq3_xxs_vec_dot(int64_t n, const void *w, const void *a);
void pl_ref_iq3_s_to_float(const void *src, float *dst, int64_t n);
void pl_ref_iq3_s_from_float(const float *src, void *dst, int64_t n, const float *imatrix);
float pl_ref_iq3_s_vec_dot(int64_t n, const void *w, const void *a);
void pl_ref_iq1_s_to_float(const void *src, float *dst, int64_t n);
void pl_ref_iq1_s_from_float(const float *src, void *dst, int64_t n, const float *imatrix);
float pl_ref_iq1_s_vec_dot(int64_t n, const void *w, const void *a);
void pl_ref_iq1_m_to_float(const void *src, float *dst, int64_t n);
void pl_ref_iq1_m_from_float(const float *src, void *dst, int64_t n, const float *imatrix);
float pl_ref_iq1_m_vec_dot(int64_t n, const void *w, const void *a);
void pl_ref_iq4_nl_to_float(const void *src, float *dst, int64_t n);
void pl_ref_iq4_nl_from_float(const float *src, void *dst, int64_t n, const float *imatrix);
void pl_ref_iq4_nl_row_ref(const float *src, void *dst, int64_t n); /* a KV cache row (no scale search) */
float pl_ref_iq4_nl_vec_dot(int64_t n, const void *w, const void *a);
void pl_ref_iq4_xs_to_float(const void *src, float *dst, int64_t n);
void pl_ref_iq4_xs_from_float(const float *src, void *dst, int64_t n, const float *imatrix);
float pl_ref_iq4_xs_vec_dot(int64_t n, const void *w, const void *a);
void pl_ref_mxfp4_to_float(const void *src, float *dst, int64_t n);
void pl_ref_mxfp4_from_float(const float *src, void *dst, int64_t n, const float *imatrix);
float pl_ref_mxfp4_vec_dot(int64_t n, const void *w, const void *a);

/* ref_ternary.c */
void pl_ref_tq1_0_to_float(const void *src, float *dst, int64_t n);
void pl_ref_tq1_0_from_float(const float *src, void *dst, int64_t n, const float *imatrix);
float pl_ref_tq1_0_vec_dot(int64_t n, const void *w, const void *a);
void pl_ref_tq2_0_to_float(const void *src, float *dst, int64_t n);
void pl_ref_tq2_0_from_float(const float *src, void *dst, int64_t n, const float *imatrix);
float pl_ref_tq2_0_vec_dot(int64_t n, const void *w, const void *a);

#endif
