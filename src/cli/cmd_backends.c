/*
 * cmd_backends.c -- `pocketllm backends`: every backend the project names,
 * implemented in this build or declared with the runtime it waits for.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

int cmd_backends(int argc, char **argv) {
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) json = true;
        else return cli_usage("backends", "unknown argument '%s'", argv[i]);
    }
    uint32_t n = pocketllm_backend_count();
    cJSON *arr = json ? cJSON_CreateArray() : NULL;
    if (!json) printf("%-8s %-12s %s\n", "backend", "state", "device class / note");
    for (uint32_t i = 0; i < n; i++) {
        pocketllm_backend_info b;
        if (pocketllm_backend_get(i, &b)) continue;
        const char *state = b.state == POCKETLLM_BACKEND_IMPLEMENTED ? "implemented" : "declared";
        if (json) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "name", b.name);
            cJSON_AddStringToObject(o, "state", state);
            cJSON_AddStringToObject(o, "device_class", b.device_class);
            cJSON_AddStringToObject(o, "note", b.note);
            cJSON_AddItemToArray(arr, o);
        } else {
            printf("%-8s %-12s %s\n", b.name, state, b.device_class);
            if (b.note && *b.note) printf("%-8s %-12s   %s\n", "", "", b.note);
        }
    }
    if (json) {
        char *text = cJSON_Print(arr);
        if (text) puts(text);
        free(text);
        cJSON_Delete(arr);
    }
    return CLI_OK;
}
