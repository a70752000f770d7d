/*
 * jinja_symbols.c -- jinja2's symbol analysis (jinja2/idtracking.py),
 * reproduced for the one place where it shows in the output.  jinja2
 * compiles each frame (the template, a for-loop body or else block, a
 * macro, a {% set %}/{% filter %}/{% with %} block, HF's {% generation %})
 * to a Python function whose variables are fixed at compile time: a name
 * the frame assigns before it reads it, and that no enclosing frame knows,
 * starts as "missing" -- so a read that runs earlier from a nested frame (a
 * loop body, a macro called before the assignment) gives Undefined, not
 * the template variable of that name.  The interpreter otherwise looks
 * names up dynamically through its scopes, which agrees with jinja2
 * everywhere else; this pass lists those names per frame so the frame can
 * start with them bound to Undefined.
 *
 * The walk mirrors RootVisitor/FrameSymbolVisitor: statements in order, an
 * assignment's value before its target, {% if %} branches (body, the elifs,
 * else) analysed apart and merged by branch_update, nested frames analysed
 * after the whole enclosing frame.
 */
#include <stdlib.h>
#include <string.h>

#include "chat/jinja_internal.h"

enum { L_RESOLVE, L_ALIAS, L_UNDEFINED, L_PARAM };

typedef struct ref {
    const char *name;
    uint8_t load;
} ref;

typedef struct syms {
    const struct syms *parent;
    ref *refs;
    size_t nrefs, crefs;
    const char **stores;
    size_t nstores, cstores;
    bool oom;
} syms;

static void syms_free(syms *s) {
    free(s->refs);
    free(s->stores);
}

static ref *own_ref(const syms *s, const char *name) {
    for (size_t i = 0; i < s->nrefs; i++)
        if (!strcmp(s->refs[i].name, name)) return &s->refs[i];
    return NULL;
}

static bool find_ref(const syms *s, const char *name) {
    for (; s; s = s->parent)
        if (own_ref(s, name)) return true;
    return false;
}

static void define_ref(syms *s, const char *name, uint8_t load) {
    ref *r = own_ref(s, name);
    if (r) {
        r->load = load;
        return;
    }
    if (s->nrefs == s->crefs) {
        size_t c = s->crefs ? s->crefs * 2 : 8;
        ref *n = realloc(s->refs, c * sizeof *n);
        if (!n) {
            s->oom = true;
            return;
        }
        s->refs = n;
        s->crefs = c;
    }
    s->refs[s->nrefs].name = name;
    s->refs[s->nrefs].load = load;
    s->nrefs++;
}

static bool stored(const syms *s, const char *name) {
    for (size_t i = 0; i < s->nstores; i++)
        if (!strcmp(s->stores[i], name)) return true;
    return false;
}

static void add_store(syms *s, const char *name) {
    if (stored(s, name)) return;
    if (s->nstores == s->cstores) {
        size_t c = s->cstores ? s->cstores * 2 : 8;
        const char **n = realloc(s->stores, c * sizeof *n);
        if (!n) {
            s->oom = true;
            return;
        }
        s->stores = n;
        s->cstores = c;
    }
    s->stores[s->nstores++] = name;
}

/* Symbols.store */
static void store(syms *s, const char *name) {
    add_store(s, name);
    if (own_ref(s, name)) return;
    define_ref(s, name, s->parent && find_ref(s->parent, name) ? L_ALIAS : L_UNDEFINED);
}

/* Symbols.load */
static void load(syms *s, const char *name) {
    if (!find_ref(s, name)) define_ref(s, name, L_RESOLVE);
}

static void param(syms *s, const char *name) {
    add_store(s, name);
    define_ref(s, name, L_PARAM);
}

static void copy_syms(syms *dst, const syms *src) {
    memset(dst, 0, sizeof *dst);
    dst->parent = src->parent;
    for (size_t i = 0; i < src->nrefs; i++) define_ref(dst, src->refs[i].name, src->refs[i].load);
    for (size_t i = 0; i < src->nstores; i++) add_store(dst, src->stores[i]);
    dst->oom |= src->oom;
}

/* Symbols.branch_update: names stored in some branches but not all load
 * from outside (alias or resolve) instead of starting undefined. */
