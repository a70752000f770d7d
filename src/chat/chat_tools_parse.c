/*
 * chat_tools_parse.c -- the streaming tool-call parser's core: it keeps
 * the reply, runs the steps of chat_tools_calls.c / chat_tools_xml.c over
 * it, and handles what every format shares: content up to the trigger
 * (held back while it could still be the trigger's start), the events and
 * the results they build, call ids, botches, and finishing.  Batch parsing
 * is the same code: feed the whole reply, then finish.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chat/chat_tools_parser.h"

/* ---- small helpers ------------------------------------------------------ */

bool pl_tp_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

const char *pl_tp_trim(const char *lit, size_t *n) {
    size_t len = strlen(lit);
    while (len && pl_tp_ws(*lit)) lit++, len--;
    while (len && pl_tp_ws(lit[len - 1])) len--;
    *n = len;
    return lit;
}

bool pl_tp_skip_ws(pl_tool_parser *p) {
    while (p->pos < p->text.len && pl_tp_ws(p->text.s[p->pos])) p->pos++;
    return p->pos < p->text.len;
}

int pl_tp_expect(pl_tool_parser *p, const char *lit, bool skip_ws) {
    size_t n;
    const char *l = pl_tp_trim(lit, &n);
    size_t save = p->pos;
    if (skip_ws && !pl_tp_skip_ws(p)) return n ? -1 : 1;
    size_t avail = p->text.len - p->pos;
    size_t k = avail < n ? avail : n;
    if (memcmp(p->text.s + p->pos, l, k) != 0) {
        p->pos = save;
        return 0;
    }
    if (k < n) {
        p->pos = save;
        return -1;
    }
    p->pos += n;
    return 1;
}

size_t pl_tp_find(const pl_tool_parser *p, size_t from, const char *needle, size_t nn) {
    const char *t = p->text.s;
    size_t len = p->text.len;
    if (nn == 0) return from;
    for (size_t i = from; i + nn <= len; i++) {
        const char *c = memchr(t + i, needle[0], len - nn + 1 - i);
        if (!c) break;
        i = (size_t)(c - t);
        if (memcmp(c, needle, nn) == 0) return i;
    }
    return (size_t)-1;
}

size_t pl_tp_partial(const pl_tool_parser *p, size_t from, const char *needle, size_t nn) {
    size_t avail = p->text.len - from;
    for (size_t k = nn ? nn - 1 : 0; k > 0; k--)
        if (k <= avail && memcmp(p->text.s + p->text.len - k, needle, k) == 0) return k;
    return 0;
}

int pl_tp_botch(pl_tool_parser *p, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err, sizeof p->err, fmt, ap);
    va_end(ap);
    if (!p->err[0]) snprintf(p->err, sizeof p->err, "botched tool call");
    p->st = P_BOTCHED;
    return R_IDLE;
}

/* ---- events ------------------------------------------------------------ */

static void send(pl_tool_parser *p, const pl_tool_event *ev) {
    if (p->fn) p->fn(p->user, ev);
}

static void emit_content(pl_tool_parser *p, size_t a, size_t b) {
    if (b <= a) return;
    pl_tsb_add(&p->content, p->text.s + a, b - a);
    pl_tool_event ev = {.kind = PL_TEV_CONTENT, .index = -1, .text = p->text.s + a, .len = b - a};
    send(p, &ev);
}

static uint64_t mix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static void make_id(char out[32], uint64_t seed, int index) {
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    memcpy(out, "call_", 5);
    uint64_t h = mix64(seed ^ mix64((uint64_t)index + 1));
    for (int i = 0; i < 24; i++) {
        if (i % 8 == 0) h = mix64(h + (uint64_t)i);
        out[5 + i] = abc[h % 62];
        h /= 62;
    }
    out[29] = 0;
}

int pl_tp_name(pl_tool_parser *p, size_t *end) {
    if (!pl_tp_skip_ws(p)) return R_WAIT;
    size_t j = p->pos;
    while (j < p->text.len && pl_tools_name_char((unsigned char)p->text.s[j])) j++;
    if (j == p->text.len) return j - p->pos > 64 ? pl_tp_botch(p, "a tool call's name is too long") : R_WAIT;
    if (j == p->pos) return pl_tp_botch(p, "tool call without a function name");
    *end = j;
    return R_GO;
}

