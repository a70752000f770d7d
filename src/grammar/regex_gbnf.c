/*
 * regex_gbnf.c -- ECMAScript patterns to GBNF (see regex_gbnf.h).
 *
 * The pattern is parsed into a small tree (code point sets, sequences,
 * alternations, bounded repetitions), simplified so that no repeated part
 * can match the empty string (an unbounded repetition of a nullable part
 * is left recursion to a GBNF engine), and printed as GBNF over the JSON
 * text of the string.  The same tree answers length questions (for
 * minLength/maxLength) and matches strings (for enum values checked
 * against a pattern).
 */
#include "grammar/regex_gbnf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CP_MAX 0x10FFFFu
#define REP_LIMIT 100000L  /* the largest {m,n} count taken */
#define NEST_LIMIT 100     /* group nesting */
#define MATCH_STEPS 2000000L
/* llama.cpp's GBNF parser refuses a repetition whose count times the rules
   made inside the repeated part reaches 2000, and reads a maximum above
   2000 as no maximum: counts stay below REP_SAFE (bigger ones become
   chunks of REP_CHUNK), and a group whose count times the rules it makes
   could reach REP_SAFE becomes a rule of its own (one rule) */
#define REP_SAFE 1000L
#define REP_CHUNK 1000L
#define REP_BIG 400L /* a repetition making more rules is a rule of its own */

/* ------------------------------------------------------------------ */
/* text buffer                                                         */

static int sb_grow(pl_rx_buf *sb, size_t add) {
    if (sb->oom)
        return 0;
    if (sb->n + add + 1 <= sb->cap)
        return 1;
    size_t cap = sb->cap ? sb->cap : 64;
    while (cap < sb->n + add + 1)
        cap *= 2;
    char *s = realloc(sb->s, cap);
    if (!s) {
        sb->oom = 1;
        return 0;
    }
    sb->s = s;
    sb->cap = cap;
    return 1;
}

void pl_rx_buf_putn(pl_rx_buf *sb, const char *s, size_t n) {
    if (!sb_grow(sb, n))
        return;
    memcpy(sb->s + sb->n, s, n);
    sb->n += n;
    sb->s[sb->n] = 0;
}

void pl_rx_buf_puts(pl_rx_buf *sb, const char *s) { pl_rx_buf_putn(sb, s, strlen(s)); }

void pl_rx_buf_putc(pl_rx_buf *sb, char c) { pl_rx_buf_putn(sb, &c, 1); }

void pl_rx_buf_printf(pl_rx_buf *sb, const char *fmt, ...) {
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (k < 0) {
        sb->oom = 1;
        return;
    }
    if ((size_t)k < sizeof tmp) {
        pl_rx_buf_putn(sb, tmp, (size_t)k);
        return;
    }
    if (!sb_grow(sb, (size_t)k))
        return;
    va_start(ap, fmt);
    vsnprintf(sb->s + sb->n, (size_t)k + 1, fmt, ap);
    va_end(ap);
    sb->n += (size_t)k;
}

char *pl_rx_buf_take(pl_rx_buf *sb) {
    char *s = NULL;
    if (!sb->oom) {
        s = sb->s ? sb->s : calloc(1, 1);
        sb->s = NULL;
    }
    pl_rx_buf_free(sb);
    return s;
}

void pl_rx_buf_free(pl_rx_buf *sb) {
    free(sb->s);
    sb->s = NULL;
    sb->n = sb->cap = 0;
    sb->oom = 0;
}

/* ------------------------------------------------------------------ */
/* code point sets                                                     */

void pl_rx_cpset_add(pl_rx_cpset *set, uint32_t lo, uint32_t hi) {
    if (lo > hi || set->oom)
        return;
    /* first range that ends at or after lo-1 */
    size_t i = 0;
    while (i < set->n && set->r[i].hi + 1 < lo)
        i++;
    size_t j = i;
    while (j < set->n && set->r[j].lo <= hi + 1) {
        if (set->r[j].lo < lo)
            lo = set->r[j].lo;
        if (set->r[j].hi > hi)
            hi = set->r[j].hi;
        j++;
    }
    if (j == i) {
        if (set->n == set->cap) {
            size_t cap = set->cap ? set->cap * 2 : 8;
            pl_rx_cprange *r = realloc(set->r, cap * sizeof *r);
            if (!r) {
                set->oom = 1;
                return;
            }
            set->r = r;
            set->cap = cap;
        }
        memmove(set->r + i + 1, set->r + i, (set->n - i) * sizeof *set->r);
        set->n++;
    } else if (j > i + 1) {
        memmove(set->r + i + 1, set->r + j, (set->n - j) * sizeof *set->r);
        set->n -= j - i - 1;
    }
    set->r[i].lo = lo;
    set->r[i].hi = hi;
}

int pl_rx_cpset_has(const pl_rx_cpset *set, uint32_t cp) {
    size_t a = 0, b = set->n;
    while (a < b) {
        size_t m = (a + b) / 2;
        if (cp < set->r[m].lo)
            b = m;
        else if (cp > set->r[m].hi)
            a = m + 1;
        else
            return 1;
    }
    return 0;
}

void pl_rx_cpset_free(pl_rx_cpset *set) {
    free(set->r);
    memset(set, 0, sizeof *set);
}

static void cpset_union(pl_rx_cpset *dst, const pl_rx_cpset *src) {
    for (size_t i = 0; i < src->n; i++)
        pl_rx_cpset_add(dst, src->r[i].lo, src->r[i].hi);
}

/* dst = the code points (but surrogates) that are not in src */
static void cpset_complement(pl_rx_cpset *dst, const pl_rx_cpset *src) {
    uint32_t next = 0;
    for (size_t i = 0; i < src->n; i++) {
        if (src->r[i].lo > next)
            pl_rx_cpset_add(dst, next, src->r[i].lo - 1);
        next = src->r[i].hi + 1;
    }
    if (next <= CP_MAX)
        pl_rx_cpset_add(dst, next, CP_MAX);
}

/* dst = a minus b */
static void cpset_minus(pl_rx_cpset *dst, const pl_rx_cpset *a, const pl_rx_cpset *b) {
    for (size_t i = 0; i < a->n; i++) {
        uint32_t lo = a->r[i].lo, hi = a->r[i].hi;
        for (size_t j = 0; j < b->n && lo <= hi; j++) {
            if (b->r[j].hi < lo || b->r[j].lo > hi)
                continue;
            if (b->r[j].lo > lo)
                pl_rx_cpset_add(dst, lo, b->r[j].lo - 1);
            if (b->r[j].hi >= hi) {
                lo = 1;
                hi = 0;
                break;
            }
            lo = b->r[j].hi + 1;
        }
        if (lo <= hi)
            pl_rx_cpset_add(dst, lo, hi);
    }
}

static void cpset_drop_surrogates(pl_rx_cpset *set) {
    pl_rx_cpset out = {0}, sur = {0};
    pl_rx_cpset_add(&sur, 0xD800, 0xDFFF);
    cpset_minus(&out, set, &sur);
    pl_rx_cpset_free(&sur);
    if (out.oom || set->oom) {
        pl_rx_cpset_free(&out);
        set->oom = 1;
        return;
    }
    pl_rx_cpset_free(set);
    *set = out;
}

/* ------------------------------------------------------------------ */
/* UTF-8                                                               */

int pl_rx_utf8_next(const char *s, size_t len, size_t *i, uint32_t *cp) {
    const unsigned char *u = (const unsigned char *)s;
    size_t k = *i;
    if (k >= len)
        return 0;
    uint32_t c = u[k];
    int n;
    uint32_t min;
    if (c < 0x80) {
        *cp = c;
        *i = k + 1;
        return 1;
    } else if ((c & 0xE0) == 0xC0) {
        n = 1, c &= 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        n = 2, c &= 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        n = 3, c &= 0x07, min = 0x10000;
    } else {
        return 0;
    }
    for (int j = 1; j <= n; j++) {
        if (k + (size_t)j >= len || (u[k + j] & 0xC0) != 0x80)
            return 0;
        c = (c << 6) | (u[k + j] & 0x3F);
    }
    if (c < min || c > CP_MAX || (c >= 0xD800 && c <= 0xDFFF))
        return 0;
    *cp = c;
    *i = k + (size_t)n + 1;
    return 1;
}

int pl_rx_utf8_valid(const char *s, size_t len) {
    size_t i = 0;
    uint32_t cp;
    while (i < len)
        if (!pl_rx_utf8_next(s, len, &i, &cp))
            return 0;
    return 1;
}

