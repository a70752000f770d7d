/*
 * quantize_iq.c -- encoders of the codebook types iq2_xxs, iq2_xs, iq2_s,
 * iq3_xxs and iq3_s, reproducing llama.cpp v0.4.0's quantizers (MIT)
 * decision for decision: per 32 (or 16) weights, take |x| (iq2_xxs/xs and
 * iq3_xxs flip the least important sign so the count of negatives is even:
 * only 7 sign bits are stored), try a range of scales, round each group of
 * 8 (4) levels and snap it to the nearest codebook row, keep the best scale,
 * then quantize the group scales under one f16.
 *
 * iq2_xxs and iq2_xs cannot run without importance weights (llama.cpp
 * asserts); here the row comes out as zeros, and pl_quant_from_float
 * refuses those types without an imatrix before ever getting here.
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "quant/blocks.h"
#include "quant/iq_grid_search.h"
#include "quant/quant_search.h"
#include "quant/quant_util.h"
#include "quant/ref.h"

#define EPS_IQ3_XXS 1e-8f
#define EPS_IQ2_S 1e-8f

static inline int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }
static inline float maxf(float a, float b) { return a > b ? a : b; }

/* |x| of 8 values with an even number of sign flips: when the count is
 * odd, the value with the least weight*x^2 keeps its sign (and becomes
 * negative in xval).  Returns the 7 stored sign bits. */
static uint8_t even_signs(const float *xb, const float *weight, float *xval) {
    int nflip = 0;
    uint8_t s = 0;
    for (int i = 0; i < 8; i++) {
        if (xb[i] >= 0) {
            xval[i] = xb[i];
        } else {
            xval[i] = -xb[i];
            nflip++;
            s |= (uint8_t)(1 << i);
        }
    }
    if (nflip % 2) {
        int imin = 0;
        float min = weight[0] * xb[0] * xb[0];
        for (int i = 1; i < 8; i++) {
            float ax = weight[i] * xb[i] * xb[i];
            if (ax < min) min = ax, imin = i;
        }
        xval[imin] = -xval[imin];
        s ^= (uint8_t)(1 << imin);
    }
    return s & 127;
}

/* All 8 signs, no parity (iq2_s, iq3_s store them whole). */
static uint8_t all_signs(const float *xb, float *xval) {
    uint8_t s = 0;
    for (int i = 0; i < 8; i++) {
        if (xb[i] >= 0) xval[i] = xb[i];
        else xval[i] = -xb[i], s |= (uint8_t)(1 << i);
    }
    return s;
}

/* Levels 0..2^bits-1 from x at inverse scale id: round((id*x - 1)/2). */
static inline int level(float id, float x, int kmax) { return clampi(pl_q_nearest_int(0.5f * (id * x - 1)), 0, kmax - 1); }

/* weighted sums of x against the odd levels 2L+1 */
static void fit_sums(int n, const float *weight, const float *xval, const int8_t *L, float *sumqx, float *sumq2) {
    float sx = 0, s2 = 0;
    for (int i = 0; i < n; i++) {
        const float w = weight[i], q = (float)(2 * L[i] + 1);
        sx += w * xval[i] * q;
        s2 += w * q * q;
    }
    *sumqx = sx, *sumq2 = s2;
}

/* ---- iq2: groups of 8 levels in {0..3} against a uint64 grid ----------- */

/* Levels of group k (8 values) at inverse scale id, snapped to the grid
 * (with this_scale for the neighbour choice); returns whether the rounded
 * pattern was on the grid. */
static bool iq2_group(const pl_iq_grid *g, float id, float this_scale, const float *xval, const float *waux, int8_t *L) {
    uint16_t u = 0;
    for (int i = 0; i < 8; i++) {
        L[i] = (int8_t)level(id, xval[i], 3);
        u |= (uint16_t)(L[i] << (2 * i));
    }
    if (g->map[u] >= 0) return true;
    pl_iq2_best_neighbour(g->neighbours - g->map[u] - 1, g->grid8, xval, waux, this_scale, L);
    return false;
}

