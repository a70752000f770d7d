/*
 * iq_tables.h -- the codebooks of the IQ formats (values in iq_tables.c,
 * reproduced from llama.cpp v0.4.0, MIT) and the small derived helpers.
 */
#ifndef PL_QUANT_IQ_TABLES_H
#define PL_QUANT_IQ_TABLES_H

#include <stdint.h>

/* decode grids: row i holds 8 (or 4) unsigned magnitudes, one per byte */
extern const uint64_t pl_iq2xxs_grid[256];
extern const uint64_t pl_iq2xs_grid[512];
extern const uint64_t pl_iq2s_grid[1024];
extern const uint32_t pl_iq3xxs_grid[256];
extern const uint32_t pl_iq3s_grid[512];
/* iq1: 8 signed bytes in {-1, 0, 1} */
extern const uint64_t pl_iq1s_grid[2048];
extern const int8_t pl_kvalues_iq4nl[16];
/* e2m1 values, doubled (the e8m0 scale is halved to match) */
extern const int8_t pl_kvalues_mxfp4[16];

/* The quantizers' view of the same grids: per position a level l (the
 * grid value 2l+1 before the decode grid's scaling), 2 bits each for the
 * 8-value rows (iq2, iq1) and 3 bits each for the 4-value rows (iq3). */
extern const uint16_t pl_kgrid_iq2xxs[256];
extern const uint16_t pl_kgrid_iq2xs[512];
extern const uint16_t pl_kgrid_iq2s[1024];
extern const uint16_t pl_kgrid_iq1s[2048];
extern const uint16_t pl_kgrid_iq3xxs[256];
extern const uint16_t pl_kgrid_iq3s[512];

/* 7 stored sign bits (+ parity) -> 8 bytes of 0xff / 0x00 */
extern const uint64_t pl_iq_even_sign_mask[128];

#define PL_IQ1S_DELTA 0.125f
#define PL_IQ1M_DELTA 0.125f

/* Byte j (0..7) of a grid row. */
static inline uint8_t pl_grid8(uint64_t row, int j) { return (uint8_t)(row >> (8 * j)); }
static inline uint8_t pl_grid4(uint32_t row, int j) { return (uint8_t)(row >> (8 * j)); }

/* The 8 sign bits of a group from its 7 stored bits: bit 7 makes the
 * number of negative signs even (llama.cpp's ksigns_iq2xs table). */
static inline uint8_t pl_iq_signs(uint32_t bits7) {
    bits7 &= 127;
    return (uint8_t)(bits7 | ((uint32_t)(__builtin_popcount(bits7) & 1) << 7));
}

#endif
