/*
 * vk_shaders.h -- the SPIR-V of every shader, compiled from shaders/ with
 * glslc at build time and embedded by shaders/embed.cmake (no SPIR-V is
 * kept in the repository).  A shader's name is its source file's name
 * without .comp, plus the variant suffix the build gave it
 * ("matvec_q4_K", "matvec_q4_K_nodot").
 */
#ifndef PL_VK_SHADERS_H
#define PL_VK_SHADERS_H

#include <stddef.h>
#include <stdint.h>

typedef struct pl_vk_shader {
    const char *name;
    const uint32_t *code;
    size_t bytes;
} pl_vk_shader;

extern const pl_vk_shader pl_vk_shaders[];
extern const size_t pl_vk_n_shaders;

#endif
