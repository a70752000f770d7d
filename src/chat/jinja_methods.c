/*
 * jinja_methods.c -- the Python methods templates call on data (str, list,
 * tuple, dict and the loop object) with CPython's semantics, the sandbox's
 * verdicts (list.append, dict.update... are unsafe under HF's immutable
 * sandbox; list.pop is not), and the global functions chat templates get:
 * range, dict, namespace, raise_exception, strftime_now.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "chat/jinja_internal.h"
#include "chat/jinja_unicode_tables.h"

bool pl_py_str_is_case(pl_jx *x, pl_jv v, bool upper);

enum {
    M_STARTSWITH, M_ENDSWITH, M_SPLIT, M_RSPLIT, M_STRIP, M_LSTRIP, M_RSTRIP, M_REPLACE, M_UPPER, M_LOWER,
    M_TITLE, M_CAPITALIZE, M_SWAPCASE, M_FIND, M_RFIND, M_INDEX, M_RINDEX, M_COUNT, M_JOIN, M_FORMAT,
    M_SPLITLINES, M_ISDIGIT, M_ISALPHA, M_ISALNUM, M_ISSPACE, M_ISUPPER, M_ISLOWER, M_ISNUMERIC, M_ISDECIMAL,
    M_ISASCII, M_REMOVEPREFIX, M_REMOVESUFFIX, M_ZFILL, M_CENTER, M_LJUST, M_RJUST, M_PARTITION, M_RPARTITION,
    M_ISTITLE,
    ML_POP, ML_CLEAR, ML_COPY, ML_COUNT, ML_INDEX, MD_GET, MD_ITEMS, MD_KEYS, MD_VALUES, MD_COPY, MLOOP_CYCLE,
    MLOOP_CHANGED, M_COUNT_ALL
};

static const char *const METHOD_NAMES[M_COUNT_ALL] = {
    "startswith", "endswith", "split", "rsplit", "strip", "lstrip", "rstrip", "replace", "upper", "lower",
    "title", "capitalize", "swapcase", "find", "rfind", "index", "rindex", "count", "join", "format",
    "splitlines", "isdigit", "isalpha", "isalnum", "isspace", "isupper", "islower", "isnumeric", "isdecimal",
    "isascii", "removeprefix", "removesuffix", "zfill", "center", "ljust", "rjust", "partition", "rpartition",
    "istitle", "pop", "clear", "copy", "count", "index", "get", "items", "keys", "values", "copy", "cycle", "changed",
};

const char *pl_jmeth_name(int id) { return id >= 0 && id < M_COUNT_ALL ? METHOD_NAMES[id] : "?"; }

static bool in_list(const char *name, const char *const *list) {
    for (int i = 0; list[i]; i++)
        if (!strcmp(list[i], name)) return true;
    return false;
}

/* Python has these; this interpreter does not call them. */
static const char *const STR_UNSUPPORTED[] = {"casefold", "encode", "expandtabs", "format_map", "isidentifier",
                                              "isprintable", "maketrans", "translate", NULL};
static const char *const NUM_ATTRS[] = {"real", "imag", "numerator", "denominator", "conjugate", "bit_length",
                                        "bit_count", "to_bytes", "from_bytes", "as_integer_ratio", "is_integer",
                                        "hex", "fromhex", NULL};
static const char *const LIST_UNSAFE[] = {"append", "reverse", "insert", "sort", "extend", "remove", NULL};
static const char *const DICT_UNSAFE[] = {"clear", "pop", "popitem", "setdefault", "update", NULL};

bool pl_jmeth_unsupported_name(const char *name) {
    static const char *const more[] = {"fromkeys", "escape", "unescape", "striptags", NULL};
    return in_list(name, STR_UNSUPPORTED) || in_list(name, NUM_ATTRS) || in_list(name, more);
}

int pl_jmeth_lookup(const pl_jv self, const char *name, bool *unsafe, bool *unsupported) {
    *unsafe = *unsupported = false;
    switch ((pl_jv_kind)self.kind) {
    case JV_STR:
        for (int i = M_STARTSWITH; i <= M_ISTITLE; i++)
            if (!strcmp(METHOD_NAMES[i], name)) return i;
        if (in_list(name, STR_UNSUPPORTED)) *unsupported = true;
        if ((self.flags & JV_MARKUP) && (!strcmp(name, "escape") || !strcmp(name, "unescape") || !strcmp(name, "striptags")))
            *unsupported = true;
        return -1;
    case JV_LIST:
        if (in_list(name, LIST_UNSAFE)) {
            *unsafe = true;
            return -1;
        }
        if (!strcmp(name, "pop")) return ML_POP;
        if (!strcmp(name, "clear")) return ML_CLEAR;
        if (!strcmp(name, "copy")) return ML_COPY;
        /* fall through */
    case JV_TUPLE:
        if (!strcmp(name, "count")) return ML_COUNT;
        if (!strcmp(name, "index")) return ML_INDEX;
        return -1;
    case JV_DICT:
        if (in_list(name, DICT_UNSAFE)) {
            *unsafe = true;
            return -1;
        }
        if (!strcmp(name, "get")) return MD_GET;
        if (!strcmp(name, "items")) return MD_ITEMS;
        if (!strcmp(name, "keys")) return MD_KEYS;
        if (!strcmp(name, "values")) return MD_VALUES;
        if (!strcmp(name, "copy")) return MD_COPY;
        if (!strcmp(name, "fromkeys")) *unsupported = true;
        return -1;
    case JV_INT: case JV_BOOL: case JV_FLOAT:
        if (in_list(name, NUM_ATTRS)) *unsupported = true;
        return -1;
    case JV_LOOP:
        if (!strcmp(name, "cycle")) return MLOOP_CYCLE;
        if (!strcmp(name, "changed")) return MLOOP_CHANGED;
        return -1;
    default:
        return -1;
    }
}

