/*
 * fuzz_tool_parser.c -- libFuzzer target for the tool-call parser
 * (src/chat/chat_tools*.c): the first byte picks the format (and whether
 * the parser knows the tools), the second seeds the random split, the
 * rest is the model's reply.  It is parsed whole, in random pieces and
 * byte by byte; the three must agree exactly (success, content, calls and
 * their arguments: streamed deltas reassemble into the batch result), the
 * events must come in order, and nothing may crash, leak or hang.  Seeds:
 * seeds/fuzz_tool_parser.sh (one reply per format, good and botched).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "chat/chat_tools.h"

static const char TOOLS[] =
    "[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"parameters\":{\"type\":\"object\","
    "\"properties\":{\"city\":{\"type\":\"string\"},\"days\":{\"type\":\"integer\"},\"metric\":{\"type\":\"boolean\"},"
    "\"opts\":{\"type\":\"object\"},\"note\":{\"type\":[\"string\",\"null\"]}},\"required\":[\"city\"]}}},"
    "{\"type\":\"function\",\"function\":{\"name\":\"get_time\",\"parameters\":{\"type\":\"object\","
    "\"properties\":{\"tz\":{\"type\":\"string\"}}}}},{\"type\":\"function\",\"function\":{\"name\":\"f\"}}]";

typedef struct out {
    char *s;
    size_t len;
    int ncalls;
} out;

static void put(out *o, const char *s, size_t n) {
    o->s = realloc(o->s, o->len + n + 1);
    if (!o->s) abort();
    memcpy(o->s + o->len, s, n);
    o->len += n;
    o->s[o->len] = 0;
}

/* the events as one text: content and arguments in call order */
typedef struct evs {
    out content;
    out args[64];
    char names[64][65];
    int ncalls;
} evs;

static void on_event(void *user, const pl_tool_event *ev) {
    evs *e = user;
    switch (ev->kind) {
    case PL_TEV_CONTENT:
        if (!ev->len) abort(); /* no empty events */
        put(&e->content, ev->text, ev->len);
        break;
    case PL_TEV_CALL_START:
        if (ev->index != e->ncalls || !ev->name || !ev->name[0] || !ev->id || strncmp(ev->id, "call_", 5)) abort();
        if (e->ncalls < 64) snprintf(e->names[e->ncalls], sizeof e->names[0], "%s", ev->name);
        e->ncalls++;
        break;
    case PL_TEV_ARGS:
        if (ev->index != e->ncalls - 1 || !ev->len) abort();
        if (ev->index < 64) put(&e->args[ev->index], ev->text, ev->len);
        break;
    }
}

static bool blank(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!strchr(" \t\r\n", s[i])) return false;
    return true;
}

/* "ok|content|name args|..." from the parser's result */
static out result(pl_tool_parser *p, bool ok) {
    out o = {0};
    put(&o, ok ? "ok|" : "botch|", ok ? 3 : 6);
    if (!ok) return o;
    const char *c = pl_tool_parser_content(p);
    if (c) put(&o, c, strlen(c));
    for (int i = 0; i < pl_tool_parser_ncalls(p); i++) {
        const char *name, *id, *args;
        pl_tool_parser_call(p, i, &name, &id, &args);
        put(&o, "|", 1);
        put(&o, name, strlen(name));
        put(&o, " ", 1);
        put(&o, args, strlen(args));
    }
    return o;
}

/* The same from the events (checked against the parser's own on success). */
static void check_events(evs *e, const out *want, bool ok) {
    if (!ok) return;
    out o = {0};
    put(&o, "ok|", 3);
    size_t cl = e->content.len ? strlen(e->content.s) : 0; /* the result is a C string */
    if (cl && !blank(e->content.s, cl)) put(&o, e->content.s, cl);
    for (int i = 0; i < e->ncalls && i < 64; i++) {
        put(&o, "|", 1);
        put(&o, e->names[i], strlen(e->names[i]));
        put(&o, " ", 1);
        if (e->args[i].len) put(&o, e->args[i].s, e->args[i].len);
    }
    if (e->ncalls <= 64 && (o.len != want->len || memcmp(o.s, want->s, o.len))) abort();
    free(o.s);
}

static void evs_free(evs *e) {
    free(e->content.s);
    for (int i = 0; i < 64; i++) free(e->args[i].s);
}

/* one parse in pieces: step 0 = whole; else sizes from the generator */
static out parse(pl_tool_format f, const cJSON *tools, const char *text, size_t len, int mode, uint32_t rng) {
    pl_tool_parser *p = pl_tool_parser_new(f, tools, 42);
    if (!p) abort();
    evs e;
    memset(&e, 0, sizeof e);
    size_t at = 0;
    while (at < len) {
        size_t n = len - at;
        if (mode == 1) n = 1;
        if (mode == 2) {
            rng = rng * 1103515245u + 12345u;
            size_t r = (rng >> 16) % 9;
            n = r < n ? r : n; /* zero-length pieces too */
        }
        pl_tool_parser_feed(p, text + at, n, on_event, &e);
        at += n;
    }
    bool ok = pl_tool_parser_finish(p, on_event, &e);
    out o = result(p, ok);
    check_events(&e, &o, ok);
    size_t tl;
    const char *t = pl_tool_parser_text(p, &tl);
    if (tl != len || memcmp(t, text, len)) abort();
    if (!ok && !pl_tool_parser_error(p)) abort();
    size_t ul;
    const char *u = pl_tool_parser_unsent(p, &ul);
    if (ul > len || u + ul != t + tl) abort();
    if (ok) { /* the OpenAI-shaped calls: one per call, arguments as text */
        cJSON *arr = pl_tool_parser_calls_json(p);
        if (!arr || cJSON_GetArraySize(arr) != pl_tool_parser_ncalls(p)) abort();
        cJSON_Delete(arr);
    }
    evs_free(&e);
    pl_tool_parser_free(p);
    return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static cJSON *tools;
    if (!tools) tools = cJSON_Parse(TOOLS);
    if (size < 2) return 0;
    int nformats = PL_TOOLS_COUNT - PL_TOOLS_HERMES;
    pl_tool_format f = (pl_tool_format)(PL_TOOLS_HERMES + (data[0] & 0x7f) % nformats);
    const cJSON *t = data[0] & 0x80 ? NULL : tools;
    uint32_t rng = data[1];
    /* an exact-size copy, so a read past the reply is caught */
    size_t len = size - 2;
    char *text = malloc(len ? len : 1);
    if (len) memcpy(text, data + 2, len);
    out whole = parse(f, t, text, len, 0, rng);
    out bytes = parse(f, t, text, len, 1, rng);
    out pieces = parse(f, t, text, len, 2, rng);
    if (whole.len != bytes.len || memcmp(whole.s, bytes.s, whole.len)) abort();
    if (whole.len != pieces.len || memcmp(whole.s, pieces.s, whole.len)) abort();
    free(whole.s);
    free(bytes.s);
    free(pieces.s);
    free(text);
    return 0;
}
