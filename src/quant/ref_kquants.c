/*
 * ref_kquants.c -- decode and dot products of the k-quants q2_K ... q6_K
 * (256-element super-blocks of 16 or 8 sub-blocks with quantized scales)
 * against q8_K activations.  The dots keep llama.cpp's float structure:
 * q3_K..q6_K accumulate 8 integer lanes (element index mod 8) per block and
 * 8 float lane sums across blocks, added up at the end; the mins of q2_K,
 * q4_K and q5_K come from the activation's 16-element sums (bsums).
 */
#include <string.h>

#include "quant/blocks.h"
#include "quant/kquant_scales.h"
#include "quant/quant_util.h"
#include "quant/ref.h"

/* ---- decode ------------------------------------------------------------ */

void pl_ref_q2_K_to_float(const void *src, float *dst, int64_t n) {
    const pl_block_q2_K *b = src;
    for (int64_t i = 0; i < n / 256; i++) {
        const float d = pl_q_f16(b[i].d), min = pl_q_f16(b[i].dmin);
        for (int e = 0; e < 256; e++) {
            const int half = e / 128, j = (e % 128) / 32, l = e % 32;
            const uint8_t sc = b[i].scales[e / 16];
            const int q = (b[i].qs[half * 32 + l] >> (2 * j)) & 3;
            const float dl = d * (float)(sc & 0xf), ml = min * (float)(sc >> 4);
            *dst++ = dl * (float)q - ml;
        }
    }
}

void pl_ref_q3_K_to_float(const void *src, float *dst, int64_t n) {
    const pl_block_q3_K *b = src;
    for (int64_t i = 0; i < n / 256; i++) {
        const float d_all = pl_q_f16(b[i].d);
        int8_t sc[16];
        pl_q3k_scales(b[i].scales, sc);
        for (int e = 0; e < 256; e++) {
            const int half = e / 128, j = (e % 128) / 32, l = e % 32;
            const int q = (b[i].qs[half * 32 + l] >> (2 * j)) & 3;
            const int hi = (b[i].hmask[l] >> (e / 32)) & 1;
            const float dl = d_all * (float)(sc[e / 16] - 32);
            *dst++ = dl * (float)(q - (hi ? 0 : 4));
        }
    }
}

void pl_ref_q4_K_to_float(const void *src, float *dst, int64_t n) {
    const pl_block_q4_K *b = src;
    for (int64_t i = 0; i < n / 256; i++) {
        const float d = pl_q_f16(b[i].d), min = pl_q_f16(b[i].dmin);
        for (int e = 0; e < 256; e++) {
            uint8_t sc, m;
            pl_k4_scale_min(e / 32, b[i].scales, &sc, &m);
            const uint8_t byte = b[i].qs[(e / 64) * 32 + e % 32];
            const int q = (e / 32) % 2 ? byte >> 4 : byte & 0xf;
            *dst++ = d * (float)sc * (float)q - min * (float)m;
        }
    }
}

void pl_ref_q5_K_to_float(const void *src, float *dst, int64_t n) {
    const pl_block_q5_K *b = src;
    for (int64_t i = 0; i < n / 256; i++) {
        const float d = pl_q_f16(b[i].d), min = pl_q_f16(b[i].dmin);
        for (int e = 0; e < 256; e++) {
            uint8_t sc, m;
            pl_k4_scale_min(e / 32, b[i].scales, &sc, &m);
            const uint8_t byte = b[i].qs[(e / 64) * 32 + e % 32];
            const int lo = (e / 32) % 2 ? byte >> 4 : byte & 0xf;
            const int hi = (b[i].qh[e % 32] >> (e / 32)) & 1;
            *dst++ = d * (float)sc * (float)(lo + 16 * hi) - min * (float)m;
        }
    }
}

/* q6_K value e (0..255) of a block, in [-32, 31]. */
static inline int q6_value(const pl_block_q6_K *b, int e) {
    const int half = e / 128, quarter = (e % 128) / 32, l = e % 32;
    const uint8_t lo_byte = b->ql[half * 64 + (quarter & 1) * 32 + l];
    const int lo = quarter < 2 ? lo_byte & 0xf : lo_byte >> 4;
    const int hi = (b->qh[half * 32 + l] >> (2 * quarter)) & 3;
    return (lo | (hi << 4)) - 32;
}

void pl_ref_q6_K_to_float(const void *src, float *dst, int64_t n) {
    const pl_block_q6_K *b = src;
    for (int64_t i = 0; i < n / 256; i++) {
        const float d = pl_q_f16(b[i].d);
        for (int e = 0; e < 256; e++) *dst++ = d * (float)b[i].scales[e / 16] * (float)q6_value(&b[i], e);
    }
}

/* ---- dot products -------------------------------------------------------- */