/* ---- string helpers ----------------------------------------------- */

static pl_jv sub(pl_jx *x, pl_jv s, size_t a, size_t b, bool markup) {
    return pl_jv_str_markup(pl_jv_str(x, s.v.s->s + a, b - a), markup);
}

static pl_jv need_str_arg(pl_jx *x, pl_jv v, const char *fn) {
    if (v.kind == JV_UNDEF) pl_jx_undef_fail(x, v);
    if (v.kind != JV_STR) pl_jx_fail(x, "%s() argument must be str, not %s", fn, pl_jv_type_name(v));
    return v;
}

/* Code-point slice [start:end] as byte offsets (Python's index rules). */
static void cp_range(pl_jx *x, pl_jv s, pl_jv start, pl_jv end, size_t *ba, size_t *bb) {
    int64_t n = (int64_t)s.v.s->ncp, lo = 0, hi = n;
    if (start.kind != JV_NONE && start.kind != JV_UNDEF) {
        if (start.kind != JV_INT && start.kind != JV_BOOL) pl_jx_fail(x, "slice indices must be integers or None");
        lo = start.v.i < 0 ? start.v.i + n : start.v.i;
        if (lo < 0) lo = 0;
    }
    if (end.kind != JV_NONE && end.kind != JV_UNDEF) {
        if (end.kind != JV_INT && end.kind != JV_BOOL) pl_jx_fail(x, "slice indices must be integers or None");
        hi = end.v.i < 0 ? end.v.i + n : end.v.i;
        if (hi < 0) hi = 0;
    }
    if (hi > n) hi = n;
    if (lo > n) lo = n + 1; /* past the end: nothing can match, not even "" */
    if (lo > hi && lo <= n) lo = hi + 1;
    *ba = lo > n ? SIZE_MAX : pl_jstr_offset(s.v.s, (size_t)lo);
    *bb = pl_jstr_offset(s.v.s, (size_t)hi);
    if (lo > hi) *ba = SIZE_MAX;
}

static bool set_has(const pl_jstr *set, uint32_t cp) {
    size_t i = 0;
    while (i < set->len) {
        uint32_t c;
        i += pl_ju8_decode(set->s + i, &c);
        if (c == cp) return true;
    }
    return false;
}

/* which: 0 both ends, 1 left, 2 right */
pl_jv pl_jstr_strip(pl_jx *x, pl_jv s, pl_jv chars, int which);
pl_jv pl_jstr_strip(pl_jx *x, pl_jv s, pl_jv chars, int which) {
    if (chars.kind == JV_UNDEF) pl_jx_fail(x, "strip arg must be None or str");
    if (chars.kind != JV_NONE && chars.kind != JV_STR) pl_jx_fail(x, "strip arg must be None or str");
    const char *p = s.v.s->s;
    size_t a = 0, b = s.v.s->len;
    if (which != 2)
        while (a < b) {
            uint32_t c;
            size_t k = pl_ju8_decode(p + a, &c);
            if (chars.kind == JV_NONE ? !pl_py_isspace(c) : !set_has(chars.v.s, c)) break;
            a += k;
        }
    if (which != 1)
        while (b > a) {
            size_t st = b - 1;
            while (st > a && ((unsigned char)p[st] & 0xC0) == 0x80) st--;
            uint32_t c;
            pl_ju8_decode(p + st, &c);
            if (chars.kind == JV_NONE ? !pl_py_isspace(c) : !set_has(chars.v.s, c)) break;
            b = st;
        }
    if (a == 0 && b == s.v.s->len) return s;
    return sub(x, s, a, b, s.flags & JV_MARKUP);
}

