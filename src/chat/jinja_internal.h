/*
 * jinja_internal.h -- what the files of the Jinja interpreter share: the
 * value model (Python's None/bool/int/float/str/list/tuple/dict plus the
 * few runtime objects templates meet), the syntax tree, the render context
 * and its error exits.  Nothing outside src/chat/ includes this; the rest
 * of the engine uses jinja.h.
 *
 * Memory: every value and tree node lives in an arena owned by the render
 * context (values) or the parsed template (nodes); nothing is freed one at
 * a time.  Errors: a failing operation formats a one-line message through
 * pl_fail() and longjmp()s to the entry point that set ctx->jmp, which is
 * safe because nothing between the two owns memory outside the arena.
 */
#ifndef PL_JINJA_INTERNAL_H
#define PL_JINJA_INTERNAL_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "chat/jinja.h"
#include "pocketllm.h"
#include "tokenizer/unicode.h"

/* ------------------------------------------------------------------ */
/* Values                                                              */
/* ------------------------------------------------------------------ */

typedef enum pl_jv_kind {
    JV_UNDEF,  /* jinja2's Undefined: prints as "", most operations raise  */
    JV_NONE,
    JV_BOOL,
    JV_INT,    /* Python int, limited here to int64 (overflow raises)       */
    JV_FLOAT,
    JV_STR,    /* UTF-8; flag JV_MARKUP marks markupsafe.Markup ("|safe")   */
    JV_LIST,   /* shared and (by list.pop/clear only) mutable               */
    JV_TUPLE,
    JV_DICT,   /* insertion-ordered; never mutated once built               */
    JV_NS,     /* namespace(): attributes settable with {% set ns.x = %}    */
    JV_MACRO,
    JV_FUNC,   /* a global function: range, namespace, raise_exception...  */
    JV_METHOD, /* a bound method such as "abc".upper or d.items             */
    JV_LOOP,   /* the loop variable of a for loop                          */
    JV_GEN,    /* a generator (what select/map/unique... return): one pass  */
    JV_VIEW,   /* dict.keys()/values()/items()                             */
    JV_RANGE
} pl_jv_kind;

#define JV_MARKUP 1u

/* View kinds (pl_jv.aux for JV_VIEW). */
enum { JV_VIEW_KEYS, JV_VIEW_VALUES, JV_VIEW_ITEMS };

typedef struct pl_jstr pl_jstr;
typedef struct pl_jlist pl_jlist;
typedef struct pl_jdict pl_jdict;
typedef struct pl_jundef pl_jundef;
typedef struct pl_jmacro pl_jmacro;
typedef struct pl_jmethod pl_jmethod;
typedef struct pl_jloop pl_jloop;
typedef struct pl_jrange pl_jrange;

typedef struct pl_jv {
    uint8_t kind;
    uint8_t flags;
    uint16_t aux; /* FUNC: function id; VIEW: view kind */
    union {
        int64_t i; /* BOOL (0/1), INT */
        double f;
        pl_jstr *s;
        pl_jlist *l;   /* LIST, TUPLE, GEN */
        pl_jdict *d;   /* DICT, NS, VIEW */
        pl_jundef *u;  /* UNDEF with aux 0 (NULL: no message) */
        const char *name; /* UNDEF with aux 1: the name that is undefined */
        pl_jmacro *m;
        pl_jmethod *mt;
        pl_jloop *lp;
        pl_jrange *r;
    } v;
} pl_jv;

struct pl_jstr {
    size_t len; /* bytes */
    size_t ncp; /* code points (== len for ASCII) */
    char s[];   /* NUL-terminated */
};

struct pl_jlist {
    size_t n, cap;
    pl_jv *items;
    size_t pos; /* GEN: items before pos were already consumed */
};

struct pl_jdict {
    size_t n, cap;
    pl_jv *keys, *vals;
    uint32_t *index; /* open-addressing hash of key positions (+1), or NULL */
    size_t index_cap;
};

