/*
 * jinja_filters.c -- jinja2's builtin filters and tests (jinja2/filters.py,
 * jinja2/tests.py), HF's tojson, and the argument binding they share.
 * Filters that return generators in jinja2 (select, map, unique, items...)
 * return JV_GEN here, so that printing, len() and a second pass behave as
 * they do there.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chat/jinja_internal.h"
#include "chat/jinja_unicode_tables.h"

/* ---- argument binding --------------------------------------------- */

void pl_jargs_bind(pl_jx *x, const char *fname, pl_jargs *a, size_t nparams, const char *const *names, pl_jv *out,
                   size_t nrequired) {
    bool set[16] = {0};
    if (a->npos > nparams) pl_jx_fail(x, "%s() takes at most %zu argument(s) (%zu given)", fname, nparams, a->npos);
    for (size_t i = 0; i < a->npos; i++) {
        out[i] = a->pos[i];
        set[i] = true;
    }
    for (size_t k = 0; k < a->nkw; k++) {
        size_t i;
        for (i = 0; i < nparams; i++)
            if (!strcmp(names[i], a->kwn[k])) break;
        if (i == nparams) pl_jx_fail(x, "%s() got an unexpected keyword argument '%s'", fname, a->kwn[k]);
        if (set[i]) pl_jx_fail(x, "%s() got multiple values for argument '%s'", fname, a->kwn[k]);
        out[i] = a->kwv[k];
        set[i] = true;
    }
    for (size_t i = 0; i < nrequired; i++)
        if (!set[i]) pl_jx_fail(x, "%s() missing required argument '%s'", fname, names[i]);
}

#define BIND(fname, nreq, ...)                                                      \
    static const char *const names_[] = {__VA_ARGS__};                                \
    enum { NP_ = sizeof names_ / sizeof names_[0] };                                  \
    pl_jargs_bind(x, fname, a, NP_, names_, p, nreq)

static int64_t want_int(pl_jx *x, pl_jv v, const char *what) {
    if (v.kind == JV_INT || v.kind == JV_BOOL) return v.v.i;
    if (v.kind == JV_UNDEF) pl_jx_undef_fail(x, v);
    pl_jx_fail(x, "%s must be an integer, not '%s'", what, pl_jv_type_name(v));
}

static pl_jv want_str(pl_jx *x, pl_jv v) {
    if (v.kind == JV_UNDEF) return pl_jv_cstr(x, "");
    return pl_jv_to_str(x, v);
}

/* ---- case ------------------------------------------------------- */

static pl_jv ignore_case(pl_jx *x, pl_jv v) { return v.kind == JV_STR ? pl_jstr_case(x, v, PL_CASE_LOWER) : v; }

/* ---- attribute getters (make_attrgetter) -------------------------- */

static pl_jv get_path(pl_jx *x, pl_jv item, pl_jv attr, pl_jv dflt, bool has_default) {
    if (attr.kind != JV_STR) {
        item = pl_jx_getitem(x, item, attr);
        if (has_default && item.kind == JV_UNDEF) item = dflt;
        return item;
    }
    const char *s = attr.v.s->s;
    size_t len = attr.v.s->len, st = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && s[i] != '.') continue;
        size_t n = i - st;
        bool digits = n > 0;
        for (size_t k = st; k < i; k++)
            if (s[k] < '0' || s[k] > '9') digits = false;
        pl_jv key;
        if (digits && n < 19) key = pl_jv_int(strtoll(s + st, NULL, 10));
        else key = pl_jv_str(x, s + st, n);
        item = pl_jx_getitem(x, item, key);
        if (has_default && item.kind == JV_UNDEF) item = dflt;
        st = i + 1;
    }
    return item;
}

/* ---- sorting (stable, may raise: our own merge sort) -------------- */

typedef struct sort_item {
    pl_jv key, val;
} sort_item;

static int cmp_items(pl_jx *x, const sort_item *a, const sort_item *b) {
    int c = pl_jv_compare(x, a->key, b->key, "<");
    return c == 2 ? 0 : c;
}

static void merge_sort(pl_jx *x, sort_item *v, sort_item *tmp, size_t n, bool reverse) {
    if (n < 2) return;
    size_t h = n / 2;
    merge_sort(x, v, tmp, h, reverse);
    merge_sort(x, v + h, tmp, n - h, reverse);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n) {
        pl_jx_step(x);
        int c = cmp_items(x, &v[j], &v[i]);
        /* take from the right only when strictly before (stable); for
         * reverse=True Python reverses, sorts stably, reverses back */
        bool right = reverse ? c > 0 : c < 0;
        tmp[k++] = right ? v[j++] : v[i++];
    }
    while (i < h) tmp[k++] = v[i++];
    while (j < n) tmp[k++] = v[j++];
    memcpy(v, tmp, n * sizeof *v);
}

static void sort_items(pl_jx *x, sort_item *v, size_t n, bool reverse) {
    if (n < 2) return;
    sort_item *tmp = pl_jx_alloc_array(x, n, sizeof *tmp);
    merge_sort(x, v, tmp, n, reverse);
}

/* ---- tests -------------------------------------------------------- */

enum {
    T_ODD, T_EVEN, T_DIVISIBLEBY, T_DEFINED, T_UNDEFINED, T_FILTER, T_TEST, T_NONE, T_BOOLEAN, T_FALSE, T_TRUE,
    T_INTEGER, T_FLOAT, T_LOWER, T_UPPER, T_STRING, T_MAPPING, T_NUMBER, T_SEQUENCE, T_ITERABLE, T_CALLABLE,
    T_SAMEAS, T_ESCAPED, T_IN, T_EQ, T_NE, T_GT, T_GE, T_LT, T_LE
};

