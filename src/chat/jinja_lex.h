/*
 * jinja_lex.h -- tokens of a Jinja template, as jinja2's lexer produces
 * them with trim_blocks and lstrip_blocks on, and the state the lexer and
 * the parser share (arena, error exit).
 */
#ifndef PL_JINJA_LEX_H
#define PL_JINJA_LEX_H

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "pocketllm.h"

typedef enum pl_jtok_type {
    JT_DATA,
    JT_VAR_BEGIN,
    JT_VAR_END,
    JT_BLOCK_BEGIN,
    JT_BLOCK_END,
    JT_NAME,
    JT_STRING,
    JT_INT,
    JT_FLOAT,
    JT_OP,
    JT_EOF
} pl_jtok_type;

typedef enum pl_jtok_op {
    JO_ADD, JO_SUB, JO_DIV, JO_FLOORDIV, JO_MUL, JO_MOD, JO_POW, JO_TILDE,
    JO_LBRACKET, JO_RBRACKET, JO_LPAREN, JO_RPAREN, JO_LBRACE, JO_RBRACE,
    JO_EQ, JO_NE, JO_GT, JO_GTEQ, JO_LT, JO_LTEQ, JO_ASSIGN, JO_DOT, JO_COLON,
    JO_PIPE, JO_COMMA, JO_SEMICOLON
} pl_jtok_op;

typedef struct pl_jtok {
    uint8_t type;
    uint8_t op;
    uint32_t line, col;
    const char *text; /* NAME, DATA, STRING (decoded, NUL-terminated) */
    size_t len;
    int64_t i;        /* INT */
    double f;         /* FLOAT */
} pl_jtok;

typedef struct pl_jparse {
    pl_arena *arena;
    jmp_buf jmp;
    const char *src; /* normalized source */
    size_t len;
    pl_jtok *toks;   /* malloc'd; freed when the parse ends */
    size_t ntoks, cap;
    size_t pos;      /* parser: current token */
    int soft;        /* parser: inside an if / conditional expression frame */
    int depth;       /* parser: nesting, against stack exhaustion */
    int in_loop, in_macro; /* in_loop 2: inside a set/filter block in a loop */
    uint32_t err_line, err_col;
    pocketllm_status status; /* of the failure */
} pl_jparse;

/* Report a template error at (line, col) and leave through p->jmp. */
_Noreturn void pl_jparse_fail(pl_jparse *p, pocketllm_status st, uint32_t line, uint32_t col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Tokenize src (valid UTF-8) into p->toks, ending with JT_EOF. */
void pl_jlex(pl_jparse *p, const char *src, size_t len);

const char *pl_jtok_op_text(int op);

#endif
