/*
 * jinja_parse.c -- the Jinja parser: tokens to a syntax tree, following
 * jinja2 3.1's recursive-descent grammar (jinja2/parser.py) so that
 * precedence, tuples, tests and filters group exactly as there.
 *
 * This is also where a template is refused: a tag, filter, test, method or
 * global that jinja2 has but this interpreter does not reproduce fails the
 * parse with POCKETLLM_ERR_UNSUPPORTED naming it and its position.  Names
 * jinja2 itself does not know behave as in jinja2: an error when the
 * template is compiled, or -- inside an {% if %} or a conditional
 * expression, where jinja2 defers the check -- when the node is reached.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "chat/jinja_internal.h"
#include "chat/jinja_lex.h"

#define MAX_NESTING 200

static pl_jtok *cur(pl_jparse *p) { return &p->toks[p->pos]; }
static pl_jtok *look(pl_jparse *p) { return &p->toks[p->pos + 1 < p->ntoks ? p->pos + 1 : p->pos]; }
static pl_jtok *next(pl_jparse *p) {
    pl_jtok *t = cur(p);
    if (p->pos + 1 < p->ntoks) p->pos++;
    return t;
}

static const char *describe(const pl_jtok *t) {
    switch (t->type) {
    case JT_DATA: return "template data / text";
    case JT_VAR_BEGIN: return "begin of print statement";
    case JT_VAR_END: return "end of print statement";
    case JT_BLOCK_BEGIN: return "begin of statement block";
    case JT_BLOCK_END: return "end of statement block";
    case JT_NAME: return t->text;
    case JT_STRING: return "string";
    case JT_INT: return "integer";
    case JT_FLOAT: return "float";
    case JT_OP: return pl_jtok_op_text(t->op);
    case JT_EOF: return "end of template";
    }
    return "?";
}

static _Noreturn __attribute__((format(printf, 4, 5))) void fail_at(pl_jparse *p, pocketllm_status st, const pl_jtok *t,
                                                                    const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pl_jparse_fail(p, st, t->line, t->col, "%s", msg);
}

#define SYNTAX(p, t, ...) fail_at((p), POCKETLLM_ERR_FORMAT, (t), __VA_ARGS__)
#define REFUSE(p, t, ...) fail_at((p), POCKETLLM_ERR_UNSUPPORTED, (t), __VA_ARGS__)

static bool is_name(const pl_jtok *t, const char *name) { return t->type == JT_NAME && strcmp(t->text, name) == 0; }
static bool is_op(const pl_jtok *t, int op) { return t->type == JT_OP && t->op == op; }

static pl_jtok *expect_op(pl_jparse *p, int op) {
    pl_jtok *t = cur(p);
    if (!is_op(t, op)) SYNTAX(p, t, "expected token '%s', got '%s'", pl_jtok_op_text(op), describe(t));
    return next(p);
}

static pl_jtok *expect_type(pl_jparse *p, int type, const char *what) {
    pl_jtok *t = cur(p);
    if (t->type != type) SYNTAX(p, t, "expected %s, got '%s'", what, describe(t));
    return next(p);
}

static pl_jtok *expect_name(pl_jparse *p, const char *name) {
    pl_jtok *t = cur(p);
    if (!is_name(t, name)) SYNTAX(p, t, "expected token '%s', got '%s'", name, describe(t));
    return next(p);
}

static void *palloc(pl_jparse *p, size_t size) {
    void *m = pl_arena_alloc(p->arena, size, 16);
    if (!m) pl_jparse_fail(p, POCKETLLM_ERR_NO_MEMORY, 0, 0, "out of memory");
    return m;
}

static pl_jnode *mk(pl_jparse *p, int kind, const pl_jtok *t) {
    pl_jnode *n = palloc(p, sizeof *n);
    n->kind = (uint8_t)kind;
    n->line = t->line;
    n->col = t->col;
    n->id = -1;
    return n;
}

/* growable node lists */
typedef struct nvec {
    pl_jnode **v;
    uint32_t n, cap;
} nvec;

static void push(pl_jparse *p, nvec *v, pl_jnode *n) {
    if (v->n == v->cap) {
        uint32_t cap = v->cap ? v->cap * 2 : 4;
        pl_jnode **m = palloc(p, cap * sizeof *m);
        if (v->n) memcpy(m, v->v, v->n * sizeof *m);
        v->v = m;
        v->cap = cap;
    }
    v->v[v->n++] = n;
}

static pl_jnodes done(nvec v) {
    pl_jnodes r = {v.v, v.n};
    return r;
}

static void enter(pl_jparse *p, const pl_jtok *t) {
    if (++p->depth > MAX_NESTING) REFUSE(p, t, "the template nests more than %d levels deep", MAX_NESTING);
}
static void leave(pl_jparse *p) { p->depth--; }

static pl_jnode *parse_expression(pl_jparse *p, bool with_condexpr);
static pl_jnode *parse_tuple(pl_jparse *p, bool simplified, bool with_condexpr, const char *extra_end,
                             bool explicit_parens);
static pl_jnode *parse_primary(pl_jparse *p);
static pl_jnode *parse_postfix(pl_jparse *p, pl_jnode *node);
static pl_jnode *parse_filter(pl_jparse *p, pl_jnode *node, bool start_inline);
static pl_jnodes subparse(pl_jparse *p, const char *const *end_tokens);
static void soften(pl_jnode *n);

