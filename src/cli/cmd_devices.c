/*
 * cmd_devices.c -- `pocketllm devices`: the CPU, memory and SIMD features
 * of this host, whether an NVIDIA driver and devices are present, and the
 * Vulkan devices the Vulkan backend sees (loader, instance version, each
 * device's memory heaps and the features the shaders use) -- or why none.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

/* Probe Vulkan (a build without the backend answers with why). */
static void vulkan_probe(pocketllm_vulkan_info *vk) {
    if (pocketllm_vulkan_probe(vk) != POCKETLLM_OK)
        snprintf(vk->reason, sizeof vk->reason, "the Vulkan probe failed: %s", pocketllm_last_error());
}

static void json_cpu(cJSON *o, const pocketllm_cpu_info *cpu) {
    cJSON *c = cJSON_AddObjectToObject(o, "cpu");
    cJSON_AddStringToObject(c, "model", cpu->model);
    cJSON_AddStringToObject(c, "arch", cpu->arch);
    cJSON_AddNumberToObject(c, "physical_cores", cpu->physical_cores);
    cJSON_AddNumberToObject(c, "logical_cpus", cpu->logical_cpus);
    cJSON_AddNumberToObject(c, "memory_bytes", (double)cpu->memory_bytes);
    cJSON_AddNumberToObject(c, "memory_available_bytes", (double)cpu->memory_available_bytes);
    cJSON *f = cJSON_AddArrayToObject(c, "features");
    for (uint32_t b = 0; b < 32; b++)
        if ((cpu->features >> b) & 1) cJSON_AddItemToArray(f, cJSON_CreateString(pocketllm_cpu_feature_name(1u << b)));
    cJSON_AddStringToObject(c, "kernel_tier", pocketllm_cpu_kernel_tier());
    cJSON_AddStringToObject(c, "kernel_tiers", pocketllm_cpu_kernel_tiers());
}

static void json_cuda(cJSON *o, const pocketllm_cuda_info *cuda) {
    cJSON *g = cJSON_AddObjectToObject(o, "cuda");
    cJSON_AddBoolToObject(g, "driver_loaded", cuda->driver_loaded);
    cJSON_AddNumberToObject(g, "driver_version", cuda->driver_version);
    cJSON_AddNumberToObject(g, "device_count", cuda->device_count);
    cJSON *ds = cJSON_AddArrayToObject(g, "devices");
    for (int i = 0; i < cuda->device_count && i < 8; i++) {
        cJSON *d = cJSON_CreateObject();
        cJSON_AddStringToObject(d, "name", cuda->devices[i].name);
        cJSON_AddNumberToObject(d, "memory_bytes", (double)cuda->devices[i].memory_bytes);
        char cc[16];
        snprintf(cc, sizeof cc, "%d.%d", cuda->devices[i].compute_major, cuda->devices[i].compute_minor);
        cJSON_AddStringToObject(d, "compute_capability", cc);
        cJSON_AddItemToArray(ds, d);
    }
    cJSON_AddStringToObject(g, "reason", cuda->reason);
}

static cJSON *json_vulkan_device(int index, const pocketllm_vulkan_device *v) {
    cJSON *d = cJSON_CreateObject();
    char id[24];
    snprintf(id, sizeof id, "vulkan:%d", index);
    cJSON_AddStringToObject(d, "id", id);
    cJSON_AddNumberToObject(d, "index", index);
    cJSON_AddStringToObject(d, "name", v->name);
    cJSON_AddStringToObject(d, "type", v->type);
    cJSON_AddStringToObject(d, "driver", v->driver);
    cJSON_AddStringToObject(d, "api_version", v->api_version);
    cJSON_AddNumberToObject(d, "vendor_id", v->vendor_id);
    cJSON_AddNumberToObject(d, "device_id", v->device_id);
    cJSON_AddNumberToObject(d, "device_local_bytes", (double)v->device_local_bytes);
    cJSON *hs = cJSON_AddArrayToObject(d, "heaps");
    for (uint32_t h = 0; h < v->n_heaps && h < 8; h++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "bytes", (double)v->heap_bytes[h]);
        cJSON_AddBoolToObject(o, "device_local", v->heap_device_local[h]);
        cJSON_AddItemToArray(hs, o);
    }
    cJSON_AddNumberToObject(d, "subgroup_size", v->subgroup_size);
    cJSON_AddBoolToObject(d, "fp16", v->fp16);
    cJSON_AddBoolToObject(d, "int8_dot", v->int8_dot);
    cJSON_AddBoolToObject(d, "int8_dot_accelerated", v->int8_dot_accelerated);
    cJSON_AddBoolToObject(d, "cooperative_matrix", v->cooperative_matrix);
    cJSON_AddBoolToObject(d, "cooperative_matrix_nv", v->cooperative_matrix_nv);
    cJSON_AddBoolToObject(d, "usable", v->usable);
    cJSON_AddStringToObject(d, "why_not", v->usable ? "" : v->why_not);
    return d;
}

static void json_vulkan(cJSON *o, const pocketllm_vulkan_info *vk) {
    cJSON *g = cJSON_AddObjectToObject(o, "vulkan");
    cJSON_AddBoolToObject(g, "loader_loaded", vk->loader_loaded);
    cJSON_AddStringToObject(g, "instance_version", vk->instance_version);
    cJSON_AddNumberToObject(g, "device_count", vk->device_count);
    cJSON *ds = cJSON_AddArrayToObject(g, "devices");
    for (int i = 0; i < vk->device_count && i < 8; i++) cJSON_AddItemToArray(ds, json_vulkan_device(i, &vk->devices[i]));
    cJSON_AddStringToObject(g, "reason", vk->reason);
}