/* Why a value is undefined; the message is what using it raises. */
struct pl_jundef {
    const char *msg;
    bool security; /* an unsafe attribute (SecurityError) rather than missing */
};

struct pl_jmethod {
    pl_jv self;
    int id;           /* a method id, or PL_JMETH_UNSUPPORTED */
    const char *name; /* for PL_JMETH_UNSUPPORTED: the method's name */
};

/* A method Python has and this interpreter does not call: refused when
 * called (reading it, e.g. "is defined", works as in Python). */
#define PL_JMETH_UNSUPPORTED (-2)

struct pl_jrange {
    int64_t start, stop, step;
};

/* ------------------------------------------------------------------ */
/* Syntax tree                                                         */
/* ------------------------------------------------------------------ */

typedef enum pl_jn_kind {
    /* expressions */
    JN_CONST,    /* value */
    JN_NAME,     /* name */
    JN_GETATTR,  /* a.name */
    JN_GETITEM,  /* a[b] */
    JN_SLICE,    /* a[kids[0]:kids[1]:kids[2]] (NULL kids = omitted) */
    JN_CALL,     /* a(args, kwargs) */
    JN_FILTER,   /* a|name(args) -- a is NULL inside a filter block */
    JN_TEST,     /* a is name(args) */
    JN_BINOP,    /* a op b (+ - * / // % **) */
    JN_COMPARE,  /* a op1 kids[0] op2 kids[1] ...: ops in ops[] */
    JN_AND, JN_OR, JN_NOT, JN_NEG, JN_POS,
    JN_CONCAT,   /* kids joined with ~ */
    JN_CONDEXPR, /* b if a else c (c may be NULL) */
    JN_LIST, JN_TUPLE, JN_DICT, /* kids (dict: key, value, key, value...) */
    /* statements */
    JN_DATA,     /* literal template text: value */
    JN_OUTPUT,   /* print a ({{ a }}) */
    JN_IF,       /* if a: kids; else: else_kids (elif is a nested IF in else) */
    JN_FOR,      /* for target in a [if b]: kids; else: else_kids */
    JN_SET,      /* target = a */
    JN_SET_NS,   /* name.attr = a */
    JN_SET_BLOCK,/* target = rendered kids [| filter in b] */
    JN_MACRO,    /* name(params = defaults): kids */
    JN_BREAK, JN_CONTINUE,
    JN_FILTER_BLOCK, /* filter chain b (whose innermost subject is NULL) over kids */
    JN_SCOPE,    /* kids in their own scope ({% generation %}) */
    JN_WITH      /* targets = values (kids of b), body kids */
} pl_jn_kind;

enum { UNKNOWN_NAME = 1, UNKNOWN_SOFT = 2, FOR_DEFINES_MACRO = 1, IF_IS_ELIF = 1 };

typedef enum pl_jop {
    JOP_ADD, JOP_SUB, JOP_MUL, JOP_DIV, JOP_FLOORDIV, JOP_MOD, JOP_POW,
    JOP_EQ, JOP_NE, JOP_LT, JOP_LE, JOP_GT, JOP_GE, JOP_IN, JOP_NOTIN
} pl_jop;

typedef struct pl_jnode pl_jnode;

typedef struct pl_jnodes {
    pl_jnode **v;
    uint32_t n;
} pl_jnodes;

