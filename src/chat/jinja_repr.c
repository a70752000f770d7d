/*
 * jinja_repr.c -- str() and repr() of values exactly as Python prints
 * them: shortest round-trip floats ("0.1", "1e-05", "1e+16"), string
 * quoting and escaping, lists, tuples and dicts, and the few runtime
 * objects whose repr is deterministic.  Objects Python prints with a memory
 * address (functions, methods, generators) are refused instead.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chat/jinja_internal.h"

void pl_py_float_repr(double d, char *buf, size_t cap) {
    if (isnan(d)) {
        snprintf(buf, cap, "nan");
        return;
    }
    if (isinf(d)) {
        snprintf(buf, cap, d < 0 ? "-inf" : "inf");
        return;
    }
    /* the shortest digits that read back as d */
    char tmp[40];
    int prec;
    for (prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec - 1, d);
        if (strtod(tmp, NULL) == d) break;
    }
    /* tmp: [-]D[.DDD]e[+-]XX */
    const char *p = tmp;
    bool neg = false;
    if (*p == '-') {
        neg = true;
        p++;
    }
    char digits[24];
    int nd = 0;
    for (; *p && *p != 'e'; p++)
        if (*p != '.') digits[nd++] = *p;
    int exp10 = atoi(p + 1);
    while (nd > 1 && digits[nd - 1] == '0') nd--;
    digits[nd] = '\0';
    int decpt = exp10 + 1;
    char *o = buf;
    size_t left = cap;
#define EMIT(...)                                          \
    do {                                                   \
        int k_ = snprintf(o, left, __VA_ARGS__);           \
        if (k_ > 0 && (size_t)k_ < left) {                 \
            o += k_;                                       \
            left -= (size_t)k_;                            \
        }                                                  \
    } while (0)
    if (neg) EMIT("-");
    if (decpt <= -4 || decpt > 16) {
        EMIT("%c", digits[0]);
        if (nd > 1) EMIT(".%s", digits + 1);
        int e = decpt - 1;
        EMIT("e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
    } else if (decpt <= 0) {
        EMIT("0.");
        for (int i = 0; i < -decpt; i++) EMIT("0");
        EMIT("%s", digits);
    } else if (decpt >= nd) {
        EMIT("%s", digits);
        for (int i = nd; i < decpt; i++) EMIT("0");
        EMIT(".0");
    } else {
        EMIT("%.*s.%s", decpt, digits, digits + decpt);
    }
#undef EMIT
}

static void write_str_repr(pl_jx *x, pl_jbuf *b, const pl_jstr *s) {
    bool has_sq = memchr(s->s, '\'', s->len) != NULL, has_dq = memchr(s->s, '"', s->len) != NULL;
    char q = has_sq && !has_dq ? '"' : '\'';
    pl_jbuf_putc(x, b, q);
    size_t i = 0;
    while (i < s->len) {
        uint32_t cp;
        size_t k = pl_ju8_decode(s->s + i, &cp);
        if (cp == (uint32_t)q || cp == '\\') {
            pl_jbuf_putc(x, b, '\\');
            pl_jbuf_putc(x, b, (char)cp);
        } else if (cp == '\t') {
            pl_jbuf_put(x, b, "\\t", 2);
        } else if (cp == '\n') {
            pl_jbuf_put(x, b, "\\n", 2);
        } else if (cp == '\r') {
            pl_jbuf_put(x, b, "\\r", 2);
        } else if (cp < 0x20 || cp == 0x7f) {
            pl_jbuf_printf(x, b, "\\x%02x", cp);
        } else if (cp < 0x80 || pl_py_isprintable(cp)) {
            pl_jbuf_put(x, b, s->s + i, k);
        } else if (cp < 0x100) {
            pl_jbuf_printf(x, b, "\\x%02x", cp);
        } else if (cp < 0x10000) {
            pl_jbuf_printf(x, b, "\\u%04x", cp);
        } else {
            pl_jbuf_printf(x, b, "\\U%08x", cp);
        }
        i += k;
    }
    pl_jbuf_putc(x, b, q);
}

static void write_items(pl_jx *x, pl_jbuf *b, const pl_jv *items, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (i) pl_jbuf_put(x, b, ", ", 2);
        pl_jv_write_repr(x, b, items[i]);
    }
}

static void write_dict_body(pl_jx *x, pl_jbuf *b, const pl_jdict *d) {
    pl_jbuf_putc(x, b, '{');
    for (size_t i = 0; i < d->n; i++) {
        if (i) pl_jbuf_put(x, b, ", ", 2);
        pl_jv_write_repr(x, b, d->keys[i]);
        pl_jbuf_put(x, b, ": ", 2);
        pl_jv_write_repr(x, b, d->vals[i]);
    }
    pl_jbuf_putc(x, b, '}');
}