/* ---- expressions -------------------------------------------------- */

static pl_jnode *parse_condexpr(pl_jparse *p);

static pl_jnode *parse_unary(pl_jparse *p, bool with_filter);

static pl_jnode *parse_pow(pl_jparse *p) {
    pl_jnode *left = parse_unary(p, true);
    while (is_op(cur(p), JO_POW)) {
        pl_jtok *t = next(p);
        pl_jnode *n = mk(p, JN_BINOP, t);
        n->op = JOP_POW;
        n->a = left;
        n->b = parse_unary(p, true);
        left = n;
    }
    return left;
}

static pl_jnode *parse_math2(pl_jparse *p) {
    pl_jnode *left = parse_pow(p);
    for (;;) {
        pl_jtok *t = cur(p);
        int op;
        if (is_op(t, JO_MUL)) op = JOP_MUL;
        else if (is_op(t, JO_DIV)) op = JOP_DIV;
        else if (is_op(t, JO_FLOORDIV)) op = JOP_FLOORDIV;
        else if (is_op(t, JO_MOD)) op = JOP_MOD;
        else break;
        next(p);
        pl_jnode *n = mk(p, JN_BINOP, t);
        n->op = (uint8_t)op;
        n->a = left;
        n->b = parse_pow(p);
        left = n;
    }
    return left;
}

static pl_jnode *parse_concat(pl_jparse *p) {
    pl_jtok *t0 = cur(p);
    pl_jnode *first = parse_math2(p);
    if (!is_op(cur(p), JO_TILDE)) return first;
    nvec args = {0};
    push(p, &args, first);
    while (is_op(cur(p), JO_TILDE)) {
        next(p);
        push(p, &args, parse_math2(p));
    }
    pl_jnode *n = mk(p, JN_CONCAT, t0);
    n->kids = done(args);
    return n;
}

static pl_jnode *parse_math1(pl_jparse *p) {
    pl_jnode *left = parse_concat(p);
    for (;;) {
        pl_jtok *t = cur(p);
        int op;
        if (is_op(t, JO_ADD)) op = JOP_ADD;
        else if (is_op(t, JO_SUB)) op = JOP_SUB;
        else break;
        next(p);
        pl_jnode *n = mk(p, JN_BINOP, t);
        n->op = (uint8_t)op;
        n->a = left;
        n->b = parse_concat(p);
        left = n;
    }
    return left;
}

static pl_jnode *parse_compare(pl_jparse *p) {
    pl_jtok *t0 = cur(p);
    pl_jnode *expr = parse_math1(p);
    nvec operands = {0};
    uint8_t ops[64];
    uint32_t nops = 0;
    for (;;) {
        pl_jtok *t = cur(p);
        int op = -1;
        if (t->type == JT_OP) {
            switch (t->op) {
            case JO_EQ: op = JOP_EQ; break;
            case JO_NE: op = JOP_NE; break;
            case JO_LT: op = JOP_LT; break;
            case JO_LTEQ: op = JOP_LE; break;
            case JO_GT: op = JOP_GT; break;
            case JO_GTEQ: op = JOP_GE; break;
            default: break;
            }
            if (op >= 0) next(p);
        } else if (is_name(t, "in")) {
            op = JOP_IN;
            next(p);
        } else if (is_name(t, "not") && is_name(look(p), "in")) {
            op = JOP_NOTIN;
            next(p);
            next(p);
        }
        if (op < 0) break;
        if (nops == sizeof ops) REFUSE(p, t, "a comparison chain of more than %zu operators", sizeof ops);
        ops[nops++] = (uint8_t)op;
        push(p, &operands, parse_math1(p));
    }
    if (!nops) return expr;
    pl_jnode *n = mk(p, JN_COMPARE, t0);
    n->a = expr;
    n->kids = done(operands);
    n->ops = palloc(p, nops);
    memcpy(n->ops, ops, nops);
    return n;
}

static pl_jnode *parse_not(pl_jparse *p) {
    pl_jtok *t = cur(p);
    if (is_name(t, "not")) {
        next(p);
        enter(p, t);
        pl_jnode *n = mk(p, JN_NOT, t);
        n->a = parse_not(p);
        leave(p);
        return n;
    }
    return parse_compare(p);
}

static pl_jnode *parse_and(pl_jparse *p) {
    pl_jnode *left = parse_not(p);
    while (is_name(cur(p), "and")) {
        pl_jtok *t = next(p);
        pl_jnode *n = mk(p, JN_AND, t);
        n->a = left;
        n->b = parse_not(p);
        left = n;
    }
    return left;
}

static pl_jnode *parse_or(pl_jparse *p) {
    pl_jnode *left = parse_and(p);
    while (is_name(cur(p), "or")) {
        pl_jtok *t = next(p);
        pl_jnode *n = mk(p, JN_OR, t);
        n->a = left;
        n->b = parse_and(p);
        left = n;
    }
    return left;
}

static pl_jnode *parse_condexpr(pl_jparse *p) {
    pl_jtok *t0 = cur(p);
    enter(p, t0);
    /* jinja2 compiles a conditional expression in a soft frame */
    pl_jnode *expr1 = parse_or(p);
    while (is_name(cur(p), "if")) {
        pl_jtok *t = next(p);
        int soft = p->soft;
        p->soft = 1;
        pl_jnode *n = mk(p, JN_CONDEXPR, t);
        soften(expr1);
        n->b = expr1;
        n->a = parse_or(p);
        if (is_name(cur(p), "else")) {
            next(p);
            n->c = parse_condexpr(p);
        }
        p->soft = soft;
        expr1 = n;
    }
    leave(p);
    return expr1;
}