static pl_jv split(pl_jx *x, pl_jv s, pl_jv sep, int64_t maxsplit, bool right, bool markup) {
    pl_jv out = pl_jv_list(x, 0);
    const char *p = s.v.s->s;
    size_t n = s.v.s->len;
    if (sep.kind == JV_NONE) {
        /* runs of whitespace; none at the ends */
        if (!right) {
            size_t i = 0;
            while (i < n) {
                uint32_t c;
                size_t k;
                while (i < n && (k = pl_ju8_decode(p + i, &c), pl_py_isspace(c))) i += k;
                if (i >= n) break;
                if (maxsplit >= 0 && (int64_t)out.v.l->n >= maxsplit) {
                    /* the rest, right-stripped, is the last piece */
                    size_t e = n;
                    while (e > i) {
                        size_t st = e - 1;
                        while (st > i && ((unsigned char)p[st] & 0xC0) == 0x80) st--;
                        pl_ju8_decode(p + st, &c);
                        if (!pl_py_isspace(c)) break;
                        e = st;
                    }
                    pl_jv_list_push(x, out, sub(x, s, i, e, markup));
                    break;
                }
                size_t st = i;
                while (i < n && (k = pl_ju8_decode(p + i, &c), !pl_py_isspace(c))) i += k;
                pl_jv_list_push(x, out, sub(x, s, st, i, markup));
            }
            return out;
        }
        /* rsplit(): collect from the right, then reverse */
        size_t e = n;
        while (e > 0) {
            uint32_t c;
            size_t st;
            for (;;) {
                if (e == 0) break;
                st = e - 1;
                while (st > 0 && ((unsigned char)p[st] & 0xC0) == 0x80) st--;
                pl_ju8_decode(p + st, &c);
                if (!pl_py_isspace(c)) break;
                e = st;
            }
            if (e == 0) break;
            if (maxsplit >= 0 && (int64_t)out.v.l->n >= maxsplit) {
                size_t b0 = 0;
                while (b0 < e) {
                    size_t k = pl_ju8_decode(p + b0, &c);
                    if (!pl_py_isspace(c)) break;
                    b0 += k;
                }
                pl_jv_list_push(x, out, sub(x, s, b0, e, markup));
                break;
            }
            size_t b = e;
            while (b > 0) {
                st = b - 1;
                while (st > 0 && ((unsigned char)p[st] & 0xC0) == 0x80) st--;
                pl_ju8_decode(p + st, &c);
                if (pl_py_isspace(c)) break;
                b = st;
            }
            pl_jv_list_push(x, out, sub(x, s, b, e, markup));
            e = b;
        }
    } else {
        const pl_jstr *sp = sep.v.s;
        if (sp->len == 0) pl_jx_fail(x, "empty separator");
        if (!right) {
            size_t i = 0;
            for (;;) {
                pl_jx_step(x);
                const char *hit = maxsplit >= 0 && (int64_t)out.v.l->n >= maxsplit
                                      ? NULL
                                      : memmem(p + i, n - i, sp->s, sp->len);
                if (!hit) {
                    pl_jv_list_push(x, out, sub(x, s, i, n, markup));
                    break;
                }
                size_t h = (size_t)(hit - p);
                pl_jv_list_push(x, out, sub(x, s, i, h, markup));
                i = h + sp->len;
            }
            return out;
        }
        size_t e = n;
        for (;;) {
            pl_jx_step(x);
            size_t h = SIZE_MAX;
            if (!(maxsplit >= 0 && (int64_t)out.v.l->n >= maxsplit) && e >= sp->len)
                for (size_t k = e - sp->len + 1; k > 0; k--)
                    if (memcmp(p + k - 1, sp->s, sp->len) == 0) {
                        h = k - 1;
                        break;
                    }
            if (h == SIZE_MAX) {
                pl_jv_list_push(x, out, sub(x, s, 0, e, markup));
                break;
            }
            pl_jv_list_push(x, out, sub(x, s, h + sp->len, e, markup));
            e = h;
        }
    }
    /* reverse the right-to-left pieces */
    pl_jlist *l = out.v.l;
    for (size_t i = 0; i < l->n / 2; i++) {
        pl_jv t = l->items[i];
        l->items[i] = l->items[l->n - 1 - i];
        l->items[l->n - 1 - i] = t;
    }
    return out;
}

static pl_jv str_replace(pl_jx *x, pl_jv s, pl_jv old, pl_jv new_, int64_t count, bool markup) {
    const pl_jstr *o = old.v.s, *w = new_.v.s;
    pl_jbuf b = {0};
    const char *p = s.v.s->s;
    size_t n = s.v.s->len;
    if (o->len == 0) {
        /* "" matches before every character and at the end */
        size_t i = 0;
        int64_t done = 0;
        for (;;) {
            if (count < 0 || done < count) {
                pl_jbuf_put(x, &b, w->s, w->len);
                done++;
            }
            if (i >= n) break;
            uint32_t c;
            size_t k = pl_ju8_decode(p + i, &c);
            pl_jbuf_put(x, &b, p + i, k);
            i += k;
        }
        return pl_jv_str_markup(pl_jv_str_buf(x, &b), markup);
    }
    size_t i = 0;
    int64_t done = 0;
    while (i <= n) {
        pl_jx_step(x);
        const char *hit = (count >= 0 && done >= count) ? NULL : memmem(p + i, n - i, o->s, o->len);
        if (!hit) {
            pl_jbuf_put(x, &b, p + i, n - i);
            break;
        }
        size_t h = (size_t)(hit - p);
        pl_jbuf_put(x, &b, p + i, h - i);
        pl_jbuf_put(x, &b, w->s, w->len);
        i = h + o->len;
        done++;
    }
    return pl_jv_str_markup(pl_jv_str_buf(x, &b), markup);
}

static int64_t cp_index(const pl_jstr *s, size_t byte) { return (int64_t)pl_utf8_count(s->s, byte); }

