/*
 * jinja_lex.c -- the Jinja lexer.  It follows jinja2 3.1's lexer rule for
 * rule (jinja2/lexer.py) with HF's settings, because whitespace control is
 * where renderings usually drift apart:
 *   - newlines are normalized to \n and one trailing newline is dropped
 *     (keep_trailing_newline is off);
 *   - "{%-"/"{{-"/"{#-" strip all whitespace before the tag, "-%}" "-}}"
 *     "-#}" all whitespace after it;
 *   - trim_blocks: a block or comment tag eats one "\n" right after it;
 *   - lstrip_blocks: spaces/tabs from the start of a line up to a block or
 *     comment tag are removed (not before {{ }}, not with "{%+");
 *   - string literals are decoded as Python's unicode-escape codec does.
 */
#include "chat/jinja_lex.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/error.h"
#include "chat/jinja_internal.h"

void pl_jparse_fail(pl_jparse *p, pocketllm_status st, uint32_t line, uint32_t col, const char *fmt, ...) {
    char msg[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pl_fail(st, "template line %u, column %u: %s", line, col, msg);
    p->err_line = line;
    p->status = st;
    p->err_col = col;
    longjmp(p->jmp, 1);
}

static const struct {
    const char *text;
    uint8_t op;
} OPS[] = {
    /* longest first, as jinja2 sorts them */
    {"**", JO_POW}, {"//", JO_FLOORDIV}, {"==", JO_EQ}, {"!=", JO_NE}, {">=", JO_GTEQ}, {"<=", JO_LTEQ},
    {"+", JO_ADD},  {"-", JO_SUB},       {"/", JO_DIV}, {"*", JO_MUL},  {"%", JO_MOD},   {"~", JO_TILDE},
    {"[", JO_LBRACKET}, {"]", JO_RBRACKET}, {"(", JO_LPAREN}, {")", JO_RPAREN}, {"{", JO_LBRACE},
    {"}", JO_RBRACE}, {">", JO_GT}, {"<", JO_LT}, {"=", JO_ASSIGN}, {".", JO_DOT}, {":", JO_COLON},
    {"|", JO_PIPE}, {",", JO_COMMA}, {";", JO_SEMICOLON},
};

const char *pl_jtok_op_text(int op) {
    for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++)
        if (OPS[i].op == op) return OPS[i].text;
    return "?";
}

typedef struct lexer {
    pl_jparse *p;
    const char *s;
    size_t n;
    size_t counted;   /* line and col describe this offset */
    uint32_t line, col;
} lexer;

/* Line and column (1-based, in characters) of byte offset pos.  Offsets are
 * asked for in increasing order, so the count moves forward; an error
 * pointing back counts again from the start. */
static void where(lexer *L, size_t pos, uint32_t *line, uint32_t *col) {
    if (pos < L->counted) {
        L->counted = 0;
        L->line = 1;
        L->col = 1;
    }
    for (size_t i = L->counted; i < pos && i < L->n; i++) {
        if (L->s[i] == '\n') {
            L->line++;
            L->col = 1;
        } else if (((unsigned char)L->s[i] & 0xC0) != 0x80) {
            L->col++;
        }
    }
    if (pos > L->counted) L->counted = pos;
    *line = L->line;
    *col = L->col;
}

static _Noreturn void lex_fail(lexer *L, size_t pos, pocketllm_status st, const char *what) {
    uint32_t line, col;
    where(L, pos, &line, &col);
    pl_jparse_fail(L->p, st, line, col, "%s", what);
}

static pl_jtok *emit(lexer *L, int type, size_t pos) {
    pl_jparse *p = L->p;
    if (p->ntoks == p->cap) {
        /* plain heap memory (freed after the parse), not the arena: the
         * tokens do not outlive the parse */
        size_t cap = p->cap ? p->cap * 2 : 256;
        pl_jtok *t = cap < SIZE_MAX / 2 / sizeof *t ? realloc(p->toks, cap * sizeof *t) : NULL;
        if (!t) lex_fail(L, pos, POCKETLLM_ERR_NO_MEMORY, "out of memory");
        p->toks = t;
        p->cap = cap;
    }
    pl_jtok *t = &p->toks[p->ntoks++];
    memset(t, 0, sizeof *t);
    t->type = (uint8_t)type;
    where(L, pos, &t->line, &t->col);
    return t;
}

