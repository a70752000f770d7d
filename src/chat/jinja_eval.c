/*
 * jinja_eval.c -- the tree-walking interpreter: expressions with Python's
 * operator semantics, statements with jinja2's scoping (a for-loop body is
 * a fresh scope per iteration, a macro body a scope over the scope it was
 * defined in, {% if %} no scope at all), and the sandbox's attribute and
 * item rules (data only; list.append & co. are unsafe; a missing name,
 * key or attribute is Undefined).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "chat/jinja_internal.h"

enum { CTL_NONE, CTL_BREAK, CTL_CONTINUE };

/* ---- scopes ------------------------------------------------------- */

static pl_jscope *scope_new(pl_jx *x, pl_jscope *parent) {
    pl_jscope *s = pl_jx_alloc(x, sizeof *s);
    s->parent = parent;
    return s;
}

static pl_jv *scope_slot(pl_jscope *s, const char *name) {
    for (uint32_t i = 0; i < s->n; i++)
        if (!strcmp(s->names[i], name)) return &s->vals[i];
    return NULL;
}

static void scope_set(pl_jx *x, pl_jscope *s, const char *name, pl_jv v) {
    pl_jv *slot = scope_slot(s, name);
    if (slot) {
        *slot = v;
        return;
    }
    if (s->n == s->cap) {
        uint32_t cap = s->cap ? s->cap * 2 : 8;
        const char **names = pl_jx_alloc_array(x, cap, sizeof *names);
        pl_jv *vals = pl_jx_alloc_array(x, cap, sizeof *vals);
        if (s->n) {
            memcpy(names, s->names, s->n * sizeof *names);
            memcpy(vals, s->vals, s->n * sizeof *vals);
        }
        s->names = names;
        s->vals = vals;
        s->cap = cap;
    }
    s->names[s->n] = name;
    s->vals[s->n] = v;
    s->n++;
}

/* Bind the names jinja2 starts undefined in a frame (jinja_symbols.c). */
static void bind_undef(pl_jx *x, pl_jscope *s, const char *const *names, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        pl_jv u = {.kind = JV_UNDEF, .aux = 1};
        u.v.name = names[i];
        scope_set(x, s, names[i], u);
    }
}

/* A new scope for a frame node, its undefined names bound. */
static pl_jscope *frame_scope(pl_jx *x, pl_jscope *parent, const pl_jnode *n) {
    pl_jscope *s = scope_new(x, parent);
    bind_undef(x, s, n->undef, n->nundef);
    return s;
}

static bool scope_lookup(const pl_jscope *s, const char *name, pl_jv *out) {
    for (; s; s = s->parent) {
        for (uint32_t i = 0; i < s->n; i++)
            if (!strcmp(s->names[i], name)) {
                *out = s->vals[i];
                return true;
            }
    }
    return false;
}

static pl_jscope *globals(pl_jx *x) {
    if (!x->globals) {
        pl_jscope *builtins = scope_new(x, NULL);
        static const struct {
            const char *name;
            int id;
        } funcs[] = {{"range", JF_RANGE},
                     {"dict", JF_DICT},
                     {"namespace", JF_NAMESPACE},
                     {"raise_exception", JF_RAISE},
                     {"strftime_now", JF_STRFTIME}};
        for (size_t i = 0; i < sizeof funcs / sizeof funcs[0]; i++) {
            pl_jv f = {.kind = JV_FUNC, .aux = (uint16_t)funcs[i].id};
            scope_set(x, builtins, funcs[i].name, f);
        }
        x->globals = scope_new(x, builtins);
    }
    return x->globals;
}

void pl_jx_set_global(pl_jx *x, const char *name, pl_jv v) {
    pl_jscope *g = globals(x);
    scope_set(x, g, pl_jv_cstr(x, name).v.s->s, v);
}

/* ---- attribute and item access ------------------------------------ */

static bool is_dunder(const char *name) { return name[0] == '_' && name[1] == '_'; }

