/*
 * test_quant_kernels.c -- every SIMD tier this host runs against the
 * scalar reference of the type table, for every type that has kernels:
 *  - vec_dot on "exact" rows (power-of-two scales, small integers, so every
 *    partial sum is exact in f32): bit-identical to the reference, which
 *    proves the integer arithmetic is the same;
 *  - vec_dot on random rows: within qt_dot_tolerance (float summation order);
 *  - act_from_float: byte-identical on rows of every distribution;
 *  - to_float: bit-identical on random, wild and edge blocks;
 *  - vec_dot_tile, where a tier has one: every entry of the tile
 *    bit-identical (memcmp; NaN matches any NaN) to vec_dot of its row and column, on random,
 *    exact and edge rows with padded strides, and within tolerance of the
 *    reference (a token's result must not depend on its batch); the
 *    part-tile kernels (vec_dot_cols: one row x 2 and x 3 tokens) alike.
 * Buffers are allocated at their exact size so the ASan build catches any
 * read past the blocks a kernel is given.  A tier the host cannot run is
 * reported (never counted as passed).
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pltest.h"
#include "quant/kernels.h"
#include "quant/types.h"
#include "../common/quant_testdata.h"

static pl_rng rng;

static int64_t row_lengths(uint32_t block, int64_t *out) {
    static const int64_t b1[] = {1, 7, 15, 16, 17, 31, 33, 64, 100, 1000, 4096};
    static const int64_t b32[] = {32, 64, 96, 128, 160, 256, 512, 4096};
    static const int64_t b256[] = {256, 512, 768, 4096};
    const int64_t *src = block == 1 ? b1 : block == 32 ? b32 : b256;
    int64_t n = block == 1 ? 11 : block == 32 ? 8 : 4;
    memcpy(out, src, sizeof(int64_t) * (size_t)n);
    return n;
}

static void *alloc_row(uint32_t type, int64_t n) {
    uint64_t bytes;
    pl_type_row_bytes(type, (uint64_t)n, &bytes);
    return malloc(bytes ? bytes : 1);
}

static int same_float(float a, float b) { return memcmp(&a, &b, 4) == 0 || (isnan(a) && isnan(b)); }

static void check_dot(uint32_t type, pl_quant_tier tier) {
    const pl_type_traits *t = pl_type_get(type);
    const pl_quant_kernel_set *k = pl_quant_kernels_tier(type, tier);
    int64_t lens[16];
    int64_t nl = row_lengths(t->block, lens);
    int bad_exact = 0, bad_random = 0;
    double worst = 0.0;
    for (int64_t li = 0; li < nl; li++) {
        const int64_t n = lens[li];
        for (int rep = 0; rep < 6; rep++) {
            qt_mode mode = (rep < 3 && n <= 512) ? QT_EXACT : QT_RANDOM;
            void *w = alloc_row(type, n), *a = alloc_row(t->vec_dot_type, n);
            qt_gen_blocks(type, mode, &rng, w, n / t->block);
            qt_gen_blocks(t->vec_dot_type, mode, &rng, a, n / pl_type_get(t->vec_dot_type)->block);
            float ref = t->vec_dot(n, w, a), got = k->vec_dot(n, w, a);
            if (mode == QT_EXACT) {
                if (!same_float(ref, got) && bad_exact++ < 3)
                    fprintf(stderr, "  %s/%s exact n=%lld: ref %.9g got %.9g\n", t->name, pl_quant_tier_name(tier),
                            (long long)n, ref, got);
            } else {
                double tol = qt_dot_tolerance(type, w, a, n), diff = fabs((double)ref - (double)got);
                if (tol > 0) worst = fmax(worst, diff / tol);
                if (!(diff <= tol) && bad_random++ < 3)
                    fprintf(stderr, "  %s/%s random n=%lld: ref %.9g got %.9g (tol %.3g)\n", t->name,
                            pl_quant_tier_name(tier), (long long)n, ref, got, tol);
            }
            free(w);
            free(a);
        }
    }
    /* edge weight blocks (zero, huge, subnormal, inf, NaN scales; all-equal
     * bytes), one kind per block.  Where the reference is finite the tier
     * must be within tolerance; where it is inf or NaN the tier must be inf
     * or NaN too -- which of them depends on the summation order once a
     * partial product overflows (inf + -inf), so that is not compared. */
    int bad_edge = 0;
    for (int rep = 0; rep < 4; rep++) {
        const int64_t nb = QT_EDGE_KINDS, n = nb * t->block < 64 ? 64 : nb * t->block;
        const int64_t nbw = n / t->block;
        void *w = alloc_row(type, n), *a = alloc_row(t->vec_dot_type, n);
        qt_gen_blocks(type, QT_EDGE, &rng, w, nbw);
        qt_gen_blocks(t->vec_dot_type, QT_RANDOM, &rng, a, n / pl_type_get(t->vec_dot_type)->block);
        /* rotate which blocks get which edge case */
        if (rep) {
            uint8_t *tmp = malloc(t->bytes);
            for (int r = 0; r < rep; r++) {
                memcpy(tmp, w, t->bytes);
                memmove(w, (uint8_t *)w + t->bytes, (size_t)(nbw - 1) * t->bytes);
                memcpy((uint8_t *)w + (size_t)(nbw - 1) * t->bytes, tmp, t->bytes);
            }
            free(tmp);
        }
        const float ref = t->vec_dot(n, w, a), got = k->vec_dot(n, w, a);
        bool ok;
        if (!isfinite(ref)) ok = !isfinite(got);
        else {
            const double tol = qt_dot_tolerance(type, w, a, n);
            ok = !isfinite(tol) || fabs((double)ref - (double)got) <= tol;
        }
        if (!ok && bad_edge++ < 3)
            fprintf(stderr, "  %s/%s edge blocks (rotation %d): ref %.9g got %.9g\n", t->name, pl_quant_tier_name(tier), rep,
                    ref, got);
        free(w);
        free(a);
    }
    CHECK_MSG(bad_edge == 0, "%s vec_dot %s: %d edge rows disagree with the reference", t->name, pl_quant_tier_name(tier),
              bad_edge);
    CHECK_MSG(bad_exact == 0, "%s vec_dot %s: %d exact rows differ from the reference", t->name,
              pl_quant_tier_name(tier), bad_exact);
    CHECK_MSG(bad_random == 0, "%s vec_dot %s: %d random rows beyond tolerance", t->name, pl_quant_tier_name(tier),
              bad_random);
    if (getenv("PL_TEST_VERBOSE"))
        fprintf(stderr, "  %-8s %-6s vec_dot: worst |diff|/tol %.3f\n", t->name, pl_quant_tier_name(tier), worst);
}