static void print_cpu(const pocketllm_cpu_info *cpu) {
    char b1[32], b2[32];
    printf("cpu:\n");
    printf("  model:        %s (%s)\n", cpu->model, cpu->arch);
    printf("  cores:        %u physical, %u logical\n", cpu->physical_cores, cpu->logical_cpus);
    printf("  memory:       %s, %s available\n", cli_fmt_bytes(cpu->memory_bytes, b1, sizeof b1),
           cli_fmt_bytes(cpu->memory_available_bytes, b2, sizeof b2));
    printf("  features:    ");
    if (!cpu->features) printf(" (none of the SIMD sets the kernels use)");
    for (uint32_t b = 0; b < 32; b++)
        if ((cpu->features >> b) & 1) printf(" %s", pocketllm_cpu_feature_name(1u << b));
    printf("\n");
    const char *cap = getenv("POCKETLLM_CPU_TIER");
    printf("  kernels:      %s (tiers here: %s%s%s)\n", pocketllm_cpu_kernel_tier(), pocketllm_cpu_kernel_tiers(),
           cap ? "; capped by POCKETLLM_CPU_TIER=" : "", cap ? cap : "");
}

static void print_cuda(const pocketllm_cuda_info *cuda) {
    char b1[32];
    printf("cuda:\n");
    if (cuda->driver_loaded)
        printf("  driver:       loaded (CUDA %d.%d)\n", cuda->driver_version / 1000, (cuda->driver_version % 1000) / 10);
    else
        printf("  driver:       none\n");
    printf("  devices:      %d\n", cuda->device_count);
    for (int i = 0; i < cuda->device_count && i < 8; i++)
        printf("    [%d] %s, %s, compute capability %d.%d\n", i, cuda->devices[i].name,
               cli_fmt_bytes(cuda->devices[i].memory_bytes, b1, sizeof b1), cuda->devices[i].compute_major,
               cuda->devices[i].compute_minor);
    if (cuda->reason[0]) printf("  why not:      %s\n", cuda->reason);
}

static const char *yes_no(int v) { return v ? "yes" : "no"; }

static void print_vulkan_device(int i, const pocketllm_vulkan_device *v) {
    char b1[32];
    printf("  [vulkan:%d] %s\n", i, v->name);
    printf("    type:         %s\n", v->type);
    printf("    driver:       %s\n", v->driver);
    printf("    api:          Vulkan %s (vendor 0x%04x, device 0x%04x)\n", v->api_version, v->vendor_id, v->device_id);
    printf("    memory:       %s device-local (the largest device-local heap: a model's budget)\n",
           cli_fmt_bytes(v->device_local_bytes, b1, sizeof b1));
    for (uint32_t h = 0; h < v->n_heaps && h < 8; h++)
        printf("    heap %u:       %s%s\n", h, cli_fmt_bytes(v->heap_bytes[h], b1, sizeof b1),
               v->heap_device_local[h] ? ", device-local" : ", host");
    printf("    subgroup:     %u\n", v->subgroup_size);
    printf("    fp16:         %s\n", yes_no(v->fp16));
    printf("    int8 dot:     %s%s\n", yes_no(v->int8_dot),
           v->int8_dot ? (v->int8_dot_accelerated ? " (accelerated)" : " (not accelerated)") : "");
    printf("    coop. matrix: KHR %s, NV %s\n", yes_no(v->cooperative_matrix), yes_no(v->cooperative_matrix_nv));
    if (v->usable) printf("    usable:       yes\n");
    else printf("    usable:       no: %s\n", v->why_not);
}

static void print_vulkan(const pocketllm_vulkan_info *vk) {
    printf("vulkan:\n");
    if (vk->loader_loaded) printf("  loader:       loaded (instance Vulkan %s)\n", vk->instance_version);
    else printf("  loader:       none\n");
    printf("  devices:      %d\n", vk->device_count);
    for (int i = 0; i < vk->device_count && i < 8; i++) print_vulkan_device(i, &vk->devices[i]);
    if (vk->reason[0]) printf("  why not:      %s\n", vk->reason);
}

int cmd_devices(int argc, char **argv) {
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) json = true;
        else return cli_usage("devices", "unknown argument '%s'", argv[i]);
    }
    pocketllm_cpu_info cpu;
    pocketllm_cuda_info cuda;
    pocketllm_vulkan_info vk;
    pocketllm_status st = pocketllm_cpu_info_get(&cpu);
    if (st) return cli_lib_error("devices", st);
    if ((st = pocketllm_cuda_probe(&cuda))) return cli_lib_error("devices", st);
    vulkan_probe(&vk);

    if (json) {
        cJSON *o = cJSON_CreateObject();
        json_cpu(o, &cpu);
        json_cuda(o, &cuda);
        json_vulkan(o, &vk);
        char *text = cJSON_Print(o);
        if (text) puts(text);
        free(text);
        cJSON_Delete(o);
        return CLI_OK;
    }
    print_cpu(&cpu);
    print_cuda(&cuda);
    print_vulkan(&vk);
    return CLI_OK;
}