/* find/rfind/count within [start:end] */
static int64_t str_find(pl_jx *x, pl_jv s, pl_jv subs, pl_jv start, pl_jv end, int mode) {
    size_t a, b;
    cp_range(x, s, start, end, &a, &b);
    const pl_jstr *t = subs.v.s;
    if (a == SIZE_MAX) return mode == 2 ? 0 : -1;
    const char *p = s.v.s->s;
    if (mode == 2) { /* count, non-overlapping */
        if (t->len == 0) return (int64_t)pl_utf8_count(p + a, b - a) + 1;
        int64_t c = 0;
        size_t i = a;
        while (i + t->len <= b) {
            const char *h = memmem(p + i, b - i, t->s, t->len);
            if (!h) break;
            c++;
            i = (size_t)(h - p) + t->len;
        }
        return c;
    }
    if (t->len > b - a) return -1;
    if (mode == 0) {
        const char *h = t->len ? memmem(p + a, b - a, t->s, t->len) : p + a;
        return h ? cp_index(s.v.s, (size_t)(h - p)) : -1;
    }
    for (size_t k = b - t->len + 1; k > a; k--)
        if (memcmp(p + k - 1, t->s, t->len) == 0) return cp_index(s.v.s, k - 1);
    return -1;
}

/* str.isdigit() and friends: every character has the property; not empty */
static bool all_have(pl_jv s, uint16_t mask) {
    if (s.v.s->len == 0) return false;
    for (size_t i = 0; i < s.v.s->len;) {
        uint32_t c;
        i += pl_ju8_decode(s.v.s->s + i, &c);
        if (!(pl_py_flags(c) & mask)) return false;
    }
    return true;
}

static pl_jv pad(pl_jx *x, pl_jv s, int64_t width, pl_jv fill, int mode, bool markup) {
    uint32_t fc = ' ';
    if (fill.kind != JV_NONE) {
        if (fill.kind != JV_STR || fill.v.s->ncp != 1) pl_jx_fail(x, "The fill character must be exactly one character long");
        pl_ju8_decode(fill.v.s->s, &fc);
    }
    int64_t n = (int64_t)s.v.s->ncp;
    if (width <= n) return s;
    if (width - n > (int64_t)x->lim.max_memory / 4) pl_jx_raise(x, POCKETLLM_ERR_NO_MEMORY, "padding beyond the memory limit");
    int64_t total = width - n, left;
    if (mode == 0) left = total / 2 + (total & width & 1); /* str.center's rounding */
    else if (mode == 1) left = 0;                           /* ljust */
    else left = total;                                      /* rjust */
    char fb[4];
    size_t fl = pl_ju8_encode(fc, fb);
    pl_jbuf b = {0};
    for (int64_t i = 0; i < left; i++) pl_jbuf_put(x, &b, fb, fl);
    pl_jbuf_put(x, &b, s.v.s->s, s.v.s->len);
    for (int64_t i = 0; i < total - left; i++) pl_jbuf_put(x, &b, fb, fl);
    return pl_jv_str_markup(pl_jv_str_buf(x, &b), markup);
}

#define ARGS(fname, nreq, ...)                                   \
    static const char *const names_[] = {__VA_ARGS__};             \
    pl_jargs_bind(x, fname, a, sizeof names_ / sizeof names_[0], names_, p, nreq)

static void no_args(pl_jx *x, pl_jargs *a, const char *fn) {
    if (a->npos || a->nkw) pl_jx_fail(x, "%s() takes no arguments", fn);
}

