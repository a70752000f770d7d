/*
 * quantize_iq1.c -- encoders of iq1_s and iq1_m (about 1.6-1.75 bits per
 * weight), reproducing llama.cpp v0.4.0's quantizers (MIT).  Each group of
 * 32 (iq1_s) or 16 (iq1_m) weights takes levels {-1, 0, 1} shifted by
 * +-1/8: the weights are sorted and every split into three runs is scored
 * exactly, then each 8 levels are snapped to the 2048-row codebook.
 * The sort is libc's qsort with llama.cpp's comparator on the same
 * (value, index) records, so ties come out in the same order.
 *
 * Both need importance weights to be usable; pl_quant_from_float refuses
 * them without one.  iq1_s called without weights writes zeros (llama.cpp
 * asserts); iq1_m follows llama.cpp's x^2 fallback.
 */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "quant/blocks.h"
#include "quant/iq_grid_search.h"
#include "quant/iq_tables.h"
#include "quant/quant_util.h"
#include "quant/ref.h"

#define EPS_IQ1_S 1e-12f
#define EPS_IQ1_M 1e-7f

static inline int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }
static inline float maxf(float a, float b) { return a > b ? a : b; }

/* Shifted level values for a +1/8 (x_p) and a -1/8 (x_m) group. */
static const float x_p[3] = {-1 + PL_IQ1S_DELTA, PL_IQ1S_DELTA, 1 + PL_IQ1S_DELTA};
static const float x_m[3] = {-1 - PL_IQ1S_DELTA, -PL_IQ1S_DELTA, 1 - PL_IQ1S_DELTA};

/* (value, original index) records, 8 bytes each as in llama.cpp */
typedef struct pair {
    float v;
    int32_t i;
} pair;

static int pair_cmp(const void *a, const void *b) {
    const float l = ((const pair *)a)->v, r = ((const pair *)b)->v;
    return l < r ? -1 : l > r ? 1 : 0;
}

/* Nearest codebook row among the neighbours, with level values xg at
 * `scale`; writes its levels (0..2) to L. */
static int iq1_best_neighbour(const uint16_t *nb, const uint64_t *grid, const float *xval, const float *weight,
                              float scale, const float *xg, int8_t *L, int ngrid) {
    const int count = nb[0];
    float best = FLT_MAX;
    int index = -1;
    for (int j = 1; j <= count; j++) {
        const uint64_t row = grid[nb[j]];
        float d2 = 0;
        for (int i = 0; i < 8; i++) {
            const float q = xg[((int8_t)(row >> (8 * i)) - 1) / 2];
            const float diff = scale * q - xval[i];
            d2 += weight[i] * diff * diff;
        }
        if (d2 < best) best = d2, index = nb[j];
    }
    if (index < 0) {
        /* Only reached with non-finite distances.  llama.cpp's fallback here
         * indexes xval by the row number (reading past the group); this one
         * scores every row properly instead. */
        for (int r = 0; r < ngrid; r++) {
            float d2 = 0;
            for (int j = 0; j < 8; j++) {
                const float q = xg[((int8_t)(grid[r] >> (8 * j)) - 1) / 2];
                const float diff = scale * q - xval[j];
                d2 += weight[j] * diff * diff;
            }
            if (d2 < best) best = d2, index = r;
        }
        if (index < 0) index = nb[1];
    }
    for (int i = 0; i < 8; i++) L[i] = (int8_t)(((int8_t)(grid[index] >> (8 * i)) - 1) / 2);
    return index;
}

static int iq1_pattern(const int8_t *L) {
    uint16_t u = 0;
    for (int j = 0; j < 8; j++) u |= (uint16_t)(L[j] << (2 * j));
    return u;
}

