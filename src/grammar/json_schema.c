/*
 * json_schema.c -- JSON Schema to GBNF (see json_schema.h).
 *
 * A schema is visited once, top down; each visit gives a GBNF expression
 * and makes named rules for the parts worth naming (objects, key/value
 * pairs, definitions).  Shared pieces (whitespace, strings, numbers, any
 * value, the formats) are helper rules emitted once at the end.  Every
 * rule name is the caller's prefix + a name derived from the schema path
 * ("root-address-street-kv") or a helper name ("ws"); derived names start
 * with "root", "def-" or "ref-", which no helper does.
 *
 * What the grammar allows is valid for the schema, with one exception:
 * oneOf is treated as anyOf (a value that matches two of its alternatives
 * gets through; telling them apart is not something a grammar does).
 * Where exactness would need what GBNF cannot say cheaply, the grammar
 * allows a documented subset instead: numbers have at most 16 integer
 * and 16 fraction digits and 3 exponent digits (never "-0"), bounded
 * numbers have no exponent, object properties come in the schema's order
 * (required ones first) with any extra properties after them, keys and
 * strings from patterns and enums are written in one canonical JSON
 * spelling, a schema without "type" but with (say) "properties" stands
 * for objects only, and a pattern whose several parts vary in length is
 * narrowed to meet minLength/maxLength.  Everything else is refused with
 * an error naming the keyword and the schema path; so are unsatisfiable
 * schemas (minLength > maxLength, an empty enum, ...).
 */
#include "grammar/json_schema.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grammar/regex_gbnf.h"

#define NEST_LIMIT 400     /* visits in progress */
#define MERGE_LIMIT 32     /* allOf / $ref levels merged into one schema */
#define PRODUCT_LIMIT 256  /* anyOf x anyOf combinations */
#define NAME_PART_MAX 48   /* characters of one schema-derived name part */
#define INT_DIGITS 16      /* the most integer digits written */
#define FRAC_DIGITS 16     /* the most fraction digits written */
#define BIG 1e16           /* bounds at or past this are beyond INT_DIGITS */
#define KEY_MAX 256        /* longest property name when other keys are allowed */

/* the expression of a schema no value satisfies */
static char never_mark[] = "";
#define NEVER never_mark

static void efree(char *e) {
    if (e != NEVER)
        free(e);
}

/* ------------------------------------------------------------------ */
/* context                                                             */

enum {
    H_WS, H_CHAR, H_STRING, H_NUMBER, H_INTEGER, H_BOOLEAN, H_NULL, H_VALUE,
    H_OBJECT, H_ARRAY, H_KCHAR, H_DATE, H_TIME, H_DATETIME, H_UUID, H_EMAIL, H_COUNT
};

static const char *const helper_names[H_COUNT] = {
    "ws", "char", "string", "number", "integer", "boolean", "null", "value",
    "object", "array", "kchar", "date", "time", "date-time", "uuid", "email",
};

/* the regexes of the formats (date is a real calendar date of the years
   0001-9999, leap years included; time is RFC 3339's full-time with at
   most 6 fraction digits; email is a conservative subset of RFC 5321
   addresses: at most 84 characters, letters, digits and _%+- with one
   optional dot in the local part, one or two domain labels and a TLD) */
#define RX_DATE                                                                                          \
    "(?:(?:[0-9]{3}[1-9]|[0-9]{2}[1-9]0|[0-9][1-9]00|[1-9]000)-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])" \
    "|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))"                                   \
    "|(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)-02-29)"
#define RX_TIME "(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.[0-9]{1,6})?(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
static const char *const format_regex[] = {
    [H_DATE] = "^" RX_DATE "$",
    [H_TIME] = "^" RX_TIME "$",
    [H_DATETIME] = "^" RX_DATE "T" RX_TIME "$",
    [H_UUID] = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
    [H_EMAIL] = "^[A-Za-z0-9_%+-]{1,24}(?:\\.[A-Za-z0-9_%+-]{1,16})?@[A-Za-z0-9](?:[A-Za-z0-9-]{0,14}[A-Za-z0-9])?"
                "(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,14}[A-Za-z0-9])?)?\\.[A-Za-z]{2,8}$",
};

typedef struct {
    char *name;
    char *body; /* NULL while reserved */
} jrule;

typedef struct {
    char *ref;
    const char *name; /* owned by the rule table */
    int depth;        /* c->depth when its visit began */
    int busy;
} jref;

typedef struct {
    const cJSON *doc;
    const char *prefix;
    jrule *rules;
    size_t nrules, caprules;
    jref *refs;
    size_t nrefs, caprefs;
    unsigned helpers;
    int depth; /* objects/arrays entered: a $ref met again at the same depth is left recursion */
    int nest;
    char *err;
    size_t errlen;
    int failed;
} jsc;

static void fail(jsc *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void fail(jsc *c, const char *fmt, ...) {
    if (c->failed)
        return;
    c->failed = 1;
    if (c->err && c->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->err, c->errlen, fmt, ap);
        va_end(ap);
    }
}

static void oom(jsc *c) { fail(c, "out of memory"); }

static char *dupstr(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static char *jstrdup(jsc *c, const char *s) {
    char *d = dupstr(s);
    if (!d)
        oom(c);
    return d;
}

static char *jfmt(jsc *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static char *jfmt(jsc *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = n < 0 ? NULL : malloc((size_t)n + 1);
    if (!s) {
        oom(c);
        return NULL;
    }
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

/* take a text buffer's contents, failing on out-of-memory */
static char *take(jsc *c, pl_rx_buf *sb) {
    char *s = pl_rx_buf_take(sb);
    if (!s)
        oom(c);
    return s;
}

/* path + "/" + segment, the segment escaped as a JSON pointer */
static char *path_join(jsc *c, const char *base, const char *seg) {
    pl_rx_buf sb = {0};
    pl_rx_buf_puts(&sb, base);
    pl_rx_buf_putc(&sb, '/');
    for (const char *p = seg; *p; p++) {
        if (*p == '~')
            pl_rx_buf_puts(&sb, "~0");
        else if (*p == '/')
            pl_rx_buf_puts(&sb, "~1");
        else
            pl_rx_buf_putc(&sb, *p);
    }
    return take(c, &sb);
}

static char *path_idx(jsc *c, const char *base, const char *key, int i) {
    return jfmt(c, "%s/%s/%d", base, key, i);
}

/* ------------------------------------------------------------------ */
/* rules                                                               */

/* hint-part for a rule name: [a-zA-Z0-9-] only, runs of others as '-' */
static void put_name_part(pl_rx_buf *sb, const char *s) {
    size_t n = 0;
    int dash = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && n < NAME_PART_MAX; p++) {
        int ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9');
        if (ok) {
            pl_rx_buf_putc(sb, (char)*p);
            dash = 0;
            n++;
        } else if (!dash && n) {
            pl_rx_buf_putc(sb, '-');
            dash = 1;
            n++;
        }
    }
    if (dash)
        sb->s[--sb->n] = 0;
    if (!n)
        pl_rx_buf_puts(sb, "x");
}

/* hint + "-" + (name-safe) part */
static char *hint_join(jsc *c, const char *hint, const char *part) {
    pl_rx_buf sb = {0};
    /* deep schemas: the start of the path will do (names stay unique) */
    pl_rx_buf_putn(&sb, hint, strlen(hint) > 120 ? 120 : strlen(hint));
    pl_rx_buf_putc(&sb, '-');
    put_name_part(&sb, part);
    return take(c, &sb);
}

static jrule *rule_find(jsc *c, const char *name) {
    for (size_t i = 0; i < c->nrules; i++)
        if (!strcmp(c->rules[i].name, name))
            return &c->rules[i];
    return NULL;
}

/* A rule named after the hint: the existing one when it has this body,
   else a fresh name.  body NULL reserves the name.  Returns the name
   (owned by the table); takes the body. */
static const char *rule_add(jsc *c, const char *hint, char *body) {
    if (c->failed) {
        free(body);
        return NULL;
    }
    pl_rx_buf sb = {0};
    pl_rx_buf_puts(&sb, c->prefix);
    pl_rx_buf_puts(&sb, hint);
    size_t base = sb.n;
    for (int k = 1;; k++) {
        if (sb.oom)
            break;
        jrule *r = rule_find(c, sb.s);
        if (!r)
            break;
        if (body && r->body && !strcmp(r->body, body)) {
            pl_rx_buf_free(&sb);
            free(body);
            return r->name;
        }
        sb.n = base;
        sb.s[base] = 0;
        pl_rx_buf_printf(&sb, "%d", k);
    }
    char *name = pl_rx_buf_take(&sb);
    if (!name) {
        free(body);
        oom(c);
        return NULL;
    }
    if (c->nrules == c->caprules) {
        size_t cap = c->caprules ? c->caprules * 2 : 32;
        jrule *r = realloc(c->rules, cap * sizeof *r);
        if (!r) {
            free(name);
            free(body);
            oom(c);
            return NULL;
        }
        c->rules = r;
        c->caprules = cap;
    }
    c->rules[c->nrules].name = name;
    c->rules[c->nrules].body = body;
    c->nrules++;
    return name;
}

static void rule_define(jsc *c, const char *name, char *body) {
    jrule *r = rule_find(c, name);
    if (!r) {
        free(body);
        return;
    }
    free(r->body);
    r->body = body;
}

/* the (prefixed) name of a helper rule, malloc'd */
static char *helper(jsc *c, int h) {
    c->helpers |= 1u << h;
    return jfmt(c, "%s%s", c->prefix, helper_names[h]);
}

/* one term: a name, a literal, a class, a group (maybe quantified) */
static int expr_is_term(const char *e) { return pl_rx_expr_scan(e) == 0; }

static int expr_has_bar(const char *e) { return (pl_rx_expr_scan(e) & 2) != 0; }

/* append e to a sequence, in parentheses when it is an alternation */
static void put_seq_item(pl_rx_buf *sb, const char *e) {
    if (expr_has_bar(e)) {
        pl_rx_buf_putc(sb, '(');
        pl_rx_buf_puts(sb, e);
        pl_rx_buf_putc(sb, ')');
    } else {
        pl_rx_buf_puts(sb, e);
    }
}

/* rules for the repeated parts that llama.cpp wants named (see
   pl_rx_put_repeat): "<hint>-r", "<hint>-r1", ... */
typedef struct {
    jsc *c;
    const char *hint;
} namer;

static char *name_rule(void *ud, char *body) {
    namer *nm = ud;
    char *h = jfmt(nm->c, "%s-r", nm->hint);
    const char *name = h ? rule_add(nm->c, h, body) : (free(body), NULL);
    free(h);
    return name ? jstrdup(nm->c, name) : NULL;
}

/* append e{min,max}; e is a name, a literal or a class when simple */
static void put_repeat(jsc *c, pl_rx_buf *sb, const char *hint, const char *e, int simple, long min, long max) {
    namer nm = {c, hint};
    pl_rx_put_repeat(sb, e, simple, min, max, name_rule, &nm);
}

/* ------------------------------------------------------------------ */
/* keywords                                                            */

static const char *const annotation_keys[] = {
    "title", "description", "$schema", "$id", "$comment", "examples", "default",
    "deprecated", "readOnly", "writeOnly", "$defs", "definitions", NULL,
};

static const char *const known_keys[] = {
    "type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref",
    "properties", "required", "additionalProperties",
    "items", "prefixItems", "additionalItems", "minItems", "maxItems",
    "minLength", "maxLength", "pattern", "format",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", NULL,
};

static int in_list(const char *const *list, const char *k) {
    for (; *list; list++)
        if (!strcmp(*list, k))
            return 1;
    return 0;
}

static int is_annotation(const char *k) { return in_list(annotation_keys, k); }

static int check_keywords(jsc *c, const cJSON *s, const char *path) {
    for (const cJSON *k = s->child; k; k = k->next) {
        if (!k->string)
            continue;
        if (!in_list(known_keys, k->string) && !is_annotation(k->string)) {
            fail(c, "unsupported JSON-schema keyword '%s' at %s", k->string, path);
            return 0;
        }
    }
    return 1;
}

/* a non-negative integer keyword: 1 present, 0 absent, -1 invalid */
static int get_count(jsc *c, const cJSON *s, const char *key, const char *path, long *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, key);
    if (!v)
        return 0;
    if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble != floor(v->valuedouble)) {
        fail(c, "invalid '%s' at %s: not a non-negative integer", key, path);
        return -1;
    }
    *out = v->valuedouble > 1e9 ? 1000000000L : (long)v->valuedouble;
    return 1;
}

