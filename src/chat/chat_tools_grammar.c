/*
 * chat_tools_grammar.c -- the GBNF that forces a tool call in a format's
 * own syntax (tool_choice required / a named function, and the lazily
 * activated grammar of tool_choice auto: its text starts with the
 * format's trigger).  The call's syntax comes from the format's spec
 * (chat_tools_spec.c), the arguments from each function's parameters
 * schema through the JSON-schema compiler (src/grammar/json_schema.c).
 * The XML formats write raw parameter values: a string parameter is any
 * text without the value's closing tag (an exact automaton for it), its
 * enum / const literal alternatives; a keyword such a raw string cannot
 * honour (pattern, minLength, ...) is refused by name, never dropped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chat/chat_tools_internal.h"

#if defined(__has_include)
#if __has_include("grammar/json_schema.h")
#include "grammar/json_schema.h"
#define PL_HAVE_SCHEMA_COMPILER 1
#endif
#endif
#ifndef PL_HAVE_SCHEMA_COMPILER
/* The schema compiler is not in this tree yet: a weak reference, so the
 * engine links without it (the grammar is then refused with the reason). */
char *pl_schema_to_gbnf(const cJSON *schema, const char *prefix, char *err, size_t errlen) __attribute__((weak));
#endif

static char *compile_schema(const cJSON *schema, const char *prefix, char *err, size_t errlen) {
#ifndef PL_HAVE_SCHEMA_COMPILER
    if (!pl_schema_to_gbnf) {
        snprintf(err, errlen, "the JSON-schema compiler (src/grammar/json_schema.c) is not built in");
        return NULL;
    }
#endif
    return pl_schema_to_gbnf(schema, prefix, err, errlen);
}

/* ---- GBNF text ---------------------------------------------------------- */

/* a string literal */
static void lit(pl_tsb *b, const char *s) {
    pl_tsb_add(b, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '"': pl_tsb_puts(b, "\\\""); break;
        case '\\': pl_tsb_puts(b, "\\\\"); break;
        case '\n': pl_tsb_puts(b, "\\n"); break;
        case '\r': pl_tsb_puts(b, "\\r"); break;
        case '\t': pl_tsb_puts(b, "\\t"); break;
        default:
            if (c < 0x20 || c == 0x7f) pl_tsb_printf(b, "\\x%02X", c);
            else pl_tsb_add(b, s, 1);
        }
    }
    pl_tsb_add(b, "\" ", 2);
}

/* one character (a UTF-8 sequence) inside [...] */
static void class_char(pl_tsb *b, const char *c, size_t n) {
    if (n == 1) {
        switch (*c) {
        case '\n': pl_tsb_puts(b, "\\n"); return;
        case '\r': pl_tsb_puts(b, "\\r"); return;
        case '\t': pl_tsb_puts(b, "\\t"); return;
        case '\\':
        case ']':
        case '[':
        case '^':
        case '-': pl_tsb_add(b, "\\", 1); break;
        default: break;
        }
    }
    pl_tsb_add(b, c, n);
}

static size_t utf8_len(unsigned char c) { return c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4; }

/* Rules tc-v0..: any text that does not contain stop (whose first
 * character occurs only there), as the automaton that matches stop's
 * prefixes: state k has read k of its characters. */
