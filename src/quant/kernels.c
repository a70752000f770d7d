/*
 * kernels.c -- run-time choice of quant kernels: builds one table per tier
 * at first use (scalar from the type table's references, each higher tier
 * starting as a copy of its parent's and overriding what its ISA file
 * implements), then answers lookups from those tables.
 */
#include "quant/kernels.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cpu.h"
#include "quant/kernels_arm.h"
#include "quant/kernels_x86.h"

static pl_quant_kernel_set tables[PL_TIER_COUNT][PL_TYPE_COUNT];
static pl_quant_tier best_tier;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static const char *tier_names[PL_TIER_COUNT] = {"scalar", "avx2", "avx512", "neon", "dotprod", "i8mm"};
/* each tier's parent (see kernels.h) */
static const int tier_parent[PL_TIER_COUNT] = {-1, PL_TIER_SCALAR, PL_TIER_AVX2, PL_TIER_SCALAR, PL_TIER_NEON, PL_TIER_DOTPROD};

int pl_quant_tier_parent(pl_quant_tier tier) { return (unsigned)tier < PL_TIER_COUNT ? tier_parent[tier] : -1; }

const char *pl_quant_tier_name(pl_quant_tier tier) {
    return (unsigned)tier < PL_TIER_COUNT ? tier_names[tier] : NULL;
}

int pl_quant_tier_from_name(const char *name) {
    for (int i = 0; name && i < PL_TIER_COUNT; i++)
        if (!strcmp(name, tier_names[i])) return i;
    return -1;
}

/* the CPU feature bits each tier needs (its own and its parents') */
static const uint32_t tier_needs[PL_TIER_COUNT] = {
    0,
    POCKETLLM_CPU_AVX2 | POCKETLLM_CPU_FMA | POCKETLLM_CPU_F16C,
    POCKETLLM_CPU_AVX2 | POCKETLLM_CPU_FMA | POCKETLLM_CPU_F16C | POCKETLLM_CPU_AVX512F | POCKETLLM_CPU_AVX512BW |
        POCKETLLM_CPU_AVX512VL | POCKETLLM_CPU_AVX512VNNI,
    POCKETLLM_CPU_NEON,
    POCKETLLM_CPU_NEON | POCKETLLM_CPU_ARM_DOTPROD,
    POCKETLLM_CPU_NEON | POCKETLLM_CPU_ARM_DOTPROD | POCKETLLM_CPU_ARM_I8MM,
};

bool pl_quant_tier_supported(pl_quant_tier tier) {
    if ((unsigned)tier >= PL_TIER_COUNT) return false;
#if defined(__x86_64__)
    const bool compiled = tier <= PL_TIER_AVX512;
#elif defined(__aarch64__)
    const bool compiled = tier == PL_TIER_SCALAR || tier >= PL_TIER_NEON;
#else
    const bool compiled = tier == PL_TIER_SCALAR;
#endif
    return compiled && (pl_cpu_features() & tier_needs[tier]) == tier_needs[tier];
}

/* Runs one ISA file's fill.  Tile and rows kernels are only valid next to
 * the vec_dot they reproduce bit for bit: where a tier replaces a type's
 * vec_dot but not one of those, the inherited one is dropped. */
static void fill_tier(pl_quant_kernel_set *table, void (*fill)(pl_quant_kernel_set *)) {
    pl_vec_dot_fn before[PL_TYPE_COUNT];
    pl_vec_dot_tile_fn tile_before[PL_TYPE_COUNT], rows_before[PL_TYPE_COUNT], cols_before[PL_TYPE_COUNT][PL_PART_COLS];
    for (uint32_t t = 0; t < PL_TYPE_COUNT; t++) {
        before[t] = table[t].vec_dot, tile_before[t] = table[t].vec_dot_tile, rows_before[t] = table[t].vec_dot_rows;
        memcpy(cols_before[t], table[t].vec_dot_cols, sizeof cols_before[t]);
    }
    fill(table);
    for (uint32_t t = 0; t < PL_TYPE_COUNT; t++) {
        if (table[t].vec_dot == before[t]) continue;
        for (int c = 0; c < PL_PART_COLS; c++)
            if (table[t].vec_dot_cols[c] == cols_before[t][c]) table[t].vec_dot_cols[c] = NULL;
        if (table[t].vec_dot_tile == tile_before[t]) {
            table[t].vec_dot_tile = NULL;
            table[t].tile_rows = table[t].tile_cols = 0;
        }
        if (table[t].vec_dot_rows == rows_before[t]) {
            table[t].vec_dot_rows = NULL;
            table[t].dot_rows = 0;
        }
    }
}

