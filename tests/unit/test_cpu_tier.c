/*
 * test_cpu_tier.c -- which kernel tier a process runs, and that every tier
 * runs every type:
 *  - with PL_EXPECT_TIER set (the emulated ARM64 tests set it per CPU
 *    model, and per POCKETLLM_CPU_TIER cap), the quant tier chosen and the
 *    row-kernel table that goes with it are the expected ones, and a CPU
 *    compute built by default runs that tier;
 *  - the type table enumerated: on every tier this CPU runs, every type
 *    the engine computes with has a vec_dot and a decode, and every SIMD
 *    tier has its own vec_dot for it (no weight type falls back to the
 *    scalar reference on a SIMD tier), so a checkpoint cannot hold a type
 *    some tier lacks a kernel for;
 *  - the tier chain: each tier's parent, names both ways, the public
 *    pocketllm_cpu_kernel_tier() agrees.
 */
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_compute.h"
#include "backend/cpu/cpu_isa.h"
#include "pltest.h"
#include "quant/kernels.h"
#include "quant/types.h"

static void check_expected(void) {
    const char *want = getenv("PL_EXPECT_TIER");
    const pl_quant_tier best = pl_quant_best_tier();
    fprintf(stderr, "kernel tier: %s (supported here: %s; cap %s)\n", pl_quant_tier_name(best), pocketllm_cpu_kernel_tiers(),
            getenv("POCKETLLM_CPU_TIER") ? getenv("POCKETLLM_CPU_TIER") : "none");
    CHECK(strcmp(pocketllm_cpu_kernel_tier(), pl_quant_tier_name(best)) == 0);
    if (!want) return;
    CHECK_MSG(strcmp(pl_quant_tier_name(best), want) == 0, "the quant tier is %s, expected %s", pl_quant_tier_name(best),
              want);
    /* the row kernels that go with it */
    const char *isa = pl_cpu_isa_best()->name;
    const char *want_isa = !strcmp(want, "scalar")                                     ? "generic"
                           : (!strcmp(want, "neon") || !strcmp(want, "dotprod") ||
                              !strcmp(want, "i8mm"))                                   ? "neon"
                                                                                       : want;
    CHECK_MSG(strcmp(isa, want_isa) == 0, "the row-kernel table is %s, expected %s", isa, want_isa);
    /* a default CPU compute runs it: its q8_0 kernels are the tier's */
    pl_compute *c = NULL;
    CHECK(pl_cpu_compute_new(1, NULL, &c) == POCKETLLM_OK);
    if (c) {
        CHECK_MSG(pl_cpu(c)->qtier == best, "the CPU compute runs tier %s", pl_quant_tier_name(pl_cpu(c)->qtier));
        c->ops->free(c);
    }
}

static void check_every_type(void) {
    for (int tier = 0; tier < PL_TIER_COUNT; tier++) {
        if (!pl_quant_tier_supported((pl_quant_tier)tier)) continue;
        int types = 0, own = 0;
        for (uint32_t type = 0; type < PL_TYPE_COUNT; type++) {
            const pl_type_traits *t = pl_type_get(type);
            if (!pl_type_valid(type) || !t->vec_dot) continue;
            const pl_quant_kernel_set *k = pl_quant_kernels_tier(type, (pl_quant_tier)tier);
            types++;
            CHECK_MSG(k && k->vec_dot && k->to_float, "%s has no vec_dot or decode on %s", t->name,
                      pl_quant_tier_name((pl_quant_tier)tier));
            if (!k || tier == PL_TIER_SCALAR) continue;
            const bool mine = k->vec_dot != t->vec_dot;
            own += mine;
            CHECK_MSG(mine, "%s runs the scalar reference on the %s tier (no SIMD kernel)", t->name,
                      pl_quant_tier_name((pl_quant_tier)tier));
            /* the activation type's encoder is the tier's too */
            const pl_quant_kernel_set *ak = pl_quant_kernels_tier(t->vec_dot_type, (pl_quant_tier)tier);
            CHECK_MSG(ak && ak->act_from_float, "%s's activations (%s) have no encoder on %s", t->name,
                      pl_type_get(t->vec_dot_type)->name, pl_quant_tier_name((pl_quant_tier)tier));
        }
        fprintf(stderr, "tier %s: %d weight types, %d with the tier's own vec_dot\n", pl_quant_tier_name((pl_quant_tier)tier),
                types, tier == PL_TIER_SCALAR ? types : own);
        CHECK(types >= 25);
    }
}

static void check_chain(void) {
    CHECK(pl_quant_tier_parent(PL_TIER_SCALAR) == -1);
    CHECK(pl_quant_tier_parent(PL_TIER_AVX2) == PL_TIER_SCALAR);
    CHECK(pl_quant_tier_parent(PL_TIER_AVX512) == PL_TIER_AVX2);
    CHECK(pl_quant_tier_parent(PL_TIER_NEON) == PL_TIER_SCALAR);
    CHECK(pl_quant_tier_parent(PL_TIER_DOTPROD) == PL_TIER_NEON);
    CHECK(pl_quant_tier_parent(PL_TIER_I8MM) == PL_TIER_DOTPROD);
    for (int k = 0; k < PL_TIER_COUNT; k++) CHECK(pl_quant_tier_from_name(pl_quant_tier_name((pl_quant_tier)k)) == k);
    CHECK(pl_quant_tier_from_name("sve") == -1);
    CHECK(pl_quant_tier_name(PL_TIER_COUNT) == NULL);
    /* a tier is supported only with its parent */
    for (int k = 1; k < PL_TIER_COUNT; k++)
        if (pl_quant_tier_supported((pl_quant_tier)k))
            CHECK(pl_quant_tier_supported((pl_quant_tier)pl_quant_tier_parent((pl_quant_tier)k)));
#if defined(__aarch64__)
    CHECK(pl_quant_tier_supported(PL_TIER_NEON));
    CHECK(!pl_quant_tier_supported(PL_TIER_AVX2));
#elif defined(__x86_64__)
    CHECK(!pl_quant_tier_supported(PL_TIER_NEON));
#endif
}

int main(void) {
    check_expected();
    check_every_type();
    check_chain();
    TEST_DONE();
}
