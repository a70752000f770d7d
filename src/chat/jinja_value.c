/*
 * jinja_value.c -- the value model with Python's semantics: construction,
 * dicts (insertion-ordered, hashed once they grow), equality (1 == 1.0 ==
 * True), ordering, truth, len() and iteration, and the Undefined rules of
 * jinja2 (printable and iterable as empty, an error for everything else).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/checked.h"
#include "base/strmap.h"
#include "chat/jinja_internal.h"

const pl_jv pl_jv_none_v = {.kind = JV_NONE};
const pl_jv pl_jv_undef_v = {.kind = JV_UNDEF};
const pl_jv pl_jv_true_v = {.kind = JV_BOOL, .v.i = 1};
const pl_jv pl_jv_false_v = {.kind = JV_BOOL, .v.i = 0};

pl_jv pl_jv_str(pl_jx *x, const char *s, size_t len) {
    if (len > SIZE_MAX - sizeof(pl_jstr) - 1) pl_jx_raise(x, POCKETLLM_ERR_NO_MEMORY, "string too long");
    pl_jstr *js = pl_jx_alloc(x, sizeof *js + len + 1);
    js->len = len;
    js->ncp = pl_utf8_count(s, len);
    if (len) memcpy(js->s, s, len);
    js->s[len] = '\0';
    pl_jv v = {.kind = JV_STR};
    v.v.s = js;
    return v;
}

pl_jv pl_jv_cstr(pl_jx *x, const char *s) { return pl_jv_str(x, s, strlen(s)); }

pl_jv pl_jv_str_markup(pl_jv s, bool markup) {
    if (markup) s.flags |= JV_MARKUP;
    else s.flags &= (uint8_t)~JV_MARKUP;
    return s;
}

pl_jv pl_jv_str_buf(pl_jx *x, const pl_jbuf *b) { return pl_jv_str(x, b->p ? b->p : "", b->len); }

pl_jv pl_jv_undef_msg(pl_jx *x, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pl_jundef *u = pl_jx_alloc(x, sizeof *u);
    u->msg = pl_jv_cstr(x, msg).v.s->s;
    pl_jv v = {.kind = JV_UNDEF};
    v.v.u = u;
    return v;
}

pl_jv pl_jv_undef_name(pl_jx *x, const char *name) { return pl_jv_undef_msg(x, "'%.200s' is undefined", name); }

/* jinja2's object_type_repr: "dict object", "None"... */
static void object_type_repr(pl_jv v, char *buf, size_t cap) {
    if (v.kind == JV_NONE) snprintf(buf, cap, "None");
    else if (v.kind == JV_NS) snprintf(buf, cap, "jinja2.utils.Namespace object");
    else if (v.kind == JV_STR && (v.flags & JV_MARKUP)) snprintf(buf, cap, "markupsafe.Markup object");
    else if (v.kind == JV_LOOP) snprintf(buf, cap, "jinja2.runtime.LoopContext object");
    else if (v.kind == JV_MACRO) snprintf(buf, cap, "jinja2.runtime.Macro object");
    else snprintf(buf, cap, "%s object", pl_jv_type_name(v));
}

pl_jv pl_jv_undef_attr(pl_jx *x, pl_jv obj, pl_jv name, bool as_item) {
    char type[64];
    object_type_repr(obj, type, sizeof type);
    if (name.kind == JV_STR) {
        /* jinja2 says "has no attribute" for string keys either way */
        (void)as_item;
        if (obj.kind == JV_NONE) return pl_jv_undef_msg(x, "'None' has no attribute '%.200s'", name.v.s->s);
        return pl_jv_undef_msg(x, "'%s' has no attribute '%.200s'", type, name.v.s->s);
    }
    pl_jbuf b = {0};
    pl_jv_write_repr(x, &b, name);
    pl_jbuf_putc(x, &b, '\0');
    if (b.len > 200) b.p[200] = '\0';
    return pl_jv_undef_msg(x, "%s has no element %s", type, b.p);
}

_Noreturn void pl_jx_undef_fail(pl_jx *x, pl_jv u) {
    if (u.aux == 1) pl_jx_fail(x, "'%.200s' is undefined", u.v.name);
    if (u.v.u && u.v.u->msg) pl_jx_fail(x, "%s", u.v.u->msg);
    pl_jx_fail(x, "undefined value");
}

