/*
 * chat_tools_json.c -- the small JSON pieces the tool-call parser needs
 * without cJSON: a validator fed one byte at a time (it finds where the
 * model's arguments object ends while the text streams in), the type of a
 * whole JSON text (to type XML parameter values), JSON string escaping,
 * and the growable string the tool sources build text in.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chat/chat_tools_internal.h"

/* ---- growable string -------------------------------------------------- */

static bool tsb_grow(pl_tsb *b, size_t extra) {
    if (b->oom) return false;
    if (b->len + extra + 1 <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1) cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s) {
        b->oom = true;
        return false;
    }
    b->s = s;
    b->cap = cap;
    return true;
}

void pl_tsb_add(pl_tsb *b, const char *s, size_t n) {
    if (!tsb_grow(b, n)) return;
    if (n) memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}

void pl_tsb_puts(pl_tsb *b, const char *s) { pl_tsb_add(b, s, strlen(s)); }

void pl_tsb_printf(pl_tsb *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !tsb_grow(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

const char *pl_tsb_str(pl_tsb *b) {
    if (b->oom) return NULL;
    if (!b->s && !tsb_grow(b, 0)) return NULL;
    b->s[b->len] = 0;
    return b->s;
}

void pl_tsb_free(pl_tsb *b) {
    free(b->s);
    memset(b, 0, sizeof *b);
}

/* ---- the byte-at-a-time validator ------------------------------------- */

enum {
    JS_VALUE,     /* a value next (whitespace skipped) */
    JS_OBJ_FIRST, /* after '{': a key or '}' */
    JS_OBJ_KEY,   /* after ',' in an object: a key */
    JS_COLON,
    JS_AFTER,     /* after a value inside a container: ',' or the close */
    JS_ARR_FIRST, /* after '[': a value or ']' */
    JS_STR,
    JS_ESC,
    JS_HEX,       /* aux: hex digits still to come */
    JS_LIT,       /* aux: index into the literal; stack top unaffected */
    JS_N_MINUS,   /* after '-' */
    JS_N_ZERO,    /* a leading 0 */
    JS_N_INT,
    JS_N_DOT,     /* after '.' */
    JS_N_FRAC,
    JS_N_E,       /* after 'e' */
    JS_N_ESIGN,   /* after 'e+' */
    JS_N_EXP,
    JS_DONE,
    JS_ERR
};

static const char *const js_lits[3] = {"true", "false", "null"};

void pl_jscan_init(pl_jscan *s) { memset(s, 0, sizeof *s); }

static bool js_ws(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* A value just ended (its last byte taken). */
static pl_jscan_result js_value_end(pl_jscan *s) {
    if (s->depth == 0) {
        s->st = JS_DONE;
        return PL_JS_DONE;
    }
    s->st = JS_AFTER;
    return PL_JS_MORE;
}

static pl_jscan_result js_err(pl_jscan *s) {
    s->st = JS_ERR;
    return PL_JS_ERROR;
}

static pl_jscan_result js_start_value(pl_jscan *s, unsigned char c) {
    switch (c) {
    case '{':
    case '[':
        if (s->depth >= PL_JSCAN_MAX_DEPTH) return js_err(s);
        s->stack[s->depth++] = c;
        s->st = c == '{' ? JS_OBJ_FIRST : JS_ARR_FIRST;
        return PL_JS_MORE;
    case '"':
        s->st = JS_STR;
        s->key = false;
        return PL_JS_MORE;
    case '-': s->st = JS_N_MINUS; return PL_JS_MORE;
    case '0': s->st = JS_N_ZERO; return PL_JS_MORE;
    case 't':
    case 'f':
    case 'n':
        s->st = JS_LIT;
        s->aux = (c == 't' ? 0 : c == 'f' ? 1 : 2) * 16 + 1;
        return PL_JS_MORE;
    default:
        if (c >= '1' && c <= '9') {
            s->st = JS_N_INT;
            return PL_JS_MORE;
        }
        return js_err(s);
    }
}

/* A number ended before c: finish the value, then let c through. */
static pl_jscan_result js_number_end(pl_jscan *s, unsigned char c) {
    if (s->depth == 0) {
        s->st = JS_DONE;
        return PL_JS_DONE_BEFORE;
    }
    s->st = JS_AFTER;
    return pl_jscan_byte(s, c);
}

pl_jscan_result pl_jscan_byte(pl_jscan *s, unsigned char c) {
    bool digit = c >= '0' && c <= '9';
    switch (s->st) {
    case JS_VALUE:
        if (js_ws(c)) return PL_JS_MORE;
        return js_start_value(s, c);
    case JS_ARR_FIRST:
        if (js_ws(c)) return PL_JS_MORE;
        if (c == ']') {
            s->depth--;
            return js_value_end(s);
        }
        return js_start_value(s, c);
    case JS_OBJ_FIRST:
    case JS_OBJ_KEY:
        if (js_ws(c)) return PL_JS_MORE;
        if (c == '}' && s->st == JS_OBJ_FIRST) {
            s->depth--;
            return js_value_end(s);
        }
        if (c != '"') return js_err(s);
        s->st = JS_STR;
        s->key = true;
        return PL_JS_MORE;
    case JS_COLON:
        if (js_ws(c)) return PL_JS_MORE;
        if (c != ':') return js_err(s);
        s->st = JS_VALUE;
        return PL_JS_MORE;
    case JS_AFTER: {
        if (js_ws(c)) return PL_JS_MORE;
        unsigned char top = s->stack[s->depth - 1];
        if (c == ',') {
            s->st = top == '{' ? JS_OBJ_KEY : JS_VALUE;
            return PL_JS_MORE;
        }
        if ((top == '{' && c == '}') || (top == '[' && c == ']')) {
            s->depth--;
            return js_value_end(s);
        }
        return js_err(s);
    }
    case JS_STR:
        if (c == '"') {
            if (s->key) {
                s->st = JS_COLON;
                return PL_JS_MORE;
            }
            return js_value_end(s);
        }
        if (c == '\\') s->st = JS_ESC;
        else if (c < 0x20) return js_err(s);
        return PL_JS_MORE;
    case JS_ESC:
        if (c == 'u') {
            s->st = JS_HEX;
            s->aux = 4;
            return PL_JS_MORE;
        }
        if (!strchr("\"\\/bfnrt", c) || c == 0) return js_err(s);
        s->st = JS_STR;
        return PL_JS_MORE;
    case JS_HEX:
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return js_err(s);
        if (--s->aux == 0) s->st = JS_STR;
        return PL_JS_MORE;
    case JS_LIT: {
        const char *lit = js_lits[s->aux / 16];
        int i = s->aux % 16;
        if ((unsigned char)lit[i] != c) return js_err(s);
        s->aux++;
        if (lit[i + 1] == 0) return js_value_end(s);
        return PL_JS_MORE;
    }
    case JS_N_MINUS:
        if (c == '0') s->st = JS_N_ZERO;
        else if (digit) s->st = JS_N_INT;
        else return js_err(s);
        return PL_JS_MORE;
    case JS_N_ZERO:
    case JS_N_INT:
        if (digit && s->st == JS_N_INT) return PL_JS_MORE;
        if (digit) return js_err(s); /* a leading zero */
        if (c == '.') {
            s->st = JS_N_DOT;
            return PL_JS_MORE;
        }
        if (c == 'e' || c == 'E') {
            s->st = JS_N_E;
            return PL_JS_MORE;
        }
        return js_number_end(s, c);
    case JS_N_DOT:
        if (!digit) return js_err(s);
        s->st = JS_N_FRAC;
        return PL_JS_MORE;
    case JS_N_FRAC:
        if (digit) return PL_JS_MORE;
        if (c == 'e' || c == 'E') {
            s->st = JS_N_E;
            return PL_JS_MORE;
        }
        return js_number_end(s, c);
    case JS_N_E:
        if (c == '+' || c == '-') {
            s->st = JS_N_ESIGN;
            return PL_JS_MORE;
        }
        /* fall through */
    case JS_N_ESIGN:
        if (!digit) return js_err(s);
        s->st = JS_N_EXP;
        return PL_JS_MORE;
    case JS_N_EXP:
        if (digit) return PL_JS_MORE;
        return js_number_end(s, c);
    default:
        return js_err(s);
    }
}

bool pl_jscan_end(const pl_jscan *s) {
    if (s->st == JS_DONE) return true;
    return s->depth == 0 && (s->st == JS_N_ZERO || s->st == JS_N_INT || s->st == JS_N_FRAC || s->st == JS_N_EXP);
}

unsigned pl_json_type_of(const char *s, size_t n) {
    size_t a = 0, b = n;
    while (a < b && js_ws((unsigned char)s[a])) a++;
    while (b > a && js_ws((unsigned char)s[b - 1])) b--;
    if (a == b) return 0;
    pl_jscan js;
    pl_jscan_init(&js);
    for (size_t i = a; i < b; i++) {
        pl_jscan_result r = pl_jscan_byte(&js, (unsigned char)s[i]);
        if (r == PL_JS_ERROR || r == PL_JS_DONE_BEFORE) return 0;
        if (r == PL_JS_DONE && i + 1 != b) return 0;
    }
    if (!pl_jscan_end(&js)) return 0;
    switch (s[a]) {
    case '{': return PL_JT_OBJ;
    case '[': return PL_JT_ARR;
    case '"': return PL_JT_STR;
    case 't':
    case 'f': return PL_JT_BOOL;
    case 'n': return PL_JT_NULL;
    default: break;
    }
    for (size_t i = a; i < b; i++)
        if (s[i] == '.' || s[i] == 'e' || s[i] == 'E') return PL_JT_NUM;
    return PL_JT_NUM | PL_JT_INT;
}

void pl_json_escape(pl_tsb *b, const char *s, size_t n) {
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = NULL;
        char hex[8];
        switch (c) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        case '\b': esc = "\\b"; break;
        case '\f': esc = "\\f"; break;
        default:
            if (c < 0x20 || c == 0x7f) {
                snprintf(hex, sizeof hex, "\\u%04x", c);
                esc = hex;
            }
        }
        if (!esc) continue;
        pl_tsb_add(b, s + run, i - run);
        pl_tsb_puts(b, esc);
        run = i + 1;
    }
    pl_tsb_add(b, s + run, n - run);
}

static int hex4(const char *s) {
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v = v * 16 + (c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c - 'A' + 10);
    }
    return v;
}