static pl_jnode *parse_expression(pl_jparse *p, bool with_condexpr) {
    return with_condexpr ? parse_condexpr(p) : parse_or(p);
}

static bool is_tuple_end(pl_jparse *p, const char *extra_end) {
    pl_jtok *t = cur(p);
    if (t->type == JT_VAR_END || t->type == JT_BLOCK_END || is_op(t, JO_RPAREN)) return true;
    return extra_end && is_name(t, extra_end);
}

static pl_jnode *parse_tuple(pl_jparse *p, bool simplified, bool with_condexpr, const char *extra_end,
                             bool explicit_parens) {
    pl_jtok *t0 = cur(p);
    nvec args = {0};
    bool is_tuple = false;
    for (;;) {
        if (args.n) expect_op(p, JO_COMMA);
        if (is_tuple_end(p, extra_end)) break;
        pl_jnode *e = simplified ? parse_primary(p) : parse_expression(p, with_condexpr);
        push(p, &args, e);
        if (is_op(cur(p), JO_COMMA)) is_tuple = true;
        else break;
    }
    if (!is_tuple) {
        if (args.n) return args.v[0];
        if (!explicit_parens) SYNTAX(p, cur(p), "Expected an expression, got '%s'", describe(cur(p)));
    }
    pl_jnode *n = mk(p, JN_TUPLE, t0);
    n->kids = done(args);
    return n;
}

static pl_jnode *parse_list(pl_jparse *p) {
    pl_jtok *t0 = expect_op(p, JO_LBRACKET);
    nvec items = {0};
    while (!is_op(cur(p), JO_RBRACKET)) {
        if (items.n) expect_op(p, JO_COMMA);
        if (is_op(cur(p), JO_RBRACKET)) break;
        push(p, &items, parse_expression(p, true));
    }
    expect_op(p, JO_RBRACKET);
    pl_jnode *n = mk(p, JN_LIST, t0);
    n->kids = done(items);
    return n;
}

static pl_jnode *parse_dict(pl_jparse *p) {
    pl_jtok *t0 = expect_op(p, JO_LBRACE);
    nvec items = {0};
    while (!is_op(cur(p), JO_RBRACE)) {
        if (items.n) expect_op(p, JO_COMMA);
        if (is_op(cur(p), JO_RBRACE)) break;
        push(p, &items, parse_expression(p, true));
        expect_op(p, JO_COLON);
        push(p, &items, parse_expression(p, true));
    }
    expect_op(p, JO_RBRACE);
    pl_jnode *n = mk(p, JN_DICT, t0);
    n->kids = done(items);
    return n;
}

static pl_jnode *parse_primary(pl_jparse *p) {
    pl_jtok *t = cur(p);
    enter(p, t);
    pl_jnode *n;
    if (t->type == JT_NAME) {
        next(p);
        n = mk(p, JN_CONST, t);
        if (!strcmp(t->text, "true") || !strcmp(t->text, "True")) {
            n->value = pl_jv_bool(true);
        } else if (!strcmp(t->text, "false") || !strcmp(t->text, "False")) {
            n->value = pl_jv_bool(false);
        } else if (!strcmp(t->text, "none") || !strcmp(t->text, "None")) {
            n->value.kind = JV_NONE;
        } else {
            n->kind = JN_NAME;
            n->name = t->text;
            if (!strcmp(t->text, "caller"))
                REFUSE(p, t, "'caller' ({%% call %%} blocks are not supported)");
        }
    } else if (t->type == JT_STRING) {
        /* adjacent string literals concatenate */
        size_t total = 0;
        size_t k = p->pos;
        while (p->toks[k].type == JT_STRING) total += p->toks[k++].len;
        char *s = palloc(p, total + 1);
        size_t off = 0;
        while (cur(p)->type == JT_STRING) {
            pl_jtok *st = next(p);
            memcpy(s + off, st->text, st->len);
            off += st->len;
        }
        s[off] = '\0';
        pl_jstr *js = palloc(p, sizeof *js + total + 1);
        js->len = total;
        js->ncp = pl_utf8_count(s, total);
        memcpy(js->s, s, total + 1);
        n = mk(p, JN_CONST, t);
        n->value.kind = JV_STR;
        n->value.v.s = js;
    } else if (t->type == JT_INT) {
        next(p);
        n = mk(p, JN_CONST, t);
        n->value = pl_jv_int(t->i);
    } else if (t->type == JT_FLOAT) {
        next(p);
        n = mk(p, JN_CONST, t);
        n->value = pl_jv_float(t->f);
    } else if (is_op(t, JO_LPAREN)) {
        next(p);
        n = parse_tuple(p, false, true, NULL, true);
        expect_op(p, JO_RPAREN);
    } else if (is_op(t, JO_LBRACKET)) {
        n = parse_list(p);
    } else if (is_op(t, JO_LBRACE)) {
        n = parse_dict(p);
    } else {
        SYNTAX(p, t, "unexpected '%s'", describe(t));
    }
    leave(p);
    return n;
}

/* Call arguments "(a, b, k=v)"; positional into kids, keywords into
 * else_kids/kwnames. */