static bool until_rules(pl_tsb *b, const char *stop) {
    const char *ch[64];
    size_t cl[64], n = 0;
    for (const char *s = stop; *s && n < 64; n++) {
        size_t l = utf8_len((unsigned char)*s);
        for (size_t k = 1; k < l; k++)
            if (!s[k]) return false;
        ch[n] = s;
        cl[n] = l;
        s += l;
    }
    if (n < 2 || n >= 64) return false;
    for (size_t k = 1; k < n; k++)
        if (cl[k] == cl[0] && memcmp(ch[k], ch[0], cl[0]) == 0) return false;
    pl_tsb_puts(b, "tc-val ::= tc-v0\n");
    for (size_t k = 0; k < n; k++) {
        pl_tsb_printf(b, "tc-v%zu ::= [^", k);
        class_char(b, ch[k], cl[k]);
        if (k) class_char(b, ch[0], cl[0]);
        pl_tsb_puts(b, "] tc-v0");
        if (k + 1 < n) {
            pl_tsb_puts(b, " | \"");
            pl_tsb_add(b, ch[k], cl[k]);
            pl_tsb_printf(b, "\" tc-v%zu", k + 1);
        }
        if (k) {
            pl_tsb_puts(b, " | \"");
            pl_tsb_add(b, ch[0], cl[0]);
            pl_tsb_puts(b, "\" tc-v1");
        }
        pl_tsb_puts(b, " | \"\"\n");
    }
    return true;
}

/* ---- building ------------------------------------------------------------ */

typedef struct gctx {
    const pl_tool_spec *s;
    pl_tsb out;   /* the rules */
    char *err;
    size_t errlen;
    bool need_val; /* tc-val is used */
    bool failed;
} gctx;

static void fail(gctx *g, const char *fmt, const char *a, const char *b, const char *c) {
    if (g->failed) return;
    g->failed = true;
    snprintf(g->err, g->errlen, fmt, a, b, c);
}

/* the schema compiler's rules for schema, start rule <prefix>root */
static void add_schema(gctx *g, const cJSON *schema, const char *prefix, const char *fname) {
    char msg[256] = "";
    char *r = compile_schema(schema, prefix, msg, sizeof msg);
    if (!r) {
        fail(g, "tool '%s': %s%s", fname, msg[0] ? msg : "its parameters schema is not supported", "");
        return;
    }
    pl_tsb_puts(&g->out, r);
    if (g->out.len && g->out.s[g->out.len - 1] != '\n') pl_tsb_puts(&g->out, "\n");
    free(r);
}

/* the arguments object of function i: rule t<i>-root */
static void add_args(gctx *g, int i, const cJSON *fn, const char *fname) {
    const cJSON *params = pl_tj_get(fn, "parameters");
    char prefix[32];
    snprintf(prefix, sizeof prefix, "t%d-", i);
    if (params) add_schema(g, params, prefix, fname);
    else pl_tsb_printf(&g->out, "t%d-root ::= \"{\" [ \\t\\n]* \"}\"\n", i);
}

/* An XML string parameter: the raw text, or its enum / const literals. */
static void xml_string_value(gctx *g, pl_tsb *rule, const cJSON *ps, const char *fname, const char *key) {
    static const char *const ok[] = {"type", "description", "title", "default", "examples", "enum", "const",
                                     "nullable", "$comment", "deprecated", "readOnly", "writeOnly"};
    for (const cJSON *k = ps ? ps->child : NULL; k; k = k->next) {
        bool fine = false;
        for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) fine = fine || strcmp(k->string, ok[i]) == 0;
        if (!fine) {
            fail(g, "tool '%s': keyword '%s' of parameter '%s' cannot be constrained in this format's raw values",
                 fname, k->string, key);
            return;
        }
    }
    const cJSON *e = pl_tj_get(ps, "enum"), *c = pl_tj_get(ps, "const");
    if (!e && !c) {
        pl_tsb_puts(rule, "tc-val ");
        g->need_val = true;
        return;
    }
    pl_tsb_puts(rule, "( ");
    const cJSON *first = c ? c : (pl_tj_is(e, cJSON_Array) ? e->child : NULL);
    if (!first) {
        fail(g, "tool '%s': parameter '%s' has an empty enum%s", fname, key, "");
        return;
    }
    for (const cJSON *v = first; v; v = c ? NULL : v->next) {
        if (v != first) pl_tsb_puts(rule, "| ");
        if (pl_tj_is(v, cJSON_String)) {
            lit(rule, v->valuestring);
        } else if (pl_tj_is(v, cJSON_True) || pl_tj_is(v, cJSON_False) || pl_tj_is(v, cJSON_NULL)) {
            lit(rule, pl_tj_is(v, cJSON_True) ? "true" : pl_tj_is(v, cJSON_False) ? "false" : "null");
        } else if (pl_tj_is(v, cJSON_Number)) {
            char num[64];
            snprintf(num, sizeof num, "%.17g", v->valuedouble);
            lit(rule, num);
        } else {
            fail(g, "tool '%s': parameter '%s' has an enum value this format cannot write%s", fname, key, "");
            return;
        }
    }
    pl_tsb_puts(rule, ") ");
}