float pl_ref_q2_K_vec_dot(int64_t n, const void *w, const void *a) {
    const pl_block_q2_K *x = w;
    const pl_block_q8_K *y = a;
    float sum = 0;
    for (int64_t i = 0; i < n / 256; i++) {
        int summs = 0, isum = 0;
        for (int j = 0; j < 16; j++) summs += y[i].bsums[j] * (x[i].scales[j] >> 4);
        for (int e = 0; e < 256; e += 16) {
            int isuml = 0;
            for (int k = e; k < e + 16; k++) {
                const int half = k / 128, j = (k % 128) / 32, l = k % 32;
                isuml += y[i].qs[k] * ((x[i].qs[half * 32 + l] >> (2 * j)) & 3);
            }
            isum += (x[i].scales[e / 16] & 0xf) * isuml;
        }
        const float dall = y[i].d * pl_q_f16(x[i].d), dmin = y[i].d * pl_q_f16(x[i].dmin);
        sum += dall * (float)isum - dmin * (float)summs;
    }
    return sum;
}

/* The shared tail of q3_K..q6_K: lanes[l] += d * ilanes[l] per block, and
 * at the end sum (which holds the min terms) + lane 0 + ... + lane 7. */
static float lanes_total(float sum, const float lanes[8]) {
    for (int l = 0; l < 8; l++) sum += lanes[l];
    return sum;
}

float pl_ref_q3_K_vec_dot(int64_t n, const void *w, const void *a) {
    const pl_block_q3_K *x = w;
    const pl_block_q8_K *y = a;
    float lanes[8] = {0};
    for (int64_t i = 0; i < n / 256; i++) {
        int8_t sc[16];
        pl_q3k_scales(x[i].scales, sc);
        int32_t il[8] = {0};
        for (int e = 0; e < 256; e++) {
            const int half = e / 128, j = (e % 128) / 32, l = e % 32;
            const int q = ((x[i].qs[half * 32 + l] >> (2 * j)) & 3) - (((x[i].hmask[l] >> (e / 32)) & 1) ? 0 : 4);
            il[e % 8] += (sc[e / 16] - 32) * (y[i].qs[e] * q);
        }
        const float d = pl_q_f16(x[i].d) * y[i].d;
        for (int l = 0; l < 8; l++) lanes[l] += d * (float)il[l];
    }
    return lanes_total(0, lanes);
}

/* q4_K and q5_K differ only in the 5th bit; hbits is NULL for q4_K. */
static float dot_q45_K(int64_t n, const uint8_t *blocks, size_t bytes, int qs_off, int qh_off, const pl_block_q8_K *y) {
    float lanes[8] = {0}, sum = 0;
    for (int64_t i = 0; i < n / 256; i++) {
        const uint8_t *blk = blocks + (size_t)i * bytes;
        uint16_t dh, mh;
        memcpy(&dh, blk, 2);
        memcpy(&mh, blk + 2, 2);
        uint8_t sc[8], mn[8];
        for (int j = 0; j < 8; j++) pl_k4_scale_min(j, blk + 4, &sc[j], &mn[j]);
        int sumi = 0;
        for (int j = 0; j < 16; j++) sumi += y[i].bsums[j] * mn[j / 2];
        int32_t il[8] = {0};
        for (int e = 0; e < 256; e++) {
            const uint8_t byte = blk[qs_off + (e / 64) * 32 + e % 32];
            int q = (e / 32) % 2 ? byte >> 4 : byte & 0xf;
            if (qh_off) q += ((blk[qh_off + e % 32] >> (e / 32)) & 1) * 16;
            il[e % 8] += sc[e / 32] * (y[i].qs[e] * q);
        }
        const float d = pl_q_f16(dh) * y[i].d;
        for (int l = 0; l < 8; l++) lanes[l] += d * (float)il[l];
        const float dmin = pl_q_f16(mh) * y[i].d;
        sum -= dmin * (float)sumi;
    }
    return lanes_total(sum, lanes);
}

float pl_ref_q4_K_vec_dot(int64_t n, const void *w, const void *a) {
    return dot_q45_K(n, w, sizeof(pl_block_q4_K), 16, 0, a);
}

float pl_ref_q5_K_vec_dot(int64_t n, const void *w, const void *a) {
    return dot_q45_K(n, w, sizeof(pl_block_q5_K), 48, 16, a);
}

float pl_ref_q6_K_vec_dot(int64_t n, const void *w, const void *a) {
    const pl_block_q6_K *x = w;
    const pl_block_q8_K *y = a;
    float lanes[8] = {0};
    for (int64_t i = 0; i < n / 256; i++) {
        int32_t il[8] = {0};
        for (int e = 0; e < 256; e++) il[e % 8] += x[i].scales[e / 16] * (y[i].qs[e] * q6_value(&x[i], e));
        const float d = pl_q_f16(x[i].d) * y[i].d;
        for (int l = 0; l < 8; l++) lanes[l] += d * (float)il[l];
    }
    return lanes_total(0, lanes);
}