static const struct {
    const char *name;
    int id;
} TESTS[] = {
    {"odd", T_ODD}, {"even", T_EVEN}, {"divisibleby", T_DIVISIBLEBY}, {"defined", T_DEFINED},
    {"undefined", T_UNDEFINED}, {"filter", T_FILTER}, {"test", T_TEST}, {"none", T_NONE}, {"boolean", T_BOOLEAN},
    {"false", T_FALSE}, {"true", T_TRUE}, {"integer", T_INTEGER}, {"float", T_FLOAT}, {"lower", T_LOWER},
    {"upper", T_UPPER}, {"string", T_STRING}, {"mapping", T_MAPPING}, {"number", T_NUMBER},
    {"sequence", T_SEQUENCE}, {"iterable", T_ITERABLE}, {"callable", T_CALLABLE}, {"sameas", T_SAMEAS},
    {"escaped", T_ESCAPED}, {"in", T_IN}, {"==", T_EQ}, {"eq", T_EQ}, {"equalto", T_EQ}, {"!=", T_NE},
    {"ne", T_NE}, {">", T_GT}, {"gt", T_GT}, {"greaterthan", T_GT}, {">=", T_GE}, {"ge", T_GE}, {"<", T_LT},
    {"lt", T_LT}, {"lessthan", T_LT}, {"<=", T_LE}, {"le", T_LE},
};

int pl_jtest_id(const char *name) {
    for (size_t i = 0; i < sizeof TESTS / sizeof TESTS[0]; i++)
        if (!strcmp(TESTS[i].name, name)) return TESTS[i].id;
    return -1;
}

bool pl_jtest_known(const char *name) { return pl_jtest_id(name) >= 0; }

static pl_jv one_arg(pl_jx *x, const char *name, pl_jargs *a) {
    pl_jv p[1];
    BIND(name, 1, "other");
    return p[0];
}

static bool is_int_kind(pl_jv v) { return v.kind == JV_INT; }

/* str(v).isupper() / .islower(): no cased character of the other case (or
 * titlecase), and at least one of this one */
bool pl_py_str_is_case(pl_jx *x, pl_jv v, bool upper);
bool pl_py_str_is_case(pl_jx *x, pl_jv v, bool upper) {
    pl_jv s = pl_jv_to_str(x, v);
    bool cased = false;
    for (size_t i = 0; i < s.v.s->len;) {
        uint32_t c;
        i += pl_ju8_decode(s.v.s->s + i, &c);
        uint16_t f = pl_py_flags(c);
        if ((f & (upper ? PL_PY_LOWER : PL_PY_UPPER)) || (f & PL_PY_TITLE)) return false;
        if (f & (upper ? PL_PY_UPPER : PL_PY_LOWER)) cased = true;
    }
    return cased;
}

bool pl_jtest_call(pl_jx *x, int id, const char *name, pl_jv v, pl_jargs *a) {
    if (id != T_DIVISIBLEBY && id != T_SAMEAS && id != T_IN && id < T_EQ && (a->npos || a->nkw))
        pl_jx_fail(x, "test '%s' takes no arguments", name);
    switch (id) {
    case T_ODD:
    case T_EVEN: {
        pl_jv m = pl_jx_binop(x, JOP_MOD, v, pl_jv_int(2));
        return pl_jv_equal(x, m, pl_jv_int(id == T_ODD ? 1 : 0));
    }
    case T_DIVISIBLEBY: {
        pl_jv n = one_arg(x, name, a);
        return pl_jv_equal(x, pl_jx_binop(x, JOP_MOD, v, n), pl_jv_int(0));
    }
    case T_DEFINED: return v.kind != JV_UNDEF;
    case T_UNDEFINED: return v.kind == JV_UNDEF;
    case T_FILTER: return v.kind == JV_STR && (pl_jfilter_id(v.v.s->s) >= 0 || pl_jfilter_known_unsupported(v.v.s->s));
    case T_TEST: return v.kind == JV_STR && pl_jtest_id(v.v.s->s) >= 0;
    case T_NONE: return v.kind == JV_NONE;
    case T_BOOLEAN: return v.kind == JV_BOOL;
    case T_FALSE: return v.kind == JV_BOOL && !v.v.i;
    case T_TRUE: return v.kind == JV_BOOL && v.v.i;
    case T_INTEGER: return is_int_kind(v);
    case T_FLOAT: return v.kind == JV_FLOAT;
    case T_LOWER: return pl_py_str_is_case(x, v, false);
    case T_UPPER: return pl_py_str_is_case(x, v, true);
    case T_STRING: return v.kind == JV_STR;
    case T_MAPPING: return v.kind == JV_DICT;
    case T_NUMBER: return pl_jv_is_num(v);
    case T_SEQUENCE:
        return v.kind == JV_STR || v.kind == JV_LIST || v.kind == JV_TUPLE || v.kind == JV_DICT ||
               v.kind == JV_RANGE || v.kind == JV_UNDEF;
    case T_ITERABLE:
        return v.kind == JV_STR || v.kind == JV_LIST || v.kind == JV_TUPLE || v.kind == JV_DICT ||
               v.kind == JV_RANGE || v.kind == JV_UNDEF || v.kind == JV_GEN || v.kind == JV_VIEW || v.kind == JV_LOOP;
    case T_CALLABLE:
        return v.kind == JV_MACRO || v.kind == JV_FUNC || v.kind == JV_METHOD || v.kind == JV_UNDEF || v.kind == JV_LOOP;
    case T_SAMEAS: {
        pl_jv o = one_arg(x, name, a);
        if (v.kind != o.kind) return false;
        switch ((pl_jv_kind)v.kind) {
        case JV_NONE: return true;
        case JV_BOOL: return v.v.i == o.v.i;
        case JV_INT:
            if (v.v.i >= -5 && v.v.i <= 256) return v.v.i == o.v.i;
            pl_jx_unsupported(x, "'sameas' on integers outside Python's small-int cache");
        case JV_STR: case JV_FLOAT:
            pl_jx_unsupported(x, "'sameas' on strings or floats (Python object identity)");
        case JV_UNDEF: return false;
        default: return v.v.l == o.v.l;
        }
    }
    case T_ESCAPED: return v.kind == JV_STR && (v.flags & JV_MARKUP);
    case T_IN: return pl_jx_contains(x, one_arg(x, name, a), v);
    case T_EQ: return pl_jv_equal(x, v, one_arg(x, name, a));
    case T_NE: return !pl_jv_equal(x, v, one_arg(x, name, a));
    default: {
        pl_jv o = one_arg(x, name, a);
        int c = pl_jv_compare(x, v, o, id == T_GT ? ">" : id == T_GE ? ">=" : id == T_LT ? "<" : "<=");
        if (c == 2) return false;
        return id == T_GT ? c > 0 : id == T_GE ? c >= 0 : id == T_LT ? c < 0 : c <= 0;
    }
    }
}