pl_jv pl_jx_getattr(pl_jx *x, pl_jv obj, const char *name) {
    if (obj.kind == JV_UNDEF) pl_jx_undef_fail(x, obj);
    pl_jv key = pl_jv_cstr(x, name);
    if (is_dunder(name))
        return pl_jv_undef_msg(x, "access to attribute '%s' of '%s' object is unsafe.", name, pl_jv_type_name(obj));
    if (obj.kind == JV_NS) {
        pl_jv v;
        if (pl_jv_dict_get(x, obj, key, &v)) return v;
        return pl_jv_undef_attr(x, obj, key, false);
    }
    if (obj.kind == JV_LOOP) {
        const pl_jloop *lp = obj.v.lp;
        size_t i = lp->index0, n = lp->n;
        pl_jloop *mlp = obj.v.lp;
        if (!strcmp(name, "index0")) return pl_jv_int((int64_t)i);
        if (!strcmp(name, "index")) return pl_jv_int((int64_t)i + 1);
        if (!strcmp(name, "first")) return pl_jv_bool(i == 0);
        if (!strcmp(name, "depth")) return pl_jv_int((int64_t)lp->depth0 + 1);
        if (!strcmp(name, "depth0")) return pl_jv_int((int64_t)lp->depth0);
        if (!strcmp(name, "length") || !strcmp(name, "revindex") || !strcmp(name, "revindex0")) {
            if (mlp->gen) mlp->gen_base = SIZE_MAX; /* the whole generator was drawn */
            if (!strcmp(name, "length")) return pl_jv_int((int64_t)n);
            return pl_jv_int((int64_t)(n - i) - (name[8] == '0' ? 1 : 0));
        }
        if (!strcmp(name, "last")) return pl_jv_bool(i + 1 >= n);
        if (!strcmp(name, "previtem")) {
            if (i == 0) return pl_jv_undef_msg(x, "there is no previous item");
            return pl_jloop_item(lp, i - 1);
        }
        if (!strcmp(name, "nextitem")) {
            if (i + 1 >= n) return pl_jv_undef_msg(x, "there is no next item");
            return pl_jloop_item(lp, i + 1);
        }
        if (!strcmp(name, "cycle") || !strcmp(name, "changed")) {
            bool unsafe, unsupported;
            return pl_jv_method(x, obj, pl_jmeth_lookup(obj, name, &unsafe, &unsupported));
        }
        return pl_jv_undef_attr(x, obj, key, false);
    }
    bool unsafe = false, unsupported = false;
    int id = pl_jmeth_lookup(obj, name, &unsafe, &unsupported);
    if (id >= 0 || unsafe || unsupported) {
        if (unsafe)
            return pl_jv_undef_msg(x, "access to attribute '%s' of '%s' object is unsafe.", name,
                                   pl_jv_type_name(obj));
        if (unsupported) {
            if (obj.kind != JV_STR && obj.kind != JV_DICT)
                pl_jx_unsupported(x, "the attribute '%s' of a %s value", name, pl_jv_type_name(obj));
            pl_jv m = pl_jv_method(x, obj, PL_JMETH_UNSUPPORTED);
            m.v.mt->name = key.v.s->s;
            return m;
        }
        return pl_jv_method(x, obj, id);
    }
    if (obj.kind == JV_DICT) {
        pl_jv v;
        if (pl_jv_dict_get(x, obj, key, &v)) return v;
    }
    if (obj.kind == JV_MACRO) {
        /* jinja2.runtime.Macro's public attributes */
        const pl_jnode *m = obj.v.m->node;
        if (!strcmp(name, "name")) return pl_jv_cstr(x, m->name);
        if (!strcmp(name, "arguments")) {
            pl_jv t = pl_jv_tuple(x, m->kids.n);
            for (uint32_t i = 0; i < m->kids.n; i++) t.v.l->items[i] = pl_jv_cstr(x, m->kids.v[i]->name);
            return t;
        }
        if (!strcmp(name, "catch_varargs")) return pl_jv_bool(m->flag & 1);
        if (!strcmp(name, "catch_kwargs")) return pl_jv_bool(m->flag & 2);
        if (!strcmp(name, "caller") || !strcmp(name, "explicit_caller")) return pl_jv_bool(false);
    }
    if (obj.kind == JV_RANGE) {
        if (!strcmp(name, "start")) return pl_jv_int(obj.v.r->start);
        if (!strcmp(name, "stop")) return pl_jv_int(obj.v.r->stop);
        if (!strcmp(name, "step")) return pl_jv_int(obj.v.r->step);
    }
    return pl_jv_undef_attr(x, obj, key, false);
}

pl_jv pl_jx_getattr_only(pl_jx *x, pl_jv obj, const char *name) {
    /* getattr() without the item fallback: data keys are not attributes */
    if (obj.kind == JV_DICT) {
        bool unsafe, unsupported;
        if (!is_dunder(name) && pl_jmeth_lookup(obj, name, &unsafe, &unsupported) < 0 && !unsafe && !unsupported)
            return pl_jv_undef_attr(x, obj, pl_jv_cstr(x, name), false);
    }
    return pl_jx_getattr(x, obj, name);
}

static bool index_of(pl_jx *x, pl_jv key, size_t n, size_t *out) {
    if (key.kind != JV_INT && key.kind != JV_BOOL) return false;
    (void)x;
    int64_t i = key.v.i;
    if (i < 0) i += (int64_t)n;
    if (i < 0 || (uint64_t)i >= n) return false;
    *out = (size_t)i;
    return true;
}

pl_jv pl_jx_getitem(pl_jx *x, pl_jv obj, pl_jv key) {
    if (obj.kind == JV_UNDEF) pl_jx_undef_fail(x, obj);
    size_t i;
    switch ((pl_jv_kind)obj.kind) {
    case JV_DICT: {
        pl_jv v;
        if (pl_jv_hashable(key) && pl_jv_dict_get(x, obj, key, &v)) return v;
        break;
    }
    case JV_LIST: case JV_TUPLE:
        if (index_of(x, key, obj.v.l->n, &i)) return obj.v.l->items[i];
        if (key.kind == JV_INT || key.kind == JV_BOOL) return pl_jv_undef_attr(x, obj, key, true);
        break;
    case JV_STR:
        if (index_of(x, key, obj.v.s->ncp, &i)) return pl_jv_str_char(x, obj, i);
        if (key.kind == JV_INT || key.kind == JV_BOOL) return pl_jv_undef_attr(x, obj, key, true);
        break;
    case JV_RANGE:
        if (index_of(x, key, pl_jv_len(x, obj), &i)) return pl_jv_int(obj.v.r->start + (int64_t)i * obj.v.r->step);
        break;
    default:
        break;
    }
    /* a failed subscript with a string falls back to the attribute */
    if (key.kind == JV_STR) {
        pl_jv v = pl_jx_getattr(x, obj, key.v.s->s);
        if (v.kind != JV_UNDEF || (v.aux == 0 && v.v.u && strstr(v.v.u->msg, "unsafe"))) return v;
    }
    return pl_jv_undef_attr(x, obj, key, true);
}

/* Python's slice index adjustment (PySlice_AdjustIndices). */
static size_t slice_indices(pl_jx *x, size_t len, const pl_jv *a, int64_t *start, int64_t *step) {
    int64_t st = 1;
    if (a[2].kind != JV_NONE) st = a[2].v.i;
    if (st == 0) pl_jx_fail(x, "slice step cannot be zero");
    int64_t n = (int64_t)len, lo, hi;
    if (a[0].kind == JV_NONE) {
        lo = st < 0 ? n - 1 : 0;
    } else {
        lo = a[0].v.i;
        if (lo < 0) {
            lo += n;
            if (lo < 0) lo = st < 0 ? -1 : 0;
        } else if (lo >= n) {
            lo = st < 0 ? n - 1 : n;
        }
    }
    if (a[1].kind == JV_NONE) {
        hi = st < 0 ? -1 : n;
    } else {
        hi = a[1].v.i;
        if (hi < 0) {
            hi += n;
            if (hi < 0) hi = st < 0 ? -1 : 0;
        } else if (hi >= n) {
            hi = st < 0 ? n - 1 : n;
        }
    }
    *start = lo;
    *step = st;
    if (st < 0) return hi < lo ? (size_t)((lo - hi - 1) / (-st) + 1) : 0;
    return lo < hi ? (size_t)((hi - lo - 1) / st + 1) : 0;
}