pl_jv pl_jv_list(pl_jx *x, size_t cap) {
    pl_jlist *l = pl_jx_alloc(x, sizeof *l);
    if (cap) {
        l->items = pl_jx_alloc_array(x, cap, sizeof(pl_jv));
        l->cap = cap;
    }
    pl_jv v = {.kind = JV_LIST};
    v.v.l = l;
    return v;
}

pl_jv pl_jv_tuple(pl_jx *x, size_t n) {
    pl_jv v = pl_jv_list(x, n);
    for (size_t i = 0; i < n; i++) v.v.l->items[i].kind = JV_NONE;
    v.v.l->n = n;
    v.kind = JV_TUPLE;
    return v;
}

void pl_jv_list_push(pl_jx *x, pl_jv list, pl_jv item) {
    pl_jlist *l = list.v.l;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 4;
        pl_jv *items = pl_jx_alloc_array(x, cap, sizeof *items);
        if (l->n) memcpy(items, l->items, l->n * sizeof *items);
        l->items = items;
        l->cap = cap;
    }
    l->items[l->n++] = item;
}

pl_jv pl_jv_dict(pl_jx *x) {
    pl_jv v = {.kind = JV_DICT};
    v.v.d = pl_jx_alloc(x, sizeof(pl_jdict));
    return v;
}

pl_jv pl_jv_namespace(pl_jx *x) {
    pl_jv v = pl_jv_dict(x);
    v.kind = JV_NS;
    return v;
}

pl_jv pl_jv_gen(pl_jx *x, pl_jv list) {
    pl_jv v = list;
    if (list.kind != JV_LIST) v = pl_jv_to_list(x, list);
    v.kind = JV_GEN;
    return v;
}

pl_jv pl_jv_method(pl_jx *x, pl_jv self, int id) {
    pl_jmethod *m = pl_jx_alloc(x, sizeof *m);
    m->self = self;
    m->id = id;
    pl_jv v = {.kind = JV_METHOD};
    v.v.mt = m;
    return v;
}

const char *pl_jv_type_name(pl_jv v) {
    switch ((pl_jv_kind)v.kind) {
    case JV_UNDEF: return "Undefined";
    case JV_NONE: return "NoneType";
    case JV_BOOL: return "bool";
    case JV_INT: return "int";
    case JV_FLOAT: return "float";
    case JV_STR: return (v.flags & JV_MARKUP) ? "Markup" : "str";
    case JV_LIST: return "list";
    case JV_TUPLE: return "tuple";
    case JV_DICT: return "dict";
    case JV_NS: return "Namespace";
    case JV_MACRO: return "Macro";
    case JV_FUNC: return "function";
    case JV_METHOD: return "builtin_function_or_method";
    case JV_LOOP: return "LoopContext";
    case JV_GEN: return "generator";
    case JV_VIEW: return v.aux == JV_VIEW_KEYS ? "dict_keys" : v.aux == JV_VIEW_VALUES ? "dict_values" : "dict_items";
    case JV_RANGE: return "range";
    }
    return "object";
}

/* ---- hashing and dicts -------------------------------------------- */

/* Tuples nested deeper than this count as unhashable (Python would stop
 * with a RecursionError); it keeps hashing off the stack's edge. */
#define MAX_HASH_DEPTH 200

static bool hashable_at(pl_jv v, int depth) {
    switch ((pl_jv_kind)v.kind) {
    case JV_NONE: case JV_BOOL: case JV_INT: case JV_FLOAT: case JV_STR: case JV_UNDEF: case JV_RANGE:
        return true;
    case JV_TUPLE:
        if (depth >= MAX_HASH_DEPTH) return false;
        for (size_t i = 0; i < v.v.l->n; i++)
            if (!hashable_at(v.v.l->items[i], depth + 1)) return false;
        return true;
    default:
        return false;
    }
}

bool pl_jv_hashable(pl_jv v) { return hashable_at(v, 0); }