void pl_ref_iq1_s_from_float(const float *src, void *dst, int64_t n, const float *imatrix) {
    pl_block_iq1_s *y = dst;
    const pl_iq_grid *g = pl_iq_grid_get(PL_IQ_CB_IQ1S);
    for (int64_t ibl = 0; ibl < n / 256; ibl++) {
        memset(&y[ibl], 0, sizeof y[ibl]);
        if (!g || !imatrix) continue;
        const float *xbl = src + 256 * ibl;
        float scales[8], weight[32], sumx[33], sumw[33], max_scale = 0;
        int8_t L[32], shifts[8];
        uint16_t index[4];
        pair pairs[32];
        float sumx2 = 0;
        for (int i = 0; i < 256; i++) sumx2 += xbl[i] * xbl[i];
        const float sigma2 = 2 * sumx2 / 256;
        for (int ib = 0; ib < 8; ib++) {
            const float *xb = xbl + 32 * ib, *qw = imatrix + 256 * ibl + 32 * ib;
            for (int i = 0; i < 32; i++) weight[i] = qw[i] * sqrtf(sigma2 + xb[i] * xb[i]);
            float max = fabsf(xb[0]);
            for (int i = 1; i < 32; i++) max = maxf(max, fabsf(xb[i]));
            if (max < EPS_IQ1_S) {
                scales[ib] = 0, shifts[ib] = 1;
                continue;
            }
            for (int j = 0; j < 32; j++) pairs[j].v = xb[j], pairs[j].i = j;
            qsort(pairs, 32, sizeof(pair), pair_cmp);
            sumx[0] = sumw[0] = 0;
            for (int j = 0; j < 32; j++) {
                const int i = pairs[j].i;
                sumx[j + 1] = sumx[j] + weight[i] * xb[i];
                sumw[j + 1] = sumw[j] + weight[i];
            }
            float best_score = -FLT_MAX, scale = max;
            int besti1 = -1, besti2 = -1, best_shift = 0;
            for (int i1 = 0; i1 <= 32; i1++) {
                for (int i2 = i1; i2 <= 32; i2++) {
                    for (int sh = 0; sh < 2; sh++) {
                        const float *xs = sh == 0 ? x_p : x_m;
                        const float sumqx = (sumx[i1] - sumx[0]) * xs[0] + (sumx[i2] - sumx[i1]) * xs[1] +
                                            (sumx[32] - sumx[i2]) * xs[2];
                        const float sumq2 = (sumw[i1] - sumw[0]) * xs[0] * xs[0] + (sumw[i2] - sumw[i1]) * xs[1] * xs[1] +
                                            (sumw[32] - sumw[i2]) * xs[2] * xs[2];
                        if (sumq2 > 0 && sumqx * sumqx > best_score * sumq2) {
                            scale = sumqx / sumq2;
                            best_score = scale * sumqx;
                            besti1 = i1, besti2 = i2, best_shift = sh == 0 ? 1 : -1;
                        }
                    }
                }
            }
            if (besti1 < 0 || besti2 < 0 || best_shift == 0) {
                scales[ib] = 0, shifts[ib] = 1;
                continue;
            }
            for (int j = 0; j < besti1; j++) L[pairs[j].i] = 0;
            for (int j = besti1; j < besti2; j++) L[pairs[j].i] = 1;
            for (int j = besti2; j < 32; j++) L[pairs[j].i] = 2;
            if (scale < 0) {
                for (int j = 0; j < 32; j++) L[j] = (int8_t)(2 - L[j]);
                scale = -scale, best_shift = -best_shift;
            }
            bool all_on_grid = true;
            const float *xx = best_shift == 1 ? x_p : x_m;
            for (int k = 0; k < 4; k++) {
                const int u = iq1_pattern(L + 8 * k);
                int gi = g->map[u];
                if (gi < 0) {
                    all_on_grid = false;
                    gi = iq1_best_neighbour(g->neighbours - g->map[u] - 1, g->grid8, xb + 8 * k, weight + 8 * k, scale, xx,
                                            L + 8 * k, 2048);
                }
                index[k] = (uint16_t)gi;
            }
            if (!all_on_grid) {
                float sumqx = 0, sumq2 = 0;
                for (int k = 0; k < 4; k++)
                    for (int j = 0; j < 8; j++) {
                        const float w = weight[8 * k + j];
                        const float q = xx[((int8_t)(g->grid8[index[k]] >> (8 * j)) - 1) / 2];
                        sumqx += w * q * xb[8 * k + j];
                        sumq2 += w * q * q;
                    }
                if (sumqx > 0 && sumq2 > 0) scale = sumqx / sumq2;
            }
            uint16_t h = 0;
            for (int k = 0; k < 4; k++) {
                y[ibl].qs[4 * ib + k] = (uint8_t)(index[k] & 255);
                h |= (uint16_t)((index[k] >> 8) << (3 * k));
            }
            y[ibl].qh[ib] = h;
            scales[ib] = scale, shifts[ib] = (int8_t)best_shift;
            max_scale = maxf(max_scale, scale);
        }
        if (max_scale == 0) continue;
        const float d = max_scale / 15, id = 1 / d;
        y[ibl].d = pl_f32_to_f16(d * 1.125f);
        for (int ib = 0; ib < 8; ib++) {
            int l = clampi(pl_q_nearest_int(0.5f * (id * scales[ib] - 1)), 0, 7);
            if (shifts[ib] == -1) l |= 8;
            y[ibl].qh[ib] |= (uint16_t)(l << 12);
        }
    }
}