static pl_jv do_slice(pl_jx *x, pl_jv obj, const pl_jnode *sl) {
    pl_jv a[3];
    for (int k = 0; k < 3; k++) {
        a[k] = sl->kids.v[k] ? pl_jx_eval(x, sl->kids.v[k]) : pl_jv_none_v;
        if (a[k].kind == JV_BOOL) a[k].kind = JV_INT;
    }
    /* jinja2 compiles a slice to Python's own subscript (not the sandbox's
     * getitem), so every failure is an error */
    if (obj.kind == JV_UNDEF) pl_jx_undef_fail(x, obj);
    for (int k = 0; k < 3; k++)
        if (a[k].kind != JV_NONE && a[k].kind != JV_INT)
            pl_jx_fail(x, "slice indices must be integers or None or have an __index__ method");
    if (obj.kind == JV_DICT) pl_jx_fail(x, "unhashable type: 'slice'");
    if (obj.kind == JV_RANGE) {
        size_t n = pl_jv_len(x, obj);
        int64_t st, sp;
        size_t cnt = slice_indices(x, n, a, &st, &sp);
        pl_jrange *r = pl_jx_alloc(x, sizeof *r);
        r->start = obj.v.r->start + st * obj.v.r->step;
        r->step = sp * obj.v.r->step;
        r->stop = r->start + (int64_t)cnt * r->step;
        pl_jv rv = {.kind = JV_RANGE};
        rv.v.r = r;
        return rv;
    }
    if (obj.kind != JV_LIST && obj.kind != JV_TUPLE && obj.kind != JV_STR)
        pl_jx_fail(x, "'%s' object is not subscriptable", pl_jv_type_name(obj));
    int64_t start, step;
    if (obj.kind == JV_STR) {
        const pl_jstr *s = obj.v.s;
        size_t cnt = slice_indices(x, s->ncp, a, &start, &step);
        pl_jbuf b = {0};
        if (s->ncp == s->len) {
            for (size_t k = 0; k < cnt; k++) pl_jbuf_putc(x, &b, s->s[start + (int64_t)k * step]);
        } else {
            /* code-point offsets once, then pick */
            size_t *off = pl_jx_alloc_array(x, s->ncp + 1, sizeof *off);
            size_t o = 0;
            for (size_t k = 0; k < s->ncp; k++) {
                off[k] = o;
                o++;
                while (o < s->len && ((unsigned char)s->s[o] & 0xC0) == 0x80) o++;
            }
            off[s->ncp] = s->len;
            for (size_t k = 0; k < cnt; k++) {
                size_t c = (size_t)(start + (int64_t)k * step);
                pl_jbuf_put(x, &b, s->s + off[c], off[c + 1] - off[c]);
            }
        }
        return pl_jv_str_markup(pl_jv_str_buf(x, &b), obj.flags & JV_MARKUP);
    }
    size_t cnt = slice_indices(x, obj.v.l->n, a, &start, &step);
    pl_jv r = pl_jv_list(x, cnt);
    for (size_t k = 0; k < cnt; k++) r.v.l->items[k] = obj.v.l->items[start + (int64_t)k * step];
    r.v.l->n = cnt;
    r.kind = obj.kind;
    return r;
}

/* ---- operators ---------------------------------------------------- */

static pl_jv concat_str(pl_jx *x, pl_jv a, pl_jv b) {
    bool am = a.flags & JV_MARKUP, bm = b.flags & JV_MARKUP;
    /* Markup + str escapes the str; str + Markup escapes the str too */
    if (am && !bm) b = pl_jv_escape(x, b);
    if (bm && !am) a = pl_jv_escape(x, a);
    pl_jbuf buf = {0};
    pl_jbuf_put(x, &buf, a.v.s->s, a.v.s->len);
    pl_jbuf_put(x, &buf, b.v.s->s, b.v.s->len);
    return pl_jv_str_markup(pl_jv_str_buf(x, &buf), am || bm);
}

static pl_jv repeat(pl_jx *x, pl_jv seq, int64_t times) {
    if (times < 0) times = 0;
    if (seq.kind == JV_STR) {
        uint64_t total;
        if (__builtin_mul_overflow((uint64_t)seq.v.s->len, (uint64_t)times, &total) || total > x->lim.max_memory)
            pl_jx_raise(x, POCKETLLM_ERR_NO_MEMORY, "a repeated string beyond the memory limit");
        pl_jbuf b = {0};
        if (total) pl_jbuf_reserve(x, &b, (size_t)total);
        for (int64_t i = 0; i < times; i++) pl_jbuf_put(x, &b, seq.v.s->s, seq.v.s->len);
        return pl_jv_str_markup(pl_jv_str_buf(x, &b), seq.flags & JV_MARKUP);
    }
    uint64_t total;
    if (__builtin_mul_overflow((uint64_t)seq.v.l->n, (uint64_t)times, &total) || total > x->lim.max_memory / 16)
        pl_jx_raise(x, POCKETLLM_ERR_NO_MEMORY, "a repeated list beyond the memory limit");
    pl_jv r = pl_jv_list(x, (size_t)total);
    for (int64_t i = 0; i < times; i++)
        for (size_t k = 0; k < seq.v.l->n; k++) r.v.l->items[r.v.l->n++] = seq.v.l->items[k];
    r.kind = seq.kind;
    return r;
}

static _Noreturn void bad_operands(pl_jx *x, const char *op, pl_jv a, pl_jv b) {
    pl_jx_fail(x, "unsupported operand type(s) for %s: '%s' and '%s'", op, pl_jv_type_name(a), pl_jv_type_name(b));
}

