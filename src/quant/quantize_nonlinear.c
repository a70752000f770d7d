/*
 * quantize_nonlinear.c -- encoders of the non-linear 4-bit types: iq4_nl
 * and iq4_xs (indices into a fixed table of 16 values, with a searched
 * scale per 32; iq4_xs then quantizes those scales to 6 bits under one f16)
 * and mxfp4 (e2m1 values under a power-of-two scale).  Byte-equal to
 * llama.cpp v0.4.0's ggml_quantize_chunk: note that its iq4 chunk quantizer
 * searches scales (ntry = 7) with x^2 weights even without an imatrix;
 * the row quantizer its CPU backend writes a KV cache with does not.
 */
#include <math.h>
#include <string.h>

#include "quant/blocks.h"
#include "quant/iq_tables.h"
#include "quant/quant_search.h"
#include "quant/quant_util.h"
#include "quant/ref.h"

/* Index of the table value nearest x (values ascending; ties go up). */
static int best_index_int8(int n, const int8_t *val, float x) {
    if (x <= (float)val[0]) return 0;
    if (x >= (float)val[n - 1]) return n - 1;
    int ml = 0, mu = n - 1;
    while (mu - ml > 1) {
        int mav = (ml + mu) / 2;
        if (x < (float)val[mav]) mu = mav;
        else ml = mav;
    }
    return x - (float)val[mu - 1] < (float)val[mu] - x ? mu - 1 : mu;
}

/* Weighted fit of one 32-group to the table: best scale over 15 tries. */
static float iq4_group_scale(const float *xb, const float *weight, uint8_t *Lb, const int8_t *values, int ntry,
                             float *absmax_out) {
    float amax = 0, max = 0;
    for (int j = 0; j < 32; j++) {
        float ax = fabsf(xb[j]);
        if (ax > amax) amax = ax, max = xb[j];
    }
    *absmax_out = amax;
    if (amax < PL_GROUP_MAX_EPS) return 0;
    float d = ntry > 0 ? -max / (float)values[0] : max / (float)values[0];
    float id = 1 / d;
    float sumqx = 0, sumq2 = 0;
    for (int j = 0; j < 32; j++) {
        int l = best_index_int8(16, values, id * xb[j]);
        Lb[j] = (uint8_t)l;
        float q = (float)values[l], w = weight[j];
        sumqx += w * q * xb[j];
        sumq2 += w * q * q;
    }
    d = sumq2 > 0 ? sumqx / sumq2 : 0.f;
    float best = d * sumqx;
    for (int itry = -ntry; itry <= ntry; itry++) {
        id = (float)(itry + values[0]) / max;
        sumqx = sumq2 = 0;
        for (int j = 0; j < 32; j++) {
            float q = (float)values[best_index_int8(16, values, id * xb[j])], w = weight[j];
            sumqx += w * q * xb[j];
            sumq2 += w * q * q;
        }
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
            d = sumqx / sumq2;
            best = d * sumqx;
        }
    }
    return d;
}