/* One tile call against vec_dot of each (row, column) pair: identical
 * bits; and against the scalar reference within tolerance.  Rows and
 * activation columns sit at padded strides and y at a wider stride, so a
 * kernel that mixes up its strides is caught; buffers are exact-size for
 * ASan. */
/* A tile-shaped kernel (the tile, R x C; the rows kernel, R x 1) against
 * vec_dot's bits and the reference's tolerance. */
static void check_tile_kernel(uint32_t type, pl_quant_tier tier, pl_vec_dot_tile_fn fn, const int R, const int C,
                              const char *what) {
    const pl_type_traits *t = pl_type_get(type);
    const pl_quant_kernel_set *k = pl_quant_kernels_tier(type, tier);
    const pl_type_traits *at = pl_type_get(t->vec_dot_type);
    CHECK_MSG(R >= 1 && R <= 8 && C >= 1 && C <= 8, "%s/%s tile shape %dx%d", t->name, pl_quant_tier_name(tier), R, C);
    if (R < 1 || R > 8 || C < 1 || C > 8) return;
    int64_t lens[16];
    const int64_t nl = row_lengths(t->block, lens);
    int bad_bits = 0, bad_tol = 0, cases = 0;
    const qt_mode modes[] = {QT_RANDOM, QT_EXACT, QT_EDGE, QT_RANDOM};
    for (int64_t li = 0; li < nl; li++) {
        const int64_t n = lens[li];
        for (int m = 0; m < 4; m++) {
            uint64_t wrow, arow;
            pl_type_row_bytes(type, (uint64_t)n, &wrow);
            pl_type_row_bytes(t->vec_dot_type, (uint64_t)n, &arow);
            /* strides: a row plus a few blocks of padding (filled too) */
            const size_t ws = (size_t)wrow + (size_t)t->bytes * (size_t)(m + 1), as = (size_t)arow + (size_t)at->bytes * (size_t)m;
            const size_t ys = (size_t)R + 3;
            uint8_t *w = malloc(ws * (size_t)(R - 1) + (size_t)wrow), *a = malloc(as * (size_t)(C - 1) + (size_t)arow);
            qt_gen_blocks(type, modes[m], &rng, w, (int64_t)((ws * (size_t)(R - 1) + (size_t)wrow) / t->bytes));
            qt_gen_blocks(t->vec_dot_type, modes[m] == QT_EDGE ? QT_RANDOM : modes[m], &rng, a,
                          (int64_t)((as * (size_t)(C - 1) + (size_t)arow) / at->bytes));
            float *y = malloc(sizeof(float) * ys * (size_t)C);
            for (size_t i = 0; i < ys * (size_t)C; i++) y[i] = -12345.0f;
            fn(n, w, ws, a, as, y, ys);
            for (int c = 0; c < C; c++) {
                for (size_t r = (size_t)R; r < ys; r++)
                    if (y[(size_t)c * ys + r] != -12345.0f && bad_bits++ < 3)
                        fprintf(stderr, "  %s/%s %s wrote outside its %dx%d entries\n", t->name, pl_quant_tier_name(tier), what, R, C);
                for (int r = 0; r < R; r++) {
                    const void *wr = w + (size_t)r * ws, *ac = a + (size_t)c * as;
                    const float got = y[(size_t)c * ys + (size_t)r], one = k->vec_dot(n, wr, ac), ref = t->vec_dot(n, wr, ac);
                    cases++;
                    /* NaN is NaN: which operand's NaN an x86 op passes on
                     * follows the register order the compiler picked */
                    if (!same_float(got, one) && bad_bits++ < 3)
                        fprintf(stderr, "  %s/%s %s n=%lld mode %d (%d,%d): %.9g, vec_dot %.9g\n", t->name,
                                pl_quant_tier_name(tier), what, (long long)n, m, r, c, got, one);
                    if (modes[m] == QT_EDGE) continue; /* edge rows: the bit check above covers them */
                    const double tol = qt_dot_tolerance(type, wr, ac, n);
                    if (!(fabs((double)ref - (double)got) <= tol) && bad_tol++ < 3)
                        fprintf(stderr, "  %s/%s %s n=%lld mode %d: ref %.9g got %.9g (tol %.3g)\n", t->name,
                                pl_quant_tier_name(tier), what, (long long)n, m, ref, got, tol);
                }
            }
            free(w), free(a), free(y);
        }
    }
    CHECK_MSG(bad_bits == 0, "%s %s %s: %d of %d entries differ from vec_dot's bits", t->name, what,
              pl_quant_tier_name(tier), bad_bits, cases);
    CHECK_MSG(bad_tol == 0, "%s %s %s: %d entries beyond the reference's tolerance", t->name, what,
              pl_quant_tier_name(tier), bad_tol);
}