static double as_double(pl_jv v) { return v.kind == JV_FLOAT ? v.v.f : (double)v.v.i; }

/* Python's float floor division and modulo (floatobject.c float_divmod). */
static void float_divmod(pl_jx *x, double vx, double wx, double *fdiv, double *fmod_out) {
    if (wx == 0.0) pl_jx_fail(x, "float divmod()");
    double mod = fmod(vx, wx);
    double div = (vx - mod) / wx;
    if (mod) {
        if ((wx < 0) != (mod < 0)) {
            mod += wx;
            div -= 1.0;
        }
    } else {
        mod = copysign(0.0, wx);
    }
    double floordiv;
    if (div) {
        floordiv = floor(div);
        if (div - floordiv > 0.5) floordiv += 1.0;
    } else {
        floordiv = copysign(0.0, vx / wx);
    }
    *fdiv = floordiv;
    *fmod_out = mod;
}

static const char *op_text(int op) {
    static const char *const t[] = {"+", "-", "*", "/", "//", "%", "**", "==", "!=", "<", "<=", ">", ">=", "in", "not in"};
    return t[op];
}

pl_jv pl_jx_binop(pl_jx *x, int op, pl_jv a, pl_jv b) {
    if (a.kind == JV_UNDEF) pl_jx_undef_fail(x, a);
    if (b.kind == JV_UNDEF) pl_jx_undef_fail(x, b);
    bool num = pl_jv_is_num(a) && pl_jv_is_num(b);
    bool ints = num && a.kind != JV_FLOAT && b.kind != JV_FLOAT;
    int64_t r;
    switch (op) {
    case JOP_ADD:
        if (ints) {
            if (__builtin_add_overflow(a.v.i, b.v.i, &r)) goto overflow;
            return pl_jv_int(r);
        }
        if (num) return pl_jv_float(as_double(a) + as_double(b));
        if (a.kind == JV_STR && b.kind == JV_STR) return concat_str(x, a, b);
        if (a.kind == b.kind && (a.kind == JV_LIST || a.kind == JV_TUPLE)) {
            pl_jv l = pl_jv_list(x, a.v.l->n + b.v.l->n);
            if (a.v.l->n) memcpy(l.v.l->items, a.v.l->items, a.v.l->n * sizeof(pl_jv));
            if (b.v.l->n) memcpy(l.v.l->items + a.v.l->n, b.v.l->items, b.v.l->n * sizeof(pl_jv));
            l.v.l->n = a.v.l->n + b.v.l->n;
            l.kind = a.kind;
            return l;
        }
        if (a.kind == JV_STR && !(a.flags & JV_MARKUP))
            pl_jx_fail(x, "can only concatenate str (not \"%s\") to str", pl_jv_type_name(b));
        if (a.kind == JV_LIST || a.kind == JV_TUPLE)
            pl_jx_fail(x, "can only concatenate %s (not \"%s\") to %s", pl_jv_type_name(a), pl_jv_type_name(b),
                       pl_jv_type_name(a));
        bad_operands(x, "+", a, b);
    case JOP_SUB:
        if (ints) {
            if (__builtin_sub_overflow(a.v.i, b.v.i, &r)) goto overflow;
            return pl_jv_int(r);
        }
        if (num) return pl_jv_float(as_double(a) - as_double(b));
        bad_operands(x, "-", a, b);
    case JOP_MUL:
        if (ints) {
            if (__builtin_mul_overflow(a.v.i, b.v.i, &r)) goto overflow;
            return pl_jv_int(r);
        }
        if (num) return pl_jv_float(as_double(a) * as_double(b));
        if ((a.kind == JV_STR || a.kind == JV_LIST || a.kind == JV_TUPLE) && (b.kind == JV_INT || b.kind == JV_BOOL))
            return repeat(x, a, b.v.i);
        if ((b.kind == JV_STR || b.kind == JV_LIST || b.kind == JV_TUPLE) && (a.kind == JV_INT || a.kind == JV_BOOL))
            return repeat(x, b, a.v.i);
        if (a.kind == JV_STR || a.kind == JV_LIST || a.kind == JV_TUPLE)
            pl_jx_fail(x, "can't multiply sequence by non-int of type '%s'", pl_jv_type_name(b));
        bad_operands(x, "*", a, b);
    case JOP_DIV:
        if (num) {
            if (as_double(b) == 0.0) pl_jx_fail(x, ints ? "division by zero" : "float division by zero");
            return pl_jv_float(as_double(a) / as_double(b));
        }
        bad_operands(x, "/", a, b);
    case JOP_FLOORDIV:
    case JOP_MOD:
        if (ints) {
            if (b.v.i == 0) pl_jx_fail(x, "integer division or modulo by zero");
            if (a.v.i == INT64_MIN && b.v.i == -1) {
                if (op == JOP_MOD) return pl_jv_int(0);
                goto overflow;
            }
            int64_t q = a.v.i / b.v.i, m = a.v.i % b.v.i;
            if (m != 0 && ((m < 0) != (b.v.i < 0))) {
                q -= 1;
                m += b.v.i;
            }
            return pl_jv_int(op == JOP_MOD ? m : q);
        }
        if (num) {
            double d, m;
            if (as_double(b) == 0.0) pl_jx_fail(x, op == JOP_MOD ? "float modulo" : "float floor division by zero");
            float_divmod(x, as_double(a), as_double(b), &d, &m);
            return pl_jv_float(op == JOP_MOD ? m : d);
        }
        if (op == JOP_MOD && a.kind == JV_STR) return pl_py_percent_format(x, a, b);
        bad_operands(x, op == JOP_MOD ? "%" : "//", a, b);
    case JOP_POW:
        if (ints && b.v.i >= 0) {
            int64_t base = a.v.i, e = b.v.i, acc = 1;
            while (e > 0) {
                if (e & 1)
                    if (__builtin_mul_overflow(acc, base, &acc)) goto overflow;
                e >>= 1;
                if (e && __builtin_mul_overflow(base, base, &base)) goto overflow;
            }
            return pl_jv_int(acc);
        }
        if (num) {
            double da = as_double(a), db = as_double(b);
            if (da == 0.0 && db < 0) pl_jx_fail(x, "0.0 cannot be raised to a negative power");
            if (da < 0 && db != floor(db)) pl_jx_unsupported(x, "a negative number to a fractional power (complex)");
            return pl_jv_float(pow(da, db));
        }
        bad_operands(x, "** or pow()", a, b);
    default:
        break;
    }
    pl_jx_fail(x, "bad operator");
overflow:
    pl_jx_unsupported(x, "integer arithmetic beyond 64 bits (%s)", op_text(op));
}

