/*
 * gbnf_parse.c -- GBNF text to the flat grammar of gbnf.h.  The dialect is
 * llama.cpp's (grammars/README.md of its tree): `name ::= alternatives`, a
 * rule ending at a newline outside parentheses, `|`, `( )`, string
 * literals, character classes with ranges and `^`, `.`, the repetitions
 * `* + ? {m} {m,} {m,n}` and `#` comments.  Repetitions become helper rules
 * the way llama.cpp rewrites them (S{m,n} = m copies of S, then nested
 * optional rules), so a grammar that llama.cpp accepts means the same here.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strmap.h"
#include "grammar/gbnf.h"

#define MAX_RULES 65536
#define MAX_ELEMS (4u << 20)
#define MAX_REPEAT 2000 /* llama.cpp's threshold for {m,n} */
#define INF_LEN (UINT32_MAX / 4)

typedef struct seq {
    pl_gelem *e;
    size_t n, cap;
} seq;

typedef struct trule {
    char *name;
    seq *alts;
    size_t n_alt, cap_alt;
    bool defined;
} trule;

typedef struct parser {
    const char *src, *p;
    pl_gbnf *g;
    trule *rules;
    size_t n_rules, cap_rules;
    pl_strmap names;
    size_t n_elems; /* elements made so far, against MAX_ELEMS */
    char *err;
    size_t errlen;
    bool failed;
} parser;

