/*
 * ref_iq.c -- decode and dot products of the codebook formats (iq2_xxs,
 * iq2_xs, iq2_s, iq3_xxs, iq3_s, iq1_s, iq1_m) and the non-linear 4-bit
 * ones (iq4_nl, iq4_xs, mxfp4).  Groups of 8 (4 for iq3) weights are one
 * grid row picked by an index, with separately stored signs (iq2/iq3) or a
 * shared +-1/8 shift (iq1).  Decode and dot keep llama.cpp's float order
 * (its dots sum integers per 32 and scale once per super-block).
 */
#include <string.h>

#include "quant/blocks.h"
#include "quant/iq_tables.h"
#include "quant/quant_util.h"
#include "quant/ref.h"

static inline uint32_t load_u32(const void *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline float sign_f(uint8_t signs, int j) { return signs >> j & 1 ? -1.f : 1.f; }
static inline int sign_i(uint8_t signs, int j) { return signs >> j & 1 ? -1 : 1; }

/* ---- iq2_xxs: per 32, 4 one-byte grid indices + 4x7 sign bits + 4-bit scale */

void pl_ref_iq2_xxs_to_float(const void *src, float *y, int64_t n) {
    const pl_block_iq2_xxs *b = src;
    for (int64_t i = 0; i < n / 256; i++) {
        const float d = pl_q_f16(b[i].d);
        for (int ib = 0; ib < 8; ib++) {
            const uint8_t *q = (const uint8_t *)(b[i].qs + 4 * ib);
            const uint32_t meta = load_u32(q + 4);
            const float db = d * (0.5f + (float)(meta >> 28)) * 0.25f;
            for (int l = 0; l < 4; l++, y += 8) {
                const uint64_t row = pl_iq2xxs_grid[q[l]];
                const uint8_t s = pl_iq_signs(meta >> (7 * l));
                for (int j = 0; j < 8; j++) y[j] = db * (float)pl_grid8(row, j) * sign_f(s, j);
            }
        }
    }
}

float pl_ref_iq2_xxs_vec_dot(int64_t n, const void *w, const void *a) {
    const pl_block_iq2_xxs *x = w;
    const pl_block_q8_K *y = a;
    float sum = 0.f;
    for (int64_t i = 0; i < n / 256; i++) {
        const int8_t *q8 = y[i].qs;
        int32_t bsum = 0;
        for (int ib = 0; ib < 8; ib++) {
            const uint8_t *q = (const uint8_t *)(x[i].qs + 4 * ib);
            const uint32_t meta = load_u32(q + 4);
            int32_t sumi = 0;
            for (int l = 0; l < 4; l++, q8 += 8) {
                const uint64_t row = pl_iq2xxs_grid[q[l]];
                const uint8_t s = pl_iq_signs(meta >> (7 * l));
                for (int j = 0; j < 8; j++) sumi += pl_grid8(row, j) * q8[j] * sign_i(s, j);
            }
            bsum += sumi * (int32_t)(2 * (meta >> 28) + 1);
        }
        sum += pl_q_f16(x[i].d) * y[i].d * (float)bsum;
    }
    return 0.125f * sum;
}

/* ---- iq2_xs: 16-bit entries (9-bit index, 7 sign bits), 4-bit scale per 16 */

void pl_ref_iq2_xs_to_float(const void *src, float *y, int64_t n) {
    const pl_block_iq2_xs *b = src;
    for (int64_t i = 0; i < n / 256; i++) {
        const float d = pl_q_f16(b[i].d);
        for (int ib = 0; ib < 8; ib++) {
            const float db[2] = {d * (0.5f + (float)(b[i].scales[ib] & 0xf)) * 0.25f,
                                 d * (0.5f + (float)(b[i].scales[ib] >> 4)) * 0.25f};
            for (int l = 0; l < 4; l++, y += 8) {
                const uint16_t e = b[i].qs[4 * ib + l];
                const uint64_t row = pl_iq2xs_grid[e & 511];
                const uint8_t s = pl_iq_signs(e >> 9);
                for (int j = 0; j < 8; j++) y[j] = db[l / 2] * (float)pl_grid8(row, j) * sign_f(s, j);
            }
        }
    }
}

float pl_ref_iq2_xs_vec_dot(int64_t n, const void *w, const void *a) {
    const pl_block_iq2_xs *x = w;
    const pl_block_q8_K *y = a;
    float sum = 0.f;
    for (int64_t i = 0; i < n / 256; i++) {
        const int8_t *q8 = y[i].qs;
        int32_t bsum = 0;
        for (int ib = 0; ib < 8; ib++) {
            for (int half = 0; half < 2; half++) {
                int32_t sumi = 0;
                for (int l = 2 * half; l < 2 * half + 2; l++, q8 += 8) {
                    const uint16_t e = x[i].qs[4 * ib + l];
                    const uint64_t row = pl_iq2xs_grid[e & 511];
                    const uint8_t s = pl_iq_signs(e >> 9);
                    for (int j = 0; j < 8; j++) sumi += pl_grid8(row, j) * q8[j] * sign_i(s, j);
                }
                const int ls = 2 * ((x[i].scales[ib] >> (4 * half)) & 0xf) + 1;
                bsum += sumi * ls;
            }
        }
        sum += pl_q_f16(x[i].d) * y[i].d * (float)bsum;
    }
    return 0.125f * sum;
}

/* ---- iq2_s: 10-bit index (8 in qs, 2 in qh), explicit sign bytes ---------- */

static inline uint64_t iq2s_row(const pl_block_iq2_s *b, int ib, int l) {
    return pl_iq2s_grid[b->qs[4 * ib + l] | ((b->qh[ib] << (8 - 2 * l)) & 0x300)];
}

void pl_ref_iq2_s_to_float(const void *src, float *y, int64_t n) {
    const pl_block_iq2_s *b = src;
    for (int64_t i = 0; i < n / 256; i++) {
        const float d = pl_q_f16(b[i].d);
        const uint8_t *signs = b[i].qs + 32;
        for (int ib = 0; ib < 8; ib++) {
            const float db[2] = {d * (0.5f + (float)(b[i].scales[ib] & 0xf)) * 0.25f,
                                 d * (0.5f + (float)(b[i].scales[ib] >> 4)) * 0.25f};
            for (int l = 0; l < 4; l++, y += 8) {
                const uint64_t row = iq2s_row(&b[i], ib, l);
                for (int j = 0; j < 8; j++) y[j] = db[l / 2] * (float)pl_grid8(row, j) * sign_f(signs[4 * ib + l], j);
            }
        }
    }
}

float pl_ref_iq2_s_vec_dot(int64_t n, const void *w, const void *a) {
    const pl_block_iq2_s *x = w;
    const pl_block_q8_K *y = a;
    float sum = 0;
    for (int64_t i = 0; i < n / 256; i++) {
        const int8_t *q8 = y[i].qs;
        const uint8_t *signs = x[i].qs + 32;
        int bsum = 0;
        for (int ib = 0; ib < 8; ib++) {
            int sumi[2] = {0, 0};
            for (int l = 0; l < 4; l++, q8 += 8) {
                const uint64_t row = iq2s_row(&x[i], ib, l);
                for (int j = 0; j < 8; j++) sumi[l / 2] += q8[j] * pl_grid8(row, j) * sign_i(signs[4 * ib + l], j);
            }
            bsum += (1 + 2 * (x[i].scales[ib] & 0xf)) * sumi[0] + (1 + 2 * (x[i].scales[ib] >> 4)) * sumi[1];
        }
        sum += pl_q_f16(x[i].d) * y[i].d * (float)bsum;
    }
    return 0.125f * sum;
}

/* ---- iq3_xxs: 4-value grid rows, two per 8 weights ------------------------ */

void pl_ref_iq3_xxs_to_float(const void *src, float *y, int64_t n) {
    const pl_block_iq3_xxs *b = src;
    for (int64_t i = 0; i < n / 256; i++) {
        const float d = pl_q_f16(b[i].d);
        for (int ib = 0; ib < 8; ib++) {
            const uint8_t *q = b[i].qs + 8 * ib;
            const uint32_t meta = load_u32(b[i].qs + 64 + 4 * ib);
            const float db = d * (0.5f + (float)(meta >> 28)) * 0.5f;
            for (int l = 0; l < 4; l++, y += 8) {
                const uint8_t s = pl_iq_signs(meta >> (7 * l));
                const uint32_t r1 = pl_iq3xxs_grid[q[2 * l]], r2 = pl_iq3xxs_grid[q[2 * l + 1]];
                for (int j = 0; j < 4; j++) {
                    y[j] = db * (float)pl_grid4(r1, j) * sign_f(s, j);
                    y[j + 4] = db * (float)pl_grid4(r2, j) * sign_f(s, j + 4);
                }
            }
        }
    }
}

float pl_ref_iq3_xxs_vec_dot(int64_t n, const void *w, const void *a) {
    const pl_block_iq3_xxs *x = w;
    const pl_block_q8_K *y = a;
    float sum = 0.f;
    for (int64_t i = 0; i < n / 256; i++) {
        const int8_t *q8 = y[i].qs;
        int32_t bsum = 0;
        for (int ib = 0; ib < 8; ib++) {
            const uint8_t *q = x[i].qs + 8 * ib;
            const uint32_t meta = load_u32(x[i].qs + 64 + 4 * ib);
            int32_t sumi = 0;
            for (int l = 0; l < 4; l++, q8 += 8) {
                const uint8_t s = pl_iq_signs(meta >> (7 * l));
                const uint32_t r1 = pl_iq3xxs_grid[q[2 * l]], r2 = pl_iq3xxs_grid[q[2 * l + 1]];
                for (int j = 0; j < 4; j++)
                    sumi += pl_grid4(r1, j) * q8[j] * sign_i(s, j) + pl_grid4(r2, j) * q8[j + 4] * sign_i(s, j + 4);
            }
            bsum += sumi * (int32_t)(2 * (meta >> 28) + 1);
        }
        sum += pl_q_f16(x[i].d) * y[i].d * (float)bsum;
    }
    return 0.25f * sum;
}

/* ---- iq3_s: 9-bit index (8 in qs, 1 in qh), sign bytes, 4-bit scale per 32 */

static inline uint32_t iq3s_row(const pl_block_iq3_s *b, int ib, int k) {
    /* grid index k (0..7) of 32-group ib: bit k of qh[ib] is its 9th bit */
    return pl_iq3s_grid[b->qs[8 * ib + k] | (((uint32_t)b->qh[ib] << (8 - k)) & 256)];
}

void pl_ref_iq3_s_to_float(const void *src, float *y, int64_t n) {
    const pl_block_iq3_s *b = src;
    for (int64_t i = 0; i < n / 256; i++) {
        const float d = pl_q_f16(b[i].d);
        for (int ib = 0; ib < 8; ib++) {
            const float db = d * (float)(1 + 2 * ((b[i].scales[ib / 2] >> (4 * (ib % 2))) & 0xf));
            for (int l = 0; l < 4; l++, y += 8) {
                const uint8_t s = b[i].signs[4 * ib + l];
                const uint32_t r1 = iq3s_row(&b[i], ib, 2 * l), r2 = iq3s_row(&b[i], ib, 2 * l + 1);
                for (int j = 0; j < 4; j++) {
                    y[j] = db * (float)pl_grid4(r1, j) * sign_f(s, j);
                    y[j + 4] = db * (float)pl_grid4(r2, j) * sign_f(s, j + 4);
                }
            }
        }
    }
}

float pl_ref_iq3_s_vec_dot(int64_t n, const void *w, const void *a) {
    const pl_block_iq3_s *x = w;
    const pl_block_q8_K *y = a;
    float sum = 0.f;
    for (int64_t i = 0; i < n / 256; i++) {
        const int8_t *q8 = y[i].qs;
        int32_t bsum = 0;
        for (int ib = 0; ib < 8; ib++) {
            int32_t sumi = 0;
            for (int l = 0; l < 4; l++, q8 += 8) {
                const uint8_t s = x[i].signs[4 * ib + l];
                const uint32_t r1 = iq3s_row(&x[i], ib, 2 * l), r2 = iq3s_row(&x[i], ib, 2 * l + 1);
                for (int j = 0; j < 4; j++)
                    sumi += pl_grid4(r1, j) * q8[j] * sign_i(s, j) + pl_grid4(r2, j) * q8[j + 4] * sign_i(s, j + 4);
            }
            bsum += sumi * (int32_t)(2 * ((x[i].scales[ib / 2] >> (4 * (ib % 2))) & 0xf) + 1);
        }
        sum += pl_q_f16(x[i].d) * y[i].d * (float)bsum;
    }
    return sum;
}

/* ---- iq1_s: 11-bit index, 3-bit scale and a +-1/8 shift per 32 ----------- */

void pl_ref_iq1_s_to_float(const void *src, float *y, int64_t n) {
    const pl_block_iq1_s *b = src;
    for (int64_t i = 0; i < n / 256; i++) {
        const float d = pl_q_f16(b[i].d);
        for (int ib = 0; ib < 8; ib++) {
            const uint16_t qh = b[i].qh[ib];
            const float dl = d * (float)(2 * ((qh >> 12) & 7) + 1);
            const float delta = qh & 0x8000 ? -PL_IQ1S_DELTA : PL_IQ1S_DELTA;
            for (int l = 0; l < 4; l++, y += 8) {
                const uint64_t row = pl_iq1s_grid[b[i].qs[4 * ib + l] | (((qh >> (3 * l)) & 7) << 8)];
                for (int j = 0; j < 8; j++) y[j] = dl * ((float)(int8_t)pl_grid8(row, j) + delta);
            }
        }
    }
}

float pl_ref_iq1_s_vec_dot(int64_t n, const void *w, const void *a) {
    const pl_block_iq1_s *x = w;
    const pl_block_q8_K *y = a;
    float sum = 0;
    for (int64_t i = 0; i < n / 256; i++) {
        const int8_t *q8 = y[i].qs;
        int sumi = 0, sumi1 = 0;
        for (int ib = 0; ib < 8; ib++) {
            const uint16_t qh = x[i].qh[ib];
            const int ls = 2 * ((qh >> 12) & 7) + 1;
            const int delta = qh & 0x8000 ? -1 : 1;
            int lsum = 0;
            for (int l = 0; l < 4; l++, q8 += 8) {
                const uint64_t row = pl_iq1s_grid[x[i].qs[4 * ib + l] | (((qh >> (3 * l)) & 7) << 8)];
                for (int j = 0; j < 8; j++) lsum += q8[j] * (int8_t)pl_grid8(row, j);
            }
            sumi += ls * lsum;
            sumi1 += ls * delta * (y[i].bsums[2 * ib] + y[i].bsums[2 * ib + 1]);
        }
        sum += pl_q_f16(x[i].d) * y[i].d * ((float)sumi + PL_IQ1S_DELTA * (float)sumi1);
    }
    return sum;
}

/* ---- iq1_m: 3-bit scales per 16, f16 super-scale in the scales' top nibbles */

static inline uint16_t iq1m_word(const pl_block_iq1_m *b, int k) {
    return (uint16_t)(b->scales[2 * k] | (b->scales[2 * k + 1] << 8));
}

static inline uint16_t iq1m_super(const pl_block_iq1_m *b) {
    return (uint16_t)((iq1m_word(b, 0) >> 12) | ((iq1m_word(b, 1) >> 8) & 0x00f0) | ((iq1m_word(b, 2) >> 4) & 0x0f00) |
                      (iq1m_word(b, 3) & 0xf000));
}

/* Grid row and shift sign of group l (0..3) of 32-group ib. */
static inline uint64_t iq1m_row(const pl_block_iq1_m *b, int ib, int l) {
    const uint8_t qh = b->qh[2 * ib + l / 2];
    return pl_iq1s_grid[b->qs[4 * ib + l] | ((l % 2 ? (uint32_t)qh << 4 : (uint32_t)qh << 8) & 0x700)];
}
static inline int iq1m_neg(const pl_block_iq1_m *b, int ib, int l) {
    return (b->qh[2 * ib + l / 2] & (l % 2 ? 0x80 : 0x08)) != 0;
}
static inline int iq1m_ls(const pl_block_iq1_m *b, int ib, int half) {
    return 2 * ((iq1m_word(b, ib / 2) >> (6 * (ib % 2) + 3 * half)) & 0x7) + 1;
}

void pl_ref_iq1_m_to_float(const void *src, float *y, int64_t n) {
    const pl_block_iq1_m *b = src;
    for (int64_t i = 0; i < n / 256; i++) {
        const float d = pl_q_f16(iq1m_super(&b[i]));
        for (int ib = 0; ib < 8; ib++) {
            const float dl[2] = {d * (float)iq1m_ls(&b[i], ib, 0), d * (float)iq1m_ls(&b[i], ib, 1)};
            for (int l = 0; l < 4; l++, y += 8) {
                const uint64_t row = iq1m_row(&b[i], ib, l);
                const float delta = iq1m_neg(&b[i], ib, l) ? -PL_IQ1M_DELTA : PL_IQ1M_DELTA;
                for (int j = 0; j < 8; j++) y[j] = dl[l / 2] * ((float)(int8_t)pl_grid8(row, j) + delta);
            }
        }
    }
}

float pl_ref_iq1_m_vec_dot(int64_t n, const void *w, const void *a) {
    const pl_block_iq1_m *x = w;
    const pl_block_q8_K *y = a;
    float sum = 0;
    for (int64_t i = 0; i < n / 256; i++) {
        const int8_t *q8 = y[i].qs;
        int sumi1 = 0, sumi2 = 0;
        for (int ib = 0; ib < 8; ib++) {
            int s1[2] = {0, 0}, s2[2] = {0, 0};
            for (int l = 0; l < 4; l++, q8 += 8) {
                const uint64_t row = iq1m_row(&x[i], ib, l);
                int lsum1 = 0, lsum2 = 0;
                for (int j = 0; j < 8; j++) lsum1 += q8[j] * (int8_t)pl_grid8(row, j), lsum2 += q8[j];
                s1[l / 2] += lsum1;
                s2[l / 2] += lsum2 * (iq1m_neg(&x[i], ib, l) ? -1 : 1);
            }
            const int ls1 = iq1m_ls(&x[i], ib, 0), ls2 = iq1m_ls(&x[i], ib, 1);
            sumi1 += s1[0] * ls1 + s1[1] * ls2;
            sumi2 += s2[0] * ls1 + s2[1] * ls2;
        }
        sum += pl_q_f16(iq1m_super(&x[i])) * y[i].d * ((float)sumi1 + PL_IQ1M_DELTA * (float)sumi2);
    }
    return sum;
}

/* ---- iq4_nl / iq4_xs: 4-bit indices into a non-linear table -------------- */

void pl_ref_iq4_nl_to_float(const void *src, float *y, int64_t n) {
    const pl_block_iq4_nl *b = src;
    for (int64_t i = 0; i < n / 32; i++, y += 32) {
        const float d = pl_q_f16(b[i].d);
        for (int j = 0; j < 16; j++) {
            y[j] = d * (float)pl_kvalues_iq4nl[b[i].qs[j] & 0xf];
            y[j + 16] = d * (float)pl_kvalues_iq4nl[b[i].qs[j] >> 4];
        }
    }
}

float pl_ref_iq4_nl_vec_dot(int64_t n, const void *w, const void *a) {
    const pl_block_iq4_nl *x = w;
    const pl_block_q8_0 *y = a;
    float sum = 0;
    for (int64_t i = 0; i < n / 32; i++) {
        const float d = pl_q_f16(y[i].d) * pl_q_f16(x[i].d);
        int sumi = 0;
        for (int j = 0; j < 16; j++)
            sumi += y[i].qs[j] * pl_kvalues_iq4nl[x[i].qs[j] & 0xf] + y[i].qs[j + 16] * pl_kvalues_iq4nl[x[i].qs[j] >> 4];
        sum += d * (float)sumi;
    }
    return sum;
}

/* 6-bit scale of 32-group ib of an iq4_xs block (the scale is this - 32). */
static inline int iq4xs_ls(const pl_block_iq4_xs *b, int ib) {
    return ((b->scales_l[ib / 2] >> (4 * (ib % 2))) & 0xf) | (((b->scales_h >> (2 * ib)) & 3) << 4);
}

void pl_ref_iq4_xs_to_float(const void *src, float *y, int64_t n) {
    const pl_block_iq4_xs *b = src;
    for (int64_t i = 0; i < n / 256; i++) {
        const float d = pl_q_f16(b[i].d);
        for (int ib = 0; ib < 8; ib++, y += 32) {
            const float dl = d * (float)(iq4xs_ls(&b[i], ib) - 32);
            const uint8_t *qs = b[i].qs + 16 * ib;
            for (int j = 0; j < 16; j++) {
                y[j] = dl * (float)pl_kvalues_iq4nl[qs[j] & 0xf];
                y[j + 16] = dl * (float)pl_kvalues_iq4nl[qs[j] >> 4];
            }
        }
    }
}

float pl_ref_iq4_xs_vec_dot(int64_t n, const void *w, const void *a) {
    const pl_block_iq4_xs *x = w;
    const pl_block_q8_K *y = a;
    float sum = 0;
    for (int64_t i = 0; i < n / 256; i++) {
        const float d4d8 = pl_q_f16(x[i].d) * y[i].d;
        for (int ib = 0; ib < 8; ib++) {
            const float dl = d4d8 * (float)(iq4xs_ls(&x[i], ib) - 32);
            const uint8_t *qs = x[i].qs + 16 * ib;
            const int8_t *q8 = y[i].qs + 32 * ib;
            int sumi = 0;
            for (int j = 0; j < 16; j++)
                sumi += q8[j] * pl_kvalues_iq4nl[qs[j] & 0xf] + q8[j + 16] * pl_kvalues_iq4nl[qs[j] >> 4];
            sum += dl * (float)sumi;
        }
    }
    return sum;
}

/* ---- mxfp4: e2m1 values with a shared power-of-two (e8m0) scale ---------- */

void pl_ref_mxfp4_to_float(const void *src, float *y, int64_t n) {
    const pl_block_mxfp4 *b = src;
    for (int64_t i = 0; i < n / 32; i++, y += 32) {
        const float d = pl_q_e8m0_half(b[i].e);
        for (int j = 0; j < 16; j++) {
            y[j] = (float)pl_kvalues_mxfp4[b[i].qs[j] & 0xf] * d;
            y[j + 16] = (float)pl_kvalues_mxfp4[b[i].qs[j] >> 4] * d;
        }
    }
}

float pl_ref_mxfp4_vec_dot(int64_t n, const void *w, const void *a) {
    const pl_block_mxfp4 *x = w;
    const pl_block_q8_0 *y = a;
    float sum = 0;
    for (int64_t i = 0; i < n / 32; i++) {
        const float d = pl_q_f16(y[i].d) * pl_q_e8m0_half(x[i].e);
        int sumi = 0;
        for (int j = 0; j < 16; j++)
            sumi += y[i].qs[j] * pl_kvalues_mxfp4[x[i].qs[j] & 0xf] + y[i].qs[j + 16] * pl_kvalues_mxfp4[x[i].qs[j] >> 4];
        sum += d * (float)sumi;
    }
    return sum;
}
