/*
 * ref_float.c -- reference kernels of the unquantized types f32, f16 and
 * bf16.  As in llama.cpp's CPU backend, the activations of an f16 (bf16)
 * weight are rounded to f16 (bf16) before the dot product, and the
 * reference dot accumulates each product in double (ggml's scalar path).
 */
#include <string.h>

#include "quant/quant_util.h"
#include "quant/ref.h"

void pl_ref_f32_to_float(const void *src, float *dst, int64_t n) { memcpy(dst, src, (size_t)n * sizeof(float)); }

void pl_ref_f32_from_float(const float *src, void *dst, int64_t n, const float *imatrix) {
    (void)imatrix;
    memcpy(dst, src, (size_t)n * sizeof(float));
}

void pl_ref_f32_act(const float *src, void *dst, int64_t n) { memcpy(dst, src, (size_t)n * sizeof(float)); }

float pl_ref_f32_vec_dot(int64_t n, const void *w, const void *a) {
    const float *x = w, *y = a;
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) sum += (double)(x[i] * y[i]);
    return (float)sum;
}

void pl_ref_f16_to_float(const void *src, float *dst, int64_t n) {
    const uint16_t *h = src;
    for (int64_t i = 0; i < n; i++) dst[i] = pl_q_f16(h[i]);
}

void pl_ref_f16_from_float(const float *src, void *dst, int64_t n, const float *imatrix) {
    (void)imatrix;
    pl_ref_f16_act(src, dst, n);
}

void pl_ref_f16_act(const float *src, void *dst, int64_t n) {
    uint16_t *h = dst;
    for (int64_t i = 0; i < n; i++) h[i] = pl_f32_to_f16(src[i]);
}

float pl_ref_f16_vec_dot(int64_t n, const void *w, const void *a) {
    const uint16_t *x = w, *y = a;
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) sum += (double)(pl_q_f16(x[i]) * pl_q_f16(y[i]));
    return (float)sum;
}

void pl_ref_bf16_to_float(const void *src, float *dst, int64_t n) {
    const uint16_t *h = src;
    for (int64_t i = 0; i < n; i++) dst[i] = pl_bf16_to_f32(h[i]);
}

void pl_ref_bf16_from_float(const float *src, void *dst, int64_t n, const float *imatrix) {
    (void)imatrix;
    pl_ref_bf16_act(src, dst, n);
}

void pl_ref_bf16_act(const float *src, void *dst, int64_t n) {
    uint16_t *h = dst;
    for (int64_t i = 0; i < n; i++) h[i] = pl_f32_to_bf16(src[i]);
}

float pl_ref_bf16_vec_dot(int64_t n, const void *w, const void *a) {
    const uint16_t *x = w, *y = a;
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) sum += (double)(pl_bf16_to_f32(x[i]) * pl_bf16_to_f32(y[i]));
    return (float)sum;
}