static void put_utf8(pl_rx_buf *sb, uint32_t c) {
    char b[4];
    size_t n;
    if (c < 0x80) {
        b[0] = (char)c, n = 1;
    } else if (c < 0x800) {
        b[0] = (char)(0xC0 | (c >> 6)), b[1] = (char)(0x80 | (c & 0x3F)), n = 2;
    } else if (c < 0x10000) {
        b[0] = (char)(0xE0 | (c >> 12)), b[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        b[2] = (char)(0x80 | (c & 0x3F)), n = 3;
    } else {
        b[0] = (char)(0xF0 | (c >> 18)), b[1] = (char)(0x80 | ((c >> 12) & 0x3F));
        b[2] = (char)(0x80 | ((c >> 6) & 0x3F)), b[3] = (char)(0x80 | (c & 0x3F)), n = 4;
    }
    pl_rx_buf_putn(sb, b, n);
}

/* ------------------------------------------------------------------ */
/* GBNF and JSON text                                                  */

void pl_rx_put_literal(pl_rx_buf *sb, const char *text, size_t len) {
    pl_rx_buf_putc(sb, '"');
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        switch (c) {
        case '"': pl_rx_buf_puts(sb, "\\\""); break;
        case '\\': pl_rx_buf_puts(sb, "\\\\"); break;
        case '\n': pl_rx_buf_puts(sb, "\\n"); break;
        case '\r': pl_rx_buf_puts(sb, "\\r"); break;
        case '\t': pl_rx_buf_puts(sb, "\\t"); break;
        default:
            if (c < 0x20 || c == 0x7F)
                pl_rx_buf_printf(sb, "\\x%02X", c);
            else
                pl_rx_buf_putc(sb, (char)c);
        }
    }
    pl_rx_buf_putc(sb, '"');
}

/* the letter of a two-character JSON escape, or 0 */
static char json_short_escape(uint32_t c) {
    switch (c) {
    case '"': return '"';
    case '\\': return '\\';
    case 0x08: return 'b';
    case 0x09: return 't';
    case 0x0A: return 'n';
    case 0x0C: return 'f';
    case 0x0D: return 'r';
    default: return 0;
    }
}

static int json_needs_u_escape(uint32_t c) { return (c < 0x20 && !json_short_escape(c)) || c == 0x7F; }

void pl_rx_put_json_cp(pl_rx_buf *sb, uint32_t c) {
    char e = json_short_escape(c);
    if (e) {
        pl_rx_buf_putc(sb, '\\');
        pl_rx_buf_putc(sb, e);
    } else if (json_needs_u_escape(c)) {
        pl_rx_buf_printf(sb, "\\u%04x", (unsigned)c);
    } else {
        put_utf8(sb, c);
    }
}

void pl_rx_put_json_string(pl_rx_buf *sb, const char *utf8, size_t len) {
    size_t i = 0;
    uint32_t cp;
    while (i < len) {
        if (!pl_rx_utf8_next(utf8, len, &i, &cp)) {
            /* callers check UTF-8 first; keep going byte-wise */
            cp = (unsigned char)utf8[i++];
        }
        pl_rx_put_json_cp(sb, cp);
    }
}

/* one code point inside a GBNF class [...] */
static void class_put_cp(pl_rx_buf *sb, uint32_t c) {
    if (c >= 0x20 && c < 0x7F && !strchr("]\\-^[\"", (int)c))
        pl_rx_buf_putc(sb, (char)c);
    else if (c < 0x80)
        pl_rx_buf_printf(sb, "\\x%02X", (unsigned)c);
    else if (c <= 0xFFFF)
        pl_rx_buf_printf(sb, "\\u%04X", (unsigned)c);
    else
        put_utf8(sb, c);
}

static void class_put_ranges(pl_rx_buf *sb, const pl_rx_cpset *set, int negate) {
    pl_rx_buf_putc(sb, '[');
    if (negate)
        pl_rx_buf_putc(sb, '^');
    for (size_t i = 0; i < set->n; i++) {
        class_put_cp(sb, set->r[i].lo);
        if (set->r[i].hi != set->r[i].lo) {
            if (set->r[i].hi > set->r[i].lo + 1)
                pl_rx_buf_putc(sb, '-');
            class_put_cp(sb, set->r[i].hi);
        }
    }
    pl_rx_buf_putc(sb, ']');
}

/* a class for the set, plain or negated, whichever is shorter */
static void class_put_best(pl_rx_buf *sb, const pl_rx_cpset *set) {
    pl_rx_cpset comp = {0}, tmp = {0};
    cpset_complement(&tmp, set);
    pl_rx_cpset sur = {0};
    pl_rx_cpset_add(&sur, 0xD800, 0xDFFF);
    cpset_minus(&comp, &tmp, &sur); /* surrogates never occur: leave them out */
    pl_rx_cpset_free(&sur);
    pl_rx_cpset_free(&tmp);
    if (comp.n < set->n && comp.n > 0)
        class_put_ranges(sb, &comp, 1);
    else
        class_put_ranges(sb, set, 0);
    pl_rx_cpset_free(&comp);
}

int pl_rx_put_json_charset(pl_rx_buf *sb, const pl_rx_cpset *set) {
    pl_rx_cpset raw = {0}, special = {0};
    /* the code points written as themselves */
    pl_rx_cpset_add(&special, 0x00, 0x1F);
    pl_rx_cpset_add(&special, '"', '"');
    pl_rx_cpset_add(&special, '\\', '\\');
    pl_rx_cpset_add(&special, 0x7F, 0x7F);
    pl_rx_cpset_add(&special, 0xD800, 0xDFFF);
    cpset_minus(&raw, set, &special);
    pl_rx_cpset_free(&special);

    char shorts[8];
    int nshort = 0;
    const uint32_t short_cps[] = {'"', '\\', 0x08, 0x0C, 0x0A, 0x0D, 0x09};
    for (size_t k = 0; k < sizeof short_cps / sizeof *short_cps; k++)
        if (pl_rx_cpset_has(set, short_cps[k]))
            shorts[nshort++] = json_short_escape(short_cps[k]);
    /* \u00xx escapes grouped by their third hex digit: 0, 1 and 7 */
    char low[3][17];
    int nlow[3] = {0, 0, 0};
    for (uint32_t c = 0; c < 0x80; c++) {
        if (!json_needs_u_escape(c) || !pl_rx_cpset_has(set, c))
            continue;
        int g = c < 0x10 ? 0 : c < 0x20 ? 1 : 2;
        low[g][nlow[g]++] = "0123456789abcdef"[c & 15];
    }
    int nalt = (raw.n > 0) + (nshort > 0) + (nlow[0] > 0) + (nlow[1] > 0) + (nlow[2] > 0);
    int shape = nalt > 1 ? 2 : 0;
    int first = 1;
#define SEP()                        \
    do {                             \
        if (!first)                  \
            pl_rx_buf_puts(sb, " | ");   \
        first = 0;                   \
    } while (0)
    if (raw.n > 0) {
        SEP();
        if (raw.n == 1 && raw.r[0].lo == raw.r[0].hi) {
            pl_rx_buf t = {0};
            put_utf8(&t, raw.r[0].lo);
            pl_rx_put_literal(sb, t.s ? t.s : "", t.n);
            pl_rx_buf_free(&t);
        } else {
            class_put_best(sb, &raw);
        }
    }
    if (nshort == 1) {
        SEP();
        char t[2] = {'\\', shorts[0]};
        pl_rx_put_literal(sb, t, 2);
    } else if (nshort > 1) {
        SEP();
        pl_rx_buf_puts(sb, "\"\\\\\" [");
        for (int k = 0; k < nshort; k++)
            class_put_cp(sb, (unsigned char)shorts[k]);
        pl_rx_buf_putc(sb, ']');
        if (nalt == 1)
            shape = 1;
    }
    for (int g = 0; g < 3; g++) {
        if (!nlow[g])
            continue;
        SEP();
        const char hi = "017"[g];
        if (nlow[g] == 1) {
            char t[6] = {'\\', 'u', '0', '0', hi, low[g][0]};
            pl_rx_put_literal(sb, t, 6);
        } else {
            pl_rx_buf_printf(sb, "\"\\\\u00%c\" [", hi);
            for (int k = 0; k < nlow[g]; k++) {
                /* runs of consecutive hex digits as ranges */
                int e = k;
                while (e + 1 < nlow[g] && low[g][e + 1] == low[g][e] + 1)
                    e++;
                pl_rx_buf_putc(sb, low[g][k]);
                if (e > k) {
                    if (e > k + 1)
                        pl_rx_buf_putc(sb, '-');
                    pl_rx_buf_putc(sb, low[g][e]);
                }
                k = e;
            }
            pl_rx_buf_putc(sb, ']');
            if (nalt == 1)
                shape = 1;
        }
    }
#undef SEP
    pl_rx_cpset_free(&raw);
    return shape;
}

