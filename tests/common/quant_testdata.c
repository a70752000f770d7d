/*
 * quant_testdata.c -- see quant_testdata.h.  The byte positions of each
 * type's scale fields come from the block layouts in src/quant/blocks.h.
 */
#include "quant_testdata.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/half.h"
#include "quant/blocks.h"
#include "quant/types.h"

/* Where a block keeps its f16 scales, and (for types whose weights carry a
 * separate offset term) which bytes are quants. */
typedef struct layout {
    uint32_t type;
    uint8_t nf16;
    uint16_t f16[2];
    uint16_t q_off, q_len; /* quant bytes, only where an offset term exists */
} layout;

static const layout layouts[] = {
    {PL_TYPE_Q4_0, 1, {0}, 0, 0},         {PL_TYPE_Q4_1, 2, {0, 2}, 4, 16},   {PL_TYPE_Q5_0, 1, {0}, 0, 0},
    {PL_TYPE_Q5_1, 2, {0, 2}, 4, 20},     {PL_TYPE_Q8_0, 1, {0}, 0, 0},       {PL_TYPE_Q8_1, 2, {0, 2}, 0, 0},
    {PL_TYPE_Q2_K, 2, {80, 82}, 16, 64},  {PL_TYPE_Q3_K, 1, {108}, 0, 0},     {PL_TYPE_Q4_K, 2, {0, 2}, 16, 128},
    {PL_TYPE_Q5_K, 2, {0, 2}, 16, 160},   {PL_TYPE_Q6_K, 1, {208}, 0, 0},     {PL_TYPE_TQ1_0, 1, {52}, 0, 0},
    {PL_TYPE_TQ2_0, 1, {64}, 0, 0},       {PL_TYPE_IQ2_XXS, 1, {0}, 0, 0},    {PL_TYPE_IQ2_XS, 1, {0}, 0, 0},
    {PL_TYPE_IQ2_S, 1, {0}, 0, 0},        {PL_TYPE_IQ3_XXS, 1, {0}, 0, 0},    {PL_TYPE_IQ3_S, 1, {0}, 0, 0},
    {PL_TYPE_IQ1_S, 1, {0}, 0, 0},        {PL_TYPE_IQ4_NL, 1, {0}, 0, 0},     {PL_TYPE_IQ4_XS, 1, {0}, 0, 0},
    {PL_TYPE_F16, 1, {0}, 0, 0},          {PL_TYPE_BF16, 1, {0}, 0, 0},
};

static const layout *find_layout(uint32_t type) {
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
        if (layouts[i].type == type) return &layouts[i];
    return NULL;
}

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }

/* A moderate f16: sign random, magnitude in [2^-14, 2^3). */
static uint16_t sane_f16(pl_rng *r, uint32_t type) {
    float mag = ldexpf(1.0f + pl_rng_uniform(r), (int)pl_rng_below(r, 17) - 14);
    float v = pl_rng_below(r, 2) ? -mag : mag;
    return type == PL_TYPE_BF16 ? pl_f32_to_bf16(v) : pl_f32_to_f16(v);
}

static const uint16_t edge_f16[QT_EDGE_KINDS] = {0x0000, 0xffff, 0x0000, 0x7bff, 0xfbff, 0x0001, 0x7c00,
                                                 0xfc00, 0x7e00, 0x8000, 0x8888, 0x3c00, 0x03ff, 0x7c01};
static const float edge_f32[QT_EDGE_KINDS] = {0.0f, 1.0f, 0.0f, FLT_MAX, -FLT_MAX, 1e-45f, INFINITY,
                                              -INFINITY, NAN, -0.0f, 1e-38f, 1.0f, -1.0f, 3.0e38f};

/* iq1_m keeps its f16 scale in the top nibbles of its four scale words */
static void set_iq1m_scale(uint8_t *blk, uint16_t f) {
    uint8_t *sc = blk + 48;
    for (int k = 0; k < 4; k++) {
        uint16_t w = get16(sc + 2 * k);
        w = (uint16_t)((w & 0x0fff) | (((f >> (4 * k)) & 0xf) << 12));
        put16(sc + 2 * k, w);
    }
}

static void fill_random(pl_rng *r, uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)pl_rng_next(r);
}

