/*
 * chat_tools_py.c -- the tool-call parser's steps for Python-style calls
 * (LFM2: <|tool_call_start|>[f(city="Paris", days=3), g()]<|tool_call_end|>):
 * each keyword argument's value is a Python literal -- a string in either
 * quote, a number, True / False / None, a list, tuple or dict of those (or
 * the JSON the template writes for a mapping) -- turned into JSON as it
 * completes, so the arguments object streams out one argument at a time.
 * A value whose JSON type the parameter's schema does not allow is taken
 * as that text, a string, when the schema allows strings.
 */
#include <stdint.h>
#include <string.h>

#include "chat/chat_tools_parser.h"

static void args_str(pl_tool_parser *p, const char *s) { pl_tp_args(p, s, strlen(s)); }

static bool ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }

static int hexval(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The end of the Python string literal at s[0] (its closing quote + 1), 0
 * when the text ends first. */
static size_t string_len(const char *s, size_t n) {
    const char q = s[0];
    for (size_t i = 1; i < n; i++) {
        if (s[i] == '\\') i++;
        else if (s[i] == q) return i + 1;
    }
    return 0;
}

/* The Python string literal s[0, n) (quotes included) as a JSON string. */
static bool string_to_json(pl_tsb *out, const char *s, size_t n) {
    pl_tsb raw = {0};
    for (size_t i = 1; i + 1 < n; i++) {
        if (s[i] != '\\') {
            pl_tsb_add(&raw, s + i, 1);
            continue;
        }
        const char e = s[++i];
        uint32_t cp = 0;
        int digits = 0;
        switch (e) {
        case 'n': pl_tsb_puts(&raw, "\n"); break;
        case 't': pl_tsb_puts(&raw, "\t"); break;
        case 'r': pl_tsb_puts(&raw, "\r"); break;
        case 'b': pl_tsb_puts(&raw, "\b"); break;
        case 'f': pl_tsb_puts(&raw, "\f"); break;
        case '0': pl_tsb_add(&raw, "\0", 1); break;
        case '\\': case '\'': case '"': pl_tsb_add(&raw, &e, 1); break;
        case 'x': digits = 2; break;
        case 'u': digits = 4; break;
        case 'U': digits = 8; break;
        default: /* Python keeps an unknown escape as written */
            pl_tsb_add(&raw, s + i - 1, 2);
        }
        if (digits) {
            for (int k = 0; k < digits; k++) {
                const int h = i + 1 < n - 1 ? hexval(s[i + 1]) : -1;
                if (h < 0) {
                    pl_tsb_free(&raw);
                    return false;
                }
                cp = cp << 4 | (uint32_t)h;
                i++;
            }
            if (cp > 0x10ffff || (cp >= 0xd800 && cp < 0xe000)) {
                pl_tsb_free(&raw);
                return false;
            }
            pl_tsb_put_utf8(&raw, cp);
        }
    }
    pl_tsb_puts(out, "\"");
    pl_json_escape(out, raw.s ? raw.s : "", raw.len);
    pl_tsb_puts(out, "\"");
    const bool ok = !raw.oom;
    pl_tsb_free(&raw);
    return ok;
}

/* A Python literal as JSON: strings re-quoted, True / False / None as JSON
 * words (JSON's own are let through: the template writes a mapping with
 * tojson), tuples as lists, everything else (numbers, brackets, commas,
 * colons) as it is -- then the whole must be JSON. */
static bool py_to_json(pl_tsb *out, const char *s, size_t n) {
    for (size_t i = 0; i < n;) {
        const char c = s[i];
        if (c == '\'' || c == '"') {
            const size_t l = string_len(s + i, n - i);
            if (!l || !string_to_json(out, s + i, l)) return false;
            i += l;
        } else if (ident_start(c)) {
            size_t j = i;
            while (j < n && ident_char(s[j])) j++;
            static const char *const words[][2] = {{"True", "true"}, {"False", "false"}, {"None", "null"},
                                                   {"true", "true"}, {"false", "false"}, {"null", "null"}};
            bool known = false;
            for (size_t w = 0; w < 6 && !known; w++)
                if (strlen(words[w][0]) == j - i && !memcmp(s + i, words[w][0], j - i)) {
                    pl_tsb_puts(out, words[w][1]);
                    known = true;
                }
            if (!known) return false;
            i = j;
        } else {
            pl_tsb_add(out, c == '(' ? "[" : c == ')' ? "]" : &s[i], 1);
            i++;
        }
    }
    return !out->oom && pl_json_type_of(out->s, out->len) != 0;
}

/* The extent of the value at pos: a string, a bracketed literal, or a
 * bare word / number up to ',' or ')'; 0 while the text may still go on. */
static size_t value_len(const pl_tool_parser *p) {
    const char *s = p->text.s + p->pos;
    const size_t n = p->text.len - p->pos;
    if (s[0] == '\'' || s[0] == '"') return string_len(s, n);
    if (s[0] == '[' || s[0] == '{' || s[0] == '(') {
        int depth = 0;
        for (size_t i = 0; i < n; i++) {
            if (s[i] == '\'' || s[i] == '"') {
                const size_t l = string_len(s + i, n - i);
                if (!l) return 0;
                i += l - 1;
            } else if (s[i] == '[' || s[i] == '{' || s[i] == '(') {
                depth++;
            } else if ((s[i] == ']' || s[i] == '}' || s[i] == ')') && --depth == 0) {
                return i + 1;
            }
        }
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        if (s[i] == ',' || s[i] == ')' || pl_tp_ws(s[i])) return i;
    return 0;
}

/* The argument's value text[a, b) into the arguments as JSON. */
static void args_value(pl_tool_parser *p, size_t a, size_t b) {
    pl_tsb j = {0};
    const bool ok = py_to_json(&j, p->text.s + a, b - a);
    const unsigned jt = ok ? pl_json_type_of(j.s, j.len) : 0, mask = p->ptypes;
    if (jt && (mask == 0 || (jt & mask))) {
        pl_tp_args(p, j.s, j.len);
    } else if (mask & PL_JT_STR) { /* the text itself */
        pl_tsb e = {0};
        pl_tsb_puts(&e, "\"");
        pl_json_escape(&e, p->text.s + a, b - a);
        pl_tsb_puts(&e, "\"");
        pl_tp_args(p, e.s, e.len);
        pl_tsb_free(&e);
    } else {
        pl_tp_botch(p, "a tool call's argument is not a value its parameter takes");
    }
    pl_tsb_free(&j);
}

int pl_tp_step_py(pl_tool_parser *p) {
    const char *t = p->text.s;
    switch (p->st) {
    case P_P_NAME: {
        size_t j;
        const int r = pl_tp_name(p, &j);
        if (r != R_GO) return r;
        if (!pl_tp_call_start(p, p->pos, j)) return R_IDLE;
        p->pos = j;
        p->nparams = 0;
        p->st = P_P_OPEN;
        return R_GO;
    }
    case P_P_OPEN: {
        const int m = pl_tp_expect(p, "(", true);
        if (m < 0) return R_WAIT;
        if (m == 0) return pl_tp_botch(p, "a tool call without its ( arguments )");
        p->st = P_P_KEY;
        return R_GO;
    }
    case P_P_KEY: {
        if (!pl_tp_skip_ws(p)) return R_WAIT;
        if (t[p->pos] == ')' && p->nparams == 0) {
            p->pos++;
            args_str(p, "{}");
            pl_tp_call_end(p);
            p->st = P_P_CALL_NEXT;
            return R_GO;
        }
        size_t j = p->pos;
        while (j < p->text.len && ident_char(t[j])) j++;
        if (j - p->pos > 256) return pl_tp_botch(p, "a tool call's parameter name is too long");
        if (j == p->text.len) return R_WAIT;
        if (j == p->pos || !ident_start(t[p->pos])) return pl_tp_botch(p, "a tool call's argument without a keyword");
        char key[257];
        memcpy(key, t + p->pos, j - p->pos);
        key[j - p->pos] = 0;
        p->ptypes = p->fn_schema ? pl_tools_param_types(p->fn_schema, key) : 0;
        args_str(p, p->nparams++ ? ", \"" : "{\"");
        args_str(p, key); /* an identifier: nothing to escape */
        args_str(p, "\": ");
        p->pos = j;
        p->st = P_P_EQ;
        return R_GO;
    }
    case P_P_EQ: {
        const int m = pl_tp_expect(p, "=", true);
        if (m < 0) return R_WAIT;
        if (m == 0) return pl_tp_botch(p, "a tool call's argument without '='");
        p->st = P_P_VALUE;
        return R_GO;
    }
    case P_P_VALUE: {
        if (!pl_tp_skip_ws(p)) return R_WAIT;
        const size_t l = value_len(p);
        /* the limit holds for a finished value too, so pieces and whole agree */
        if ((l ? l : p->text.len - p->pos) > (1u << 20)) return pl_tp_botch(p, "a tool call's argument is too long");
        if (!l) return R_WAIT;
        args_value(p, p->pos, p->pos + l);
        p->pos += l;
        if (p->st == P_BOTCHED) return R_IDLE;
        p->st = P_P_NEXT;
        return R_GO;
    }
    case P_P_NEXT:
        if (!pl_tp_skip_ws(p)) return R_WAIT;
        if (t[p->pos] == ',') {
            p->pos++;
            p->st = P_P_KEY;
            return R_GO;
        }
        if (t[p->pos] != ')') return pl_tp_botch(p, "a tool call's arguments not closed by )");
        p->pos++;
        args_str(p, "}");
        pl_tp_call_end(p);
        p->st = P_P_CALL_NEXT;
        return R_GO;
    case P_P_CALL_NEXT:
        if (!pl_tp_skip_ws(p)) return R_WAIT;
        if (t[p->pos] == ',') {
            p->pos++;
            p->st = P_P_NAME;
            return R_GO;
        }
        if (t[p->pos] != ']') return pl_tp_botch(p, "Python tool calls not closed by ]");
        p->pos++;
        p->settled = p->pos;
        p->st = P_SECTION_CLOSE;
        return R_GO;
    default: return pl_tp_botch(p, "internal error: state %d", p->st);
    }
}