/* ------------------------------------------------------------------ */
/* the regex tree                                                      */

enum { RX_NEVER, RX_EMPTY, RX_SET, RX_SEQ, RX_ALT, RX_REP };

typedef struct rx {
    int kind;
    pl_rx_cpset set;      /* RX_SET */
    struct rx **kid;   /* RX_SEQ, RX_ALT; RX_REP: kid[0] */
    size_t nkid, capkid;
    long min, max;     /* RX_REP; max -1: unbounded */
} rx;

struct pl_regex {
    rx *root;
};

static rx *rx_new(int kind) {
    rx *n = calloc(1, sizeof *n);
    if (n)
        n->kind = kind;
    return n;
}

static void rx_free(rx *n) {
    if (!n)
        return;
    for (size_t i = 0; i < n->nkid; i++)
        rx_free(n->kid[i]);
    free(n->kid);
    pl_rx_cpset_free(&n->set);
    free(n);
}

static int rx_push(rx *n, rx *k) {
    if (!k)
        return 0;
    if (n->nkid == n->capkid) {
        size_t cap = n->capkid ? n->capkid * 2 : 4;
        rx **p = realloc(n->kid, cap * sizeof *p);
        if (!p) {
            rx_free(k);
            return 0;
        }
        n->kid = p;
        n->capkid = cap;
    }
    n->kid[n->nkid++] = k;
    return 1;
}

static rx *rx_rep(rx *k, long min, long max) {
    rx *n = rx_new(RX_REP);
    if (!n || !rx_push(n, k)) {
        if (n)
            rx_free(n);
        else
            rx_free(k);
        return NULL;
    }
    n->min = min;
    n->max = max;
    return n;
}

static rx *rx_copy(const rx *n) {
    rx *c = rx_new(n->kind);
    if (!c)
        return NULL;
    c->min = n->min;
    c->max = n->max;
    cpset_union(&c->set, &n->set);
    if (c->set.oom) {
        rx_free(c);
        return NULL;
    }
    for (size_t i = 0; i < n->nkid; i++) {
        if (!rx_push(c, rx_copy(n->kid[i]))) {
            rx_free(c);
            return NULL;
        }
    }
    return c;
}

/* ---- parsing ---- */

typedef struct {
    uint32_t *cp;
    size_t n, i;
    int depth;
    char *err;
    size_t errlen;
    int failed;
} rxp;

static void rxp_fail(rxp *p, const char *fmt, ...) {
    if (p->failed)
        return;
    p->failed = 1;
    if (p->err && p->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->err, p->errlen, fmt, ap);
        va_end(ap);
    }
}

static int peek(const rxp *p, size_t off) { return p->i + off < p->n ? (int)p->cp[p->i + off] : -1; }

static int hexval(int c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static void set_digit(pl_rx_cpset *s) { pl_rx_cpset_add(s, '0', '9'); }

static void set_word(pl_rx_cpset *s) {
    pl_rx_cpset_add(s, '0', '9');
    pl_rx_cpset_add(s, 'A', 'Z');
    pl_rx_cpset_add(s, '_', '_');
    pl_rx_cpset_add(s, 'a', 'z');
}

static void set_space(pl_rx_cpset *s) {
    pl_rx_cpset_add(s, 0x09, 0x0D);
    pl_rx_cpset_add(s, 0x20, 0x20);
    pl_rx_cpset_add(s, 0xA0, 0xA0);
    pl_rx_cpset_add(s, 0x1680, 0x1680);
    pl_rx_cpset_add(s, 0x2000, 0x200A);
    pl_rx_cpset_add(s, 0x2028, 0x2029);
    pl_rx_cpset_add(s, 0x202F, 0x202F);
    pl_rx_cpset_add(s, 0x205F, 0x205F);
    pl_rx_cpset_add(s, 0x3000, 0x3000);
    pl_rx_cpset_add(s, 0xFEFF, 0xFEFF);
}

/* "{m}", "{m,}", "{m,n}" at p->i?  Fills min/max and the length. */
static int brace_quant(const rxp *p, long *min, long *max, size_t *len) {
    size_t k = p->i;
    if (k >= p->n || p->cp[k] != '{')
        return 0;
    k++;
    long a = -1, b = -1;
    int comma = 0;
    while (k < p->n && p->cp[k] >= '0' && p->cp[k] <= '9') {
        a = (a < 0 ? 0 : a) * 10 + (long)(p->cp[k] - '0');
        if (a > 1000000000L)
            a = 1000000000L;
        k++;
    }
    if (a < 0)
        return 0;
    if (k < p->n && p->cp[k] == ',') {
        comma = 1;
        k++;
        while (k < p->n && p->cp[k] >= '0' && p->cp[k] <= '9') {
            b = (b < 0 ? 0 : b) * 10 + (long)(p->cp[k] - '0');
            if (b > 1000000000L)
                b = 1000000000L;
            k++;
        }
    }
    if (k >= p->n || p->cp[k] != '}')
        return 0;
    *min = a;
    *max = comma ? b : a;
    *len = k + 1 - p->i;
    return 1;
}

/* An escape after the backslash at p->i-1.  Sets either *cp (returns 1)
   or the class *set (returns 2); 0 on failure. */
static int parse_escape(rxp *p, int in_class, uint32_t *cp, pl_rx_cpset *set) {
    int c = peek(p, 0);
    if (c < 0) {
        rxp_fail(p, "pattern ends with a lone backslash");
        return 0;
    }
    p->i++;
    switch (c) {
    case 'd': set_digit(set); return 2;
    case 'w': set_word(set); return 2;
    case 's': set_space(set); return 2;
    case 'D':
    case 'W':
    case 'S': {
        pl_rx_cpset t = {0};
        if (c == 'D')
            set_digit(&t);
        else if (c == 'W')
            set_word(&t);
        else
            set_space(&t);
        cpset_complement(set, &t);
        pl_rx_cpset_free(&t);
        return 2;
    }
    case 't': *cp = 0x09; return 1;
    case 'n': *cp = 0x0A; return 1;
    case 'r': *cp = 0x0D; return 1;
    case 'v': *cp = 0x0B; return 1;
    case 'f': *cp = 0x0C; return 1;
    case '0':
        if (peek(p, 0) >= '0' && peek(p, 0) <= '9') {
            rxp_fail(p, "octal escapes are not supported in a pattern");
            return 0;
        }
        *cp = 0;
        return 1;
    case 'b':
        if (in_class) {
            *cp = 0x08;
            return 1;
        }
        rxp_fail(p, "the word-boundary assertion \\b is not supported in a pattern");
        return 0;
    case 'B':
        rxp_fail(p, "the assertion \\B is not supported in a pattern");
        return 0;
    case 'x': {
        int h1 = hexval(peek(p, 0)), h2 = hexval(peek(p, 1));
        if (h1 < 0 || h2 < 0) {
            rxp_fail(p, "malformed \\x escape in pattern");
            return 0;
        }
        p->i += 2;
        *cp = (uint32_t)(h1 * 16 + h2);
        return 1;
    }
    case 'u': {
        if (peek(p, 0) == '{') {
            rxp_fail(p, "\\u{...} escapes (unicode mode) are not supported in a pattern");
            return 0;
        }
        uint32_t v = 0;
        for (int k = 0; k < 4; k++) {
            int h = hexval(peek(p, (size_t)k));
            if (h < 0) {
                rxp_fail(p, "malformed \\u escape in pattern");
                return 0;
            }
            v = v * 16 + (uint32_t)h;
        }
        p->i += 4;
        if (v >= 0xD800 && v <= 0xDBFF && peek(p, 0) == '\\' && peek(p, 1) == 'u') {
            uint32_t w = 0;
            int ok = 1;
            for (int k = 0; k < 4; k++) {
                int h = hexval(peek(p, (size_t)k + 2));
                if (h < 0)
                    ok = 0;
                else
                    w = w * 16 + (uint32_t)h;
            }
            if (ok && w >= 0xDC00 && w <= 0xDFFF) {
                p->i += 6;
                v = 0x10000 + ((v - 0xD800) << 10) + (w - 0xDC00);
            }
        }
        if (v >= 0xD800 && v <= 0xDFFF) {
            rxp_fail(p, "a lone surrogate \\u%04X cannot occur in a JSON string", (unsigned)v);
            return 0;
        }
        *cp = v;
        return 1;
    }
    case 'c': {
        int l = peek(p, 0);
        if (!((l >= 'a' && l <= 'z') || (l >= 'A' && l <= 'Z'))) {
            rxp_fail(p, "malformed \\c escape in pattern");
            return 0;
        }
        p->i++;
        *cp = (uint32_t)(l % 32);
        return 1;
    }
    case 'k':
        rxp_fail(p, "backreferences (\\k<name>) are not supported in a pattern");
        return 0;
    case 'p':
    case 'P':
        rxp_fail(p, "unicode property escapes (\\%c{...}) are not supported in a pattern", c);
        return 0;
    default:
        break;
    }
    if (c >= '1' && c <= '9') {
        rxp_fail(p, in_class ? "octal escapes are not supported in a pattern"
                             : "backreferences (\\%c) are not supported in a pattern",
                 c);
        return 0;
    }
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
        rxp_fail(p, "unknown escape \\%c in pattern", c);
        return 0;
    }
    *cp = (uint32_t)c; /* escaped punctuation (or any other character) is itself */
    return 1;
}