/* Python's \s at s[i]: its byte length, or 0. */
static size_t ws_at(const char *s, size_t n, size_t i) {
    if (i >= n) return 0;
    unsigned char c = (unsigned char)s[i];
    if (c < 0x80) return pl_py_isspace(c) ? 1 : 0;
    uint32_t cp;
    size_t k = pl_ju8_decode(s + i, &cp);
    return pl_py_isspace(cp) ? k : 0;
}

static size_t skip_ws(const char *s, size_t n, size_t i) {
    size_t k;
    while ((k = ws_at(s, n, i)) != 0) i += k;
    return i;
}

/* Length of text with trailing Python whitespace removed (str.rstrip()). */
static size_t rstrip_len(const char *s, size_t len) {
    while (len > 0) {
        size_t start = len - 1;
        while (start > 0 && ((unsigned char)s[start] & 0xC0) == 0x80) start--;
        uint32_t cp;
        pl_ju8_decode(s + start, &cp);
        if (!pl_py_isspace(cp)) break;
        len = start;
    }
    return len;
}

/* Whether s[a..b) is non-empty and all Python whitespace. */
static bool all_ws(const char *s, size_t a, size_t b) {
    if (a >= b) return false;
    while (a < b) {
        size_t k = ws_at(s, b, a);
        if (!k) return false;
        a += k;
    }
    return true;
}

static void emit_data(lexer *L, size_t start, size_t len) {
    if (len == 0) return; /* jinja2 drops empty data tokens */
    pl_jtok *t = emit(L, JT_DATA, start);
    t->text = L->s + start;
    t->len = len;
}

/* Apply the whitespace rules to the data text before a tag and emit it.
 * sign is '-', '+' or 0; is_var: the tag is {{ (no lstrip_blocks). */
static void data_before_tag(lexer *L, size_t start, size_t end, char sign, bool is_var, bool line_starting) {
    size_t len = end - start;
    const char *text = L->s + start;
    if (sign == '-') {
        len = rstrip_len(text, len);
    } else if (sign != '+' && !is_var) {
        size_t l_pos = 0;
        for (size_t i = len; i > 0; i--)
            if (text[i - 1] == '\n') {
                l_pos = i;
                break;
            }
        if ((l_pos > 0 || line_starting) && all_ws(text, l_pos, len)) len = l_pos;
    }
    emit_data(L, start, len);
}

static size_t digits_us(const char *s, size_t n, size_t i) {
    /* (\d+_)*\d+ starting at i (s[i] must be a digit); returns the end */
    while (i < n && s[i] >= '0' && s[i] <= '9') i++;
    while (i + 1 < n && s[i] == '_' && s[i + 1] >= '0' && s[i + 1] <= '9') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9') i++;
    }
    return i;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* jinja2's float_re at i; returns its end or 0. */
