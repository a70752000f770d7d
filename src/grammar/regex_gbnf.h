/*
 * regex_gbnf.h -- ECMAScript regular expressions (the JSON-schema
 * "pattern" dialect) compiled to GBNF, plus the small text helpers the
 * JSON-schema compiler shares with it.
 *
 * The regex describes the *decoded* value of a JSON string; the GBNF it
 * becomes describes that string's JSON text between the quotes, so every
 * code point the regex allows is written in its one canonical JSON form:
 * `"` as \", `\` as \\, U+0008/09/0A/0C/0D as \b \t \n \f \r, the other
 * control characters and U+007F as \u00xx (lower-case hex), everything
 * else as itself.
 *
 * Dialect: literals, escapes (\d \w \s \D \W \S \t \n \r \v \f \0 \xHH
 * \uHHHH \cX and escaped punctuation), classes [..] [^..], `.`, groups
 * ( ) (?: ) (?<name> ), alternation, quantifiers * + ? {m} {m,} {m,n},
 * `^` at the start and `$` at the end of a top-level alternative.  A side
 * without its anchor matches anywhere (JSON Schema's search semantics).
 * Refused: lookarounds, backreferences, lazy quantifiers, \b \B word
 * boundaries, \p{..} property escapes, anchors anywhere else.
 */
#ifndef PL_GRAMMAR_REGEX_GBNF_H
#define PL_GRAMMAR_REGEX_GBNF_H

#include <stddef.h>
#include <stdint.h>

/* ---- a growing text buffer (out of memory is remembered in oom) ---- */
typedef struct {
    char *s;
    size_t n, cap;
    int oom;
} pl_rx_buf;

void pl_rx_buf_putn(pl_rx_buf *sb, const char *s, size_t n);
void pl_rx_buf_puts(pl_rx_buf *sb, const char *s);
void pl_rx_buf_putc(pl_rx_buf *sb, char c);
void pl_rx_buf_printf(pl_rx_buf *sb, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* The text (NUL-terminated, owned by the caller), or NULL when memory ran
   out; the buffer is empty afterwards either way. */
char *pl_rx_buf_take(pl_rx_buf *sb);
void pl_rx_buf_free(pl_rx_buf *sb);

/* ---- code point sets: sorted, disjoint, non-adjacent ranges ---- */
typedef struct {
    uint32_t lo, hi;
} pl_rx_cprange;

typedef struct {
    pl_rx_cprange *r;
    size_t n, cap;
    int oom;
} pl_rx_cpset;

void pl_rx_cpset_add(pl_rx_cpset *set, uint32_t lo, uint32_t hi);
int pl_rx_cpset_has(const pl_rx_cpset *set, uint32_t cp);
void pl_rx_cpset_free(pl_rx_cpset *set);

/* One code point from UTF-8 at s[*i] (advancing *i); 0 on a malformed,
   overlong or surrogate sequence. */
int pl_rx_utf8_next(const char *s, size_t len, size_t *i, uint32_t *cp);
int pl_rx_utf8_valid(const char *s, size_t len);
/* What is outside quotes, classes and parentheses in a GBNF expression: bit
   1 a space (a sequence), bit 2 a '|' (an alternation); 3 when a quote or
   class is unterminated. */
int pl_rx_expr_scan(const char *e);

/* GBNF string literal ("...") for UTF-8 text. */
void pl_rx_put_literal(pl_rx_buf *sb, const char *text, size_t len);
/* The canonical JSON text of a string's content (no quotes). */
void pl_rx_put_json_string(pl_rx_buf *sb, const char *utf8, size_t len);
void pl_rx_put_json_cp(pl_rx_buf *sb, uint32_t cp);
/* GBNF expression for the canonical JSON text of any one code point of
   the set (which must not be empty); returns its shape: 0 one atom (a
   literal or a class), 1 a sequence, 2 an alternation. */
int pl_rx_put_json_charset(pl_rx_buf *sb, const pl_rx_cpset *set);

/* ---- regular expressions ---- */
typedef struct pl_regex pl_regex;

/* Parse a pattern; NULL with err filled when it is invalid or uses a
   construct that has no exact grammar. */
pl_regex *pl_regex_parse(const char *pattern, char *err, size_t errlen);
void pl_regex_free(pl_regex *re);

/* The code point lengths of the matched strings (max -1: unbounded). */
void pl_regex_length(const pl_regex *re, long *min, long *max);

/* Keep only the matches of min..max code points (max -1: no maximum).
   Returns 1 when that is exact, 2 when it had to narrow the language
   further to a subset (several parts of the pattern vary in length),
   0 when no match is left, -1 (err filled) when it cannot be done. */
int pl_regex_limit_length(pl_regex *re, long min, long max, char *err, size_t errlen);

/* Makes a rule with this body (taking it) and returns its name
   (malloc'd), NULL when memory ran out. */
typedef char *(*pl_rx_rule_fn)(void *ud, char *body);

/* expr{min,max} (max -1: no maximum) in a form llama.cpp's GBNF parser
   takes exactly: it refuses a repetition whose count times the rules made
   inside the repeated part reaches 2000 and reads a maximum above 2000 as
   none.  `simple`: expr is one name, literal or class; else it is
   grouped, or made a rule through fn when repeated many times.  Counts of
   1000 and more become chunk rules (through fn). */
void pl_rx_put_repeat(pl_rx_buf *o, const char *expr, int simple, long min, long max, pl_rx_rule_fn fn, void *ud);

/* GBNF expression (safe inside a sequence) for the JSON text of the
   strings the regex matches, without the quotes; "" when it matches only
   the empty string.  Parts repeated many times become rules through fn.
   NULL when memory ran out. */
char *pl_regex_to_gbnf(const pl_regex *re, pl_rx_rule_fn fn, void *ud);

/* Does the regex match the whole UTF-8 string?  1 yes, 0 no, -1 the
   search gave up (too many steps) or the text is not UTF-8. */
int pl_regex_match(const pl_regex *re, const char *s, size_t len);

#endif