static pl_jv str_method(pl_jx *x, int id, pl_jv s, pl_jargs *a) {
    pl_jv p[4] = {pl_jv_none_v, pl_jv_none_v, pl_jv_none_v, pl_jv_none_v};
    bool mk = s.flags & JV_MARKUP;
    if (mk && a->nkw == 0)
        /* Markup's wrapped methods escape their string arguments */
        switch (id) {
        case M_REPLACE: case M_STRIP: case M_LSTRIP: case M_RSTRIP: case M_SPLIT: case M_RSPLIT: case M_CENTER:
        case M_LJUST: case M_RJUST: case M_PARTITION: case M_RPARTITION:
            for (size_t i = 0; i < a->npos; i++)
                if (a->pos[i].kind == JV_STR) a->pos[i] = pl_jv_escape(x, a->pos[i]);
            break;
        case M_FORMAT: pl_jx_unsupported(x, "format() on a |safe string");
        default: break;
        }
    if (mk && a->nkw && id != M_STARTSWITH && id != M_ENDSWITH) pl_jx_unsupported(x, "keyword arguments on a |safe string method");
    switch (id) {
    case M_STARTSWITH:
    case M_ENDSWITH: {
        ARGS(METHOD_NAMES[id], 1, "prefix", "start", "end");
        size_t ba, bb;
        cp_range(x, s, p[1], p[2], &ba, &bb);
        size_t n;
        const pl_jv *cands = &p[0];
        if (p[0].kind == JV_TUPLE) {
            cands = p[0].v.l->items;
            n = p[0].v.l->n;
        } else {
            n = 1;
        }
        for (size_t i = 0; i < n; i++) {
            if (cands[i].kind != JV_STR)
                pl_jx_fail(x, "%s first arg must be str or a tuple of str, not %s", METHOD_NAMES[id],
                           pl_jv_type_name(cands[i]));
            if (ba == SIZE_MAX) continue;
            const pl_jstr *t = cands[i].v.s;
            if (t->len > bb - ba) continue;
            const char *at = id == M_STARTSWITH ? s.v.s->s + ba : s.v.s->s + bb - t->len;
            if (memcmp(at, t->s, t->len) == 0) return pl_jv_bool(true);
        }
        return pl_jv_bool(false);
    }
    case M_SPLIT:
    case M_RSPLIT: {
        p[1] = pl_jv_int(-1);
        ARGS(METHOD_NAMES[id], 0, "sep", "maxsplit");
        if (p[0].kind != JV_NONE) need_str_arg(x, p[0], METHOD_NAMES[id]);
        if (p[1].kind != JV_INT && p[1].kind != JV_BOOL) pl_jx_fail(x, "maxsplit must be an integer");
        return split(x, s, p[0], p[1].v.i, id == M_RSPLIT, mk);
    }
    case M_STRIP: case M_LSTRIP: case M_RSTRIP: {
        ARGS(METHOD_NAMES[id], 0, "chars");
        return pl_jstr_strip(x, s, p[0], id == M_STRIP ? 0 : id == M_LSTRIP ? 1 : 2);
    }
    case M_REPLACE: {
        p[2] = pl_jv_int(-1);
        if (a->nkw) pl_jx_fail(x, "replace() takes no keyword arguments");
        ARGS("replace", 2, "old", "new", "count");
        need_str_arg(x, p[0], "replace");
        need_str_arg(x, p[1], "replace");
        if (p[2].kind != JV_INT && p[2].kind != JV_BOOL) pl_jx_fail(x, "replace() count must be an integer");
        return str_replace(x, s, p[0], p[1], p[2].v.i, mk);
    }
    case M_UPPER: no_args(x, a, "upper"); return pl_jstr_case(x, s, PL_CASE_UPPER);
    case M_LOWER: no_args(x, a, "lower"); return pl_jstr_case(x, s, PL_CASE_LOWER);
    case M_CAPITALIZE: no_args(x, a, "capitalize"); return pl_jstr_case(x, s, PL_CASE_CAPITALIZE);
    case M_SWAPCASE: no_args(x, a, "swapcase"); return pl_jstr_case(x, s, PL_CASE_SWAPCASE);
    case M_TITLE: no_args(x, a, "title"); return pl_jstr_case(x, s, PL_CASE_TITLE);
    case M_FIND: case M_RFIND: case M_INDEX: case M_RINDEX: case M_COUNT: {
        ARGS(METHOD_NAMES[id], 1, "sub", "start", "end");
        need_str_arg(x, p[0], METHOD_NAMES[id]);
        int mode = id == M_COUNT ? 2 : (id == M_RFIND || id == M_RINDEX) ? 1 : 0;
        int64_t r = str_find(x, s, p[0], p[1], p[2], mode);
        if (r < 0 && (id == M_INDEX || id == M_RINDEX)) pl_jx_fail(x, "substring not found");
        return pl_jv_int(r);
    }
    case M_JOIN: {
        ARGS("join", 1, "iterable");
        size_t n;
        const pl_jv *items = pl_jv_iterate(x, p[0], &n);
        pl_jbuf b = {0};
        for (size_t i = 0; i < n; i++) {
            if (items[i].kind != JV_STR)
                pl_jx_fail(x, "sequence item %zu: expected str instance, %s found", i, pl_jv_type_name(items[i]));
            if (i) pl_jbuf_put(x, &b, s.v.s->s, s.v.s->len);
            pl_jv it = mk ? pl_jv_escape(x, items[i]) : items[i];
            pl_jbuf_put(x, &b, it.v.s->s, it.v.s->len);
        }
        return pl_jv_str_markup(pl_jv_str_buf(x, &b), mk);
    }
    case M_FORMAT: return pl_py_str_format(x, s, a);
    case M_SPLITLINES: {
        p[0] = pl_jv_bool(false);
        ARGS("splitlines", 0, "keepends");
        bool keep = pl_jv_truthy(x, p[0]);
        pl_jv out = pl_jv_list(x, 0);
        const char *q = s.v.s->s;
        size_t n = s.v.s->len, i = 0;
        while (i < n) {
            size_t st = i, k = 0;
            uint32_t c = 0;
            while (i < n) {
                k = pl_ju8_decode(q + i, &c);
                if (pl_py_islinebreak(c)) break;
                i += k;
            }
            size_t e = i;
            if (i < n) {
                i += k;
                if (c == '\r' && i < n && q[i] == '\n') i++;
            }
            pl_jv_list_push(x, out, sub(x, s, st, keep ? i : e, mk));
        }
        return out;
    }
    case M_ISDIGIT: no_args(x, a, "isdigit"); return pl_jv_bool(all_have(s, PL_PY_DIGIT));
    case M_ISNUMERIC: no_args(x, a, "isnumeric"); return pl_jv_bool(all_have(s, PL_PY_NUMERIC));
    case M_ISDECIMAL: no_args(x, a, "isdecimal"); return pl_jv_bool(all_have(s, PL_PY_DECIMAL));
    case M_ISALPHA: no_args(x, a, "isalpha"); return pl_jv_bool(all_have(s, PL_PY_ALPHA));
    case M_ISALNUM:
        no_args(x, a, "isalnum");
        return pl_jv_bool(all_have(s, PL_PY_ALPHA | PL_PY_DECIMAL | PL_PY_DIGIT | PL_PY_NUMERIC));
    case M_ISSPACE: {
        no_args(x, a, "isspace");
        if (s.v.s->len == 0) return pl_jv_bool(false);
        for (size_t i = 0; i < s.v.s->len;) {
            uint32_t c;
            i += pl_ju8_decode(s.v.s->s + i, &c);
            if (!pl_py_isspace(c)) return pl_jv_bool(false);
        }
        return pl_jv_bool(true);
    }
    case M_ISUPPER: no_args(x, a, "isupper"); return pl_jv_bool(pl_py_str_is_case(x, s, true));
    case M_ISLOWER: no_args(x, a, "islower"); return pl_jv_bool(pl_py_str_is_case(x, s, false));
    case M_ISASCII: no_args(x, a, "isascii"); return pl_jv_bool(s.v.s->ncp == s.v.s->len);
    case M_ISTITLE: {
        no_args(x, a, "istitle");
        bool cased = false, prev = false;
        for (size_t i = 0; i < s.v.s->len;) {
            uint32_t c;
            i += pl_ju8_decode(s.v.s->s + i, &c);
            uint16_t f = pl_py_flags(c);
            if (f & (PL_PY_UPPER | PL_PY_TITLE)) {
                if (prev) return pl_jv_bool(false);
                prev = cased = true;
            } else if (f & PL_PY_LOWER) {
                if (!prev) return pl_jv_bool(false);
                prev = cased = true;
            } else {
                prev = false;
            }
        }
        return pl_jv_bool(cased);
    }
    case M_REMOVEPREFIX: case M_REMOVESUFFIX: {
        ARGS(METHOD_NAMES[id], 1, "prefix");
        const pl_jstr *t = need_str_arg(x, p[0], METHOD_NAMES[id]).v.s;
        size_t n = s.v.s->len;
        if (t->len && t->len <= n) {
            if (id == M_REMOVEPREFIX && !memcmp(s.v.s->s, t->s, t->len)) return sub(x, s, t->len, n, mk);
            if (id == M_REMOVESUFFIX && !memcmp(s.v.s->s + n - t->len, t->s, t->len)) return sub(x, s, 0, n - t->len, mk);
        }
        return s;
    }
    case M_ZFILL: {
        ARGS("zfill", 1, "width");
        if (p[0].kind != JV_INT && p[0].kind != JV_BOOL) pl_jx_fail(x, "zfill() needs an integer");
        int64_t n = (int64_t)s.v.s->ncp;
        if (p[0].v.i <= n) return s;
        if (p[0].v.i - n > (int64_t)x->lim.max_memory / 4) pl_jx_raise(x, POCKETLLM_ERR_NO_MEMORY, "zfill beyond the memory limit");
        pl_jbuf b = {0};
        size_t st = 0;
        if (s.v.s->len && (s.v.s->s[0] == '+' || s.v.s->s[0] == '-')) pl_jbuf_putc(x, &b, s.v.s->s[st++]);
        for (int64_t i = 0; i < p[0].v.i - n; i++) pl_jbuf_putc(x, &b, '0');
        pl_jbuf_put(x, &b, s.v.s->s + st, s.v.s->len - st);
        return pl_jv_str_markup(pl_jv_str_buf(x, &b), mk);
    }
    case M_CENTER: case M_LJUST: case M_RJUST: {
        if (a->nkw) pl_jx_fail(x, "%s() takes no keyword arguments", METHOD_NAMES[id]);
        ARGS(METHOD_NAMES[id], 1, "width", "fillchar");
        if (p[0].kind != JV_INT && p[0].kind != JV_BOOL) pl_jx_fail(x, "%s() needs an integer width", METHOD_NAMES[id]);
        return pad(x, s, p[0].v.i, p[1], id == M_CENTER ? 0 : id == M_LJUST ? 1 : 2, mk);
    }
    case M_PARTITION: case M_RPARTITION: {
        ARGS(METHOD_NAMES[id], 1, "sep");
        const pl_jstr *t = need_str_arg(x, p[0], METHOD_NAMES[id]).v.s;
        if (t->len == 0) pl_jx_fail(x, "empty separator");
        pl_jv r = pl_jv_tuple(x, 3);
        const char *q = s.v.s->s;
        size_t n = s.v.s->len, h = SIZE_MAX;
        if (id == M_PARTITION) {
            const char *hit = memmem(q, n, t->s, t->len);
            if (hit) h = (size_t)(hit - q);
        } else if (t->len <= n) {
            for (size_t k = n - t->len + 1; k > 0; k--)
                if (!memcmp(q + k - 1, t->s, t->len)) {
                    h = k - 1;
                    break;
                }
        }
        pl_jv empty = pl_jv_str_markup(pl_jv_cstr(x, ""), mk);
        if (h == SIZE_MAX) {
            r.v.l->items[0] = id == M_PARTITION ? s : empty;
            r.v.l->items[1] = empty;
            r.v.l->items[2] = id == M_PARTITION ? empty : s;
        } else {
            r.v.l->items[0] = sub(x, s, 0, h, mk);
            r.v.l->items[1] = pl_jv_str_markup(p[0], mk);
            r.v.l->items[2] = sub(x, s, h + t->len, n, mk);
        }
        return r;
    }
    default:
        pl_jx_unsupported(x, "the method str.%s()", pl_jmeth_name(id));
    }
}

