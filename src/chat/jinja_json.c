/*
 * jinja_json.c -- JSON in and out with Python's json module's exact
 * behaviour: json.dumps as HF's tojson filter calls it (ensure_ascii,
 * indent, separators, sort_keys; float repr; NaN/Infinity; non-string keys
 * converted) and json.loads for the data the caller passes (messages,
 * tools), which keeps Python's distinction between 1 and 1.0.  Written
 * here rather than taken from cJSON because cJSON keeps neither that
 * distinction nor 64-bit integers.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chat/jinja_internal.h"

/* ---- dumps -------------------------------------------------------- */

static void dump_string(pl_jx *x, pl_jbuf *b, const pl_jstr *s, bool ensure_ascii) {
    pl_jbuf_putc(x, b, '"');
    size_t i = 0;
    while (i < s->len) {
        uint32_t cp;
        size_t k = pl_ju8_decode(s->s + i, &cp);
        switch (cp) {
        case '"': pl_jbuf_put(x, b, "\\\"", 2); break;
        case '\\': pl_jbuf_put(x, b, "\\\\", 2); break;
        case '\n': pl_jbuf_put(x, b, "\\n", 2); break;
        case '\r': pl_jbuf_put(x, b, "\\r", 2); break;
        case '\t': pl_jbuf_put(x, b, "\\t", 2); break;
        case '\b': pl_jbuf_put(x, b, "\\b", 2); break;
        case '\f': pl_jbuf_put(x, b, "\\f", 2); break;
        default:
            if (cp < 0x20 || (ensure_ascii && cp > 0x7e)) {
                if (cp >= 0x10000) {
                    uint32_t v = cp - 0x10000;
                    pl_jbuf_printf(x, b, "\\u%04x\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
                } else {
                    pl_jbuf_printf(x, b, "\\u%04x", cp);
                }
            } else {
                pl_jbuf_put(x, b, s->s + i, k);
            }
        }
        i += k;
    }
    pl_jbuf_putc(x, b, '"');
}

static void dump_float(pl_jx *x, pl_jbuf *b, double d) {
    if (isnan(d)) {
        pl_jbuf_put(x, b, "NaN", 3);
    } else if (isinf(d)) {
        if (d < 0) pl_jbuf_put(x, b, "-Infinity", 9);
        else pl_jbuf_put(x, b, "Infinity", 8);
    } else {
        char tmp[40];
        pl_py_float_repr(d, tmp, sizeof tmp);
        pl_jbuf_put(x, b, tmp, strlen(tmp));
    }
}

static void newline_indent(pl_jx *x, pl_jbuf *b, const pl_json_opts *o, int level) {
    pl_jbuf_putc(x, b, '\n');
    for (int i = 0; i < level; i++) pl_jbuf_put(x, b, o->indent, o->indent_len);
}

/* A dict key as json converts it; false for keys it refuses. */
static bool key_text(pl_jx *x, pl_jv k, pl_jv *out) {
    char tmp[40];
    switch ((pl_jv_kind)k.kind) {
    case JV_STR: *out = k; return true;
    case JV_FLOAT:
        if (isnan(k.v.f)) *out = pl_jv_cstr(x, "NaN");
        else if (isinf(k.v.f)) *out = pl_jv_cstr(x, k.v.f < 0 ? "-Infinity" : "Infinity");
        else {
            pl_py_float_repr(k.v.f, tmp, sizeof tmp);
            *out = pl_jv_cstr(x, tmp);
        }
        return true;
    case JV_BOOL: *out = pl_jv_cstr(x, k.v.i ? "true" : "false"); return true;
    case JV_NONE: *out = pl_jv_cstr(x, "null"); return true;
    case JV_INT:
        snprintf(tmp, sizeof tmp, "%lld", (long long)k.v.i);
        *out = pl_jv_cstr(x, tmp);
        return true;
    default: return false;
    }
}

typedef struct kv {
    pl_jv k, v;
} kv;

static int cmp_kv(const void *a, const void *b, void *ctx) {
    const kv *p = a, *q = b;
    int c = pl_jv_compare(ctx, p->k, q->k, "<");
    if (c == 2) c = 0;
    return c;
}

void pl_json_dump(pl_jx *x, pl_jbuf *b, pl_jv v, const pl_json_opts *o, int level) {
    pl_jx_step(x);
    if (level > 1000) pl_jx_fail(x, "maximum recursion depth exceeded while encoding a JSON object");
    switch ((pl_jv_kind)v.kind) {
    case JV_NONE: pl_jbuf_put(x, b, "null", 4); return;
    case JV_BOOL:
        if (v.v.i) pl_jbuf_put(x, b, "true", 4);
        else pl_jbuf_put(x, b, "false", 5);
        return;
    case JV_INT: pl_jbuf_printf(x, b, "%lld", (long long)v.v.i); return;
    case JV_FLOAT: dump_float(x, b, v.v.f); return;
    case JV_STR: dump_string(x, b, v.v.s, o->ensure_ascii); return;
    case JV_LIST:
    case JV_TUPLE: {
        const pl_jlist *l = v.v.l;
        if (l->n == 0) {
            pl_jbuf_put(x, b, "[]", 2);
            return;
        }
        pl_jbuf_putc(x, b, '[');
        if (o->has_indent) newline_indent(x, b, o, level + 1);
        for (size_t i = 0; i < l->n; i++) {
            if (i) {
                pl_jbuf_put(x, b, o->item_sep, o->item_sep_len);
                if (o->has_indent) newline_indent(x, b, o, level + 1);
            }
            pl_json_dump(x, b, l->items[i], o, level + 1);
        }
        if (o->has_indent) newline_indent(x, b, o, level);
        pl_jbuf_putc(x, b, ']');
        return;
    }
    case JV_DICT: {
        const pl_jdict *d = v.v.d;
        if (d->n == 0) {
            pl_jbuf_put(x, b, "{}", 2);
            return;
        }
        kv *items = pl_jx_alloc_array(x, d->n, sizeof *items);
        for (size_t i = 0; i < d->n; i++) {
            items[i].k = d->keys[i];
            items[i].v = d->vals[i];
        }
        if (o->sort_keys) {
            /* sorted(dct.items()): keys of one kind (all strings or all
             * numbers) compare; any mix raises, as in Python */
            bool all_str = true, all_num = true;
            for (size_t i = 0; i < d->n; i++) {
                if (items[i].k.kind != JV_STR) all_str = false;
                if (!pl_jv_is_num(items[i].k)) all_num = false;
            }
            if (d->n > 1 && !all_str && !all_num)
                pl_jx_fail(x, "'<' not supported between the keys of this dict (mixed types)");
            if (d->n > 1 && all_num)
                for (size_t i = 0; i < d->n; i++)
                    if (items[i].k.kind == JV_FLOAT && isnan(items[i].k.v.f))
                        pl_jx_unsupported(x, "sorting NaN keys");
            qsort_r(items, d->n, sizeof *items, cmp_kv, x);
        }
        pl_jbuf_putc(x, b, '{');
        if (o->has_indent) newline_indent(x, b, o, level + 1);
        for (size_t i = 0; i < d->n; i++) {
            pl_jv key;
            if (!key_text(x, items[i].k, &key))
                pl_jx_fail(x, "keys must be str, int, float, bool or None, not %s", pl_jv_type_name(items[i].k));
            if (i) {
                pl_jbuf_put(x, b, o->item_sep, o->item_sep_len);
                if (o->has_indent) newline_indent(x, b, o, level + 1);
            }
            dump_string(x, b, key.v.s, o->ensure_ascii);
            pl_jbuf_put(x, b, o->key_sep, o->key_sep_len);
            pl_json_dump(x, b, items[i].v, o, level + 1);
        }
        if (o->has_indent) newline_indent(x, b, o, level);
        pl_jbuf_putc(x, b, '}');
        return;
    }
    default:
        pl_jx_fail(x, "Object of type %s is not JSON serializable", pl_jv_type_name(v));
    }
}

/* ---- loads -------------------------------------------------------- */

typedef struct jp {
    pl_jx *x;
    const char *s;
    size_t n, i;
    const char *what;
} jp;

static _Noreturn void jp_fail(jp *p, const char *msg) {
    pl_jx_fail(p->x, "%s: invalid JSON at byte %zu: %s", p->what, p->i, msg);
}

static void jp_ws(jp *p) {
    while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' || p->s[p->i] == '\r')) p->i++;
}

static bool jp_lit(jp *p, const char *lit) {
    size_t k = strlen(lit);
    if (p->n - p->i >= k && memcmp(p->s + p->i, lit, k) == 0) {
        p->i += k;
        return true;
    }
    return false;
}

static int hex4(jp *p) {
    if (p->n - p->i < 4) jp_fail(p, "truncated \\u escape");
    int v = 0;
    for (int k = 0; k < 4; k++) {
        char c = p->s[p->i++];
        int h = c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10 : -1;
        if (h < 0) jp_fail(p, "bad \\u escape");
        v = v * 16 + h;
    }
    return v;
}

static pl_jv jp_string(jp *p) {
    p->i++; /* opening quote */
    pl_jbuf b = {0};
    for (;;) {
        if (p->i >= p->n) jp_fail(p, "unterminated string");
        unsigned char c = (unsigned char)p->s[p->i];
        if (c == '"') {
            p->i++;
            break;
        }
        if (c < 0x20) jp_fail(p, "control character in string");
        if (c != '\\') {
            size_t st = p->i;
            while (p->i < p->n && p->s[p->i] != '"' && p->s[p->i] != '\\' && (unsigned char)p->s[p->i] >= 0x20) p->i++;
            pl_jbuf_put(p->x, &b, p->s + st, p->i - st);
            continue;
        }
        p->i++;
        if (p->i >= p->n) jp_fail(p, "unterminated string");
        char e = p->s[p->i++];
        char ch = 0;
        switch (e) {
        case '"': ch = '"'; break;
        case '\\': ch = '\\'; break;
        case '/': ch = '/'; break;
        case 'b': ch = '\b'; break;
        case 'f': ch = '\f'; break;
        case 'n': ch = '\n'; break;
        case 'r': ch = '\r'; break;
        case 't': ch = '\t'; break;
        case 'u': {
            uint32_t cp = (uint32_t)hex4(p);
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (p->n - p->i >= 6 && p->s[p->i] == '\\' && p->s[p->i + 1] == 'u') {
                    p->i += 2;
                    uint32_t lo = (uint32_t)hex4(p);
                    if (lo < 0xDC00 || lo > 0xDFFF) jp_fail(p, "a lone surrogate \\u escape (not supported)");
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                } else {
                    jp_fail(p, "a lone surrogate \\u escape (not supported)");
                }
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                jp_fail(p, "a lone surrogate \\u escape (not supported)");
            }
            char tmp[4];
            pl_jbuf_put(p->x, &b, tmp, pl_ju8_encode(cp, tmp));
            continue;
        }
        default: jp_fail(p, "invalid escape");
        }
        pl_jbuf_putc(p->x, &b, ch);
    }
    return pl_jv_str_buf(p->x, &b);
}