static void check_tile(uint32_t type, pl_quant_tier tier) {
    const pl_quant_kernel_set *k = pl_quant_kernels_tier(type, tier);
    check_tile_kernel(type, tier, k->vec_dot_tile, k->tile_rows, k->tile_cols, "vec_dot_tile");
    for (int c = 2; c < PL_PART_COLS; c++)
        if (k->vec_dot_cols[c]) check_tile_kernel(type, tier, k->vec_dot_cols[c], 1, c, "vec_dot_cols");
}

static void check_rows(uint32_t type, pl_quant_tier tier) {
    const pl_quant_kernel_set *k = pl_quant_kernels_tier(type, tier);
    check_tile_kernel(type, tier, k->vec_dot_rows, k->dot_rows, 1, "vec_dot_rows");
}

static void check_act(uint32_t type, pl_quant_tier tier) {
    const pl_type_traits *t = pl_type_get(type);
    const pl_quant_kernel_set *k = pl_quant_kernels_tier(type, tier);
    int64_t lens[16];
    int64_t nl = row_lengths(t->block, lens);
    int bad = 0;
    for (int64_t li = 0; li < nl; li++) {
        const int64_t n = lens[li];
        for (int dist = 0; dist < QT_DISTS; dist++) {
            float *x = malloc(sizeof(float) * (size_t)n);
            qt_gen_floats(&rng, x, n, dist);
            uint64_t bytes;
            pl_type_row_bytes(type, (uint64_t)n, &bytes);
            uint8_t *ref = calloc(1, bytes), *got = calloc(1, bytes);
            t->act_from_float(x, ref, n);
            k->act_from_float(x, got, n);
            if (memcmp(ref, got, bytes) && bad++ < 3)
                fprintf(stderr, "  %s/%s act n=%lld dist %d differs\n", t->name, pl_quant_tier_name(tier),
                        (long long)n, dist);
            free(x), free(ref), free(got);
        }
    }
    CHECK_MSG(bad == 0, "%s act_from_float %s: %d rows differ", t->name, pl_quant_tier_name(tier), bad);
}

static void check_decode(uint32_t type, pl_quant_tier tier) {
    const pl_type_traits *t = pl_type_get(type);
    const pl_quant_kernel_set *k = pl_quant_kernels_tier(type, tier);
    int bad = 0;
    const qt_mode modes[] = {QT_RANDOM, QT_WILD, QT_EDGE};
    for (int m = 0; m < 3; m++) {
        const int64_t nb = QT_EDGE_KINDS + 3, n = nb * t->block;
        void *blk = alloc_row(type, n);
        float *ref = malloc(sizeof(float) * (size_t)n), *got = malloc(sizeof(float) * (size_t)n);
        qt_gen_blocks(type, modes[m], &rng, blk, nb);
        t->to_float(blk, ref, n);
        k->to_float(blk, got, n);
        if (memcmp(ref, got, sizeof(float) * (size_t)n) && bad++ < 3)
            fprintf(stderr, "  %s/%s decode mode %d differs\n", t->name, pl_quant_tier_name(tier), m);
        free(blk), free(ref), free(got);
    }
    CHECK_MSG(bad == 0, "%s to_float %s differs from the reference", t->name, pl_quant_tier_name(tier));
}