pl_jv pl_jmeth_call(pl_jx *x, pl_jv method, pl_jargs *a) {
    pl_jv self = method.v.mt->self;
    int id = method.v.mt->id;
    if (id == PL_JMETH_UNSUPPORTED)
        pl_jx_unsupported(x, "the method %s.%s()", pl_jv_type_name(self), method.v.mt->name);
    pl_jv p[3] = {pl_jv_none_v, pl_jv_none_v, pl_jv_none_v};
    if (self.kind == JV_STR) return str_method(x, id, self, a);
    switch (id) {
    case ML_POP: {
        if (a->nkw) pl_jx_fail(x, "pop() takes no keyword arguments");
        p[0] = pl_jv_int(-1);
        ARGS("pop", 0, "index");
        pl_jlist *l = self.v.l;
        if (l->n == 0) pl_jx_fail(x, "pop from empty list");
        if (p[0].kind != JV_INT && p[0].kind != JV_BOOL) pl_jx_fail(x, "pop() index must be an integer");
        int64_t i = p[0].v.i < 0 ? p[0].v.i + (int64_t)l->n : p[0].v.i;
        if (i < 0 || (uint64_t)i >= l->n) pl_jx_fail(x, "pop index out of range");
        pl_jv r = l->items[i];
        memmove(l->items + i, l->items + i + 1, (l->n - (size_t)i - 1) * sizeof *l->items);
        l->n--;
        return r;
    }
    case ML_CLEAR:
        no_args(x, a, "clear");
        self.v.l->n = 0;
        return pl_jv_none_v;
    case ML_COPY: {
        no_args(x, a, "copy");
        return pl_jv_to_list(x, self);
    }
    case ML_COUNT: {
        ARGS("count", 1, "value");
        int64_t c = 0;
        for (size_t i = 0; i < self.v.l->n; i++)
            if (pl_jv_equal(x, self.v.l->items[i], p[0])) c++;
        return pl_jv_int(c);
    }
    case ML_INDEX: {
        ARGS("index", 1, "value", "start", "stop");
        int64_t n = (int64_t)self.v.l->n, lo = 0, hi = n;
        if (p[1].kind == JV_INT) lo = p[1].v.i < 0 ? (p[1].v.i + n < 0 ? 0 : p[1].v.i + n) : p[1].v.i;
        if (p[2].kind == JV_INT) hi = p[2].v.i < 0 ? p[2].v.i + n : p[2].v.i;
        if (hi > n) hi = n;
        for (int64_t i = lo; i < hi; i++)
            if (pl_jv_equal(x, self.v.l->items[i], p[0])) return pl_jv_int(i);
        pl_jx_fail(x, "value is not in %s", pl_jv_type_name(self));
    }
    case MD_GET: {
        if (a->nkw) pl_jx_fail(x, "get() takes no keyword arguments");
        ARGS("get", 1, "key", "default");
        pl_jv v;
        if (!pl_jv_hashable(p[0])) pl_jx_fail(x, "unhashable type: '%s'", pl_jv_type_name(p[0]));
        if (pl_jv_dict_get(x, self, p[0], &v)) return v;
        return p[1];
    }
    case MD_ITEMS: case MD_KEYS: case MD_VALUES: {
        no_args(x, a, pl_jmeth_name(id));
        pl_jv v = self;
        v.kind = JV_VIEW;
        v.aux = id == MD_KEYS ? JV_VIEW_KEYS : id == MD_VALUES ? JV_VIEW_VALUES : JV_VIEW_ITEMS;
        return v;
    }
    case MD_COPY: {
        no_args(x, a, "copy");
        pl_jv d = pl_jv_dict(x);
        for (size_t i = 0; i < self.v.d->n; i++) pl_jv_dict_set(x, d, self.v.d->keys[i], self.v.d->vals[i]);
        return d;
    }
    case MLOOP_CYCLE: {
        if (a->nkw) pl_jx_fail(x, "cycle() takes no keyword arguments");
        if (a->npos == 0) pl_jx_fail(x, "no items for cycling given");
        return a->pos[self.v.lp->index0 % a->npos];
    }
    case MLOOP_CHANGED: {
        if (a->nkw) pl_jx_fail(x, "changed() takes no keyword arguments");
        pl_jv t = pl_jv_tuple(x, a->npos);
        for (size_t i = 0; i < a->npos; i++) t.v.l->items[i] = a->pos[i];
        pl_jloop *lp = self.v.lp;
        if (!lp->changed_set || !pl_jv_equal(x, lp->changed_last, t)) {
            lp->changed_set = true;
            lp->changed_last = t;
            return pl_jv_bool(true);
        }
        return pl_jv_bool(false);
    }
    default:
        pl_jx_unsupported(x, "the method %s()", pl_jmeth_name(id));
    }
}