bool pl_jx_contains(pl_jx *x, pl_jv c, pl_jv item) {
    switch ((pl_jv_kind)c.kind) {
    case JV_STR:
        if (item.kind != JV_STR)
            pl_jx_fail(x, "'in <string>' requires string as left operand, not %s", pl_jv_type_name(item));
        if (item.v.s->len == 0) return true;
        return memmem(c.v.s->s, c.v.s->len, item.v.s->s, item.v.s->len) != NULL;
    case JV_LIST: case JV_TUPLE:
        for (size_t i = 0; i < c.v.l->n; i++) {
            pl_jx_step(x);
            if (pl_jv_equal(x, c.v.l->items[i], item)) return true;
        }
        return false;
    case JV_DICT: {
        pl_jv v;
        return pl_jv_dict_get(x, c, item, &v);
    }
    case JV_VIEW:
        if (c.aux == JV_VIEW_KEYS) {
            pl_jv v;
            return pl_jv_dict_get(x, c, item, &v);
        }
        /* fall through: values and items by equality */
        {
            size_t n;
            const pl_jv *items = pl_jv_iterate(x, c, &n);
            for (size_t i = 0; i < n; i++)
                if (pl_jv_equal(x, items[i], item)) return true;
            return false;
        }
    case JV_GEN: {
        pl_jlist *l = c.v.l;
        while (l->pos < l->n) {
            pl_jv e = l->items[l->pos++];
            if (pl_jv_equal(x, e, item)) return true;
        }
        return false;
    }
    case JV_RANGE: {
        size_t n;
        const pl_jv *items = pl_jv_iterate(x, c, &n);
        for (size_t i = 0; i < n; i++)
            if (pl_jv_equal(x, items[i], item)) return true;
        return false;
    }
    case JV_UNDEF: return false;
    default:
        pl_jx_fail(x, "argument of type '%s' is not iterable", pl_jv_type_name(c));
    }
}

/* ---- calls -------------------------------------------------------- */

static void exec_body(pl_jx *x, const pl_jnodes *body);

/* Run kids in a new scope writing into a fresh buffer; the text. */
static pl_jv render_block(pl_jx *x, const pl_jnodes *body, pl_jscope *scope) {
    pl_jbuf buf = {0};
    pl_jbuf *saved_out = x->out;
    pl_jscope *saved_scope = x->scope;
    x->out = &buf;
    x->scope = scope;
    exec_body(x, body);
    x->out = saved_out;
    x->scope = saved_scope;
    return pl_jv_str_buf(x, &buf);
}

static pl_jv call_macro(pl_jx *x, pl_jv mv, pl_jargs *a) {
    const pl_jnode *m = mv.v.m->node;
    if (x->depth >= x->lim.max_depth)
        pl_jx_raise(x, POCKETLLM_ERR_UNSUPPORTED, "macro calls nested more than %u deep (limit)", x->lim.max_depth);
    pl_jscope *s = frame_scope(x, mv.v.m->closure, m);
    size_t np = m->kids.n, nd = m->else_kids.n;
    bool catch_varargs = m->flag & 1, catch_kwargs = m->flag & 2;
    bool *used = a->nkw ? pl_jx_alloc_array(x, a->nkw, sizeof *used) : NULL;
    /* defaults are evaluated inside the macro, after earlier parameters */
    pl_jscope *saved_scope = x->scope;
    x->scope = s;
    for (size_t i = 0; i < np; i++) {
        const char *pn = m->kids.v[i]->name;
        pl_jv val = pl_jv_undef_v;
        bool have = false;
        if (i < a->npos) {
            val = a->pos[i];
            have = true;
        } else {
            for (size_t k = 0; k < a->nkw; k++)
                if (!used[k] && !strcmp(a->kwn[k], pn)) {
                    val = a->kwv[k];
                    used[k] = true;
                    have = true;
                    break;
                }
        }
        if (!have) {
            size_t first_default = np - nd;
            if (i >= first_default) val = pl_jx_eval(x, m->else_kids.v[i - first_default]);
            else val = pl_jv_undef_msg(x, "parameter '%s' was not provided", pn);
        }
        scope_set(x, s, pn, val);
    }
    x->scope = saved_scope;
    pl_jv kw = pl_jv_dict(x);
    for (size_t k = 0; k < a->nkw; k++) {
        if (used[k]) continue;
        if (!catch_kwargs) pl_jx_fail(x, "macro '%s' takes no keyword argument '%s'", m->name, a->kwn[k]);
        pl_jv_dict_set(x, kw, pl_jv_cstr(x, a->kwn[k]), a->kwv[k]);
    }
    if (catch_kwargs) scope_set(x, s, "kwargs", kw);
    if (catch_varargs) {
        size_t extra = a->npos > np ? a->npos - np : 0;
        pl_jv t = pl_jv_tuple(x, extra);
        for (size_t k = 0; k < extra; k++) t.v.l->items[k] = a->pos[np + k];
        scope_set(x, s, "varargs", t);
    } else if (a->npos > np) {
        pl_jx_fail(x, "macro '%s' takes not more than %zu argument(s)", m->name, np);
    }
    x->depth++;
    int saved_ctl = x->loop_ctl;
    pl_jv r = render_block(x, &m->a->kids, s);
    x->loop_ctl = saved_ctl;
    x->depth--;
    return r;
}