static rx *parse_class(rxp *p) {
    /* p->i is just past '[' */
    int negate = 0;
    if (peek(p, 0) == '^') {
        negate = 1;
        p->i++;
    }
    pl_rx_cpset set = {0};
    for (;;) {
        int c = peek(p, 0);
        if (c < 0) {
            rxp_fail(p, "unterminated character class in pattern");
            pl_rx_cpset_free(&set);
            return NULL;
        }
        if (c == ']') {
            p->i++;
            break;
        }
        uint32_t a = 0;
        pl_rx_cpset sa = {0};
        int ka;
        p->i++;
        if (c == '\\') {
            ka = parse_escape(p, 1, &a, &sa);
            if (!ka) {
                pl_rx_cpset_free(&set);
                pl_rx_cpset_free(&sa);
                return NULL;
            }
        } else {
            ka = 1;
            a = (uint32_t)c;
        }
        if (ka == 1 && peek(p, 0) == '-' && peek(p, 1) >= 0 && peek(p, 1) != ']') {
            p->i++;
            int d = peek(p, 0);
            p->i++;
            uint32_t b = 0;
            pl_rx_cpset sb2 = {0};
            int kb = 1;
            if (d == '\\') {
                kb = parse_escape(p, 1, &b, &sb2);
                if (!kb) {
                    pl_rx_cpset_free(&set);
                    pl_rx_cpset_free(&sb2);
                    return NULL;
                }
            } else {
                b = (uint32_t)d;
            }
            if (kb == 2) {
                /* [a-\d]: the '-' is itself (web-compatibility rule) */
                pl_rx_cpset_add(&set, a, a);
                pl_rx_cpset_add(&set, '-', '-');
                cpset_union(&set, &sb2);
            } else if (b < a) {
                rxp_fail(p, "character class range out of order in pattern");
                pl_rx_cpset_free(&set);
                return NULL;
            } else {
                pl_rx_cpset_add(&set, a, b);
            }
            pl_rx_cpset_free(&sb2);
        } else if (ka == 1) {
            pl_rx_cpset_add(&set, a, a);
        } else {
            cpset_union(&set, &sa);
        }
        pl_rx_cpset_free(&sa);
    }
    rx *n = rx_new(RX_SET);
    if (!n) {
        pl_rx_cpset_free(&set);
        return NULL;
    }
    if (negate)
        cpset_complement(&n->set, &set);
    else
        cpset_union(&n->set, &set);
    pl_rx_cpset_free(&set);
    cpset_drop_surrogates(&n->set);
    return n;
}

static rx *any_char_star(void) {
    rx *s = rx_new(RX_SET);
    if (!s)
        return NULL;
    pl_rx_cpset_add(&s->set, 0, 0xD7FF);
    pl_rx_cpset_add(&s->set, 0xE000, CP_MAX);
    return rx_rep(s, 0, -1);
}

static rx *parse_alt(rxp *p, int top);

static rx *parse_atom(rxp *p) {
    int c = peek(p, 0);
    if (c == '(') {
        p->i++;
        if (peek(p, 0) == '?') {
            int d = peek(p, 1);
            if (d == ':') {
                p->i += 2;
            } else if (d == '=' || d == '!') {
                rxp_fail(p, "lookahead assertions are not supported in a pattern");
                return NULL;
            } else if (d == '<' && (peek(p, 2) == '=' || peek(p, 2) == '!')) {
                rxp_fail(p, "lookbehind assertions are not supported in a pattern");
                return NULL;
            } else if (d == '<') {
                p->i += 2;
                while (peek(p, 0) >= 0 && peek(p, 0) != '>')
                    p->i++;
                if (peek(p, 0) != '>') {
                    rxp_fail(p, "unterminated group name in pattern");
                    return NULL;
                }
                p->i++;
            } else {
                rxp_fail(p, "unsupported group syntax '(?%c' in pattern", d < 0 ? ' ' : d);
                return NULL;
            }
        }
        if (++p->depth > NEST_LIMIT) {
            rxp_fail(p, "pattern nests groups too deeply");
            return NULL;
        }
        rx *g = parse_alt(p, 0);
        p->depth--;
        if (!g)
            return NULL;
        if (peek(p, 0) != ')') {
            rxp_fail(p, "missing ')' in pattern");
            rx_free(g);
            return NULL;
        }
        p->i++;
        return g;
    }
    if (c == '[') {
        p->i++;
        return parse_class(p);
    }
    if (c == '*' || c == '+' || c == '?') {
        rxp_fail(p, "nothing to repeat before '%c' in pattern", c);
        return NULL;
    }
    if (c == '{') {
        long a, b;
        size_t len;
        if (brace_quant(p, &a, &b, &len)) {
            rxp_fail(p, "nothing to repeat before '{' in pattern");
            return NULL;
        }
    }
    rx *n = rx_new(RX_SET);
    if (!n)
        return NULL;
    p->i++;
    if (c == '.') {
        pl_rx_cpset_add(&n->set, 0, 0x09);
        pl_rx_cpset_add(&n->set, 0x0B, 0x0C);
        pl_rx_cpset_add(&n->set, 0x0E, 0x2027);
        pl_rx_cpset_add(&n->set, 0x202A, CP_MAX);
        cpset_drop_surrogates(&n->set);
    } else if (c == '\\') {
        uint32_t cp = 0;
        int k = parse_escape(p, 0, &cp, &n->set);
        if (!k) {
            rx_free(n);
            return NULL;
        }
        if (k == 1)
            pl_rx_cpset_add(&n->set, cp, cp);
        else
            cpset_drop_surrogates(&n->set);
    } else {
        pl_rx_cpset_add(&n->set, (uint32_t)c, (uint32_t)c);
    }
    if (n->set.oom) {
        rx_free(n);
        return NULL;
    }
    return n;
}

static rx *parse_seq(rxp *p, int top) {
    rx *seq = rx_new(RX_SEQ);
    if (!seq)
        return NULL;
    int anchor_start = 0, anchor_end = 0;
    if (top && peek(p, 0) == '^') {
        anchor_start = 1;
        p->i++;
    }
    for (;;) {
        int c = peek(p, 0);
        if (c < 0 || c == '|' || c == ')')
            break;
        if (c == '$') {
            if (top && (peek(p, 1) < 0 || peek(p, 1) == '|')) {
                anchor_end = 1;
                p->i++;
                break;
            }
            rxp_fail(p, "an anchor ('$') inside the pattern is not supported: only at the end");
            rx_free(seq);
            return NULL;
        }
        if (c == '^') {
            rxp_fail(p, "an anchor ('^') inside the pattern is not supported: only at the start");
            rx_free(seq);
            return NULL;
        }
        rx *a = parse_atom(p);
        if (!a) {
            rx_free(seq);
            return NULL;
        }
        /* one quantifier */
        long min = -2, max = -2;
        size_t len;
        c = peek(p, 0);
        if (c == '*')
            min = 0, max = -1, p->i++;
        else if (c == '+')
            min = 1, max = -1, p->i++;
        else if (c == '?')
            min = 0, max = 1, p->i++;
        else if (brace_quant(p, &min, &max, &len)) {
            p->i += len;
            if (max >= 0 && max < min) {
                rxp_fail(p, "numbers out of order in {m,n} quantifier in pattern");
                rx_free(a);
                rx_free(seq);
                return NULL;
            }
            if (min > REP_LIMIT || max > REP_LIMIT) {
                rxp_fail(p, "repetition count above %ld in pattern", REP_LIMIT);
                rx_free(a);
                rx_free(seq);
                return NULL;
            }
        }
        if (min != -2) {
            if (peek(p, 0) == '?') {
                rxp_fail(p, "lazy quantifiers ('%c?') are not supported in a pattern", c);
                rx_free(a);
                rx_free(seq);
                return NULL;
            }
            long m2, x2;
            if (peek(p, 0) == '*' || peek(p, 0) == '+' || brace_quant(p, &m2, &x2, &len)) {
                rxp_fail(p, "nothing to repeat (a quantifier after a quantifier) in pattern");
                rx_free(a);
                rx_free(seq);
                return NULL;
            }
            a = rx_rep(a, min, max);
        }
        if (!rx_push(seq, a)) {
            rx_free(seq);
            return NULL;
        }
    }
    if (top && (!anchor_start || !anchor_end)) {
        /* search semantics: anything may come before / after */
        rx *w = rx_new(RX_SEQ);
        if (!w) {
            rx_free(seq);
            return NULL;
        }
        if ((!anchor_start && !rx_push(w, any_char_star())) || !rx_push(w, seq) ||
            (!anchor_end && !rx_push(w, any_char_star()))) {
            rx_free(w);
            return NULL;
        }
        seq = w;
    }
    return seq;
}