static char tier_list[64];

/* the names of the supported tiers, lowest first (kernels.c's order is
 * scalar, then each architecture's chain) */
static void fill_tier_list(void) {
    size_t used = 0;
    for (int k = 0; k < PL_TIER_COUNT; k++)
        if (pl_quant_tier_supported((pl_quant_tier)k))
            used += (size_t)snprintf(tier_list + used, sizeof tier_list - used, "%s%s", used ? " " : "", tier_names[k]);
}

/* tables[k] = a copy of its parent's table, then k's ISA file on top */
static void derive_tier(pl_quant_tier k, void (*fill)(pl_quant_kernel_set *)) {
    memcpy(tables[k], tables[tier_parent[k]], sizeof tables[k]);
    for (uint32_t t = 0; t < PL_TYPE_COUNT; t++) tables[k][t].tier = k;
    if (fill) fill_tier(tables[k], fill);
}

/* true when `tier` is `base` or builds on it (through its parents) */
static bool builds_on(int tier, int base) {
    for (int t = tier; t >= 0; t = tier_parent[t])
        if (t == base) return true;
    return false;
}

static void build_tables(void) {
    for (uint32_t t = 0; t < PL_TYPE_COUNT; t++) {
        const pl_type_traits *tr = pl_type_get(t);
        tables[PL_TIER_SCALAR][t] = (pl_quant_kernel_set){.tier = PL_TIER_SCALAR,
                                                          .vec_dot = tr->vec_dot,
                                                          .act_from_float = tr->act_from_float,
                                                          .to_float = tr->to_float};
    }
    /* tiers of the other architecture stay scalar copies (never used:
     * pl_quant_tier_supported says no) */
#if defined(__x86_64__)
    derive_tier(PL_TIER_AVX2, pl_quant_fill_avx2);
    derive_tier(PL_TIER_AVX512, pl_quant_fill_avx512);
#else
    derive_tier(PL_TIER_AVX2, NULL);
    derive_tier(PL_TIER_AVX512, NULL);
#endif
#if defined(__aarch64__)
    derive_tier(PL_TIER_NEON, pl_quant_fill_neon);
    derive_tier(PL_TIER_DOTPROD, pl_quant_fill_dotprod);
    derive_tier(PL_TIER_I8MM, pl_quant_fill_i8mm);
#else
    derive_tier(PL_TIER_NEON, NULL);
    derive_tier(PL_TIER_DOTPROD, NULL);
    derive_tier(PL_TIER_I8MM, NULL);
#endif
    /* the highest supported tier within the cap: a cap names a tier of the
     * chain (a cap of another architecture's tier leaves scalar) */
    const char *cap_name = getenv("POCKETLLM_CPU_TIER");
    const int cap = pl_quant_tier_from_name(cap_name);
    if (cap_name && cap < 0)
        fprintf(stderr, "pocketllm: POCKETLLM_CPU_TIER=%s is not a tier (scalar, avx2, avx512, neon, dotprod, i8mm); ignored\n",
                cap_name);
    best_tier = PL_TIER_SCALAR;
    for (int k = PL_TIER_COUNT - 1; k > 0; k--)
        if (pl_quant_tier_supported((pl_quant_tier)k) && (cap < 0 || builds_on(cap, k))) {
            best_tier = (pl_quant_tier)k;
            break;
        }
}

POCKETLLM_API const char *pocketllm_cpu_kernel_tier(void) { return pl_quant_tier_name(pl_quant_best_tier()); }

POCKETLLM_API const char *pocketllm_cpu_kernel_tiers(void) {
    static pthread_once_t list_once = PTHREAD_ONCE_INIT;
    pthread_once(&list_once, fill_tier_list);
    return tier_list;
}

pl_quant_tier pl_quant_best_tier(void) {
    pthread_once(&once, build_tables);
    return best_tier;
}

const pl_quant_kernel_set *pl_quant_kernels(uint32_t type) {
    pthread_once(&once, build_tables);
    return type < PL_TYPE_COUNT ? &tables[best_tier][type] : NULL;
}

const pl_quant_kernel_set *pl_quant_kernels_tier(uint32_t type, pl_quant_tier tier) {
    pthread_once(&once, build_tables);
    if (type >= PL_TYPE_COUNT || (unsigned)tier >= PL_TIER_COUNT || !pl_quant_tier_supported(tier)) return NULL;
    return &tables[tier][type];
}