/* the type keyword as a mask; 0 when absent, -1 invalid */
enum { T_OBJECT = 1, T_ARRAY = 2, T_STRING = 4, T_NUMBER = 8, T_INTEGER = 16, T_BOOLEAN = 32, T_NULL = 64 };
static const char *const type_names[] = {"object", "array", "string", "number", "integer", "boolean", "null"};

static int type_bit(const char *t) {
    for (int i = 0; i < 7; i++)
        if (!strcmp(t, type_names[i]))
            return 1 << i;
    return 0;
}

static int get_types(jsc *c, const cJSON *s, const char *path) {
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(s, "type");
    if (!t)
        return 0;
    int mask = 0;
    if (cJSON_IsString(t)) {
        mask = type_bit(t->valuestring);
    } else if (cJSON_IsArray(t) && cJSON_GetArraySize(t) > 0) {
        for (const cJSON *e = t->child; e; e = e->next) {
            int b = cJSON_IsString(e) ? type_bit(e->valuestring) : 0;
            if (!b) {
                mask = 0;
                break;
            }
            mask |= b;
        }
    }
    if (!mask) {
        fail(c, "invalid 'type' at %s: not one of object, array, string, number, integer, boolean, null", path);
        return -1;
    }
    return mask;
}

/* ------------------------------------------------------------------ */
/* JSON text                                                           */

static void put_double(pl_rx_buf *sb, double x) {
    char buf[40];
    if (x == floor(x) && fabs(x) < 1e15) {
        snprintf(buf, sizeof buf, "%.0f", x);
    } else {
        for (int p = 1; p <= 17; p++) {
            snprintf(buf, sizeof buf, "%.*g", p, x);
            if (strtod(buf, NULL) == x)
                break;
        }
    }
    if (!strcmp(buf, "-0"))
        strcpy(buf, "0");
    pl_rx_buf_puts(sb, buf);
}