pl_jv pl_jx_call_value(pl_jx *x, pl_jv f, pl_jargs *a) {
    switch ((pl_jv_kind)f.kind) {
    case JV_MACRO: return call_macro(x, f, a);
    case JV_FUNC: return pl_jfunc_call(x, f.aux, a);
    case JV_METHOD: return pl_jmeth_call(x, f, a);
    case JV_UNDEF: pl_jx_undef_fail(x, f);
    case JV_LOOP: pl_jx_fail(x, "The loop must have the 'recursive' marker to be called recursively.");
    default: pl_jx_fail(x, "'%s' object is not callable", pl_jv_type_name(f));
    }
}

static void eval_args(pl_jx *x, const pl_jnode *n, pl_jargs *a, size_t extra_front) {
    a->npos = n->kids.n + extra_front;
    a->pos = a->npos ? pl_jx_alloc_array(x, a->npos, sizeof *a->pos) : NULL;
    for (uint32_t i = 0; i < n->kids.n; i++) a->pos[extra_front + i] = pl_jx_eval(x, n->kids.v[i]);
    a->nkw = n->else_kids.n;
    a->kwn = n->kwnames;
    a->kwv = a->nkw ? pl_jx_alloc_array(x, a->nkw, sizeof *a->kwv) : NULL;
    for (uint32_t i = 0; i < n->else_kids.n; i++) a->kwv[i] = pl_jx_eval(x, n->else_kids.v[i]);
}

/* Apply a filter node (and the chain under it) to subject (used when the
 * innermost filter has no subject expression: filter blocks, set blocks). */
static pl_jv apply_filter(pl_jx *x, const pl_jnode *f, pl_jv subject) {
    pl_jv v = f->a ? apply_filter(x, f->a, subject) : subject;
    const pl_jnode *saved = x->at;
    x->at = f;
    if (f->flag & UNKNOWN_NAME) pl_jx_fail(x, "No filter named '%s' found.", f->name);
    pl_jargs a = {0};
    eval_args(x, f, &a, 0);
    pl_jv r = pl_jfilter_call(x, f->id, f->name, v, &a);
    x->at = saved;
    return r;
}

/* ---- expressions -------------------------------------------------- */

static pl_jv eval_compare(pl_jx *x, const pl_jnode *n) {
    pl_jv left = pl_jx_eval(x, n->a);
    for (uint32_t i = 0; i < n->kids.n; i++) {
        pl_jv right = pl_jx_eval(x, n->kids.v[i]);
        bool r;
        int op = n->ops[i];
        switch (op) {
        case JOP_EQ: r = pl_jv_equal(x, left, right); break;
        case JOP_NE: r = !pl_jv_equal(x, left, right); break;
        case JOP_IN: r = pl_jx_contains(x, right, left); break;
        case JOP_NOTIN: r = !pl_jx_contains(x, right, left); break;
        default: {
            int c = pl_jv_compare(x, left, right, op_text(op));
            if (c == 2) r = false; /* NaN */
            else if (op == JOP_LT) r = c < 0;
            else if (op == JOP_LE) r = c <= 0;
            else if (op == JOP_GT) r = c > 0;
            else r = c >= 0;
        }
        }
        if (!r) return pl_jv_bool(false);
        left = right;
    }
    return pl_jv_bool(true);
}

pl_jv pl_jx_eval(pl_jx *x, const pl_jnode *n) {
    pl_jx_step(x);
    const pl_jnode *saved = x->at;
    x->at = n;
    pl_jv r;
    switch ((pl_jn_kind)n->kind) {
    case JN_CONST:
        r = n->value;
        break;
    case JN_NAME:
        if (!scope_lookup(x->scope, n->name, &r)) r = pl_jv_undef_name(x, n->name);
        break;
    case JN_GETATTR:
        r = pl_jx_getattr(x, pl_jx_eval(x, n->a), n->name);
        break;
    case JN_GETITEM: {
        pl_jv obj = pl_jx_eval(x, n->a);
        if (n->b->kind == JN_SLICE) {
            x->at = n;
            r = do_slice(x, obj, n->b);
        } else {
            pl_jv key = pl_jx_eval(x, n->b);
            x->at = n;
            r = pl_jx_getitem(x, obj, key);
        }
        break;
    }
    case JN_CALL: {
        pl_jv f = pl_jx_eval(x, n->a);
        pl_jargs a = {0};
        eval_args(x, n, &a, 0);
        x->at = n;
        r = pl_jx_call_value(x, f, &a);
        break;
    }
    case JN_FILTER: {
        pl_jv v = pl_jx_eval(x, n->a);
        x->at = n;
        if (n->flag & UNKNOWN_NAME) pl_jx_fail(x, "No filter named '%s' found.", n->name);
        pl_jargs a = {0};
        eval_args(x, n, &a, 0);
        x->at = n;
        r = pl_jfilter_call(x, n->id, n->name, v, &a);
        break;
    }
    case JN_TEST: {
        pl_jv v = pl_jx_eval(x, n->a);
        x->at = n;
        if (n->flag & UNKNOWN_NAME) pl_jx_fail(x, "No test named '%s' found.", n->name);
        pl_jargs a = {0};
        eval_args(x, n, &a, 0);
        x->at = n;
        r = pl_jv_bool(pl_jtest_call(x, n->id, n->name, v, &a));
        break;
    }
    case JN_BINOP: {
        pl_jv a = pl_jx_eval(x, n->a);
        pl_jv b = pl_jx_eval(x, n->b);
        x->at = n;
        r = pl_jx_binop(x, n->op, a, b);
        break;
    }
    case JN_COMPARE:
        r = eval_compare(x, n);
        break;
    case JN_AND: {
        pl_jv a = pl_jx_eval(x, n->a);
        r = pl_jv_truthy(x, a) ? pl_jx_eval(x, n->b) : a;
        break;
    }
    case JN_OR: {
        pl_jv a = pl_jx_eval(x, n->a);
        r = pl_jv_truthy(x, a) ? a : pl_jx_eval(x, n->b);
        break;
    }
    case JN_NOT:
        r = pl_jv_bool(!pl_jv_truthy(x, pl_jx_eval(x, n->a)));
        break;
    case JN_NEG:
    case JN_POS: {
        pl_jv a = pl_jx_eval(x, n->a);
        x->at = n;
        if (a.kind == JV_UNDEF) pl_jx_undef_fail(x, a);
        if (a.kind == JV_FLOAT) r = pl_jv_float(n->kind == JN_NEG ? -a.v.f : a.v.f);
        else if (a.kind == JV_INT || a.kind == JV_BOOL) {
            if (n->kind == JN_NEG && a.v.i == INT64_MIN) pl_jx_unsupported(x, "integer arithmetic beyond 64 bits");
            r = pl_jv_int(n->kind == JN_NEG ? -a.v.i : a.v.i);
        } else {
            pl_jx_fail(x, "bad operand type for unary %c: '%s'", n->kind == JN_NEG ? '-' : '+', pl_jv_type_name(a));
        }
        break;
    }
    case JN_CONCAT: {
        pl_jbuf b = {0};
        for (uint32_t i = 0; i < n->kids.n; i++) pl_jv_write_str(x, &b, pl_jx_eval(x, n->kids.v[i]));
        r = pl_jv_str_buf(x, &b);
        break;
    }
    case JN_CONDEXPR:
        if (pl_jv_truthy(x, pl_jx_eval(x, n->a))) r = pl_jx_eval(x, n->b);
        else if (n->c) r = pl_jx_eval(x, n->c);
        else
            r = pl_jv_undef_msg(x, "the inline if-expression on line %u evaluated to false and no else section was defined.",
                                n->line);
        break;
    case JN_LIST:
    case JN_TUPLE: {
        r = pl_jv_list(x, n->kids.n);
        for (uint32_t i = 0; i < n->kids.n; i++) r.v.l->items[i] = pl_jx_eval(x, n->kids.v[i]);
        r.v.l->n = n->kids.n;
        if (n->kind == JN_TUPLE) r.kind = JV_TUPLE;
        break;
    }
    case JN_DICT: {
        r = pl_jv_dict(x);
        for (uint32_t i = 0; i + 1 < n->kids.n; i += 2) {
            pl_jv k = pl_jx_eval(x, n->kids.v[i]);
            pl_jv v = pl_jx_eval(x, n->kids.v[i + 1]);
            x->at = n;
            pl_jv_dict_set(x, r, k, v);
        }
        break;
    }
    default:
        pl_jx_fail(x, "internal: not an expression");
    }
    x->at = saved;
    return r;
}