/* A test named at run time (select/reject): its id or an error. */
static int runtime_test(pl_jx *x, pl_jv name) {
    if (name.kind != JV_STR) pl_jx_fail(x, "test name must be a string");
    int id = pl_jtest_id(name.v.s->s);
    if (id < 0) pl_jx_fail(x, "No test named '%s'.", name.v.s->s);
    return id;
}

/* ---- filters ------------------------------------------------------ */

enum {
    F_ABS, F_ATTR, F_CAPITALIZE, F_CENTER, F_COUNT, F_DEFAULT, F_DICTSORT, F_ESCAPE, F_FIRST, F_FLOAT,
    F_FORCEESCAPE, F_FORMAT, F_INDENT, F_INT, F_ITEMS, F_JOIN, F_LAST, F_LIST, F_LOWER, F_MAP, F_MAX, F_MIN,
    F_REJECT, F_REJECTATTR, F_REPLACE, F_REVERSE, F_ROUND, F_SAFE, F_SELECT, F_SELECTATTR, F_SORT, F_STRING,
    F_SUM, F_TITLE, F_TOJSON, F_TRIM, F_UNIQUE, F_UPPER, F_WORDCOUNT
};

static const struct {
    const char *name;
    int id;
} FILTERS[] = {
    {"abs", F_ABS}, {"attr", F_ATTR}, {"capitalize", F_CAPITALIZE}, {"center", F_CENTER}, {"count", F_COUNT},
    {"length", F_COUNT}, {"d", F_DEFAULT}, {"default", F_DEFAULT}, {"dictsort", F_DICTSORT}, {"e", F_ESCAPE},
    {"escape", F_ESCAPE}, {"first", F_FIRST}, {"float", F_FLOAT}, {"forceescape", F_FORCEESCAPE},
    {"format", F_FORMAT}, {"indent", F_INDENT}, {"int", F_INT}, {"items", F_ITEMS}, {"join", F_JOIN},
    {"last", F_LAST}, {"list", F_LIST}, {"lower", F_LOWER}, {"map", F_MAP}, {"max", F_MAX}, {"min", F_MIN},
    {"reject", F_REJECT}, {"rejectattr", F_REJECTATTR}, {"replace", F_REPLACE}, {"reverse", F_REVERSE},
    {"round", F_ROUND}, {"safe", F_SAFE}, {"select", F_SELECT}, {"selectattr", F_SELECTATTR}, {"sort", F_SORT},
    {"string", F_STRING}, {"sum", F_SUM}, {"title", F_TITLE}, {"tojson", F_TOJSON}, {"trim", F_TRIM},
    {"unique", F_UNIQUE}, {"upper", F_UPPER}, {"wordcount", F_WORDCOUNT},
};

int pl_jfilter_id(const char *name) {
    for (size_t i = 0; i < sizeof FILTERS / sizeof FILTERS[0]; i++)
        if (!strcmp(FILTERS[i].name, name)) return FILTERS[i].id;
    return -1;
}

bool pl_jfilter_known_unsupported(const char *name) {
    static const char *const others[] = {"batch", "filesizeformat", "groupby", "pprint", "random", "slice",
                                         "striptags", "truncate", "urlencode", "urlize", "wordwrap", "xmlattr",
                                         "mark_unsafe", NULL};
    for (int i = 0; others[i]; i++)
        if (!strcmp(others[i], name)) return true;
    return false;
}

pl_jv pl_jstr_strip(pl_jx *x, pl_jv s, pl_jv chars, int which);

static pl_jv f_tojson(pl_jx *x, pl_jv v, pl_jargs *a) {
    pl_jv p[4] = {pl_jv_bool(false), pl_jv_none_v, pl_jv_none_v, pl_jv_bool(false)};
    BIND("tojson", 0, "ensure_ascii", "indent", "separators", "sort_keys");
    pl_json_opts o = {0};
    o.ensure_ascii = pl_jv_truthy(x, p[0]);
    o.sort_keys = pl_jv_truthy(x, p[3]);
    pl_jv ind = p[1];
    if (ind.kind != JV_NONE) {
        o.has_indent = true;
        if (ind.kind == JV_STR) {
            o.indent = ind.v.s->s;
            o.indent_len = ind.v.s->len;
        } else if (ind.kind == JV_INT || ind.kind == JV_BOOL) {
            int64_t n = ind.v.i < 0 ? 0 : ind.v.i;
            if (n > 4096) pl_jx_unsupported(x, "tojson indent over 4096");
            char *sp = pl_jx_alloc(x, (size_t)n + 1);
            memset(sp, ' ', (size_t)n);
            o.indent = sp;
            o.indent_len = (size_t)n;
        } else {
            pl_jx_fail(x, "can't multiply sequence by non-int of type '%s'", pl_jv_type_name(ind));
        }
    }
    if (p[2].kind != JV_NONE) {
        size_t n;
        const pl_jv *sep = pl_jv_iterate(x, p[2], &n);
        if (n != 2 || sep[0].kind != JV_STR || sep[1].kind != JV_STR) pl_jx_fail(x, "tojson separators must be two strings");
        o.item_sep = sep[0].v.s->s;
        o.item_sep_len = sep[0].v.s->len;
        o.key_sep = sep[1].v.s->s;
        o.key_sep_len = sep[1].v.s->len;
    } else {
        o.item_sep = o.has_indent ? "," : ", ";
        o.item_sep_len = strlen(o.item_sep);
        o.key_sep = ": ";
        o.key_sep_len = 2;
    }
    pl_jbuf b = {0};
    pl_json_dump(x, &b, v, &o, 0);
    return pl_jv_str_buf(x, &b);
}

