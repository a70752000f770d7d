/*
 * ref_ternary.c -- the ternary types tq1_0 (1.6875 bpw: five trits per
 * byte, stored as a fixed-point fraction of 3^5 so a trit comes out with a
 * multiply and a shift, plus four trits per byte for the last 16 values)
 * and tq2_0 (2 bits per value): decode, encode, dot against q8_K.
 */
#include <math.h>

#include "quant/blocks.h"
#include "quant/quant_util.h"
#include "quant/ref.h"

static const uint8_t pow3[6] = {1, 3, 9, 27, 81, 243};

/* Trit n (0..4) of a tq1_0 byte: the byte times 3^n (mod 256) is the
 * fraction left after n trits; its top "digit" in base 3 is the trit. */
static inline int tq1_trit(uint8_t byte, int n) {
    uint8_t q = (uint8_t)(byte * pow3[n]);
    return (int)(((uint16_t)q * 3) >> 8);
}

/* Element index of trit n of byte m in each of tq1_0's three regions. */
void pl_ref_tq1_0_to_float(const void *src, float *y, int64_t nel) {
    const pl_block_tq1_0 *b = src;
    for (int64_t i = 0; i < nel / 256; i++) {
        const float d = pl_q_f16(b[i].d);
        for (int n = 0; n < 5; n++)
            for (int m = 0; m < 32; m++) *y++ = (float)(tq1_trit(b[i].qs[m], n) - 1) * d;
        for (int n = 0; n < 5; n++)
            for (int m = 0; m < 16; m++) *y++ = (float)(tq1_trit(b[i].qs[32 + m], n) - 1) * d;
        for (int n = 0; n < 4; n++)
            for (int j = 0; j < 4; j++) *y++ = (float)(tq1_trit(b[i].qh[j], n) - 1) * d;
    }
}

float pl_ref_tq1_0_vec_dot(int64_t nel, const void *w, const void *a) {
    const pl_block_tq1_0 *x = w;
    const pl_block_q8_K *y = a;
    float sum = 0.0f;
    for (int64_t i = 0; i < nel / 256; i++) {
        const int8_t *q8 = y[i].qs;
        int s = 0;
        for (int n = 0; n < 5; n++)
            for (int m = 0; m < 32; m++) s += (tq1_trit(x[i].qs[m], n) - 1) * *q8++;
        for (int n = 0; n < 5; n++)
            for (int m = 0; m < 16; m++) s += (tq1_trit(x[i].qs[32 + m], n) - 1) * *q8++;
        for (int n = 0; n < 4; n++)
            for (int j = 0; j < 4; j++) s += (tq1_trit(x[i].qh[j], n) - 1) * *q8++;
        sum += (float)s * (pl_q_f16(x[i].d) * y[i].d);
    }
    return sum;
}

/* round(x/amax) + 1 in {0, 1, 2}, with lroundf as llama.cpp. */
static inline int trit_of(float x, float id) { return (int)lroundf(x * id) + 1; }

static float absmax256(const float *x) {
    float amax = 0.0f;
    for (int j = 0; j < 256; j++) {
        float a = fabsf(x[j]);
        amax = amax > a ? amax : a;
    }
    return amax;
}

/* Pack k trits (most significant first, then scaled by 3^(5-k)) as the
 * ceiling of value * 256 / 243. */
static inline uint8_t tq1_pack(uint8_t q) { return (uint8_t)(((uint16_t)q * 256 + (243 - 1)) / 243); }

void pl_ref_tq1_0_from_float(const float *src, void *dst, int64_t nel, const float *imatrix) {
    (void)imatrix; /* llama.cpp's ternary quantizers take none */
    pl_block_tq1_0 *b = dst;
    for (int64_t i = 0; i < nel / 256; i++) {
        const float *x = src + i * 256;
        const float d = absmax256(x), id = d != 0 ? 1.0f / d : 0.0f;
        b[i].d = pl_f32_to_f16(d);
        for (int m = 0; m < 32; m++) {
            uint8_t q = 0;
            for (int n = 0; n < 5; n++) q = (uint8_t)((uint8_t)(q * 3) + trit_of(x[m + n * 32], id));
            b[i].qs[m] = tq1_pack(q);
        }
        for (int m = 0; m < 16; m++) {
            uint8_t q = 0;
            for (int n = 0; n < 5; n++) q = (uint8_t)((uint8_t)(q * 3) + trit_of(x[160 + m + n * 16], id));
            b[i].qs[32 + m] = tq1_pack(q);
        }
        for (int j = 0; j < 4; j++) {
            uint8_t q = 0;
            for (int m = 0; m < 4; m++) q = (uint8_t)((uint8_t)(q * 3) + trit_of(x[240 + j + m * 4], id));
            b[i].qh[j] = tq1_pack((uint8_t)(q * 3));
        }
    }
}

void pl_ref_tq2_0_to_float(const void *src, float *y, int64_t nel) {
    const pl_block_tq2_0 *b = src;
    for (int64_t i = 0; i < nel / 256; i++) {
        const float d = pl_q_f16(b[i].d);
        for (int j = 0; j < 64; j += 32)
            for (int l = 0; l < 4; l++)
                for (int m = 0; m < 32; m++) *y++ = (float)(((b[i].qs[j + m] >> (2 * l)) & 3) - 1) * d;
    }
}

float pl_ref_tq2_0_vec_dot(int64_t nel, const void *w, const void *a) {
    const pl_block_tq2_0 *x = w;
    const pl_block_q8_K *y = a;
    float sum = 0.0f;
    for (int64_t i = 0; i < nel / 256; i++) {
        int32_t sumi = 0;
        for (int j = 0; j < 64; j += 32)
            for (int l = 0; l < 4; l++)
                for (int k = 0; k < 32; k++) sumi += y[i].qs[j * 4 + l * 32 + k] * (((x[i].qs[j + k] >> (l * 2)) & 3) - 1);
        const float d = y[i].d * pl_q_f16(x[i].d);
        sum += (float)sumi * d;
    }
    return sum;
}

void pl_ref_tq2_0_from_float(const float *src, void *dst, int64_t nel, const float *imatrix) {
    (void)imatrix;
    pl_block_tq2_0 *b = dst;
    for (int64_t i = 0; i < nel / 256; i++) {
        const float *x = src + i * 256;
        const float d = absmax256(x), id = d != 0 ? 1.0f / d : 0.0f;
        b[i].d = pl_f32_to_f16(d);
        for (int j = 0; j < 64; j += 32)
            for (int m = 0; m < 32; m++) {
                uint8_t q = 0;
                for (int n = 0; n < 4; n++) q = (uint8_t)(q + ((trit_of(x[j * 4 + m + n * 32], id) & 3) << (2 * n)));
                b[i].qs[j + m] = q;
            }
    }
}