static size_t match_float(const char *s, size_t n, size_t i) {
    if (i > 0 && s[i - 1] == '.') return 0;
    if (i >= n || !is_digit(s[i])) return 0;
    size_t j = digits_us(s, n, i);
    size_t frac_end = 0;
    if (j + 1 < n && s[j] == '.' && is_digit(s[j + 1])) frac_end = digits_us(s, n, j + 1);
    size_t k = frac_end ? frac_end : j;
    if (k < n && (s[k] == 'e' || s[k] == 'E')) {
        size_t m = k + 1;
        if (m < n && (s[m] == '+' || s[m] == '-')) m++;
        if (m < n && is_digit(s[m])) return digits_us(s, n, m);
        /* an exponent that does not parse: only the fraction form is left */
    }
    return frac_end;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* jinja2's integer_re at i; returns its end or 0 and the value. */
static size_t match_int(lexer *L, size_t i, int64_t *val) {
    const char *s = L->s;
    size_t n = L->n;
    if (i >= n || !is_digit(s[i])) return 0;
    int base = 10;
    size_t j = i;
    if (s[i] == '0' && i + 1 < n) {
        char b = (char)(s[i + 1] | 0x20);
        base = b == 'b' ? 2 : b == 'o' ? 8 : b == 'x' ? 16 : 10;
    }
    if (base != 10) {
        /* 0b(_?[01])+ and friends */
        j = i + 2;
        size_t digits = 0;
        for (;;) {
            size_t k = j;
            if (k < n && s[k] == '_') k++;
            int d = k < n ? hexval(s[k]) : -1;
            if (d < 0 || d >= base) break;
            j = k + 1;
            digits++;
        }
        if (digits == 0) base = 10; /* falls through to the decimal rules */
    }
    if (base == 10) {
        j = i + 1;
        if (s[i] == '0') {
            while (j + 1 <= n) { /* 0(_?0)* */
                size_t k = j;
                if (k < n && s[k] == '_') k++;
                if (k < n && s[k] == '0') j = k + 1;
                else break;
            }
        } else {
            while (j <= n) { /* [1-9](_?\d)* */
                size_t k = j;
                if (k < n && s[k] == '_') k++;
                if (k < n && is_digit(s[k])) j = k + 1;
                else break;
            }
        }
    }
    uint64_t v = 0;
    size_t start = base == 10 ? i : i + 2;
    for (size_t k = start; k < j; k++) {
        if (s[k] == '_') continue;
        uint64_t d = (uint64_t)hexval(s[k]);
        if (!pl_mul_u64(v, (uint64_t)base, &v) || !pl_add_u64(v, d, &v) || v > (uint64_t)INT64_MAX)
            lex_fail(L, i, POCKETLLM_ERR_UNSUPPORTED, "integer literal larger than 2**63-1 (not supported)");
    }
    *val = (int64_t)v;
    return j;
}

static void put_cp(pl_jbuf *b, char *scratch, uint32_t cp) {
    size_t k = pl_ju8_encode(cp, scratch);
    memcpy(b->p + b->len, scratch, k);
    b->len += k;
}

/* Decode the body of a string literal the way jinja2 does:
 * s.encode("ascii", "backslashreplace").decode("unicode-escape"). */
static void decode_string(lexer *L, size_t at, const char *s, size_t n, pl_jtok *t) {
    /* the result is never longer than 4 bytes per source byte... in practice
     * never longer than the source plus the \xNN expansions (at most 10
     * bytes for one 4-byte character) */
    size_t cap;
    if (!pl_mul_u64(n, 3, (uint64_t *)&cap) || cap > SIZE_MAX - 16) lex_fail(L, at, POCKETLLM_ERR_NO_MEMORY, "string too long");
    cap += 16;
    pl_jbuf b = {pl_arena_alloc(L->p->arena, cap, 1), 0, cap};
    if (!b.p) lex_fail(L, at, POCKETLLM_ERR_NO_MEMORY, "out of memory");
    char tmp[4];
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        size_t k = pl_ju8_decode(s + i, &cp);
        if (cp != '\\') {
            memcpy(b.p + b.len, s + i, k);
            b.len += k;
            i += k;
            continue;
        }
        i += k;
        if (i >= n) lex_fail(L, at, POCKETLLM_ERR_FORMAT, "\\ at end of string");
        k = pl_ju8_decode(s + i, &cp);
        if (cp >= 0x80) {
            /* backslashreplace turned the character into \xNN / \uNNNN /
             * \UNNNNNNNN, so "\\" + that reads as a backslash and the text */
            b.len += (size_t)sprintf(b.p + b.len, cp < 0x100 ? "\\x%02x" : cp < 0x10000 ? "\\u%04x" : "\\U%08x", cp);
            i += k;
            continue;
        }
        char c = (char)cp;
        i++;
        switch (c) {
        case '\n': break; /* line continuation */
        case '\\': b.p[b.len++] = '\\'; break;
        case '\'': b.p[b.len++] = '\''; break;
        case '"': b.p[b.len++] = '"'; break;
        case 'a': b.p[b.len++] = '\a'; break;
        case 'b': b.p[b.len++] = '\b'; break;
        case 'f': b.p[b.len++] = '\f'; break;
        case 'n': b.p[b.len++] = '\n'; break;
        case 'r': b.p[b.len++] = '\r'; break;
        case 't': b.p[b.len++] = '\t'; break;
        case 'v': b.p[b.len++] = '\v'; break;
        case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': {
            uint32_t v = (uint32_t)(c - '0');
            for (int d = 0; d < 2 && i < n && s[i] >= '0' && s[i] <= '7'; d++) v = v * 8 + (uint32_t)(s[i++] - '0');
            put_cp(&b, tmp, v);
            break;
        }
        case 'x': case 'u': case 'U': {
            int want = c == 'x' ? 2 : c == 'u' ? 4 : 8;
            uint32_t v = 0;
            for (int d = 0; d < want; d++) {
                int h = i < n ? hexval(s[i]) : -1;
                if (h < 0)
                    lex_fail(L, at, POCKETLLM_ERR_FORMAT,
                             c == 'x' ? "truncated \\xXX escape" : c == 'u' ? "truncated \\uXXXX escape"
                                                                          : "truncated \\UXXXXXXXX escape");
                v = v * 16 + (uint32_t)h;
                i++;
            }
            if (v > 0x10FFFF) lex_fail(L, at, POCKETLLM_ERR_FORMAT, "illegal Unicode character");
            if (v >= 0xD800 && v <= 0xDFFF)
                lex_fail(L, at, POCKETLLM_ERR_UNSUPPORTED, "a lone surrogate escape (\\ud800-\\udfff) in a string");
            put_cp(&b, tmp, v);
            break;
        }
        case 'N':
            lex_fail(L, at, POCKETLLM_ERR_UNSUPPORTED, "named Unicode escapes (\\N{...}) in a string");
        default: /* unknown escapes stay as they are */
            b.p[b.len++] = '\\';
            b.p[b.len++] = c;
            break;
        }
    }
    b.p[b.len] = '\0';
    t->text = b.p;
    t->len = b.len;
}

