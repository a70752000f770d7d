/*
 * chat_tools_calls.c -- the tool-call parser's steps for the formats whose
 * arguments are the model's own JSON: call objects ({"name": f,
 * "arguments": {..}}, one per section, in a [list] or in a row) and named
 * calls (the name as text, then the arguments object).  The arguments are
 * passed on as the model wrote them, fragment by fragment, while a
 * byte-at-a-time validator finds where they end.
 */
#include <string.h>

#include "chat/chat_tools_parser.h"

#define SKIP_WINDOW 64 /* bytes an id or index may take before a marker */

int pl_tp_scan_args(pl_tool_parser *p, bool is_args) {
    size_t i = p->pos, run = p->pos, len = p->text.len;
    bool done = false;
    while (i < len && !done) {
        pl_jscan_result r = pl_jscan_byte(&p->js, (unsigned char)p->text.s[i]);
        if (r == PL_JS_ERROR) {
            if (is_args) pl_tp_args(p, p->text.s + run, i - run);
            return pl_tp_botch(p, "invalid JSON in a tool call");
        }
        if (r != PL_JS_DONE_BEFORE) i++;
        done = r == PL_JS_DONE || r == PL_JS_DONE_BEFORE;
    }
    if (is_args) pl_tp_args(p, p->text.s + run, i - run);
    p->pos = i;
    if (!done) return R_WAIT;
    if (is_args) p->args_end = i;
    return R_GO;
}

int pl_tp_skip_to(pl_tool_parser *p, const char *lit) {
    size_t n;
    const char *l = pl_tp_trim(lit, &n);
    size_t at = pl_tp_find(p, p->pos, l, n);
    if (at != (size_t)-1 && at - p->pos <= SKIP_WINDOW) {
        p->pos = at + n;
        return R_GO;
    }
    if (p->text.len - p->pos >= SKIP_WINDOW + n) return pl_tp_botch(p, "tool call without %.*s", (int)n, l);
    return R_WAIT;
}

int pl_tp_next_in_section(pl_tool_parser *p, bool *call) {
    const pl_tool_spec *s = p->spec;
    *call = false;
    if (!pl_tp_skip_ws(p)) return p->final && p->section_calls > 0 && !s->one_per_section ? R_IDLE : R_WAIT;
    int m = pl_tp_expect(p, s->call_open, false);
    if (m < 0) return R_WAIT;
    if (m > 0) {
        *call = true;
        return R_GO;
    }
    if (p->section_calls == 0 || !s->close) return pl_tp_botch(p, "expected %s", s->call_open);
    m = pl_tp_expect(p, s->close, false);
    if (m < 0) return R_WAIT;
    if (m == 0) return pl_tp_botch(p, "tool calls not closed by %s", s->close);
    p->settled = p->pos;
    p->st = P_CONTENT;
    p->after_call = true;
    return R_GO;
}

/* ---- call objects ------------------------------------------------------ */

static int item_end(pl_tool_parser *p) {
    const pl_tool_spec *s = p->spec;
    p->pos++; /* '}' */
    if (!p->have_name) return pl_tp_botch(p, "tool call object without a name");
    if (!p->have_args) pl_tp_args(p, "{}", 2);
    pl_tp_call_end(p);
    if (!s->open) p->st = P_L3_AFTER;
    else if (s->list) p->st = P_J_LIST_NEXT;
    else if (s->multi) p->st = P_J_MULTI_NEXT;
    else p->st = P_SECTION_CLOSE;
    return R_GO;
}

/* The end of a JSON string starting at pos (its closing quote), or -1. */
static size_t string_end(const pl_tool_parser *p, bool *escaped) {
    *escaped = false;
    for (size_t i = p->pos; i < p->text.len; i++) {
        char c = p->text.s[i];
        if (c == '"') return i;
        if (c == '\\') {
            *escaped = true;
            i++;
        }
    }
    return (size_t)-1;
}

static int key_role(const char *k, size_t n) {
    static const char *const names[] = {"name", "tool_name"}, *const args[] = {"arguments", "parameters"};
    for (int i = 0; i < 2; i++) {
        if (strlen(names[i]) == n && memcmp(k, names[i], n) == 0) return KEY_NAME;
        if (strlen(args[i]) == n && memcmp(k, args[i], n) == 0) return KEY_ARGS;
    }
    return KEY_OTHER;
}