int main(void) {
    pl_rng_seed(&rng, 20240611);
    for (int tier = 0; tier < PL_TIER_COUNT; tier++) {
        if (!pl_quant_tier_supported((pl_quant_tier)tier)) {
            fprintf(stderr, "NOTE: tier %s is not supported by this CPU: not tested here\n",
                    pl_quant_tier_name((pl_quant_tier)tier));
            continue;
        }
        int types = 0, tiles = 0;
        for (uint32_t type = 0; type < PL_TYPE_COUNT; type++) {
            const pl_type_traits *t = pl_type_get(type);
            if (!pl_type_valid(type)) continue;
            if (t->vec_dot) check_dot(type, (pl_quant_tier)tier), types++;
            if (pl_quant_kernels_tier(type, (pl_quant_tier)tier)->vec_dot_tile) check_tile(type, (pl_quant_tier)tier), tiles++;
            if (pl_quant_kernels_tier(type, (pl_quant_tier)tier)->vec_dot_rows) check_rows(type, (pl_quant_tier)tier);
            if (t->act_from_float) check_act(type, (pl_quant_tier)tier);
            if (t->to_float) check_decode(type, (pl_quant_tier)tier);
        }
        fprintf(stderr, "tier %s: %d types with vec_dot checked, %d with a tile kernel\n", pl_quant_tier_name((pl_quant_tier)tier),
                types, tiles);
        /* the tile and rows kernels this tier is meant to carry (a lost
         * table entry would silently fall back to vec_dot, slow but
         * unnoticed): on x86 the AVX2 tier tiles q8_0 and the k-quants, the
         * AVX-512 tier adds the f16 tile and the rows kernels; every AArch64
         * tier has all of them (NEON tiles and rows, dotprod the same with
         * SDOT, i8mm with SMMLA tiles) */
        const bool arm = tier >= PL_TIER_NEON;
        static const uint32_t tiled[] = {PL_TYPE_Q8_0, PL_TYPE_Q2_K, PL_TYPE_Q3_K, PL_TYPE_Q4_K, PL_TYPE_Q5_K, PL_TYPE_Q6_K};
        static const uint32_t rowed[] = {PL_TYPE_Q4_K, PL_TYPE_Q5_K, PL_TYPE_Q6_K};
        if (tier == PL_TIER_AVX512)
            CHECK_MSG(pl_quant_kernels_tier(PL_TYPE_F16, (pl_quant_tier)tier)->vec_dot_tile != NULL, "f16 has no tile kernel on %s",
                      pl_quant_tier_name((pl_quant_tier)tier));
        if (tier == PL_TIER_AVX512 || arm)
            for (size_t i = 0; i < sizeof rowed / sizeof rowed[0]; i++)
                CHECK_MSG(pl_quant_kernels_tier(rowed[i], (pl_quant_tier)tier)->vec_dot_rows != NULL, "%s has no rows kernel on %s",
                          pl_type_get(rowed[i])->name, pl_quant_tier_name((pl_quant_tier)tier));
        if (tier != PL_TIER_SCALAR)
            for (size_t i = 0; i < sizeof tiled / sizeof tiled[0]; i++)
                CHECK_MSG(pl_quant_kernels_tier(tiled[i], (pl_quant_tier)tier)->vec_dot_tile != NULL, "%s has no tile kernel on %s",
                          pl_type_get(tiled[i])->name, pl_quant_tier_name((pl_quant_tier)tier));
        /* the i8mm tier's tiles are its own (SMMLA), not dotprod's */
        if (tier == PL_TIER_I8MM && pl_quant_tier_supported(PL_TIER_DOTPROD))
            for (size_t i = 0; i < sizeof tiled / sizeof tiled[0]; i++)
                CHECK_MSG(pl_quant_kernels_tier(tiled[i], PL_TIER_I8MM)->vec_dot_tile !=
                              pl_quant_kernels_tier(tiled[i], PL_TIER_DOTPROD)->vec_dot_tile,
                          "%s on i8mm has no SMMLA tile (it runs dotprod's)", pl_type_get(tiled[i])->name);
    }
    CHECK(pl_quant_kernels(PL_TYPE_Q8_0) != NULL);
    CHECK(pl_quant_kernels(PL_TYPE_COUNT) == NULL);
    CHECK(pl_quant_kernels_tier(PL_TYPE_Q8_0, PL_TIER_COUNT) == NULL);
    CHECK(pl_quant_kernels(PL_TYPE_Q8_0)->tier == pl_quant_best_tier());
    TEST_DONE();
}