static rx *parse_alt(rxp *p, int top) {
    rx *alt = rx_new(RX_ALT);
    if (!alt)
        return NULL;
    for (;;) {
        rx *s = parse_seq(p, top);
        if (!s || !rx_push(alt, s)) {
            rx_free(alt);
            return NULL;
        }
        if (peek(p, 0) != '|')
            break;
        p->i++;
    }
    return alt;
}

/* ---- simplification ---- */

static int rx_nullable(const rx *n) {
    switch (n->kind) {
    case RX_EMPTY: return 1;
    case RX_SEQ:
        for (size_t i = 0; i < n->nkid; i++)
            if (!rx_nullable(n->kid[i]))
                return 0;
        return 1;
    case RX_ALT:
        for (size_t i = 0; i < n->nkid; i++)
            if (rx_nullable(n->kid[i]))
                return 1;
        return 0;
    case RX_REP: return n->min == 0 || rx_nullable(n->kid[0]);
    default: return 0;
    }
}

static rx *simplify(rx *n);

/* The language of a simplified node without the empty string. */
static rx *nonnull(const rx *n) {
    if (!rx_nullable(n))
        return rx_copy(n);
    switch (n->kind) {
    case RX_ALT: {
        rx *a = rx_new(RX_ALT);
        if (!a)
            return NULL;
        for (size_t i = 0; i < n->nkid; i++)
            if (!rx_push(a, nonnull(n->kid[i]))) {
                rx_free(a);
                return NULL;
            }
        return simplify(a);
    }
    case RX_SEQ: {
        /* the first part that is not empty is part i: the ones before it
           matched the empty string */
        rx *a = rx_new(RX_ALT);
        if (!a)
            return NULL;
        for (size_t i = 0; i < n->nkid; i++) {
            rx *s = rx_new(RX_SEQ);
            if (!s || !rx_push(a, s)) {
                rx_free(a);
                return NULL;
            }
            if (!rx_push(s, nonnull(n->kid[i]))) {
                rx_free(a);
                return NULL;
            }
            for (size_t j = i + 1; j < n->nkid; j++)
                if (!rx_push(s, rx_copy(n->kid[j]))) {
                    rx_free(a);
                    return NULL;
                }
        }
        return simplify(a);
    }
    case RX_REP: {
        /* simplified: the repeated part is not nullable, so min is 0 */
        rx *c = rx_copy(n);
        if (c)
            c->min = 1;
        return simplify(c);
    }
    default: /* RX_EMPTY */
        return rx_new(RX_NEVER);
    }
}

static rx *replace(rx *old, rx *with) {
    rx_free(old);
    return with;
}

/* Simplify (taking the node): no EMPTY/NEVER inside, flat sequences and
   alternations, single-character alternatives merged into one set, and
   no repetition of a nullable part. */
static rx *simplify(rx *n) {
    if (!n)
        return NULL;
    switch (n->kind) {
    case RX_SET:
        if (n->set.n == 0)
            return replace(n, rx_new(RX_NEVER));
        return n;
    case RX_SEQ: {
        size_t w = 0;
        int never = 0, fail = 0;
        rx **kids = n->kid;
        size_t nk = n->nkid;
        n->kid = NULL;
        n->nkid = n->capkid = 0;
        for (size_t i = 0; i < nk; i++) {
            rx *k = simplify(kids[i]);
            kids[i] = NULL;
            if (!k) {
                fail = 1;
                continue;
            }
            if (k->kind == RX_EMPTY) {
                rx_free(k);
            } else if (k->kind == RX_NEVER) {
                never = 1;
                rx_free(k);
            } else if (k->kind == RX_SEQ) {
                for (size_t j = 0; j < k->nkid; j++) {
                    if (!rx_push(n, k->kid[j]))
                        fail = 1;
                    k->kid[j] = NULL;
                }
                k->nkid = 0;
                rx_free(k);
            } else if (!rx_push(n, k)) {
                fail = 1;
            }
        }
        (void)w;
        free(kids);
        if (fail) {
            rx_free(n);
            return NULL;
        }
        if (never)
            return replace(n, rx_new(RX_NEVER));
        if (n->nkid == 0)
            return replace(n, rx_new(RX_EMPTY));
        if (n->nkid == 1) {
            rx *k = n->kid[0];
            n->nkid = 0;
            rx_free(n);
            return k;
        }
        return n;
    }
    case RX_ALT: {
        rx **kids = n->kid;
        size_t nk = n->nkid;
        n->kid = NULL;
        n->nkid = n->capkid = 0;
        int empty = 0, fail = 0;
        rx *chars = NULL; /* the single-character alternatives, merged */
        for (size_t i = 0; i < nk; i++) {
            rx *k = simplify(kids[i]);
            kids[i] = NULL;
            if (!k) {
                fail = 1;
                continue;
            }
            if (k->kind == RX_NEVER) {
                rx_free(k);
            } else if (k->kind == RX_EMPTY) {
                empty = 1;
                rx_free(k);
            } else if (k->kind == RX_ALT) {
                for (size_t j = 0; j < k->nkid; j++) {
                    rx *kk = k->kid[j];
                    k->kid[j] = NULL;
                    if (kk->kind == RX_SET && chars) {
                        cpset_union(&chars->set, &kk->set);
                        rx_free(kk);
                    } else {
                        if (kk->kind == RX_SET)
                            chars = kk;
                        if (!rx_push(n, kk))
                            fail = 1;
                    }
                }
                k->nkid = 0;
                rx_free(k);
            } else if (k->kind == RX_SET && chars) {
                cpset_union(&chars->set, &k->set);
                rx_free(k);
            } else {
                if (k->kind == RX_SET)
                    chars = k;
                if (!rx_push(n, k))
                    fail = 1;
            }
        }
        free(kids);
        if (fail || (chars && chars->set.oom)) {
            rx_free(n);
            return NULL;
        }
        rx *r;
        if (n->nkid == 0) {
            r = rx_new(empty ? RX_EMPTY : RX_NEVER);
            rx_free(n);
        } else if (n->nkid == 1) {
            r = n->kid[0];
            n->nkid = 0;
            rx_free(n);
        } else {
            r = n;
        }
        if (r && empty && r->kind != RX_EMPTY)
            return simplify(rx_rep(r, 0, 1));
        return r;
    }
    case RX_REP: {
        rx *k = simplify(n->kid[0]);
        n->kid[0] = k;
        if (!k) {
            n->nkid = 0;
            rx_free(n);
            return NULL;
        }
        if (n->max == 0 || k->kind == RX_EMPTY)
            return replace(n, rx_new(RX_EMPTY));
        if (k->kind == RX_NEVER)
            return replace(n, rx_new(n->min == 0 ? RX_EMPTY : RX_NEVER));
        if (rx_nullable(k)) {
            /* (x?){m,n} = (x minus "")){0,n}: no nullable part repeated */
            rx *nn = nonnull(k);
            if (!nn) {
                rx_free(n);
                return NULL;
            }
            if (nn->kind == RX_NEVER) {
                rx_free(nn);
                return replace(n, rx_new(RX_EMPTY));
            }
            rx_free(k);
            n->kid[0] = nn;
            n->min = 0;
        }
        if (n->min == 1 && n->max == 1) {
            rx *r = n->kid[0];
            n->nkid = 0;
            rx_free(n);
            return r;
        }
        return n;
    }
    default:
        return n;
    }
}

/* ---- lengths ---- */