static int iq2_index(const pl_iq_grid *g, const int8_t *L) {
    uint16_t u = 0;
    for (int i = 0; i < 8; i++) u |= (uint16_t)(L[i] << (2 * i));
    return g->map[u] >= 0 ? g->map[u] : 0; /* always on the grid by construction */
}

static void iq2_xxs_row(const float *x, pl_block_iq2_xxs *y, int64_t n, const float *qw_row) {
    const pl_iq_grid *g = pl_iq_grid_get(PL_IQ_CB_IQ2XXS);
    const int kMaxQ = 3;
    for (int64_t ibl = 0; ibl < n / 256; ibl++) {
        memset(&y[ibl], 0, sizeof y[ibl]);
        if (!g || !qw_row) continue;
        float scales[8], weight[32], xval[32], waux[32], max_scale = 0;
        int8_t L[32], Laux[32];
        uint8_t block_signs[4];
        uint32_t q2[16] = {0};
        const float *xbl = x + 256 * ibl;
        float sumx2 = 0;
        for (int i = 0; i < 256; i++) sumx2 += xbl[i] * xbl[i];
        const float sigma2 = sumx2 / 256;
        for (int ib = 0; ib < 8; ib++) {
            const float *xb = xbl + 32 * ib, *qw = qw_row + 256 * ibl + 32 * ib;
            for (int i = 0; i < 32; i++) weight[i] = qw[i] * sqrtf(sigma2 + xb[i] * xb[i]);
            for (int i = 0; i < 32; i++) waux[i] = sqrtf(weight[i]);
            for (int k = 0; k < 4; k++) block_signs[k] = even_signs(xb + 8 * k, weight + 8 * k, xval + 8 * k);
            float max = xval[0];
            for (int i = 1; i < 32; i++) max = maxf(max, xval[i]);
            if (max < PL_GROUP_MAX_EPS) {
                scales[ib] = 0;
                continue;
            }
            float scale = pl_q_make_qp(32, kMaxQ + 1, xval, (uint8_t *)L, weight);
            const float eff_max = scale * (float)kMaxQ;
            if (eff_max <= 0) {
                scales[ib] = 0;
                continue;
            }
            float best = 0;
            for (int is = -6; is <= 6; is++) {
                const float id = ((float)(2 * kMaxQ - 1) + (float)is * 0.1f) / eff_max, this_scale = 1 / id;
                for (int k = 0; k < 4; k++) iq2_group(g, id, this_scale, xval + 8 * k, waux + 8 * k, Laux + 8 * k);
                float sumqx, sumq2;
                fit_sums(32, weight, xval, Laux, &sumqx, &sumq2);
                if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
                    scale = sumqx / sumq2;
                    best = scale * sumqx;
                    memcpy(L, Laux, 32);
                }
            }
            if (scale > 0) {
                const float id = 1 / scale;
                for (int k = 0; k < 4; k++) {
                    iq2_group(g, id, scale, xval + 8 * k, waux + 8 * k, L + 8 * k);
                }
                float sumqx, sumq2;
                fit_sums(32, weight, xval, L, &sumqx, &sumq2);
                if (sumq2 > 0) scale = sumqx / sumq2;
            }
            if (scale < 0) { /* never expected; kept as llama.cpp has it */
                scale = -scale;
                for (int k = 0; k < 4; k++) block_signs[k] = (uint8_t)(~block_signs[k] & 127);
            }
            for (int k = 0; k < 4; k++) {
                q2[2 * ib] |= (uint32_t)iq2_index(g, L + 8 * k) << (8 * k);
                q2[2 * ib + 1] |= (uint32_t)block_signs[k] << (7 * k);
            }
            scales[ib] = scale;
            max_scale = maxf(max_scale, scale);
        }
        if (max_scale == 0) continue;
        const float d = max_scale / 31, id = 1 / d;
        y[ibl].d = pl_f32_to_f16(d);
        for (int ib = 0; ib < 8; ib++)
            q2[2 * ib + 1] |= (uint32_t)clampi(pl_q_nearest_int(0.5f * (id * scales[ib] - 1)), 0, 15) << 28;
        memcpy(y[ibl].qs, q2, 64);
    }
}