/* One super-block of sbs values (32 for iq4_nl, 256 for iq4_xs). */
static void iq4_super_block(int sbs, const float *x, uint16_t *dh, uint8_t *q4, uint16_t *scales_h, uint8_t *scales_l,
                            const float *qw, int ntry) {
    const int8_t *values = pl_kvalues_iq4nl;
    const int nb = sbs / 32;
    /* zero: a group below GROUP_MAX_EPS keeps it (llama.cpp's row quantizer
     * leaves the previous block's indices there, under a zero scale: the
     * same values, not the same bytes) */
    uint8_t L[256] = {0};
    float scales[8], weight[32];
    float sigma2 = 0;
    for (int j = 0; j < sbs; j++) sigma2 += x[j] * x[j];
    sigma2 *= 2.f / (float)sbs;
    memset(q4, 0, (size_t)sbs / 2);
    *dh = pl_f32_to_f16(0.f);
    float max_scale = 0, amax_scale = 0;
    for (int ib = 0; ib < nb; ib++) {
        const float *xb = x + ib * 32;
        if (qw)
            for (int j = 0; j < 32; j++) weight[j] = qw[ib * 32 + j] * sqrtf(sigma2 + xb[j] * xb[j]);
        else
            for (int j = 0; j < 32; j++) weight[j] = xb[j] * xb[j];
        float amax;
        const float d = iq4_group_scale(xb, weight, L + ib * 32, values, ntry, &amax);
        scales[ib] = d;
        if (amax < PL_GROUP_MAX_EPS) continue;
        if (fabsf(d) > amax_scale) amax_scale = fabsf(d), max_scale = d;
    }
    if (nb > 1) {
        *scales_h = 0;
        const float d = -max_scale / 32;
        *dh = pl_f32_to_f16(d);
        const float id = d != 0 ? 1 / d : 0.f;
        for (int ib = 0; ib < nb; ib++) {
            int l = pl_q_nearest_int(id * scales[ib]);
            l = l < -32 ? -32 : l > 31 ? 31 : l;
            const float dl = d * (float)l, idl = dl != 0 ? 1 / dl : 0.f;
            for (int j = 0; j < 32; j++) L[ib * 32 + j] = (uint8_t)best_index_int8(16, values, idl * x[ib * 32 + j]);
            l += 32;
            const uint8_t l_l = (uint8_t)(l & 0xf), l_h = (uint8_t)(l >> 4);
            if (ib % 2 == 0) scales_l[ib / 2] = l_l;
            else scales_l[ib / 2] |= (uint8_t)(l_l << 4);
            *scales_h |= (uint16_t)(l_h << (2 * (ib % 8)));
        }
    } else {
        *dh = pl_f32_to_f16(scales[0]);
        /* without the search (ntry <= 0) the indices stay those the first
         * scale picked, as llama.cpp keeps them */
        const float id = scales[0] != 0 ? 1 / scales[0] : 0;
        if (ntry > 0)
            for (int j = 0; j < sbs; j++) L[j] = (uint8_t)best_index_int8(16, values, id * x[j]);
    }
    for (int i = 0; i < sbs / 32; i++)
        for (int j = 0; j < 16; j++) q4[16 * i + j] = (uint8_t)(L[32 * i + j] | (L[32 * i + 16 + j] << 4));
}

void pl_ref_iq4_nl_from_float(const float *src, void *dst, int64_t n, const float *imatrix) {
    pl_block_iq4_nl *b = dst;
    for (int64_t i = 0; i < n / 32; i++) {
        uint16_t unused_h = 0;
        iq4_super_block(32, src + 32 * i, &b[i].d, b[i].qs, &unused_h, NULL, imatrix ? imatrix + 32 * i : NULL, 7);
    }
}

/* llama.cpp's quantize_row_iq4_nl_ref, what its CPU backend stores a KV
 * cache row with: no scale search (ntry = -1), x^2 weights. */
void pl_ref_iq4_nl_row_ref(const float *src, void *dst, int64_t n) {
    pl_block_iq4_nl *b = dst;
    for (int64_t i = 0; i < n / 32; i++) {
        uint16_t unused_h = 0;
        iq4_super_block(32, src + 32 * i, &b[i].d, b[i].qs, &unused_h, NULL, NULL, -1);
    }
}

void pl_ref_iq4_xs_from_float(const float *src, void *dst, int64_t n, const float *imatrix) {
    pl_block_iq4_xs *b = dst;
    for (int64_t i = 0; i < n / 256; i++)
        iq4_super_block(256, src + 256 * i, &b[i].d, b[i].qs, &b[i].scales_h, b[i].scales_l,
                        imatrix ? imatrix + 256 * i : NULL, 7);
}

/* Index of the e2m1 value (times the scale e) nearest x; first on ties. */
static int best_index_mxfp4(float x, float e) {
    int best = 0;
    float best_err = fabsf((float)pl_kvalues_mxfp4[0] * e - x);
    for (int i = 1; i < 16; i++) {
        float err = fabsf((float)pl_kvalues_mxfp4[i] * e - x);
        if (err < best_err) best = i, best_err = err;
    }
    return best;
}

void pl_ref_mxfp4_from_float(const float *src, void *dst, int64_t n, const float *imatrix) {
    (void)imatrix; /* llama.cpp's mxfp4 quantizer takes none */
    pl_block_mxfp4 *b = dst;
    for (int64_t i = 0; i < n / 32; i++) {
        const float *x = src + 32 * i;
        float amax = 0.0f;
        for (int j = 0; j < 32; j++)
            if (amax < fabsf(x[j])) amax = fabsf(x[j]);
        /* (uint8_t) of a float: the low byte of the 32-bit conversion on x86 */
        const uint8_t e = amax > 0.0f ? (uint8_t)pl_q_trunc_i32(floorf(log2f(amax)) - 2 + 127) : 0;
        const float d = pl_q_e8m0_half(e);
        b[i].e = e;
        for (int j = 0; j < 16; j++)
            b[i].qs[j] = (uint8_t)(best_index_mxfp4(x[j], d) | (best_index_mxfp4(x[16 + j], d) << 4));
    }
}