static uint64_t mix64(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

uint64_t pl_jv_hash(pl_jv v) {
    switch ((pl_jv_kind)v.kind) {
    case JV_NONE: return 0x9e3779b97f4a7c15ull;
    case JV_UNDEF: return 0x5bd1e995ull;
    case JV_BOOL:
    case JV_INT: return mix64((uint64_t)v.v.i);
    case JV_FLOAT: {
        double f = v.v.f;
        /* equal numbers hash alike: 2.0 like 2 */
        if (f == floor(f) && f >= -9.2e18 && f <= 9.2e18) return mix64((uint64_t)(int64_t)f);
        uint64_t bits;
        memcpy(&bits, &f, sizeof bits);
        return mix64(bits ^ 0x1234567ull);
    }
    case JV_STR: return pl_hash_bytes(v.v.s->s, v.v.s->len);
    case JV_TUPLE: {
        /* (hashable tuples are at most MAX_HASH_DEPTH deep) */
        uint64_t h = 0x345678ull;
        for (size_t i = 0; i < v.v.l->n; i++) h = mix64(h ^ pl_jv_hash(v.v.l->items[i]));
        return h;
    }
    default: return mix64((uint64_t)(uintptr_t)v.v.l);
    }
}

static size_t dict_find(pl_jx *x, const pl_jdict *d, pl_jv key) {
    if (!d->index) {
        for (size_t i = 0; i < d->n; i++)
            if (pl_jv_equal(x, d->keys[i], key)) return i;
        return SIZE_MAX;
    }
    size_t mask = d->index_cap - 1;
    for (size_t s = pl_jv_hash(key) & mask;; s = (s + 1) & mask) {
        uint32_t e = d->index[s];
        if (!e) return SIZE_MAX;
        if (pl_jv_equal(x, d->keys[e - 1], key)) return e - 1;
    }
}

static void dict_reindex(pl_jx *x, pl_jdict *d) {
    size_t cap = 16;
    while (cap < d->cap * 2) cap *= 2;
    d->index = pl_jx_alloc_array(x, cap, sizeof *d->index);
    d->index_cap = cap;
    for (size_t i = 0; i < d->n; i++) {
        size_t s = pl_jv_hash(d->keys[i]) & (cap - 1);
        while (d->index[s]) s = (s + 1) & (cap - 1);
        d->index[s] = (uint32_t)(i + 1);
    }
}

void pl_jv_dict_set(pl_jx *x, pl_jv dict, pl_jv key, pl_jv val) {
    pl_jdict *d = dict.v.d;
    if (!pl_jv_hashable(key)) pl_jx_fail(x, "unhashable type: '%s'", pl_jv_type_name(key));
    size_t i = dict_find(x, d, key);
    if (i != SIZE_MAX) {
        d->vals[i] = val; /* Python keeps the first key, takes the new value */
        return;
    }
    if (d->n >= UINT32_MAX - 1) pl_jx_raise(x, POCKETLLM_ERR_NO_MEMORY, "dict too large");
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 4;
        pl_jv *k = pl_jx_alloc_array(x, cap, sizeof *k), *v = pl_jx_alloc_array(x, cap, sizeof *v);
        if (d->n) {
            memcpy(k, d->keys, d->n * sizeof *k);
            memcpy(v, d->vals, d->n * sizeof *v);
        }
        d->keys = k;
        d->vals = v;
        d->cap = cap;
        if (d->cap > 8) dict_reindex(x, d);
    }
    d->keys[d->n] = key;
    d->vals[d->n] = val;
    d->n++;
    if (d->index) {
        size_t s = pl_jv_hash(key) & (d->index_cap - 1);
        while (d->index[s]) s = (s + 1) & (d->index_cap - 1);
        d->index[s] = (uint32_t)d->n;
    }
}

void pl_jv_dict_set_cstr(pl_jx *x, pl_jv dict, const char *key, pl_jv val) {
    pl_jv_dict_set(x, dict, pl_jv_cstr(x, key), val);
}

bool pl_jv_dict_get(pl_jx *x, pl_jv dict, pl_jv key, pl_jv *out) {
    if (!pl_jv_hashable(key)) pl_jx_fail(x, "unhashable type: '%s'", pl_jv_type_name(key));
    size_t i = dict_find(x, dict.v.d, key);
    if (i == SIZE_MAX) return false;
    *out = dict.v.d->vals[i];
    return true;
}

/* ---- truth, equality, ordering ------------------------------------ */

size_t pl_jv_len(pl_jx *x, pl_jv v) {
    switch ((pl_jv_kind)v.kind) {
    case JV_STR: return v.v.s->ncp;
    case JV_LIST: case JV_TUPLE: return v.v.l->n;
    case JV_DICT: return v.v.d->n;
    case JV_VIEW: return v.v.d->n;
    case JV_UNDEF: return 0;
    case JV_LOOP: return v.v.lp->n;
    case JV_RANGE: {
        const pl_jrange *r = v.v.r;
        if (r->step > 0 && r->start < r->stop) return (size_t)(((uint64_t)r->stop - (uint64_t)r->start - 1) / (uint64_t)r->step + 1);
        if (r->step < 0 && r->start > r->stop)
            return (size_t)(((uint64_t)r->start - (uint64_t)r->stop - 1) / (uint64_t)(-(r->step + 1) + 1) + 1);
        return 0;
    }
    default: pl_jx_fail(x, "object of type '%s' has no len()", pl_jv_type_name(v));
    }
}