void pl_ref_iq2_xxs_from_float(const float *src, void *dst, int64_t n, const float *imatrix) {
    iq2_xxs_row(src, dst, n, imatrix);
}

/* iq2_xs and iq2_s share the 16-value search; they differ in the codebook,
 * the sign parity, the weights without an imatrix, the epsilon and the
 * packing (done by the callers from L, signs and scale).  Returns false for
 * a group below epsilon, which stores nothing. */
typedef struct iq2_16_result {
    float scale;
    int8_t L[16];
    uint8_t signs[2];
} iq2_16_result;

static bool iq2_search16(const pl_iq_grid *g, const float *xb, const float *weight, bool parity, float eps,
                         iq2_16_result *r) {
    const int kMaxQ = 3;
    float xval[16], waux[16];
    int8_t Laux[16];
    bool on_grid[2], on_grid_aux[2];
    for (int i = 0; i < 16; i++) waux[i] = sqrtf(weight[i]);
    for (int k = 0; k < 2; k++)
        r->signs[k] = parity ? even_signs(xb + 8 * k, weight + 8 * k, xval + 8 * k) : all_signs(xb + 8 * k, xval + 8 * k);
    float max = xval[0];
    for (int i = 1; i < 16; i++) max = maxf(max, xval[i]);
    memset(r->L, 0, 16);
    r->scale = 0;
    if (max < eps) return false;
    float best = 0, scale = max / (float)(2 * kMaxQ - 1);
    on_grid[0] = on_grid[1] = true;
    for (int is = -9; is <= 9; is++) {
        const float id = ((float)(2 * kMaxQ - 1) + (float)is * 0.1f) / max, this_scale = 1 / id;
        for (int k = 0; k < 2; k++) on_grid_aux[k] = iq2_group(g, id, this_scale, xval + 8 * k, waux + 8 * k, Laux + 8 * k);
        float sumqx, sumq2;
        fit_sums(16, weight, xval, Laux, &sumqx, &sumq2);
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
            scale = sumqx / sumq2;
            best = scale * sumqx;
            memcpy(r->L, Laux, 16);
            on_grid[0] = on_grid_aux[0], on_grid[1] = on_grid_aux[1];
        }
    }
    if ((!on_grid[0] || !on_grid[1]) && scale > 0) {
        const float id = 1 / scale;
        for (int k = 0; k < 2; k++)
            if (!on_grid[k]) iq2_group(g, id, scale, xval + 8 * k, waux + 8 * k, r->L + 8 * k);
        float sumqx, sumq2;
        fit_sums(16, weight, xval, r->L, &sumqx, &sumq2);
        if (sumq2 > 0) scale = sumqx / sumq2;
    }
    if (scale < 0) {
        scale = -scale;
        for (int k = 0; k < 2; k++) r->signs[k] = (uint8_t)(parity ? ~r->signs[k] & 127 : ~r->signs[k]);
    }
    r->scale = scale;
    return true;
}

/* 4-bit group scales l = round((s/d - 1)/2) with d = max_scale/31. */
static int scale4(float id, float s) { return clampi(pl_q_nearest_int(0.5f * (id * s - 1)), 0, 15); }

void pl_ref_iq2_xs_from_float(const float *src, void *dst, int64_t n, const float *imatrix) {
    pl_block_iq2_xs *y = dst;
    const pl_iq_grid *g = pl_iq_grid_get(PL_IQ_CB_IQ2XS);
    for (int64_t ibl = 0; ibl < n / 256; ibl++) {
        memset(&y[ibl], 0, sizeof y[ibl]);
        if (!g || !imatrix) continue;
        const float *xbl = src + 256 * ibl;
        float sumx2 = 0, scales[16], weight[16], max_scale = 0;
        uint16_t q2[32] = {0};
        for (int i = 0; i < 256; i++) sumx2 += xbl[i] * xbl[i];
        const float sigma2 = sumx2 / 256;
        for (int ib = 0; ib < 16; ib++) {
            const float *xb = xbl + 16 * ib, *qw = imatrix + 256 * ibl + 16 * ib;
            for (int i = 0; i < 16; i++) weight[i] = qw[i] * sqrtf(sigma2 + xb[i] * xb[i]);
            iq2_16_result r;
            bool stored = iq2_search16(g, xb, weight, true, PL_GROUP_MAX_EPS, &r);
            scales[ib] = r.scale;
            if (!stored) continue;
            for (int k = 0; k < 2; k++) q2[2 * ib + k] = (uint16_t)(iq2_index(g, r.L + 8 * k) | (r.signs[k] << 9));
            max_scale = maxf(max_scale, r.scale);
        }
        if (max_scale == 0) continue;
        const float d = max_scale / 31, id = 1 / d;
        y[ibl].d = pl_f32_to_f16(d);
        for (int ib = 0; ib < 16; ib++) {
            const int l = scale4(id, scales[ib]);
            if (ib % 2 == 0) y[ibl].scales[ib / 2] = (uint8_t)l;
            else y[ibl].scales[ib / 2] |= (uint8_t)(l << 4);
        }
        memcpy(y[ibl].qs, q2, 64);
    }
}

