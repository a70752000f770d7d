/*
 * kernels.c -- run-time choice of quant kernels: builds one table per tier
 * at first use (scalar from the type table's references, each higher tier
 * starting as a copy of the one below and overriding what its ISA file
 * implements), then answers lookups from those tables.
 */
#include "quant/kernels.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/cpu.h"
#include "quant/kernels_x86.h"

static pl_quant_kernel_set tables[PL_TIER_COUNT][PL_TYPE_COUNT];
static pl_quant_tier best_tier;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static const char *tier_names[PL_TIER_COUNT] = {"scalar", "avx2", "avx512"};

const char *pl_quant_tier_name(pl_quant_tier tier) {
    return (unsigned)tier < PL_TIER_COUNT ? tier_names[tier] : NULL;
}

int pl_quant_tier_from_name(const char *name) {
    for (int i = 0; name && i < PL_TIER_COUNT; i++)
        if (!strcmp(name, tier_names[i])) return i;
    return -1;
}

bool pl_quant_tier_supported(pl_quant_tier tier) {
    uint32_t f = pl_cpu_features();
    const uint32_t avx2 = POCKETLLM_CPU_AVX2 | POCKETLLM_CPU_FMA | POCKETLLM_CPU_F16C;
    const uint32_t avx512 = avx2 | POCKETLLM_CPU_AVX512F | POCKETLLM_CPU_AVX512BW | POCKETLLM_CPU_AVX512VL |
                            POCKETLLM_CPU_AVX512VNNI;
    switch (tier) {
    case PL_TIER_SCALAR: return true;
#if defined(__x86_64__)
    case PL_TIER_AVX2: return (f & avx2) == avx2;
    case PL_TIER_AVX512: return (f & avx512) == avx512;
#endif
    default: return false;
    }
}

/* Runs one ISA file's fill.  Tile and rows kernels are only valid next to
 * the vec_dot they reproduce bit for bit: where a tier replaces a type's
 * vec_dot but not one of those, the inherited one is dropped. */
static void fill_tier(pl_quant_kernel_set *table, void (*fill)(pl_quant_kernel_set *)) {
    pl_vec_dot_fn before[PL_TYPE_COUNT];
    pl_vec_dot_tile_fn tile_before[PL_TYPE_COUNT], rows_before[PL_TYPE_COUNT];
    for (uint32_t t = 0; t < PL_TYPE_COUNT; t++)
        before[t] = table[t].vec_dot, tile_before[t] = table[t].vec_dot_tile, rows_before[t] = table[t].vec_dot_rows;
    fill(table);
    for (uint32_t t = 0; t < PL_TYPE_COUNT; t++) {
        if (table[t].vec_dot == before[t]) continue;
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

static void build_tables(void) {
    for (uint32_t t = 0; t < PL_TYPE_COUNT; t++) {
        const pl_type_traits *tr = pl_type_get(t);
        tables[PL_TIER_SCALAR][t] = (pl_quant_kernel_set){.tier = PL_TIER_SCALAR,
                                                          .vec_dot = tr->vec_dot,
                                                          .act_from_float = tr->act_from_float,
                                                          .to_float = tr->to_float};
    }
    for (int k = 1; k < PL_TIER_COUNT; k++) {
        memcpy(tables[k], tables[k - 1], sizeof tables[k]);
        for (uint32_t t = 0; t < PL_TYPE_COUNT; t++) tables[k][t].tier = (pl_quant_tier)k;
    }
#if defined(__x86_64__)
    fill_tier(tables[PL_TIER_AVX2], pl_quant_fill_avx2);
    memcpy(tables[PL_TIER_AVX512], tables[PL_TIER_AVX2], sizeof tables[PL_TIER_AVX512]);
    for (uint32_t t = 0; t < PL_TYPE_COUNT; t++) tables[PL_TIER_AVX512][t].tier = PL_TIER_AVX512;
    fill_tier(tables[PL_TIER_AVX512], pl_quant_fill_avx512);
#endif
    best_tier = PL_TIER_SCALAR;
    for (int k = PL_TIER_COUNT - 1; k > 0; k--)
        if (pl_quant_tier_supported((pl_quant_tier)k)) {
            best_tier = (pl_quant_tier)k;
            break;
        }
    int cap = pl_quant_tier_from_name(getenv("POCKETLLM_CPU_TIER"));
    if (cap >= 0 && (pl_quant_tier)cap < best_tier) best_tier = (pl_quant_tier)cap;
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
