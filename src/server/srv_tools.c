/*
 * srv_tools.c -- the request side of tool calling: the tools array and
 * tool_choice checked, the tools handed to the chat template (which shows
 * them to the model in its own words), and tool_choice enforced by the
 * grammar of calls in the template's format:
 *   auto      the grammar waits (lazy) until the model starts a call -- the
 *             format's trigger text -- and from there holds the call to a
 *             known function with arguments valid for its schema;
 *   required  a call from the first token (after an optional think block);
 *   named     the same, to that one function;
 *   none      no tools shown, no calls parsed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "srv_request_internal.h"

/* One tool: {"type":"function","function":{"name","description","parameters","strict"}}. */
static bool check_tool(pctx *c, const cJSON *t, int i) {
    char where[48];
    snprintf(where, sizeof where, "tools[%d]", i);
    if (!cJSON_IsObject(t)) return srv_fail(c->e, 400, where, "'%s' must be an object", where);
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(t, "type");
    if (!cJSON_IsString(type) || strcmp(type->valuestring, "function"))
        return srv_fail(c->e, 400, where, "'%s.type' must be \"function\"", where);
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(t, "function");
    if (!cJSON_IsObject(f)) return srv_fail(c->e, 400, where, "'%s.function' must be an object", where);
    for (const cJSON *k = t->child; k; k = k->next)
        if (strcmp(k->string, "type") && strcmp(k->string, "function"))
            return srv_fail(c->e, 400, where, "unknown field '%s.%.40s'", where, k->string);
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(f, "name");
    if (!cJSON_IsString(name) || !*name->valuestring || strlen(name->valuestring) > 64)
        return srv_fail(c->e, 400, where, "'%s.function.name' must be a string of 1..64 characters", where);
    for (const char *p = name->valuestring; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
            return srv_fail(c->e, 400, where, "'%s.function.name' may hold only a-z, A-Z, 0-9, _ and - (as OpenAI's)", where);
    for (const cJSON *k = f->child; k; k = k->next) {
        if (!strcmp(k->string, "name")) continue;
        if (!strcmp(k->string, "description")) {
            if (!cJSON_IsString(k)) return srv_fail(c->e, 400, where, "'%s.function.description' must be a string", where);
        } else if (!strcmp(k->string, "parameters")) {
            if (!cJSON_IsObject(k)) return srv_fail(c->e, 400, where, "'%s.function.parameters' must be a JSON schema object", where);
        } else if (!strcmp(k->string, "strict")) {
            if (!cJSON_IsBool(k) && !cJSON_IsNull(k)) return srv_fail(c->e, 400, where, "'%s.function.strict' must be a boolean", where);
        } else {
            return srv_fail(c->e, 400, where, "unknown field '%s.function.%.40s'", where, k->string);
        }
    }
    /* names are unique: a call names one function */
    int j = 0;
    for (const cJSON *o = c->tools->child; o && j < i; o = o->next, j++) {
        const cJSON *of = cJSON_GetObjectItemCaseSensitive(o, "function");
        const cJSON *on = cJSON_GetObjectItemCaseSensitive(of, "name");
        if (cJSON_IsString(on) && !strcmp(on->valuestring, name->valuestring))
            return srv_fail(c->e, 400, where, "two tools are named '%.64s'", name->valuestring);
    }
    return true;
}

bool srv_tools_build(pctx *c) {
    srv_request *r = c->r;
    const char *named = NULL;
    int choice = c->tools ? SRV_TOOL_CHOICE_AUTO : SRV_TOOL_CHOICE_NONE;
    if (cJSON_IsString(c->tool_choice)) {
        const char *s = c->tool_choice->valuestring;
        choice = !strcmp(s, "none") ? SRV_TOOL_CHOICE_NONE : !strcmp(s, "auto") ? SRV_TOOL_CHOICE_AUTO : SRV_TOOL_CHOICE_REQUIRED;
    } else if (c->tool_choice) {
        choice = SRV_TOOL_CHOICE_NAMED;
        named = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c->tool_choice, "function"), "name")->valuestring;
    }
    if (!c->tools) choice = SRV_TOOL_CHOICE_NONE;
    r->tool_choice = choice;
    r->parallel_tool_calls = c->parallel_tool_calls != 0; /* OpenAI's default: true */
    if (choice == SRV_TOOL_CHOICE_NONE) return true; /* nothing shown, nothing parsed */
    if (c->m->caps.tool_format != POCKETLLM_TOOLS_SUPPORTED)
        return srv_fail(c->e, 400, "tools", "'tools': %s",
                        !c->m->tmpl ? "the model has no chat template to show tools with"
                        : c->m->caps.tool_format == POCKETLLM_TOOLS_NONE
                            ? "the model's chat template takes no tools"
                            : "the chat template's tool-call format is not supported");
    int i = 0, found = 0;
    for (const cJSON *t = c->tools->child; t; t = t->next, i++) {
        if (!check_tool(c, t, i)) return false;
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(t, "function"), "name");
        if (named && !strcmp(n->valuestring, named)) found = 1;
    }
    if (i > 128) return srv_fail(c->e, 400, "tools", "at most 128 tools");
    if (named && !found) return srv_fail(c->e, 400, "tool_choice", "'tool_choice' names '%.64s', which is not one of the tools", named);
    if (!(r->tools_json = cJSON_PrintUnformatted(c->tools))) return srv_fail(c->e, 500, NULL, "out of memory");
    char *gbnf = NULL;
    const int flags = (r->parallel_tool_calls ? POCKETLLM_TOOLS_PARALLEL : 0) |
                      (choice == SRV_TOOL_CHOICE_AUTO ? POCKETLLM_TOOLS_FOR_AUTO : 0);
    if (pocketllm_tools_grammar(c->m->tmpl, r->tools_json, strlen(r->tools_json), named, flags, &gbnf))
        return srv_fail(c->e, 400, "tools", "'tools': %s", pocketllm_last_error());
    /* compiled once the prompt is known (srv_finish_constraint) */
    c->gbnf = strdup(gbnf);
    pocketllm_free(gbnf);
    if (!c->gbnf) return srv_fail(c->e, 500, NULL, "out of memory");
    c->gbnf_param = "tools";
    if (choice == SRV_TOOL_CHOICE_AUTO && c->m->caps.trigger && !*c->m->caps.trigger) {
        /* the prompt opened the reply's first part: the grammar lets it be
         * text or calls from the first token */
        c->gbnf_think = true;
    } else if (choice == SRV_TOOL_CHOICE_AUTO) {
        /* free text until the model opens a call; the grammar's text
         * starts with the trigger */
        c->gbnf_think = false;
        c->triggers[0] = c->m->caps.trigger;
        c->n_triggers = 1;
        if (!c->triggers[0]) { /* the reply is the call (Llama 3's JSON): text that opens such an object */
            c->triggers[0] = "{\"name\"", c->triggers[1] = "{ \"name\"";
            c->n_triggers = 2;
        }
    } else {
        c->gbnf_think = true;
    }
    return true;
}