void pl_ref_iq2_s_from_float(const float *src, void *dst, int64_t n, const float *imatrix) {
    pl_block_iq2_s *y = dst;
    const pl_iq_grid *g = pl_iq_grid_get(PL_IQ_CB_IQ2S);
    for (int64_t ibl = 0; ibl < n / 256; ibl++) {
        memset(&y[ibl], 0, sizeof y[ibl]);
        if (!g) continue;
        const float *xbl = src + 256 * ibl;
        float sumx2 = 0, scales[16], weight[16], max_scale = 0;
        for (int i = 0; i < 256; i++) sumx2 += xbl[i] * xbl[i];
        const float sigma2 = 2 * sumx2 / 256;
        for (int ib = 0; ib < 16; ib++) {
            const float *xb = xbl + 16 * ib;
            if (imatrix) {
                const float *qw = imatrix + 256 * ibl + 16 * ib;
                for (int i = 0; i < 16; i++) weight[i] = qw[i] * sqrtf(sigma2 + xb[i] * xb[i]);
            } else {
                for (int i = 0; i < 16; i++) weight[i] = 0.25f * sigma2 + xb[i] * xb[i];
            }
            iq2_16_result r;
            bool stored = iq2_search16(g, xb, weight, false, EPS_IQ2_S, &r);
            scales[ib] = r.scale;
            if (!stored) continue;
            for (int k = 0; k < 2; k++) {
                const int i8 = 2 * ib + k, gi = iq2_index(g, r.L + 8 * k);
                y[ibl].qs[i8] = (uint8_t)(gi & 255);
                y[ibl].qh[i8 / 4] |= (uint8_t)((gi >> 8) << (2 * (i8 % 4)));
                y[ibl].qs[32 + i8] = r.signs[k];
            }
            max_scale = maxf(max_scale, r.scale);
        }
        if (max_scale == 0) continue;
        const float d = max_scale / 31, id = 1 / d;
        y[ibl].d = pl_f32_to_f16(d * 0.9875f);
        for (int ib = 0; ib < 16; ib++) {
            const int l = scale4(id, scales[ib]);
            if (ib % 2 == 0) y[ibl].scales[ib / 2] = (uint8_t)l;
            else y[ibl].scales[ib / 2] |= (uint8_t)(l << 4);
        }
    }
}

/* ---- iq3: groups of 4 levels in {0..7} against a uint32 grid ------------ */

static int iq3_best_neighbour(const uint16_t *nb, const uint32_t *grid, const float *xval, const float *weight,
                              float scale, int8_t *L) {
    const int count = nb[0];
    float best_d2 = 3.40282347e+38f;
    int best = -1;
    for (int j = 1; j <= count; j++) {
        const uint32_t row = grid[nb[j]];
        float d2 = 0;
        for (int i = 0; i < 4; i++) {
            const float diff = scale * (float)(int8_t)(row >> (8 * i)) - xval[i];
            d2 += weight[i] * diff * diff;
        }
        if (d2 < best_d2) best_d2 = d2, best = nb[j];
    }
    if (best < 0) best = nb[1]; /* only with NaN distances; llama.cpp asserts */
    for (int i = 0; i < 4; i++) L[i] = (int8_t)(((int8_t)(grid[best] >> (8 * i)) - 1) / 2);
    return best;
}