/* ---- statements --------------------------------------------------- */

static void write_out(pl_jx *x, const char *s, size_t n) {
    if (x->out == x->top && n > x->lim.max_output - x->top->len)
        pl_jx_raise(x, POCKETLLM_ERR_UNSUPPORTED, "the rendered text is longer than %zu bytes (limit)",
                    x->lim.max_output);
    pl_jbuf_put(x, x->out, s, n);
}

/* Bind a for/set target: a name, or a tuple of names unpacking v. */
static void assign(pl_jx *x, pl_jscope *s, const pl_jnode *target, pl_jv v) {
    if (target->kind == JN_NAME) {
        scope_set(x, s, target->name, v);
        return;
    }
    size_t want = target->kids.n, n;
    const pl_jv *items = pl_jv_iterate(x, v, &n);
    if (n != want) {
        if (n > want) pl_jx_fail(x, "too many values to unpack (expected %zu)", want);
        pl_jx_fail(x, "not enough values to unpack (expected %zu, got %zu)", want, n);
    }
    for (size_t i = 0; i < want; i++) scope_set(x, s, target->kids.v[i]->name, items[i]);
}

static void exec_for(pl_jx *x, const pl_jnode *n) {
    pl_jv seq = pl_jx_eval(x, n->a);
    x->at = n;
    pl_jscope *outer = x->scope;
    size_t cnt;
    pl_jlist *gen = NULL;
    size_t gen_base = 0;
    const pl_jv *items = NULL;
    pl_jloop *lp = pl_jx_alloc(x, sizeof *lp);
    if (seq.kind == JV_RANGE && !n->b) {
        /* a range is not materialized: range(100000) costs nothing */
        lp->range = *seq.v.r;
        cnt = pl_jv_len(x, seq);
    } else if (seq.kind == JV_GEN && !n->b) {
        /* drawn lazily, as Python's for does: a break leaves the rest */
        gen = seq.v.l;
        gen_base = gen->pos;
        cnt = gen->n - gen->pos;
        items = cnt ? gen->items + gen->pos : NULL;
        lp->items = items;
    } else {
        items = pl_jv_iterate(x, seq, &cnt);
        lp->items = items;
    }
    if (n->b) {
        /* for x in y if cond: the filter runs first, without `loop` */
        pl_jv *kept = cnt ? pl_jx_alloc_array(x, cnt, sizeof *kept) : NULL;
        size_t k = 0;
        pl_jscope *s = scope_new(x, outer);
        for (size_t i = 0; i < cnt; i++) {
            pl_jx_step(x);
            s->n = 0;
            assign(x, s, n->target, items[i]);
            x->scope = s;
            bool keep = pl_jv_truthy(x, pl_jx_eval(x, n->b));
            x->scope = outer;
            if (keep) kept[k++] = items[i];
        }
        lp->items = kept;
        cnt = k;
    }
    if (cnt == 0) {
        /* the else block is a frame of its own */
        pl_jscope *es = scope_new(x, outer);
        bind_undef(x, es, n->undef2, n->nundef2);
        x->scope = es;
        exec_body(x, &n->else_kids);
        x->scope = outer;
        return;
    }
    lp->n = cnt;
    lp->gen = gen;
    pl_jv loopv = {.kind = JV_LOOP};
    loopv.v.lp = lp;
    size_t fetched = 0;
    /* one scope, emptied each iteration -- unless the body defines a macro,
     * whose closure must keep the scope of its own iteration */
    bool fresh = n->flag & FOR_DEFINES_MACRO;
    pl_jscope *s = NULL;
    x->loop_depth++;
    for (size_t i = 0; i < cnt; i++) {
        pl_jx_step(x);
        lp->index0 = i;
        if (fetched < i + 1) fetched = i + 1;
        if (fresh || !s) s = scope_new(x, outer);
        else s->n = 0;
        bind_undef(x, s, n->undef, n->nundef);
        scope_set(x, s, "loop", loopv);
        assign(x, s, n->target, pl_jloop_item(lp, i));
        x->scope = s;
        exec_body(x, &n->kids);
        x->scope = outer;
        int ctl = x->loop_ctl;
        x->loop_ctl = CTL_NONE;
        if (ctl == CTL_BREAK) break;
    }
    x->loop_depth--;
    if (gen) gen->pos = lp->gen_base == SIZE_MAX ? gen->n : gen_base + fetched;
}