/* iq1_m: 16-weight groups whose two halves take the shift independently
 * (k: 0 ++, 1 +-, 2 -+, 3 --). */
static const float *iq1m_levels(int k, int half) {
    return half == 0 ? (k < 2 ? x_p : x_m) : (k % 2 == 0 ? x_p : x_m);
}

static void iq1m_weights(const float *xb, const float *qw, float sigma2, float *weight) {
    if (qw)
        for (int i = 0; i < 16; i++) weight[i] = qw[i] * sqrtf(sigma2 + xb[i] * xb[i]);
    else
        for (int i = 0; i < 16; i++) weight[i] = xb[i] * xb[i];
}

void pl_ref_iq1_m_from_float(const float *src, void *dst, int64_t n, const float *imatrix) {
    pl_block_iq1_m *y = dst;
    const pl_iq_grid *g = pl_iq_grid_get(PL_IQ_CB_IQ1S);
    static const uint8_t masks[4] = {0x00, 0x80, 0x08, 0x88};
    for (int64_t ibl = 0; ibl < n / 256; ibl++) {
        memset(&y[ibl], 0, sizeof y[ibl]);
        if (!g) continue;
        const float *xbl = src + 256 * ibl;
        float scales[16], weight[16], max_scale = 0;
        int8_t L[16], shifts[16];
        uint16_t index[2];
        pair pairs[16];
        float sumx2 = 0;
        for (int i = 0; i < 256; i++) sumx2 += xbl[i] * xbl[i];
        const float sigma2 = 2 * sumx2 / 256;
        for (int ib = 0; ib < 16; ib++) {
            const float *xb = xbl + 16 * ib;
            iq1m_weights(xb, imatrix ? imatrix + 256 * ibl + 16 * ib : NULL, sigma2, weight);
            float max = fabsf(xb[0]);
            for (int i = 1; i < 16; i++) max = maxf(max, fabsf(xb[i]));
            if (max < EPS_IQ1_M) {
                scales[ib] = 0, shifts[ib] = 0;
                continue;
            }
            for (int j = 0; j < 16; j++) pairs[j].v = xb[j], pairs[j].i = j;
            qsort(pairs, 16, sizeof(pair), pair_cmp);
            float best_score = -FLT_MAX, scale = max;
            int besti1 = -1, besti2 = -1, best_k = -1;
            for (int i1 = 0; i1 <= 16; i1++) {
                for (int i2 = i1; i2 <= 16; i2++) {
                    float sumqx[4] = {0}, sumq2[4] = {0};
                    /* the three runs take levels 0, 1, 2 */
                    for (int j = 0; j < 16; j++) {
                        const int lv = j < i1 ? 0 : j < i2 ? 1 : 2;
                        const int i = pairs[j].i;
                        const float w = weight[i];
                        /* first half: k 0,1 use x_p and 2,3 x_m; second half: k 0,2 x_p and 1,3 x_m.
                         * The update order within each case is llama.cpp's. */
                        if (i < 8) {
                            sumqx[0] += w * x_p[lv] * xb[i];
                            sumqx[1] += w * x_p[lv] * xb[i];
                            sumqx[2] += w * x_m[lv] * xb[i];
                            sumqx[3] += w * x_m[lv] * xb[i];
                            sumq2[0] += w * x_p[lv] * x_p[lv];
                            sumq2[1] += w * x_p[lv] * x_p[lv];
                            sumq2[2] += w * x_m[lv] * x_m[lv];
                            sumq2[3] += w * x_m[lv] * x_m[lv];
                        } else {
                            sumqx[0] += w * x_p[lv] * xb[i];
                            sumqx[2] += w * x_p[lv] * xb[i];
                            sumqx[1] += w * x_m[lv] * xb[i];
                            sumqx[3] += w * x_m[lv] * xb[i];
                            sumq2[0] += w * x_p[lv] * x_p[lv];
                            sumq2[2] += w * x_p[lv] * x_p[lv];
                            sumq2[1] += w * x_m[lv] * x_m[lv];
                            sumq2[3] += w * x_m[lv] * x_m[lv];
                        }
                    }
                    for (int k = 0; k < 4; k++)
                        if (sumq2[k] > 0 && sumqx[k] * sumqx[k] > best_score * sumq2[k]) {
                            scale = sumqx[k] / sumq2[k];
                            best_score = scale * sumqx[k];
                            besti1 = i1, besti2 = i2, best_k = k;
                        }
                }
            }
            if (besti1 < 0 || besti2 < 0 || best_k < 0) {
                scales[ib] = 0, shifts[ib] = 0;
                continue;
            }
            for (int j = 0; j < besti1; j++) L[pairs[j].i] = 0;
            for (int j = besti1; j < besti2; j++) L[pairs[j].i] = 1;
            for (int j = besti2; j < 16; j++) L[pairs[j].i] = 2;
            if (scale < 0) {
                for (int j = 0; j < 16; j++) L[j] = (int8_t)(2 - L[j]);
                scale = -scale;
                best_k = 3 - best_k;
            }
            bool all_on_grid = true;
            for (int k = 0; k < 2; k++) {
                const int u = iq1_pattern(L + 8 * k);
                int gi = g->map[u];
                if (gi < 0) {
                    all_on_grid = false;
                    gi = iq1_best_neighbour(g->neighbours - g->map[u] - 1, g->grid8, xb + 8 * k, weight + 8 * k, scale,
                                            iq1m_levels(best_k, k), L + 8 * k, 2048);
                }
                index[k] = (uint16_t)gi;
            }
            if (!all_on_grid) {
                float sumqx_f = 0, sumq2_f = 0;
                for (int k = 0; k < 2; k++) {
                    const float *xx = iq1m_levels(best_k, k);
                    for (int j = 0; j < 8; j++) {
                        const float w = weight[8 * k + j];
                        const float q = xx[((int8_t)(g->grid8[index[k]] >> (8 * j)) - 1) / 2];
                        sumqx_f += w * q * xb[8 * k + j];
                        sumq2_f += w * q * q;
                    }
                }
                if (sumqx_f > 0 && sumq2_f > 0) scale = sumqx_f / sumq2_f;
            }
            y[ibl].qs[2 * ib] = (uint8_t)(index[0] & 255);
            y[ibl].qs[2 * ib + 1] = (uint8_t)(index[1] & 255);
            y[ibl].qh[ib] = (uint8_t)((index[0] >> 8) | ((index[1] >> 8) << 4));
            scales[ib] = scale, shifts[ib] = (int8_t)best_k;
            max_scale = maxf(max_scale, scale);
        }
        if (max_scale == 0) continue;
        uint16_t sc[4] = {0, 0, 0, 0};
        float d = max_scale / 15;
        const float id = 1 / d;
        float sumqx_f = 0, sumq2_f = 0;
        for (int ib = 0; ib < 16; ib++) {
            const int l = clampi(pl_q_nearest_int(0.5f * (id * scales[ib] - 1)), 0, 7);
            sc[ib / 4] |= (uint16_t)(l << (3 * (ib % 4)));
            y[ibl].qh[ib] |= masks[shifts[ib]];
            const float *xb = xbl + 16 * ib;
            iq1m_weights(xb, imatrix ? imatrix + 256 * ibl + 16 * ib : NULL, sigma2, weight);
            for (int k = 0; k < 2; k++) {
                const float *xx = iq1m_levels(shifts[ib], k);
                const int gi = y[ibl].qs[2 * ib + k] + ((y[ibl].qh[ib] << (8 - 4 * k)) & 0x700);
                for (int j = 0; j < 8; j++) {
                    const float w = weight[8 * k + j];
                    const float q = xx[((int8_t)(g->grid8[gi] >> (8 * j)) - 1) / 2] * (float)(2 * l + 1);
                    sumqx_f += w * q * xb[8 * k + j];
                    sumq2_f += w * q * q;
                }
            }
        }
        if (sumq2_f > 0) d = sumqx_f / sumq2_f;
        const uint16_t s = pl_f32_to_f16(d * 1.1125f);
        sc[0] |= (uint16_t)((s & 0x000f) << 12);
        sc[1] |= (uint16_t)((s & 0x00f0) << 8);
        sc[2] |= (uint16_t)((s & 0x0f00) << 4);
        sc[3] |= (uint16_t)(s & 0xf000);
        for (int k = 0; k < 4; k++) y[ibl].scales[2 * k] = (uint8_t)sc[k], y[ibl].scales[2 * k + 1] = (uint8_t)(sc[k] >> 8);
    }
}
