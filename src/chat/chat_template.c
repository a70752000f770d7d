/*
 * chat_template.c -- the public chat-template API: parse a template once,
 * render conversations with the variables Hugging Face's
 * apply_chat_template passes (messages, tools -- None when absent --,
 * documents=None, add_generation_prompt, the special tokens, and
 * enable_thinking only when the caller sets it), from structs or JSON.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "chat/chat_template.h"
#include "chat/chat_tools.h"
#include "chat/jinja_internal.h"

pocketllm_chat_options pocketllm_chat_default_options(void) {
    pocketllm_chat_options o;
    memset(&o, 0, sizeof o);
    o.enable_thinking = -1;
    o.now = POCKETLLM_CHAT_NOW_CLOCK;
    return o;
}

static bool needs_text_arguments(const pocketllm_chat_template *t);

pocketllm_status pocketllm_chat_template_new(const char *source, size_t len, pocketllm_chat_template **out) {
    if (!out) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "chat template: no output handle");
    *out = NULL;
    if (!source && len) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "chat template: no source");
    pocketllm_chat_template *t = calloc(1, sizeof *t);
    if (!t) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "chat template: out of memory");
    pocketllm_status st = pl_jinja_parse(source ? source : "", len, &t->tmpl);
    if (st != POCKETLLM_OK) {
        free(t);
        return st;
    }
    t->think_tags = source && memmem(source, len, "<think>", 7) && memmem(source, len, "</think>", 8);
    /* the tool-call format is read from the source text (a NUL-terminated copy) */
    char *src = malloc(len + 1);
    if (!src) {
        pocketllm_chat_template_free(t);
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "chat template: out of memory");
    }
    if (len) memcpy(src, source, len);
    src[len] = 0;
    t->tool_format = (int)pl_tools_detect(src, &t->tool_family);
    t->lists_tools = pl_tools_template_lists_tools(src);
    free(src);
    t->args_as_text = t->tool_format > PL_TOOLS_UNSUPPORTED && needs_text_arguments(t);
    *out = t;
    return POCKETLLM_OK;
}

void pocketllm_chat_template_free(pocketllm_chat_template *t) {
    if (!t) return;
    pl_jinja_template_free(t->tmpl);
    free(t);
}

void pocketllm_chat_free(char *text) { free(text); }

/* ---- building the variables --------------------------------------- */

typedef struct build_args {
    const pocketllm_chat_message *msgs;
    size_t n;
    const char *messages_json;
    const pocketllm_chat_options *opt;
} build_args;

static pl_jv text_value(pl_jx *x, const char *s, const char *what) {
    size_t len = strlen(s), bad;
    if (!pl_utf8_valid(s, len, &bad)) pl_jx_fail(x, "%s: invalid UTF-8 at byte %zu", what, bad);
    return pl_jv_str(x, s, len);
}

static void build_vars(pl_jinja_ctx *x, void *user) {
    const build_args *b = user;
    const pocketllm_chat_options *o = b->opt;
    pl_jv msgs;
    if (b->messages_json) {
        msgs = pl_json_parse(x, b->messages_json, strlen(b->messages_json), "messages");
        if (msgs.kind != JV_LIST) pl_jx_fail(x, "messages: expected a JSON array of message objects");
    } else {
        msgs = pl_jv_list(x, b->n);
        for (size_t i = 0; i < b->n; i++) {
            const pocketllm_chat_message *m = &b->msgs[i];
            if (!m->role) pl_jx_fail(x, "message %zu: no role", i);
            pl_jv d = pl_jv_dict(x);
            pl_jv_dict_set_cstr(x, d, "role", text_value(x, m->role, "role"));
            pl_jv_dict_set_cstr(x, d, "content", m->content ? text_value(x, m->content, "content") : pl_jv_none_v);
            if (m->reasoning_content)
                pl_jv_dict_set_cstr(x, d, "reasoning_content", text_value(x, m->reasoning_content, "reasoning_content"));
            if (m->tool_calls_json) {
                pl_jv tc = pl_json_parse(x, m->tool_calls_json, strlen(m->tool_calls_json), "tool_calls");
                if (tc.kind != JV_LIST) pl_jx_fail(x, "message %zu: tool_calls must be a JSON array", i);
                pl_jv_dict_set_cstr(x, d, "tool_calls", tc);
            }
            if (m->tool_call_id) pl_jv_dict_set_cstr(x, d, "tool_call_id", text_value(x, m->tool_call_id, "tool_call_id"));
            if (m->name) pl_jv_dict_set_cstr(x, d, "name", text_value(x, m->name, "name"));
            pl_jv_list_push(x, msgs, d);
        }
    }
    pl_jx_set_global(x, "messages", msgs);
    pl_jv tools = pl_jv_none_v;
    if (o->tools_json) {
        tools = pl_json_parse(x, o->tools_json, strlen(o->tools_json), "tools");
        if (tools.kind != JV_LIST) pl_jx_fail(x, "tools: expected a JSON array");
    }
    pl_jx_set_global(x, "tools", tools);
    pl_jx_set_global(x, "documents", pl_jv_none_v);
    pl_jx_set_global(x, "add_generation_prompt", pl_jv_bool(o->add_generation_prompt != 0));
    if (o->bos_token) pl_jx_set_global(x, "bos_token", text_value(x, o->bos_token, "bos_token"));
    if (o->eos_token) pl_jx_set_global(x, "eos_token", text_value(x, o->eos_token, "eos_token"));
    if (o->enable_thinking >= 0) pl_jx_set_global(x, "enable_thinking", pl_jv_bool(o->enable_thinking != 0));
    if (o->extra_json) {
        pl_jv extra = pl_json_parse(x, o->extra_json, strlen(o->extra_json), "extra variables");
        if (extra.kind != JV_DICT) pl_jx_fail(x, "extra variables: expected a JSON object");
        for (size_t i = 0; i < extra.v.d->n; i++)
            pl_jx_set_global(x, extra.v.d->keys[i].v.s->s, extra.v.d->vals[i]);
    }
}