/* Lex the inside of a {{ }} or {% %} tag starting at i; returns the offset
 * after the end tag and sets *nl when that end consumed a final newline. */
static size_t lex_tag(lexer *L, size_t i, bool is_block, bool *nl) {
    const char *s = L->s;
    size_t n = L->n;
    char closer = is_block ? '%' : '}';
    uint8_t stack[256];
    size_t depth = 0;
    for (;;) {
        if (i >= n) lex_fail(L, i, POCKETLLM_ERR_FORMAT, is_block ? "unexpected end of template inside {% %}"
                                                                   : "unexpected end of template inside {{ }}");
        if (depth == 0) {
            /* the end rule comes first */
            if (is_block && s[i] == '+' && i + 2 < n && s[i + 1] == '%' && s[i + 2] == '}') {
                emit(L, JT_BLOCK_END, i);
                *nl = false;
                return i + 3;
            }
            if (s[i] == '-' && i + 2 < n && s[i + 1] == closer && s[i + 2] == '}') {
                emit(L, is_block ? JT_BLOCK_END : JT_VAR_END, i);
                size_t e = skip_ws(s, n, i + 3);
                *nl = e > i + 3 && s[e - 1] == '\n';
                return e;
            }
            if (s[i] == closer && i + 1 < n && s[i + 1] == '}') {
                emit(L, is_block ? JT_BLOCK_END : JT_VAR_END, i);
                size_t e = i + 2;
                *nl = false;
                if (is_block && e < n && s[e] == '\n') { /* trim_blocks */
                    e++;
                    *nl = true;
                }
                return e;
            }
        }
        size_t k = ws_at(s, n, i);
        if (k) {
            i = skip_ws(s, n, i);
            continue;
        }
        size_t e = match_float(s, n, i);
        if (e) {
            char buf[128];
            size_t m = 0;
            if (e - i >= sizeof buf) lex_fail(L, i, POCKETLLM_ERR_UNSUPPORTED, "a float literal over 127 characters");
            for (size_t j = i; j < e; j++)
                if (s[j] != '_') buf[m++] = s[j];
            buf[m] = '\0';
            pl_jtok *t = emit(L, JT_FLOAT, i);
            t->f = strtod(buf, NULL);
            i = e;
            continue;
        }
        int64_t iv;
        e = match_int(L, i, &iv);
        if (e) {
            pl_jtok *t = emit(L, JT_INT, i);
            t->i = iv;
            i = e;
            continue;
        }
        unsigned char c = (unsigned char)s[i];
        if (c == '_' || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z')) {
            size_t j = i + 1;
            while (j < n && (s[j] == '_' || is_digit(s[j]) || ((s[j] | 0x20) >= 'a' && (s[j] | 0x20) <= 'z'))) j++;
            if (j < n && (unsigned char)s[j] >= 0x80 && !ws_at(s, n, j))
                lex_fail(L, i, POCKETLLM_ERR_UNSUPPORTED, "a non-ASCII identifier");
            pl_jtok *t = emit(L, JT_NAME, i);
            t->text = pl_arena_strndup(L->p->arena, s + i, j - i);
            if (!t->text) lex_fail(L, i, POCKETLLM_ERR_NO_MEMORY, "out of memory");
            t->len = j - i;
            i = j;
            continue;
        }
        if (c == '\'' || c == '"') {
            size_t j = i + 1;
            bool closed = false;
            while (j < n) {
                if (s[j] == (char)c) {
                    closed = true;
                    break;
                }
                if (s[j] == '\\') {
                    j++;
                    if (j >= n) break;
                    uint32_t cp;
                    j += pl_ju8_decode(s + j, &cp);
                    continue;
                }
                j++;
            }
            if (closed) {
                pl_jtok *t = emit(L, JT_STRING, i);
                decode_string(L, i, s + i + 1, j - i - 1, t);
                i = j + 1;
                continue;
            }
            /* an unterminated quote matches no rule */
        }
        size_t oi;
        for (oi = 0; oi < sizeof OPS / sizeof OPS[0]; oi++) {
            size_t ol = strlen(OPS[oi].text);
            if (i + ol <= n && memcmp(s + i, OPS[oi].text, ol) == 0) break;
        }
        if (oi < sizeof OPS / sizeof OPS[0]) {
            uint8_t op = OPS[oi].op;
            if (op == JO_LBRACE || op == JO_LPAREN || op == JO_LBRACKET) {
                if (depth == sizeof stack)
                    lex_fail(L, i, POCKETLLM_ERR_UNSUPPORTED, "brackets nested more than 256 deep");
                stack[depth++] = op == JO_LBRACE ? JO_RBRACE : op == JO_LPAREN ? JO_RPAREN : JO_RBRACKET;
            } else if (op == JO_RBRACE || op == JO_RPAREN || op == JO_RBRACKET) {
                char msg[64];
                if (depth == 0) {
                    snprintf(msg, sizeof msg, "unexpected '%s'", OPS[oi].text);
                    lex_fail(L, i, POCKETLLM_ERR_FORMAT, msg);
                }
                if (stack[depth - 1] != op) {
                    snprintf(msg, sizeof msg, "unexpected '%s', expected '%s'", OPS[oi].text,
                             pl_jtok_op_text(stack[depth - 1]));
                    lex_fail(L, i, POCKETLLM_ERR_FORMAT, msg);
                }
                depth--;
            }
            pl_jtok *t = emit(L, JT_OP, i);
            t->op = op;
            i += strlen(OPS[oi].text);
            continue;
        }
        char msg[64];
        if (c >= 0x80) lex_fail(L, i, POCKETLLM_ERR_UNSUPPORTED, "a non-ASCII identifier");
        snprintf(msg, sizeof msg, c >= 0x20 && c < 0x7f ? "unexpected char '%c'" : "unexpected char \\x%02x", c);
        lex_fail(L, i, POCKETLLM_ERR_FORMAT, msg);
    }
}

