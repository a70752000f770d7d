/*
 * chat_tools_internal.h -- what the tool-calling sources share: the syntax
 * of each format as data (chat_tools_spec.c), the tools array read
 * through cJSON's structs only (chat_tools_schema.c), a byte-at-a-time
 * JSON validator and JSON string escaping (chat_tools_json.c), and a small
 * growable string.
 */
#ifndef PL_CHAT_TOOLS_INTERNAL_H
#define PL_CHAT_TOOLS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "chat/chat_tools.h"

/* ---- formats as data ---------------------------------------------------
 * Three shapes cover every supported format:
 *  JSON:  call objects {"name": f, "arguments": {..}} after a trigger, one
 *         per section, a [list], or several in a row;
 *  NAMED: the name as text, then the arguments object as JSON;
 *  XML:   the name as text, then each parameter as raw text between tags.
 * The strings are the canonical text (what the grammar writes); the parser
 * matches them with their outer whitespace trimmed and any whitespace
 * allowed around them (never inside an XML value). */
/* JSON call objects; a name then a JSON arguments object; XML parameters;
 * Python calls f(k=v, ...) (LFM2) */
typedef enum pl_tool_shape { PL_TSHAPE_JSON, PL_TSHAPE_NAMED, PL_TSHAPE_XML, PL_TSHAPE_PY } pl_tool_shape;

typedef struct pl_tool_spec {
    pl_tool_format fmt;
    const char *family;
    pl_tool_shape shape;
    const char *open;          /* starts a section of calls (or the one call): the trigger. NULL: llama3 */
    bool open_nl;              /* grammar: a newline follows it */
    const char *close;         /* ends the section; NULL: none (calls end on their own) */
    bool one_per_section;      /* the template wraps each call in its own section */
    bool single_call;          /* the template takes one call per message (raises on more): never parallel */
    const char *call_sep;      /* grammar: between calls */
    /* JSON */
    bool list;                 /* [a, b] after the trigger ('[' may end the trigger) */
    bool multi;                /* several objects in a row inside the section */
    const char *args_key;      /* grammar: "arguments" or "parameters" */
    const char *name_key;      /* grammar: the name's key (NULL: "name") */
    bool name_is_key;          /* JSON: each call is {"<name>": {arguments}} */
    const char *json_lead_gbnf;/* grammar: the members before the name's (a call id), with their ", " */
    /* NAMED and XML: one call */
    const char *call_open;     /* before each call inside a section; NULL: the section opens the call */
    const char *name_open;     /* right before the name (NAMED) */
    bool skip_to_name;         /* bytes (an id) may come before name_open */
    const char *pre_name_gbnf; /* grammar for those bytes */
    bool skip_after_name;      /* bytes (an index, a call id) may come between the name and args_open */
    const char *post_name_gbnf;/* grammar for them */
    const char *args_open;     /* NAMED: before the arguments object */
    const char *args_close;    /* NAMED: after it (NULL: none) */
    const char *name_close;    /* XML: after the name (trimmed empty: the name ends at whitespace or '<') */
    const char *param_open;    /* XML */
    const char *key_close;     /* XML: after the parameter's name */
    const char *value_open;    /* XML: before the value (NULL: none) */
    const char *value_close;   /* XML: after the value */
    const char *call_close;    /* after the call (NULL: none) */
    bool strip_nl;             /* XML: one newline after key_close / value_open and one before value_close are markup */
    bool dsml;                 /* XML: key_close is followed by string="true|false"> */
    /* the generation prompt ends with `open` (Functionary v3.2's ">>>"): the
     * reply is parsed as if it began with it, and the grammar writes it only
     * between calls (call_sep) */
    bool prompt_opens;
    const char *text_name;     /* after `open`, this word and a newline start text, not a call ("all") */
} pl_tool_spec;

const pl_tool_spec *pl_tool_spec_get(pl_tool_format f);

/* ---- a growable string ------------------------------------------------ */
typedef struct pl_tsb {
    char *s;
    size_t len, cap;
    bool oom;
} pl_tsb;

void pl_tsb_add(pl_tsb *b, const char *s, size_t n);
void pl_tsb_puts(pl_tsb *b, const char *s);
void pl_tsb_printf(pl_tsb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The string, NUL-terminated ("" when empty); NULL after a failed allocation. */
const char *pl_tsb_str(pl_tsb *b);
void pl_tsb_free(pl_tsb *b);

/* ---- JSON ------------------------------------------------------------- */
#define PL_JSCAN_MAX_DEPTH 128

typedef enum pl_jscan_result {
    PL_JS_MORE,        /* byte taken, the value goes on */
    PL_JS_DONE,        /* byte taken, it ended the value */
    PL_JS_DONE_BEFORE, /* the value (a number) ended before this byte, which is not taken */
    PL_JS_ERROR
} pl_jscan_result;

/* A JSON validator fed one byte at a time (leading whitespace skipped). */
typedef struct pl_jscan {
    int st, depth, aux;
    bool key;
    unsigned char stack[PL_JSCAN_MAX_DEPTH];
} pl_jscan;

void pl_jscan_init(pl_jscan *s);
pl_jscan_result pl_jscan_byte(pl_jscan *s, unsigned char c);
/* At the end of the input: whether the value is complete (a number). */
bool pl_jscan_end(const pl_jscan *s);

/* The JSON type of a whole text (a bit of PL_JT_*), 0 when it is not one
 * JSON value. */
enum { PL_JT_STR = 1, PL_JT_NUM = 2, PL_JT_INT = 4, PL_JT_BOOL = 8, PL_JT_NULL = 16, PL_JT_OBJ = 32, PL_JT_ARR = 64 };
unsigned pl_json_type_of(const char *s, size_t n);

/* Appends the text a JSON string literal (quotes included, already
 * validated) stands for; false on a bad \u escape. */
bool pl_json_unescape(pl_tsb *b, const char *s, size_t n);

/* Appends s as the inside of a JSON string (no quotes). */
void pl_json_escape(pl_tsb *b, const char *s, size_t n);
/* One code point (at most U+10FFFF) as UTF-8. */
void pl_tsb_put_utf8(pl_tsb *b, unsigned cp);

/* ---- the tools array (cJSON structs read directly) -------------------- */
const cJSON *pl_tj_get(const cJSON *obj, const char *key);
bool pl_tj_is(const cJSON *v, int type);
/* Tool i's function object ({"name", "parameters"}), NULL past the end. */
const cJSON *pl_tools_function(const cJSON *tools, int i);
const char *pl_tools_function_name(const cJSON *fn);
/* The function named name (len bytes), NULL when none. */
const cJSON *pl_tools_find(const cJSON *tools, const char *name, size_t len);
/* The JSON types a parameter's schema allows (PL_JT_* bits; 0: unknown). */
unsigned pl_tools_param_types(const cJSON *fn, const char *key);
unsigned pl_schema_types(const cJSON *schema);
/* A function / parameter name of [A-Za-z0-9_.-], 1 to 64 bytes. */
bool pl_tools_name_ok(const char *s, size_t n);
static inline bool pl_tools_name_char(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.';
}

#endif