bool pl_jv_truthy(pl_jx *x, pl_jv v) {
    switch ((pl_jv_kind)v.kind) {
    case JV_UNDEF: case JV_NONE: return false;
    case JV_BOOL: case JV_INT: return v.v.i != 0;
    case JV_FLOAT: return v.v.f != 0.0;
    case JV_STR: case JV_LIST: case JV_TUPLE: case JV_DICT: case JV_VIEW: case JV_RANGE: case JV_LOOP:
        return pl_jv_len(x, v) != 0;
    default: return true;
    }
}

/* Exact comparison of an integer with a double: -1, 0, 1 (NaN: 2). */
static int cmp_int_float(int64_t i, double f) {
    if (isnan(f)) return 2;
    if (f >= 9223372036854775808.0) return -1;
    if (f < -9223372036854775808.0) return 1;
    double fl = floor(f);
    int64_t fi = (int64_t)fl;
    if (i < fi) return -1;
    if (i > fi) return 1;
    return fl == f ? 0 : -1; /* i == floor(f) < f */
}

static int cmp_num(pl_jv a, pl_jv b) {
    if (a.kind != JV_FLOAT && b.kind != JV_FLOAT) return a.v.i < b.v.i ? -1 : a.v.i > b.v.i;
    if (a.kind == JV_FLOAT && b.kind == JV_FLOAT) {
        if (isnan(a.v.f) || isnan(b.v.f)) return 2;
        return a.v.f < b.v.f ? -1 : a.v.f > b.v.f;
    }
    if (a.kind == JV_FLOAT) {
        int c = cmp_int_float(b.v.i, a.v.f);
        return c == 2 ? 2 : -c;
    }
    return cmp_int_float(a.v.i, b.v.f);
}

bool pl_jv_equal(pl_jx *x, pl_jv a, pl_jv b) {
    if (pl_jv_is_num(a) && pl_jv_is_num(b)) return cmp_num(a, b) == 0;
    if (a.kind != b.kind) return false;
    switch ((pl_jv_kind)a.kind) {
    case JV_UNDEF: case JV_NONE: return true;
    case JV_STR: return a.v.s->len == b.v.s->len && memcmp(a.v.s->s, b.v.s->s, a.v.s->len) == 0;
    case JV_LIST: case JV_TUPLE: {
        if (a.v.l->n != b.v.l->n) return false;
        for (size_t i = 0; i < a.v.l->n; i++) {
            pl_jx_step(x);
            if (!pl_jv_equal(x, a.v.l->items[i], b.v.l->items[i])) return false;
        }
        return true;
    }
    case JV_DICT: {
        if (a.v.d->n != b.v.d->n) return false;
        for (size_t i = 0; i < a.v.d->n; i++) {
            pl_jv bv;
            pl_jx_step(x);
            if (!pl_jv_dict_get(x, b, a.v.d->keys[i], &bv) || !pl_jv_equal(x, a.v.d->vals[i], bv)) return false;
        }
        return true;
    }
    case JV_FUNC: return a.aux == b.aux;
    case JV_METHOD: return a.v.mt->id == b.v.mt->id && pl_jv_equal(x, a.v.mt->self, b.v.mt->self);
    case JV_RANGE: {
        size_t n = pl_jv_len(x, a);
        if (n != pl_jv_len(x, b)) return false;
        if (n == 0) return true;
        if (a.v.r->start != b.v.r->start) return false;
        return n == 1 || a.v.r->step == b.v.r->step;
    }
    default: return a.v.l == b.v.l && a.aux == b.aux;
    }
}