#define LEN_CAP 1000000000L

static long len_add(long a, long b) { return (a < 0 || b < 0) ? -1 : (a + b > LEN_CAP ? LEN_CAP : a + b); }
static long len_mul(long a, long k) {
    if (a < 0 || k < 0)
        return (a == 0 || k == 0) ? 0 : -1;
    if (k && a > LEN_CAP / k)
        return LEN_CAP;
    return a * k;
}

static void rx_len(const rx *n, long *lo, long *hi) {
    switch (n->kind) {
    case RX_EMPTY: *lo = 0, *hi = 0; return;
    case RX_NEVER: *lo = 0, *hi = 0; return;
    case RX_SET: *lo = 1, *hi = 1; return;
    case RX_SEQ: {
        long a = 0, b = 0;
        for (size_t i = 0; i < n->nkid; i++) {
            long x, y;
            rx_len(n->kid[i], &x, &y);
            a = len_add(a, x);
            b = len_add(b, y);
        }
        *lo = a, *hi = b;
        return;
    }
    case RX_ALT: {
        long a = -1, b = 0;
        for (size_t i = 0; i < n->nkid; i++) {
            long x, y;
            rx_len(n->kid[i], &x, &y);
            if (a < 0 || x < a)
                a = x;
            if (b >= 0 && (y < 0 || y > b))
                b = y;
        }
        *lo = a < 0 ? 0 : a, *hi = b;
        return;
    }
    case RX_REP: {
        long x, y;
        rx_len(n->kid[0], &x, &y);
        *lo = len_mul(x, n->min);
        *hi = n->max < 0 ? (y == 0 ? 0 : -1) : len_mul(y, n->max);
        return;
    }
    }
}

void pl_regex_length(const pl_regex *re, long *min, long *max) { rx_len(re->root, min, max); }

/* ---- limiting lengths ---- */

static long ceil_div(long a, long b) { return a <= 0 ? 0 : (a + b - 1) / b; }

/* Narrow n (in place) to a subset whose strings have at most b code
   points; 0 when even its shortest string is longer. */
static int narrow_max(rx *n, long b) {
    long lo, hi;
    rx_len(n, &lo, &hi);
    if (lo > b)
        return 0;
    if (hi >= 0 && hi <= b)
        return 1;
    switch (n->kind) {
    case RX_REP: {
        rx *k = n->kid[0];
        long klo, khi;
        rx_len(k, &klo, &khi);
        if (klo != khi) {
            /* each round gets an equal share */
            if (!narrow_max(k, b / (n->min > 1 ? n->min : 1)))
                return 0;
            rx_len(k, &klo, &khi);
        }
        long most = b / khi; /* khi >= 1: the part is not nullable */
        if (n->max < 0 || most < n->max)
            n->max = most;
        return n->max >= n->min;
    }
    case RX_ALT: {
        size_t w = 0;
        for (size_t i = 0; i < n->nkid; i++) {
            if (narrow_max(n->kid[i], b))
                n->kid[w++] = n->kid[i];
            else
                rx_free(n->kid[i]);
        }
        n->nkid = w;
        return w > 0;
    }
    case RX_SEQ: {
        /* the room above the minimum, shared out evenly (a part that
           needs less than its share leaves the rest to the others) */
        long *extra = calloc(n->nkid, sizeof *extra), *give = calloc(n->nkid, sizeof *give);
        int ok = extra && give;
        long base = 0, pool, left = 0;
        for (size_t i = 0; ok && i < n->nkid; i++) {
            long a, z;
            rx_len(n->kid[i], &a, &z);
            base += a;
            extra[i] = z < 0 ? -1 : z - a;
            if (extra[i])
                left++;
            give[i] = -2; /* undecided */
        }
        pool = b - base;
        for (int changed = 1; ok && changed && left;) {
            changed = 0;
            long share = pool / left;
            for (size_t i = 0; i < n->nkid; i++) {
                if (give[i] != -2 || !extra[i])
                    continue;
                if (extra[i] > 0 && extra[i] <= share) {
                    give[i] = extra[i];
                    pool -= extra[i];
                    left--;
                    changed = 1;
                }
            }
        }
        for (size_t i = 0; ok && i < n->nkid; i++) {
            if (give[i] != -2 || !extra[i])
                continue;
            long share = pool / left;
            left--;
            pool -= share;
            long a, z;
            rx_len(n->kid[i], &a, &z);
            if (!narrow_max(n->kid[i], a + share))
                ok = 0;
        }
        free(extra);
        free(give);
        return ok;
    }
    default:
        return 1;
    }
}

/* Narrow n (in place) so that its strings have at least `need` code
   points, keeping its maximum; 0 when that cannot be done. */
static int raise_min(rx *n, long need) {
    long lo, hi;
    rx_len(n, &lo, &hi);
    if (lo >= need)
        return 1;
    if (hi >= 0 && hi < need)
        return 0;
    switch (n->kind) {
    case RX_REP: {
        long klo, khi;
        rx_len(n->kid[0], &klo, &khi);
        long m = ceil_div(need, klo);
        if (n->max >= 0 && m > n->max) {
            /* longer rounds: each at least need/max */
            if (!n->max || !raise_min(n->kid[0], ceil_div(need, n->max)))
                return 0;
            rx_len(n->kid[0], &klo, &khi);
            m = ceil_div(need, klo);
            if (m > n->max)
                return 0;
        }
        n->min = m;
        return 1;
    }
    case RX_ALT: {
        size_t w = 0;
        for (size_t i = 0; i < n->nkid; i++) {
            if (raise_min(n->kid[i], need))
                n->kid[w++] = n->kid[i];
            else
                rx_free(n->kid[i]);
        }
        n->nkid = w;
        return w > 0;
    }
    case RX_SEQ: {
        /* the parts that can grow, in order */
        long deficit = need - lo;
        for (size_t i = 0; i < n->nkid && deficit > 0; i++) {
            long a, z;
            rx_len(n->kid[i], &a, &z);
            if (z >= 0 && z == a)
                continue;
            long want = a + deficit;
            if (z >= 0 && want > z)
                want = z;
            if (raise_min(n->kid[i], want)) {
                long a2, z2;
                rx_len(n->kid[i], &a2, &z2);
                deficit -= a2 - a;
            }
        }
        return deficit <= 0;
    }
    default:
        return 0;
    }
}

/* Narrow one alternative to lengths min..max.  1 exact, 2 narrowed
   further (a subset), 0 nothing fits, -1 no way found. */
static int limit_alt(rx *alt, long min, long max) {
    long lo, hi;
    rx_len(alt, &lo, &hi);
    if (lo >= min && (max < 0 || (hi >= 0 && hi <= max)))
        return 1;
    if ((max >= 0 && lo > max) || (hi >= 0 && hi < min))
        return 0;
    /* exact when one repetition of a fixed-length part is all that varies */
    rx **items = alt->kind == RX_SEQ ? alt->kid : &alt;
    size_t n = alt->kind == RX_SEQ ? alt->nkid : 1, var = 0, nvar = 0;
    long fixed = 0;
    for (size_t i = 0; i < n; i++) {
        long a = 0, z = 0;
        rx_len(items[i], &a, &z);
        if (a == z)
            fixed += a;
        else
            nvar++, var = i;
    }
    if (nvar == 1 && items[var]->kind == RX_REP) {
        rx *r = items[var];
        long a, z;
        rx_len(r->kid[0], &a, &z);
        if (a == z) {
            long m = r->min, x = r->max;
            long need = ceil_div(min - fixed, a);
            if (need > m)
                m = need;
            if (max >= 0) {
                long room = max - fixed < 0 ? -1 : (max - fixed) / a;
                if (x < 0 || room < x)
                    x = room;
            }
            if (x >= 0 && m > x)
                return 0;
            r->min = m;
            r->max = x;
            return 1;
        }
    }
    /* else a subset: first the maximum, then the minimum */
    if (max >= 0 && !narrow_max(alt, max))
        return -1;
    if (!raise_min(alt, min))
        return -1;
    rx_len(alt, &lo, &hi);
    if (lo < min || (max >= 0 && (hi < 0 || hi > max)))
        return -1;
    return 2;
}