static void parse_call_args(pl_jparse *p, pl_jnode *n) {
    pl_jtok *t0 = expect_op(p, JO_LPAREN);
    nvec args = {0}, kwv = {0};
    const char *kwn[64];
    bool require_comma = false;
    while (!is_op(cur(p), JO_RPAREN)) {
        if (require_comma) {
            expect_op(p, JO_COMMA);
            if (is_op(cur(p), JO_RPAREN)) break;
        }
        pl_jtok *t = cur(p);
        if (is_op(t, JO_MUL) || is_op(t, JO_POW)) REFUSE(p, t, "*args / **kwargs in a call");
        if (t->type == JT_NAME && is_op(look(p), JO_ASSIGN)) {
            next(p);
            next(p);
            if (kwv.n == sizeof kwn / sizeof kwn[0]) REFUSE(p, t, "more than 64 keyword arguments");
            for (uint32_t i = 0; i < kwv.n; i++)
                if (!strcmp(kwn[i], t->text)) SYNTAX(p, t, "keyword argument repeated: %s", t->text);
            kwn[kwv.n] = t->text;
            push(p, &kwv, parse_expression(p, true));
        } else {
            if (kwv.n) SYNTAX(p, t0, "invalid syntax for function call expression");
            push(p, &args, parse_expression(p, true));
        }
        require_comma = true;
    }
    expect_op(p, JO_RPAREN);
    n->kids = done(args);
    n->else_kids = done(kwv);
    if (kwv.n) {
        n->kwnames = palloc(p, kwv.n * sizeof *n->kwnames);
        memcpy(n->kwnames, kwn, kwv.n * sizeof *kwn);
    }
}

static pl_jnode *parse_call(pl_jparse *p, pl_jnode *callee) {
    pl_jtok *t = cur(p);
    pl_jnode *n = mk(p, JN_CALL, t);
    n->line = callee->line; /* errors point at what is called */
    n->col = callee->col;
    n->a = callee;
    parse_call_args(p, n);
    if (callee->kind == JN_GETATTR && pl_jmeth_unsupported_name(callee->name))
        REFUSE(p, t, "the method .%s() (not supported)", callee->name);
    if (callee->kind == JN_NAME &&
        (!strcmp(callee->name, "lipsum") || !strcmp(callee->name, "cycler") || !strcmp(callee->name, "joiner")))
        REFUSE(p, t, "the global %s() (not supported)", callee->name);
    return n;
}

static pl_jnode *parse_subscribed(pl_jparse *p) {
    pl_jtok *t = cur(p);
    pl_jnode *args[3] = {NULL, NULL, NULL};
    if (is_op(t, JO_COLON)) {
        next(p);
    } else {
        pl_jnode *e = parse_expression(p, true);
        if (!is_op(cur(p), JO_COLON)) return e;
        next(p);
        args[0] = e;
    }
    if (!is_op(cur(p), JO_COLON) && !is_op(cur(p), JO_RBRACKET) && !is_op(cur(p), JO_COMMA))
        args[1] = parse_expression(p, true);
    if (is_op(cur(p), JO_COLON)) {
        next(p);
        if (!is_op(cur(p), JO_RBRACKET) && !is_op(cur(p), JO_COMMA)) args[2] = parse_expression(p, true);
    }
    pl_jnode *n = mk(p, JN_SLICE, t);
    nvec k = {0};
    for (int i = 0; i < 3; i++) push(p, &k, args[i]);
    n->kids = done(k);
    return n;
}

static pl_jnode *parse_subscript(pl_jparse *p, pl_jnode *node) {
    pl_jtok *t = next(p);
    if (is_op(t, JO_DOT)) {
        pl_jtok *a = next(p);
        if (a->type == JT_NAME) {
            pl_jnode *n = mk(p, JN_GETATTR, t);
            n->a = node;
            n->name = a->text;
            return n;
        }
        if (a->type != JT_INT) SYNTAX(p, a, "expected name or number");
        pl_jnode *k = mk(p, JN_CONST, a);
        k->value = pl_jv_int(a->i);
        pl_jnode *n = mk(p, JN_GETITEM, t);
        n->a = node;
        n->b = k;
        return n;
    }
    /* "[" */
    nvec args = {0};
    while (!is_op(cur(p), JO_RBRACKET)) {
        if (args.n) expect_op(p, JO_COMMA);
        push(p, &args, parse_subscribed(p));
    }
    expect_op(p, JO_RBRACKET);
    pl_jnode *n = mk(p, JN_GETITEM, t);
    n->a = node;
    if (args.n == 1) {
        n->b = args.v[0];
    } else {
        pl_jnode *tu = mk(p, JN_TUPLE, t);
        tu->kids = done(args);
        n->b = tu;
    }
    if (n->b->kind == JN_TUPLE)
        for (uint32_t i = 0; i < n->b->kids.n; i++)
            if (n->b->kids.v[i]->kind == JN_SLICE) REFUSE(p, t, "a tuple of slices as a subscript");
    return n;
}

static pl_jnode *parse_postfix(pl_jparse *p, pl_jnode *node) {
    for (;;) {
        pl_jtok *t = cur(p);
        if (is_op(t, JO_DOT) || is_op(t, JO_LBRACKET)) node = parse_subscript(p, node);
        else if (is_op(t, JO_LPAREN)) node = parse_call(p, node);
        else break;
    }
    return node;
}