static bool fail(parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(parser *ps, const char *fmt, ...) {
    if (ps->failed) return false;
    ps->failed = true;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* where: line and column of the parser's position */
    size_t line = 1, col = 1;
    for (const char *q = ps->src; q < ps->p && *q; q++) {
        if (*q == '\n') line++, col = 1;
        else col++;
    }
    snprintf(ps->err, ps->errlen, "grammar: %s at line %zu, column %zu", msg, line, col);
    return false;
}

static bool grow(void **p, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return true;
    size_t c = *cap ? *cap * 2 : 16;
    while (c < need) c *= 2;
    void *q = realloc(*p, c * size);
    if (!q) return false;
    *p = q;
    *cap = c;
    return true;
}

static bool seq_push(parser *ps, seq *s, uint8_t kind, int32_t arg) {
    if (++ps->n_elems > MAX_ELEMS) return fail(ps, "more than %u elements", MAX_ELEMS);
    if (!grow((void **)&s->e, &s->cap, s->n + 1, sizeof *s->e)) return fail(ps, "out of memory");
    s->e[s->n++] = (pl_gelem){kind, arg};
    return true;
}

/* The rule called name[0..len), made (undefined) when first seen. */
static int32_t rule_id(parser *ps, const char *name, size_t len) {
    uint64_t v;
    if (pl_strmap_get(&ps->names, name, len, &v)) return (int32_t)v;
    if (ps->n_rules >= MAX_RULES) return fail(ps, "more than %d rules", MAX_RULES), -1;
    if (!grow((void **)&ps->rules, &ps->cap_rules, ps->n_rules + 1, sizeof *ps->rules)) return fail(ps, "out of memory"), -1;
    char *copy = malloc(len + 1);
    if (!copy) return fail(ps, "out of memory"), -1;
    memcpy(copy, name, len);
    copy[len] = 0;
    const int32_t id = (int32_t)ps->n_rules;
    ps->rules[ps->n_rules++] = (trule){.name = copy};
    if (pl_strmap_put(&ps->names, copy, len, (uint64_t)id, NULL) < 0) return fail(ps, "out of memory"), -1;
    return id;
}

/* A helper rule for a group or a repetition inside rule `base`. */
static int32_t new_rule(parser *ps, int32_t base) {
    char name[96];
    for (unsigned k = (unsigned)ps->n_rules;; k++) {
        snprintf(name, sizeof name, "%.60s_%u", ps->rules[base].name, k);
        uint64_t v;
        if (!pl_strmap_get(&ps->names, name, strlen(name), &v)) break;
    }
    const int32_t id = rule_id(ps, name, strlen(name));
    if (id >= 0) ps->rules[id].defined = true;
    return id;
}

static seq *new_alt(parser *ps, int32_t r) {
    trule *t = &ps->rules[r];
    if (!grow((void **)&t->alts, &t->cap_alt, t->n_alt + 1, sizeof *t->alts)) return fail(ps, "out of memory"), NULL;
    t->alts[t->n_alt] = (seq){0};
    return &t->alts[t->n_alt++];
}

static int32_t add_class(parser *ps, bool negated) {
    pl_gbnf *g = ps->g;
    if (!grow((void **)&g->cls, &g->cap_cls, g->n_cls + 1, sizeof *g->cls)) return fail(ps, "out of memory"), -1;
    g->cls[g->n_cls] = (pl_gclass){.first = (uint32_t)(g->n_ranges / 2), .n = 0, .negated = negated};
    return (int32_t)g->n_cls++;
}

static bool class_range(parser *ps, int32_t c, uint32_t lo, uint32_t hi) {
    pl_gbnf *g = ps->g;
    if (!grow((void **)&g->ranges, &g->cap_ranges, g->n_ranges + 2, sizeof *g->ranges)) return fail(ps, "out of memory");
    g->ranges[g->n_ranges++] = lo;
    g->ranges[g->n_ranges++] = hi;
    g->cls[c].n++;
    return true;
}

static bool is_word(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

static void skip_space(parser *ps, bool newlines) {
    const char *p = ps->p;
    while (*p == ' ' || *p == '\t' || *p == '#' || (newlines && (*p == '\r' || *p == '\n'))) {
        if (*p == '#') {
            while (*p && *p != '\r' && *p != '\n') p++;
        } else {
            p++;
        }
    }
    ps->p = p;
}

static bool hex(parser *ps, int digits, uint32_t *out) {
    uint32_t v = 0;
    for (int i = 0; i < digits; i++) {
        const char c = ps->p[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return fail(ps, "expected %d hex digits", digits);
        v = v * 16 + (uint32_t)d;
    }
    ps->p += digits;
    *out = v;
    return true;
}

/* One character of a literal or class: an escape or a UTF-8 sequence. */
static bool one_char(parser *ps, uint32_t *out) {
    const unsigned char *p = (const unsigned char *)ps->p;
    if (!*p) return fail(ps, "unexpected end of grammar");
    if (*p == '\\') {
        ps->p += 2;
        switch (p[1]) {
        case 'x': return hex(ps, 2, out);
        case 'u': return hex(ps, 4, out);
        case 'U': return hex(ps, 8, out);
        case 't': *out = '\t'; return true;
        case 'r': *out = '\r'; return true;
        case 'n': *out = '\n'; return true;
        case '\\': case '"': case '[': case ']': case '-': *out = p[1]; return true;
        default: ps->p -= 2; return fail(ps, "unknown escape '\\%c'", p[1] ? p[1] : '0');
        }
    }
    int n = *p < 0x80 ? 1 : (*p >> 5) == 6 ? 2 : (*p >> 4) == 14 ? 3 : (*p >> 3) == 30 ? 4 : 0;
    if (!n) return fail(ps, "invalid UTF-8");
    uint32_t v = n == 1 ? *p : n == 2 ? (*p & 31u) : n == 3 ? (*p & 15u) : (*p & 7u);
    for (int i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80) return fail(ps, "invalid UTF-8");
        v = (v << 6) | (p[i] & 63u);
    }
    ps->p += n;
    *out = v;
    return true;
}

static bool alternates(parser *ps, int32_t r, bool nested);

/* S{min,max} on the symbol s[start..]: llama.cpp's rewrite (see the top). */
static bool repeat(parser *ps, int32_t r, seq *s, size_t start, uint64_t min, uint64_t max, bool no_max) {
    if (start >= s->n) return fail(ps, "a repetition with nothing before it");
    if (min > MAX_REPEAT || (!no_max && max > MAX_REPEAT)) return fail(ps, "more than %d repetitions", MAX_REPEAT);
    if (!no_max && max < min) return fail(ps, "repetition {%llu,%llu}: the maximum is below the minimum",
                                           (unsigned long long)min, (unsigned long long)max);
    const size_t len = s->n - start;
    pl_gelem *prev = malloc(len * sizeof *prev);
    if (!prev) return fail(ps, "out of memory");
    memcpy(prev, s->e + start, len * sizeof *prev);
    bool ok = true;
    if (min == 0) s->n = start;
    for (uint64_t i = 1; ok && i < min; i++)
        for (size_t j = 0; ok && j < len; j++) ok = seq_push(ps, s, prev[j].kind, prev[j].arg);
    const uint64_t n_opt = no_max ? 1 : max - min;
    int32_t last = -1;
    for (uint64_t i = 0; ok && i < n_opt; i++) {
        const int32_t id = new_rule(ps, r);
        seq *a = id >= 0 ? new_alt(ps, id) : NULL;
        if (!a) { ok = false; break; }
        for (size_t j = 0; ok && j < len; j++) ok = seq_push(ps, a, prev[j].kind, prev[j].arg);
        if (ok && (i > 0 || no_max)) ok = seq_push(ps, a, PL_GE_REF, no_max ? id : last);
        if (ok) ok = new_alt(ps, id) != NULL; /* the empty alternative */
        last = id;
    }
    if (ok && n_opt > 0) ok = seq_push(ps, s, PL_GE_REF, last);
    free(prev);
    return ok;
}

static bool parse_uint(parser *ps, uint64_t *out) {
    if (!(*ps->p >= '0' && *ps->p <= '9')) return fail(ps, "expected a number");
    uint64_t v = 0;
    while (*ps->p >= '0' && *ps->p <= '9') {
        v = v * 10 + (uint64_t)(*ps->p++ - '0');
        if (v > 1000000) return fail(ps, "number too large");
    }
    *out = v;
    return true;
}

/* One sequence of rule r: stops at '|', ')', the end, or (not nested) a newline. */
static bool sequence(parser *ps, int32_t r, seq *s, bool nested) {
    size_t last = s->n; /* where the last symbol starts; s->n = none */
    while (*ps->p && !ps->failed) {
        const char c = *ps->p;
        if (c == '"') {
            ps->p++;
            last = s->n;
            while (*ps->p != '"') {
                uint32_t ch;
                if (!one_char(ps, &ch)) return false;
                const int32_t k = add_class(ps, false);
                if (k < 0 || !class_range(ps, k, ch, ch) || !seq_push(ps, s, PL_GE_CHARS, k)) return false;
            }
            ps->p++;
            skip_space(ps, nested);
        } else if (c == '[') {
            ps->p++;
            bool neg = false;
            if (*ps->p == '^') neg = true, ps->p++;
            const int32_t k = add_class(ps, neg);
            if (k < 0) return false;
            while (*ps->p != ']') {
                uint32_t lo, hi;
                if (!one_char(ps, &lo)) return false;
                hi = lo;
                if (ps->p[0] == '-' && ps->p[1] != ']') {
                    ps->p++;
                    if (!one_char(ps, &hi)) return false;
                    if (hi < lo) return fail(ps, "character range with its end before its start");
                }
                if (!class_range(ps, k, lo, hi)) return false;
            }
            ps->p++;
            last = s->n;
            if (!seq_push(ps, s, PL_GE_CHARS, k)) return false;
            skip_space(ps, nested);
        } else if (c == '.') {
            const int32_t k = add_class(ps, true); /* nothing excluded: any character */
            last = s->n;
            if (k < 0 || !seq_push(ps, s, PL_GE_CHARS, k)) return false;
            ps->p++;
            skip_space(ps, nested);
        } else if (is_word(c)) {
            const char *b = ps->p;
            while (is_word(*ps->p)) ps->p++;
            const int32_t id = rule_id(ps, b, (size_t)(ps->p - b));
            last = s->n;
            if (id < 0 || !seq_push(ps, s, PL_GE_REF, id)) return false;
            skip_space(ps, nested);
        } else if (c == '(') {
            ps->p++;
            skip_space(ps, true);
            const int32_t id = new_rule(ps, r);
            if (id < 0 || !alternates(ps, id, true)) return false;
            if (*ps->p != ')') return fail(ps, "expected ')'");
            ps->p++;
            last = s->n;
            if (!seq_push(ps, s, PL_GE_REF, id)) return false;
            skip_space(ps, nested);
        } else if (c == '*' || c == '+' || c == '?') {
            ps->p++;
            skip_space(ps, nested);
            if (!repeat(ps, r, s, last, c == '+' ? 1 : 0, c == '?' ? 1 : 0, c != '?')) return false;
        } else if (c == '{') {
            ps->p++;
            skip_space(ps, nested);
            uint64_t min = 0, max = 0;
            bool no_max = false;
            if (!parse_uint(ps, &min)) return false;
            skip_space(ps, nested);
            if (*ps->p == '}') {
                max = min;
            } else if (*ps->p == ',') {
                ps->p++;
                skip_space(ps, nested);
                if (*ps->p >= '0' && *ps->p <= '9') {
                    if (!parse_uint(ps, &max)) return false;
                    skip_space(ps, nested);
                } else {
                    no_max = true;
                }
                if (*ps->p != '}') return fail(ps, "expected '}'");
            } else {
                return fail(ps, "expected ',' or '}'");
            }
            ps->p++;
            skip_space(ps, nested);
            if (!repeat(ps, r, s, last, min, max, no_max)) return false;
        } else if (c == '<' || c == '!') {
            return fail(ps, "token references (<...>) are not supported");
        } else {
            break;
        }
    }
    return !ps->failed;
}

static bool alternates(parser *ps, int32_t r, bool nested) {
    for (;;) {
        seq *s = new_alt(ps, r);
        if (!s) return false;
        /* the sequence may grow the rule's alternatives (helper rules are
         * other rules, but take the sequence by index to be safe) */
        seq tmp = {0};
        const size_t k = ps->rules[r].n_alt - 1;
        if (!sequence(ps, r, &tmp, nested)) {
            free(tmp.e);
            return false;
        }
        ps->rules[r].alts[k] = tmp;
        (void)s;
        if (*ps->p != '|') return true;
        ps->p++;
        skip_space(ps, true);
    }
}

static bool rule(parser *ps) {
    const char *b = ps->p;
    while (is_word(*ps->p)) ps->p++;
    if (ps->p == b) return fail(ps, "expected a rule name");
    const int32_t id = rule_id(ps, b, (size_t)(ps->p - b));
    if (id < 0) return false;
    skip_space(ps, false);
    if (strncmp(ps->p, "::=", 3) != 0) return fail(ps, "expected '::='");
    if (ps->rules[id].defined) return fail(ps, "rule '%.60s' defined twice", ps->rules[id].name);
    ps->rules[id].defined = true;
    ps->p += 3;
    skip_space(ps, true);
    if (!alternates(ps, id, false)) return false;
    if (*ps->p == '\r') ps->p += ps->p[1] == '\n' ? 2 : 1;
    else if (*ps->p == '\n') ps->p++;
    else if (*ps->p) return fail(ps, "expected the end of the line");
    skip_space(ps, true);
    return true;
}

/* ---- after parsing: flatten, lengths, left recursion ------------------- */

static uint32_t utf8_len(uint32_t cp) { return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4; }

/* The fewest UTF-8 bytes of any member of class c (INF_LEN when empty). */
static uint32_t class_min(const pl_gbnf *g, const pl_gclass *c) {
    if (!c->negated) {
        uint32_t best = INF_LEN;
        for (uint32_t i = 0; i < c->n; i++) {
            const uint32_t l = utf8_len(g->ranges[2 * (c->first + i)]);
            best = l < best ? l : best;
        }
        return best;
    }
    /* the smallest code point outside every range */
    const uint32_t bounds[] = {0, 0x80, 0x800, 0x10000};
    for (int b = 0; b < 4; b++) {
        uint32_t cp = bounds[b], moved = 1;
        while (moved && cp <= 0x10FFFF) { /* step past ranges that cover cp */
            moved = 0;
            for (uint32_t i = 0; i < c->n; i++) {
                const uint32_t lo = g->ranges[2 * (c->first + i)], hi = g->ranges[2 * (c->first + i) + 1];
                if (cp >= lo && cp <= hi) cp = hi + 1, moved = 1;
            }
        }
        if (cp <= 0x10FFFF) return utf8_len(cp);
    }
    return INF_LEN;
}

static uint32_t add_sat(uint32_t a, uint32_t b) { return a + b >= INF_LEN ? INF_LEN : a + b; }

static int cmp_range(const void *x, const void *y) {
    const uint32_t *a = x, *b = y;
    return (a[0] > b[0]) - (a[0] < b[0]);
}

/* Every class as the sorted, merged ranges of the code points it takes
 * (a negated class as its complement in 0..U+10FFFF): the matcher asks
 * each class per stack and per character, and a class of hundreds of
 * ranges, negated, cost a walk over them for every question (a fuzzed
 * grammar spent seconds there); sorted, a question is a binary search. */
static bool normalize_classes(pl_gbnf *g) {
    uint32_t *out = malloc((g->n_ranges + 2 * g->n_cls + 2) * sizeof *out);
    if (!out) return false;
    size_t n_out = 0;
    for (size_t k = 0; k < g->n_cls; k++) {
        pl_gclass *c = &g->cls[k];
        uint32_t *r = c->n ? g->ranges + 2 * (size_t)c->first : NULL; /* no ranges at all: g->ranges may be NULL */
        if (c->n) qsort(r, c->n, 2 * sizeof *r, cmp_range);
        const size_t first = n_out;
        uint32_t next = 0; /* negated: the first code point not yet known to be outside */
        for (uint32_t i = 0; i < c->n;) {
            uint32_t lo = r[2 * i], hi = r[2 * i + 1];
            for (i++; i < c->n && (hi == UINT32_MAX || r[2 * i] <= hi + 1); i++)
                hi = r[2 * i + 1] > hi ? r[2 * i + 1] : hi;
            if (lo > 0x10FFFF) break;
            if (hi > 0x10FFFF) hi = 0x10FFFF;
            if (!c->negated) {
                out[n_out++] = lo, out[n_out++] = hi;
            } else {
                if (lo > next) out[n_out++] = next, out[n_out++] = lo - 1;
                next = hi + 1;
            }
        }
        if (c->negated && next <= 0x10FFFF) out[n_out++] = next, out[n_out++] = 0x10FFFF;
        c->first = (uint32_t)(first / 2);
        c->n = (uint32_t)((n_out - first) / 2);
        c->negated = false;
    }
    free(g->ranges);
    g->ranges = out;
    g->n_ranges = n_out;
    g->cap_ranges = g->n_ranges + 2 * g->n_cls + 2;
    return true;
}

static bool finish(parser *ps, const char *root) {
    pl_gbnf *g = ps->g;
    for (size_t r = 0; r < ps->n_rules; r++)
        if (!ps->rules[r].defined) {
            ps->p = ps->src;
            return fail(ps, "rule '%.60s' is used but never defined", ps->rules[r].name);
        }
    uint64_t v;
    if (!pl_strmap_get(&ps->names, root, strlen(root), &v)) {
        ps->p = ps->src;
        return fail(ps, "no start rule '%.60s'", root);
    }
    g->root = (int32_t)v;
    /* flatten */
    g->n_rules = ps->n_rules;
    g->rule_alt = calloc(ps->n_rules, sizeof *g->rule_alt);
    g->rule_nalt = calloc(ps->n_rules, sizeof *g->rule_nalt);
    g->rule_name = calloc(ps->n_rules, sizeof *g->rule_name);
    g->rule_min = calloc(ps->n_rules, sizeof *g->rule_min);
    size_t n_alt = 0, n_el = 0;
    for (size_t r = 0; r < ps->n_rules; r++) {
        n_alt += ps->rules[r].n_alt;
        for (size_t a = 0; a < ps->rules[r].n_alt; a++) n_el += ps->rules[r].alts[a].n + 1;
    }
    g->alt_start = malloc((n_alt ? n_alt : 1) * sizeof *g->alt_start);
    g->el = malloc((n_el ? n_el : 1) * sizeof *g->el);
    g->rest_min = malloc((n_el ? n_el : 1) * sizeof *g->rest_min);
    if (!g->rule_alt || !g->rule_nalt || !g->rule_name || !g->rule_min || !g->alt_start || !g->el || !g->rest_min)
        return fail(ps, "out of memory");
    g->cap_alt = n_alt;
    g->cap_el = n_el;
    for (size_t r = 0; r < ps->n_rules; r++) {
        trule *t = &ps->rules[r];
        g->rule_name[r] = t->name;
        t->name = NULL;
        g->rule_alt[r] = (uint32_t)g->n_alt;
        g->rule_nalt[r] = (uint32_t)t->n_alt;
        for (size_t a = 0; a < t->n_alt; a++) {
            g->alt_start[g->n_alt++] = (uint32_t)g->n_el;
            if (t->alts[a].n) memcpy(g->el + g->n_el, t->alts[a].e, t->alts[a].n * sizeof *g->el);
            g->n_el += t->alts[a].n;
            g->el[g->n_el++] = (pl_gelem){PL_GE_END, 0};
        }
    }
    if (!normalize_classes(g)) return fail(ps, "out of memory");
    /* the fewest bytes of each rule: a fixpoint from "never" downwards */
    uint32_t *cmin = malloc((g->n_cls ? g->n_cls : 1) * sizeof *cmin);
    if (!cmin) return fail(ps, "out of memory");
    for (size_t c = 0; c < g->n_cls; c++) cmin[c] = class_min(g, &g->cls[c]);
    for (size_t r = 0; r < g->n_rules; r++) g->rule_min[r] = INF_LEN;
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t r = 0; r < g->n_rules; r++) {
            uint32_t best = g->rule_min[r];
            for (uint32_t a = 0; a < g->rule_nalt[r]; a++) {
                uint32_t sum = 0;
                for (const pl_gelem *e = g->el + g->alt_start[g->rule_alt[r] + a]; e->kind != PL_GE_END; e++)
                    sum = add_sat(sum, e->kind == PL_GE_CHARS ? cmin[e->arg] : g->rule_min[e->arg]);
                best = sum < best ? sum : best;
            }
            if (best < g->rule_min[r]) g->rule_min[r] = best, changed = true;
        }
    }
    for (size_t a = 0; a < g->n_alt; a++) {
        size_t end = g->alt_start[a];
        while (g->el[end].kind != PL_GE_END) end++;
        uint32_t acc = 0;
        g->rest_min[end] = 0;
        for (size_t i = end; i-- > g->alt_start[a];) {
            acc = add_sat(acc, g->el[i].kind == PL_GE_CHARS ? cmin[g->el[i].arg] : g->rule_min[g->el[i].arg]);
            g->rest_min[i] = acc;
        }
    }
    free(cmin);
    if (g->rule_min[g->root] >= INF_LEN) {
        ps->p = ps->src;
        return fail(ps, "the start rule '%.60s' matches nothing", root);
    }
    /* left recursion: a rule reachable from itself without consuming a
     * character would send the matcher round forever */
    uint8_t *color = calloc(g->n_rules, 1);
    uint32_t *stack = malloc(g->n_rules * 3 * sizeof *stack); /* (rule, alternative, element) */
    if (!color || !stack) {
        free(color);
        free(stack);
        return fail(ps, "out of memory");
    }
    bool ok = true;
    for (size_t r0 = 0; ok && r0 < g->n_rules; r0++) {
        if (color[r0]) continue;
        /* iterative DFS over the references each rule can start with */
        size_t sp = 0;
        stack[sp++] = (uint32_t)r0, stack[sp++] = 0, stack[sp++] = 0;
        color[r0] = 1;
        while (sp && ok) {
            const uint32_t r = stack[sp - 3];
            uint32_t *a = &stack[sp - 2], *off = &stack[sp - 1];
            int32_t next = -1;
            while (next < 0 && *a < g->rule_nalt[r]) {
                const pl_gelem *e = g->el + g->alt_start[g->rule_alt[r] + *a] + *off;
                if (e->kind == PL_GE_REF) {
                    next = e->arg;
                    /* the element after it is leftmost too when it can match nothing */
                    if (g->rule_min[e->arg] == 0) ++*off;
                    else ++*a, *off = 0;
                } else {
                    ++*a, *off = 0;
                }
            }
            if (next < 0) {
                color[r] = 2;
                sp -= 3;
                continue;
            }
            if (color[next] == 1) {
                ps->p = ps->src;
                ok = fail(ps, "rule '%.60s' is left-recursive", g->rule_name[next]);
            } else if (color[next] == 0) {
                color[next] = 1;
                stack[sp++] = (uint32_t)next, stack[sp++] = 0, stack[sp++] = 0;
            }
        }
    }
    free(color);
    free(stack);
    return ok;
}