int pl_tp_step_json(pl_tool_parser *p) {
    const char *t = p->text.s;
    switch (p->st) {
    case P_J_LIST_OPEN: {
        int m = pl_tp_expect(p, "[", true);
        if (m < 0) return R_WAIT;
        if (m == 0) return pl_tp_botch(p, "tool calls without their [ list ]");
        p->st = P_J_ITEM;
        return R_GO;
    }
    case P_J_ITEM:
        if (!pl_tp_skip_ws(p)) return R_WAIT;
        if (t[p->pos] != '{') return pl_tp_botch(p, "a tool call is not a JSON object");
        p->pos++;
        p->have_name = p->have_args = p->in_call = p->args_str = false;
        p->nkeys = 0;
        p->st = P_J_KEY;
        return R_GO;
    case P_J_KEY:
        if (!pl_tp_skip_ws(p)) return R_WAIT;
        if (t[p->pos] == '}' && p->nkeys == 0) return item_end(p);
        if (t[p->pos] != '"') return pl_tp_botch(p, "invalid JSON in a tool call");
        p->pos++;
        p->st = P_J_KEYSTR;
        return R_GO;
    case P_J_KEYSTR: {
        bool esc;
        size_t q = string_end(p, &esc);
        /* the same limit whole or streamed: a reply must not parse
         * differently depending on how it was cut into pieces */
        const size_t klen = q == (size_t)-1 ? p->text.len - p->pos : q - p->pos;
        if (klen > 256) return pl_tp_botch(p, "a key in a tool call is too long");
        if (q == (size_t)-1) return R_WAIT;
        if (p->spec->name_is_key) {
            /* {"<name>": {arguments}}: the key opens the call, one per object */
            if (p->nkeys) return pl_tp_botch(p, "a tool call object with more than its function's key");
            if (esc) return pl_tp_botch(p, "tool call with a bad function name");
            if (!pl_tp_call_start(p, p->pos, q)) return R_IDLE;
            p->have_name = true;
            p->key_role = KEY_ARGS;
        } else {
            p->key_role = esc ? KEY_OTHER : key_role(t + p->pos, q - p->pos);
        }
        p->nkeys++;
        p->pos = q + 1;
        p->st = P_J_COLON;
        return R_GO;
    }
    case P_J_COLON: {
        int m = pl_tp_expect(p, ":", true);
        if (m < 0) return R_WAIT;
        if (m == 0) return pl_tp_botch(p, "invalid JSON in a tool call");
        p->st = P_J_VALUE;
        return R_GO;
    }
    case P_J_VALUE:
        if (!pl_tp_skip_ws(p)) return R_WAIT;
        if (p->key_role == KEY_NAME) {
            if (p->have_name) return pl_tp_botch(p, "a tool call with two names");
            if (t[p->pos] != '"') return pl_tp_botch(p, "a tool call's name is not a string");
            p->pos++;
            p->st = P_J_NAMESTR;
            return R_GO;
        }
        if (p->key_role == KEY_ARGS) {
            if (p->have_args) return pl_tp_botch(p, "a tool call with two argument objects");
            /* an object, or (as OpenAI writes them) a string holding one */
            if (t[p->pos] != '{' && t[p->pos] != '"')
                return pl_tp_botch(p, "a tool call's arguments are not a JSON object");
            p->args_str = t[p->pos] == '"';
            p->args_start = p->pos;
        }
        pl_jscan_init(&p->js);
        p->st = P_J_SCAN;
        return R_GO;
    case P_J_NAMESTR: {
        bool esc;
        size_t q = string_end(p, &esc);
        if (q == (size_t)-1) {
            if (p->text.len - p->pos > 64) return pl_tp_botch(p, "a tool call's name is too long");
            return R_WAIT;
        }
        if (esc) return pl_tp_botch(p, "tool call with a bad function name");
        if (!pl_tp_call_start(p, p->pos, q)) return R_IDLE;
        p->have_name = true;
        if (p->have_args && p->args_str) pl_tp_args(p, p->sargs.s, p->sargs.len);
        else if (p->have_args) pl_tp_args(p, t + p->args_start, p->args_end - p->args_start);
        p->pos = q + 1;
        p->st = P_J_NEXTKEY;
        return R_GO;
    }
    case P_J_SCAN: {
        bool args = p->key_role == KEY_ARGS;
        int r = pl_tp_scan_args(p, args && p->in_call && !p->args_str);
        if (r != R_GO) return r;
        if (args) {
            p->args_end = p->pos;
            p->have_args = true;
        }
        if (args && p->args_str) { /* passed on whole, once decoded and checked */
            p->sargs.len = 0;
            if (!pl_json_unescape(&p->sargs, t + p->args_start, p->args_end - p->args_start) || !pl_tsb_str(&p->sargs) ||
                pl_json_type_of(p->sargs.s, p->sargs.len) != PL_JT_OBJ)
                return pl_tp_botch(p, "a tool call's arguments string does not hold a JSON object");
            pl_tp_args(p, p->sargs.s, p->sargs.len);
        }
        p->st = P_J_NEXTKEY;
        return R_GO;
    }
    case P_J_NEXTKEY:
        if (!pl_tp_skip_ws(p)) return R_WAIT;
        if (t[p->pos] == '}') return item_end(p);
        if (t[p->pos] != ',') return pl_tp_botch(p, "invalid JSON in a tool call");
        p->pos++;
        p->st = P_J_KEY;
        return R_GO;
    case P_J_LIST_NEXT:
        if (!pl_tp_skip_ws(p)) return R_WAIT;
        if (t[p->pos] == ',') {
            p->pos++;
            p->st = P_J_ITEM;
            return R_GO;
        }
        if (t[p->pos] != ']') return pl_tp_botch(p, "invalid JSON list of tool calls");
        p->pos++;
        p->settled = p->pos;
        if (p->spec->close) {
            p->st = P_SECTION_CLOSE;
        } else {
            p->st = P_CONTENT;
            p->after_call = true;
        }
        return R_GO;
    case P_J_MULTI_NEXT: {
        if (!pl_tp_skip_ws(p)) return p->final && p->section_calls > 0 ? R_IDLE : R_WAIT;
        if (t[p->pos] == '{') {
            p->st = P_J_ITEM;
            return R_GO;
        }
        p->st = P_SECTION_CLOSE;
        return R_GO;
    }
    default: return pl_tp_botch(p, "internal error: state %d", p->st);
    }
}