/* Resolve a filter or test name; see the file comment for the rules. */
static void resolve_builtin(pl_jparse *p, pl_jnode *n, const pl_jtok *t, bool is_filter) {
    n->id = is_filter ? pl_jfilter_id(n->name) : pl_jtest_id(n->name);
    if (n->id >= 0) return;
    if (is_filter ? pl_jfilter_known_unsupported(n->name) : pl_jtest_known(n->name))
        REFUSE(p, t, "the %s '%s' (not supported)", is_filter ? "filter" : "test", n->name);
    /* unknown to jinja2 as well: it raises when it is reached if the node is
     * in a soft frame (an {% if %} or a conditional expression), else the
     * template does not compile -- decided in check_unknown() once the
     * whole template is parsed, since "x|f if c" is only known to be soft
     * after the "if" */
    n->flag = UNKNOWN_NAME | (p->soft ? UNKNOWN_SOFT : 0);
}

/* Mark the unknown filters and tests of an expression soft. */
static void soften(pl_jnode *n) {
    if (!n) return;
    if ((n->kind == JN_FILTER || n->kind == JN_TEST) && (n->flag & UNKNOWN_NAME)) n->flag |= UNKNOWN_SOFT;
    soften(n->a);
    soften(n->b);
    soften(n->c);
    for (uint32_t i = 0; i < n->kids.n; i++) soften(n->kids.v[i]);
    if (n->kind != JN_MACRO)
        for (uint32_t i = 0; i < n->else_kids.n; i++) soften(n->else_kids.v[i]);
}

/* jinja2's compile-time error for an unknown filter or test outside a soft
 * frame, the first in template order. */
static void check_unknown(pl_jparse *p, const pl_jnode *n) {
    if (!n) return;
    if ((n->kind == JN_FILTER || n->kind == JN_TEST) && (n->flag & UNKNOWN_NAME) && !(n->flag & UNKNOWN_SOFT))
        pl_jparse_fail(p, POCKETLLM_ERR_FORMAT, n->line, n->col, "No %s named '%s'.",
                       n->kind == JN_FILTER ? "filter" : "test", n->name);
    check_unknown(p, n->target);
    check_unknown(p, n->a);
    check_unknown(p, n->b);
    check_unknown(p, n->c);
    for (uint32_t i = 0; i < n->kids.n; i++) check_unknown(p, n->kids.v[i]);
    for (uint32_t i = 0; i < n->else_kids.n; i++) check_unknown(p, n->else_kids.v[i]);
}

static const char *dotted_name(pl_jparse *p) {
    pl_jtok *t = expect_type(p, JT_NAME, "name");
    if (!is_op(cur(p), JO_DOT)) return t->text;
    size_t len = strlen(t->text);
    char *s = palloc(p, len + 1);
    memcpy(s, t->text, len + 1);
    while (is_op(cur(p), JO_DOT)) {
        next(p);
        pl_jtok *a = expect_type(p, JT_NAME, "name");
        size_t al = strlen(a->text);
        char *m = palloc(p, len + al + 2);
        memcpy(m, s, len);
        m[len] = '.';
        memcpy(m + len + 1, a->text, al + 1);
        s = m;
        len += al + 1;
    }
    return s;
}

static pl_jnode *parse_filter(pl_jparse *p, pl_jnode *node, bool start_inline) {
    while (is_op(cur(p), JO_PIPE) || start_inline) {
        if (!start_inline) next(p);
        pl_jtok *t = cur(p);
        pl_jnode *n = mk(p, JN_FILTER, t);
        n->name = dotted_name(p);
        n->a = node;
        if (is_op(cur(p), JO_LPAREN)) parse_call_args(p, n);
        resolve_builtin(p, n, t, true);
        node = n;
        start_inline = false;
    }
    return node;
}

static pl_jnode *parse_test(pl_jparse *p, pl_jnode *node) {
    pl_jtok *is_tok = next(p);
    bool negated = false;
    if (is_name(cur(p), "not")) {
        next(p);
        negated = true;
    }
    pl_jtok *t = cur(p);
    pl_jnode *n = mk(p, JN_TEST, is_tok);
    n->name = dotted_name(p);
    n->a = node;
    pl_jtok *c = cur(p);
    if (is_op(c, JO_LPAREN)) {
        parse_call_args(p, n);
    } else if ((c->type == JT_NAME || c->type == JT_STRING || c->type == JT_INT || c->type == JT_FLOAT ||
                is_op(c, JO_LBRACKET) || is_op(c, JO_LBRACE)) &&
               !is_name(c, "else") && !is_name(c, "or") && !is_name(c, "and")) {
        if (is_name(c, "is")) SYNTAX(p, c, "You cannot chain multiple tests with is");
        pl_jnode *arg = parse_postfix(p, parse_primary(p));
        nvec v = {0};
        push(p, &v, arg);
        n->kids = done(v);
    }
    resolve_builtin(p, n, t, false);
    if (negated) {
        pl_jnode *nn = mk(p, JN_NOT, is_tok);
        nn->a = n;
        return nn;
    }
    return n;
}

static pl_jnode *parse_filter_expr(pl_jparse *p, pl_jnode *node) {
    for (;;) {
        pl_jtok *t = cur(p);
        if (is_op(t, JO_PIPE)) node = parse_filter(p, node, false);
        else if (is_name(t, "is")) node = parse_test(p, node);
        else if (is_op(t, JO_LPAREN)) node = parse_call(p, node);
        else break;
    }
    return node;
}