/* select / reject / selectattr / rejectattr */
static pl_jv f_select(pl_jx *x, pl_jv v, pl_jargs *a, bool reject, bool attr) {
    pl_jv out = pl_jv_list(x, 0);
    if (!pl_jv_truthy(x, v)) return pl_jv_gen(x, out);
    size_t off = 0;
    pl_jv attrname = pl_jv_none_v;
    if (attr) {
        if (a->npos < 1) pl_jx_fail(x, "Missing parameter for attribute name");
        attrname = a->pos[0];
        off = 1;
    }
    int test = -1;
    const char *tname = NULL;
    if (a->npos > off) {
        test = runtime_test(x, a->pos[off]);
        tname = a->pos[off].v.s->s;
        off++;
    } else if (a->nkw) {
        pl_jx_fail(x, "select/reject keyword arguments without a test name");
    }
    pl_jargs targs = {a->npos > off ? a->pos + off : NULL, a->npos - off, a->kwn, a->kwv, a->nkw};
    size_t n;
    const pl_jv *items = pl_jv_iterate(x, v, &n);
    for (size_t i = 0; i < n; i++) {
        pl_jx_step(x);
        pl_jv it = attr ? get_path(x, items[i], attrname, pl_jv_none_v, false) : items[i];
        bool r = test < 0 ? pl_jv_truthy(x, it) : pl_jtest_call(x, test, tname, it, &targs);
        if (r != reject) pl_jv_list_push(x, out, items[i]);
    }
    return pl_jv_gen(x, out);
}

static pl_jv f_map(pl_jx *x, pl_jv v, pl_jargs *a) {
    pl_jv out = pl_jv_list(x, 0);
    bool by_attr = a->npos == 0;
    pl_jv attr = pl_jv_none_v, dflt = pl_jv_none_v;
    bool has_default = false;
    int fid = -1;
    const char *fname = NULL;
    if (by_attr) {
        bool have_attr = false;
        for (size_t k = 0; k < a->nkw; k++) {
            if (!strcmp(a->kwn[k], "attribute")) {
                attr = a->kwv[k];
                have_attr = true;
            } else if (!strcmp(a->kwn[k], "default")) {
                dflt = a->kwv[k];
                has_default = dflt.kind != JV_NONE;
            } else {
                pl_jx_fail(x, "Unexpected keyword argument '%s'", a->kwn[k]);
            }
        }
        if (!have_attr) pl_jx_fail(x, "map requires a filter argument");
    } else {
        if (a->pos[0].kind != JV_STR) pl_jx_fail(x, "map: the filter name must be a string");
        fname = a->pos[0].v.s->s;
        fid = pl_jfilter_id(fname);
        if (fid < 0) {
            if (pl_jfilter_known_unsupported(fname)) pl_jx_unsupported(x, "the filter '%s'", fname);
            pl_jx_fail(x, "No filter named '%s'.", fname);
        }
    }
    if (!pl_jv_truthy(x, v)) return pl_jv_gen(x, out);
    size_t n;
    const pl_jv *items = pl_jv_iterate(x, v, &n);
    pl_jargs fargs = {a->npos ? a->pos + 1 : NULL, a->npos ? a->npos - 1 : 0, a->kwn, a->kwv, a->nkw};
    for (size_t i = 0; i < n; i++) {
        pl_jx_step(x);
        pl_jv r = by_attr ? get_path(x, items[i], attr, dflt, has_default) : pl_jfilter_call(x, fid, fname, items[i], &fargs);
        pl_jv_list_push(x, out, r);
    }
    return pl_jv_gen(x, out);
}

static pl_jv f_sort(pl_jx *x, pl_jv v, pl_jargs *a) {
    pl_jv p[3] = {pl_jv_bool(false), pl_jv_bool(false), pl_jv_none_v};
    BIND("sort", 0, "reverse", "case_sensitive", "attribute");
    size_t n;
    const pl_jv *items = pl_jv_iterate(x, v, &n);
    sort_item *si = n ? pl_jx_alloc_array(x, n, sizeof *si) : NULL;
    /* attribute "a,b" sorts by a list of keys */
    size_t nattr = 0;
    pl_jv attrs[16];
    if (p[2].kind == JV_STR) {
        const char *s = p[2].v.s->s;
        size_t st = 0, len = p[2].v.s->len;
        for (size_t i = 0; i <= len; i++)
            if (i == len || s[i] == ',') {
                if (nattr == 16) pl_jx_unsupported(x, "sort on more than 16 attributes");
                attrs[nattr++] = pl_jv_str(x, s + st, i - st);
                st = i + 1;
            }
    } else if (p[2].kind != JV_NONE) {
        attrs[nattr++] = p[2];
    }
    for (size_t i = 0; i < n; i++) {
        pl_jv key;
        if (nattr == 0) {
            key = pl_jv_list(x, 1);
            pl_jv k = items[i];
            key.v.l->items[0] = pl_jv_truthy(x, p[1]) ? k : ignore_case(x, k);
            key.v.l->n = 1;
        } else {
            key = pl_jv_list(x, nattr);
            for (size_t k = 0; k < nattr; k++) {
                pl_jv kv = get_path(x, items[i], attrs[k], pl_jv_none_v, false);
                key.v.l->items[k] = pl_jv_truthy(x, p[1]) ? kv : ignore_case(x, kv);
            }
            key.v.l->n = nattr;
        }
        si[i].key = key;
        si[i].val = items[i];
    }
    sort_items(x, si, n, pl_jv_truthy(x, p[0]));
    pl_jv out = pl_jv_list(x, n);
    for (size_t i = 0; i < n; i++) out.v.l->items[i] = si[i].val;
    out.v.l->n = n;
    return out;
}