/* ---- named calls ------------------------------------------------------- */

int pl_tp_step_named(pl_tool_parser *p) {
    const pl_tool_spec *s = p->spec;
    switch (p->st) {
    case P_N_CALL: {
        bool call;
        int r = pl_tp_next_in_section(p, &call);
        if (call) p->st = P_N_NAME_OPEN;
        return r;
    }
    case P_N_NAME_OPEN: {
        if (s->name_open) {
            int r;
            if (s->skip_to_name) {
                r = pl_tp_skip_to(p, s->name_open);
            } else {
                int m = pl_tp_expect(p, s->name_open, false);
                r = m < 0 ? R_WAIT : m == 0 ? pl_tp_botch(p, "tool call without %s", s->name_open) : R_GO;
            }
            if (r != R_GO) return r;
        }
        p->st = P_N_NAME;
        return R_GO;
    }
    case P_N_NAME: {
        size_t j;
        const int r = pl_tp_name(p, &j);
        if (r != R_GO) return r;
        if (!pl_tp_call_start(p, p->pos, j)) return R_IDLE;
        p->pos = j;
        p->st = P_N_ARGS_OPEN;
        return R_GO;
    }
    case P_N_ARGS_OPEN: {
        int r;
        if (s->skip_after_name) {
            r = pl_tp_skip_to(p, s->args_open);
        } else {
            int m = pl_tp_expect(p, s->args_open, true);
            r = m < 0 ? R_WAIT : m == 0 ? pl_tp_botch(p, "tool call without %s", s->args_open) : R_GO;
        }
        if (r != R_GO) return r;
        p->st = P_N_ARGS;
        return R_GO;
    }
    case P_N_ARGS:
        if (!pl_tp_skip_ws(p)) return R_WAIT;
        if (p->text.s[p->pos] != '{') return pl_tp_botch(p, "a tool call's arguments are not a JSON object");
        pl_jscan_init(&p->js);
        p->args_start = p->pos;
        p->st = P_N_SCAN;
        return R_GO;
    case P_N_SCAN: {
        int r = pl_tp_scan_args(p, true);
        if (r != R_GO) return r;
        p->st = s->args_close ? P_N_ARGS_CLOSE : P_N_CALL_CLOSE;
        return R_GO;
    }
    case P_N_ARGS_CLOSE:
    case P_N_CALL_CLOSE: {
        const char *lit = p->st == P_N_ARGS_CLOSE ? s->args_close : s->call_close;
        if (lit) {
            int m = pl_tp_expect(p, lit, true);
            if (m < 0) return R_WAIT;
            if (m == 0) return pl_tp_botch(p, "tool call not closed by %s", lit);
        }
        if (p->st == P_N_ARGS_CLOSE) {
            p->st = P_N_CALL_CLOSE;
            return R_GO;
        }
        pl_tp_call_end(p);
        pl_tp_after_call(p);
        return R_GO;
    }
    default: return pl_tp_botch(p, "internal error: state %d", p->st);
    }
}
