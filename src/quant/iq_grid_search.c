/*
 * iq_grid_search.c -- see iq_grid_search.h.  llama.cpp sorts every grid row
 * by (distance, index) with qsort for each off-grid pattern; distances are
 * small integers, so bucketing them gives the same order in linear time.
 */
#include "quant/iq_grid_search.h"

#include <float.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "quant/iq_tables.h"

typedef struct codebook_def {
    const uint16_t *kgrid;
    int size;
    int bits;  /* per level: 2 (8 levels a row) or 3 (4 levels a row) */
    int nwant; /* how many distinct nearest distances to keep */
} codebook_def;

static const codebook_def defs[PL_IQ_CB_COUNT] = {
    [PL_IQ_CB_IQ2XXS] = {pl_kgrid_iq2xxs, 256, 2, 2}, [PL_IQ_CB_IQ2XS] = {pl_kgrid_iq2xs, 512, 2, 2},
    [PL_IQ_CB_IQ1S] = {pl_kgrid_iq1s, 2048, 2, 3},    [PL_IQ_CB_IQ2S] = {pl_kgrid_iq2s, 1024, 2, 1},
    [PL_IQ_CB_IQ3XXS] = {pl_kgrid_iq3xxs, 256, 3, 2}, [PL_IQ_CB_IQ3S] = {pl_kgrid_iq3s, 512, 3, 3},
};

static pl_iq_grid grids[PL_IQ_CB_COUNT];
static bool built[PL_IQ_CB_COUNT];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Levels of pattern p (digit k of p in base 2^bits is level k): 2*digit+1. */
static void pattern_levels(uint32_t p, int bits, int n, int8_t *pos) {
    for (int k = 0; k < n; k++) pos[k] = (int8_t)(2 * ((p >> (bits * k)) & ((1u << bits) - 1)) + 1);
}

static bool build(pl_iq_codebook cb) {
    const codebook_def *def = &defs[cb];
    const int n = def->bits == 2 ? 8 : 4;
    const uint32_t npat = 1u << (def->bits * n); /* every level pattern */
    const int maxd = n * (2 * ((1 << def->bits) - 1)) * (2 * ((1 << def->bits) - 1));
    int8_t *levels = malloc((size_t)def->size * (size_t)n);
    int32_t *map = malloc(sizeof(int32_t) * npat);
    int *dist = malloc(sizeof(int) * (size_t)def->size);
    int *hist = calloc((size_t)maxd + 1, sizeof(int));
    uint16_t *nb = NULL;
    size_t nb_len = 0, nb_cap = 0;
    if (!levels || !map || !dist || !hist) goto fail;
    for (int r = 0; r < def->size; r++) pattern_levels(def->kgrid[r], def->bits, n, levels + r * n);
    for (uint32_t p = 0; p < npat; p++) map[p] = -1;
    for (int r = 0; r < def->size; r++) map[def->kgrid[r]] = r;
    for (uint32_t p = 0; p < npat; p++) {
        if (map[p] >= 0) continue;
        /* the 2-bit codebooks use levels 0..2 only; patterns with a 3 never
         * reach the map (llama.cpp's map stops at 43692 entries) */
        if (def->bits == 2 && ((p & (p >> 1)) & 0x5555u)) continue;
        int8_t pos[8];
        pattern_levels(p, def->bits, n, pos);
        memset(hist, 0, sizeof(int) * (size_t)(maxd + 1));
        for (int r = 0; r < def->size; r++) {
            int d2 = 0;
            for (int k = 0; k < n; k++) d2 += (levels[r * n + k] - pos[k]) * (levels[r * n + k] - pos[k]);
            dist[r] = d2;
            hist[d2]++;
        }
        /* the nwant smallest distances present, and how many rows have them */
        int chosen[3], nchosen = 0, count = 0;
        for (int d = 0; d <= maxd && nchosen < def->nwant; d++)
            if (hist[d]) chosen[nchosen++] = d, count += hist[d];
        if (nb_len + 1 + (size_t)count > nb_cap) {
            size_t cap = nb_cap ? nb_cap * 2 : 1u << 16;
            while (cap < nb_len + 1 + (size_t)count) cap *= 2;
            uint16_t *t = realloc(nb, sizeof(uint16_t) * cap);
            if (!t) goto fail;
            nb = t, nb_cap = cap;
        }
        map[p] = -(int32_t)nb_len - 1;
        nb[nb_len++] = (uint16_t)count;
        for (int c = 0; c < nchosen; c++)
            for (int r = 0; r < def->size; r++)
                if (dist[r] == chosen[c]) nb[nb_len++] = (uint16_t)r;
    }
    if (n == 8) {
        uint64_t *g = malloc(sizeof(uint64_t) * (size_t)def->size);
        if (!g) goto fail;
        memcpy(g, levels, sizeof(uint64_t) * (size_t)def->size);
        grids[cb].grid8 = g;
    } else {
        uint32_t *g = malloc(sizeof(uint32_t) * (size_t)def->size);
        if (!g) goto fail;
        memcpy(g, levels, sizeof(uint32_t) * (size_t)def->size);
        grids[cb].grid4 = g;
    }
    grids[cb].map = map;
    grids[cb].neighbours = nb;
    free(levels), free(dist), free(hist);
    return true;
fail:
    free(levels), free(map), free(dist), free(hist), free(nb);
    return false;
}

const pl_iq_grid *pl_iq_grid_get(pl_iq_codebook cb) {
    if ((unsigned)cb >= PL_IQ_CB_COUNT) return NULL;
    pthread_mutex_lock(&lock);
    if (!built[cb]) built[cb] = build(cb);
    const pl_iq_grid *g = built[cb] ? &grids[cb] : NULL;
    pthread_mutex_unlock(&lock);
    return g;
}

int pl_iq2_best_neighbour(const uint16_t *nb, const uint64_t *grid, const float *xval, const float *weight, float scale,
                          int8_t *L) {
    const int count = nb[0];
    float best_d2 = FLT_MAX;
    int best = -1;
    for (int j = 1; j <= count; j++) {
        const uint64_t row = grid[nb[j]];
        float d2 = 0;
        for (int i = 0; i < 8; i++) {
            const float q = (float)(int8_t)(row >> (8 * i));
            const float diff = scale * q - xval[i];
            d2 += weight[i] * diff * diff;
        }
        if (d2 < best_d2) best_d2 = d2, best = nb[j];
    }
    /* llama.cpp asserts a row was found; NaN distances keep the first one */
    if (best < 0) best = nb[1];
    const uint64_t row = grid[best];
    for (int i = 0; i < 8; i++) L[i] = (int8_t)(((int8_t)(row >> (8 * i)) - 1) / 2);
    return best;
}