static pl_jnode *parse_unary(pl_jparse *p, bool with_filter) {
    pl_jtok *t = cur(p);
    enter(p, t);
    pl_jnode *node;
    if (is_op(t, JO_SUB) || is_op(t, JO_ADD)) {
        next(p);
        node = mk(p, is_op(t, JO_SUB) ? JN_NEG : JN_POS, t);
        node->a = parse_unary(p, false);
    } else {
        node = parse_primary(p);
    }
    node = parse_postfix(p, node);
    if (with_filter) node = parse_filter_expr(p, node);
    leave(p);
    return node;
}

/* ---- statements --------------------------------------------------- */

static pl_jnode *parse_assign_target(pl_jparse *p, bool with_namespace, bool name_only, const char *extra_end) {
    pl_jtok *t = cur(p);
    if (with_namespace && t->type == JT_NAME && is_op(look(p), JO_DOT)) {
        next(p);
        next(p);
        pl_jtok *a = expect_type(p, JT_NAME, "name");
        pl_jnode *n = mk(p, JN_GETATTR, t);
        pl_jnode *ns = mk(p, JN_NAME, t);
        ns->name = t->text;
        n->a = ns;
        n->name = a->text;
        return n;
    }
    if (name_only) {
        pl_jtok *nt = expect_type(p, JT_NAME, "name");
        pl_jnode *n = mk(p, JN_NAME, nt);
        n->name = nt->text;
        return n;
    }
    pl_jnode *target = parse_tuple(p, true, true, extra_end, false);
    bool ok = target->kind == JN_NAME;
    if (target->kind == JN_TUPLE) {
        ok = true;
        for (uint32_t i = 0; i < target->kids.n; i++)
            if (target->kids.v[i]->kind != JN_NAME) ok = false;
    }
    if (!ok) SYNTAX(p, t, "can't assign to this expression");
    return target;
}

/* Whether a macro is defined anywhere under n (its closure would keep the
 * scope it was defined in). */
static bool defines_macro(const pl_jnode *n) {
    if (!n) return false;
    if (n->kind == JN_MACRO) return true;
    for (uint32_t i = 0; i < n->kids.n; i++)
        if (defines_macro(n->kids.v[i])) return true;
    for (uint32_t i = 0; i < n->else_kids.n; i++)
        if (defines_macro(n->else_kids.v[i])) return true;
    return false;
}

static const char *const END_FOR[] = {"endfor", "else", NULL};
static const char *const END_FOR_ONLY[] = {"endfor", NULL};
static const char *const END_IF[] = {"elif", "else", "endif", NULL};
static const char *const END_IF_ONLY[] = {"endif", NULL};
static const char *const END_SET[] = {"endset", NULL};
static const char *const END_MACRO[] = {"endmacro", NULL};
static const char *const END_FILTER[] = {"endfilter", NULL};
static const char *const END_WITH[] = {"endwith", NULL};
static const char *const END_GENERATION[] = {"endgeneration", NULL};

/* parse_statements: "%}" then a body up to one of the end tags, which is
 * left as the current token. */
static pl_jnodes parse_body(pl_jparse *p, const char *const *end) {
    if (is_op(cur(p), JO_COLON)) next(p);
    expect_type(p, JT_BLOCK_END, "end of statement block");
    pl_jnodes body = subparse(p, end);
    if (cur(p)->type == JT_EOF) {
        SYNTAX(p, cur(p), "Unexpected end of template. Jinja was looking for the following tags: '%s'.", end[0]);
    }
    return body;
}

/* a body that opens a new frame: not soft; break/continue belong to it */
typedef struct frame_save {
    int soft, in_loop, in_macro;
} frame_save;

static frame_save frame_enter(pl_jparse *p, bool loop, bool macro) {
    frame_save s = {p->soft, p->in_loop, p->in_macro};
    p->soft = 0;
    if (loop) p->in_loop = 1;
    if (macro) {
        p->in_loop = 0;
        p->in_macro = 1;
    }
    return s;
}
static void frame_leave(pl_jparse *p, frame_save s) {
    p->soft = s.soft;
    p->in_loop = s.in_loop;
    p->in_macro = s.in_macro;
}

static pl_jnode *parse_for(pl_jparse *p, pl_jtok *t) {
    pl_jnode *n = mk(p, JN_FOR, t);
    n->target = parse_assign_target(p, false, false, "in");
    expect_name(p, "in");
    n->a = parse_tuple(p, false, false, "recursive", false);
    if (is_name(cur(p), "if")) {
        next(p);
        frame_save s = frame_enter(p, false, false);
        n->b = parse_expression(p, true);
        frame_leave(p, s);
    }
    if (is_name(cur(p), "recursive")) REFUSE(p, cur(p), "recursive for loops");
    frame_save s = frame_enter(p, true, false);
    n->kids = parse_body(p, END_FOR);
    frame_leave(p, s);
    for (uint32_t i = 0; i < n->kids.n; i++)
        if (defines_macro(n->kids.v[i])) n->flag |= FOR_DEFINES_MACRO;
    if (strcmp(next(p)->text, "else") == 0) {
        /* jinja2 compiles the else block in the loop's frame too */
        frame_save s2 = frame_enter(p, false, false);
        n->else_kids = parse_body(p, END_FOR_ONLY);
        frame_leave(p, s2);
        next(p);
    }
    return n;
}