static void branch_update(syms *s, syms *br, size_t nb) {
    const char **names = NULL;
    size_t *counts = NULL, n = 0, cap = 0;
    for (size_t b = 0; b < nb; b++)
        for (size_t i = 0; i < br[b].nstores; i++) {
            const char *t = br[b].stores[i];
            if (stored(s, t)) continue;
            size_t k;
            for (k = 0; k < n; k++)
                if (!strcmp(names[k], t)) break;
            if (k == n) {
                if (n == cap) {
                    cap = cap ? cap * 2 : 8;
                    const char **nn = realloc(names, cap * sizeof *nn);
                    size_t *nc = nn ? realloc(counts, cap * sizeof *nc) : NULL;
                    if (!nn || !nc) {
                        free(nn ? nn : names);
                        free(nc ? nc : counts);
                        s->oom = true;
                        return;
                    }
                    names = nn;
                    counts = nc;
                }
                names[n] = t;
                counts[n++] = 0;
            }
            counts[k]++;
        }
    for (size_t b = 0; b < nb; b++) {
        for (size_t i = 0; i < br[b].nrefs; i++) define_ref(s, br[b].refs[i].name, br[b].refs[i].load);
        for (size_t i = 0; i < br[b].nstores; i++) add_store(s, br[b].stores[i]);
        s->oom |= br[b].oom;
    }
    for (size_t k = 0; k < n; k++) {
        if (counts[k] == nb) continue;
        define_ref(s, names[k], s->parent && find_ref(s->parent, names[k]) ? L_ALIAS : L_RESOLVE);
    }
    free(names);
    free(counts);
}

/* ---- FrameSymbolVisitor ------------------------------------------- */

/* Every name an expression reads. */
static void visit_expr(syms *s, const pl_jnode *n) {
    if (!n) return;
    if (n->kind == JN_NAME) {
        load(s, n->name);
        return;
    }
    visit_expr(s, n->a);
    visit_expr(s, n->b);
    visit_expr(s, n->c);
    for (uint32_t i = 0; i < n->kids.n; i++) visit_expr(s, n->kids.v[i]);
    for (uint32_t i = 0; i < n->else_kids.n; i++) visit_expr(s, n->else_kids.v[i]);
}

static void visit_target(syms *s, const pl_jnode *t) {
    if (t->kind == JN_NAME) {
        store(s, t->name);
    } else if (t->kind == JN_TUPLE) {
        for (uint32_t i = 0; i < t->kids.n; i++) visit_target(s, t->kids.v[i]);
    } else if (t->kind == JN_GETATTR) { /* ns.attr: a read of ns */
        load(s, t->a->name);
    }
}

static void visit_stmts(syms *s, const pl_jnodes *body);

static void visit_stmt(syms *s, const pl_jnode *n) {
    switch ((pl_jn_kind)n->kind) {
    case JN_OUTPUT:
        for (uint32_t i = 0; i < n->kids.n; i++) visit_expr(s, n->kids.v[i]);
        break;
    case JN_IF: {
        /* jinja2's If has three branches: the body, all the elifs, else */
        visit_expr(s, n->a);
        syms br[3];
        copy_syms(&br[0], s);
        visit_stmts(&br[0], &n->kids);
        copy_syms(&br[1], s);
        const pl_jnode *cur = n;
        while (cur->else_kids.n == 1 && cur->else_kids.v[0]->kind == JN_IF && (cur->else_kids.v[0]->flag & IF_IS_ELIF)) {
            const pl_jnode *e = cur->else_kids.v[0];
            /* an elif is an If of its own with empty elif and else */
            visit_expr(&br[1], e->a);
            syms eb[3];
            copy_syms(&eb[0], &br[1]);
            visit_stmts(&eb[0], &e->kids);
            copy_syms(&eb[1], &br[1]);
            copy_syms(&eb[2], &br[1]);
            branch_update(&br[1], eb, 3);
            for (int i = 0; i < 3; i++) syms_free(&eb[i]);
            cur = e;
        }
        copy_syms(&br[2], s);
        visit_stmts(&br[2], &cur->else_kids);
        branch_update(s, br, 3);
        for (int i = 0; i < 3; i++) syms_free(&br[i]);
        break;
    }
    case JN_FOR:
        visit_expr(s, n->a);
        break;
    case JN_SET:
        visit_expr(s, n->a);
        visit_target(s, n->target);
        break;
    case JN_SET_NS:
        visit_expr(s, n->a);
        load(s, n->target->a->name);
        break;
    case JN_SET_BLOCK:
        visit_target(s, n->target);
        break;
    case JN_MACRO:
        store(s, n->name);
        break;
    case JN_FILTER_BLOCK:
        visit_expr(s, n->b);
        break;
    case JN_WITH:
        visit_expr(s, n->b);
        break;
    default: /* data, break, continue, generation (a call of nothing) */
        break;
    }
}

