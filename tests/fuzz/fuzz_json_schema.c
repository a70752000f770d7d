/*
 * fuzz_json_schema.c -- libFuzzer target for the JSON-schema compiler: the
 * input is parsed as JSON and compiled; a schema it accepts must give a
 * grammar that the GBNF parser accepts (a compiled schema the engine could
 * not load would be a 500 in the server) -- or, for an unsatisfiable
 * schema, one the parser refuses as matching nothing, and that grammar then reads a
 * little of the input as text.  Seeds: tests/grammar/schemas and
 * tests/grammar/unsupported (seeds/fuzz_json_schema.sh).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "grammar/gbnf.h"
#include "grammar/grammar_match.h"
#include "grammar/json_schema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    cJSON *j = cJSON_ParseWithLength((const char *)data, size);
    if (!j) return 0;
    char err[320];
    char *gbnf = pl_schema_to_gbnf(j, size % 2 ? "p-" : "", err, sizeof err);
    cJSON_Delete(j);
    if (!gbnf) return 0;
    pl_gbnf g;
    if (!pl_gbnf_parse(gbnf, size % 2 ? "p-root" : "root", &g, err, sizeof err)) {
        /* a compiled schema always parses; only an unsatisfiable one (a
         * required recursion without end) may match nothing */
        if (!strstr(err, "matches nothing")) abort();
        free(gbnf);
        return 0;
    }
    pl_gmatch *m = pl_gmatch_new(&g);
    if (m) {
        uint32_t s = pl_gmatch_start(m);
        for (size_t i = 0; i < size && i < 256 && s != PL_GM_DEAD; i++) s = pl_gmatch_step(m, s, data[i]);
    }
    pl_gmatch_free(m);
    pl_gbnf_free(&g);
    free(gbnf);
    return 0;
}