struct pl_jnode {
    uint8_t kind;
    uint8_t op;         /* BINOP: pl_jop */
    uint8_t flag;       /* FILTER/TEST: UNKNOWN_* (a name jinja2 does not know either);
                           MACRO: bit0 catches varargs, bit1 catches kwargs;
                           FOR: FOR_DEFINES_MACRO; IF: IF_IS_ELIF */
    uint32_t line, col;
    const char *name;   /* NAME/GETATTR/FILTER/TEST/MACRO/SET_NS(ns name) */
    const char *attr;   /* SET_NS attribute */
    int id;             /* FILTER/TEST: builtin id */
    pl_jv value;        /* CONST, DATA */
    pl_jnode *a, *b, *c, *target;
    pl_jnodes kids;     /* body, operands, items, positional args, params */
    pl_jnodes else_kids;/* else branch; CALL/FILTER/TEST: keyword values; MACRO: defaults */
    const char **kwnames; /* CALL/FILTER/TEST keyword names (else_kids.n of them) */
    uint8_t *ops;       /* COMPARE: one pl_jop per operand in kids */
    /* Frames (FOR body, MACRO, SET_BLOCK, FILTER_BLOCK, SCOPE, WITH): the
     * names jinja2 starts out undefined in the frame -- assigned there
     * before any read of the frame's own, so a read from a nested frame
     * that runs first sees Undefined, not an outer value (jinja_symbols.c).
     * FOR: undef2 is its else block's. */
    const char **undef, **undef2;
    uint32_t nundef, nundef2;
};

/* The parsed template. */
struct pl_jinja_template {
    pl_arena arena;
    pl_jnodes body;
    const char **undef; /* the root frame's names that start undefined */
    uint32_t nundef;
};

/* jinja2's symbol analysis (jinja_symbols.c): fills the undef lists of the
 * template and its frames.  Allocates from the template's arena; false on
 * allocation failure. */
bool pl_jsym_analyze(pl_jinja_template *t);

/* ------------------------------------------------------------------ */
/* Render context                                                      */
/* ------------------------------------------------------------------ */

typedef struct pl_jscope pl_jscope;
struct pl_jscope {
    pl_jscope *parent;
    uint32_t n, cap;
    const char **names;
    pl_jv *vals;
};

struct pl_jmacro {
    const pl_jnode *node;
    pl_jscope *closure;
};

struct pl_jloop {
    const pl_jv *items;   /* the items, or NULL for a range (drawn lazily) */
    pl_jrange range;
    size_t n, index0;
    pl_jlist *gen;   /* the generator being consumed, when the loop runs over one */
    size_t gen_base;
    uint32_t depth0;
    bool changed_set;
    pl_jv changed_last;
};

/* Item i of a loop's sequence. */
static inline pl_jv pl_jloop_item(const pl_jloop *lp, size_t i) {
    if (lp->items) return lp->items[i];
    pl_jv v = {.kind = JV_INT};
    v.v.i = lp->range.start + (int64_t)i * lp->range.step;
    return v;
}

/* A growing text buffer in the arena (output, macro results, set blocks). */
typedef struct pl_jbuf {
    char *p;
    size_t len, cap;
} pl_jbuf;

struct pl_jinja_ctx {
    pl_arena arena;
    size_t mem_used;
    pl_jinja_limits lim;
    jmp_buf *jmp;             /* where an error goes; NULL outside build/render */
    pl_jscope *globals;       /* the template's variables and global functions */
    pl_jscope *scope;         /* the innermost scope of the code being run */
    pl_jbuf *top;             /* the outermost buffer: the output (its limit) */
    pl_jbuf *out;             /* where text is written now */
    uint64_t steps;
    uint32_t depth;           /* macro calls in progress */
    uint32_t loop_depth;
    bool has_now;
    int64_t now;
    /* for/break/continue: set by a break/continue statement, read by the loop */
    int loop_ctl;
    /* the node being evaluated, for error positions */
    const pl_jnode *at;
    uintptr_t stack_base; /* where the entry point's frame is */
    struct big_block *big; /* large text buffers (jinja_ctx.c) */
};

/* C stack one render may use below its entry point (deeper templates are
 * refused): a thread with 8 MiB (or a server worker with 2 MiB) is safe. */
#ifndef PL_JINJA_STACK_BUDGET
#define PL_JINJA_STACK_BUDGET (1024u * 1024u)
#endif

typedef struct pl_jinja_ctx pl_jx;

/* ------------------------------------------------------------------ */
/* Errors (never return)                                               */
/* ------------------------------------------------------------------ */