/* compact JSON text of a value; 0 when a string is not UTF-8 */
static int put_json(pl_rx_buf *sb, const cJSON *v) {
    if (cJSON_IsNull(v)) {
        pl_rx_buf_puts(sb, "null");
    } else if (cJSON_IsTrue(v)) {
        pl_rx_buf_puts(sb, "true");
    } else if (cJSON_IsFalse(v)) {
        pl_rx_buf_puts(sb, "false");
    } else if (cJSON_IsNumber(v)) {
        put_double(sb, v->valuedouble);
    } else if (cJSON_IsString(v)) {
        size_t n = strlen(v->valuestring);
        if (!pl_rx_utf8_valid(v->valuestring, n))
            return 0;
        pl_rx_buf_putc(sb, '"');
        pl_rx_put_json_string(sb, v->valuestring, n);
        pl_rx_buf_putc(sb, '"');
    } else if (cJSON_IsArray(v)) {
        pl_rx_buf_putc(sb, '[');
        for (const cJSON *e = v->child; e; e = e->next) {
            if (e != v->child)
                pl_rx_buf_putc(sb, ',');
            if (!put_json(sb, e))
                return 0;
        }
        pl_rx_buf_putc(sb, ']');
    } else if (cJSON_IsObject(v)) {
        pl_rx_buf_putc(sb, '{');
        for (const cJSON *e = v->child; e; e = e->next) {
            if (e != v->child)
                pl_rx_buf_putc(sb, ',');
            size_t n = strlen(e->string);
            if (!pl_rx_utf8_valid(e->string, n))
                return 0;
            pl_rx_buf_putc(sb, '"');
            pl_rx_put_json_string(sb, e->string, n);
            pl_rx_buf_puts(sb, "\":");
            if (!put_json(sb, e))
                return 0;
        }
        pl_rx_buf_putc(sb, '}');
    } else {
        return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------ */
/* $ref                                                                */

static const cJSON *resolve_pointer(jsc *c, const char *ref, const char *path) {
    if (ref[0] != '#') {
        fail(c, "unsupported $ref '%s' at %s: only references inside the schema ('#...') are supported", ref, path);
        return NULL;
    }
    const cJSON *t = c->doc;
    const char *p = ref + 1;
    if (*p && *p != '/') {
        fail(c, "unsupported $ref '%s' at %s: only JSON pointers ('#/...') are supported", ref, path);
        return NULL;
    }
    while (*p == '/') {
        p++;
        pl_rx_buf seg = {0};
        while (*p && *p != '/') {
            if (*p == '~' && (p[1] == '0' || p[1] == '1')) {
                pl_rx_buf_putc(&seg, p[1] == '0' ? '~' : '/');
                p += 2;
            } else if (*p == '%' && p[1] && p[2] && strchr("0123456789abcdefABCDEF", p[1]) &&
                       strchr("0123456789abcdefABCDEF", p[2])) {
                char h[3] = {p[1], p[2], 0};
                pl_rx_buf_putc(&seg, (char)strtol(h, NULL, 16));
                p += 3;
            } else {
                pl_rx_buf_putc(&seg, *p++);
            }
        }
        char *key = take(c, &seg);
        if (!key)
            return NULL;
        const cJSON *next = NULL;
        if (cJSON_IsObject(t)) {
            next = cJSON_GetObjectItemCaseSensitive(t, key);
        } else if (cJSON_IsArray(t)) {
            char *end;
            long i = strtol(key, &end, 10);
            if (*key && !*end && i >= 0)
                next = cJSON_GetArrayItem(t, (int)i);
        }
        free(key);
        if (!next) {
            fail(c, "unresolvable $ref '%s' at %s", ref, path);
            return NULL;
        }
        t = next;
    }
    return t;
}

static char *visit(jsc *c, const cJSON *s, const char *path, const char *hint, int as_body);

static char *ref_expr(jsc *c, const char *ref, const char *path) {
    for (size_t i = 0; i < c->nrefs; i++) {
        if (strcmp(c->refs[i].ref, ref))
            continue;
        if (c->refs[i].busy && c->refs[i].depth == c->depth) {
            fail(c, "recursive $ref '%s' at %s is left recursion (it is reached again before any '{' or '[')",
                 ref, path);
            return NULL;
        }
        return jstrdup(c, c->refs[i].name);
    }
    const cJSON *t = resolve_pointer(c, ref, path);
    if (!t)
        return NULL;
    if (cJSON_IsFalse(t))
        return NEVER;
    /* the rule's name: def-X for #/$defs/X and #/definitions/X */
    pl_rx_buf sb = {0};
    const char *tail = NULL;
    if (!strncmp(ref, "#/$defs/", 8))
        tail = ref + 8;
    else if (!strncmp(ref, "#/definitions/", 14))
        tail = ref + 14;
    if (tail && !strchr(tail, '/')) {
        pl_rx_buf_puts(&sb, "def-");
        put_name_part(&sb, tail);
    } else {
        pl_rx_buf_puts(&sb, "ref-");
        put_name_part(&sb, ref + 1);
    }
    char *hint = take(c, &sb);
    if (!hint)
        return NULL;
    const char *name = rule_add(c, hint, NULL);
    if (!name) {
        free(hint);
        return NULL;
    }
    if (c->nrefs == c->caprefs) {
        size_t cap = c->caprefs ? c->caprefs * 2 : 8;
        jref *r = realloc(c->refs, cap * sizeof *r);
        if (!r) {
            free(hint);
            oom(c);
            return NULL;
        }
        c->refs = r;
        c->caprefs = cap;
    }
    size_t idx = c->nrefs;
    c->refs[idx].ref = dupstr(ref);
    if (!c->refs[idx].ref) {
        free(hint);
        oom(c);
        return NULL;
    }
    c->refs[idx].name = name;
    c->refs[idx].depth = c->depth;
    c->refs[idx].busy = 1;
    c->nrefs++;
    char *body = visit(c, t, ref, hint, 1);
    free(hint);
    c->refs[idx].busy = 0;
    if (!body)
        return NULL;
    if (body == NEVER) {
        fail(c, "the definition '%s' (used at %s) accepts no value", ref, path);
        return NULL;
    }
    rule_define(c, name, body);
    return jstrdup(c, name);
}

/* ------------------------------------------------------------------ */
/* integers                                                            */

static void put_digit_class(pl_rx_buf *o, int lo, int hi) {
    if (lo == hi)
        pl_rx_buf_printf(o, "\"%c\"", '0' + lo);
    else
        pl_rx_buf_printf(o, "[%c-%c]", '0' + lo, '0' + hi);
}

/* [0-9] repeated min..max times */
static void put_digits(pl_rx_buf *o, int min, int max) {
    pl_rx_buf_puts(o, "[0-9]");
    if (min == max && min != 1)
        pl_rx_buf_printf(o, "{%d}", min);
    else if (min != max)
        pl_rx_buf_printf(o, "{%d,%d}", min, max);
}

static int all_same(const char *s, size_t n, char ch) {
    for (size_t i = 0; i < n; i++)
        if (s[i] != ch)
            return 0;
    return 1;
}

/* the decimal numbers from a to b, both of n digits: a term or a sequence */
static void range_same_len(pl_rx_buf *o, const char *a, const char *b, size_t n) {
    size_t i = 0;
    while (i < n && a[i] == b[i])
        i++;
    if (i > 0)
        pl_rx_put_literal(o, a, i);
    if (i == n)
        return;
    if (i > 0)
        pl_rx_buf_putc(o, ' ');
    size_t m = n - i - 1;
    int low_zero = all_same(a + i + 1, m, '0'), high_nine = all_same(b + i + 1, m, '9');
    int lo = a[i] - '0', hi = b[i] - '0', nalt = 0;
    char nines[INT_DIGITS + 2], zeros[INT_DIGITS + 2];
    memset(nines, '9', m);
    memset(zeros, '0', m);
    pl_rx_buf t = {0};
    if (!low_zero) {
        put_digit_class(&t, lo, lo);
        pl_rx_buf_putc(&t, ' ');
        range_same_len(&t, a + i + 1, nines, m);
        nalt++;
        lo++;
    }
    int top = high_nine ? hi : hi - 1;
    if (lo <= top) {
        if (nalt++)
            pl_rx_buf_puts(&t, " | ");
        put_digit_class(&t, lo, top);
        if (m) {
            pl_rx_buf_putc(&t, ' ');
            put_digits(&t, (int)m, (int)m);
        }
    }
    if (!high_nine) {
        if (nalt++)
            pl_rx_buf_puts(&t, " | ");
        put_digit_class(&t, hi, hi);
        pl_rx_buf_putc(&t, ' ');
        range_same_len(&t, zeros, b + i + 1, m);
    }
    if (nalt > 1)
        pl_rx_buf_putc(o, '(');
    pl_rx_buf_putn(o, t.s ? t.s : "", t.n);
    if (nalt > 1)
        pl_rx_buf_putc(o, ')');
    if (t.oom)
        o->oom = 1;
    pl_rx_buf_free(&t);
}

static int ndigits(uint64_t v) {
    int n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

static uint64_t pow10u(int n) {
    uint64_t p = 1;
    while (n-- > 0)
        p *= 10;
    return p;
}

/* the numbers lo..hi (hi < 0: up to INT_DIGITS digits) without leading
   zeros, as alternatives; returns how many (0: none) */
static int range_nonneg(pl_rx_buf *o, uint64_t lo, int64_t hi_in) {
    int open = hi_in < 0;
    uint64_t hi = open ? pow10u(INT_DIGITS) - 1 : (uint64_t)hi_in;
    if (lo > hi)
        return 0;
    int dl = ndigits(lo), dh = ndigits(hi), nalt = 0;
    for (int d = dl; d <= dh; d++) {
        if (nalt++)
            pl_rx_buf_puts(o, " | ");
        if (open && d > dl) {
            /* all the longer numbers at once */
            pl_rx_buf_puts(o, "[1-9] ");
            put_digits(o, d - 1, dh - 1);
            break;
        }
        char a[24], b[24];
        snprintf(a, sizeof a, "%llu", (unsigned long long)(d == dl ? lo : pow10u(d - 1)));
        snprintf(b, sizeof b, "%llu", (unsigned long long)(d == dh ? hi : pow10u(d) - 1));
        range_same_len(o, a, b, (size_t)d);
    }
    return nalt;
}

static void put_group(pl_rx_buf *o, const pl_rx_buf *t, int wrap) {
    if (wrap)
        pl_rx_buf_putc(o, '(');
    pl_rx_buf_putn(o, t->s ? t->s : "", t->n);
    if (wrap)
        pl_rx_buf_putc(o, ')');
    if (t->oom)
        o->oom = 1;
}

/* integers in [lo, hi] (a side absent: up to INT_DIGITS digits) */
static int int_range_expr(pl_rx_buf *o, int has_lo, int64_t lo, int has_hi, int64_t hi) {
    int nalt = 0;
    if (!has_lo || lo < 0) {
        uint64_t mlo = (has_hi && hi < 0) ? (uint64_t)(-hi) : 1;
        int64_t mhi = has_lo ? -lo : -1;
        pl_rx_buf t = {0};
        int k = range_nonneg(&t, mlo, mhi);
        if (k) {
            pl_rx_buf_puts(o, "\"-\" ");
            put_group(o, &t, k > 1 || !expr_is_term(t.s));
            nalt++;
        }
        pl_rx_buf_free(&t);
    }
    if (!has_hi || hi >= 0) {
        pl_rx_buf t = {0};
        int k = range_nonneg(&t, (has_lo && lo > 0) ? (uint64_t)lo : 0, has_hi ? hi : -1);
        if (k) {
            if (nalt)
                pl_rx_buf_puts(o, " | ");
            put_group(o, &t, 0);
            nalt += k;
        }
        pl_rx_buf_free(&t);
    }
    return nalt;
}

/* ------------------------------------------------------------------ */
/* bounds                                                              */

typedef struct {
    int set;
    double v;
    int excl;
} bound;

/* minimum/exclusiveMinimum (or the maximum side): the tighter one; the
   draft-4 boolean form of exclusive* is understood */
static int get_bound(jsc *c, const cJSON *s, const char *path, int upper, bound *b) {
    const char *kin = upper ? "maximum" : "minimum";
    const char *kex = upper ? "exclusiveMaximum" : "exclusiveMinimum";
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(s, kin);
    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(s, kex);
    memset(b, 0, sizeof *b);
    if (in && !cJSON_IsNumber(in)) {
        fail(c, "invalid '%s' at %s: not a number", kin, path);
        return 0;
    }
    if (ex && !cJSON_IsNumber(ex) && !cJSON_IsBool(ex)) {
        fail(c, "invalid '%s' at %s: not a number", kex, path);
        return 0;
    }
    if (in) {
        b->set = 1;
        b->v = in->valuedouble;
        b->excl = ex && cJSON_IsTrue(ex);
    }
    if (ex && cJSON_IsNumber(ex)) {
        double v = ex->valuedouble;
        if (!b->set || (upper ? v <= b->v : v >= b->v)) {
            b->set = 1;
            b->v = v;
            b->excl = 1;
        }
    }
    return 1;
}

/* a decimal: integer part and fraction digits (no trailing zeros) */
typedef struct {
    uint64_t ip;
    char frac[48];
} decimal;

/* |x| (< BIG) as a decimal, from its shortest round-trip spelling */
static void to_decimal(double x, decimal *d) {
    char buf[40];
    x = fabs(x);
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*e", p - 1, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    /* buf: D.DDDDe[+-]XX */
    char digits[24];
    int nd = 0;
    const char *q = buf;
    for (; *q && *q != 'e'; q++)
        if (*q >= '0' && *q <= '9')
            digits[nd++] = *q;
    int exp = *q == 'e' ? atoi(q + 1) : 0;
    /* value = 0.digits * 10^(exp+1) */
    int point = exp + 1; /* digits before the decimal point */
    d->ip = 0;
    for (int i = 0; i < point && i < nd; i++)
        d->ip = d->ip * 10 + (uint64_t)(digits[i] - '0');
    for (int i = nd; i < point; i++)
        d->ip *= 10;
    int nf = 0;
    for (int i = point; i < 0 && nf < 40; i++)
        d->frac[nf++] = '0';
    for (int i = point < 0 ? 0 : point; i < nd && nf < 40; i++)
        d->frac[nf++] = digits[i];
    while (nf > 0 && d->frac[nf - 1] == '0')
        nf--;
    d->frac[nf] = 0;
}

/* ------------------------------------------------------------------ */
/* numbers                                                             */

/* Fraction digit strings d (0..k digits; "" is the value 0) with
   lo <(=) 0.d <(=) hi, where lo/hi are digit strings or NULL.  Writes the
   expression of the non-empty ones (returns 0 when there are none) and
   tells whether "" is one. */
static int frac_lang(pl_rx_buf *o, const char *lo, int lo_x, const char *hi, int hi_x, int k, int *empty) {
    if (lo && !*lo && !lo_x)
        lo = NULL;
    *empty = !lo && !(hi && !*hi && hi_x);
    if (k <= 0)
        return 0;
    if (!lo && !hi) {
        pl_rx_buf_printf(o, "[0-9]{1,%d}", k);
        return 1;
    }
    if (!lo && !*hi && !hi_x) {
        pl_rx_buf_printf(o, "\"0\"{1,%d}", k);
        return 1;
    }
    if (lo && !*lo && lo_x && !hi) {
        pl_rx_buf_printf(o, "\"0\"{0,%d} [1-9] [0-9]{0,%d}", k - 1, k - 1);
        return 1;
    }
    int l0 = lo ? (*lo ? *lo - '0' : 0) : -1;
    int h0 = hi ? (*hi ? *hi - '0' : 0) : 10;
    const char *lr = lo ? (*lo ? lo + 1 : lo) : NULL;
    const char *hr = hi ? (*hi ? hi + 1 : hi) : NULL;
    if (l0 > h0)
        return 0;
    int nalt = 0;
    pl_rx_buf t = {0};
    /* first digit d, then the rest from frac_lang(rlo, rhi) */
    struct {
        int a, b;
        const char *rlo, *rhi;
        int any;
    } g[3];
    int ng = 0;
    if (l0 >= 0 && l0 == h0) {
        g[ng].a = g[ng].b = l0, g[ng].rlo = lr, g[ng].rhi = hr, g[ng].any = 0, ng++;
    } else {
        if (l0 >= 0)
            g[ng].a = g[ng].b = l0, g[ng].rlo = lr, g[ng].rhi = NULL, g[ng].any = 0, ng++;
        int ma = l0 >= 0 ? l0 + 1 : 0, mb = h0 <= 9 ? h0 - 1 : 9;
        if (ma <= mb)
            g[ng].a = ma, g[ng].b = mb, g[ng].rlo = g[ng].rhi = NULL, g[ng].any = 1, ng++;
        if (h0 <= 9)
            g[ng].a = g[ng].b = h0, g[ng].rlo = NULL, g[ng].rhi = hr, g[ng].any = 0, ng++;
    }
    for (int i = 0; i < ng; i++) {
        pl_rx_buf r = {0};
        int rempty = 1, rne = 0;
        if (!g[i].any)
            rne = frac_lang(&r, g[i].rlo, lo_x, g[i].rhi, hi_x, k - 1, &rempty);
        else if (k > 1)
            rne = 1, pl_rx_buf_printf(&r, "[0-9]{1,%d}", k - 1);
        if (rne || rempty) {
            if (nalt++)
                pl_rx_buf_puts(&t, " | ");
            put_digit_class(&t, g[i].a, g[i].b);
            if (rne) {
                pl_rx_buf_putc(&t, ' ');
                if (rempty) {
                    pl_rx_buf_putc(&t, '(');
                    pl_rx_buf_putn(&t, r.s, r.n);
                    pl_rx_buf_puts(&t, ")?");
                } else {
                    put_seq_item(&t, r.s);
                }
            }
        }
        if (r.oom)
            t.oom = 1;
        pl_rx_buf_free(&r);
    }
    put_group(o, &t, nalt > 1);
    pl_rx_buf_free(&t);
    return nalt > 0;
}

typedef struct {
    decimal d;
    int excl;
    int set;
} mbound;

/* one piece: integer part expression, then the fraction's */
static void put_piece(pl_rx_buf *o, int *nalt, const pl_rx_buf *ip, int ip_alts, const char *flo, int flo_x,
                      const char *fhi, int fhi_x) {
    pl_rx_buf f = {0};
    int empty;
    int ne = frac_lang(&f, flo, flo_x, fhi, fhi_x, FRAC_DIGITS, &empty);
    if (ne || empty) {
        if ((*nalt)++)
            pl_rx_buf_puts(o, " | ");
        put_group(o, ip, ip_alts > 1 && ne);
        if (ne) {
            pl_rx_buf_puts(o, empty ? " (\".\" " : " \".\" ");
            put_seq_item(o, f.s);
            if (empty)
                pl_rx_buf_puts(o, ")?");
        }
    }
    if (f.oom)
        o->oom = 1;
    pl_rx_buf_free(&f);
}

/* magnitudes m (a number's text without its sign) with L <(=) m <(=) H */
static int magnitude_expr(pl_rx_buf *o, const mbound *L, const mbound *H) {
    int nalt = 0;
    uint64_t li = L->d.ip;
    if (H->set && li > H->d.ip)
        return 0;
    if (H->set && li == H->d.ip) {
        pl_rx_buf ip = {0};
        pl_rx_buf_printf(&ip, "\"%llu\"", (unsigned long long)li);
        put_piece(o, &nalt, &ip, 1, L->d.frac, L->excl, H->d.frac, H->excl);
        pl_rx_buf_free(&ip);
        return nalt;
    }
    uint64_t mid_lo = li + 1;
    if (!L->d.frac[0] && !L->excl) {
        mid_lo = li; /* the fraction at li is free: it joins the middle */
    } else {
        pl_rx_buf ip = {0};
        pl_rx_buf_printf(&ip, "\"%llu\"", (unsigned long long)li);
        put_piece(o, &nalt, &ip, 1, L->d.frac, L->excl, NULL, 0);
        pl_rx_buf_free(&ip);
    }
    int64_t mid_hi = H->set ? (int64_t)H->d.ip - 1 : -1;
    if (!H->set || (int64_t)mid_lo <= mid_hi) {
        pl_rx_buf ip = {0};
        int k = range_nonneg(&ip, mid_lo, mid_hi);
        if (k)
            put_piece(o, &nalt, &ip, k, NULL, 0, NULL, 0);
        pl_rx_buf_free(&ip);
    }
    if (H->set) {
        pl_rx_buf ip = {0};
        pl_rx_buf_printf(&ip, "\"%llu\"", (unsigned long long)H->d.ip);
        put_piece(o, &nalt, &ip, 1, NULL, 0, H->d.frac, H->excl);
        pl_rx_buf_free(&ip);
    }
    return nalt;
}

static char *number_expr(jsc *c, const cJSON *s, const char *path, int integer) {
    bound lo, hi;
    if (!get_bound(c, s, path, 0, &lo) || !get_bound(c, s, path, 1, &hi))
        return NULL;
    if (lo.set && lo.v <= -BIG)
        lo.set = 0;
    if (hi.set && hi.v >= BIG)
        hi.set = 0;
    if ((lo.set && lo.v >= BIG) || (hi.set && hi.v <= -BIG)) {
        fail(c, "unsatisfiable JSON schema at %s: the bound needs more than %d integer digits", path, INT_DIGITS);
        return NULL;
    }
    if (lo.set && hi.set && (lo.v > hi.v || (lo.v == hi.v && (lo.excl || hi.excl)))) {
        fail(c, "unsatisfiable JSON schema at %s: minimum %g is above maximum %g", path, lo.v, hi.v);
        return NULL;
    }
    if (!lo.set && !hi.set)
        return helper(c, integer ? H_INTEGER : H_NUMBER);
    pl_rx_buf o = {0};
    if (integer) {
        int64_t a = 0, b = 0;
        if (lo.set)
            a = (int64_t)(lo.excl ? floor(lo.v) + 1 : ceil(lo.v));
        if (hi.set)
            b = (int64_t)(hi.excl ? ceil(hi.v) - 1 : floor(hi.v));
        if (lo.set && hi.set && a > b) {
            fail(c, "unsatisfiable JSON schema at %s: no integer between the bounds", path);
            return NULL;
        }
        int_range_expr(&o, lo.set, a, hi.set, b);
        return take(c, &o);
    }
    int nalt = 0;
    /* values >= 0 */
    if (!hi.set || hi.v >= 0) {
        mbound L = {{0, {0}}, 0, 1}, H = {{0, {0}}, 0, 0};
        if (lo.set && lo.v >= 0) {
            to_decimal(lo.v, &L.d);
            L.excl = lo.excl;
        }
        if (hi.set) {
            to_decimal(hi.v, &H.d);
            H.excl = hi.excl;
            H.set = 1;
        }
        nalt += magnitude_expr(&o, &L, &H);
    }
    /* values < 0: "-" and the magnitude */
    if (!lo.set || lo.v < 0) {
        mbound L = {{0, {0}}, 1, 1}, H = {{0, {0}}, 0, 0};
        if (hi.set && hi.v < 0) {
            to_decimal(hi.v, &L.d);
            L.excl = hi.excl;
        }
        if (lo.set) {
            to_decimal(lo.v, &H.d);
            H.excl = lo.excl;
            H.set = 1;
        }
        pl_rx_buf t = {0};
        int k = magnitude_expr(&t, &L, &H);
        if (k) {
            if (nalt++)
                pl_rx_buf_puts(&o, " | ");
            pl_rx_buf_puts(&o, "\"-\" ");
            put_group(&o, &t, 1);
        }
        pl_rx_buf_free(&t);
    }
    if (!nalt) {
        pl_rx_buf_free(&o);
        fail(c, "unsatisfiable JSON schema at %s: no number between the bounds", path);
        return NULL;
    }
    return take(c, &o);
}

/* ------------------------------------------------------------------ */
/* strings                                                             */

static int format_id(const char *f) {
    for (int h = H_DATE; h <= H_EMAIL; h++)
        if (!strcmp(f, helper_names[h]))
            return h;
    return -1;
}

static char *quote_regex(jsc *c, const pl_regex *re, const char *hint) {
    namer nm = {c, hint};
    char *x = pl_regex_to_gbnf(re, name_rule, &nm);
    if (!x) {
        oom(c);
        return NULL;
    }
    char *r = *x ? jfmt(c, "\"\\\"\" %s \"\\\"\"", x) : jstrdup(c, "\"\\\"\\\"\"");
    free(x);
    return r;
}

static char *string_expr(jsc *c, const cJSON *s, const char *path, const char *hint) {
    long minl = 0, maxl = -1;
    int hmin = get_count(c, s, "minLength", path, &minl);
    int hmax = get_count(c, s, "maxLength", path, &maxl);
    if (hmin < 0 || hmax < 0)
        return NULL;
    if (hmax && minl > maxl) {
        fail(c, "unsatisfiable JSON schema at %s: minLength %ld > maxLength %ld", path, minl, maxl);
        return NULL;
    }
    const cJSON *pat = cJSON_GetObjectItemCaseSensitive(s, "pattern");
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(s, "format");
    if (pat && !cJSON_IsString(pat)) {
        fail(c, "invalid 'pattern' at %s: not a string", path);
        return NULL;
    }
    if (fmt && !cJSON_IsString(fmt)) {
        fail(c, "invalid 'format' at %s: not a string", path);
        return NULL;
    }
    int fid = -1;
    if (fmt) {
        fid = format_id(fmt->valuestring);
        if (fid < 0) {
            fail(c, "unsupported JSON-schema format '%s' at %s", fmt->valuestring, path);
            return NULL;
        }
    }
    if (pat && fmt) {
        fail(c, "unsupported JSON-schema keyword 'pattern' at %s: together with 'format'", path);
        return NULL;
    }
    if (!pat && !fmt) {
        if (!hmin && !hmax)
            return helper(c, H_STRING);
        char *ch = helper(c, H_CHAR);
        if (!ch)
            return NULL;
        pl_rx_buf o = {0};
        pl_rx_buf_puts(&o, "\"\\\"\" ");
        if (maxl != 0) {
            put_repeat(c, &o, hint, ch, 1, minl, hmax ? maxl : -1);
            pl_rx_buf_putc(&o, ' ');
        }
        pl_rx_buf_puts(&o, "\"\\\"\"");
        free(ch);
        return take(c, &o);
    }
    char rerr[200];
    pl_regex *re = pl_regex_parse(pat ? pat->valuestring : format_regex[fid], rerr, sizeof rerr);
    if (!re) {
        fail(c, "unsupported pattern at %s: %s", path, rerr);
        return NULL;
    }
    long rlo, rhi;
    pl_regex_length(re, &rlo, &rhi);
    if (fmt && minl <= rlo && (!hmax || (rhi >= 0 && rhi <= maxl))) {
        pl_regex_free(re);
        return helper(c, fid);
    }
    if (hmin || hmax) {
        int r = pl_regex_limit_length(re, minl, hmax ? maxl : -1, rerr, sizeof rerr);
        if (r == 0) {
            fail(c, "unsatisfiable JSON schema at %s: no string of the %s has a length within minLength/maxLength",
                 path, pat ? "pattern" : "format");
        } else if (r < 0) {
            fail(c, "unsupported %s at %s: %s", pat ? "pattern" : "format", path, rerr);
        }
        if (r <= 0) {
            pl_regex_free(re);
            return NULL;
        }
    }
    char *e = quote_regex(c, re, hint);
    pl_regex_free(re);
    return e;
}

/* ------------------------------------------------------------------ */
/* enum / const                                                        */

static int validate(jsc *c, const cJSON *v, const cJSON *s, const char *path, int depth);

static char *enum_expr(jsc *c, const cJSON *s, const char *path) {
    const cJSON *en = cJSON_GetObjectItemCaseSensitive(s, "enum");
    const cJSON *co = cJSON_GetObjectItemCaseSensitive(s, "const");
    if (en && !cJSON_IsArray(en)) {
        fail(c, "invalid 'enum' at %s: not an array", path);
        return NULL;
    }
    /* the candidates, each checked against the whole schema */
    const cJSON *first = co ? co : en->child;
    pl_rx_buf o = {0};
    char **seen = NULL;
    size_t nseen = 0;
    int ok = 1;
    for (const cJSON *v = first; v && ok; v = co ? NULL : v->next) {
        int r = validate(c, v, s, path, 0);
        if (r < 0) {
            ok = 0;
            break;
        }
        if (!r)
            continue;
        pl_rx_buf t = {0};
        if (!put_json(&t, v)) {
            pl_rx_buf_free(&t);
            fail(c, "invalid enum/const value at %s: a string is not UTF-8", path);
            ok = 0;
            break;
        }
        char *text = take(c, &t);
        if (!text) {
            ok = 0;
            break;
        }
        int dup = 0;
        for (size_t i = 0; i < nseen; i++)
            if (!strcmp(seen[i], text))
                dup = 1;
        if (dup) {
            free(text);
            continue;
        }
        char **ns = realloc(seen, (nseen + 1) * sizeof *ns);
        if (!ns) {
            free(text);
            oom(c);
            ok = 0;
            break;
        }
        seen = ns;
        seen[nseen++] = text;
        if (nseen > 1)
            pl_rx_buf_puts(&o, " | ");
        pl_rx_put_literal(&o, text, strlen(text));
    }
    for (size_t i = 0; i < nseen; i++)
        free(seen[i]);
    free(seen);
    if (!ok) {
        pl_rx_buf_free(&o);
        return NULL;
    }
    if (!nseen) {
        pl_rx_buf_free(&o);
        fail(c, "unsatisfiable JSON schema at %s: no value of %s satisfies the schema", path,
             co ? "'const'" : "'enum'");
        return NULL;
    }
    return take(c, &o);
}

static long count_cps(const char *s) {
    long n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p & 0xC0) != 0x80)
            n++;
    return n;
}

/* ------------------------------------------------------------------ */
/* objects                                                             */

typedef struct tnode {
    uint32_t cp;
    int end;
    struct tnode **kid;
    size_t nkid;
} tnode;

static void trie_free(tnode *n) {
    if (!n)
        return;
    for (size_t i = 0; i < n->nkid; i++)
        trie_free(n->kid[i]);
    free(n->kid);
    free(n);
}

static int trie_add(tnode *root, const char *s) {
    size_t len = strlen(s), i = 0;
    tnode *n = root;
    while (i < len) {
        uint32_t cp;
        if (!pl_rx_utf8_next(s, len, &i, &cp))
            return 0;
        size_t k = 0;
        while (k < n->nkid && n->kid[k]->cp < cp)
            k++;
        if (k == n->nkid || n->kid[k]->cp != cp) {
            tnode *m = calloc(1, sizeof *m);
            tnode **kids = m ? realloc(n->kid, (n->nkid + 1) * sizeof *kids) : NULL;
            if (!kids) {
                free(m);
                return 0;
            }
            n->kid = kids;
            memmove(n->kid + k + 1, n->kid + k, (n->nkid - k) * sizeof *kids);
            m->cp = cp;
            n->kid[k] = m;
            n->nkid++;
        }
        n = n->kid[k];
    }
    n->end = 1;
    return 1;
}

/* The JSON text of the keys (canonical spelling) that continue from node
   n and end up none of the names in the trie. */
static void trie_emit(pl_rx_buf *o, const tnode *n, const char *kchar) {
    if (!n->nkid) {
        /* a whole name: at least one more character */
        pl_rx_buf_printf(o, "%s+", kchar);
        return;
    }
    pl_rx_buf_putc(o, '(');
    pl_rx_cpset other = {0};
    uint32_t next = 0;
    for (size_t i = 0; i < n->nkid; i++) {
        pl_rx_buf lit = {0};
        pl_rx_put_json_cp(&lit, n->kid[i]->cp);
        pl_rx_put_literal(o, lit.s, lit.n);
        pl_rx_buf_free(&lit);
        pl_rx_buf_putc(o, ' ');
        trie_emit(o, n->kid[i], kchar);
        pl_rx_buf_puts(o, " | ");
        if (n->kid[i]->cp > next)
            pl_rx_cpset_add(&other, next, n->kid[i]->cp - 1);
        next = n->kid[i]->cp + 1;
    }
    if (next <= 0x10FFFF)
        pl_rx_cpset_add(&other, next, 0x10FFFF);
    pl_rx_buf t = {0};
    int shape = pl_rx_put_json_charset(&t, &other);
    put_group(o, &t, shape > 0);
    pl_rx_buf_free(&t);
    pl_rx_cpset_free(&other);
    pl_rx_buf_printf(o, " %s*)", kchar);
    if (!n->end)
        pl_rx_buf_putc(o, '?');
}

typedef struct {
    const char *key;
    const cJSON *schema; /* NULL: any value */
    int required;
} prop;

static char *object_expr(jsc *c, const cJSON *s, const char *path, const char *hint) {
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(s, "properties");
    const cJSON *req = cJSON_GetObjectItemCaseSensitive(s, "required");
    const cJSON *ap = cJSON_GetObjectItemCaseSensitive(s, "additionalProperties");
    if (props && !cJSON_IsObject(props)) {
        fail(c, "invalid 'properties' at %s: not an object", path);
        return NULL;
    }
    if (req && !cJSON_IsArray(req)) {
        fail(c, "invalid 'required' at %s: not an array", path);
        return NULL;
    }
    if (ap && !cJSON_IsBool(ap) && !cJSON_IsObject(ap)) {
        fail(c, "invalid 'additionalProperties' at %s: not a schema", path);
        return NULL;
    }
    for (const cJSON *r = req ? req->child : NULL; r; r = r->next) {
        if (!cJSON_IsString(r)) {
            fail(c, "invalid 'required' at %s: not an array of strings", path);
            return NULL;
        }
    }
    if ((!props || !props->child) && (!req || !req->child) && (!ap || cJSON_IsTrue(ap)))
        return helper(c, H_OBJECT);

    /* the properties: required ones first (schema order), then optional */
    size_t np = 0, cap = 0;
    for (const cJSON *p = props ? props->child : NULL; p; p = p->next)
        cap++;
    for (const cJSON *r = req ? req->child : NULL; r; r = r->next)
        cap++;
    prop *ps = calloc(cap + 1, sizeof *ps);
    char **kvs = calloc(cap + 2, sizeof *kvs);
    char *ws = helper(c, H_WS);
    tnode *trie = calloc(1, sizeof *trie);
    char *out = NULL;
    if (!ps || !kvs || !ws || !trie) {
        oom(c);
        goto done;
    }
    for (int pass = 0; pass < 2; pass++) {
        for (const cJSON *p = props ? props->child : NULL; p; p = p->next) {
            int isreq = 0;
            for (const cJSON *r = req ? req->child : NULL; r; r = r->next)
                if (!strcmp(r->valuestring, p->string))
                    isreq = 1;
            if (isreq == !pass)
                ps[np].key = p->string, ps[np].schema = p, ps[np].required = isreq, np++;
        }
        if (pass)
            break;
        /* required names without a property schema: additionalProperties governs them */
        for (const cJSON *r = req ? req->child : NULL; r; r = r->next) {
            if (props && cJSON_GetObjectItemCaseSensitive(props, r->valuestring))
                continue;
            int dup = 0;
            for (size_t i = 0; i < np; i++)
                if (!strcmp(ps[i].key, r->valuestring))
                    dup = 1;
            if (dup)
                continue;
            if (cJSON_IsFalse(ap)) {
                fail(c, "unsatisfiable JSON schema at %s: required property '%s' is not allowed "
                        "(not in properties, additionalProperties false)", path, r->valuestring);
                goto done;
            }
            ps[np].key = r->valuestring, ps[np].schema = cJSON_IsObject(ap) ? ap : NULL, ps[np].required = 1;
            np++;
        }
    }
    /* key/value rules */
    size_t nreq = 0, nopt = 0;
    char **reqkv = kvs;
    char **optv = calloc(cap + 2, sizeof *optv);
    if (!optv) {
        oom(c);
        goto done;
    }
    for (size_t i = 0; i < np; i++) {
        const char *key = ps[i].key;
        if (!pl_rx_utf8_valid(key, strlen(key))) {
            fail(c, "invalid property name at %s: not UTF-8", path);
            goto done_opt;
        }
        if (!cJSON_IsFalse(ap) && count_cps(key) > KEY_MAX) {
            /* the grammar of the other keys nests as deep as the name */
            fail(c, "unsupported property name at %s: longer than %d characters beside additionalProperties", path,
                 KEY_MAX);
            goto done_opt;
        }
        if (!trie_add(trie, key)) {
            oom(c);
            goto done_opt;
        }
        char *ppath = path_join(c, path, "properties");
        char *ppath2 = ppath ? path_join(c, ppath, key) : NULL;
        char *phint = hint_join(c, hint, key);
        free(ppath);
        if (!ppath2 || !phint) {
            free(ppath2);
            free(phint);
            goto done_opt;
        }
        c->depth++;
        char *v = visit(c, ps[i].schema, ppath2, phint, 0);
        c->depth--;
        if (!v) {
            free(ppath2);
            free(phint);
            goto done_opt;
        }
        if (v == NEVER) {
            if (ps[i].required) {
                fail(c, "unsatisfiable JSON schema at %s: required property '%s' accepts no value", ppath2, key);
                free(ppath2);
                free(phint);
                goto done_opt;
            }
            free(ppath2);
            free(phint);
            continue;
        }
        free(ppath2);
        pl_rx_buf body = {0}, k = {0};
        pl_rx_buf_putc(&k, '"');
        pl_rx_put_json_string(&k, key, strlen(key));
        pl_rx_buf_puts(&k, "\":");
        pl_rx_put_literal(&body, k.s, k.n);
        pl_rx_buf_free(&k);
        pl_rx_buf_printf(&body, " %s ", ws);
        put_seq_item(&body, v);
        efree(v);
        char *kvhint = jfmt(c, "%s-kv", phint);
        free(phint);
        char *b = take(c, &body);
        if (!kvhint || !b) {
            free(kvhint);
            free(b);
            goto done_opt;
        }
        const char *name = rule_add(c, kvhint, b);
        free(kvhint);
        if (!name)
            goto done_opt;
        if (ps[i].required)
            reqkv[nreq++] = (char *)name;
        else
            optv[nopt++] = (char *)name;
    }
    /* extra properties */
    int extra = 0;
    const char *extra_kv = NULL;
    if (!cJSON_IsFalse(ap)) {
        char *v;
        if (cJSON_IsObject(ap)) {
            char *apath = path_join(c, path, "additionalProperties");
            char *ahint = jfmt(c, "%s-additional-value", hint);
            c->depth++;
            v = apath && ahint ? visit(c, ap, apath, ahint, 0) : NULL;
            c->depth--;
            free(apath);
            free(ahint);
        } else {
            v = helper(c, H_VALUE);
        }
        if (!v)
            goto done_opt;
        if (v != NEVER) {
            char *key = NULL;
            if (!trie->nkid && !trie->end) {
                key = helper(c, H_STRING);
            } else {
                char *kc = helper(c, H_KCHAR);
                pl_rx_buf kb = {0};
                if (kc) {
                    pl_rx_buf_puts(&kb, "\"\\\"\" ");
                    trie_emit(&kb, trie, kc);
                    pl_rx_buf_puts(&kb, " \"\\\"\"");
                }
                free(kc);
                char *kbody = take(c, &kb);
                char *khint = jfmt(c, "%s-additional-k", hint);
                const char *kn = kbody && khint ? rule_add(c, khint, kbody) : NULL;
                if (!kn && kbody && !khint)
                    free(kbody);
                free(khint);
                key = kn ? jstrdup(c, kn) : NULL;
            }
            if (!key) {
                efree(v);
                goto done_opt;
            }
            pl_rx_buf body = {0};
            pl_rx_buf_printf(&body, "%s \":\" %s ", key, ws);
            put_seq_item(&body, v);
            free(key);
            efree(v);
            char *b = take(c, &body);
            char *h = jfmt(c, "%s-additional-kv", hint);
            extra_kv = b && h ? rule_add(c, h, b) : NULL;
            if (!extra_kv && b && !h)
                free(b);
            free(h);
            if (!extra_kv)
                goto done_opt;
            extra = 1;
        }
    }
    {
        pl_rx_buf o = {0};
        pl_rx_buf_printf(&o, "\"{\" %s ", ws);
        if (!nreq && !nopt && !extra) {
            pl_rx_buf_free(&o);
            pl_rx_buf_printf(&o, "\"{\" %s \"}\"", ws);
            out = take(c, &o);
            goto done_opt;
        }
        for (size_t i = 0; i < nreq; i++) {
            if (i)
                pl_rx_buf_printf(&o, " \",\" %s ", ws);
            pl_rx_buf_puts(&o, reqkv[i]);
        }
        size_t nchain = nopt + (size_t)extra;
        if (nchain) {
            /* optional ones in order, any subset: alternative i starts
               with the i-th present one, then "rest" rules continue with
               each later one optional (llama.cpp's construction: no comma
               can be doubled or missing) */
            const char **chain = calloc(nchain, sizeof *chain);
            const char **rest = calloc(nchain + 1, sizeof *rest);
            if (!chain || !rest) {
                free(chain);
                free(rest);
                pl_rx_buf_free(&o);
                oom(c);
                goto done_opt;
            }
            for (size_t i = 0; i < nopt; i++)
                chain[i] = optv[i];
            if (extra)
                chain[nopt] = extra_kv;
            /* rest[i]: the optional ones from i on, each with its comma */
            for (size_t i = nchain; i-- > 1;) {
                pl_rx_buf rb = {0};
                int star = extra && i == nchain - 1;
                pl_rx_buf_printf(&rb, "(\",\" %s %s)%c", ws, chain[i], star ? '*' : '?');
                if (rest[i + 1])
                    pl_rx_buf_printf(&rb, " %s", rest[i + 1]);
                char *b = take(c, &rb);
                char *h = jfmt(c, "%s-rest%zu", hint, i);
                rest[i] = b && h ? rule_add(c, h, b) : NULL;
                if (!rest[i] && b && !h)
                    free(b);
                free(h);
                if (!rest[i])
                    break;
            }
            if (c->failed) {
                free(chain);
                free(rest);
                pl_rx_buf_free(&o);
                goto done_opt;
            }
            pl_rx_buf alts = {0};
            for (size_t i = 0; i < nchain; i++) {
                if (i)
                    pl_rx_buf_puts(&alts, " | ");
                pl_rx_buf_puts(&alts, chain[i]);
                if (extra && i == nchain - 1)
                    pl_rx_buf_printf(&alts, " (\",\" %s %s)*", ws, chain[i]);
                if (i + 1 < nchain)
                    pl_rx_buf_printf(&alts, " %s", rest[i + 1]);
            }
            if (nreq)
                pl_rx_buf_printf(&o, " (\",\" %s (", ws);
            else
                pl_rx_buf_puts(&o, "((");
            pl_rx_buf_putn(&o, alts.s ? alts.s : "", alts.n);
            if (nreq)
                pl_rx_buf_puts(&o, "))?");
            else
                pl_rx_buf_printf(&o, ") %s)?", ws);
            if (alts.oom)
                o.oom = 1;
            pl_rx_buf_free(&alts);
            free(chain);
            free(rest);
        }
        if (nreq)
            pl_rx_buf_printf(&o, " %s", ws);
        pl_rx_buf_puts(&o, " \"}\"");
        out = take(c, &o);
    }
done_opt:
    free(optv);
done:
    free(ps);
    free(kvs);
    free(ws);
    trie_free(trie);
    return out;
}

/* ------------------------------------------------------------------ */
/* arrays                                                              */

static char *array_expr(jsc *c, const cJSON *s, const char *path, const char *hint) {
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(s, "items");
    const cJSON *prefix = cJSON_GetObjectItemCaseSensitive(s, "prefixItems");
    const cJSON *rest = items;
    const char *prefix_key = "prefixItems", *rest_key = "items";
    if (prefix && !cJSON_IsArray(prefix)) {
        fail(c, "invalid 'prefixItems' at %s: not an array", path);
        return NULL;
    }
    if (cJSON_IsArray(items)) {
        /* the older tuple form: items [...] and additionalItems */
        if (prefix) {
            fail(c, "invalid 'items' at %s: an array beside 'prefixItems'", path);
            return NULL;
        }
        prefix = items;
        prefix_key = "items";
        rest = cJSON_GetObjectItemCaseSensitive(s, "additionalItems");
        rest_key = "additionalItems";
    }
    if (rest && !cJSON_IsBool(rest) && !cJSON_IsObject(rest)) {
        fail(c, "invalid '%s' at %s: not a schema", rest_key, path);
        return NULL;
    }
    long minn = 0, maxn = -1;
    int hmin = get_count(c, s, "minItems", path, &minn);
    int hmax = get_count(c, s, "maxItems", path, &maxn);
    if (hmin < 0 || hmax < 0)
        return NULL;
    if (hmax && minn > maxn) {
        fail(c, "unsatisfiable JSON schema at %s: minItems %ld > maxItems %ld", path, minn, maxn);
        return NULL;
    }
    long k = prefix ? cJSON_GetArraySize(prefix) : 0;
    if (!k && (!rest || cJSON_IsTrue(rest)) && !hmin && !hmax)
        return helper(c, H_ARRAY);

    char *ws = helper(c, H_WS);
    if (!ws)
        return NULL;
    long hi = maxn;
    char **pos = calloc((size_t)k + 1, sizeof *pos);
    char *restv = NULL;
    char *out = NULL;
    if (!pos) {
        oom(c);
        goto done;
    }
    /* the prefix schemas in use; a NEVER one caps the length */
    for (long i = 0; i < k && (hi < 0 || i < hi); i++) {
        const cJSON *ps = cJSON_GetArrayItem(prefix, (int)i);
        char *pp = path_idx(c, path, prefix_key, (int)i);
        char *ph = jfmt(c, "%s-tuple-%ld", hint, i);
        c->depth++;
        char *v = pp && ph ? visit(c, ps, pp, ph, 0) : NULL;
        c->depth--;
        free(pp);
        free(ph);
        if (!v)
            goto done;
        if (v == NEVER) {
            hi = i;
            break;
        }
        pos[i] = v;
    }
    long kk = k;
    if (hi >= 0 && hi < kk)
        kk = hi;
    if (hi < 0 || hi > kk) {
        if (cJSON_IsFalse(rest)) {
            hi = kk;
        } else {
            char *rp = path_join(c, path, rest_key);
            char *rh = jfmt(c, "%s-item", hint);
            c->depth++;
            restv = rp && rh ? visit(c, rest, rp, rh, 0) : NULL;
            c->depth--;
            free(rp);
            free(rh);
            if (!restv)
                goto done;
            if (restv == NEVER) {
                restv = NULL;
                hi = kk;
            }
        }
    }
    if (hi >= 0 && minn > hi) {
        fail(c, "unsatisfiable JSON schema at %s: minItems %ld cannot be met by the item schemas", path, minn);
        goto done;
    }
    pl_rx_buf o = {0};
    if (hi == 0) {
        pl_rx_buf_printf(&o, "\"[\" %s \"]\"", ws);
        out = take(c, &o);
        goto done;
    }
    /* elements 0..r-1 always there, the rest optional */
    long r = minn > 0 ? minn : 1;
    pl_rx_buf seq = {0};
    for (long i = 0; i < r && i < kk; i++) {
        if (i)
            pl_rx_buf_printf(&seq, " \",\" %s ", ws);
        put_seq_item(&seq, pos[i]);
    }
    if (r > kk) {
        long nrest = r - kk;
        if (kk == 0) {
            put_seq_item(&seq, restv);
            nrest--;
        }
        if (nrest > 0) {
            pl_rx_buf one = {0};
            pl_rx_buf_printf(&one, "\",\" %s ", ws);
            put_seq_item(&one, restv);
            pl_rx_buf_putc(&seq, ' ');
            if (one.s)
                put_repeat(c, &seq, hint, one.s, 0, nrest, nrest);
            pl_rx_buf_free(&one);
        }
    }
    /* optional tail: prefix positions r..kk-1 nested, then more items */
    pl_rx_buf tail = {0};
    long from = r > kk ? r : kk;
    if (restv && (hi < 0 || hi > from)) {
        pl_rx_buf one = {0};
        pl_rx_buf_printf(&one, "\",\" %s ", ws);
        put_seq_item(&one, restv);
        if (one.s)
            put_repeat(c, &tail, hint, one.s, 0, 0, hi < 0 ? -1 : hi - from);
        pl_rx_buf_free(&one);
    }
    for (long j = kk - 1; j >= r; j--) {
        pl_rx_buf t = {0};
        pl_rx_buf_printf(&t, "(\",\" %s ", ws);
        put_seq_item(&t, pos[j]);
        if (tail.n) {
            pl_rx_buf_putc(&t, ' ');
            pl_rx_buf_putn(&t, tail.s, tail.n);
        }
        pl_rx_buf_puts(&t, ")?");
        pl_rx_buf_free(&tail);
        tail = t;
    }
    if (tail.n) {
        pl_rx_buf_putc(&seq, ' ');
        pl_rx_buf_putn(&seq, tail.s, tail.n);
    }
    pl_rx_buf_free(&tail);
    if (minn == 0)
        pl_rx_buf_printf(&o, "\"[\" %s (%s %s)? \"]\"", ws, seq.s ? seq.s : "", ws);
    else
        pl_rx_buf_printf(&o, "\"[\" %s %s %s \"]\"", ws, seq.s ? seq.s : "", ws);
    if (seq.oom)
        o.oom = 1;
    pl_rx_buf_free(&seq);
    out = take(c, &o);
done:
    for (long i = 0; pos && i < k; i++)
        efree(pos[i]);
    free(pos);
    if (restv)
        efree(restv);
    free(ws);
    return out;
}

/* ------------------------------------------------------------------ */
/* validation (for enum/const values under other keywords)             */


static int json_type_ok(const cJSON *v, int mask) {
    if (cJSON_IsObject(v))
        return mask & T_OBJECT;
    if (cJSON_IsArray(v))
        return mask & T_ARRAY;
    if (cJSON_IsString(v))
        return mask & T_STRING;
    if (cJSON_IsBool(v))
        return mask & T_BOOLEAN;
    if (cJSON_IsNull(v))
        return mask & T_NULL;
    if (cJSON_IsNumber(v))
        return (mask & T_NUMBER) || ((mask & T_INTEGER) && v->valuedouble == floor(v->valuedouble));
    return 0;
}

/* 1 valid, 0 not, -1 error (failed) */
static int validate(jsc *c, const cJSON *v, const cJSON *s, const char *path, int depth) {
    if (!s || cJSON_IsTrue(s))
        return 1;
    if (cJSON_IsFalse(s))
        return 0;
    if (!cJSON_IsObject(s)) {
        fail(c, "invalid schema at %s: not an object or a boolean", path);
        return -1;
    }
    if (depth > 64) {
        fail(c, "schema at %s nests too deeply to check enum values", path);
        return -1;
    }
    if (!check_keywords(c, s, path))
        return -1;
    int types = get_types(c, s, path);
    if (types < 0)
        return -1;
    if (types && !json_type_ok(v, types))
        return 0;
    const cJSON *k;
    if ((k = cJSON_GetObjectItemCaseSensitive(s, "const")) && !cJSON_Compare(v, k, 1))
        return 0;
    if ((k = cJSON_GetObjectItemCaseSensitive(s, "enum"))) {
        if (!cJSON_IsArray(k)) {
            fail(c, "invalid 'enum' at %s: not an array", path);
            return -1;
        }
        int any = 0;
        for (const cJSON *e = k->child; e; e = e->next)
            if (cJSON_Compare(v, e, 1))
                any = 1;
        if (!any)
            return 0;
    }
    if (cJSON_IsString(v)) {
        long n, len = count_cps(v->valuestring);
        int h;
        if ((h = get_count(c, s, "minLength", path, &n)) < 0)
            return -1;
        if (h && len < n)
            return 0;
        if ((h = get_count(c, s, "maxLength", path, &n)) < 0)
            return -1;
        if (h && len > n)
            return 0;
        const cJSON *pat = cJSON_GetObjectItemCaseSensitive(s, "pattern");
        const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(s, "format");
        const char *rxs = NULL;
        if (pat) {
            if (!cJSON_IsString(pat)) {
                fail(c, "invalid 'pattern' at %s: not a string", path);
                return -1;
            }
            rxs = pat->valuestring;
        }
        for (int pass = 0; pass < 2; pass++) {
            if (pass == 1) {
                if (!fmt)
                    break;
                int fid = cJSON_IsString(fmt) ? format_id(fmt->valuestring) : -1;
                if (fid < 0) {
                    fail(c, "unsupported JSON-schema format '%s' at %s",
                         cJSON_IsString(fmt) ? fmt->valuestring : "?", path);
                    return -1;
                }
                rxs = format_regex[fid];
            }
            if (!rxs)
                continue;
            char rerr[200];
            pl_regex *re = pl_regex_parse(rxs, rerr, sizeof rerr);
            if (!re) {
                fail(c, "unsupported pattern at %s: %s", path, rerr);
                return -1;
            }
            int m = pl_regex_match(re, v->valuestring, strlen(v->valuestring));
            pl_regex_free(re);
            if (m < 0) {
                fail(c, "cannot check an enum value against the pattern at %s", path);
                return -1;
            }
            if (!m)
                return 0;
            rxs = NULL;
        }
    }
    if (cJSON_IsNumber(v)) {
        bound lo, hi;
        if (!get_bound(c, s, path, 0, &lo) || !get_bound(c, s, path, 1, &hi))
            return -1;
        double x = v->valuedouble;
        if (lo.set && (lo.excl ? x <= lo.v : x < lo.v))
            return 0;
        if (hi.set && (hi.excl ? x >= hi.v : x > hi.v))
            return 0;
    }
    if (cJSON_IsObject(v)) {
        const cJSON *props = cJSON_GetObjectItemCaseSensitive(s, "properties");
        const cJSON *req = cJSON_GetObjectItemCaseSensitive(s, "required");
        const cJSON *ap = cJSON_GetObjectItemCaseSensitive(s, "additionalProperties");
        for (const cJSON *r = cJSON_IsArray(req) ? req->child : NULL; r; r = r->next)
            if (cJSON_IsString(r) && !cJSON_GetObjectItemCaseSensitive(v, r->valuestring))
                return 0;
        for (const cJSON *e = v->child; e; e = e->next) {
            const cJSON *ps = cJSON_IsObject(props) ? cJSON_GetObjectItemCaseSensitive(props, e->string) : NULL;
            int rr = validate(c, e, ps ? ps : ap, path, depth + 1);
            if (rr <= 0)
                return rr;
        }
    }
    if (cJSON_IsArray(v)) {
        const cJSON *items = cJSON_GetObjectItemCaseSensitive(s, "items");
        const cJSON *prefix = cJSON_GetObjectItemCaseSensitive(s, "prefixItems");
        const cJSON *rest = items;
        if (cJSON_IsArray(items)) {
            prefix = items;
            rest = cJSON_GetObjectItemCaseSensitive(s, "additionalItems");
        }
        long n = cJSON_GetArraySize(v), m;
        int h;
        if ((h = get_count(c, s, "minItems", path, &m)) < 0)
            return -1;
        if (h && n < m)
            return 0;
        if ((h = get_count(c, s, "maxItems", path, &m)) < 0)
            return -1;
        if (h && n > m)
            return 0;
        long i = 0;
        for (const cJSON *e = v->child; e; e = e->next, i++) {
            const cJSON *is = (cJSON_IsArray(prefix) && i < cJSON_GetArraySize(prefix))
                                  ? cJSON_GetArrayItem(prefix, (int)i)
                                  : rest;
            int rr = validate(c, e, is, path, depth + 1);
            if (rr <= 0)
                return rr;
        }
    }
    const char *comb[3] = {"anyOf", "oneOf", "allOf"};
    for (int w = 0; w < 3; w++) {
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(s, comb[w]);
        if (!l)
            continue;
        if (!cJSON_IsArray(l) || !l->child) {
            fail(c, "invalid '%s' at %s: not a non-empty array", comb[w], path);
            return -1;
        }
        int n = 0, total = 0;
        for (const cJSON *e = l->child; e; e = e->next, total++) {
            int rr = validate(c, v, e, path, depth + 1);
            if (rr < 0)
                return -1;
            n += rr;
        }
        if ((w == 0 && !n) || (w == 1 && n != 1) || (w == 2 && n != total))
            return 0;
    }
    if ((k = cJSON_GetObjectItemCaseSensitive(s, "$ref"))) {
        if (!cJSON_IsString(k)) {
            fail(c, "invalid '$ref' at %s: not a string", path);
            return -1;
        }
        const cJSON *t = resolve_pointer(c, k->valuestring, path);
        if (!t)
            return -1;
        return validate(c, v, t, k->valuestring, depth + 1);
    }
    return 1;
}

/* ------------------------------------------------------------------ */
/* merging (allOf, $ref with siblings, anyOf with siblings)            */

static cJSON *merge2(jsc *c, cJSON *a, cJSON *b, const char *path);

/* {"allOf":[x, y]} for a lazy merge, or one of them when the other is
   true/absent; false wins */
static cJSON *lazy_all(const cJSON *x, const cJSON *y) {
    if (cJSON_IsFalse(x) || cJSON_IsFalse(y))
        return cJSON_CreateFalse();
    if (!x || cJSON_IsTrue(x))
        return y ? cJSON_Duplicate(y, 1) : cJSON_CreateTrue();
    if (!y || cJSON_IsTrue(y))
        return cJSON_Duplicate(x, 1);
    cJSON *o = cJSON_CreateObject();
    cJSON *l = cJSON_AddArrayToObject(o, "allOf");
    if (!l) {
        cJSON_Delete(o);
        return NULL;
    }
    cJSON_AddItemToArray(l, cJSON_Duplicate(x, 1));
    cJSON_AddItemToArray(l, cJSON_Duplicate(y, 1));
    return o;
}

/* a copy of s without allOf, $ref and the keywords that ask nothing;
   anyOf together with oneOf becomes one anyOf of their combinations */
static cJSON *norm(jsc *c, const cJSON *s, const char *path, int depth) {
    if (!s || cJSON_IsBool(s))
        return s && cJSON_IsFalse(s) ? cJSON_CreateFalse() : cJSON_CreateTrue();
    if (!cJSON_IsObject(s)) {
        fail(c, "invalid schema at %s: not an object or a boolean", path);
        return NULL;
    }
    if (!check_keywords(c, s, path))
        return NULL;
    if (depth > MERGE_LIMIT) {
        fail(c, "allOf/$ref at %s nests too deeply to merge", path);
        return NULL;
    }
    cJSON *acc = cJSON_CreateObject();
    if (!acc) {
        oom(c);
        return NULL;
    }
    for (const cJSON *k = s->child; k; k = k->next) {
        if (is_annotation(k->string) || !strcmp(k->string, "allOf") || !strcmp(k->string, "$ref") ||
            !strcmp(k->string, "oneOf"))
            continue;
        cJSON_AddItemToObject(acc, k->string, cJSON_Duplicate(k, 1));
    }
    const cJSON *one = cJSON_GetObjectItemCaseSensitive(s, "oneOf");
    if (one) {
        /* merged in as a second schema: the combinations are made there */
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToObject(o, "oneOf", cJSON_Duplicate(one, 1));
        acc = merge2(c, acc, o, path);
        if (!acc)
            return NULL;
    }
    const cJSON *ref = cJSON_GetObjectItemCaseSensitive(s, "$ref");
    if (ref) {
        if (!cJSON_IsString(ref)) {
            fail(c, "invalid '$ref' at %s: not a string", path);
            cJSON_Delete(acc);
            return NULL;
        }
        const cJSON *t = resolve_pointer(c, ref->valuestring, path);
        cJSON *tn = t ? norm(c, t, ref->valuestring, depth + 1) : NULL;
        if (!tn) {
            cJSON_Delete(acc);
            return NULL;
        }
        acc = merge2(c, acc, tn, path);
        if (!acc)
            return NULL;
    }
    const cJSON *all = cJSON_GetObjectItemCaseSensitive(s, "allOf");
    if (all) {
        if (!cJSON_IsArray(all) || !all->child) {
            fail(c, "invalid 'allOf' at %s: not a non-empty array", path);
            cJSON_Delete(acc);
            return NULL;
        }
        int i = 0;
        for (const cJSON *m = all->child; m; m = m->next, i++) {
            char *mp = path_idx(c, path, "allOf", i);
            cJSON *mn = mp ? norm(c, m, mp, depth + 1) : NULL;
            free(mp);
            if (!mn) {
                cJSON_Delete(acc);
                return NULL;
            }
            acc = merge2(c, acc, mn, path);
            if (!acc)
                return NULL;
        }
    }
    return acc;
}

static void take_key(cJSON *r, const char *key, const cJSON *from) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(from, key);
    if (v)
        cJSON_AddItemToObject(r, key, cJSON_Duplicate(v, 1));
}

