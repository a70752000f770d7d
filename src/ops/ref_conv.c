/*
 * ref_conv.c -- the audio tower's reference ops (Qwen3-ASR): the exact
 * GELU (erf form) as llama.cpp's CPU backend computes it for f32, im2col
 * over channel-last images (a 2-D convolution becomes one matmul), and a
 * batched transpose.
 */
#include "base/error.h"
#include "base/half.h"
#include "ops/ref.h"

void pl_ref_gelu_erf(const float *x, float *y, int64_t n) {
    /* ggml_vec_gelu_erf_f32: libm erff in float, no table (GGML_GELU_FP16
     * only applies to the tanh GELU), the operations in its order */
    const float sqrt_2_inv = 0.70710678118654752440084436210484f;
    for (int64_t i = 0; i < n; i++) {
        const float xi = x[i];
        /* -inf: the limit, -0 as for every large finite negative x (where
         * 1 + erff is +0), not ggml's inf * 0 = NaN */
        y[i] = xi == -INFINITY ? -0.0f : 0.5f * xi * (1.0f + erff(xi * sqrt_2_inv));
    }
}

pocketllm_status pl_im2col_check(const pl_im2col_params *p) {
    if (p->n < 1 || p->c_in < 1 || p->h < 1 || p->w < 1 || p->kh < 1 || p->kw < 1 || p->sh < 1 || p->sw < 1 ||
        p->ph < 0 || p->pw < 0 || p->h > INT32_MAX || p->w > INT32_MAX || p->c_in > INT32_MAX || p->n > INT32_MAX)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT,
                       "im2col: bad shape (n %lld, c_in %lld, %lld x %lld, kernel %d x %d, stride %d x %d, pad %d x %d)",
                       (long long)p->n, (long long)p->c_in, (long long)p->h, (long long)p->w, p->kh, p->kw, p->sh, p->sw,
                       p->ph, p->pw);
    if (p->h + 2 * (int64_t)p->ph < p->kh || p->w + 2 * (int64_t)p->pw < p->kw)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT,
                       "im2col: a %lld x %lld image padded by %d x %d is smaller than the %d x %d kernel", (long long)p->h,
                       (long long)p->w, p->ph, p->pw, p->kh, p->kw);
    return POCKETLLM_OK;
}

void pl_ref_im2col(const pl_im2col_params *p, const float *x, float *y) {
    const int64_t oh = pl_im2col_out_h(p), ow = pl_im2col_out_w(p);
    const int64_t cols = p->c_in * p->kh * p->kw;
    for (int64_t b = 0; b < p->n; b++)
        for (int64_t oy = 0; oy < oh; oy++)
            for (int64_t ox = 0; ox < ow; ox++) {
                float *row = y + ((b * oh + oy) * ow + ox) * cols;
                for (int64_t ch = 0; ch < p->c_in; ch++)
                    for (int64_t ky = 0; ky < p->kh; ky++)
                        for (int64_t kx = 0; kx < p->kw; kx++) {
                            const int64_t iy = oy * p->sh - p->ph + ky, ix = ox * p->sw - p->pw + kx;
                            float v = 0.0f;
                            if (iy >= 0 && iy < p->h && ix >= 0 && ix < p->w) {
                                v = x[((b * p->h + iy) * p->w + ix) * p->c_in + ch];
                                if (p->round_f16) v = pl_f16_to_f32(pl_f32_to_f16(v));
                            }
                            row[(ch * p->kh + ky) * p->kw + kx] = v;
                        }
            }
}

void pl_ref_transpose(const float *x, float *y, int64_t batch, int64_t rows, int64_t cols) {
    for (int64_t b = 0; b < batch; b++)
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++) y[(b * cols + j) * rows + i] = x[(b * rows + i) * cols + j];
}