static pl_jnode *parse_if(pl_jparse *p, pl_jtok *t) {
    int soft = p->soft;
    p->soft = 1;
    pl_jnode *result = mk(p, JN_IF, t), *node = result;
    for (;;) {
        node->a = parse_tuple(p, false, false, NULL, false);
        node->kids = parse_body(p, END_IF);
        pl_jtok *e = next(p);
        if (!strcmp(e->text, "elif")) {
            pl_jnode *el = mk(p, JN_IF, e);
            el->flag = IF_IS_ELIF;
            nvec v = {0};
            push(p, &v, el);
            node->else_kids = done(v);
            node = el;
            continue;
        }
        if (!strcmp(e->text, "else")) {
            node->else_kids = parse_body(p, END_IF_ONLY);
            next(p);
        }
        break;
    }
    p->soft = soft;
    return result;
}

static pl_jnode *parse_set(pl_jparse *p, pl_jtok *t) {
    pl_jnode *target = parse_assign_target(p, true, false, NULL);
    if (is_op(cur(p), JO_ASSIGN)) {
        next(p);
        pl_jnode *n = mk(p, target->kind == JN_GETATTR ? JN_SET_NS : JN_SET, t);
        n->target = target;
        n->a = parse_tuple(p, false, true, NULL, false);
        return n;
    }
    pl_jnode *n = mk(p, JN_SET_BLOCK, t);
    n->target = target;
    n->b = parse_filter(p, NULL, false);
    frame_save s = frame_enter(p, false, false);
    int in_loop = p->in_loop;
    p->in_loop = in_loop ? 2 : 0; /* break inside is refused: see parse_statement */
    n->kids = parse_body(p, END_SET);
    p->in_loop = in_loop;
    frame_leave(p, s);
    next(p);
    return n;
}

/* Whether `name` is read anywhere under n (macro bodies: varargs/kwargs). */
static bool uses_name(const pl_jnode *n, const char *name) {
    if (!n) return false;
    if (n->kind == JN_NAME && n->name && !strcmp(n->name, name)) return true;
    if (uses_name(n->a, name) || uses_name(n->b, name) || uses_name(n->c, name)) return true;
    for (uint32_t i = 0; i < n->kids.n; i++)
        if (uses_name(n->kids.v[i], name)) return true;
    for (uint32_t i = 0; i < n->else_kids.n; i++)
        if (uses_name(n->else_kids.v[i], name)) return true;
    return false;
}

static pl_jnode *parse_macro(pl_jparse *p, pl_jtok *t) {
    pl_jnode *n = mk(p, JN_MACRO, t);
    pl_jtok *nt = expect_type(p, JT_NAME, "name");
    n->name = nt->text;
    expect_op(p, JO_LPAREN);
    nvec params = {0}, defaults = {0};
    frame_save s = frame_enter(p, false, true);
    while (!is_op(cur(p), JO_RPAREN)) {
        if (params.n) expect_op(p, JO_COMMA);
        pl_jtok *pt = expect_type(p, JT_NAME, "name");
        pl_jnode *pn = mk(p, JN_NAME, pt);
        pn->name = pt->text;
        if (is_op(cur(p), JO_ASSIGN)) {
            next(p);
            push(p, &defaults, parse_expression(p, true));
        } else if (defaults.n) {
            SYNTAX(p, pt, "non-default argument follows default argument");
        }
        push(p, &params, pn);
    }
    expect_op(p, JO_RPAREN);
    n->kids = done(params);
    n->else_kids = done(defaults);
    pl_jnode *body = mk(p, JN_SCOPE, t);
    body->kids = parse_body(p, END_MACRO);
    frame_leave(p, s);
    next(p);
    n->a = body;
    if (uses_name(body, "varargs")) n->flag |= 1;
    if (uses_name(body, "kwargs")) n->flag |= 2;
    for (uint32_t i = 0; i < n->kids.n; i++)
        if (!strcmp(n->kids.v[i]->name, "caller")) REFUSE(p, t, "a macro with a 'caller' parameter");
    return n;
}

static pl_jnode *parse_filter_block(pl_jparse *p, pl_jtok *t) {
    pl_jnode *n = mk(p, JN_FILTER_BLOCK, t);
    n->b = parse_filter(p, NULL, true);
    frame_save s = frame_enter(p, false, false);
    int in_loop = p->in_loop;
    p->in_loop = in_loop ? 2 : 0;
    n->kids = parse_body(p, END_FILTER);
    p->in_loop = in_loop;
    frame_leave(p, s);
    next(p);
    return n;
}

static pl_jnode *parse_with(pl_jparse *p, pl_jtok *t) {
    pl_jnode *n = mk(p, JN_WITH, t);
    nvec targets = {0}, values = {0};
    while (cur(p)->type != JT_BLOCK_END) {
        if (targets.n) expect_op(p, JO_COMMA);
        push(p, &targets, parse_assign_target(p, false, false, NULL));
        expect_op(p, JO_ASSIGN);
        push(p, &values, parse_expression(p, true));
    }
    n->else_kids = done(targets);
    pl_jnode *vals = mk(p, JN_LIST, t);
    vals->kids = done(values);
    n->b = vals;
    frame_save s = frame_enter(p, false, false);
    n->kids = parse_body(p, END_WITH);
    frame_leave(p, s);
    next(p);
    return n;
}

