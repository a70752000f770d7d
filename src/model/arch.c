/*
 * arch.c -- the registry of model architectures the engine can run, by
 * their GGUF general.architecture name.
 */
#include <string.h>

#include "model/llama.h"
#include "model/model.h"

/* Every architecture with a graph (src/model/); NULL-terminated. */
static const pl_arch *const pl_archs[] = {&pl_arch_llama, &pl_arch_qwen2, &pl_arch_qwen3, &pl_arch_qwen3vl,
                                            &pl_arch_qwen2moe, &pl_arch_qwen3moe, NULL};

const pl_arch *pl_arch_find(const char *name) {
    for (size_t i = 0; name && pl_archs[i]; i++)
        if (strcmp(pl_archs[i]->name, name) == 0) return pl_archs[i];
    return NULL;
}

uint32_t pocketllm_arch_count(void) {
    uint32_t n = 0;
    while (pl_archs[n]) n++;
    return n;
}

const char *pocketllm_arch_name(uint32_t i) { return i < pocketllm_arch_count() ? pl_archs[i]->name : NULL; }

const char *pocketllm_arch_summary(uint32_t i) { return i < pocketllm_arch_count() ? pl_archs[i]->summary : NULL; }