bool pl_tp_call_start(pl_tool_parser *p, size_t a, size_t b) {
    const char *name = p->text.s + a;
    size_t n = b - a;
    if (!pl_tools_name_ok(name, n)) {
        pl_tp_botch(p, "tool call with a bad function name '%.*s'", (int)(n > 64 ? 64 : n), name);
        return false;
    }
    p->fn_schema = NULL;
    if (p->tools) {
        p->fn_schema = pl_tools_find(p->tools, name, n);
        if (!p->fn_schema) {
            pl_tp_botch(p, "tool call to an unknown function '%.*s'", (int)n, name);
            return false;
        }
    }
    if (p->ncalls == p->cap) {
        int cap = p->cap ? p->cap * 2 : 4;
        pl_tcall *c = realloc(p->calls, (size_t)cap * sizeof *c);
        if (!c) {
            pl_tp_botch(p, "out of memory");
            return false;
        }
        p->calls = c;
        p->cap = cap;
    }
    pl_tcall *c = &p->calls[p->ncalls];
    memset(c, 0, sizeof *c);
    memcpy(c->name, name, n);
    make_id(c->id, p->seed, p->ncalls);
    p->ncalls++;
    p->in_call = true;
    pl_tool_event ev = {.kind = PL_TEV_CALL_START, .index = p->ncalls - 1, .name = c->name, .id = c->id};
    send(p, &ev);
    return true;
}

void pl_tp_args(pl_tool_parser *p, const char *s, size_t n) {
    if (!n || !p->in_call) return;
    pl_tcall *c = &p->calls[p->ncalls - 1];
    pl_tsb_add(&c->args, s, n);
    pl_tool_event ev = {.kind = PL_TEV_ARGS, .index = p->ncalls - 1, .text = s, .len = n};
    send(p, &ev);
}

void pl_tp_call_end(pl_tool_parser *p) {
    p->in_call = false;
    p->section_calls++;
    p->settled = p->pos;
}

void pl_tp_after_call(pl_tool_parser *p) {
    const pl_tool_spec *s = p->spec;
    p->settled = p->pos;
    if (s->shape == PL_TSHAPE_NAMED && s->call_open) p->st = P_N_CALL;
    else if (s->shape == PL_TSHAPE_XML && s->call_open) p->st = P_X_CALL;
    else if (s->close && s->shape != PL_TSHAPE_JSON) p->st = P_SECTION_CLOSE;
    else {
        p->st = P_CONTENT;
        p->after_call = true;
    }
}

void pl_tp_section(pl_tool_parser *p) {
    const pl_tool_spec *s = p->spec;
    p->section_calls = 0;
    switch (s->shape) {
    case PL_TSHAPE_JSON: {
        size_t n = strlen(s->open);
        p->st = s->list && s->open[n - 1] != '[' ? P_J_LIST_OPEN : P_J_ITEM;
        break;
    }
    case PL_TSHAPE_NAMED: p->st = s->text_name ? P_RECIPIENT : s->call_open ? P_N_CALL : P_N_NAME_OPEN; break;
    case PL_TSHAPE_XML: p->st = s->call_open ? P_X_CALL : P_X_NAME; break;
    case PL_TSHAPE_PY: p->st = P_P_NAME; break;
    }
}

/* ---- content ----------------------------------------------------------- */

/* Up to WS_DROP whitespace bytes before a call are dropped from the content
 * (a bound, so a model that writes pages of blank lines costs no rescans;
 * the batch parse drops the same bytes). */
#define WS_DROP 256

static size_t trim_ws_end(const pl_tool_parser *p, size_t from, size_t end) {
    size_t stop = end - from > WS_DROP ? end - WS_DROP : from;
    while (end > stop && pl_tp_ws(p->text.s[end - 1])) end--;
    return end;
}