static bool iq3_group(const pl_iq_grid *g, float id, float this_scale, const float *xval, const float *waux, int8_t *L) {
    uint16_t u = 0;
    for (int i = 0; i < 4; i++) {
        L[i] = (int8_t)level(id, xval[i], 8);
        u |= (uint16_t)(L[i] << (3 * i));
    }
    if (g->map[u] >= 0) return true;
    iq3_best_neighbour(g->neighbours - g->map[u] - 1, g->grid4, xval, waux, this_scale, L);
    return false;
}

static int iq3_index(const pl_iq_grid *g, const int8_t *L) {
    uint16_t u = 0;
    for (int i = 0; i < 4; i++) u |= (uint16_t)(L[i] << (3 * i));
    return g->map[u] >= 0 ? g->map[u] : 0; /* always on the grid by construction */
}

/* The 32-value search of iq3_xxs (xxs: 31 scales, parity signs, only the
 * off-grid groups redone) and iq3_s (19 scales, all signs, all redone). */
static bool iq3_search32(const pl_iq_grid *g, bool xxs, const float *xb, const float *weight, float *scale_out,
                         int8_t *L, uint8_t *signs) {
    const int kMaxQ = 8;
    float xval[32], waux[32];
    int8_t Laux[32];
    bool on_grid[8], on_grid_aux[8];
    for (int i = 0; i < 32; i++) waux[i] = sqrtf(weight[i]);
    for (int k = 0; k < 4; k++)
        signs[k] = xxs ? even_signs(xb + 8 * k, weight + 8 * k, xval + 8 * k) : all_signs(xb + 8 * k, xval + 8 * k);
    float max = xval[0];
    for (int i = 1; i < 32; i++) max = maxf(max, xval[i]);
    memset(L, 0, 32);
    *scale_out = 0;
    if (xxs ? max < EPS_IQ3_XXS : max == 0) return false;
    float best = 0, scale = max / (float)(2 * kMaxQ - 1);
    for (int k = 0; k < 8; k++) on_grid[k] = xxs;
    const int range = xxs ? 15 : 9;
    for (int is = -range; is <= range; is++) {
        const float id = ((float)(2 * kMaxQ - 1) + (float)is * 0.2f) / max, this_scale = 1 / id;
        for (int k = 0; k < 8; k++) on_grid_aux[k] = iq3_group(g, id, this_scale, xval + 4 * k, waux + 4 * k, Laux + 4 * k);
        float sumqx, sumq2;
        fit_sums(32, weight, xval, Laux, &sumqx, &sumq2);
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
            scale = sumqx / sumq2;
            best = scale * sumqx;
            memcpy(L, Laux, 32);
            memcpy(on_grid, on_grid_aux, sizeof on_grid);
        }
    }
    int n_off = 0;
    for (int k = 0; k < 8; k++) n_off += !on_grid[k];
    if (n_off > 0 && scale > 0) {
        const float id = 1 / scale;
        for (int k = 0; k < 8; k++)
            if (!xxs || !on_grid[k]) iq3_group(g, id, scale, xval + 4 * k, waux + 4 * k, L + 4 * k);
        float sumqx, sumq2;
        fit_sums(32, weight, xval, L, &sumqx, &sumq2);
        if (sumq2 > 0) scale = sumqx / sumq2;
    }
    if (scale < 0) {
        scale = -scale;
        for (int k = 0; k < 4; k++) signs[k] = (uint8_t)(xxs ? ~signs[k] & 127 : ~signs[k]);
    }
    *scale_out = scale;
    return true;
}

/* sigma2 and the weights of one 32-group (x^2 without an imatrix). */
static void iq3_weights(const float *xb, const float *qw, float sigma2, float *weight) {
    if (qw)
        for (int i = 0; i < 32; i++) weight[i] = qw[i] * sqrtf(sigma2 + xb[i] * xb[i]);
    else
        for (int i = 0; i < 32; i++) weight[i] = xb[i] * xb[i];
}