/* ---- globals ------------------------------------------------------ */

/* dict(...) / namespace(...): a mapping or pairs, then keywords */
static void fill_mapping(pl_jx *x, pl_jv d, pl_jargs *a, const char *fn) {
    if (a->npos > 1) pl_jx_fail(x, "%s expected at most 1 argument, got %zu", fn, a->npos);
    if (a->npos == 1) {
        pl_jv src = a->pos[0];
        if (src.kind == JV_DICT || src.kind == JV_NS) {
            for (size_t i = 0; i < src.v.d->n; i++) pl_jv_dict_set(x, d, src.v.d->keys[i], src.v.d->vals[i]);
        } else {
            size_t n;
            const pl_jv *items = pl_jv_iterate(x, src, &n);
            for (size_t i = 0; i < n; i++) {
                size_t k;
                const pl_jv *pair = pl_jv_iterate(x, items[i], &k);
                if (k != 2) pl_jx_fail(x, "dictionary update sequence element #%zu has length %zu; 2 is required", i, k);
                pl_jv_dict_set(x, d, pair[0], pair[1]);
            }
        }
    }
    for (size_t k = 0; k < a->nkw; k++) pl_jv_dict_set(x, d, pl_jv_cstr(x, a->kwn[k]), a->kwv[k]);
}

