/*
 * grammar_schema_api.c -- pocketllm_grammar_from_json_schema: a JSON schema
 * compiled to GBNF by grammar/json_schema.c, then parsed as any grammar.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/error.h"
#include "grammar/gbnf.h"
#include "grammar/json_schema.h"
#include "pocketllm.h"

/* The compiler's text for a schema, checked to be a grammar that matches
 * something: a schema whose required recursion never ends ({"$ref": "#"}
 * as a required property of itself) compiles, but no finite value fits. */
static char *compile_checked(const cJSON *j, char *err, size_t errlen) {
    char *text = pl_schema_to_gbnf(j, "", err, errlen);
    if (!text) return NULL;
    pl_gbnf g;
    char perr[320];
    if (pl_gbnf_parse(text, "root", &g, perr, sizeof perr)) {
        pl_gbnf_free(&g);
        return text;
    }
    if (strstr(perr, "matches nothing"))
        snprintf(err, errlen, "unsatisfiable JSON schema: no finite value matches it (a required property that "
                              "recurses without end?)");
    else
        snprintf(err, errlen, "the JSON schema compiled to a grammar that does not load (a bug): %.200s", perr);
    free(text);
    return NULL;
}

pocketllm_status pocketllm_grammar_from_json_schema(const pocketllm_model *model, const char *schema, size_t len,
                                                    pocketllm_grammar **out) {
    if (!out) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "grammar_from_json_schema: no output pointer");
    *out = NULL;
    char *text = NULL;
    if (!schema) {
        text = pl_json_object_gbnf("");
        if (!text) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    } else {
        cJSON *j = cJSON_ParseWithLength(schema, len);
        if (!j) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "the JSON schema is not valid JSON");
        char err[320];
        text = compile_checked(j, err, sizeof err);
        cJSON_Delete(j);
        if (!text) return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "%s", err);
    }
    pocketllm_status st = pocketllm_grammar_new(model, text, "root", out);
    free(text);
    return st;
}


pocketllm_status pocketllm_json_schema_to_gbnf(const char *schema, size_t len, char **gbnf) {
    if (!gbnf) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "json_schema_to_gbnf: no output pointer");
    *gbnf = NULL;
    if (!schema) {
        *gbnf = pl_json_object_gbnf("");
        return *gbnf ? POCKETLLM_OK : pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    }
    cJSON *j = cJSON_ParseWithLength(schema, len);
    if (!j) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "the JSON schema is not valid JSON");
    char err[320];
    *gbnf = compile_checked(j, err, sizeof err);
    cJSON_Delete(j);
    return *gbnf ? POCKETLLM_OK : pl_fail(POCKETLLM_ERR_UNSUPPORTED, "%s", err);
}
