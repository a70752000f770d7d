/*
 * chat_tools_api.c -- tool calling in the C ABI: what a chat template says
 * about its models (think blocks, the tool-call format), the grammar that
 * forces a call, and the parser of replies into content and calls -- the
 * chat_tools module behind JSON text in and out, so callers (the server,
 * bindings) need no JSON library of ours.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/error.h"
#include "chat/chat_template.h"
#include "chat/chat_tools.h"
#include "pocketllm.h"

void pocketllm_free(void *p) { free(p); }

void pocketllm_chat_template_caps(const pocketllm_chat_template *t, pocketllm_chat_caps *out) {
    if (!out) return;
    memset(out, 0, sizeof *out);
    if (!t) {
        out->tool_family = "none";
        return;
    }
    out->think_tags = t->think_tags;
    out->tool_format = t->tool_format == PL_TOOLS_NONE          ? POCKETLLM_TOOLS_NONE
                       : t->tool_format == PL_TOOLS_UNSUPPORTED ? POCKETLLM_TOOLS_UNSUPPORTED
                                                                : POCKETLLM_TOOLS_SUPPORTED;
    out->tool_family = t->tool_family ? t->tool_family : pl_tools_format_name((pl_tool_format)t->tool_format);
    out->lists_tools = t->lists_tools;
    out->trigger = pl_tools_trigger((pl_tool_format)t->tool_format);
}

/* The tools array of a request, parsed; NULL with the error set. */
static cJSON *parse_tools(const char *json, size_t len) {
    cJSON *j = json ? cJSON_ParseWithLength(json, len) : NULL;
    if (!j) {
        pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "the tools are not valid JSON");
        return NULL;
    }
    if (!cJSON_IsArray(j)) {
        cJSON_Delete(j);
        pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "the tools must be a JSON array");
        return NULL;
    }
    return j;
}

static pocketllm_status need_format(const pocketllm_chat_template *t) {
    if (!t) return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "the model has no chat template, so no tool-call format");
    if (t->tool_format == PL_TOOLS_NONE)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "the chat template declares no tools, so no tool-call format");
    if (t->tool_format == PL_TOOLS_UNSUPPORTED)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "the chat template's tool-call format (%s) is not supported",
                       t->tool_family ? t->tool_family : "unknown");
    return POCKETLLM_OK;
}

pocketllm_status pocketllm_tools_grammar(const pocketllm_chat_template *t, const char *tools_json, size_t len,
                                         const char *only_name, int flags, char **gbnf) {
    if (!gbnf) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "tools_grammar: no output pointer");
    *gbnf = NULL;
    pocketllm_status st = need_format(t);
    if (st) return st;
    cJSON *tools = parse_tools(tools_json, len);
    if (!tools) return POCKETLLM_ERR_INVALID_ARGUMENT;
    char err[320];
    *gbnf = pl_tools_grammar((pl_tool_format)t->tool_format, tools, only_name, (flags & POCKETLLM_TOOLS_PARALLEL) != 0,
                             (flags & POCKETLLM_TOOLS_FOR_AUTO) != 0, err, sizeof err);
    cJSON_Delete(tools);
    if (!*gbnf) return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "%s", err);
    return POCKETLLM_OK;
}

struct pocketllm_tool_parser {
    pl_tool_parser *p;
    cJSON *tools; /* read by p during the parse */
    pocketllm_tool_event_fn fn;
    void *user;
};

pocketllm_status pocketllm_tool_parser_new(const pocketllm_chat_template *t, const char *tools_json, size_t len,
                                           uint64_t id_seed, pocketllm_tool_parser **out) {
    if (!out) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "tool_parser_new: no output pointer");
    *out = NULL;
    pocketllm_status st = need_format(t);
    if (st) return st;
    pocketllm_tool_parser *tp = calloc(1, sizeof *tp);
    if (!tp) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    if (tools_json && !(tp->tools = parse_tools(tools_json, len))) {
        free(tp);
        return POCKETLLM_ERR_INVALID_ARGUMENT;
    }
    tp->p = pl_tool_parser_new((pl_tool_format)t->tool_format, tp->tools, id_seed);
    if (!tp->p) {
        pocketllm_tool_parser_free(tp);
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    }
    *out = tp;
    return POCKETLLM_OK;
}

static void relay(void *user, const pl_tool_event *ev) {
    const pocketllm_tool_parser *tp = user;
    const pocketllm_tool_event e = {
        .kind = ev->kind == PL_TEV_CONTENT ? POCKETLLM_TOOL_CONTENT
                : ev->kind == PL_TEV_CALL_START ? POCKETLLM_TOOL_CALL_START
                                                : POCKETLLM_TOOL_ARGS,
        .index = ev->index,
        .text = ev->text,
        .len = ev->len,
        .name = ev->name,
        .id = ev->id,
    };
    tp->fn(tp->user, &e);
}

void pocketllm_tool_parser_feed(pocketllm_tool_parser *tp, const char *text, size_t len, pocketllm_tool_event_fn fn,
                                void *user) {
    if (!tp || (!text && len)) return;
    tp->fn = fn, tp->user = user;
    pl_tool_parser_feed(tp->p, text ? text : "", len, fn ? relay : NULL, tp);
}

int pocketllm_tool_parser_finish(pocketllm_tool_parser *tp, pocketllm_tool_event_fn fn, void *user) {
    if (!tp) return 0;
    tp->fn = fn, tp->user = user;
    return pl_tool_parser_finish(tp->p, fn ? relay : NULL, tp);
}

int pocketllm_tool_parser_n_calls(const pocketllm_tool_parser *tp) { return tp ? pl_tool_parser_ncalls(tp->p) : 0; }

void pocketllm_tool_parser_call(const pocketllm_tool_parser *tp, int i, const char **name, const char **id,
                                const char **arguments) {
    const char *n = NULL, *d = NULL, *a = NULL;
    if (tp && i >= 0 && i < pl_tool_parser_ncalls(tp->p)) pl_tool_parser_call(tp->p, i, &n, &d, &a);
    if (name) *name = n;
    if (id) *id = d;
    if (arguments) *arguments = a;
}

const char *pocketllm_tool_parser_content(const pocketllm_tool_parser *tp) {
    return tp ? pl_tool_parser_content(tp->p) : NULL;
}

const char *pocketllm_tool_parser_error(const pocketllm_tool_parser *tp) { return tp ? pl_tool_parser_error(tp->p) : NULL; }

const char *pocketllm_tool_parser_unsent(const pocketllm_tool_parser *tp, size_t *len) {
    if (!tp) {
        if (len) *len = 0;
        return "";
    }
    return pl_tool_parser_unsent(tp->p, len);
}

void pocketllm_tool_parser_free(pocketllm_tool_parser *tp) {
    if (!tp) return;
    pl_tool_parser_free(tp->p);
    cJSON_Delete(tp->tools);
    free(tp);
}