static int step_content(pl_tool_parser *p) {
    size_t len = p->text.len;
    if (p->after_call) {
        if (!pl_tp_skip_ws(p)) {
            p->settled = p->pos;
            return R_IDLE;
        }
        p->after_call = false;
        p->settled = p->pos;
    }
    const char *trig = p->spec->open;
    if (!trig) { /* llama3: no trigger inside text */
        emit_content(p, p->pos, len);
        p->pos = p->settled = len;
        return R_IDLE;
    }
    size_t tn = strlen(trig);
    /* (text before cscan was searched already: no trigger starts there) */
    size_t at = pl_tp_find(p, p->pos > p->cscan ? p->pos : p->cscan, trig, tn);
    if (at != (size_t)-1) {
        size_t end = trim_ws_end(p, p->pos, at);
        emit_content(p, p->pos, end);
        p->settled = at; /* the whitespace before a call is dropped */
        p->pos = at + tn;
        pl_tp_section(p);
        return R_GO;
    }
    p->cscan = len >= tn ? len - tn + 1 : 0;
    size_t end = len;
    if (!p->final) end = trim_ws_end(p, p->pos, end - pl_tp_partial(p, p->pos, trig, tn));
    emit_content(p, p->pos, end);
    p->pos = p->settled = end;
    return R_IDLE;
}

/* llama3: the reply is a call when it starts with '{' (or <|python_tag|>) */
static int step_l3_start(pl_tool_parser *p) {
    static const char tag[] = "<|python_tag|>";
    size_t save = p->settled; /* 0: the leading whitespace is passed over, not sent */
    if (!pl_tp_skip_ws(p)) {
        if (!p->final) return R_IDLE;
        p->pos = save;
        p->st = P_TEXT_ONLY;
        return R_GO;
    }
    if (p->text.s[p->pos] == '{') {
        p->settled = p->pos;
        p->st = P_J_ITEM;
        return R_GO;
    }
    int m = pl_tp_expect(p, tag, false);
    if (m == 1) {
        p->settled = p->pos - (sizeof tag - 1);
        p->st = P_J_ITEM;
        return R_GO;
    }
    if (m < 0 && !p->final) return R_IDLE;
    p->pos = save;
    p->st = P_TEXT_ONLY;
    return R_GO;
}

static int step_l3_after(pl_tool_parser *p) {
    if (!pl_tp_skip_ws(p)) return R_IDLE;
    char c = p->text.s[p->pos];
    if (c == ';') {
        p->pos++;
        p->st = P_J_ITEM;
        return R_GO;
    }
    if (c == '{') {
        p->st = P_J_ITEM;
        return R_GO;
    }
    p->settled = p->pos;
    p->st = P_CONTENT;
    p->after_call = true;
    return R_GO;
}

static int step_section_close(pl_tool_parser *p) {
    int m = pl_tp_expect(p, p->spec->close, true);
    if (m < 0) return R_WAIT;
    if (m == 0) return pl_tp_botch(p, "tool call not closed by %s", p->spec->close);
    p->settled = p->pos;
    p->st = P_CONTENT;
    p->after_call = true;
    return R_GO;
}

/* Functionary v3.2: after ">>>", "all" and a newline start text (the rest
 * up to the next ">>>" is content); any other word is a call's name. */
static int step_recipient(pl_tool_parser *p) {
    const char *w = p->spec->text_name;
    const size_t n = strlen(w), avail = p->text.len - p->pos;
    const char *t = p->text.s + p->pos;
    const size_t k = avail < n ? avail : n;
    if (memcmp(t, w, k) == 0) {
        if (avail <= n && !p->final) return R_IDLE; /* "al": wait */
        /* "all\n", "all" at the end, or an empty reply (but a ">>>" that
         * ends the reply opened a part it never wrote: botched) */
        if ((avail == 0 && p->pos == 0) || avail == n || (avail > n && pl_tp_ws(t[n]))) {
            p->pos += avail <= n ? avail : n + 1;
            p->settled = p->pos;
            p->st = P_CONTENT;
            return R_GO;
        }
    }
    p->st = P_N_NAME;
    return R_GO;
}