/* A function's parameters' properties (NULL: none) and required list;
 * false (failed) when the properties are not an object. */
static bool param_props(gctx *g, const cJSON *fn, const char *fname, const cJSON **props, const cJSON **req) {
    const cJSON *params = pl_tj_get(fn, "parameters");
    *props = pl_tj_get(params, "properties");
    *req = pl_tj_get(params, "required");
    if (*props && !pl_tj_is(*props, cJSON_Object)) {
        fail(g, "tool '%s': its parameters' properties are not an object%s%s", fname, "", "");
        return false;
    }
    return true;
}

/* XML: the parameters of function i, in the schema's order (required ones
 * always, the others optional) */
static void xml_params(gctx *g, pl_tsb *rule, int i, const cJSON *fn, const char *fname) {
    const pl_tool_spec *s = g->s;
    const cJSON *props, *req;
    if (!param_props(g, fn, fname, &props, &req)) return;
    int j = 0;
    for (const cJSON *pr = props ? props->child : NULL; pr && !g->failed; pr = pr->next, j++) {
        bool required = false;
        for (const cJSON *r = pl_tj_is(req, cJSON_Array) ? req->child : NULL; r; r = r->next)
            required = required || (pl_tj_is(r, cJSON_String) && strcmp(r->valuestring, pr->string) == 0);
        const char *key = pr->string;
        if (!key[0] || strpbrk(key, "<>\"\n\r")) {
            fail(g, "tool '%s': parameter name '%s' cannot be written in this format%s", fname, key, "");
            return;
        }
        unsigned types = pl_schema_types(pr);
        pl_tsb_puts(rule, "( ");
        lit(rule, s->param_open);
        lit(rule, key);
        if (s->dsml) lit(rule, types & PL_JT_STR ? "\" string=\"true\">" : "\" string=\"false\">");
        else lit(rule, s->key_close);
        if (s->value_open) lit(rule, s->value_open);
        if (types & PL_JT_STR || !pl_tj_is(pr, cJSON_Object)) {
            xml_string_value(g, rule, pl_tj_is(pr, cJSON_Object) ? pr : NULL, fname, key);
        } else {
            char prefix[48];
            snprintf(prefix, sizeof prefix, "t%dp%d-", i, j);
            add_schema(g, pr, prefix, fname);
            pl_tsb_printf(rule, "%sroot ", prefix);
        }
        lit(rule, s->value_close);
        pl_tsb_puts(rule, required ? ") " : ")? ");
    }
}

/* Python: the keyword arguments of function i, in the schema's order,
 * required ones always, the others optional, ", " between those written:
 * rules t<i>-py-s<k> (none written yet from parameter k on) and
 * t<i>-py-t<k> (some written).  A value is the JSON the schema compiler
 * makes for its parameter (a JSON string is a Python one; the parser takes
 * JSON's true / false / null too), Python's words for a parameter that is
 * only a boolean or only null.  Without properties: any keywords, any
 * values. */