static pl_jv f_dictsort(pl_jx *x, pl_jv v, pl_jargs *a) {
    pl_jv p[3] = {pl_jv_bool(false), pl_jv_cstr(x, "key"), pl_jv_bool(false)};
    BIND("dictsort", 0, "case_sensitive", "by", "reverse");
    if (v.kind != JV_DICT) pl_jx_fail(x, "dictsort needs a mapping");
    int pos;
    if (p[1].kind == JV_STR && !strcmp(p[1].v.s->s, "key")) pos = 0;
    else if (p[1].kind == JV_STR && !strcmp(p[1].v.s->s, "value")) pos = 1;
    else pl_jx_fail(x, "You can only sort by either \"key\" or \"value\"");
    size_t n = v.v.d->n;
    sort_item *si = n ? pl_jx_alloc_array(x, n, sizeof *si) : NULL;
    for (size_t i = 0; i < n; i++) {
        pl_jv t = pl_jv_tuple(x, 2);
        t.v.l->items[0] = v.v.d->keys[i];
        t.v.l->items[1] = v.v.d->vals[i];
        pl_jv k = pos ? v.v.d->vals[i] : v.v.d->keys[i];
        si[i].key = pl_jv_truthy(x, p[0]) ? k : ignore_case(x, k);
        si[i].val = t;
    }
    sort_items(x, si, n, pl_jv_truthy(x, p[2]));
    pl_jv out = pl_jv_list(x, n);
    for (size_t i = 0; i < n; i++) out.v.l->items[i] = si[i].val;
    out.v.l->n = n;
    return out;
}

static pl_jv f_minmax(pl_jx *x, pl_jv v, pl_jargs *a, bool is_max) {
    pl_jv p[2] = {pl_jv_bool(false), pl_jv_none_v};
    BIND(is_max ? "max" : "min", 0, "case_sensitive", "attribute");
    size_t n;
    const pl_jv *items = pl_jv_iterate(x, v, &n);
    if (n == 0) return pl_jv_undef_msg(x, "No aggregated item, sequence was empty.");
    bool cs = pl_jv_truthy(x, p[0]);
    size_t best = 0;
    pl_jv bk = p[1].kind == JV_NONE ? items[0] : get_path(x, items[0], p[1], pl_jv_none_v, false);
    if (!cs) bk = ignore_case(x, bk);
    for (size_t i = 1; i < n; i++) {
        pl_jv k = p[1].kind == JV_NONE ? items[i] : get_path(x, items[i], p[1], pl_jv_none_v, false);
        if (!cs) k = ignore_case(x, k);
        int c = pl_jv_compare(x, k, bk, is_max ? ">" : "<");
        if (c != 2 && (is_max ? c > 0 : c < 0)) {
            best = i;
            bk = k;
        }
    }
    return items[best];
}

/* float() of a string, as Python accepts it */
static bool parse_py_float(const char *s, size_t len, double *out) {
    size_t a = 0, b = len;
    while (a < b && pl_py_isspace((unsigned char)s[a])) a++;
    while (b > a && pl_py_isspace((unsigned char)s[b - 1])) b--;
    if (a == b || b - a > 200) return false;
    char buf[256];
    size_t n = 0;
    size_t i = a;
    if (s[i] == '+' || s[i] == '-') buf[n++] = s[i++];
    const char *w = s + i;
    size_t wl = b - i;
    if ((wl == 3 && !strncasecmp(w, "inf", 3)) || (wl == 8 && !strncasecmp(w, "infinity", 8))) {
        *out = buf[0] == '-' ? -INFINITY : INFINITY;
        return true;
    }
    if (wl == 3 && !strncasecmp(w, "nan", 3)) {
        *out = NAN;
        return true;
    }
    bool digits = false, dot = false, exp = false;
    char prev = 0;
    for (; i < b; i++) {
        char c = s[i];
        if (c >= '0' && c <= '9') digits = true;
        else if (c == '_') {
            if (!(prev >= '0' && prev <= '9') || i + 1 >= b || !(s[i + 1] >= '0' && s[i + 1] <= '9')) return false;
            prev = c;
            continue;
        } else if (c == '.' && !dot && !exp) dot = true;
        else if ((c == 'e' || c == 'E') && digits && !exp) {
            exp = true;
            if (i + 1 < b && (s[i + 1] == '+' || s[i + 1] == '-')) buf[n++] = s[i++];
            if (i + 1 >= b) return false;
            c = 'e';
        } else return false;
        buf[n++] = c == 'E' ? 'e' : s[i];
        prev = c;
    }
    if (!digits) return false;
    buf[n] = '\0';
    *out = strtod(buf, NULL);
    return true;
}