static pl_jnode *parse_statement(pl_jparse *p) {
    pl_jtok *t = cur(p);
    if (t->type != JT_NAME) SYNTAX(p, t, "tag name expected");
    next(p);
    const char *w = t->text;
    if (!strcmp(w, "for")) return parse_for(p, t);
    if (!strcmp(w, "if")) return parse_if(p, t);
    if (!strcmp(w, "set")) return parse_set(p, t);
    if (!strcmp(w, "macro")) return parse_macro(p, t);
    if (!strcmp(w, "filter")) return parse_filter_block(p, t);
    if (!strcmp(w, "with")) return parse_with(p, t);
    if (!strcmp(w, "print")) {
        pl_jnode *n = mk(p, JN_OUTPUT, t);
        nvec exprs = {0};
        while (cur(p)->type != JT_BLOCK_END) {
            if (exprs.n) expect_op(p, JO_COMMA);
            push(p, &exprs, parse_expression(p, true));
        }
        n->kids = done(exprs);
        return n;
    }
    if (!strcmp(w, "break") || !strcmp(w, "continue")) {
        if (!p->in_loop) SYNTAX(p, t, "'%s' outside loop", w);
        if (p->in_loop == 2) REFUSE(p, t, "{%% %s %%} inside a {%% set %%} or {%% filter %%} block (not supported)", w);
        return mk(p, w[0] == 'b' ? JN_BREAK : JN_CONTINUE, t);
    }
    if (!strcmp(w, "generation")) {
        /* HF's AssistantTracker: a call block whose caller output is kept */
        pl_jnode *n = mk(p, JN_SCOPE, t);
        frame_save s = frame_enter(p, false, true);
        n->kids = parse_body(p, END_GENERATION);
        frame_leave(p, s);
        next(p);
        return n;
    }
    static const char *const refused[] = {"block", "extends", "include", "import", "from", "autoescape", "call", NULL};
    for (int i = 0; refused[i]; i++)
        if (!strcmp(w, refused[i])) REFUSE(p, t, "the {%% %s %%} tag (not supported)", w);
    SYNTAX(p, t, "Encountered unknown tag '%s'.", w);
}

static bool is_end(const pl_jtok *t, const char *const *end) {
    if (!end || t->type != JT_NAME) return false;
    for (int i = 0; end[i]; i++)
        if (!strcmp(t->text, end[i])) return true;
    return false;
}

static pl_jnodes subparse(pl_jparse *p, const char *const *end_tokens) {
    nvec body = {0};
    pl_jtok *t0 = cur(p);
    enter(p, t0);
    for (;;) {
        pl_jtok *t = cur(p);
        if (t->type == JT_EOF) break;
        if (t->type == JT_DATA) {
            next(p);
            pl_jnode *n = mk(p, JN_DATA, t);
            pl_jstr *js = palloc(p, sizeof *js + t->len + 1);
            js->len = t->len;
            js->ncp = pl_utf8_count(t->text, t->len);
            memcpy(js->s, t->text, t->len);
            js->s[t->len] = '\0';
            n->value.kind = JV_STR;
            n->value.v.s = js;
            push(p, &body, n);
        } else if (t->type == JT_VAR_BEGIN) {
            next(p);
            pl_jnode *n = mk(p, JN_OUTPUT, t);
            nvec one = {0};
            push(p, &one, parse_tuple(p, false, true, NULL, false));
            n->kids = done(one);
            expect_type(p, JT_VAR_END, "end of print statement");
            push(p, &body, n);
        } else if (t->type == JT_BLOCK_BEGIN) {
            next(p);
            if (is_end(cur(p), end_tokens)) break;
            pl_jnode *st = parse_statement(p);
            push(p, &body, st);
            expect_type(p, JT_BLOCK_END, "end of statement block");
        } else {
            SYNTAX(p, t, "unexpected '%s'", describe(t));
        }
    }
    leave(p);
    return done(body);
}

pocketllm_status pl_jinja_parse(const char *src, size_t len, pl_jinja_template **out) {
    *out = NULL;
    if (!src && len) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "template: no source");
    size_t bad;
    if (!pl_utf8_valid(src ? src : "", len, &bad))
        return pl_fail(POCKETLLM_ERR_FORMAT, "template: invalid UTF-8 at byte %zu", bad);
    pl_jinja_template *t = calloc(1, sizeof *t);
    if (!t) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "template: out of memory");
    pl_jparse *p = calloc(1, sizeof *p);
    if (!p) {
        free(t);
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "template: out of memory");
    }
    p->arena = &t->arena;
    pocketllm_status st = POCKETLLM_OK;
    if (setjmp(p->jmp) == 0) {
        pl_jlex(p, src ? src : "", len);
        t->body = subparse(p, NULL);
        if (cur(p)->type != JT_EOF) SYNTAX(p, cur(p), "unexpected '%s'", describe(cur(p)));
        for (uint32_t i = 0; i < t->body.n; i++) check_unknown(p, t->body.v[i]);
        if (!pl_jsym_analyze(t)) pl_jparse_fail(p, POCKETLLM_ERR_NO_MEMORY, 1, 1, "out of memory");
    } else {
        st = p->status;
    }
    free(p->toks);
    free(p);
    if (st != POCKETLLM_OK) {
        pl_jinja_template_free(t);
        return st;
    }
    *out = t;
    return POCKETLLM_OK;
}

void pl_jinja_template_free(pl_jinja_template *t) {
    if (!t) return;
    pl_arena_free(&t->arena);
    free(t);
}