void pl_ref_iq3_xxs_from_float(const float *src, void *dst, int64_t n, const float *imatrix) {
    pl_block_iq3_xxs *y = dst;
    const pl_iq_grid *g = pl_iq_grid_get(PL_IQ_CB_IQ3XXS);
    for (int64_t ibl = 0; ibl < n / 256; ibl++) {
        memset(&y[ibl], 0, sizeof y[ibl]);
        if (!g) continue;
        const float *xbl = src + 256 * ibl;
        float sumx2 = 0, scales[8], weight[32], max_scale = 0;
        uint8_t q3[96] = {0};
        uint32_t sas[8] = {0}; /* scales and signs, one word per 32 */
        for (int i = 0; i < 256; i++) sumx2 += xbl[i] * xbl[i];
        const float sigma2 = 2 * sumx2 / 256;
        for (int ib = 0; ib < 8; ib++) {
            const float *xb = xbl + 32 * ib;
            iq3_weights(xb, imatrix ? imatrix + 256 * ibl + 32 * ib : NULL, sigma2, weight);
            int8_t L[32];
            uint8_t signs[4];
            bool stored = iq3_search32(g, true, xb, weight, &scales[ib], L, signs);
            if (!stored) continue;
            for (int k = 0; k < 8; k++) q3[8 * ib + k] = (uint8_t)iq3_index(g, L + 4 * k);
            sas[ib] = (uint32_t)signs[0] | ((uint32_t)signs[1] << 7) | ((uint32_t)signs[2] << 14) | ((uint32_t)signs[3] << 21);
            max_scale = maxf(max_scale, scales[ib]);
        }
        if (max_scale == 0) continue;
        const float d = max_scale / 31, id = 1 / d;
        y[ibl].d = pl_f32_to_f16(d * 1.0125f);
        for (int ib = 0; ib < 8; ib++) sas[ib] |= (uint32_t)scale4(id, scales[ib]) << 28;
        memcpy(q3 + 64, sas, 32);
        memcpy(y[ibl].qs, q3, 96);
    }
}

void pl_ref_iq3_s_from_float(const float *src, void *dst, int64_t n, const float *imatrix) {
    pl_block_iq3_s *y = dst;
    const pl_iq_grid *g = pl_iq_grid_get(PL_IQ_CB_IQ3S);
    for (int64_t ibl = 0; ibl < n / 256; ibl++) {
        memset(&y[ibl], 0, sizeof y[ibl]);
        if (!g) continue;
        const float *xbl = src + 256 * ibl;
        float sumx2 = 0, scales[8], weight[32], max_scale = 0;
        for (int i = 0; i < 256; i++) sumx2 += xbl[i] * xbl[i];
        const float sigma2 = 2 * sumx2 / 256;
        /* llama.cpp advances its qs and signs cursors only past the groups it
         * stores, so an all-zero group shifts the following groups' indices
         * and signs forward (qh stays at the group's own position); the
         * bytes are reproduced as written, even though the decoder reads
         * those groups at their fixed positions. */
        uint8_t *qs = y[ibl].qs, *sg = y[ibl].signs;
        for (int ib = 0; ib < 8; ib++) {
            const float *xb = xbl + 32 * ib;
            iq3_weights(xb, imatrix ? imatrix + 256 * ibl + 32 * ib : NULL, sigma2, weight);
            int8_t L[32];
            uint8_t signs[4];
            bool stored = iq3_search32(g, false, xb, weight, &scales[ib], L, signs);
            if (!stored) continue;
            for (int k = 0; k < 8; k++) {
                const int gi = iq3_index(g, L + 4 * k);
                qs[k] = (uint8_t)(gi & 255);
                y[ibl].qh[ib] |= (uint8_t)((gi >> 8) << k);
            }
            qs += 8;
            memcpy(sg, signs, 4);
            sg += 4;
            max_scale = maxf(max_scale, scales[ib]);
        }
        if (max_scale == 0) continue;
        const float d = max_scale / 31, id = 1 / d;
        y[ibl].d = pl_f32_to_f16(d * 1.033f);
        for (int ib = 0; ib < 8; ib += 2)
            y[ibl].scales[ib / 2] = (uint8_t)(scale4(id, scales[ib]) | (scale4(id, scales[ib + 1]) << 4));
    }
}
