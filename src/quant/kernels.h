/*
 * kernels.h -- the host's fastest quant kernels, chosen at run time.
 *
 * The binary carries every tier of its architecture, each ISA compiled in
 * its own file with its own flags: on x86-64 scalar, AVX2+FMA+F16C and
 * AVX-512 F/BW/VL/VNNI; on AArch64 scalar, NEON (Armv8.0-A), dotprod
 * (SDOT/UDOT) and i8mm (SMMLA).  It picks the highest tier the CPU runs.
 * Each tier builds on its parent (the tier below it on the same
 * architecture): a tier that has no kernel of its own for a type runs its
 * parent's.  Every tier is tested against the scalar reference of the type
 * table (quant/types.h).
 *
 * POCKETLLM_CPU_TIER=<tier name> in the environment caps the tier (read
 * once, at first use) so a whole run can be repeated on a lower tier.
 */
#ifndef PL_QUANT_KERNELS_H
#define PL_QUANT_KERNELS_H

#include <stdbool.h>
#include <stdint.h>

#include "quant/types.h"

typedef enum pl_quant_tier {
    PL_TIER_SCALAR = 0,
    PL_TIER_AVX2 = 1,   /* AVX2, FMA, F16C */
    PL_TIER_AVX512 = 2, /* AVX-512 F, BW, VL, VNNI (plus the AVX2 set) */
    PL_TIER_NEON = 3,   /* AArch64 Advanced SIMD, Armv8.0-A */
    PL_TIER_DOTPROD = 4, /* plus SDOT/UDOT (Armv8.2-A dotprod) */
    PL_TIER_I8MM = 5,   /* plus SMMLA (Armv8.6-A i8mm) */
    PL_TIER_COUNT = 6
} pl_quant_tier;

/* A tile of dot products: for r < rows and c < cols of the kernel set,
 *   y[c * y_stride + r] = vec_dot(n, w + r * w_stride, a + c * a_stride)
 * (strides in bytes for w and a, in floats for y), BIT FOR BIT: each entry
 * is the same integer sums combined by the same float operations in the
 * same order as the set's vec_dot, only the loads and the unpacking of a
 * weight block are shared between the tokens (and the activation loads
 * between the rows).  A token's result therefore never depends on which
 * other tokens share its batch. */
typedef void (*pl_vec_dot_tile_fn)(int64_t n, const void *w, size_t w_stride, const void *a, size_t a_stride, float *y,
                                   size_t y_stride);

/* Tokens a part-tile (vec_dot_cols) kernel can take, plus one. */
#define PL_PART_COLS 4

/* Rows a rows kernel takes at once (kernel sets with one: dot_rows). */
#define PL_DOT_ROWS 8

typedef struct pl_quant_kernel_set {
    pl_quant_tier tier;                  /* the tier this set was built for */
    pl_vec_dot_fn vec_dot;               /* weight row . activation row (vec_dot_type) */
    pl_vec_dot_tile_fn vec_dot_tile;     /* NULL, or tile_rows x tile_cols of vec_dot at once */
    int tile_rows, tile_cols;            /* the tile's shape (0 without one) */
    /* NULL, or dot_rows rows x ONE token: y[r] = vec_dot(n, w + r * w_stride,
     * a) bit for bit (a_stride and y_stride unused) -- the decode shape,
     * where a call per row costs a good part of a short row */
    pl_vec_dot_tile_fn vec_dot_rows;
    int dot_rows;
    /* NULL, or ONE row x c tokens (c = the index, 2 .. PL_PART_COLS - 1) of
     * vec_dot's bits, shaped as the tile kernel: the tokens a batch leaves
     * past its whole tiles -- a verification pass of 2 or 3 drafted tokens,
     * the last of 9 -- share a weight block's unpacking as a tile's do */
    pl_vec_dot_tile_fn vec_dot_cols[4];
    pl_act_from_float_fn act_from_float; /* only on activation types */
    pl_to_float_fn to_float;             /* decode */
} pl_quant_kernel_set;

/* The fastest kernels this host runs for `type` (within the env cap); NULL
 * for an id outside the table.  Members are NULL where the type has no such
 * kernel (e.g. no vec_dot for an activation-only type). */
const pl_quant_kernel_set *pl_quant_kernels(uint32_t type);

/* The kernels of exactly `tier` for `type` (lower-tier fallbacks filled
 * in); NULL when this host cannot run that tier or the id is invalid.
 * Ignores the env cap: for tests that force each tier. */
const pl_quant_kernel_set *pl_quant_kernels_tier(uint32_t type, pl_quant_tier tier);

/* True when the CPU (and OS) support every instruction the tier uses. */
bool pl_quant_tier_supported(pl_quant_tier tier);

/* The tier a tier builds on: scalar for the first SIMD tier of each
 * architecture, -1 for scalar itself or an invalid tier. */
int pl_quant_tier_parent(pl_quant_tier tier);

/* The highest tier pl_quant_kernels() uses on this host. */
pl_quant_tier pl_quant_best_tier(void);

/* "scalar", "avx2", "avx512", "neon", "dotprod", "i8mm"; NULL otherwise. */
const char *pl_quant_tier_name(pl_quant_tier tier);

/* Tier by name (as above); -1 when unknown. */
int pl_quant_tier_from_name(const char *name);

#endif