static pl_jv jp_number(jp *p) {
    size_t st = p->i;
    if (p->s[p->i] == '-') p->i++;
    if (p->i < p->n && p->s[p->i] == '0') {
        p->i++;
    } else if (p->i < p->n && p->s[p->i] >= '1' && p->s[p->i] <= '9') {
        while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') p->i++;
    } else {
        if (jp_lit(p, "Infinity")) return pl_jv_float(-INFINITY);
        jp_fail(p, "bad number");
    }
    bool is_float = false;
    if (p->i + 1 < p->n && p->s[p->i] == '.' && p->s[p->i + 1] >= '0' && p->s[p->i + 1] <= '9') {
        is_float = true;
        p->i++;
        while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') p->i++;
    }
    if (p->i < p->n && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
        size_t save = p->i++;
        if (p->i < p->n && (p->s[p->i] == '+' || p->s[p->i] == '-')) p->i++;
        if (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') {
            is_float = true;
            while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') p->i++;
        } else {
            p->i = save; /* Python stops the number before a bad exponent */
        }
    }
    size_t len = p->i - st;
    char tmp[512];
    if (len >= sizeof tmp) jp_fail(p, "number too long (not supported)");
    memcpy(tmp, p->s + st, len);
    tmp[len] = '\0';
    if (is_float) return pl_jv_float(strtod(tmp, NULL));
    char *end;
    errno = 0;
    long long v = strtoll(tmp, &end, 10);
    if (errno) jp_fail(p, "an integer beyond 64 bits (not supported)");
    return pl_jv_int(v);
}