static cJSON *merge2(jsc *c, cJSON *a, cJSON *b, const char *path) {
    cJSON *r = NULL;
    if (c->failed || !a || !b) {
        if (!c->failed)
            oom(c);
        goto out;
    }
    if (cJSON_IsFalse(a) || cJSON_IsFalse(b)) {
        r = cJSON_CreateFalse();
        goto out;
    }
    if (cJSON_IsTrue(a)) {
        r = b;
        b = NULL;
        goto out;
    }
    if (cJSON_IsTrue(b)) {
        r = a;
        a = NULL;
        goto out;
    }
    r = cJSON_CreateObject();
    if (!r) {
        oom(c);
        goto out;
    }
    /* type */
    {
        int ta = get_types(c, a, path), tb = get_types(c, b, path);
        if (ta < 0 || tb < 0)
            goto bad;
        if (ta && tb) {
            if (ta & T_NUMBER)
                ta |= T_INTEGER;
            if (tb & T_NUMBER)
                tb |= T_INTEGER;
            int t = ta & tb;
            if ((ta & T_NUMBER) && (tb & T_NUMBER))
                t = (t & ~T_INTEGER) | T_NUMBER;
            else
                t &= ~T_NUMBER;
            if (!t) {
                fail(c, "unsatisfiable JSON schema at %s: allOf parts share no type", path);
                goto bad;
            }
            cJSON *arr = cJSON_AddArrayToObject(r, "type");
            for (int i = 0; i < 7; i++)
                if (t & (1 << i))
                    cJSON_AddItemToArray(arr, cJSON_CreateString(type_names[i]));
        } else {
            take_key(r, "type", ta ? a : b);
        }
    }
    /* enum, const */
    {
        const cJSON *ea = cJSON_GetObjectItemCaseSensitive(a, "enum");
        const cJSON *eb = cJSON_GetObjectItemCaseSensitive(b, "enum");
        if (ea && eb) {
            if (!cJSON_IsArray(ea) || !cJSON_IsArray(eb)) {
                fail(c, "invalid 'enum' at %s: not an array", path);
                goto bad;
            }
            cJSON *l = cJSON_AddArrayToObject(r, "enum");
            for (const cJSON *x = ea->child; x; x = x->next)
                for (const cJSON *y = eb->child; y; y = y->next)
                    if (cJSON_Compare(x, y, 1)) {
                        cJSON_AddItemToArray(l, cJSON_Duplicate(x, 1));
                        break;
                    }
            if (!l->child) {
                fail(c, "unsatisfiable JSON schema at %s: the enums of allOf have no value in common", path);
                goto bad;
            }
        } else {
            take_key(r, "enum", ea ? a : b);
        }
        const cJSON *ca = cJSON_GetObjectItemCaseSensitive(a, "const");
        const cJSON *cb = cJSON_GetObjectItemCaseSensitive(b, "const");
        if (ca && cb && !cJSON_Compare(ca, cb, 1)) {
            fail(c, "unsatisfiable JSON schema at %s: two different 'const' values in allOf", path);
            goto bad;
        }
        take_key(r, "const", ca ? a : b);
    }
    /* numeric limits */
    {
        static const char *const lows[] = {"minLength", "minItems", "minimum", "exclusiveMinimum"};
        static const char *const highs[] = {"maxLength", "maxItems", "maximum", "exclusiveMaximum"};
        for (int w = 0; w < 2; w++) {
            for (int i = 0; i < 4; i++) {
                const char *key = w ? highs[i] : lows[i];
                const cJSON *x = cJSON_GetObjectItemCaseSensitive(a, key);
                const cJSON *y = cJSON_GetObjectItemCaseSensitive(b, key);
                if (!x && !y)
                    continue;
                if ((x && !cJSON_IsNumber(x)) || (y && !cJSON_IsNumber(y))) {
                    fail(c, "unsupported JSON-schema keyword '%s' at %s: the draft-4 boolean form under allOf",
                         key, path);
                    goto bad;
                }
                double v = x && y ? (w ? fmin(x->valuedouble, y->valuedouble) : fmax(x->valuedouble, y->valuedouble))
                                  : (x ? x : y)->valuedouble;
                cJSON_AddNumberToObject(r, key, v);
            }
        }
    }
    /* pattern, format */
    {
        static const char *const keys[] = {"pattern", "format"};
        for (int i = 0; i < 2; i++) {
            const cJSON *x = cJSON_GetObjectItemCaseSensitive(a, keys[i]);
            const cJSON *y = cJSON_GetObjectItemCaseSensitive(b, keys[i]);
            if (x && y && !cJSON_Compare(x, y, 1)) {
                fail(c, "unsupported JSON-schema keyword '%s' at %s: two different values under allOf", keys[i],
                     path);
                goto bad;
            }
            take_key(r, keys[i], x ? a : b);
        }
    }
    /* required: the union */
    {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(a, "required");
        const cJSON *y = cJSON_GetObjectItemCaseSensitive(b, "required");
        if (x || y) {
            if ((x && !cJSON_IsArray(x)) || (y && !cJSON_IsArray(y))) {
                fail(c, "invalid 'required' at %s: not an array", path);
                goto bad;
            }
            cJSON *l = cJSON_AddArrayToObject(r, "required");
            for (int w = 0; w < 2; w++)
                for (const cJSON *e = (w ? y : x) ? (w ? y : x)->child : NULL; e; e = e->next) {
                    int dup = 0;
                    for (const cJSON *f = l->child; f; f = f->next)
                        if (cJSON_Compare(e, f, 1))
                            dup = 1;
                    if (!dup)
                        cJSON_AddItemToArray(l, cJSON_Duplicate(e, 1));
                }
        }
    }
    /* properties and additionalProperties: a name declared on one side
       only is governed by the other side's additionalProperties */
    {
        const cJSON *pa = cJSON_GetObjectItemCaseSensitive(a, "properties");
        const cJSON *pb = cJSON_GetObjectItemCaseSensitive(b, "properties");
        const cJSON *xa = cJSON_GetObjectItemCaseSensitive(a, "additionalProperties");
        const cJSON *xb = cJSON_GetObjectItemCaseSensitive(b, "additionalProperties");
        if ((pa && !cJSON_IsObject(pa)) || (pb && !cJSON_IsObject(pb))) {
            fail(c, "invalid 'properties' at %s: not an object", path);
            goto bad;
        }
        if (pa || pb) {
            cJSON *po = cJSON_AddObjectToObject(r, "properties");
            for (int w = 0; w < 2; w++) {
                const cJSON *mine = w ? pb : pa, *other = w ? pa : pb;
                const cJSON *other_x = w ? xa : xb;
                for (const cJSON *p = mine ? mine->child : NULL; p; p = p->next) {
                    const cJSON *q = other ? cJSON_GetObjectItemCaseSensitive(other, p->string) : NULL;
                    if (w && q)
                        continue; /* done in the first round */
                    cJSON *m = w ? lazy_all(q ? q : other_x, p) : lazy_all(p, q ? q : other_x);
                    if (!m)
                        goto bad_oom;
                    cJSON_AddItemToObject(po, p->string, m);
                }
            }
        }
        if (xa || xb) {
            cJSON *m = lazy_all(xa, xb);
            if (!m)
                goto bad_oom;
            if (cJSON_IsTrue(m))
                cJSON_Delete(m);
            else
                cJSON_AddItemToObject(r, "additionalProperties", m);
        }
    }
    /* items: position by position */
    {
        const cJSON *side[2] = {a, b};
        const cJSON *pre[2], *rest[2];
        int any = 0;
        for (int w = 0; w < 2; w++) {
            const cJSON *it = cJSON_GetObjectItemCaseSensitive(side[w], "items");
            pre[w] = cJSON_GetObjectItemCaseSensitive(side[w], "prefixItems");
            rest[w] = it;
            if (cJSON_IsArray(it)) {
                pre[w] = it;
                rest[w] = cJSON_GetObjectItemCaseSensitive(side[w], "additionalItems");
            }
            if (pre[w] && !cJSON_IsArray(pre[w])) {
                fail(c, "invalid 'prefixItems' at %s: not an array", path);
                goto bad;
            }
            if (pre[w] || rest[w])
                any = 1;
        }
        if (any) {
            int n0 = pre[0] ? cJSON_GetArraySize(pre[0]) : 0, n1 = pre[1] ? cJSON_GetArraySize(pre[1]) : 0;
            int n = n0 > n1 ? n0 : n1;
            if (n) {
                cJSON *l = cJSON_AddArrayToObject(r, "prefixItems");
                for (int i = 0; i < n; i++) {
                    const cJSON *x = i < n0 ? cJSON_GetArrayItem(pre[0], i) : rest[0];
                    const cJSON *y = i < n1 ? cJSON_GetArrayItem(pre[1], i) : rest[1];
                    cJSON *m = lazy_all(x, y);
                    if (!m)
                        goto bad_oom;
                    cJSON_AddItemToArray(l, m);
                }
            }
            if (rest[0] || rest[1]) {
                cJSON *m = lazy_all(rest[0], rest[1]);
                if (!m)
                    goto bad_oom;
                cJSON_AddItemToObject(r, "items", m);
            }
        }
    }
    /* anyOf / oneOf: one list stays; several become the anyOf of their
       combinations (oneOf is treated as anyOf) */
    {
        const cJSON *lists[4];
        int nl = 0;
        const char *only = NULL;
        for (int w = 0; w < 2; w++)
            for (int i = 0; i < 2; i++) {
                const char *key = i ? "oneOf" : "anyOf";
                const cJSON *l = cJSON_GetObjectItemCaseSensitive(w ? b : a, key);
                if (!l)
                    continue;
                if (!cJSON_IsArray(l) || !l->child) {
                    fail(c, "invalid '%s' at %s: not a non-empty array", key, path);
                    goto bad;
                }
                lists[nl++] = l;
                only = key;
            }
        if (nl == 1) {
            cJSON_AddItemToObject(r, only, cJSON_Duplicate(lists[0], 1));
        } else if (nl > 1) {
            long total = 1;
            for (int i = 0; i < nl; i++)
                total *= cJSON_GetArraySize(lists[i]);
            if (total > PRODUCT_LIMIT) {
                fail(c, "unsupported JSON-schema keyword 'anyOf' at %s: combining the alternatives of allOf parts "
                        "gives more than %d", path, PRODUCT_LIMIT);
                goto bad;
            }
            cJSON *l = cJSON_AddArrayToObject(r, "anyOf");
            for (long idx = 0; idx < total; idx++) {
                cJSON *o = cJSON_CreateObject();
                cJSON *al = cJSON_AddArrayToObject(o, "allOf");
                long q = idx;
                for (int i = nl - 1; i >= 0; i--) {
                    int sz = cJSON_GetArraySize(lists[i]);
                    cJSON_AddItemToArray(al, cJSON_Duplicate(cJSON_GetArrayItem(lists[i], (int)(q % sz)), 1));
                    q /= sz;
                }
                cJSON_AddItemToArray(l, o);
            }
        }
    }
    goto out;
bad_oom:
    oom(c);
bad:
    cJSON_Delete(r);
    r = NULL;
out:
    cJSON_Delete(a);
    cJSON_Delete(b);
    if (!r && !c->failed)
        oom(c);
    return r;
}