/* str() and repr() agree on everything but strings and Undefined. */
static void write_value(pl_jx *x, pl_jbuf *b, pl_jv v, bool repr) {
    pl_jx_step(x);
    char tmp[64];
    switch ((pl_jv_kind)v.kind) {
    case JV_UNDEF:
        if (repr) pl_jbuf_put(x, b, "Undefined", 9);
        return;
    case JV_NONE: pl_jbuf_put(x, b, "None", 4); return;
    case JV_BOOL:
        if (v.v.i) pl_jbuf_put(x, b, "True", 4);
        else pl_jbuf_put(x, b, "False", 5);
        return;
    case JV_INT: pl_jbuf_printf(x, b, "%lld", (long long)v.v.i); return;
    case JV_FLOAT:
        pl_py_float_repr(v.v.f, tmp, sizeof tmp);
        pl_jbuf_put(x, b, tmp, strlen(tmp));
        return;
    case JV_STR:
        if (!repr) {
            pl_jbuf_put(x, b, v.v.s->s, v.v.s->len);
        } else if (v.flags & JV_MARKUP) {
            pl_jbuf_put(x, b, "Markup(", 7);
            write_str_repr(x, b, v.v.s);
            pl_jbuf_putc(x, b, ')');
        } else {
            write_str_repr(x, b, v.v.s);
        }
        return;
    case JV_LIST:
        pl_jbuf_putc(x, b, '[');
        write_items(x, b, v.v.l->items, v.v.l->n);
        pl_jbuf_putc(x, b, ']');
        return;
    case JV_TUPLE:
        pl_jbuf_putc(x, b, '(');
        write_items(x, b, v.v.l->items, v.v.l->n);
        if (v.v.l->n == 1) pl_jbuf_putc(x, b, ',');
        pl_jbuf_putc(x, b, ')');
        return;
    case JV_DICT: write_dict_body(x, b, v.v.d); return;
    case JV_NS:
        pl_jbuf_put(x, b, "<Namespace ", 11);
        write_dict_body(x, b, v.v.d);
        pl_jbuf_putc(x, b, '>');
        return;
    case JV_MACRO:
        pl_jbuf_put(x, b, "<Macro ", 7);
        write_str_repr(x, b, pl_jv_cstr(x, v.v.m->node->name).v.s);
        pl_jbuf_putc(x, b, '>');
        return;
    case JV_LOOP: pl_jbuf_printf(x, b, "<LoopContext %zu/%zu>", v.v.lp->index0 + 1, v.v.lp->n); return;
    case JV_RANGE:
        if (v.v.r->step == 1) pl_jbuf_printf(x, b, "range(%lld, %lld)", (long long)v.v.r->start, (long long)v.v.r->stop);
        else
            pl_jbuf_printf(x, b, "range(%lld, %lld, %lld)", (long long)v.v.r->start, (long long)v.v.r->stop,
                           (long long)v.v.r->step);
        return;
    case JV_VIEW: {
        size_t n;
        const pl_jv *items = pl_jv_iterate(x, v, &n);
        pl_jbuf_printf(x, b, "%s([", pl_jv_type_name(v));
        write_items(x, b, items, n);
        pl_jbuf_put(x, b, "])", 2);
        return;
    }
    case JV_FUNC: case JV_METHOD: case JV_GEN:
        pl_jx_unsupported(x, "printing a %s object (Python prints its memory address)", pl_jv_type_name(v));
    }
}

void pl_jv_write_str(pl_jx *x, pl_jbuf *b, pl_jv v) { write_value(x, b, v, false); }
void pl_jv_write_repr(pl_jx *x, pl_jbuf *b, pl_jv v) { write_value(x, b, v, true); }

pl_jv pl_jv_to_str(pl_jx *x, pl_jv v) {
    if (v.kind == JV_STR) return v;
    pl_jbuf b = {0};
    pl_jv_write_str(x, &b, v);
    return pl_jv_str_buf(x, &b);
}

pl_jv pl_jv_escape(pl_jx *x, pl_jv v) {
    if (v.kind == JV_STR && (v.flags & JV_MARKUP)) return v;
    pl_jv s = pl_jv_to_str(x, v);
    pl_jbuf b = {0};
    const char *p = s.v.s->s;
    for (size_t i = 0; i < s.v.s->len; i++) {
        switch (p[i]) {
        case '&': pl_jbuf_put(x, &b, "&amp;", 5); break;
        case '<': pl_jbuf_put(x, &b, "&lt;", 4); break;
        case '>': pl_jbuf_put(x, &b, "&gt;", 4); break;
        case '\'': pl_jbuf_put(x, &b, "&#39;", 5); break;
        case '"': pl_jbuf_put(x, &b, "&#34;", 5); break;
        default: pl_jbuf_putc(x, &b, p[i]);
        }
    }
    return pl_jv_str_markup(pl_jv_str_buf(x, &b), true);
}
