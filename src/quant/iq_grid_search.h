/*
 * iq_grid_search.h -- the search structures llama.cpp's IQ quantizers use
 * to snap a group of levels onto a codebook: the grid as level values, a
 * map from every possible level pattern to its grid row (or to a list of
 * the nearest rows when the pattern is not on the grid), built once per
 * codebook on first use.  The lists reproduce llama.cpp v0.4.0's exactly
 * (ordered by distance, then row), since the chosen row decides the bytes.
 */
#ifndef PL_QUANT_IQ_GRID_SEARCH_H
#define PL_QUANT_IQ_GRID_SEARCH_H

#include <stdint.h>

typedef enum pl_iq_codebook {
    PL_IQ_CB_IQ2XXS, /* 256 rows of 8 levels in {1,3,5,7} (2 bits each) */
    PL_IQ_CB_IQ2XS,  /* 512 rows */
    PL_IQ_CB_IQ1S,   /* 2048 rows, shared by iq1_s and iq1_m */
    PL_IQ_CB_IQ2S,   /* 1024 rows */
    PL_IQ_CB_IQ3XXS, /* 256 rows of 4 levels in {1,3,...,15} (3 bits each) */
    PL_IQ_CB_IQ3S,   /* 512 rows */
    PL_IQ_CB_COUNT
} pl_iq_codebook;

typedef struct pl_iq_grid {
    /* row r as levels: 8 int8 (iq2/iq1, in a uint64) or 4 int8 (iq3, in a uint32) */
    const uint64_t *grid8;
    const uint32_t *grid4;
    /* pattern -> row index, or -(offset+1) into neighbours where
     * neighbours[offset] = count, followed by that many row indices */
    const int32_t *map;
    const uint16_t *neighbours;
} pl_iq_grid;

/* The search structures of codebook cb, built on first use (thread-safe);
 * NULL if memory ran out. */
const pl_iq_grid *pl_iq_grid_get(pl_iq_codebook cb);

/* Nearest row (weighted squared distance to xval at `scale`) among the
 * neighbour list `nb` of an off-grid pattern; writes its levels (0..3) to L. */
int pl_iq2_best_neighbour(const uint16_t *nb, const uint64_t *grid, const float *xval, const float *weight, float scale,
                          int8_t *L);

#endif