static pl_jv jp_value(jp *p, int depth) {
    pl_jx_step(p->x);
    if (depth > 512) jp_fail(p, "nested too deeply");
    jp_ws(p);
    if (p->i >= p->n) jp_fail(p, "unexpected end");
    char c = p->s[p->i];
    if (c == '"') return jp_string(p);
    if (c == '{') {
        p->i++;
        pl_jv d = pl_jv_dict(p->x);
        jp_ws(p);
        if (p->i < p->n && p->s[p->i] == '}') {
            p->i++;
            return d;
        }
        for (;;) {
            jp_ws(p);
            if (p->i >= p->n || p->s[p->i] != '"') jp_fail(p, "expected a string key");
            pl_jv k = jp_string(p);
            jp_ws(p);
            if (p->i >= p->n || p->s[p->i] != ':') jp_fail(p, "expected ':'");
            p->i++;
            pl_jv v = jp_value(p, depth + 1);
            pl_jv_dict_set(p->x, d, k, v);
            jp_ws(p);
            if (p->i < p->n && p->s[p->i] == ',') {
                p->i++;
                continue;
            }
            if (p->i < p->n && p->s[p->i] == '}') {
                p->i++;
                return d;
            }
            jp_fail(p, "expected ',' or '}'");
        }
    }
    if (c == '[') {
        p->i++;
        pl_jv l = pl_jv_list(p->x, 0);
        jp_ws(p);
        if (p->i < p->n && p->s[p->i] == ']') {
            p->i++;
            return l;
        }
        for (;;) {
            pl_jv_list_push(p->x, l, jp_value(p, depth + 1));
            jp_ws(p);
            if (p->i < p->n && p->s[p->i] == ',') {
                p->i++;
                continue;
            }
            if (p->i < p->n && p->s[p->i] == ']') {
                p->i++;
                return l;
            }
            jp_fail(p, "expected ',' or ']'");
        }
    }
    if (jp_lit(p, "true")) return pl_jv_bool(true);
    if (jp_lit(p, "false")) return pl_jv_bool(false);
    if (jp_lit(p, "null")) return pl_jv_none_v;
    if (jp_lit(p, "NaN")) return pl_jv_float(NAN);
    if (jp_lit(p, "Infinity")) return pl_jv_float(INFINITY);
    if (c == '-' || (c >= '0' && c <= '9')) return jp_number(p);
    jp_fail(p, "unexpected character");
}

pl_jv pl_json_parse(pl_jx *x, const char *text, size_t len, const char *what) {
    size_t bad;
    if (!pl_utf8_valid(text, len, &bad)) pl_jx_fail(x, "%s: invalid UTF-8 at byte %zu", what, bad);
    jp p = {x, text, len, 0, what};
    pl_jv v = jp_value(&p, 0);
    jp_ws(&p);
    if (p.i != p.n) jp_fail(&p, "extra data after the value");
    return v;
}