static void visit_stmts(syms *s, const pl_jnodes *body) {
    for (uint32_t i = 0; i < body->n; i++) visit_stmt(s, body->v[i]);
}

/* ---- frames ------------------------------------------------------- */

typedef struct ctx {
    pl_arena *arena;
    bool oom;
} ctx;

/* The frame's names that start undefined, into the template's arena. */
static const char **undefined_names(ctx *c, const syms *s, uint32_t *n) {
    uint32_t k = 0;
    for (size_t i = 0; i < s->nrefs; i++)
        if (s->refs[i].load == L_UNDEFINED) k++;
    *n = k;
    if (!k) return NULL;
    const char **v = pl_arena_alloc(c->arena, k * sizeof *v, 8);
    if (!v) {
        c->oom = true;
        *n = 0;
        return NULL;
    }
    k = 0;
    for (size_t i = 0; i < s->nrefs; i++)
        if (s->refs[i].load == L_UNDEFINED) v[k++] = s->refs[i].name;
    return v;
}

static void nested_frames(ctx *c, const syms *frame, const pl_jnodes *body);

/* Analyse one frame whose statements are body (after params), then the
 * frames nested in it. */
static const char **frame(ctx *c, const syms *parent, const pl_jnode *target, const pl_jnodes *params,
                          const pl_jnodes *defaults, const pl_jnodes *extra_loads, const pl_jnodes *body, uint32_t *n) {
    syms s;
    memset(&s, 0, sizeof s);
    s.parent = parent;
    if (target) {
        if (target->kind == JN_NAME) param(&s, target->name);
        else
            for (uint32_t i = 0; i < target->kids.n; i++) param(&s, target->kids.v[i]->name);
    }
    if (params)
        for (uint32_t i = 0; i < params->n; i++) {
            const pl_jnode *p = params->v[i];
            if (p->kind == JN_NAME) param(&s, p->name);
            else /* with: a tuple target */
                for (uint32_t k = 0; k < p->kids.n; k++) param(&s, p->kids.v[k]->name);
        }
    if (defaults)
        for (uint32_t i = 0; i < defaults->n; i++) visit_expr(&s, defaults->v[i]);
    visit_stmts(&s, body);
    if (extra_loads)
        for (uint32_t i = 0; i < extra_loads->n; i++) visit_expr(&s, extra_loads->v[i]);
    const char **u = undefined_names(c, &s, n);
    c->oom |= s.oom;
    nested_frames(c, &s, body);
    syms_free(&s);
    return u;
}

static void nested_in(ctx *c, const syms *fs, pl_jnode *n) {
    switch ((pl_jn_kind)n->kind) {
    case JN_IF:
        nested_frames(c, fs, &n->kids);
        nested_frames(c, fs, &n->else_kids);
        break;
    case JN_FOR:
        /* the loop declares `loop` and its target as parameters */
        {
            pl_jnode loopname = {.kind = JN_NAME, .name = "loop"};
            pl_jnode *lp = &loopname;
            pl_jnodes lps = {&lp, 1};
            n->undef = frame(c, fs, n->target, &lps, NULL, NULL, &n->kids, &n->nundef);
        }
        if (n->else_kids.n) n->undef2 = frame(c, fs, NULL, NULL, NULL, NULL, &n->else_kids, &n->nundef2);
        break;
    case JN_MACRO:
        n->undef = frame(c, fs, NULL, &n->kids, &n->else_kids, NULL, &n->a->kids, &n->nundef);
        break;
    case JN_SET_BLOCK:
    case JN_SCOPE:
        n->undef = frame(c, fs, NULL, NULL, NULL, NULL, &n->kids, &n->nundef);
        break;
    case JN_FILTER_BLOCK: {
        pl_jnode *f = n->b;
        pl_jnodes fl = {&f, 1};
        n->undef = frame(c, fs, NULL, NULL, NULL, &fl, &n->kids, &n->nundef);
        break;
    }
    case JN_WITH:
        n->undef = frame(c, fs, NULL, &n->else_kids, NULL, NULL, &n->kids, &n->nundef);
        break;
    default:
        break;
    }
}

static void nested_frames(ctx *c, const syms *fs, const pl_jnodes *body) {
    for (uint32_t i = 0; i < body->n; i++) nested_in(c, fs, body->v[i]);
}

bool pl_jsym_analyze(pl_jinja_template *t) {
    ctx c = {&t->arena, false};
    t->undef = frame(&c, NULL, NULL, NULL, NULL, NULL, &t->body, &t->nundef);
    return !c.oom;
}
