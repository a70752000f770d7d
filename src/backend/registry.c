/*
 * registry.c -- every backend the project knows: the ones built into this
 * binary and the ones declared for device classes that cannot be built here.
 */
#include <string.h>

#include "backend/backend.h"
#include "base/error.h"

static const pl_backend pl_backends[] = {
    {"cpu", "the host CPU (x86-64: AVX2, AVX-512; AArch64: NEON, dotprod, i8mm; chosen at run time; portable C elsewhere)",
     POCKETLLM_BACKEND_IMPLEMENTED, "", pl_cpu_supports, pl_cpu_compute_default},
#ifdef PL_HAVE_VULKAN
    {"vulkan", "GPUs through Vulkan 1.2+ (NVIDIA, AMD, Intel, Adreno, Mali; Mesa's lavapipe on the CPU)",
     POCKETLLM_BACKEND_IMPLEMENTED, "", pl_vk_supports, NULL},
#else
    {"vulkan", "GPUs through Vulkan 1.2+", POCKETLLM_BACKEND_DECLARED,
     "not in this build: configured without it, or glslc and the Vulkan headers were missing", NULL, NULL},
#endif
    {"cuda", "NVIDIA GPUs", POCKETLLM_BACKEND_DECLARED,
     "waits for the CUDA kernels (CUDA toolkit 13, nvcc) -- not written yet", NULL, NULL},
    {"cann", "Huawei Ascend NPUs", POCKETLLM_BACKEND_DECLARED, "waits for the Ascend CANN toolkit", NULL, NULL},
    {"bpu", "Horizon Robotics BPU (edge boards)", POCKETLLM_BACKEND_DECLARED,
     "waits for the Horizon OpenExplorer BPU runtime", NULL, NULL},
    {"qnn", "Qualcomm Hexagon NPUs (phones)", POCKETLLM_BACKEND_DECLARED,
     "waits for the Qualcomm AI Engine Direct (QNN) SDK", NULL, NULL},
    {"metal", "Apple GPUs", POCKETLLM_BACKEND_DECLARED, "waits for the Metal framework (macOS/iOS toolchain)", NULL, NULL},
};

#define N_BACKENDS (sizeof pl_backends / sizeof pl_backends[0])

const pl_backend *pl_backend_find(const char *name) {
    if (!name) return NULL;
    for (size_t i = 0; i < N_BACKENDS; i++)
        if (strcmp(pl_backends[i].name, name) == 0) return &pl_backends[i];
    return NULL;
}

uint32_t pocketllm_backend_count(void) { return (uint32_t)N_BACKENDS; }

pocketllm_status pocketllm_backend_get(uint32_t i, pocketllm_backend_info *out) {
    if (!out || i >= N_BACKENDS) return pl_fail(POCKETLLM_ERR_NOT_FOUND, "backend index %u out of range", i);
    out->name = pl_backends[i].name;
    out->device_class = pl_backends[i].device_class;
    out->state = pl_backends[i].state;
    out->note = pl_backends[i].note;
    return POCKETLLM_OK;
}