/* Raise an error at the node being evaluated: "line L, column C: msg". */
_Noreturn void pl_jx_raise(pl_jx *x, pocketllm_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Python's TypeError/ValueError/... all map to this: a render failure. */
#define pl_jx_fail(x, ...) pl_jx_raise((x), POCKETLLM_ERR_INVALID_ARGUMENT, __VA_ARGS__)
/* Something Python renders that this interpreter does not. */
#define pl_jx_unsupported(x, ...) pl_jx_raise((x), POCKETLLM_ERR_UNSUPPORTED, __VA_ARGS__)

/* ------------------------------------------------------------------ */
/* Allocation (counted against the memory limit)                      */
/* ------------------------------------------------------------------ */

void *pl_jx_alloc(pl_jx *x, size_t size);
void *pl_jx_alloc_array(pl_jx *x, size_t n, size_t elem);
void pl_jbuf_put(pl_jx *x, pl_jbuf *b, const char *s, size_t n);
/* Room for `more` bytes past len. */
void pl_jbuf_reserve(pl_jx *x, pl_jbuf *b, size_t more);
void pl_jbuf_putc(pl_jx *x, pl_jbuf *b, char c);
void pl_jbuf_printf(pl_jx *x, pl_jbuf *b, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Count one unit of work against the step limit. */
void pl_jx_step(pl_jx *x);

/* ------------------------------------------------------------------ */
/* Value constructors and basic operations (jinja_value.c)            */
/* ------------------------------------------------------------------ */

extern const pl_jv pl_jv_none_v, pl_jv_undef_v, pl_jv_true_v, pl_jv_false_v;

static inline pl_jv pl_jv_bool(bool b) {
    pl_jv v = {.kind = JV_BOOL};
    v.v.i = b ? 1 : 0;
    return v;
}
static inline pl_jv pl_jv_int(int64_t i) {
    pl_jv v = {.kind = JV_INT};
    v.v.i = i;
    return v;
}
static inline pl_jv pl_jv_float(double f) {
    pl_jv v = {.kind = JV_FLOAT};
    v.v.f = f;
    return v;
}
static inline bool pl_jv_is_num(pl_jv v) {
    return v.kind == JV_INT || v.kind == JV_FLOAT || v.kind == JV_BOOL;
}

/* Strings: text must be valid UTF-8 (checked by the callers that take it
 * from outside). */
pl_jv pl_jv_str(pl_jx *x, const char *s, size_t len);
pl_jv pl_jv_cstr(pl_jx *x, const char *s);
pl_jv pl_jv_str_markup(pl_jv s, bool markup);
pl_jv pl_jv_str_buf(pl_jx *x, const pl_jbuf *b);
/* An undefined value with the message that using it raises. */
pl_jv pl_jv_undef_msg(pl_jx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Undefined for obj.name / obj[name] that does not exist. */
pl_jv pl_jv_undef_attr(pl_jx *x, pl_jv obj, pl_jv name, bool as_item);
pl_jv pl_jv_undef_name(pl_jx *x, const char *name);

pl_jv pl_jv_list(pl_jx *x, size_t cap);
pl_jv pl_jv_tuple(pl_jx *x, size_t n); /* n items, all None, to fill */
void pl_jv_list_push(pl_jx *x, pl_jv list, pl_jv item);
pl_jv pl_jv_dict(pl_jx *x);
pl_jv pl_jv_namespace(pl_jx *x);
/* Insert or replace (keys must be hashable: checked, raises otherwise). */
void pl_jv_dict_set(pl_jx *x, pl_jv dict, pl_jv key, pl_jv val);
void pl_jv_dict_set_cstr(pl_jx *x, pl_jv dict, const char *key, pl_jv val);
/* Lookup; false when absent. */
bool pl_jv_dict_get(pl_jx *x, pl_jv dict, pl_jv key, pl_jv *out);
pl_jv pl_jv_gen(pl_jx *x, pl_jv list); /* a generator over the items of a list */
pl_jv pl_jv_method(pl_jx *x, pl_jv self, int id);

/* Python semantics. */
const char *pl_jv_type_name(pl_jv v);     /* "str", "dict", "NoneType"... */
bool pl_jv_truthy(pl_jx *x, pl_jv v);
bool pl_jv_equal(pl_jx *x, pl_jv a, pl_jv b);
/* <0, 0, >0 for a < b etc.; raises TypeError on unorderable types. */
int pl_jv_compare(pl_jx *x, pl_jv a, pl_jv b, const char *op);
bool pl_jv_hashable(pl_jv v);
uint64_t pl_jv_hash(pl_jv v);
/* len(v); raises for values without a length. */
size_t pl_jv_len(pl_jx *x, pl_jv v);
/* The items of an iterable (list, tuple, str chars, dict keys, view,
 * range, generator -- consuming it, undefined -> empty); raises TypeError
 * for other values.  *n receives the count; the array is read-only. */
const pl_jv *pl_jv_iterate(pl_jx *x, pl_jv v, size_t *n);
/* A new list holding the items of an iterable. */
pl_jv pl_jv_to_list(pl_jx *x, pl_jv v);
/* The i-th code point of a string as a one-character string. */
pl_jv pl_jv_str_char(pl_jx *x, pl_jv s, size_t i);

/* str(v), repr(v) (jinja_repr.c). */
pl_jv pl_jv_to_str(pl_jx *x, pl_jv v);
void pl_jv_write_str(pl_jx *x, pl_jbuf *b, pl_jv v);
void pl_jv_write_repr(pl_jx *x, pl_jbuf *b, pl_jv v);
/* Python's repr() of a float into buf (at least 32 bytes). */
void pl_py_float_repr(double d, char *buf, size_t cap);
/* markupsafe.escape(str(v)) as a Markup string. */
pl_jv pl_jv_escape(pl_jx *x, pl_jv v);

/* json.dumps (jinja_json.c). */
typedef struct pl_json_opts {
    bool ensure_ascii, sort_keys;
    bool has_indent;
    const char *indent; size_t indent_len; /* the indent string */
    const char *item_sep; size_t item_sep_len;
    const char *key_sep; size_t key_sep_len;
} pl_json_opts;
void pl_json_dump(pl_jx *x, pl_jbuf *b, pl_jv v, const pl_json_opts *o, int level);
/* json.loads of valid JSON text into values; raises on malformed text. */
pl_jv pl_json_parse(pl_jx *x, const char *text, size_t len, const char *what);

/* ------------------------------------------------------------------ */
/* UTF-8 and Python string helpers (jinja_str.c)                       */
/* ------------------------------------------------------------------ */

/* Whether s[0..len) is valid UTF-8 (no overlong forms, surrogates or
 * values past U+10FFFF); if not, the offset of the first bad byte in *bad. */
bool pl_utf8_valid(const char *s, size_t len, size_t *bad);
/* Decode one code point of valid UTF-8; returns its byte length. */
static inline size_t pl_ju8_decode(const char *s, uint32_t *cp) {
    size_t used;
    *cp = pl_utf8_decode((const uint8_t *)s, 4, &used);
    return used;
}
static inline size_t pl_ju8_encode(uint32_t cp, char *out) { return pl_utf8_encode(cp, (uint8_t *)out); }
size_t pl_utf8_count(const char *s, size_t len);
/* Byte offset of code point i in a string value. */
size_t pl_jstr_offset(const pl_jstr *s, size_t i);
bool pl_py_isspace(uint32_t cp);
bool pl_py_isprintable(uint32_t cp);
bool pl_py_islinebreak(uint32_t cp);
/* Python's single-character predicates as PL_PY_* flags
 * (jinja_unicode_tables.h). */
uint16_t pl_py_flags(uint32_t cp);
/* str.lower/upper/capitalize/swapcase/title with CPython's full mappings. */
enum { PL_CASE_LOWER, PL_CASE_UPPER, PL_CASE_CAPITALIZE, PL_CASE_SWAPCASE, PL_CASE_TITLE };
pl_jv pl_jstr_case(pl_jx *x, pl_jv s, int mode);

/* ------------------------------------------------------------------ */
/* Builtins: filters, tests, methods, globals                          */
/* ------------------------------------------------------------------ */

/* Ids of the builtin filters and tests; -1 when this interpreter has none
 * by that name. */
int pl_jfilter_id(const char *name);
int pl_jtest_id(const char *name);
/* jinja2 has this filter but this interpreter does not. */
bool pl_jfilter_known_unsupported(const char *name);
/* jinja2 has this test (all of its tests are implemented). */
bool pl_jtest_known(const char *name);
/* Method ids (JV_METHOD): the attribute `name` of self, or -1 when
 * Python's type has no such method; *unsafe set when HF's sandbox forbids
 * it (list.append...), *unsupported when this interpreter lacks it. */
int pl_jmeth_lookup(const pl_jv self, const char *name, bool *unsafe, bool *unsupported);
/* At parse time: is `name` a method of str/list/dict/... that we cannot call? */
bool pl_jmeth_unsupported_name(const char *name);
const char *pl_jmeth_name(int id);

/* Evaluated call arguments. */
typedef struct pl_jargs {
    pl_jv *pos;
    size_t npos;
    const char **kwn;
    pl_jv *kwv;
    size_t nkw;
} pl_jargs;

pl_jv pl_jfilter_call(pl_jx *x, int id, const char *name, pl_jv subject, pl_jargs *a);
bool pl_jtest_call(pl_jx *x, int id, const char *name, pl_jv subject, pl_jargs *a);
pl_jv pl_jmeth_call(pl_jx *x, pl_jv method, pl_jargs *a);

/* Global functions (JV_FUNC aux). */
enum { JF_RANGE, JF_DICT, JF_NAMESPACE, JF_RAISE, JF_STRFTIME };
pl_jv pl_jfunc_call(pl_jx *x, int id, pl_jargs *a);

/* Argument binding for builtins, as Python binds a call: positional then
 * keyword arguments onto names[] (at most 16), into out[] which holds the
 * defaults beforehand; the first nrequired must be given.  Raises
 * TypeError-style errors. */
void pl_jargs_bind(pl_jx *x, const char *fname, pl_jargs *a, size_t nparams, const char *const *names,
                   pl_jv *out, size_t nrequired);

/* Python's str.format / % formatting (jinja_format.c). */
pl_jv pl_py_str_format(pl_jx *x, pl_jv fmt, pl_jargs *a);
pl_jv pl_py_percent_format(pl_jx *x, pl_jv fmt, pl_jv args);

/* The interpreter (jinja_eval.c). */
/* Set a template variable (from inside pl_jinja_build). */
void pl_jx_set_global(pl_jx *x, const char *name, pl_jv v);
pl_jv pl_jx_eval(pl_jx *x, const pl_jnode *n);
/* Attribute / item access with the sandbox's rules. */
pl_jv pl_jx_getattr(pl_jx *x, pl_jv obj, const char *name);
pl_jv pl_jx_getitem(pl_jx *x, pl_jv obj, pl_jv key);
/* Python's getattr() alone (the attr filter): no fallback to items. */
pl_jv pl_jx_getattr_only(pl_jx *x, pl_jv obj, const char *name);
/* Call a callable value (macro, function, method). */
pl_jv pl_jx_call_value(pl_jx *x, pl_jv f, pl_jargs *a);
/* Binary operators and comparisons. */
pl_jv pl_jx_binop(pl_jx *x, int op, pl_jv a, pl_jv b);
bool pl_jx_contains(pl_jx *x, pl_jv container, pl_jv item);
/* Raise the error an undefined value raises when used. */
_Noreturn void pl_jx_undef_fail(pl_jx *x, pl_jv u);

#endif