/* "{%" sign? \s* "raw" \s* ("-%}" \s* | "%}") at i: returns the end or 0. */
static size_t match_raw_begin(const char *s, size_t n, size_t i, char *sign) {
    size_t j = i + 2;
    *sign = 0;
    if (j < n && (s[j] == '-' || s[j] == '+')) *sign = s[j++];
    j = skip_ws(s, n, j);
    if (j + 3 > n || memcmp(s + j, "raw", 3) != 0) return 0;
    j = skip_ws(s, n, j + 3);
    if (j + 3 <= n && memcmp(s + j, "-%}", 3) == 0) return skip_ws(s, n, j + 3);
    if (j + 2 <= n && memcmp(s + j, "%}", 2) == 0) return j + 2;
    return 0;
}

/* The end of a raw block: "{%" sign? \s* "endraw" \s* ("+%}" | "-%}"\s* |
 * "%}" "\n"?).  Returns the start of the tag (or n when missing). */
static size_t find_endraw(const char *s, size_t n, size_t i, char *sign, size_t *end) {
    for (; i + 1 < n; i++) {
        if (s[i] != '{' || s[i + 1] != '%') continue;
        size_t j = i + 2;
        char sg = 0;
        if (j < n && (s[j] == '-' || s[j] == '+')) sg = s[j++];
        j = skip_ws(s, n, j);
        if (j + 6 > n || memcmp(s + j, "endraw", 6) != 0) continue;
        j = skip_ws(s, n, j + 6);
        if (j + 3 <= n && memcmp(s + j, "+%}", 3) == 0) {
            *end = j + 3;
        } else if (j + 3 <= n && memcmp(s + j, "-%}", 3) == 0) {
            *end = skip_ws(s, n, j + 3);
        } else if (j + 2 <= n && memcmp(s + j, "%}", 2) == 0) {
            *end = j + 2;
            if (*end < n && s[*end] == '\n') (*end)++;
        } else {
            continue;
        }
        *sign = sg;
        return i;
    }
    return n;
}