int pl_jv_compare(pl_jx *x, pl_jv a, pl_jv b, const char *op) {
    if (a.kind == JV_UNDEF) pl_jx_undef_fail(x, a);
    if (b.kind == JV_UNDEF) pl_jx_undef_fail(x, b);
    if (pl_jv_is_num(a) && pl_jv_is_num(b)) return cmp_num(a, b);
    if (a.kind == JV_STR && b.kind == JV_STR) {
        size_t n = a.v.s->len < b.v.s->len ? a.v.s->len : b.v.s->len;
        int c = memcmp(a.v.s->s, b.v.s->s, n);
        if (c) return c < 0 ? -1 : 1;
        return a.v.s->len < b.v.s->len ? -1 : a.v.s->len > b.v.s->len;
    }
    if (a.kind == b.kind && (a.kind == JV_LIST || a.kind == JV_TUPLE)) {
        size_t n = a.v.l->n < b.v.l->n ? a.v.l->n : b.v.l->n;
        for (size_t i = 0; i < n; i++) {
            pl_jx_step(x);
            if (!pl_jv_equal(x, a.v.l->items[i], b.v.l->items[i]))
                return pl_jv_compare(x, a.v.l->items[i], b.v.l->items[i], op);
        }
        return a.v.l->n < b.v.l->n ? -1 : a.v.l->n > b.v.l->n;
    }
    pl_jx_fail(x, "'%s' not supported between instances of '%s' and '%s'", op, pl_jv_type_name(a),
               pl_jv_type_name(b));
}

/* ---- iteration ---------------------------------------------------- */

pl_jv pl_jv_str_char(pl_jx *x, pl_jv s, size_t i) {
    size_t a = pl_jstr_offset(s.v.s, i);
    size_t b = a + 1;
    while (b < s.v.s->len && ((unsigned char)s.v.s->s[b] & 0xC0) == 0x80) b++;
    return pl_jv_str_markup(pl_jv_str(x, s.v.s->s + a, b - a), s.flags & JV_MARKUP);
}

static pl_jv *copy_items(pl_jx *x, const pl_jv *items, size_t n) {
    if (!n) return NULL;
    pl_jv *c = pl_jx_alloc_array(x, n, sizeof *c);
    memcpy(c, items, n * sizeof *c);
    return c;
}

const pl_jv *pl_jv_iterate(pl_jx *x, pl_jv v, size_t *n) {
    *n = 0;
    switch ((pl_jv_kind)v.kind) {
    case JV_UNDEF: return NULL;
    case JV_LIST: case JV_TUPLE:
        *n = v.v.l->n;
        return copy_items(x, v.v.l->items, v.v.l->n); /* list.pop() may run meanwhile */
    case JV_GEN: {
        pl_jlist *l = v.v.l;
        *n = l->n - l->pos;
        const pl_jv *r = *n ? l->items + l->pos : NULL;
        l->pos = l->n;
        return r;
    }
    case JV_DICT:
        *n = v.v.d->n;
        return copy_items(x, v.v.d->keys, v.v.d->n);
    case JV_VIEW: {
        const pl_jdict *d = v.v.d;
        *n = d->n;
        if (v.aux == JV_VIEW_KEYS) return copy_items(x, d->keys, d->n);
        if (v.aux == JV_VIEW_VALUES) return copy_items(x, d->vals, d->n);
        pl_jv *items = d->n ? pl_jx_alloc_array(x, d->n, sizeof *items) : NULL;
        for (size_t i = 0; i < d->n; i++) {
            items[i] = pl_jv_tuple(x, 2);
            items[i].v.l->items[0] = d->keys[i];
            items[i].v.l->items[1] = d->vals[i];
        }
        return items;
    }
    case JV_STR: {
        size_t k = v.v.s->ncp;
        pl_jv *items = k ? pl_jx_alloc_array(x, k, sizeof *items) : NULL;
        size_t off = 0;
        for (size_t i = 0; i < k; i++) {
            size_t e = off + 1;
            while (e < v.v.s->len && ((unsigned char)v.v.s->s[e] & 0xC0) == 0x80) e++;
            items[i] = pl_jv_str_markup(pl_jv_str(x, v.v.s->s + off, e - off), v.flags & JV_MARKUP);
            off = e;
        }
        *n = k;
        return items;
    }
    case JV_RANGE: {
        size_t k = pl_jv_len(x, v);
        pl_jv *items = k ? pl_jx_alloc_array(x, k, sizeof *items) : NULL;
        for (size_t i = 0; i < k; i++) items[i] = pl_jv_int(v.v.r->start + (int64_t)i * v.v.r->step);
        *n = k;
        return items;
    }
    default:
        pl_jx_fail(x, "'%s' object is not iterable", pl_jv_type_name(v));
    }
}

pl_jv pl_jv_to_list(pl_jx *x, pl_jv v) {
    size_t n;
    const pl_jv *items = pl_jv_iterate(x, v, &n);
    pl_jv l = pl_jv_list(x, n);
    if (n) memcpy(l.v.l->items, items, n * sizeof *items);
    l.v.l->n = n;
    return l;
}