static pl_jv strftime_now(pl_jx *x, pl_jargs *a) {
    pl_jv p[1];
    ARGS("strftime_now", 1, "format");
    if (p[0].kind != JV_STR) pl_jx_fail(x, "strftime() argument 1 must be str, not %s", pl_jv_type_name(p[0]));
    time_t t = x->has_now ? (time_t)x->now : time(NULL);
    struct tm tm;
    if (!localtime_r(&t, &tm)) pl_jx_fail(x, "strftime_now: time out of range");
    /* Python handles %f, %z and %Z itself; for its naive datetime they are
     * 000000, "" and "" */
    const pl_jstr *f = p[0].v.s;
    pl_jbuf fmt = {0};
    for (size_t i = 0; i < f->len; i++) {
        if (f->s[i] == '%' && i + 1 < f->len) {
            char c = f->s[i + 1];
            if (c == 'f') {
                pl_jbuf_put(x, &fmt, "000000", 6);
                i++;
                continue;
            }
            if (c == 'z' || c == 'Z') {
                i++;
                continue;
            }
            pl_jbuf_put(x, &fmt, f->s + i, 2);
            i++;
            continue;
        }
        pl_jbuf_putc(x, &fmt, f->s[i]);
    }
    pl_jbuf_putc(x, &fmt, '\0');
    if (fmt.len > 1024) pl_jx_unsupported(x, "a strftime format over 1024 bytes");
    char out[4096];
    size_t n = strftime(out, sizeof out, fmt.p, &tm);
    if (n == 0 && fmt.len > 1) pl_jx_unsupported(x, "a strftime result over 4096 bytes");
    return pl_jv_str(x, out, n);
}

pl_jv pl_jfunc_call(pl_jx *x, int id, pl_jargs *a) {
    switch (id) {
    case JF_RANGE: {
        if (a->nkw) pl_jx_fail(x, "range() takes no keyword arguments");
        if (a->npos < 1 || a->npos > 3) pl_jx_fail(x, "range expected 1 to 3 arguments, got %zu", a->npos);
        int64_t v[3];
        for (size_t i = 0; i < a->npos; i++) {
            if (a->pos[i].kind == JV_UNDEF) pl_jx_undef_fail(x, a->pos[i]);
            if (a->pos[i].kind != JV_INT && a->pos[i].kind != JV_BOOL)
                pl_jx_fail(x, "'%s' object cannot be interpreted as an integer", pl_jv_type_name(a->pos[i]));
            v[i] = a->pos[i].v.i;
        }
        pl_jrange *r = pl_jx_alloc(x, sizeof *r);
        r->start = a->npos == 1 ? 0 : v[0];
        r->stop = a->npos == 1 ? v[0] : v[1];
        r->step = a->npos == 3 ? v[2] : 1;
        if (r->step == 0) pl_jx_fail(x, "range() arg 3 must not be zero");
        if (r->step == INT64_MIN) pl_jx_unsupported(x, "a range step of -2**63");
        pl_jv rv = {.kind = JV_RANGE};
        rv.v.r = r;
        /* the sandbox's safe_range */
        if (pl_jv_len(x, rv) > 100000) pl_jx_fail(x, "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
        return rv;
    }
    case JF_DICT: {
        pl_jv d = pl_jv_dict(x);
        fill_mapping(x, d, a, "dict");
        return d;
    }
    case JF_NAMESPACE: {
        pl_jv d = pl_jv_namespace(x);
        fill_mapping(x, d, a, "namespace");
        for (size_t i = 0; i < d.v.d->n; i++)
            if (d.v.d->keys[i].kind != JV_STR) pl_jx_fail(x, "keywords must be strings");
        return d;
    }
    case JF_RAISE: {
        pl_jv p[1];
        ARGS("raise_exception", 1, "message");
        pl_jbuf b = {0};
        pl_jv_write_str(x, &b, p[0]);
        pl_jbuf_putc(x, &b, '\0');
        pl_jx_fail(x, "raise_exception: %s", b.p);
    }
    case JF_STRFTIME: return strftime_now(x, a);
    default: pl_jx_fail(x, "internal: unknown function");
    }
}