/* ------------------------------------------------------------------ */
/* visiting                                                            */

static int has_key(const cJSON *s, const char *k) { return cJSON_GetObjectItemCaseSensitive(s, k) != NULL; }

/* does the schema have keywords that constrain, besides the ones listed? */
static int has_other_constraints(const cJSON *s, const char *const *except) {
    for (const cJSON *k = s->child; k; k = k->next)
        if (!is_annotation(k->string) && !in_list(except, k->string))
            return 1;
    return 0;
}

static char *visit_body(jsc *c, const cJSON *s, const char *path, const char *hint);

static char *alternatives_expr(jsc *c, const cJSON *s, const char *path, const char *hint) {
    const char *key = has_key(s, "anyOf") ? "anyOf" : "oneOf";
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(s, key);
    if (!cJSON_IsArray(l) || !l->child) {
        fail(c, "invalid '%s' at %s: not a non-empty array", key, path);
        return NULL;
    }
    static const char *const alt_keys[] = {"anyOf", "oneOf", NULL};
    cJSON *sibs = NULL;
    if (has_other_constraints(s, alt_keys)) {
        sibs = cJSON_Duplicate(s, 1);
        if (!sibs) {
            oom(c);
            return NULL;
        }
        cJSON_DeleteItemFromObjectCaseSensitive(sibs, "anyOf");
        cJSON_DeleteItemFromObjectCaseSensitive(sibs, "oneOf");
    }
    /* oneOf is treated as anyOf: the grammar allows a value that would
       match several alternatives (telling them apart is not what a
       grammar can do in general) */
    pl_rx_buf o = {0};
    char **seen = NULL;
    size_t nseen = 0;
    int i = 0, ok = 1;
    for (const cJSON *a = l->child; a && ok; a = a->next, i++) {
        char *ap = path_idx(c, path, key, i);
        char *ah = jfmt(c, "%s-%d", hint, i);
        char *e = NULL;
        if (ap && ah) {
            if (sibs) {
                cJSON *sn = norm(c, sibs, path, 0);
                cJSON *an = sn ? norm(c, a, ap, 0) : NULL;
                cJSON *m = an ? merge2(c, sn, an, ap) : (cJSON_Delete(sn), NULL);
                e = m ? visit(c, m, ap, ah, 0) : NULL;
                cJSON_Delete(m);
            } else {
                e = visit(c, a, ap, ah, 0);
            }
        }
        free(ap);
        free(ah);
        if (!e) {
            ok = 0;
            break;
        }
        if (e == NEVER)
            continue;
        int dup = 0;
        for (size_t j = 0; j < nseen; j++)
            if (!strcmp(seen[j], e))
                dup = 1;
        if (dup) {
            free(e);
            continue;
        }
        char **ns = realloc(seen, (nseen + 1) * sizeof *ns);
        if (!ns) {
            free(e);
            oom(c);
            ok = 0;
            break;
        }
        seen = ns;
        seen[nseen++] = e;
        if (nseen > 1)
            pl_rx_buf_puts(&o, " | ");
        pl_rx_buf_puts(&o, e);
    }
    for (size_t j = 0; j < nseen; j++)
        free(seen[j]);
    free(seen);
    cJSON_Delete(sibs);
    if (!ok) {
        pl_rx_buf_free(&o);
        return NULL;
    }
    if (!nseen) {
        pl_rx_buf_free(&o);
        return NEVER;
    }
    return take(c, &o);
}