/* Activation blocks as an encoder makes them. */
static void gen_act_block(uint32_t type, qt_mode mode, pl_rng *r, uint8_t *blk, int64_t index) {
    const int qmax = mode == QT_EXACT ? 3 : 127;
    if (type == PL_TYPE_Q8_K) {
        pl_block_q8_K *b = (pl_block_q8_K *)blk;
        for (int j = 0; j < 256; j++) b->qs[j] = (int8_t)((int)pl_rng_below(r, 2 * qmax + 1) - qmax);
        for (int j = 0; j < 16; j++) {
            int s = 0;
            for (int k = 0; k < 16; k++) s += b->qs[16 * j + k];
            b->bsums[j] = (int16_t)s;
        }
        if (mode == QT_EXACT) b->d = 0.0625f;
        else if (mode == QT_EDGE) b->d = edge_f32[index % QT_EDGE_KINDS];
        else b->d = ldexpf(pl_rng_uniform(r) - 0.5f, -(int)pl_rng_below(r, 10));
        return;
    }
    int8_t *qs = type == PL_TYPE_Q8_0 ? ((pl_block_q8_0 *)blk)->qs : ((pl_block_q8_1 *)blk)->qs;
    int sum = 0;
    for (int j = 0; j < 32; j++) sum += qs[j] = (int8_t)((int)pl_rng_below(r, 2 * qmax + 1) - qmax);
    uint16_t d = mode == QT_EXACT ? 0x2c00 /* 2^-4 */ : mode == QT_EDGE ? edge_f16[index % QT_EDGE_KINDS]
                                                                       : (uint16_t)(sane_f16(r, type) & 0x7fff);
    put16(blk, d);
    if (type == PL_TYPE_Q8_1) put16(blk + 2, pl_f32_to_f16(pl_f16_to_f32(d) * (float)sum));
}

/* Exact mode keeps sub-block scales small enough that every partial sum of
 * a 512-element row stays below 2^24 units of the smallest product. */
static void exact_limits(uint32_t type, uint8_t *blk) {
    switch (type) {
    case PL_TYPE_Q4_K:
    case PL_TYPE_Q5_K:
        for (int j = 4; j < 16; j++) blk[j] &= 0x1f;
        break;
    case PL_TYPE_Q6_K:
        for (int j = 192; j < 208; j++) blk[j] = (uint8_t)((int8_t)blk[j] / 2);
        break;
    default: break;
    }
}

void qt_gen_blocks(uint32_t type, qt_mode mode, pl_rng *r, void *dst, int64_t nblocks) {
    const pl_type_traits *t = pl_type_get(type);
    const size_t bytes = t->bytes;
    for (int64_t i = 0; i < nblocks; i++) {
        uint8_t *blk = (uint8_t *)dst + (size_t)i * bytes;
        if (type == PL_TYPE_Q8_0 || type == PL_TYPE_Q8_1 || type == PL_TYPE_Q8_K) {
            gen_act_block(type, mode, r, blk, i);
            continue;
        }
        const int edge = (int)(i % QT_EDGE_KINDS);
        if (mode == QT_EDGE && (edge == 0 || edge == 1 || edge == 10)) {
            memset(blk, edge == 0 ? 0x00 : edge == 1 ? 0xff : 0x88, bytes);
            continue;
        }
        fill_random(r, blk, bytes);
        if (mode == QT_WILD) continue;
        if (type == PL_TYPE_F32) {
            float v = mode == QT_EXACT ? (float)((int)pl_rng_below(r, 15) - 7) * 0.125f
                      : mode == QT_EDGE ? edge_f32[edge]
                                        : (pl_rng_uniform(r) - 0.5f) * 4.0f;
            memcpy(blk, &v, 4);
            continue;
        }
        if (type == PL_TYPE_MXFP4) {
            blk[0] = mode == QT_EXACT ? 124 : mode == QT_EDGE ? (uint8_t)(edge * 19 + 1) : (uint8_t)(110 + pl_rng_below(r, 30));
            if (mode == QT_EDGE && edge == 2) blk[0] = 0;
            continue;
        }
        if (mode == QT_EXACT) exact_limits(type, blk);
        const uint16_t sign = pl_rng_below(r, 2) ? 0x8000 : 0;
        uint16_t v;
        if (type == PL_TYPE_F16 || type == PL_TYPE_BF16) {
            float e = (float)((int)pl_rng_below(r, 15) - 7) * 0.125f;
            v = mode == QT_EXACT ? (type == PL_TYPE_F16 ? pl_f32_to_f16(e) : pl_f32_to_bf16(e))
                : mode == QT_EDGE ? (type == PL_TYPE_F16 ? edge_f16[edge] : pl_f32_to_bf16(edge_f32[edge]))
                                  : sane_f16(r, type);
            put16(blk, v);
            continue;
        }
        v = mode == QT_EXACT ? (uint16_t)(0x3000 | sign) /* +-2^-3 */ : mode == QT_EDGE ? edge_f16[edge] : 0;
        if (type == PL_TYPE_IQ1_M) {
            set_iq1m_scale(blk, mode == QT_RANDOM ? sane_f16(r, type) : v);
            continue;
        }
        const layout *L = find_layout(type);
        if (!L) continue;
        for (int k = 0; k < L->nf16; k++) put16(blk + L->f16[k], mode == QT_RANDOM ? sane_f16(r, type) : v);
    }
}