static void exec_node(pl_jx *x, const pl_jnode *n) {
    pl_jx_step(x);
    const pl_jnode *saved = x->at;
    x->at = n;
    switch ((pl_jn_kind)n->kind) {
    case JN_DATA:
        write_out(x, n->value.v.s->s, n->value.v.s->len);
        break;
    case JN_OUTPUT:
        for (uint32_t i = 0; i < n->kids.n; i++) {
            pl_jv v = pl_jx_eval(x, n->kids.v[i]);
            x->at = n->kids.v[i];
            if (v.kind == JV_STR) {
                write_out(x, v.v.s->s, v.v.s->len);
            } else {
                pl_jbuf b = {0};
                pl_jv_write_str(x, &b, v);
                write_out(x, b.p, b.len);
            }
        }
        break;
    case JN_IF:
        if (pl_jv_truthy(x, pl_jx_eval(x, n->a))) exec_body(x, &n->kids);
        else exec_body(x, &n->else_kids);
        break;
    case JN_FOR:
        exec_for(x, n);
        break;
    case JN_SET:
        assign(x, x->scope, n->target, pl_jx_eval(x, n->a));
        break;
    case JN_SET_NS: {
        pl_jv v = pl_jx_eval(x, n->a);
        pl_jv ns;
        x->at = n;
        if (!scope_lookup(x->scope, n->target->a->name, &ns) || ns.kind != JV_NS)
            pl_jx_fail(x, "cannot assign attribute on non-namespace object");
        pl_jv_dict_set(x, ns, pl_jv_cstr(x, n->target->name), v);
        break;
    }
    case JN_SET_BLOCK: {
        pl_jv v = render_block(x, &n->kids, frame_scope(x, x->scope, n));
        if (n->b) v = apply_filter(x, n->b, v);
        x->at = n;
        if (n->target->kind == JN_GETATTR) {
            pl_jv ns;
            if (!scope_lookup(x->scope, n->target->a->name, &ns) || ns.kind != JV_NS)
                pl_jx_fail(x, "cannot assign attribute on non-namespace object");
            pl_jv_dict_set(x, ns, pl_jv_cstr(x, n->target->name), v);
        } else {
            assign(x, x->scope, n->target, v);
        }
        break;
    }
    case JN_MACRO: {
        pl_jmacro *m = pl_jx_alloc(x, sizeof *m);
        m->node = n;
        m->closure = x->scope;
        pl_jv mv = {.kind = JV_MACRO};
        mv.v.m = m;
        scope_set(x, x->scope, n->name, mv);
        break;
    }
    case JN_BREAK:
        x->loop_ctl = CTL_BREAK;
        break;
    case JN_CONTINUE:
        x->loop_ctl = CTL_CONTINUE;
        break;
    case JN_FILTER_BLOCK: {
        pl_jv v = render_block(x, &n->kids, frame_scope(x, x->scope, n));
        v = apply_filter(x, n->b, v);
        pl_jbuf b = {0};
        pl_jv_write_str(x, &b, v);
        write_out(x, b.p, b.len);
        break;
    }
    case JN_SCOPE: {
        pl_jv v = render_block(x, &n->kids, frame_scope(x, x->scope, n));
        write_out(x, v.v.s->s, v.v.s->len);
        break;
    }
    case JN_WITH: {
        pl_jscope *s = frame_scope(x, x->scope, n);
        for (uint32_t i = 0; i < n->else_kids.n; i++) assign(x, s, n->else_kids.v[i], pl_jx_eval(x, n->b->kids.v[i]));
        pl_jscope *outer = x->scope;
        x->scope = s;
        exec_body(x, &n->kids);
        x->scope = outer;
        break;
    }
    default:
        pl_jx_fail(x, "internal: not a statement");
    }
    x->at = saved;
}

static void exec_body(pl_jx *x, const pl_jnodes *body) {
    for (uint32_t i = 0; i < body->n; i++) {
        exec_node(x, body->v[i]);
        if (x->loop_ctl) return;
    }
}

pocketllm_status pl_jinja_render(pl_jinja_ctx *x, const pl_jinja_template *t, char **out, size_t *len) {
    *out = NULL;
    *len = 0;
    jmp_buf jb;
    x->jmp = &jb;
    x->at = NULL;
    char here;
    x->stack_base = (uintptr_t)&here;
    pl_jbuf top = {0};
    int rc = setjmp(jb);
    if (rc == 0) {
        x->top = &top;
        x->out = &top;
        x->scope = scope_new(x, globals(x));
        bind_undef(x, x->scope, t->undef, t->nundef);
        x->loop_ctl = CTL_NONE;
        exec_body(x, &t->body);
        char *s = malloc(top.len + 1);
        if (!s) {
            x->jmp = NULL;
            return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
        }
        if (top.len) memcpy(s, top.p, top.len);
        s[top.len] = '\0';
        *out = s;
        *len = top.len;
    }
    x->jmp = NULL;
    x->top = x->out = NULL;
    return rc == 0 ? POCKETLLM_OK : (pocketllm_status)rc;
}