static char *types_expr(jsc *c, const cJSON *s, const char *path, const char *hint) {
    int types = get_types(c, s, path);
    if (types < 0)
        return NULL;
    if (!types) {
        /* no "type": the kinds of value its keywords speak of (a subset of
           what the schema allows: it means objects when it has
           "properties", ...), or any value when none */
        static const char *const objk[] = {"properties", "required", "additionalProperties", NULL};
        static const char *const arrk[] = {"items", "prefixItems", "additionalItems", "minItems", "maxItems", NULL};
        static const char *const strk[] = {"minLength", "maxLength", "pattern", "format", NULL};
        static const char *const numk[] = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", NULL};
        for (const cJSON *k = s->child; k; k = k->next) {
            if (in_list(objk, k->string))
                types |= T_OBJECT;
            else if (in_list(arrk, k->string))
                types |= T_ARRAY;
            else if (in_list(strk, k->string))
                types |= T_STRING;
            else if (in_list(numk, k->string))
                types |= T_NUMBER;
        }
        if (!types)
            return helper(c, H_VALUE);
    }
    if (types & T_NUMBER)
        types &= ~T_INTEGER;
    pl_rx_buf o = {0};
    int n = 0;
    for (int i = 0; i < 7; i++) {
        int t = 1 << i;
        if (!(types & t))
            continue;
        char *e = NULL;
        switch (t) {
        case T_OBJECT: e = object_expr(c, s, path, hint); break;
        case T_ARRAY: e = array_expr(c, s, path, hint); break;
        case T_STRING: e = string_expr(c, s, path, hint); break;
        case T_NUMBER: e = number_expr(c, s, path, 0); break;
        case T_INTEGER: e = number_expr(c, s, path, 1); break;
        case T_BOOLEAN: e = helper(c, H_BOOLEAN); break;
        case T_NULL: e = helper(c, H_NULL); break;
        }
        if (!e) {
            pl_rx_buf_free(&o);
            return NULL;
        }
        if (n++)
            pl_rx_buf_puts(&o, " | ");
        pl_rx_buf_puts(&o, e);
        free(e);
    }
    return take(c, &o);
}