void pl_jlex(pl_jparse *p, const char *src, size_t len) {
    /* newline normalization: \r\n and \r become \n; one trailing newline goes */
    char *s = pl_arena_alloc(p->arena, len + 1, 1);
    if (!s) pl_jparse_fail(p, POCKETLLM_ERR_NO_MEMORY, 1, 1, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (src[i] == '\r') {
            s[n++] = '\n';
            if (i + 1 < len && src[i + 1] == '\n') i++;
        } else {
            s[n++] = src[i];
        }
    }
    if (n > 0 && s[n - 1] == '\n') n--;
    s[n] = '\0';
    p->src = s;
    p->len = n;

    lexer L = {.p = p, .s = s, .n = n, .line = 1, .col = 1};
    size_t i = 0;
    bool line_starting = true;
    while (i < n) {
        /* the next tag opener */
        size_t t = i;
        while (t + 1 < n && !(s[t] == '{' && (s[t + 1] == '{' || s[t + 1] == '%' || s[t + 1] == '#'))) t++;
        if (t + 1 >= n) {
            emit_data(&L, i, n - i);
            break;
        }
        char kind = s[t + 1];
        char sign = 0;
        size_t after = t + 2;
        if (kind == '%') {
            size_t raw_end = match_raw_begin(s, n, t, &sign);
            if (raw_end) {
                data_before_tag(&L, i, t, sign, false, line_starting);
                char esign;
                size_t end;
                size_t et = find_endraw(s, n, raw_end, &esign, &end);
                if (et == n) lex_fail(&L, t, POCKETLLM_ERR_FORMAT, "missing end of raw directive");
                bool ls = raw_end > t && s[raw_end - 1] == '\n';
                data_before_tag(&L, raw_end, et, esign, false, ls);
                line_starting = s[end - 1] == '\n';
                i = end;
                continue;
            }
        }
        if (after < n && (s[after] == '-' || s[after] == '+')) sign = s[after++];
        data_before_tag(&L, i, t, sign, kind == '{', line_starting);
        if (kind == '#') {
            /* a comment ends at the first "#}", with its sign just before */
            size_t k = after;
            while (k + 1 < n && !(s[k] == '#' && s[k + 1] == '}')) k++;
            if (k + 1 >= n) lex_fail(&L, t, POCKETLLM_ERR_FORMAT, "missing end of comment tag");
            size_t end = k + 2;
            if (k > after && s[k - 1] == '-') {
                end = skip_ws(s, n, end);
                line_starting = end > k + 2 && s[end - 1] == '\n';
            } else if (k > after && s[k - 1] == '+') {
                line_starting = false;
            } else {
                line_starting = false;
                if (end < n && s[end] == '\n') {
                    end++;
                    line_starting = true;
                }
            }
            i = end;
            continue;
        }
        bool is_block = kind == '%';
        emit(&L, is_block ? JT_BLOCK_BEGIN : JT_VAR_BEGIN, t);
        bool nl = false;
        i = lex_tag(&L, after, is_block, &nl);
        line_starting = nl;
    }
    emit(&L, JT_EOF, n);
}