static void py_params(gctx *g, pl_tsb *rule, int i, const cJSON *fn, const char *fname) {
    const cJSON *props, *req;
    if (!param_props(g, fn, fname, &props, &req)) return;
    if (!props || !props->child) {
        cJSON *any = cJSON_CreateObject();
        char prefix[32];
        snprintf(prefix, sizeof prefix, "t%dany-", i);
        if (any) add_schema(g, any, prefix, fname);
        else fail(g, "out of memory%s%s%s", "", "", "");
        cJSON_Delete(any);
        pl_tsb_printf(&g->out, "t%d-py-kw ::= [a-zA-Z_] [a-zA-Z0-9_]* \"=\" t%dany-root\n", i, i);
        pl_tsb_printf(rule, "( t%d-py-kw ( \", \" t%d-py-kw )* )? ", i, i);
        return;
    }
    int n = 0;
    for (const cJSON *pr = props->child; pr; pr = pr->next) n++;
    int j = 0;
    for (const cJSON *pr = props->child; pr && !g->failed; pr = pr->next, j++) {
        const char *key = pr->string;
        bool ident = key[0] && !(key[0] >= '0' && key[0] <= '9');
        for (const char *c = key; *c; c++)
            ident = ident && ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_');
        if (!ident) {
            fail(g, "tool '%s': parameter name '%s' is not a Python keyword argument%s", fname, key, "");
            return;
        }
        bool required = false;
        for (const cJSON *r = pl_tj_is(req, cJSON_Array) ? req->child : NULL; r; r = r->next)
            required = required || (pl_tj_is(r, cJSON_String) && strcmp(r->valuestring, key) == 0);
        /* the argument: t<i>-py-a<j> */
        const unsigned types = pl_schema_types(pr);
        pl_tsb_printf(&g->out, "t%d-py-a%d ::= ", i, j);
        lit(&g->out, key);
        lit(&g->out, "=");
        if (types == PL_JT_BOOL) {
            pl_tsb_puts(&g->out, "( \"True\" | \"False\" )\n");
        } else if (types == PL_JT_NULL) {
            pl_tsb_puts(&g->out, "\"None\"\n");
        } else {
            char prefix[48];
            snprintf(prefix, sizeof prefix, "t%dp%d-", i, j);
            pl_tsb_printf(&g->out, "%sroot\n", prefix);
            add_schema(g, pr, prefix, fname);
        }
        /* s<j>: nothing written before; t<j>: something was */
        if (required) {
            pl_tsb_printf(&g->out, "t%d-py-s%d ::= t%d-py-a%d t%d-py-t%d\n", i, j, i, j, i, j + 1);
            pl_tsb_printf(&g->out, "t%d-py-t%d ::= \", \" t%d-py-a%d t%d-py-t%d\n", i, j, i, j, i, j + 1);
        } else {
            pl_tsb_printf(&g->out, "t%d-py-s%d ::= t%d-py-a%d t%d-py-t%d | t%d-py-s%d\n", i, j, i, j, i, j + 1, i, j + 1);
            pl_tsb_printf(&g->out, "t%d-py-t%d ::= ( \", \" t%d-py-a%d )? t%d-py-t%d\n", i, j, i, j, i, j + 1);
        }
    }
    pl_tsb_printf(&g->out, "t%d-py-s%d ::= \"\"\nt%d-py-t%d ::= \"\"\n", i, n, i, n);
    pl_tsb_printf(rule, "t%d-py-s0 ", i);
}