static char *visit_body(jsc *c, const cJSON *s, const char *path, const char *hint) {
    if (c->failed)
        return NULL;
    if (!s || cJSON_IsTrue(s))
        return helper(c, H_VALUE);
    if (cJSON_IsFalse(s))
        return NEVER;
    if (!cJSON_IsObject(s)) {
        fail(c, "invalid schema at %s: not an object or a boolean", path);
        return NULL;
    }
    if (!check_keywords(c, s, path))
        return NULL;
    static const char *const ref_only[] = {"$ref", NULL};
    const cJSON *ref = cJSON_GetObjectItemCaseSensitive(s, "$ref");
    if (has_key(s, "allOf") || (ref && has_other_constraints(s, ref_only)) ||
        (has_key(s, "anyOf") && has_key(s, "oneOf"))) {
        cJSON *m = norm(c, s, path, 0);
        if (!m)
            return NULL;
        char *e = visit_body(c, m, path, hint);
        cJSON_Delete(m);
        return e;
    }
    if (ref) {
        if (!cJSON_IsString(ref)) {
            fail(c, "invalid '$ref' at %s: not a string", path);
            return NULL;
        }
        return ref_expr(c, ref->valuestring, path);
    }
    if (has_key(s, "enum") || has_key(s, "const"))
        return enum_expr(c, s, path);
    if (has_key(s, "anyOf") || has_key(s, "oneOf"))
        return alternatives_expr(c, s, path, hint);
    return types_expr(c, s, path, hint);
}

