/*
 * quantize_kquants.c -- the encoders of q2_K ... q6_K, byte-equal to
 * llama.cpp v0.4.0's ggml_quantize_chunk: its reference quantizers without
 * an importance matrix, its weighted ("impl") ones with one.  The level
 * searches live in quant_search.c; this file picks the searches' parameters
 * per type, quantizes the sub-block scales, re-derives every level from the
 * rounded scales and packs the bits.
 */
#include <math.h>
#include <string.h>

#include "quant/blocks.h"
#include "quant/kquant_scales.h"
#include "quant/quant_search.h"
#include "quant/quant_util.h"
#include "quant/ref.h"

static inline int imin(int a, int b) { return a < b ? a : b; }
static inline int imax(int a, int b) { return a > b ? a : b; }

/* 2-bit levels of 256 values -> q2_K/q3_K's qs layout (4 per byte, the
 * four quarters of each 128 in bit pairs). */
static void pack_2bit(uint8_t *qs, const uint8_t *L) {
    for (int j = 0; j < 256; j += 128)
        for (int l = 0; l < 32; l++)
            qs[j / 4 + l] = (uint8_t)(L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
}

/* sigma2 = factor * sum(x^2) / 256 over one super-block. */
static float block_sigma2(const float *x, float factor) {
    float sumx2 = 0;
    for (int j = 0; j < 256; j++) sumx2 += x[j] * x[j];
    return factor * sumx2 / 256;
}

/* ---- q2_K -------------------------------------------------------------- */

static void q2_K_levels(const float *x, pl_block_q2_K *y, uint8_t *L) {
    const float dm = pl_q_f16(y->d), mm = pl_q_f16(y->dmin);
    for (int j = 0; j < 16; j++) {
        const float d = dm * (float)(y->scales[j] & 0xf);
        if (d == 0) continue;
        const float m = mm * (float)(y->scales[j] >> 4);
        for (int ii = 0; ii < 16; ii++) L[16 * j + ii] = (uint8_t)imax(0, imin(3, pl_q_nearest_int((x[16 * j + ii] + m) / d)));
    }
}

void pl_ref_q2_K_from_float(const float *src, void *dst, int64_t n, const float *imatrix) {
    pl_block_q2_K *y = dst;
    for (int64_t i = 0; i < n / 256; i++) {
        const float *x = src + i * 256;
        uint8_t L[256], Laux[16];
        float mins[16], scales[16], weight[16];
        if (!imatrix) {
            const float q4scale = 15.f;
            float max_scale = 0, max_min = 0;
            for (int j = 0; j < 16; j++) {
                for (int l = 0; l < 16; l++) weight[l] = fabsf(x[16 * j + l]);
                scales[j] = pl_q_make_qkx2(16, 3, x + 16 * j, weight, L + 16 * j, &mins[j], Laux, -0.5f, 0.1f, 15, true);
                if (scales[j] > max_scale) max_scale = scales[j];
                if (mins[j] > max_min) max_min = mins[j];
            }
            if (max_scale > 0) {
                const float iscale = q4scale / max_scale;
                for (int j = 0; j < 16; j++) y[i].scales[j] = (uint8_t)pl_q_nearest_int(iscale * scales[j]);
                y[i].d = pl_f32_to_f16(max_scale / q4scale);
            } else {
                memset(y[i].scales, 0, 16);
                y[i].d = pl_f32_to_f16(0.f);
            }
            if (max_min > 0) {
                const float iscale = q4scale / max_min;
                for (int j = 0; j < 16; j++) y[i].scales[j] |= (uint8_t)(pl_q_nearest_int(iscale * mins[j]) << 4);
                y[i].dmin = pl_f32_to_f16(max_min / q4scale);
            } else {
                y[i].dmin = pl_f32_to_f16(0.f);
            }
        } else {
            float sw[16] = {0};
            uint8_t Ls[16], Lm[16];
            const float sigma2 = block_sigma2(x, 1);
            for (int j = 0; j < 16; j++) {
                const float *qw = imatrix + 256 * i + 16 * j;
                for (int l = 0; l < 16; l++) weight[l] = qw[l] * sqrtf(sigma2 + x[16 * j + l] * x[16 * j + l]);
                for (int l = 0; l < 16; l++) sw[j] += weight[l];
                scales[j] = pl_q_make_qkx3(16, 3, x + 16 * j, weight, L + 16 * j, &mins[j], Laux, -0.9f, 0.05f, 36, false);
            }
            const float dm = pl_q_make_qp(16, 15, scales, Ls, sw);
            const float mm = pl_q_make_qp(16, 15, mins, Lm, sw);
            y[i].d = pl_f32_to_f16(dm);
            y[i].dmin = pl_f32_to_f16(mm);
            for (int j = 0; j < 16; j++) y[i].scales[j] = (uint8_t)(Ls[j] | (Lm[j] << 4));
        }
        q2_K_levels(x, &y[i], L);
        pack_2bit(y[i].qs, L);
    }
}

/* ---- q3_K -------------------------------------------------------------- */

/* Store biased 6-bit scale l (0..63) of sub-block j in q3_K's packing. */
static void q3_K_put_scale(uint8_t *scales, int j, int l) {
    if (j < 8) scales[j] = (uint8_t)(l & 0xf);
    else scales[j - 8] |= (uint8_t)((l & 0xf) << 4);
    l >>= 4;
    scales[j % 4 + 8] |= (uint8_t)(l << (2 * (j / 4)));
}

static void q3_K_finish(const float *x, pl_block_q3_K *y, int8_t *L) {
    int8_t sc[16];
    pl_q3k_scales(y->scales, sc);
    for (int j = 0; j < 16; j++) {
        const float d = pl_q_f16(y->d) * (float)(int8_t)(sc[j] - 32);
        if (d == 0) continue;
        for (int ii = 0; ii < 16; ii++)
            L[16 * j + ii] = (int8_t)(imax(-4, imin(3, pl_q_nearest_int(x[16 * j + ii] / d))) + 4);
    }
    memset(y->hmask, 0, 32);
    /* the high bit of value j goes to bit j/32 of hmask[j%32] */
    for (int j = 0; j < 256; j++)
        if (L[j] > 3) {
            y->hmask[j % 32] |= (uint8_t)(1u << (j / 32));
            L[j] = (int8_t)(L[j] - 4);
        }
    pack_2bit(y->qs, (const uint8_t *)L);
}

void pl_ref_q3_K_from_float(const float *src, void *dst, int64_t n, const float *imatrix) {
    pl_block_q3_K *y = dst;
    for (int64_t i = 0; i < n / 256; i++) {
        const float *x = src + i * 256;
        int8_t L[256];
        float scales[16];
        memset(y[i].scales, 0, 12);
        if (!imatrix) {
            float max_scale = 0, amax = 0;
            for (int j = 0; j < 16; j++) {
                scales[j] = pl_q_make_q3(16, 4, x + 16 * j, L + 16 * j, true);
                const float scale = fabsf(scales[j]);
                if (scale > amax) amax = scale, max_scale = scales[j];
            }
            if (max_scale != 0) {
                const float iscale = -32.f / max_scale;
                for (int j = 0; j < 16; j++) {
                    int8_t l = (int8_t)pl_q_nearest_int(iscale * scales[j]); /* int8 first, as llama.cpp */
                    q3_K_put_scale(y[i].scales, j, imax(-32, imin(31, l)) + 32);
                }
                y[i].d = pl_f32_to_f16(1 / iscale);
            } else {
                y[i].d = pl_f32_to_f16(0.f);
            }
        } else {
            float weight[16], sw[16];
            int8_t Ls[16];
            const float sigma2 = block_sigma2(x, 2);
            for (int j = 0; j < 16; j++) {
                const float *qw = imatrix + 256 * i + 16 * j;
                for (int l = 0; l < 16; l++) weight[l] = qw[l] * sqrtf(sigma2 + x[16 * j + l] * x[16 * j + l]);
                float sumw = 0;
                for (int l = 0; l < 16; l++) sumw += weight[l];
                sw[j] = sumw;
                scales[j] = pl_q_make_qx(16, 4, x + 16 * j, L + 16 * j, 1, weight);
            }
            const float d_block = pl_q_make_qx(16, 32, scales, Ls, 1, sw);
            for (int j = 0; j < 16; j++) q3_K_put_scale(y[i].scales, j, Ls[j]);
            y[i].d = pl_f32_to_f16(d_block);
        }
        q3_K_finish(x, &y[i], L);
    }
}

/* ---- q4_K / q5_K ------------------------------------------------------- */

/* Store the 6-bit scale/min pair of sub-block j in the 12-byte packing. */
static void k4_put(uint8_t *scales, int j, uint8_t ls, uint8_t lm) {
    if (j < 4) {
        scales[j] = ls;
        scales[j + 4] = lm;
    } else {
        scales[j + 4] = (uint8_t)((ls & 0xf) | ((lm & 0xf) << 4));
        scales[j - 4] |= (uint8_t)((ls >> 4) << 6);
        scales[j - 0] |= (uint8_t)((lm >> 4) << 6);
    }
}

/* The scales and mins of the 8 sub-blocks, chosen and packed into y's
 * d/dmin/scales; L gets levels 0..nmax.  Shared by q4_K (nmax 15) and q5_K
 * (nmax 31). */
static void k45_scales(const float *x, const float *qw_block, int nmax, uint8_t *L, uint16_t *d_out,
                       uint16_t *dmin_out, uint8_t *packed) {
    uint8_t Laux[32];
    float weights[32], mins[8], scales[8];
    if (!qw_block) {
        float max_scale = 0, max_min = 0;
        for (int j = 0; j < 8; j++) {
            float sum_x2 = 0;
            for (int l = 0; l < 32; l++) sum_x2 += x[32 * j + l] * x[32 * j + l];
            const float av_x = sqrtf(sum_x2 / 32);
            for (int l = 0; l < 32; l++) weights[l] = av_x + fabsf(x[32 * j + l]);
            scales[j] = nmax == 15
                            ? pl_q_make_qkx2(32, 15, x + 32 * j, weights, L + 32 * j, &mins[j], Laux, -1.f, 0.1f, 20, false)
                            : pl_q_make_qkx2(32, 31, x + 32 * j, weights, L + 32 * j, &mins[j], Laux, -0.5f, 0.1f, 15, false);
            if (scales[j] > max_scale) max_scale = scales[j];
            if (mins[j] > max_min) max_min = mins[j];
        }
        const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
        const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
        for (int j = 0; j < 8; j++) {
            uint8_t ls = (uint8_t)pl_q_nearest_int(inv_scale * scales[j]);
            uint8_t lm = (uint8_t)pl_q_nearest_int(inv_min * mins[j]);
            k4_put(packed, j, ls < 63 ? ls : 63, lm < 63 ? lm : 63);
        }
        *d_out = pl_f32_to_f16(max_scale / 63.f);
        *dmin_out = pl_f32_to_f16(max_min / 63.f);
        return;
    }
    uint8_t Ls[8], Lm[8];
    float sw[8];
    float sum_x2 = 0;
    for (int l = 0; l < 256; l++) sum_x2 += x[l] * x[l];
    const float sigma2 = 2 * sum_x2 / 256;
    for (int j = 0; j < 8; j++) {
        const float *qw = qw_block + 32 * j;
        for (int l = 0; l < 32; l++) weights[l] = qw[l] * sqrtf(sigma2 + x[32 * j + l] * x[32 * j + l]);
        float sumw = 0;
        for (int l = 0; l < 32; l++) sumw += weights[l];
        sw[j] = sumw;
        scales[j] = pl_q_make_qkx3(32, nmax, x + 32 * j, weights, L + 32 * j, &mins[j], Laux, -0.9f, 0.05f, 36, false);
    }
    const float d_block = pl_q_make_qp(8, 63, scales, Ls, sw);
    const float m_block = pl_q_make_qp(8, 63, mins, Lm, sw);
    /* llama.cpp clamps these to 63 for q5_K only (make_qp keeps them <= 63
     * unless a negative level wrapped around) */
    for (int j = 0; j < 8; j++)
        k4_put(packed, j, nmax == 31 && Ls[j] > 63 ? 63 : Ls[j], nmax == 31 && Lm[j] > 63 ? 63 : Lm[j]);
    *d_out = pl_f32_to_f16(d_block);
    *dmin_out = pl_f32_to_f16(m_block);
}

/* Re-derive every level from the rounded (packed) scales. */
static void k45_levels(const float *x, uint16_t dh, uint16_t mh, const uint8_t *packed, int nmax, uint8_t *L) {
    for (int j = 0; j < 8; j++) {
        uint8_t sc, m;
        pl_k4_scale_min(j, packed, &sc, &m);
        const float d = pl_q_f16(dh) * (float)sc;
        if (d == 0) continue;
        const float dm = pl_q_f16(mh) * (float)m;
        for (int ii = 0; ii < 32; ii++)
            L[32 * j + ii] = (uint8_t)imax(0, imin(nmax, pl_q_nearest_int((x[32 * j + ii] + dm) / d)));
    }
}

void pl_ref_q4_K_from_float(const float *src, void *dst, int64_t n, const float *imatrix) {
    pl_block_q4_K *y = dst;
    for (int64_t i = 0; i < n / 256; i++) {
        const float *x = src + i * 256;
        uint8_t L[256];
        memset(y[i].scales, 0, 12);
        k45_scales(x, imatrix ? imatrix + 256 * i : NULL, 15, L, &y[i].d, &y[i].dmin, y[i].scales);
        k45_levels(x, y[i].d, y[i].dmin, y[i].scales, 15, L);
        for (int j = 0; j < 256; j += 64)
            for (int l = 0; l < 32; l++) y[i].qs[j / 2 + l] = (uint8_t)(L[j + l] | (L[j + l + 32] << 4));
    }
}

void pl_ref_q5_K_from_float(const float *src, void *dst, int64_t n, const float *imatrix) {
    pl_block_q5_K *y = dst;
    for (int64_t i = 0; i < n / 256; i++) {
        const float *x = src + i * 256;
        uint8_t L[256];
        memset(y[i].scales, 0, 12);
        k45_scales(x, imatrix ? imatrix + 256 * i : NULL, 31, L, &y[i].d, &y[i].dmin, y[i].scales);
        k45_levels(x, y[i].d, y[i].dmin, y[i].scales, 31, L);
        memset(y[i].qh, 0, 32);
        /* bit 4 of value j goes to bit j/32 of qh[j%32] */
        for (int j = 0; j < 256; j++)
            if (L[j] > 15) y[i].qh[j % 32] |= (uint8_t)(1u << (j / 32)), L[j] = (uint8_t)(L[j] - 16);
        for (int j = 0; j < 256; j += 64)
            for (int l = 0; l < 32; l++) y[i].qs[j / 2 + l] = (uint8_t)(L[j + l] | (L[j + l + 32] << 4));
    }
}

/* ---- q6_K -------------------------------------------------------------- */

void pl_ref_q6_K_from_float(const float *src, void *dst, int64_t n, const float *imatrix) {
    pl_block_q6_K *y = dst;
    for (int64_t i = 0; i < n / 256; i++) {
        const float *x = src + i * 256;
        int8_t L[256];
        float scales[16], max_scale = 0, max_abs_scale = 0;
        for (int ib = 0; ib < 16; ib++) {
            const float *qw = imatrix ? imatrix + 256 * i + 16 * ib : NULL;
            const float scale = pl_q_make_qx(16, 32, x + 16 * ib, L + 16 * ib, 1, qw);
            scales[ib] = scale;
            if (fabsf(scale) > max_abs_scale) max_abs_scale = fabsf(scale), max_scale = scale;
        }
        if (max_abs_scale < PL_GROUP_MAX_EPS) {
            memset(&y[i], 0, sizeof y[i]);
            continue;
        }
        const float iscale = -128.f / max_scale;
        y[i].d = pl_f32_to_f16(1 / iscale);
        for (int ib = 0; ib < 16; ib++) y[i].scales[ib] = (int8_t)imin(127, pl_q_nearest_int(iscale * scales[ib]));
        for (int j = 0; j < 16; j++) {
            const float d = pl_q_f16(y[i].d) * (float)y[i].scales[j];
            if (d == 0) continue;
            for (int ii = 0; ii < 16; ii++)
                L[16 * j + ii] = (int8_t)(imax(-32, imin(31, pl_q_nearest_int(x[16 * j + ii] / d))) + 32);
        }
        uint8_t *ql = y[i].ql, *qh = y[i].qh;
        for (int j = 0; j < 256; j += 128, ql += 64, qh += 32)
            for (int l = 0; l < 32; l++) {
                ql[l] = (uint8_t)((L[j + l] & 0xf) | ((L[j + l + 64] & 0xf) << 4));
                ql[l + 32] = (uint8_t)((L[j + l + 32] & 0xf) | ((L[j + l + 96] & 0xf) << 4));
                qh[l] = (uint8_t)((L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) | ((L[j + l + 64] >> 4) << 4) |
                                  ((L[j + l + 96] >> 4) << 6));
            }
    }
}