int pl_regex_limit_length(pl_regex *re, long min, long max, char *err, size_t errlen) {
    if (min < 0)
        min = 0;
    rx *root = re->root;
    rx *out = rx_new(RX_ALT);
    if (!out) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    rx **alts = root->kind == RX_ALT ? root->kid : &root;
    size_t n = root->kind == RX_ALT ? root->nkid : 1;
    int exact = 1, undone = 0;
    for (size_t i = 0; i < n; i++) {
        rx *a = alts[i];
        int r = limit_alt(a, min, max);
        if (r == 0)
            continue;
        if (r < 0) {
            undone = 1;
            exact = 0;
            continue;
        }
        if (r == 2)
            exact = 0;
        rx *c = rx_copy(a);
        if (!rx_push(out, c)) {
            rx_free(out);
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    out = simplify(out);
    if (!out) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (out->kind == RX_NEVER) {
        rx_free(out);
        if (undone) {
            snprintf(err, errlen,
                     "cannot combine this pattern with minLength/maxLength (several parts of it vary in length)");
            return -1;
        }
        return 0;
    }
    rx_free(re->root);
    re->root = out;
    return exact ? 1 : 2;
}

/* ---- printing ---- */

/* shape of a printed expression: 0 an atom that may take a quantifier,
   1 a quantified atom, 2 a sequence, 3 an alternation */

static void put_quant(pl_rx_buf *sb, long min, long max) {
    if (min == 0 && max == 1)
        pl_rx_buf_putc(sb, '?');
    else if (min == 0 && max < 0)
        pl_rx_buf_putc(sb, '*');
    else if (min == 1 && max < 0)
        pl_rx_buf_putc(sb, '+');
    else if (max < 0)
        pl_rx_buf_printf(sb, "{%ld,}", min);
    else if (min == max)
        pl_rx_buf_printf(sb, "{%ld}", min);
    else
        pl_rx_buf_printf(sb, "{%ld,%ld}", min, max);
}

/* a name for the expression through fn (taking a copy), or NULL */
static char *name_expr(pl_rx_buf *o, const char *expr, pl_rx_rule_fn fn, void *ud) {
    size_t n = strlen(expr) + 1;
    char *body = malloc(n);
    char *name = NULL;
    if (body) {
        memcpy(body, expr, n);
        name = fn ? fn(ud, body) : (free(body), NULL);
    }
    if (!name)
        o->oom = 1;
    return name;
}

/* What is outside quotes, classes and parentheses in an expression: bit 1
   a space (a sequence), bit 2 a '|' (an alternation). */
int pl_rx_expr_scan(const char *e) {
    int depth = 0, r = 0;
    for (const char *p = e; *p; p++) {
        if (*p == '"' || *p == '[') {
            char close = *p == '"' ? '"' : ']';
            for (p++; *p && *p != close; p++)
                if (*p == '\\' && p[1])
                    p++;
            if (!*p)
                return 3;
        } else if (*p == '(') {
            depth++;
        } else if (*p == ')') {
            depth--;
        } else if (!depth && *p == ' ') {
            r |= 1;
        } else if (!depth && *p == '|') {
            r |= 2;
        }
    }
    return r;
}

/* At most how many rules llama.cpp's parser makes for a group with this
   text: the group, each group and repetition inside, each name (one not
   defined yet becomes a new rule too). */
static long rules_made(const char *e) {
    long n = 1;
    for (const char *p = e; *p; p++) {
        if (*p == '"' || *p == '[') {
            char close = *p == '"' ? '"' : ']';
            for (p++; *p && *p != close; p++)
                if (*p == '\\' && p[1])
                    p++;
            if (!*p)
                break;
        } else if (*p == '(' || *p == '?' || *p == '*' || *p == '+') {
            n++;
        } else if (*p == '{') {
            long a = strtol(p + 1, NULL, 10), b = a;
            const char *q = strchr(p, '}'), *comma = strchr(p, ',');
            if (comma && q && comma < q)
                b = comma + 1 == q ? a + 1 : strtol(comma + 1, NULL, 10);
            n += b - a > 1 ? b - a : 1;
            p = q ? q : p;
        } else if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-') {
            while (p[1] && ((p[1] >= 'a' && p[1] <= 'z') || (p[1] >= 'A' && p[1] <= 'Z') ||
                            (p[1] >= '0' && p[1] <= '9') || p[1] == '-'))
                p++;
            n++;
        }
        if (n > LEN_CAP)
            return LEN_CAP;
    }
    return n;
}

static void put_repeat_inline(pl_rx_buf *o, const char *expr, int simple, long min, long max, pl_rx_rule_fn fn,
                              void *ud);

void pl_rx_put_repeat(pl_rx_buf *o, const char *expr, int simple, long min, long max, pl_rx_rule_fn fn, void *ud) {
    pl_rx_buf r = {0};
    put_repeat_inline(&r, expr, simple, min, max, fn, ud);
    if (r.oom || !r.s) {
        o->oom = 1;
    } else if (fn && rules_made(r.s) > REP_BIG) {
        /* many rules made: a rule of its own, so that a group around it
           that is repeated (even '?') stays small to llama.cpp */
        /* (without parentheses around the whole) */
        const char *body = r.s;
        size_t n = strlen(body);
        if (n > 1 && body[0] == '(' && body[n - 1] == ')') {
            int depth = 0, whole = 1;
            for (size_t i = 0; i < n && whole; i++) {
                if (body[i] == '"' || body[i] == '[') {
                    char close = body[i] == '"' ? '"' : ']';
                    for (i++; i < n && body[i] != close; i++)
                        if (body[i] == '\\')
                            i++;
                } else if (body[i] == '(') {
                    depth++;
                } else if (body[i] == ')' && --depth == 0 && i + 1 < n) {
                    whole = 0;
                }
            }
            if (whole) {
                r.s[n - 1] = 0;
                body = r.s + 1;
            }
        }
        char *name = name_expr(o, body, fn, ud);
        if (name)
            pl_rx_buf_puts(o, name);
        free(name);
    } else {
        pl_rx_buf_puts(o, r.s);
    }
    pl_rx_buf_free(&r);
}

static void put_repeat_inline(pl_rx_buf *o, const char *expr, int simple, long min, long max, pl_rx_rule_fn fn,
                              void *ud) {
    if (min == 1 && max == 1) {
        if (simple || !(pl_rx_expr_scan(expr) & 2)) {
            pl_rx_buf_puts(o, expr);
        } else {
            pl_rx_buf_putc(o, '(');
            pl_rx_buf_puts(o, expr);
            pl_rx_buf_putc(o, ')');
        }
        return;
    }
    long total = max > 0 ? max : min > 0 ? min : 1; /* as llama.cpp counts */
    char *named = NULL;
    if (!simple && (total >= REP_SAFE || rules_made(expr) >= (REP_SAFE + total - 1) / total)) {
        /* a group repeated many times: as a rule of its own, so that it
           counts as one rule to llama.cpp */
        named = name_expr(o, expr, fn, ud);
        if (!named)
            return;
        expr = named;
        simple = 1;
    }
    if (min < REP_SAFE && max < REP_SAFE) {
        if (!simple)
            pl_rx_buf_putc(o, '(');
        pl_rx_buf_puts(o, expr);
        if (!simple)
            pl_rx_buf_putc(o, ')');
        put_quant(o, min, max);
        free(named);
        return;
    }
    if (!simple) {
        named = name_expr(o, expr, fn, ud);
        if (!named)
            return;
        expr = named;
    }
    /* counts c = REP_CHUNK * a + b, 0 <= b < REP_CHUNK, with C the chunk
       rule: exact and unambiguous */
    pl_rx_buf cb = {0};
    pl_rx_buf_puts(&cb, expr);
    pl_rx_buf_printf(&cb, "{%ld}", (long)REP_CHUNK);
    char *chunk = cb.oom ? NULL : name_expr(o, cb.s, fn, ud);
    pl_rx_buf_free(&cb);
    if (!chunk) {
        o->oom = 1;
        free(named);
        return;
    }
    long am = min / REP_CHUNK, bm = min % REP_CHUNK;
    if (max < 0) {
        if (am) {
            put_repeat_inline(o, chunk, 1, am, am, fn, ud);
            pl_rx_buf_putc(o, ' ');
        }
        put_repeat_inline(o, expr, 1, bm, -1, fn, ud);
    } else {
        long aM = max / REP_CHUNK, bM = max % REP_CHUNK;
        /* (a, b ranges) pieces, each "chunk{a} expr{b}", a zero count left out */
        long pa[3][2], pb[3][2];
        int np = 0;
        if (am == aM) {
            pa[np][0] = pa[np][1] = am, pb[np][0] = bm, pb[np][1] = bM, np++;
        } else {
            pa[np][0] = pa[np][1] = am, pb[np][0] = bm, pb[np][1] = REP_CHUNK - 1, np++;
            if (am + 1 <= aM - 1)
                pa[np][0] = am + 1, pa[np][1] = aM - 1, pb[np][0] = 0, pb[np][1] = REP_CHUNK - 1, np++;
            pa[np][0] = pa[np][1] = aM, pb[np][0] = pb[np][1] = 0, pb[np][1] = bM, np++;
        }
        if (np > 1)
            pl_rx_buf_putc(o, '(');
        for (int i = 0; i < np; i++) {
            if (i)
                pl_rx_buf_puts(o, " | ");
            int any = 0;
            if (pa[i][1] > 0) {
                put_repeat_inline(o, chunk, 1, pa[i][0], pa[i][1], fn, ud);
                any = 1;
            }
            if (pb[i][1] > 0) {
                if (any)
                    pl_rx_buf_putc(o, ' ');
                put_repeat_inline(o, expr, 1, pb[i][0], pb[i][1], fn, ud);
            }
        }
        if (np > 1)
            pl_rx_buf_putc(o, ')');
    }
    free(chunk);
    free(named);
}

typedef struct {
    pl_rx_rule_fn fn;
    void *ud;
} emitter;

/* print n, in parentheses when its shape is above `allowed`; returns the
   shape printed */
static int emit(const emitter *em, pl_rx_buf *sb, const rx *n);

static int emit_as(const emitter *em, pl_rx_buf *sb, const rx *n, int allowed) {
    pl_rx_buf t = {0};
    int shape = emit(em, &t, n);
    if (shape > allowed) {
        pl_rx_buf_puts(sb, "(");
        pl_rx_buf_putn(sb, t.s ? t.s : "", t.n);
        pl_rx_buf_puts(sb, ")");
        shape = 0;
    } else {
        pl_rx_buf_putn(sb, t.s ? t.s : "", t.n);
    }
    if (t.oom)
        sb->oom = 1;
    pl_rx_buf_free(&t);
    return shape;
}

static int single_cp(const rx *n, uint32_t *cp) {
    if (n->kind == RX_SET && n->set.n == 1 && n->set.r[0].lo == n->set.r[0].hi) {
        *cp = n->set.r[0].lo;
        return 1;
    }
    return 0;
}

static int emit(const emitter *em, pl_rx_buf *sb, const rx *n) {
    switch (n->kind) {
    case RX_EMPTY:
    case RX_NEVER:
        return 0;
    case RX_SET: {
        int shape = pl_rx_put_json_charset(sb, &n->set);
        return shape == 0 ? 0 : shape == 1 ? 2 : 3;
    }
    case RX_SEQ: {
        int pieces = 0, shape = 0;
        pl_rx_buf lit = {0};
        for (size_t i = 0; i <= n->nkid; i++) {
            uint32_t cp;
            if (i < n->nkid && single_cp(n->kid[i], &cp)) {
                pl_rx_put_json_cp(&lit, cp);
                continue;
            }
            if (lit.n) {
                if (pieces++)
                    pl_rx_buf_putc(sb, ' ');
                pl_rx_put_literal(sb, lit.s, lit.n);
                lit.n = 0;
                shape = 0;
            }
            if (i == n->nkid)
                break;
            if (pieces++)
                pl_rx_buf_putc(sb, ' ');
            shape = emit_as(em, sb, n->kid[i], 2);
        }
        if (lit.oom)
            sb->oom = 1;
        pl_rx_buf_free(&lit);
        return pieces > 1 ? 2 : shape;
    }
    case RX_ALT:
        for (size_t i = 0; i < n->nkid; i++) {
            if (i)
                pl_rx_buf_puts(sb, " | ");
            emit_as(em, sb, n->kid[i], 2);
        }
        return n->nkid > 1 ? 3 : 0;
    case RX_REP: {
        const rx *k = n->kid[0];
        uint32_t cp;
        /* a class or a one-character literal is one term; anything else
           is grouped (or named) */
        int simple = k->kind == RX_SET && !(single_cp(k, &cp) && (json_short_escape(cp) || json_needs_u_escape(cp)));
        pl_rx_buf t = {0};
        int shape = emit(em, &t, k);
        if (shape != 0)
            simple = 0;
        if (!t.oom)
            pl_rx_put_repeat(sb, t.s ? t.s : "", simple, n->min, n->max, em->fn, em->ud);
        if (t.oom)
            sb->oom = 1;
        pl_rx_buf_free(&t);
        return 1;
    }
    }
    return 0;
}

char *pl_regex_to_gbnf(const pl_regex *re, pl_rx_rule_fn fn, void *ud) {
    emitter em = {fn, ud};
    pl_rx_buf sb = {0};
    emit_as(&em, &sb, re->root, 2);
    return pl_rx_buf_take(&sb);
}

/* ---- parse entry ---- */

pl_regex *pl_regex_parse(const char *pattern, char *err, size_t errlen) {
    rxp p = {0};
    p.err = err;
    p.errlen = errlen;
    size_t len = strlen(pattern), i = 0;
    p.cp = malloc((len + 1) * sizeof *p.cp);
    if (!p.cp) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    while (i < len) {
        uint32_t c;
        if (!pl_rx_utf8_next(pattern, len, &i, &c)) {
            snprintf(err, errlen, "pattern is not valid UTF-8");
            free(p.cp);
            return NULL;
        }
        p.cp[p.n++] = c;
    }
    rx *root = parse_alt(&p, 1);
    if (root && p.i < p.n) {
        rxp_fail(&p, "unbalanced ')' in pattern");
        rx_free(root);
        root = NULL;
    }
    free(p.cp);
    if (!root) {
        if (!p.failed)
            snprintf(err, errlen, "out of memory");
        return NULL;
    }
    root = simplify(root);
    if (!root) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (root->kind == RX_NEVER) {
        snprintf(err, errlen, "the pattern matches no string");
        rx_free(root);
        return NULL;
    }
    pl_regex *re = malloc(sizeof *re);
    if (!re) {
        rx_free(root);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    re->root = root;
    return re;
}

void pl_regex_free(pl_regex *re) {
    if (!re)
        return;
    rx_free(re->root);
    free(re);
}

/* ---- matching (backtracking, with continuations) ---- */

typedef struct kont {
    const rx *node;
    long idx; /* RX_SEQ: the next part; RX_REP: the count so far */
    const struct kont *next;
} kont;

typedef struct {
    const uint32_t *s;
    size_t n;
    long steps;
    int over;
} mctx;

static int m_node(mctx *m, const rx *n, size_t i, const kont *k);

static int m_rep(mctx *m, const rx *n, long count, size_t i, const kont *k);

static int m_run(mctx *m, const kont *k, size_t i) {
    if (!k)
        return i == m->n;
    const rx *n = k->node;
    if (n->kind == RX_SEQ) {
        if ((size_t)k->idx == n->nkid)
            return m_run(m, k->next, i);
        kont c = {n, k->idx + 1, k->next};
        return m_node(m, n->kid[k->idx], i, &c);
    }
    return m_rep(m, n, k->idx, i, k->next);
}

static int m_rep(mctx *m, const rx *n, long count, size_t i, const kont *k) {
    /* the repeated part is never nullable, so each round consumes */
    if (n->max < 0 || count < n->max) {
        kont c = {n, count + 1, k};
        if (m_node(m, n->kid[0], i, &c))
            return 1;
    }
    if (count >= n->min)
        return m_run(m, k, i);
    return 0;
}

static int m_node(mctx *m, const rx *n, size_t i, const kont *k) {
    if (++m->steps > MATCH_STEPS) {
        m->over = 1;
        return 0;
    }
    if (m->over)
        return 0;
    switch (n->kind) {
    case RX_EMPTY: return m_run(m, k, i);
    case RX_NEVER: return 0;
    case RX_SET: return i < m->n && pl_rx_cpset_has(&n->set, m->s[i]) && m_run(m, k, i + 1);
    case RX_ALT:
        for (size_t j = 0; j < n->nkid; j++)
            if (m_node(m, n->kid[j], i, k))
                return 1;
        return 0;
    case RX_SEQ: {
        kont c = {n, 1, k};
        return m_node(m, n->kid[0], i, &c);
    }
    case RX_REP: return m_rep(m, n, 0, i, k);
    }
    return 0;
}

int pl_regex_match(const pl_regex *re, const char *s, size_t len) {
    uint32_t *cp = malloc((len + 1) * sizeof *cp);
    if (!cp)
        return -1;
    size_t i = 0, n = 0;
    while (i < len) {
        if (!pl_rx_utf8_next(s, len, &i, &cp[n])) {
            free(cp);
            return -1;
        }
        n++;
    }
    mctx m = {cp, n, 0, 0};
    int r = m_node(&m, re->root, 0, NULL);
    free(cp);
    return m.over ? -1 : r;
}