/* int(str, 10) as Python accepts it */
static bool parse_py_int(const char *s, size_t len, int64_t *out, bool *overflow) {
    size_t a = 0, b = len;
    *overflow = false;
    while (a < b && pl_py_isspace((unsigned char)s[a])) a++;
    while (b > a && pl_py_isspace((unsigned char)s[b - 1])) b--;
    if (a == b) return false;
    bool neg = false;
    if (s[a] == '+' || s[a] == '-') neg = s[a++] == '-';
    if (a == b) return false;
    uint64_t v = 0;
    char prev = '_';
    for (size_t i = a; i < b; i++) {
        char c = s[i];
        if (c == '_') {
            if (prev == '_' || i + 1 == b) return false;
            prev = c;
            continue;
        }
        if (c < '0' || c > '9') return false;
        if (v > (UINT64_MAX - 9) / 10) *overflow = true;
        v = v * 10 + (uint64_t)(c - '0');
        prev = c;
    }
    if (v > (uint64_t)INT64_MAX + (neg ? 1 : 0)) *overflow = true;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

static pl_jv f_int(pl_jx *x, pl_jv v, pl_jargs *a) {
    pl_jv p[2] = {pl_jv_int(0), pl_jv_int(10)};
    BIND("int", 0, "default", "base");
    if (v.kind == JV_UNDEF) pl_jx_undef_fail(x, v); /* int(Undefined) raises */
    if (v.kind == JV_INT) return v;
    if (v.kind == JV_BOOL) return pl_jv_int(v.v.i);
    if (v.kind == JV_STR) {
        if (!(p[1].kind == JV_INT && p[1].v.i == 10)) pl_jx_unsupported(x, "int() with a base other than 10");
        int64_t r;
        bool of;
        if (parse_py_int(v.v.s->s, v.v.s->len, &r, &of)) {
            if (of) pl_jx_unsupported(x, "integers beyond 64 bits");
            return pl_jv_int(r);
        }
    }
    double d;
    if (v.kind == JV_FLOAT) d = v.v.f;
    else if (v.kind == JV_STR && parse_py_float(v.v.s->s, v.v.s->len, &d)) {
    } else return p[0];
    if (isnan(d)) return p[0];
    if (isinf(d)) pl_jx_fail(x, "cannot convert float infinity to integer");
    if (d >= 9.2e18 || d <= -9.2e18) pl_jx_unsupported(x, "integers beyond 64 bits");
    return pl_jv_int((int64_t)d);
}

static pl_jv f_float(pl_jx *x, pl_jv v, pl_jargs *a) {
    pl_jv p[1] = {pl_jv_float(0.0)};
    BIND("float", 0, "default");
    if (v.kind == JV_UNDEF) pl_jx_undef_fail(x, v);
    if (v.kind == JV_FLOAT) return v;
    if (v.kind == JV_INT || v.kind == JV_BOOL) return pl_jv_float((double)v.v.i);
    double d;
    if (v.kind == JV_STR && parse_py_float(v.v.s->s, v.v.s->len, &d)) return pl_jv_float(d);
    return p[0];
}

static pl_jv f_round(pl_jx *x, pl_jv v, pl_jargs *a) {
    pl_jv p[2] = {pl_jv_int(0), pl_jv_cstr(x, "common")};
    BIND("round", 0, "precision", "method");
    int64_t prec = want_int(x, p[0], "precision");
    if (p[1].kind != JV_STR) pl_jx_fail(x, "method must be common, ceil or floor");
    const char *m = p[1].v.s->s;
    if (strcmp(m, "common") && strcmp(m, "ceil") && strcmp(m, "floor")) pl_jx_fail(x, "method must be common, ceil or floor");
    if (v.kind == JV_UNDEF) pl_jx_undef_fail(x, v);
    if (!pl_jv_is_num(v)) pl_jx_fail(x, "type %s doesn't define __round__ method", pl_jv_type_name(v));
    if (prec < 0 || prec > 30) pl_jx_unsupported(x, "round() with precision %lld", (long long)prec);
    if (!strcmp(m, "common")) {
        if (v.kind != JV_FLOAT) return pl_jv_int(v.v.i);
        if (!isfinite(v.v.f)) return v;
        char buf[400];
        snprintf(buf, sizeof buf, "%.*f", (int)prec, v.v.f);
        return pl_jv_float(strtod(buf, NULL));
    }
    double scale = pow(10.0, (double)prec);
    double d = (v.kind == JV_FLOAT ? v.v.f : (double)v.v.i) * scale;
    d = !strcmp(m, "ceil") ? ceil(d) : floor(d);
    if (v.kind != JV_FLOAT && prec == 0) return pl_jv_float(d); /* math.ceil(int) / 1 -> float */
    return pl_jv_float(d / scale);
}

static pl_jv f_indent(pl_jx *x, pl_jv v, pl_jargs *a) {
    pl_jv p[3] = {pl_jv_int(4), pl_jv_bool(false), pl_jv_bool(false)};
    BIND("indent", 0, "width", "first", "blank");
    pl_jv s = pl_jv_to_str(x, v.kind == JV_UNDEF ? pl_jv_cstr(x, "") : v);
    pl_jbuf ind = {0};
    if (p[0].kind == JV_STR) {
        pl_jbuf_put(x, &ind, p[0].v.s->s, p[0].v.s->len);
    } else {
        int64_t w = want_int(x, p[0], "width");
        for (int64_t i = 0; i < w && i < 4096; i++) pl_jbuf_putc(x, &ind, ' ');
    }
    /* s + "\n", then splitlines() */
    pl_jbuf src = {0};
    pl_jbuf_put(x, &src, s.v.s->s, s.v.s->len);
    pl_jbuf_putc(x, &src, '\n');
    pl_jbuf out = {0};
    bool blank = pl_jv_truthy(x, p[2]);
    if (pl_jv_truthy(x, p[1])) pl_jbuf_put(x, &out, ind.p, ind.len);
    size_t i = 0, line = 0;
    while (i < src.len) {
        size_t st = i;
        uint32_t cp = 0;
        size_t k = 0;
        while (i < src.len) {
            k = pl_ju8_decode(src.p + i, &cp);
            if (pl_py_islinebreak(cp)) break;
            i += k;
        }
        size_t end = i;
        if (i < src.len) {
            i += k;
            if (cp == '\r' && i < src.len && src.p[i] == '\n') i++;
        }
        if (line > 0) {
            pl_jbuf_putc(x, &out, '\n');
            if (blank || end > st) pl_jbuf_put(x, &out, ind.p, ind.len);
        }
        pl_jbuf_put(x, &out, src.p + st, end - st);
        line++;
    }
    return pl_jv_str_markup(pl_jv_str_buf(x, &out), s.flags & JV_MARKUP);
}

/* jinja2's title: split at runs of [-\s({\[<], then each piece is
 * piece[0].upper() + piece[1:].lower() */
static bool title_sep(uint32_t c) {
    return c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || pl_py_isspace(c);
}

static pl_jv f_title(pl_jx *x, pl_jv v) {
    pl_jv s = want_str(x, v);
    const char *p = s.v.s->s;
    size_t n = s.v.s->len, i = 0;
    pl_jbuf b = {0};
    while (i < n) {
        size_t st = i;
        uint32_t c;
        size_t k = pl_ju8_decode(p + i, &c);
        bool sep = title_sep(c);
        while (i < n) {
            k = pl_ju8_decode(p + i, &c);
            if (title_sep(c) != sep) break;
            i += k;
        }
        size_t first = pl_ju8_decode(p + st, &c);
        pl_jv head = pl_jstr_case(x, pl_jv_str(x, p + st, first), PL_CASE_UPPER);
        pl_jv rest = pl_jstr_case(x, pl_jv_str(x, p + st + first, i - st - first), PL_CASE_LOWER);
        pl_jbuf_put(x, &b, head.v.s->s, head.v.s->len);
        pl_jbuf_put(x, &b, rest.v.s->s, rest.v.s->len);
    }
    return pl_jv_str_buf(x, &b);
}

static pl_jv f_join(pl_jx *x, pl_jv v, pl_jargs *a) {
    pl_jv p[2] = {pl_jv_cstr(x, ""), pl_jv_none_v};
    BIND("join", 0, "d", "attribute");
    pl_jv sep = pl_jv_to_str(x, p[0]);
    size_t n;
    const pl_jv *items = pl_jv_iterate(x, v, &n);
    pl_jbuf b = {0};
    for (size_t i = 0; i < n; i++) {
        if (i) pl_jbuf_put(x, &b, sep.v.s->s, sep.v.s->len);
        pl_jv it = p[1].kind == JV_NONE ? items[i] : get_path(x, items[i], p[1], pl_jv_none_v, false);
        pl_jv_write_str(x, &b, it);
    }
    return pl_jv_str_buf(x, &b);
}

static pl_jv f_unique(pl_jx *x, pl_jv v, pl_jargs *a) {
    pl_jv p[2] = {pl_jv_bool(false), pl_jv_none_v};
    BIND("unique", 0, "case_sensitive", "attribute");
    size_t n;
    const pl_jv *items = pl_jv_iterate(x, v, &n);
    pl_jv seen = pl_jv_dict(x), out = pl_jv_list(x, 0);
    for (size_t i = 0; i < n; i++) {
        pl_jv k = p[1].kind == JV_NONE ? items[i] : get_path(x, items[i], p[1], pl_jv_none_v, false);
        if (!pl_jv_truthy(x, p[0])) k = ignore_case(x, k);
        pl_jv dummy;
        if (pl_jv_dict_get(x, seen, k, &dummy)) continue;
        pl_jv_dict_set(x, seen, k, pl_jv_none_v);
        pl_jv_list_push(x, out, items[i]);
    }
    return pl_jv_gen(x, out);
}

static pl_jv f_sum(pl_jx *x, pl_jv v, pl_jargs *a) {
    pl_jv p[2] = {pl_jv_none_v, pl_jv_int(0)};
    BIND("sum", 0, "attribute", "start");
    if (p[1].kind == JV_STR) pl_jx_fail(x, "sum() can't sum strings [use ''.join(seq) instead]");
    size_t n;
    const pl_jv *items = pl_jv_iterate(x, v, &n);
    pl_jv acc = p[1];
    for (size_t i = 0; i < n; i++) {
        pl_jv it = p[0].kind == JV_NONE ? items[i] : get_path(x, items[i], p[0], pl_jv_none_v, false);
        acc = pl_jx_binop(x, JOP_ADD, acc, it);
    }
    return acc;
}

static pl_jv f_last(pl_jx *x, pl_jv v) {
    switch ((pl_jv_kind)v.kind) {
    case JV_UNDEF: return pl_jv_undef_msg(x, "No last item, sequence was empty.");
    case JV_GEN: pl_jx_fail(x, "'generator' object is not reversible");
    case JV_STR: case JV_LIST: case JV_TUPLE: case JV_DICT: case JV_VIEW: case JV_RANGE: {
        size_t n;
        const pl_jv *items = pl_jv_iterate(x, v, &n);
        if (n == 0) return pl_jv_undef_msg(x, "No last item, sequence was empty.");
        return items[n - 1];
    }
    default: pl_jx_fail(x, "'%s' object is not reversible", pl_jv_type_name(v));
    }
}

static pl_jv f_reverse(pl_jx *x, pl_jv v) {
    if (v.kind == JV_STR) {
        size_t n;
        const pl_jv *ch = pl_jv_iterate(x, v, &n);
        pl_jbuf b = {0};
        for (size_t i = n; i > 0; i--) pl_jbuf_put(x, &b, ch[i - 1].v.s->s, ch[i - 1].v.s->len);
        return pl_jv_str_markup(pl_jv_str_buf(x, &b), v.flags & JV_MARKUP);
    }
    bool reversible = v.kind == JV_LIST || v.kind == JV_TUPLE || v.kind == JV_DICT || v.kind == JV_VIEW ||
                      v.kind == JV_RANGE || v.kind == JV_UNDEF;
    size_t n;
    const pl_jv *items = pl_jv_iterate(x, v, &n);
    pl_jv out = pl_jv_list(x, n);
    for (size_t i = 0; i < n; i++) out.v.l->items[i] = items[n - 1 - i];
    out.v.l->n = n;
    /* reversed() gives an iterator; a generator is copied into a list */
    return reversible ? pl_jv_gen(x, out) : out;
}

pl_jv pl_jfilter_call(pl_jx *x, int id, const char *name, pl_jv v, pl_jargs *a) {
    pl_jv p[4];
    switch (id) {
    case F_ABS:
        if (a->npos || a->nkw) pl_jx_fail(x, "abs() takes no arguments");
        if (v.kind == JV_FLOAT) return pl_jv_float(fabs(v.v.f));
        if (v.kind == JV_INT || v.kind == JV_BOOL) {
            if (v.v.i == INT64_MIN) pl_jx_unsupported(x, "integers beyond 64 bits");
            return pl_jv_int(v.v.i < 0 ? -v.v.i : v.v.i);
        }
        if (v.kind == JV_UNDEF) pl_jx_undef_fail(x, v);
        pl_jx_fail(x, "bad operand type for abs(): '%s'", pl_jv_type_name(v));
    case F_ATTR: {
        BIND("attr", 1, "name");
        if (p[0].kind != JV_STR) pl_jx_fail(x, "attribute name must be a string");
        return pl_jx_getattr_only(x, v, p[0].v.s->s);
    }
    case F_CAPITALIZE: return pl_jstr_case(x, want_str(x, v), PL_CASE_CAPITALIZE);
    case F_LOWER: return pl_jstr_case(x, want_str(x, v), PL_CASE_LOWER);
    case F_UPPER: return pl_jstr_case(x, want_str(x, v), PL_CASE_UPPER);
    case F_CENTER: {
        p[0] = pl_jv_int(80);
        BIND("center", 0, "width");
        pl_jargs ma = {p, 1, NULL, NULL, 0};
        pl_jv m = pl_jx_getattr(x, want_str(x, v), "center");
        return pl_jmeth_call(x, m, &ma);
    }
    case F_COUNT:
        if (a->npos || a->nkw) pl_jx_fail(x, "len() takes exactly one argument");
        return pl_jv_int((int64_t)pl_jv_len(x, v));
    case F_DEFAULT: {
        p[0] = pl_jv_cstr(x, "");
        p[1] = pl_jv_bool(false);
        BIND("default", 0, "default_value", "boolean");
        if (v.kind == JV_UNDEF || (pl_jv_truthy(x, p[1]) && !pl_jv_truthy(x, v))) return p[0];
        return v;
    }
    case F_DICTSORT: return f_dictsort(x, v, a);
    case F_ESCAPE:
        if (a->npos || a->nkw) pl_jx_fail(x, "escape() takes no arguments");
        return pl_jv_escape(x, v);
    case F_FORCEESCAPE:
        if (a->npos || a->nkw) pl_jx_fail(x, "forceescape() takes no arguments");
        return pl_jv_escape(x, pl_jv_str_markup(pl_jv_to_str(x, v), false));
    case F_FIRST: {
        if (a->npos || a->nkw) pl_jx_fail(x, "first() takes no arguments");
        if (v.kind == JV_GEN) {
            pl_jlist *l = v.v.l;
            if (l->pos >= l->n) return pl_jv_undef_msg(x, "No first item, sequence was empty.");
            return l->items[l->pos++];
        }
        size_t n;
        const pl_jv *items = pl_jv_iterate(x, v, &n);
        if (n == 0) return pl_jv_undef_msg(x, "No first item, sequence was empty.");
        return items[0];
    }
    case F_LAST:
        if (a->npos || a->nkw) pl_jx_fail(x, "last() takes no arguments");
        return f_last(x, v);
    case F_FLOAT: return f_float(x, v, a);
    case F_INT: return f_int(x, v, a);
    case F_FORMAT: {
        /* soft_str(value) % (kwargs or args) */
        pl_jv args;
        if (a->nkw) {
            args = pl_jv_dict(x);
            for (size_t k = 0; k < a->nkw; k++) pl_jv_dict_set(x, args, pl_jv_cstr(x, a->kwn[k]), a->kwv[k]);
        } else {
            args = pl_jv_tuple(x, a->npos);
            for (size_t k = 0; k < a->npos; k++) args.v.l->items[k] = a->pos[k];
        }
        return pl_py_percent_format(x, want_str(x, v), args);
    }
    case F_INDENT: return f_indent(x, v, a);
    case F_ITEMS: {
        if (a->npos || a->nkw) pl_jx_fail(x, "items() takes no arguments");
        pl_jv out = pl_jv_list(x, 0);
        if (v.kind == JV_UNDEF) return pl_jv_gen(x, out);
        if (v.kind != JV_DICT) pl_jx_fail(x, "Can only get item pairs from a mapping.");
        for (size_t i = 0; i < v.v.d->n; i++) {
            pl_jv t = pl_jv_tuple(x, 2);
            t.v.l->items[0] = v.v.d->keys[i];
            t.v.l->items[1] = v.v.d->vals[i];
            pl_jv_list_push(x, out, t);
        }
        return pl_jv_gen(x, out);
    }
    case F_JOIN: return f_join(x, v, a);
    case F_LIST:
        if (a->npos || a->nkw) pl_jx_fail(x, "list() takes no keyword arguments");
        return pl_jv_to_list(x, v);
    case F_MAP: return f_map(x, v, a);
    case F_MAX: return f_minmax(x, v, a, true);
    case F_MIN: return f_minmax(x, v, a, false);
    case F_REJECT: return f_select(x, v, a, true, false);
    case F_REJECTATTR: return f_select(x, v, a, true, true);
    case F_SELECT: return f_select(x, v, a, false, false);
    case F_SELECTATTR: return f_select(x, v, a, false, true);
    case F_REPLACE: {
        p[2] = pl_jv_none_v;
        BIND("replace", 2, "old", "new", "count");
        pl_jv s = pl_jv_str_markup(pl_jv_to_str(x, v.kind == JV_UNDEF ? pl_jv_cstr(x, "") : v), false);
        pl_jv margs[3] = {pl_jv_str_markup(pl_jv_to_str(x, p[0]), false), pl_jv_str_markup(pl_jv_to_str(x, p[1]), false),
                          p[2].kind == JV_NONE ? pl_jv_int(-1) : p[2]};
        pl_jargs ma = {margs, 3, NULL, NULL, 0};
        return pl_jmeth_call(x, pl_jx_getattr(x, s, "replace"), &ma);
    }
    case F_REVERSE:
        if (a->npos || a->nkw) pl_jx_fail(x, "reverse() takes no arguments");
        return f_reverse(x, v);
    case F_ROUND: return f_round(x, v, a);
    case F_SAFE:
        if (a->npos || a->nkw) pl_jx_fail(x, "safe() takes no arguments");
        return pl_jv_str_markup(pl_jv_to_str(x, v), true);
    case F_SORT: return f_sort(x, v, a);
    case F_STRING:
        if (a->npos || a->nkw) pl_jx_fail(x, "string() takes no arguments");
        return pl_jv_to_str(x, v);
    case F_SUM: return f_sum(x, v, a);
    case F_TITLE:
        if (a->npos || a->nkw) pl_jx_fail(x, "title() takes no arguments");
        return f_title(x, v);
    case F_TOJSON: return f_tojson(x, v, a);
    case F_TRIM: {
        p[0] = pl_jv_none_v;
        BIND("trim", 0, "chars");
        return pl_jstr_strip(x, want_str(x, v), p[0], 0);
    }
    case F_UNIQUE: return f_unique(x, v, a);
    case F_WORDCOUNT: {
        pl_jv s = want_str(x, v);
        /* \w+: runs of alphanumerics (str.isalnum()) and '_' */
        int64_t words = 0;
        bool in = false;
        for (size_t i = 0; i < s.v.s->len;) {
            uint32_t c;
            i += pl_ju8_decode(s.v.s->s + i, &c);
            bool w = c == '_' || (pl_py_flags(c) & (PL_PY_ALPHA | PL_PY_DECIMAL | PL_PY_DIGIT | PL_PY_NUMERIC));
            if (w && !in) words++;
            in = w;
        }
        return pl_jv_int(words);
    }
    default:
        pl_jx_unsupported(x, "the filter '%s'", name);
    }
}