static float normal(pl_rng *r) {
    float u1 = pl_rng_uniform(r) + 1e-7f, u2 = pl_rng_uniform(r);
    return sqrtf(-2.0f * logf(u1)) * cosf(6.2831853f * u2);
}

void qt_gen_floats(pl_rng *r, float *dst, int64_t n, int dist) {
    const float c = normal(r);
    for (int64_t i = 0; i < n; i++) {
        float v;
        switch (dist) {
        case 0: v = normal(r); break;
        case 1: v = 2.0f * pl_rng_uniform(r) - 1.0f; break;
        case 2: v = normal(r) * (pl_rng_below(r, 100) == 0 ? 50.0f : 1.0f); break;
        case 3: v = (i / 40) % 2 ? 0.0f : normal(r); break;
        case 4: v = c; break;
        case 5: v = normal(r) * 1e-30f; break;
        case 6: v = normal(r) * 1e4f; break;
        case 8:
            v = i % 16 == 0 ? 127.0f : (float)((int)pl_rng_below(r, 253) - 126) + 0.5f;
            if (pl_rng_below(r, 2)) v = -v;
            break;
        case 9: v = (float)((int)pl_rng_below(r, 17) - 8); break;
        default: {
            float u = pl_rng_uniform(r) - 0.5f;
            v = fabsf(u) < 0.002f ? 0.0f : 0.05f / u; /* Cauchy-like, bounded */
        }
        }
        dst[i] = v;
    }
}

void qt_gen_imatrix(pl_rng *r, float *dst, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        dst[i] = pl_rng_below(r, 50) == 0 ? 0.0f : expf(4.0f * normal(r)) * pl_rng_uniform(r);
}

double qt_dot_tolerance(uint32_t wtype, const void *w, const void *a, int64_t n) {
    const pl_type_traits *t = pl_type_get(wtype), *at = pl_type_get(t->vec_dot_type);
    float *wf = malloc(sizeof(float) * (size_t)n), *af = malloc(sizeof(float) * (size_t)n);
    float *zf = malloc(sizeof(float) * (size_t)t->block);
    uint8_t *zb = malloc(t->bytes);
    t->to_float(w, wf, n);
    at->to_float(a, af, n);
    const layout *L = find_layout(wtype);
    const int64_t nb = n / t->block;
    double m = 0.0;
    for (int64_t b = 0; b < nb; b++) {
        double wmax = 0.0, zmax = 0.0, asum = 0.0;
        for (uint32_t j = 0; j < t->block; j++) {
            wmax = fmax(wmax, fabs((double)wf[b * t->block + j]));
            asum += fabs((double)af[b * t->block + j]);
        }
        if (L && L->q_len) { /* the block's offset: decode it with its quants zeroed */
            memcpy(zb, (const uint8_t *)w + (size_t)b * t->bytes, t->bytes);
            memset(zb + L->q_off, 0, L->q_len);
            t->to_float(zb, zf, t->block);
            for (uint32_t j = 0; j < t->block; j++) zmax = fmax(zmax, fabs((double)zf[j]));
        }
        m += (2.0 * wmax + zmax) * asum;
    }
    free(wf), free(af), free(zf), free(zb);
    return 2.0 * (double)(nb + 64) * ldexp(1.0, -24) * m;
}
