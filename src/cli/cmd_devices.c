/*
 * cmd_devices.c -- `pocketllm devices`: the CPU, memory and SIMD features
 * of this host, and whether an NVIDIA driver and devices are present.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

int cmd_devices(int argc, char **argv) {
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) json = true;
        else return cli_usage("devices", "unknown argument '%s'", argv[i]);
    }
    pocketllm_cpu_info cpu;
    pocketllm_cuda_info cuda;
    pocketllm_status st = pocketllm_cpu_info_get(&cpu);
    if (st) return cli_lib_error("devices", st);
    if ((st = pocketllm_cuda_probe(&cuda))) return cli_lib_error("devices", st);

    if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON *c = cJSON_AddObjectToObject(o, "cpu");
        cJSON_AddStringToObject(c, "model", cpu.model);
        cJSON_AddStringToObject(c, "arch", cpu.arch);
        cJSON_AddNumberToObject(c, "physical_cores", cpu.physical_cores);
        cJSON_AddNumberToObject(c, "logical_cpus", cpu.logical_cpus);
        cJSON_AddNumberToObject(c, "memory_bytes", (double)cpu.memory_bytes);
        cJSON_AddNumberToObject(c, "memory_available_bytes", (double)cpu.memory_available_bytes);
        cJSON *f = cJSON_AddArrayToObject(c, "features");
        for (uint32_t b = 0; b < 32; b++)
            if ((cpu.features >> b) & 1) cJSON_AddItemToArray(f, cJSON_CreateString(pocketllm_cpu_feature_name(1u << b)));
        cJSON *g = cJSON_AddObjectToObject(o, "cuda");
        cJSON_AddBoolToObject(g, "driver_loaded", cuda.driver_loaded);
        cJSON_AddNumberToObject(g, "driver_version", cuda.driver_version);
        cJSON_AddNumberToObject(g, "device_count", cuda.device_count);
        cJSON *ds = cJSON_AddArrayToObject(g, "devices");
        for (int i = 0; i < cuda.device_count && i < 8; i++) {
            cJSON *d = cJSON_CreateObject();
            cJSON_AddStringToObject(d, "name", cuda.devices[i].name);
            cJSON_AddNumberToObject(d, "memory_bytes", (double)cuda.devices[i].memory_bytes);
            char cc[16];
            snprintf(cc, sizeof cc, "%d.%d", cuda.devices[i].compute_major, cuda.devices[i].compute_minor);
            cJSON_AddStringToObject(d, "compute_capability", cc);
            cJSON_AddItemToArray(ds, d);
        }
        cJSON_AddStringToObject(g, "reason", cuda.reason);
        char *text = cJSON_Print(o);
        if (text) puts(text);
        free(text);
        cJSON_Delete(o);
        return CLI_OK;
    }

    char b1[32], b2[32];
    printf("cpu:\n");
    printf("  model:        %s (%s)\n", cpu.model, cpu.arch);
    printf("  cores:        %u physical, %u logical\n", cpu.physical_cores, cpu.logical_cpus);
    printf("  memory:       %s, %s available\n", cli_fmt_bytes(cpu.memory_bytes, b1, sizeof b1),
           cli_fmt_bytes(cpu.memory_available_bytes, b2, sizeof b2));
    printf("  features:    ");
    if (!cpu.features) printf(" (none of the SIMD sets the kernels use)");
    for (uint32_t b = 0; b < 32; b++)
        if ((cpu.features >> b) & 1) printf(" %s", pocketllm_cpu_feature_name(1u << b));
    printf("\ncuda:\n");
    if (cuda.driver_loaded)
        printf("  driver:       loaded (CUDA %d.%d)\n", cuda.driver_version / 1000, (cuda.driver_version % 1000) / 10);
    else
        printf("  driver:       none\n");
    printf("  devices:      %d\n", cuda.device_count);
    for (int i = 0; i < cuda.device_count && i < 8; i++)
        printf("    [%d] %s, %s, compute capability %d.%d\n", i, cuda.devices[i].name,
               cli_fmt_bytes(cuda.devices[i].memory_bytes, b1, sizeof b1), cuda.devices[i].compute_major,
               cuda.devices[i].compute_minor);
    if (cuda.reason[0]) printf("  why not:      %s\n", cuda.reason);
    return CLI_OK;
}
