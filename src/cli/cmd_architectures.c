/*
 * cmd_architectures.c -- `pocketllm architectures`: the model architectures
 * (GGUF general.architecture values) this build can run.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

int cmd_architectures(int argc, char **argv) {
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) json = true;
        else return cli_usage("architectures", "unknown argument '%s'", argv[i]);
    }
    uint32_t n = pocketllm_arch_count();
    if (json) {
        cJSON *arr = cJSON_CreateArray();
        for (uint32_t i = 0; i < n; i++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "name", pocketllm_arch_name(i));
            cJSON_AddStringToObject(o, "summary", pocketllm_arch_summary(i));
            cJSON_AddItemToArray(arr, o);
        }
        char *text = cJSON_Print(arr);
        if (text) puts(text);
        free(text);
        cJSON_Delete(arr);
        return CLI_OK;
    }
    if (n == 0) printf("no architecture can run yet in this build\n");
    for (uint32_t i = 0; i < n; i++) printf("%-10s %s\n", pocketllm_arch_name(i), pocketllm_arch_summary(i));
    return CLI_OK;
}
