/*
 * arch.c -- the registry of model architectures the engine can run, by
 * their GGUF general.architecture name.
 */
#include <stddef.h>

#include "pocketllm.h"

typedef struct pl_arch_entry {
    const char *name;
    const char *summary;
} pl_arch_entry;

/* Filled as architectures gain a graph (src/model/); NULL-terminated. */
static const pl_arch_entry pl_archs[] = {{NULL, NULL}};

uint32_t pocketllm_arch_count(void) {
    uint32_t n = 0;
    while (pl_archs[n].name) n++;
    return n;
}

const char *pocketllm_arch_name(uint32_t i) { return i < pocketllm_arch_count() ? pl_archs[i].name : NULL; }

const char *pocketllm_arch_summary(uint32_t i) { return i < pocketllm_arch_count() ? pl_archs[i].summary : NULL; }
