/*
 * chat_tools_schema.c -- reading the OpenAI tools array the caller passes
 * (through cJSON's structs, no cJSON call: the engine does not link it):
 * the functions, a function by name, and the JSON types a parameter's
 * schema allows (which types the XML formats' raw values are read as).
 */
#include <string.h>

#include "chat/chat_tools_internal.h"

bool pl_tj_is(const cJSON *v, int type) { return v && (v->type & 0xFF) == type; }

const cJSON *pl_tj_get(const cJSON *obj, const char *key) {
    if (!pl_tj_is(obj, cJSON_Object)) return NULL;
    for (const cJSON *c = obj->child; c; c = c->next)
        if (c->string && strcmp(c->string, key) == 0) return c;
    return NULL;
}

const cJSON *pl_tools_function(const cJSON *tools, int i) {
    if (!pl_tj_is(tools, cJSON_Array)) return NULL;
    const cJSON *t = tools->child;
    for (int k = 0; t && k < i; k++) t = t->next;
    if (!t) return NULL;
    const cJSON *fn = pl_tj_get(t, "function");
    return pl_tj_is(fn, cJSON_Object) ? fn : t; /* {"type","function":{..}} or the function itself */
}

const char *pl_tools_function_name(const cJSON *fn) {
    const cJSON *n = pl_tj_get(fn, "name");
    return pl_tj_is(n, cJSON_String) ? n->valuestring : NULL;
}

const cJSON *pl_tools_find(const cJSON *tools, const char *name, size_t len) {
    const cJSON *fn;
    for (int i = 0; (fn = pl_tools_function(tools, i)) != NULL; i++) {
        const char *n = pl_tools_function_name(fn);
        if (n && strlen(n) == len && memcmp(n, name, len) == 0) return fn;
    }
    return NULL;
}

static unsigned type_bit(const char *t) {
    static const struct {
        const char *name;
        unsigned bits;
    } map[] = {{"string", PL_JT_STR},  {"number", PL_JT_NUM | PL_JT_INT}, {"integer", PL_JT_INT},
               {"boolean", PL_JT_BOOL}, {"null", PL_JT_NULL},             {"object", PL_JT_OBJ},
               {"array", PL_JT_ARR}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(t, map[i].name) == 0) return map[i].bits;
    return 0;
}

static unsigned value_type(const cJSON *v) {
    switch (v->type & 0xFF) {
    case cJSON_String: return PL_JT_STR;
    case cJSON_Number: return PL_JT_NUM | PL_JT_INT;
    case cJSON_True:
    case cJSON_False: return PL_JT_BOOL;
    case cJSON_NULL: return PL_JT_NULL;
    case cJSON_Object: return PL_JT_OBJ;
    case cJSON_Array: return PL_JT_ARR;
    default: return 0;
    }
}

unsigned pl_schema_types(const cJSON *schema) {
    const cJSON *t = pl_tj_get(schema, "type");
    if (pl_tj_is(t, cJSON_String)) return type_bit(t->valuestring);
    if (pl_tj_is(t, cJSON_Array)) {
        unsigned m = 0;
        for (const cJSON *c = t->child; c; c = c->next) {
            if (!pl_tj_is(c, cJSON_String) || !type_bit(c->valuestring)) return 0;
            m |= type_bit(c->valuestring);
        }
        return m;
    }
    const cJSON *c = pl_tj_get(schema, "const");
    if (c) return value_type(c);
    const cJSON *e = pl_tj_get(schema, "enum");
    if (pl_tj_is(e, cJSON_Array) && e->child) {
        unsigned m = 0;
        for (const cJSON *v = e->child; v; v = v->next) m |= value_type(v);
        return m;
    }
    static const char *const alts[] = {"anyOf", "oneOf"};
    for (int k = 0; k < 2; k++) {
        const cJSON *a = pl_tj_get(schema, alts[k]);
        if (!pl_tj_is(a, cJSON_Array) || !a->child) continue;
        unsigned m = 0;
        for (const cJSON *b = a->child; b; b = b->next) {
            unsigned bm = pl_schema_types(b);
            if (!bm) return 0;
            m |= bm;
        }
        return m;
    }
    return 0;
}

unsigned pl_tools_param_types(const cJSON *fn, const char *key) {
    const cJSON *props = pl_tj_get(pl_tj_get(fn, "parameters"), "properties");
    return pl_schema_types(pl_tj_get(props, key));
}

bool pl_tools_name_ok(const char *s, size_t n) {
    if (n == 0 || n > 64) return false;
    for (size_t i = 0; i < n; i++)
        if (!pl_tools_name_char((unsigned char)s[i])) return false;
    return true;
}