bool pl_gbnf_parse(const char *text, const char *root, pl_gbnf *g, char *err, size_t errlen) {
    memset(g, 0, sizeof *g);
    parser ps = {.src = text, .p = text, .g = g, .err = err, .errlen = errlen};
    if (err && errlen) err[0] = 0;
    if (!text) return fail(&ps, "no grammar text");
    if (!pl_strmap_init(&ps.names, 64)) return fail(&ps, "out of memory");
    skip_space(&ps, true);
    if (!*ps.p) fail(&ps, "the grammar is empty");
    while (*ps.p && !ps.failed) rule(&ps);
    if (!ps.failed) finish(&ps, root ? root : "root");
    for (size_t r = 0; r < ps.n_rules; r++) {
        for (size_t a = 0; a < ps.rules[r].n_alt; a++) free(ps.rules[r].alts[a].e);
        free(ps.rules[r].alts);
        free(ps.rules[r].name);
    }
    free(ps.rules);
    pl_strmap_free(&ps.names);
    if (ps.failed) {
        pl_gbnf_free(g);
        return false;
    }
    return true;
}

void pl_gbnf_free(pl_gbnf *g) {
    if (!g) return;
    if (g->rule_name)
        for (size_t r = 0; r < g->n_rules; r++) free(g->rule_name[r]);
    free(g->rule_name);
    free(g->el);
    free(g->alt_start);
    free(g->rule_alt);
    free(g->rule_nalt);
    free(g->rule_defined);
    free(g->ranges);
    free(g->cls);
    free(g->rest_min);
    free(g->rule_min);
    memset(g, 0, sizeof *g);
}

bool pl_gclass_hits(const pl_gbnf *g, const pl_gclass *c, uint32_t lo, uint32_t hi) {
    /* classes are sorted and merged after parsing (normalize_classes): the
     * first range ending at or after lo is the only one that can hold a
     * point of [lo, hi] nearest lo */
    const uint32_t *r = g->ranges + 2 * (size_t)c->first;
    uint32_t a = 0, b = c->n;
    while (a < b) {
        const uint32_t mid = a + (b - a) / 2;
        if (r[2 * mid + 1] < lo) a = mid + 1;
        else b = mid;
    }
    return a < c->n && r[2 * a] <= hi;
}