/* rule tc-f<i>: one call to function i */
static void add_call(gctx *g, int i, const cJSON *fn, const char *fname) {
    const pl_tool_spec *s = g->s;
    pl_tsb rule = {0};
    pl_tsb_printf(&rule, "tc-f%d ::= ", i);
    /* the trigger opens each call (Python calls sit in one list) */
    bool opens_call = s->shape != PL_TSHAPE_JSON && s->shape != PL_TSHAPE_PY && !s->call_open && !s->prompt_opens;
    if (opens_call) {
        lit(&rule, s->open);
        if (s->open_nl) lit(&rule, "\n");
    }
    if (s->shape == PL_TSHAPE_PY) {
        lit(&rule, fname);
        lit(&rule, "(");
        py_params(g, &rule, i, fn, fname);
        lit(&rule, ")");
    } else if (s->shape == PL_TSHAPE_JSON) {
        char head[160];
        if (s->json_lead_gbnf) {
            lit(&rule, "{");
            pl_tsb_printf(&rule, "%s ", s->json_lead_gbnf);
        }
        if (s->name_is_key)
            snprintf(head, sizeof head, "{\"%s\": ", fname);
        else
            snprintf(head, sizeof head, "%s\"%s\": \"%s\", \"%s\": ", s->json_lead_gbnf ? "" : "{",
                     s->name_key ? s->name_key : "name", fname, s->args_key);
        lit(&rule, head);
        pl_tsb_printf(&rule, "t%d-root ", i);
        lit(&rule, "}");
        add_args(g, i, fn, fname);
    } else {
        if (s->call_open) lit(&rule, s->call_open);
        if (s->pre_name_gbnf) pl_tsb_printf(&rule, "%s ", s->pre_name_gbnf);
        if (s->name_open) lit(&rule, s->name_open);
        lit(&rule, fname);
        if (s->shape == PL_TSHAPE_NAMED) {
            if (s->post_name_gbnf && s->post_name_gbnf[0]) pl_tsb_printf(&rule, "%s ", s->post_name_gbnf);
            lit(&rule, s->args_open);
            pl_tsb_printf(&rule, "t%d-root ", i);
            if (s->args_close) lit(&rule, s->args_close);
            add_args(g, i, fn, fname);
        } else {
            lit(&rule, s->name_close);
            xml_params(g, &rule, i, fn, fname);
        }
        if (s->call_close) lit(&rule, s->call_close);
    }
    pl_tsb_puts(&rule, "\n");
    pl_tsb_add(&g->out, rule.s, rule.len);
    if (rule.oom) g->out.oom = true;
    pl_tsb_free(&rule);
}

/* Functionary v3.2 under tool_choice auto: the reply is text ("all" and a
 * newline, then anything without ">>>") that calls may follow, or calls */
static void add_root_text_or_calls(gctx *g, bool parallel, pl_tsb *root) {
    const pl_tool_spec *s = g->s;
    pl_tsb_puts(root, "root ::= tc-calls | ");
    lit(root, s->text_name);
    pl_tsb_puts(root, "\"\\n\" tc-text ( ");
    lit(root, s->open);
    pl_tsb_puts(root, "tc-calls )?\n");
    pl_tsb_puts(root, "tc-calls ::= tc-any ");
    if (parallel && !s->single_call) {
        pl_tsb_puts(root, "( ");
        lit(root, s->call_sep);
        pl_tsb_puts(root, "tc-any )* ");
    }
    /* runs of '>' shorter than three, each followed by another character */
    pl_tsb_puts(root, "\ntc-text ::= ( [^>] | \">\" [^>] | \">>\" [^>] )* ( \">\" | \">>\" )?\n");
}

/* root: the calls in their sections */
static void add_root(gctx *g, bool parallel, bool for_auto, pl_tsb *root) {
    const pl_tool_spec *s = g->s;
    if (s->prompt_opens && for_auto && s->text_name) {
        add_root_text_or_calls(g, parallel, root);
        return;
    }
    const char *sep = s->call_sep ? s->call_sep : "";
    bool opens_call = s->shape != PL_TSHAPE_JSON && s->shape != PL_TSHAPE_PY && !s->call_open && !s->prompt_opens;
    const char *item = "tc-any ";
    if (s->open && !opens_call && s->one_per_section) {
        /* each call in its own section */
        pl_tsb_puts(root, "tc-call ::= ");
        lit(root, s->open);
        if (s->open_nl) lit(root, "\n");
        pl_tsb_puts(root, "tc-any ");
        if (s->close) lit(root, s->close);
        pl_tsb_puts(root, "\n");
        item = "tc-call ";
    }
    pl_tsb_puts(root, "root ::= ");
    bool section = s->open && !opens_call && !s->one_per_section && !s->prompt_opens;
    bool bracket = section && s->list && s->open[strlen(s->open) - 1] != '[';
    if (section) {
        lit(root, s->open);
        if (s->open_nl) lit(root, "\n");
        if (bracket) lit(root, "[");
    }
    pl_tsb_puts(root, item);
    if (parallel && !s->single_call) {
        pl_tsb_puts(root, "( ");
        if (*sep) lit(root, sep);
        pl_tsb_printf(root, "%s)* ", item);
    }
    if (section) {
        if (s->list) lit(root, "]");
        if (s->close) lit(root, s->close);
    }
    pl_tsb_puts(root, "\n");
}