static int step(pl_tool_parser *p) {
    switch (p->st) {
    case P_CONTENT: return step_content(p);
    case P_L3_START: return step_l3_start(p);
    case P_TEXT_ONLY:
        emit_content(p, p->pos, p->text.len);
        p->pos = p->settled = p->text.len;
        return R_IDLE;
    case P_L3_AFTER: return step_l3_after(p);
    case P_SECTION_CLOSE: return step_section_close(p);
    case P_RECIPIENT: return step_recipient(p);
    case P_BOTCHED: return R_IDLE;
    default: break;
    }
    switch (p->spec->shape) {
    case PL_TSHAPE_JSON: return pl_tp_step_json(p);
    case PL_TSHAPE_NAMED: return pl_tp_step_named(p);
    case PL_TSHAPE_PY: return pl_tp_step_py(p);
    default: return pl_tp_step_xml(p);
    }
}

static void run(pl_tool_parser *p) {
    for (;;) {
        if (p->text.oom && p->st != P_BOTCHED) pl_tp_botch(p, "out of memory");
        int r = step(p);
        if (r == R_GO) continue;
        if (r == R_WAIT && p->final && p->st != P_BOTCHED) {
            pl_tp_botch(p, "unterminated tool call");
            continue;
        }
        break;
    }
}

/* ---- the API ------------------------------------------------------------ */

pl_tool_parser *pl_tool_parser_new(pl_tool_format f, const cJSON *tools, uint64_t id_seed) {
    const pl_tool_spec *s = pl_tool_spec_get(f);
    if (!s) return NULL;
    pl_tool_parser *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->spec = s;
    p->tools = tools;
    p->seed = id_seed;
    p->st = s->prompt_opens ? P_RECIPIENT : s->open ? P_CONTENT : P_L3_START;
    if (!pl_tsb_str(&p->text)) {
        free(p);
        return NULL;
    }
    return p;
}

void pl_tool_parser_feed(pl_tool_parser *p, const char *text, size_t len, pl_tool_event_fn fn, void *user) {
    if (!p || p->final) return;
    pl_tsb_add(&p->text, text, len);
    p->fn = fn;
    p->user = user;
    run(p);
    p->fn = NULL;
}

bool pl_tool_parser_finish(pl_tool_parser *p, pl_tool_event_fn fn, void *user) {
    if (!p) return false;
    if (!p->final) {
        p->final = true;
        p->fn = fn;
        p->user = user;
        run(p);
        p->fn = NULL;
    }
    return p->st != P_BOTCHED;
}

void pl_tool_parser_free(pl_tool_parser *p) {
    if (!p) return;
    for (int i = 0; i < p->ncalls; i++) pl_tsb_free(&p->calls[i].args);
    free(p->calls);
    pl_tsb_free(&p->text);
    pl_tsb_free(&p->content);
    pl_tsb_free(&p->sargs);
    free(p);
}

int pl_tool_parser_ncalls(const pl_tool_parser *p) { return p ? p->ncalls : 0; }

void pl_tool_parser_call(const pl_tool_parser *p, int i, const char **name, const char **id, const char **arguments) {
    pl_tcall *c = &p->calls[i];
    if (name) *name = c->name;
    if (id) *id = c->id;
    if (arguments) *arguments = c->args.s ? c->args.s : "";
}

const char *pl_tool_parser_content(const pl_tool_parser *p) {
    const pl_tsb *c = &p->content; /* (as a C string: up to a NUL byte the model wrote) */
    for (size_t i = 0; i < c->len && c->s[i]; i++)
        if (!pl_tp_ws(c->s[i])) return c->s;
    return NULL;
}

const char *pl_tool_parser_error(const pl_tool_parser *p) { return p->st == P_BOTCHED ? p->err : NULL; }

const char *pl_tool_parser_text(const pl_tool_parser *p, size_t *len) {
    if (len) *len = p->text.len;
    return p->text.s;
}

const char *pl_tool_parser_unsent(const pl_tool_parser *p, size_t *len) {
    size_t from = p->settled < p->text.len ? p->settled : p->text.len;
    if (len) *len = p->text.len - from;
    return p->text.s + from;
}
