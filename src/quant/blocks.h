/*
 * blocks.h -- the byte layout of every quantized block, as stored in GGUF
 * files (the layouts are facts of the ggml file format, llama.cpp v0.4.0
 * ggml-common.h, MIT).  The structs are the file format: no padding, f16
 * fields kept as raw uint16_t bits.  Pointers to blocks must be naturally
 * aligned (2 bytes; 4 for q8_K), which GGUF tensor data and whole-block
 * rows always are.
 */
#ifndef PL_QUANT_BLOCKS_H
#define PL_QUANT_BLOCKS_H

#include <stdint.h>

#define PL_QK_K 256   /* elements per super-block (k-quants, IQ, ternary) */
#define PL_QK32 32    /* elements per legacy block */

typedef struct { uint16_t d; uint8_t qs[16]; } pl_block_q4_0;
typedef struct { uint16_t d, m; uint8_t qs[16]; } pl_block_q4_1;
typedef struct { uint16_t d; uint8_t qh[4]; uint8_t qs[16]; } pl_block_q5_0;
typedef struct { uint16_t d, m; uint8_t qh[4]; uint8_t qs[16]; } pl_block_q5_1;
typedef struct { uint16_t d; int8_t qs[32]; } pl_block_q8_0;
/* s = d * sum(qs), as f16 */
typedef struct { uint16_t d, s; int8_t qs[32]; } pl_block_q8_1;
typedef struct { uint8_t e; uint8_t qs[16]; } pl_block_mxfp4;

typedef struct { uint8_t scales[16]; uint8_t qs[64]; uint16_t d, dmin; } pl_block_q2_K;
typedef struct { uint8_t hmask[32]; uint8_t qs[64]; uint8_t scales[12]; uint16_t d; } pl_block_q3_K;
typedef struct { uint16_t d, dmin; uint8_t scales[12]; uint8_t qs[128]; } pl_block_q4_K;
typedef struct { uint16_t d, dmin; uint8_t scales[12]; uint8_t qh[32]; uint8_t qs[128]; } pl_block_q5_K;
typedef struct { uint8_t ql[128]; uint8_t qh[64]; int8_t scales[16]; uint16_t d; } pl_block_q6_K;
/* activations for k-quant and IQ dot products; bsums = sums of 16 quants */
typedef struct { float d; int8_t qs[256]; int16_t bsums[16]; } pl_block_q8_K;

typedef struct { uint8_t qs[48]; uint8_t qh[4]; uint16_t d; } pl_block_tq1_0;
typedef struct { uint8_t qs[64]; uint16_t d; } pl_block_tq2_0;

typedef struct { uint16_t d; uint16_t qs[32]; } pl_block_iq2_xxs;
typedef struct { uint16_t d; uint16_t qs[32]; uint8_t scales[8]; } pl_block_iq2_xs;
typedef struct { uint16_t d; uint8_t qs[64]; uint8_t qh[8]; uint8_t scales[8]; } pl_block_iq2_s;
typedef struct { uint16_t d; uint8_t qs[96]; } pl_block_iq3_xxs;
typedef struct { uint16_t d; uint8_t qs[64]; uint8_t qh[8]; uint8_t signs[32]; uint8_t scales[4]; } pl_block_iq3_s;
typedef struct { uint16_t d; uint8_t qs[32]; uint16_t qh[8]; } pl_block_iq1_s;
/* the f16 super-scale is spread over the top nibbles of the 4 scale words */
typedef struct { uint8_t qs[32]; uint8_t qh[16]; uint8_t scales[8]; } pl_block_iq1_m;
typedef struct { uint16_t d; uint8_t qs[16]; } pl_block_iq4_nl;
typedef struct { uint16_t d; uint16_t scales_h; uint8_t scales_l[4]; uint8_t qs[128]; } pl_block_iq4_xs;

_Static_assert(sizeof(pl_block_q4_0) == 18, "q4_0");
_Static_assert(sizeof(pl_block_q4_1) == 20, "q4_1");
_Static_assert(sizeof(pl_block_q5_0) == 22, "q5_0");
_Static_assert(sizeof(pl_block_q5_1) == 24, "q5_1");
_Static_assert(sizeof(pl_block_q8_0) == 34, "q8_0");
_Static_assert(sizeof(pl_block_q8_1) == 36, "q8_1");
_Static_assert(sizeof(pl_block_mxfp4) == 17, "mxfp4");
_Static_assert(sizeof(pl_block_q2_K) == 84, "q2_K");
_Static_assert(sizeof(pl_block_q3_K) == 110, "q3_K");
_Static_assert(sizeof(pl_block_q4_K) == 144, "q4_K");
_Static_assert(sizeof(pl_block_q5_K) == 176, "q5_K");
_Static_assert(sizeof(pl_block_q6_K) == 210, "q6_K");
_Static_assert(sizeof(pl_block_q8_K) == 292, "q8_K");
_Static_assert(sizeof(pl_block_tq1_0) == 54, "tq1_0");
_Static_assert(sizeof(pl_block_tq2_0) == 66, "tq2_0");
_Static_assert(sizeof(pl_block_iq2_xxs) == 66, "iq2_xxs");
_Static_assert(sizeof(pl_block_iq2_xs) == 74, "iq2_xs");
_Static_assert(sizeof(pl_block_iq2_s) == 82, "iq2_s");
_Static_assert(sizeof(pl_block_iq3_xxs) == 98, "iq3_xxs");
_Static_assert(sizeof(pl_block_iq3_s) == 110, "iq3_s");
_Static_assert(sizeof(pl_block_iq1_s) == 50, "iq1_s");
_Static_assert(sizeof(pl_block_iq1_m) == 56, "iq1_m");
_Static_assert(sizeof(pl_block_iq4_nl) == 18, "iq4_nl");
_Static_assert(sizeof(pl_block_iq4_xs) == 136, "iq4_xs");

#endif
