/*
 * vk_pipeline.c -- compute pipelines from the SPIR-V embedded at build
 * time (vk_shaders.h), made the first time an op asks for one with a given
 * set of specialization constants and kept for the device's lifetime.
 * Making them lazily matters: a software device compiles each pipeline to
 * machine code, and a run uses a handful of the hundreds in the build.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/vulkan/vk_device.h"
#include "backend/vulkan/vk_shaders.h"
#include "base/error.h"

static const pl_vk_shader *find_shader(const char *name) {
    for (size_t i = 0; i < pl_vk_n_shaders; i++)
        if (strcmp(pl_vk_shaders[i].name, name) == 0) return &pl_vk_shaders[i];
    return NULL;
}

bool pl_vk_shader_exists(const char *name) { return find_shader(name) != NULL; }

static VkPipeline make_pipeline(pl_vk_device *d, const pl_vk_shader *sh, const uint32_t *spec, uint32_t n) {
    VkShaderModuleCreateInfo mi = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                   .codeSize = sh->bytes,
                                   .pCode = sh->code};
    VkShaderModule mod;
    VkResult r = d->fn.vkCreateShaderModule(d->dev, &mi, NULL, &mod);
    if (r != VK_SUCCESS) {
        pl_vk_fail(r, "vkCreateShaderModule");
        return VK_NULL_HANDLE;
    }
    VkSpecializationMapEntry map[8];
    for (uint32_t i = 0; i < n; i++) map[i] = (VkSpecializationMapEntry){i, i * 4, 4};
    VkSpecializationInfo si = {.mapEntryCount = n, .pMapEntries = map, .dataSize = n * 4, .pData = spec};
    VkComputePipelineCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                  .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = mod,
                  .pName = "main",
                  .pSpecializationInfo = n ? &si : NULL},
        .layout = d->layout,
    };
    VkPipeline p = VK_NULL_HANDLE;
    r = d->fn.vkCreateComputePipelines(d->dev, d->cache, 1, &ci, NULL, &p);
    d->fn.vkDestroyShaderModule(d->dev, mod, NULL);
    if (r != VK_SUCCESS) {
        pl_fail(POCKETLLM_ERR_IO, "vulkan: making the pipeline of shader %s failed: %s", sh->name, pl_vk_result_name(r));
        return VK_NULL_HANDLE;
    }
    return p;
}

VkPipeline pl_vk_pipeline_get(pl_vk_device *d, const char *name, const uint32_t *spec, uint32_t n) {
    if (n > 8) {
        pl_fail(POCKETLLM_ERR_INTERNAL, "vulkan: shader %s: more than 8 specialization constants", name);
        return VK_NULL_HANDLE;
    }
    pthread_mutex_lock(&d->lock);
    for (size_t i = 0; i < d->n_pipes; i++) {
        const pl_vk_pipeline *p = &d->pipes[i];
        if (p->n_spec == n && strcmp(p->name, name) == 0 && (n == 0 || memcmp(p->spec, spec, n * 4) == 0)) {
            VkPipeline out = p->p;
            pthread_mutex_unlock(&d->lock);
            return out;
        }
    }
    pthread_mutex_unlock(&d->lock);
    const pl_vk_shader *sh = find_shader(name);
    if (!sh) {
        pl_fail(POCKETLLM_ERR_UNSUPPORTED, "vulkan: this build has no shader %s", name);
        return VK_NULL_HANDLE;
    }
    if (strlen(name) >= sizeof d->pipes[0].name) {
        pl_fail(POCKETLLM_ERR_INTERNAL, "vulkan: shader name %s is too long", name);
        return VK_NULL_HANDLE;
    }
    VkPipeline p = make_pipeline(d, sh, spec, n);
    if (!p) return VK_NULL_HANDLE;
    pthread_mutex_lock(&d->lock);
    if (d->n_pipes == d->cap_pipes) {
        size_t cap = d->cap_pipes ? 2 * d->cap_pipes : 32;
        pl_vk_pipeline *g = realloc(d->pipes, cap * sizeof *g);
        if (!g) {
            pthread_mutex_unlock(&d->lock);
            d->fn.vkDestroyPipeline(d->dev, p, NULL);
            pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
            return VK_NULL_HANDLE;
        }
        d->pipes = g;
        d->cap_pipes = cap;
    }
    pl_vk_pipeline *e = &d->pipes[d->n_pipes++];
    memset(e, 0, sizeof *e);
    snprintf(e->name, sizeof e->name, "%s", name);
    if (n) memcpy(e->spec, spec, n * 4);
    e->n_spec = n;
    e->p = p;
    pthread_mutex_unlock(&d->lock);
    return p;
}