static pocketllm_status render(const pocketllm_chat_template *t, build_args *b, char **out, size_t *len) {
    pocketllm_chat_options defaults = pocketllm_chat_default_options();
    if (!b->opt) b->opt = &defaults;
    pl_jinja_limits lim = pl_jinja_default_limits();
    pl_jinja_ctx *x = pl_jinja_ctx_new(&lim);
    if (!x) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "chat template: out of memory");
    if (b->opt->now != POCKETLLM_CHAT_NOW_CLOCK) pl_jinja_ctx_set_now(x, b->opt->now);
    pocketllm_status st = pl_jinja_build(x, build_vars, b);
    size_t n = 0;
    if (st == POCKETLLM_OK) st = pl_jinja_render(x, t->tmpl, out, &n);
    pl_jinja_ctx_free(x);
    if (len) *len = n;
    return st;
}

pocketllm_status pocketllm_chat_render(const pocketllm_chat_template *t, const pocketllm_chat_message *msgs, size_t n,
                                       const pocketllm_chat_options *opt, char **out, size_t *len) {
    if (!t || !out || (n && !msgs)) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "chat render: missing argument");
    *out = NULL;
    if (len) *len = 0;
    build_args b = {msgs, n, NULL, opt};
    return render(t, &b, out, len);
}

pocketllm_status pocketllm_chat_render_json(const pocketllm_chat_template *t, const char *messages_json,
                                            const pocketllm_chat_options *opt, char **out, size_t *len) {
    if (!t || !out || !messages_json) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "chat render: missing argument");
    *out = NULL;
    if (len) *len = 0;
    build_args b = {NULL, 0, messages_json, opt};
    return render(t, &b, out, len);
}

/* Whether the template renders a call only when its arguments are JSON
 * text: a conversation with one call fails with the arguments as an object
 * and renders with them as text (as llama.cpp's template probe decides the
 * other way round).  Rendering itself stays jinja2's: the caller passes
 * the arguments in the form this says. */
static bool needs_text_arguments(const pocketllm_chat_template *t) {
    static const char *const conv[2] = {
        "[{\"role\": \"user\", \"content\": \"x\"}, {\"role\": \"assistant\", \"content\": \"\", \"tool_calls\": "
        "[{\"id\": \"call_1\", \"type\": \"function\", \"function\": {\"name\": \"f\", \"arguments\": {\"a\": 1}}}]}]",
        "[{\"role\": \"user\", \"content\": \"x\"}, {\"role\": \"assistant\", \"content\": \"\", \"tool_calls\": "
        "[{\"id\": \"call_1\", \"type\": \"function\", \"function\": {\"name\": \"f\", \"arguments\": \"{\\\"a\\\": 1}\"}}]}]",
    };
    bool ok[2];
    pocketllm_chat_options o = pocketllm_chat_default_options();
    o.now = 0;
    o.bos_token = o.eos_token = "";
    for (int i = 0; i < 2; i++) {
        char *text = NULL;
        build_args b = {NULL, 0, conv[i], &o};
        ok[i] = render(t, &b, &text, NULL) == POCKETLLM_OK;
        free(text);
    }
    pl_error_clear();
    return !ok[0] && ok[1];
}

int pocketllm_chat_template_arguments_as_text(const pocketllm_chat_template *t) { return t && t->args_as_text; }
