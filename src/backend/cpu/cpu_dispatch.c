/*
 * cpu_dispatch.c -- choose the row-kernel table for this host once: the
 * widest instruction set the CPU and OS support, capped by
 * POCKETLLM_CPU_TIER=scalar|avx2|avx512 (x86-64) or scalar|neon|dotprod|i8mm
 * (AArch64) when set -- the same variable caps the quant kernels -- so a
 * whole run can be repeated on a lower tier.
 */
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_isa.h"
#include "base/cpu.h"
#include "quant/kernels.h"

int pl_cpu_isa_usable(const pl_cpu_isa *isa) {
    if (!isa) return 0;
    const uint32_t f = pl_cpu_features();
    if (isa == pl_cpu_isa_generic()) return 1;
    const uint32_t avx2 = POCKETLLM_CPU_AVX2 | POCKETLLM_CPU_FMA | POCKETLLM_CPU_F16C;
    if (isa == pl_cpu_isa_avx2()) return (f & avx2) == avx2;
    const uint32_t avx512 = avx2 | POCKETLLM_CPU_AVX512F | POCKETLLM_CPU_AVX512BW | POCKETLLM_CPU_AVX512VL;
    if (isa == pl_cpu_isa_avx512()) return (f & avx512) == avx512;
    if (isa == pl_cpu_isa_neon()) return (f & POCKETLLM_CPU_NEON) != 0;
    return 0;
}

const pl_cpu_isa *pl_cpu_isa_by_name(const char *name) {
    const pl_cpu_isa *all[] = {pl_cpu_isa_avx512(), pl_cpu_isa_avx2(), pl_cpu_isa_neon(), pl_cpu_isa_generic()};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i] && name && strcmp(all[i]->name, name) == 0 && pl_cpu_isa_usable(all[i])) return all[i];
    return NULL;
}

static const pl_cpu_isa *choose(void) {
    /* the quant module resolves the cap (an unknown name is ignored there,
     * another architecture's tier leaves scalar); the row kernels follow */
    const pl_quant_tier q = pl_quant_best_tier();
    if (q == PL_TIER_SCALAR) return pl_cpu_isa_generic();
    /* every AArch64 tier runs the one NEON table */
    if (q >= PL_TIER_NEON) return pl_cpu_isa_usable(pl_cpu_isa_neon()) ? pl_cpu_isa_neon() : pl_cpu_isa_generic();
    /* AVX-512 rows need F/BW/VL but not the VNNI the quant tier needs: a
     * CPU without VNNI still gets them under an uncapped avx2 quant tier */
    const char *cap = getenv("POCKETLLM_CPU_TIER");
    if (!(cap && !strcmp(cap, "avx2")) && pl_cpu_isa_usable(pl_cpu_isa_avx512())) return pl_cpu_isa_avx512();
    if (pl_cpu_isa_usable(pl_cpu_isa_avx2())) return pl_cpu_isa_avx2();
    return pl_cpu_isa_generic();
}

const pl_cpu_isa *pl_cpu_isa_best(void) {
    static const pl_cpu_isa *chosen;
    const pl_cpu_isa *isa = __atomic_load_n(&chosen, __ATOMIC_ACQUIRE);
    if (!isa) {
        isa = choose(); /* racing first callers choose the same table */
        __atomic_store_n(&chosen, isa, __ATOMIC_RELEASE);
    }
    return isa;
}