/* The expression of a schema: as the body of a rule (as_body), else as
   one term or sequence, a rule named after the hint made when needed. */
static char *visit(jsc *c, const cJSON *s, const char *path, const char *hint, int as_body) {
    if (++c->nest > NEST_LIMIT) {
        fail(c, "schema at %.160s%s nests too deeply (a $ref that expands into itself?)", path,
             strlen(path) > 160 ? "..." : "");
        c->nest--;
        return NULL;
    }
    char *e = visit_body(c, s, path, hint);
    c->nest--;
    if (!e || e == NEVER || as_body || expr_is_term(e))
        return e;
    const char *name = rule_add(c, hint, e);
    return name ? jstrdup(c, name) : NULL;
}

/* ------------------------------------------------------------------ */
/* the text                                                            */

static char *helper_body(jsc *c, int h) {
    const char *p = c->prefix;
    switch (h) {
    case H_WS: return jstrdup(c, "| \" \" | \"\\n\" [ \\t]{0,20}");
    case H_CHAR:
        return jstrdup(c, "[^\\x22\\x5C\\x7F\\x00-\\x1F] | \"\\\\\" ([\\x22\\x5C/bfnrt] | \"u\" ("
                          "[0-9a-cA-CefEF] [0-9a-fA-F]{3} | [dD] [0-7] [0-9a-fA-F]{2} | "
                          "[dD] [89abAB] [0-9a-fA-F]{2} \"\\\\u\" [dD] [c-fC-F] [0-9a-fA-F]{2}))");
    case H_STRING: return jfmt(c, "\"\\\"\" %schar* \"\\\"\"", p);
    case H_NUMBER:
        return jstrdup(c, "\"-\"? (\"0\" | [1-9] [0-9]{0,15}) (\".\" [0-9]{1,16})? ([eE] [+\\x2D]? [0-9]{1,3})?");
    case H_INTEGER: return jstrdup(c, "\"-\"? (\"0\" | [1-9] [0-9]{0,15})");
    case H_BOOLEAN: return jstrdup(c, "\"true\" | \"false\"");
    case H_NULL: return jstrdup(c, "\"null\"");
    case H_VALUE:
        return jfmt(c, "%sobject | %sarray | %sstring | %snumber | %sboolean | %snull", p, p, p, p, p, p);
    case H_OBJECT:
        return jfmt(c, "\"{\" %sws (%sstring \":\" %sws %svalue (\",\" %sws %sstring \":\" %sws %svalue)* %sws)? \"}\"",
                    p, p, p, p, p, p, p, p, p);
    case H_ARRAY: return jfmt(c, "\"[\" %sws (%svalue (\",\" %sws %svalue)* %sws)? \"]\"", p, p, p, p, p);
    case H_KCHAR: {
        pl_rx_cpset all = {0};
        pl_rx_cpset_add(&all, 0, 0x10FFFF);
        pl_rx_buf sb = {0};
        pl_rx_put_json_charset(&sb, &all);
        pl_rx_cpset_free(&all);
        return take(c, &sb);
    }
    default: {
        char rerr[200];
        pl_regex *re = pl_regex_parse(format_regex[h], rerr, sizeof rerr);
        if (!re) {
            fail(c, "internal error: format regex: %s", rerr);
            return NULL;
        }
        char *e = quote_regex(c, re, helper_names[h]);
        pl_regex_free(re);
        return e;
    }
    }
}

static const unsigned helper_deps[H_COUNT] = {
    [H_STRING] = 1u << H_CHAR,
    [H_VALUE] = (1u << H_OBJECT) | (1u << H_ARRAY) | (1u << H_STRING) | (1u << H_NUMBER) | (1u << H_BOOLEAN) |
                (1u << H_NULL),
    [H_OBJECT] = (1u << H_WS) | (1u << H_STRING) | (1u << H_VALUE),
    [H_ARRAY] = (1u << H_WS) | (1u << H_VALUE),
};

static int prefix_ok(const char *p) {
    for (; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-'))
            return 0;
    return 1;
}

static void ctx_free(jsc *c) {
    for (size_t i = 0; i < c->nrules; i++) {
        free(c->rules[i].name);
        free(c->rules[i].body);
    }
    free(c->rules);
    for (size_t i = 0; i < c->nrefs; i++)
        free(c->refs[i].ref);
    free(c->refs);
}

char *pl_schema_to_gbnf(const cJSON *schema, const char *prefix, char *err, size_t errlen) {
    char dummy[8];
    if (!err || !errlen) {
        err = dummy;
        errlen = sizeof dummy;
    }
    err[0] = 0;
    if (!prefix)
        prefix = "";
    if (!prefix_ok(prefix)) {
        snprintf(err, errlen, "invalid rule-name prefix '%s': only [a-zA-Z0-9-]", prefix);
        return NULL;
    }
    if (!schema) {
        snprintf(err, errlen, "no schema");
        return NULL;
    }
    jsc c = {0};
    c.doc = schema;
    c.prefix = prefix;
    c.err = err;
    c.errlen = errlen;
    char *text = NULL;
    const char *root = rule_add(&c, "root", NULL);
    if (root) {
        c.refs = calloc(4, sizeof *c.refs);
        if (c.refs) {
            c.caprefs = 4;
            c.refs[0].ref = dupstr("#");
            c.refs[0].name = root;
            c.refs[0].busy = 1;
            c.nrefs = c.refs[0].ref ? 1 : 0;
        }
        if (!c.nrefs)
            oom(&c);
    }
    char *body = c.failed ? NULL : visit(&c, schema, "#", "root", 1);
    if (body == NEVER) {
        fail(&c, "unsatisfiable JSON schema at #: it accepts no value");
        body = NULL;
    }
    if (body)
        rule_define(&c, root, body);
    if (!c.failed) {
        /* helpers and what they need */
        for (int changed = 1; changed;) {
            changed = 0;
            for (int h = 0; h < H_COUNT; h++)
                if ((c.helpers & (1u << h)) && (c.helpers | helper_deps[h]) != c.helpers) {
                    c.helpers |= helper_deps[h];
                    changed = 1;
                }
        }
        /* the helpers' bodies first: a format's may add rules */
        char *hb[H_COUNT] = {0};
        for (int h = 0; h < H_COUNT && !c.failed; h++)
            if (c.helpers & (1u << h))
                hb[h] = helper_body(&c, h);
        pl_rx_buf out = {0};
        for (size_t i = 0; i < c.nrules; i++)
            pl_rx_buf_printf(&out, "%s ::= %s\n", c.rules[i].name, c.rules[i].body ? c.rules[i].body : "\"\"");
        for (int h = 0; h < H_COUNT; h++) {
            if (hb[h])
                pl_rx_buf_printf(&out, "%s%s ::= %s\n", prefix, helper_names[h], hb[h]);
            free(hb[h]);
        }
        text = c.failed ? (pl_rx_buf_free(&out), NULL) : take(&c, &out);
    }
    ctx_free(&c);
    return text;
}

char *pl_json_object_gbnf(const char *prefix) {
    cJSON *s = cJSON_CreateObject();
    if (!s || !cJSON_AddStringToObject(s, "type", "object")) {
        cJSON_Delete(s);
        return NULL;
    }
    char err[160];
    char *g = pl_schema_to_gbnf(s, prefix, err, sizeof err);
    cJSON_Delete(s);
    return g;
}