char *pl_tools_grammar(pl_tool_format f, const cJSON *tools, const char *only_name, bool parallel, bool for_auto,
                       char *err, size_t errlen) {
    char dummy[8];
    if (!err || !errlen) {
        err = dummy;
        errlen = sizeof dummy;
    }
    err[0] = 0;
    const pl_tool_spec *s = pl_tool_spec_get(f);
    if (!s) {
        snprintf(err, errlen, "no tool-call grammar for the %s format", pl_tools_format_name(f));
        return NULL;
    }
    if (!pl_tj_is(tools, cJSON_Array) || !tools->child) {
        snprintf(err, errlen, "tools must be a non-empty array");
        return NULL;
    }
    gctx g = {.s = s, .err = err, .errlen = errlen};
    pl_tsb any = {0};
    pl_tsb_puts(&any, "tc-any ::= ");
    int i = 0, used = 0;
    for (const cJSON *t = tools->child; t && !g.failed; t = t->next, i++) {
        const cJSON *fn = pl_tools_function(tools, i);
        const char *name = pl_tools_function_name(fn);
        char idx[16];
        snprintf(idx, sizeof idx, "%d", i);
        if (!pl_tj_is(t, cJSON_Object) || !name) {
            fail(&g, "tools[%s] is not a function with a name%s%s", idx, "", "");
            break;
        }
        if (!pl_tools_name_ok(name, strlen(name))) {
            fail(&g, "tools[%s]: function name '%s' is not 1 to 64 of [A-Za-z0-9_.-]%s", idx, name, "");
            break;
        }
        if (pl_tools_find(tools, name, strlen(name)) != fn) {
            fail(&g, "tools[%s]: function name '%s' is used twice%s", idx, name, "");
            break;
        }
        const cJSON *params = pl_tj_get(fn, "parameters");
        if (params && !pl_tj_is(params, cJSON_Object)) {
            fail(&g, "tool '%s': its parameters are not a JSON-schema object%s%s", name, "", "");
            break;
        }
        if (only_name && strcmp(only_name, name) != 0) continue;
        add_call(&g, i, fn, name);
        pl_tsb_printf(&any, "%stc-f%d ", used++ ? "| " : "", i);
    }
    if (!g.failed && only_name && !used)
        fail(&g, "tool_choice names function '%s', which is not in tools%s%s", only_name, "", "");
    char stop[64] = "";
    if (s->value_close) { /* the closing tag without its whitespace */
        const char *a = s->value_close;
        while (*a == '\n') a++;
        size_t n = strcspn(a, "\n");
        snprintf(stop, sizeof stop, "%.*s", (int)n, a);
    }
    if (!g.failed && g.need_val && !until_rules(&g.out, stop))
        fail(&g, "internal error: no value rule for the %s format%s%s", s->family, "", "");
    pl_tsb root = {0};
    if (!g.failed) add_root(&g, parallel, for_auto, &root);
    pl_tsb_puts(&any, "\n");
    char *out = NULL;
    if (!g.failed) {
        pl_tsb all = {0};
        pl_tsb_add(&all, root.s, root.len);
        pl_tsb_add(&all, any.s, any.len);
        pl_tsb_add(&all, g.out.s, g.out.len);
        if (root.oom || any.oom || g.out.oom || !pl_tsb_str(&all)) {
            snprintf(err, errlen, "out of memory");
            pl_tsb_free(&all);
        } else {
            out = all.s;
        }
    }
    pl_tsb_free(&root);
    pl_tsb_free(&any);
    pl_tsb_free(&g.out);
    return out;
}