void pl_tsb_put_utf8(pl_tsb *b, unsigned cp) {
    char u[4];
    size_t n;
    if (cp < 0x80) u[0] = (char)cp, n = 1;
    else if (cp < 0x800) u[0] = (char)(0xC0 | cp >> 6), u[1] = (char)(0x80 | (cp & 63)), n = 2;
    else if (cp < 0x10000)
        u[0] = (char)(0xE0 | cp >> 12), u[1] = (char)(0x80 | ((cp >> 6) & 63)), u[2] = (char)(0x80 | (cp & 63)), n = 3;
    else
        u[0] = (char)(0xF0 | cp >> 18), u[1] = (char)(0x80 | ((cp >> 12) & 63)), u[2] = (char)(0x80 | ((cp >> 6) & 63)),
        u[3] = (char)(0x80 | (cp & 63)), n = 4;
    pl_tsb_add(b, u, n);
}

bool pl_json_unescape(pl_tsb *b, const char *s, size_t n) {
    if (n < 2) return false;
    size_t end = n - 1;
    for (size_t i = 1; i < end; i++) {
        if (s[i] != '\\') {
            pl_tsb_add(b, s + i, 1);
            continue;
        }
        char c = s[++i];
        switch (c) {
        case 'b': pl_tsb_add(b, "\b", 1); break;
        case 'f': pl_tsb_add(b, "\f", 1); break;
        case 'n': pl_tsb_add(b, "\n", 1); break;
        case 'r': pl_tsb_add(b, "\r", 1); break;
        case 't': pl_tsb_add(b, "\t", 1); break;
        case 'u': {
            if (i + 4 >= end + 1) return false;
            unsigned cp = (unsigned)hex4(s + i + 1);
            i += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && i + 6 < end && s[i + 1] == '\\' && s[i + 2] == 'u') {
                unsigned lo = (unsigned)hex4(s + i + 3);
                if (lo >= 0xDC00 && lo < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    i += 6;
                }
            }
            if (cp >= 0xD800 && cp < 0xE000) return false; /* a lone surrogate */
            pl_tsb_put_utf8(b, cp);
            break;
        }
        default: pl_tsb_add(b, &c, 1); break; /* " \\ / */
        }
    }
    return true;
}
