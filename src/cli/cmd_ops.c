/*
 * cmd_ops.c -- `pocketllm ops`: the op vocabulary of the kernel ABI and,
 * per backend, which ops have kernels (per weight type for ops that take a
 * weight tensor).
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

/* Weight types for which `backend` implements `op`, as JSON or text. */
static void list_types(const char *backend, uint32_t op, cJSON *arr, FILE *f, bool *any) {
    for (uint32_t t = 0; t < pocketllm_type_count(); t++) {
        if (!pocketllm_type_block_size(t) || !pocketllm_op_supported(backend, op, t)) continue;
        if (arr) cJSON_AddItemToArray(arr, cJSON_CreateString(pocketllm_type_name(t)));
        if (f) fprintf(f, " %s", pocketllm_type_name(t));
        *any = true;
    }
}

int cmd_ops(int argc, char **argv) {
    const char *only_op = NULL, *only_dev = NULL, *err = NULL;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if (strcmp(argv[i], "--json") == 0) json = true;
        else if (cli_opt(argc, argv, &i, "--op", &v, &err)) only_op = v;
        else if (cli_opt(argc, argv, &i, "--device", &v, &err)) only_dev = v;
        else return cli_usage("ops", "unknown argument '%s'", argv[i]);
        if (err) return cli_usage("ops", "%s %s", argv[i], err);
    }
    uint32_t n_ops = pocketllm_op_count(), n_be = pocketllm_backend_count();
    if (only_op) {
        bool found = false;
        for (uint32_t o = 0; o < n_ops && !found; o++) found = strcmp(pocketllm_op_name(o), only_op) == 0;
        if (!found) return cli_usage("ops", "unknown op '%s' (run 'pocketllm ops' for the list)", only_op);
    }
    if (only_dev) {
        bool found = false;
        for (uint32_t b = 0; b < n_be && !found; b++) {
            pocketllm_backend_info bi;
            found = pocketllm_backend_get(b, &bi) == POCKETLLM_OK && strcmp(bi.name, only_dev) == 0;
        }
        if (!found) return cli_usage("ops", "unknown backend '%s' (run 'pocketllm backends')", only_dev);
    }
    cJSON *root = json ? cJSON_CreateArray() : NULL;
    for (uint32_t o = 0; o < n_ops; o++) {
        const char *name = pocketllm_op_name(o);
        if (only_op && strcmp(name, only_op) != 0) continue;
        bool weighted = pocketllm_op_has_weight(o);
        cJSON *jo = NULL, *jb = NULL;
        if (json) {
            jo = cJSON_CreateObject();
            cJSON_AddStringToObject(jo, "op", name);
            cJSON_AddStringToObject(jo, "summary", pocketllm_op_summary(o));
            cJSON_AddBoolToObject(jo, "has_weight", weighted);
            jb = cJSON_AddObjectToObject(jo, "backends");
            cJSON_AddItemToArray(root, jo);
        } else {
            printf("%s -- %s\n", name, pocketllm_op_summary(o));
        }
        for (uint32_t b = 0; b < n_be; b++) {
            pocketllm_backend_info bi;
            if (pocketllm_backend_get(b, &bi) || (only_dev && strcmp(bi.name, only_dev) != 0)) continue;
            bool any = false;
            if (json) {
                if (weighted) {
                    cJSON *arr = cJSON_AddArrayToObject(jb, bi.name);
                    list_types(bi.name, o, arr, NULL, &any);
                } else {
                    cJSON_AddBoolToObject(jb, bi.name, pocketllm_op_supported(bi.name, o, 0));
                }
                continue;
            }
            printf("  %-8s", bi.name);
            if (weighted) {
                list_types(bi.name, o, NULL, stdout, &any);
                if (!any) printf(" no kernels");
            } else {
                printf(" %s", pocketllm_op_supported(bi.name, o, 0) ? "yes" : "no kernel");
            }
            if (bi.state == POCKETLLM_BACKEND_DECLARED) printf("  (declared backend)");
            putchar('\n');
        }
    }
    if (json) {
        char *text = cJSON_Print(root);
        if (text) puts(text);
        free(text);
        cJSON_Delete(root);
    }
    return CLI_OK;
}
