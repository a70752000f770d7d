/*
 * ref_q8.c -- the 8-bit block types: q8_0 (weights and activations), q8_1
 * and q8_K (activations only).
 *
 * Two different q8_0/q8_1 encoders exist in llama.cpp and both matter:
 *  - from_float (ggml_quantize_chunk, weights written to files):
 *    d = amax/127, id = 1/d, q = roundf(x*id) (ties away from zero);
 *  - act (the x86 CPU backend's quantize_row_q8_0/q8_1, applied to
 *    activations before every dot): d = amax/127, id = 127/amax,
 *    q = round-half-even(x*id) with saturating packs; q8_1's sum is taken
 *    over the unsaturated ints.
 * The two differ in the last bit of id and in ties, so a dot product only
 * reproduces llama.cpp's integers when activations use `act`.  q8_K uses
 * llama.cpp's reference on x86 for both.
 */
#include <math.h>
#include <string.h>

#include "quant/blocks.h"
#include "quant/quant_util.h"
#include "quant/ref.h"

void pl_ref_q8_0_to_float(const void *src, float *dst, int64_t n) {
    const pl_block_q8_0 *b = src;
    for (int64_t i = 0; i < n / 32; i++) {
        float d = pl_q_f16(b[i].d);
        for (int j = 0; j < 32; j++) dst[i * 32 + j] = (float)b[i].qs[j] * d;
    }
}

/* amax over one block of 32, as fmaxf-free C: MAX(amax, fabsf(v)). */
static float amax32(const float *x) {
    float amax = 0.0f;
    for (int j = 0; j < 32; j++) {
        float a = fabsf(x[j]);
        amax = amax > a ? amax : a;
    }
    return amax;
}

void pl_ref_q8_0_from_float(const float *src, void *dst, int64_t n, const float *imatrix) {
    (void)imatrix; /* llama.cpp's q8_0 quantizer ignores it */
    pl_block_q8_0 *b = dst;
    for (int64_t i = 0; i < n / 32; i++) {
        const float *x = src + i * 32;
        float d = amax32(x) / 127.0f;
        float id = d != 0.0f ? 1.0f / d : 0.0f;
        b[i].d = pl_f32_to_f16(d);
        for (int j = 0; j < 32; j++) b[i].qs[j] = (int8_t)pl_q_trunc_i32(roundf(x[j] * id));
    }
}

/* The x86 backend's max: vector max of |x| in lanes, then a fold; for
 * finite input it is the plain maximum. */
static float act_amax32(const float *x) {
    float amax = 0.0f;
    for (int j = 0; j < 32; j++) {
        float a = fabsf(x[j]);
        if (a > amax) amax = a;
    }
    return amax;
}

void pl_ref_q8_0_act(const float *src, void *dst, int64_t n) {
    pl_block_q8_0 *b = dst;
    for (int64_t i = 0; i < n / 32; i++) {
        const float *x = src + i * 32;
        float amax = act_amax32(x);
        b[i].d = pl_f32_to_f16(amax / 127.0f);
        float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        for (int j = 0; j < 32; j++) b[i].qs[j] = pl_q_sat_i8(pl_q_rne_i32(x[j] * id));
    }
}

float pl_ref_q8_0_vec_dot(int64_t n, const void *w, const void *a) {
    const pl_block_q8_0 *x = w, *y = a;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / 32; i++) {
        int sumi = 0;
        for (int j = 0; j < 32; j++) sumi += x[i].qs[j] * y[i].qs[j];
        sum += (float)sumi * (pl_q_f16(x[i].d) * pl_q_f16(y[i].d));
    }
    return sum;
}

void pl_ref_q8_1_to_float(const void *src, float *dst, int64_t n) {
    const pl_block_q8_1 *b = src;
    for (int64_t i = 0; i < n / 32; i++) {
        float d = pl_q_f16(b[i].d);
        for (int j = 0; j < 32; j++) dst[i * 32 + j] = (float)b[i].qs[j] * d;
    }
}

void pl_ref_q8_1_from_float(const float *src, void *dst, int64_t n, const float *imatrix) {
    (void)imatrix;
    pl_block_q8_1 *b = dst;
    for (int64_t i = 0; i < n / 32; i++) {
        const float *x = src + i * 32;
        float d = amax32(x) / 127.0f;
        float id = d != 0.0f ? 1.0f / d : 0.0f;
        b[i].d = pl_f32_to_f16(d);
        int sum = 0;
        for (int j = 0; j < 16; j++) {
            b[i].qs[j] = (int8_t)pl_q_trunc_i32(roundf(x[j] * id));
            b[i].qs[16 + j] = (int8_t)pl_q_trunc_i32(roundf(x[16 + j] * id));
            sum += b[i].qs[j] + b[i].qs[16 + j];
        }
        b[i].s = pl_f32_to_f16((float)sum * d);
    }
}

void pl_ref_q8_1_act(const float *src, void *dst, int64_t n) {
    pl_block_q8_1 *b = dst;
    for (int64_t i = 0; i < n / 32; i++) {
        const float *x = src + i * 32;
        float amax = act_amax32(x);
        float d = amax / 127.0f;
        b[i].d = pl_f32_to_f16(d);
        float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        int32_t sum = 0;
        for (int j = 0; j < 32; j++) {
            int32_t q = pl_q_rne_i32(x[j] * id);
            sum = (int32_t)((uint32_t)sum + (uint32_t)q); /* wraps as the vector adds do */
            b[i].qs[j] = pl_q_sat_i8(q);
        }
        b[i].s = pl_f32_to_f16(d * (float)sum);
    }
}

void pl_ref_q8_K_to_float(const void *src, float *dst, int64_t n) {
    const pl_block_q8_K *b = src;
    for (int64_t i = 0; i < n / 256; i++)
        for (int j = 0; j < 256; j++) dst[i * 256 + j] = b[i].d * (float)b[i].qs[j];
}

void pl_ref_q8_K_act(const float *src, void *dst, int64_t n) {
    pl_block_q8_K *b = dst;
    for (int64_t i = 0; i < n / 256; i++) {
        const float *x = src + i * 256;
        float max = 0.0f, amax = 0.0f;
        for (int j = 0; j < 256; j++) {
            float ax = fabsf(x[j]);
            if (ax > amax) amax = ax, max = x[j];
        }
        if (amax == 0.0f) {
            memset(&b[i], 0, sizeof b[i]);
            continue;
        }
        /* -127 (not -128) so that IQ dot products never see -128 */
        float iscale = -127.0f / max;
        for (int j = 0; j < 256; j++) {
            int v = pl_q_nearest_int(iscale * x[j]);
            b[i].qs[j] = (int8_t)(v < 127 ? v : 127);
        }
        for (int j = 0; j < 16; j++) {
            int sum = 0;
            for (int k = 0; k < 16; k++) sum += b[i].qs[j * 16 + k];
            b[i].bsums[j] = (int16_t)sum;
        }
        b[i].d = 1.0f / iscale;
    }
}

void pl_ref_q8_K_from_float(const float *src, void *dst, int64_t n, const float *imatrix) {
    (void)imatrix;
    pl_ref_q8_K_act(src, dst, n);
}
