/*
 * chat_tools_parser.h -- the streaming tool-call parser's state, shared by
 * its core (chat_tools_parse.c: text, content, events, results) and the
 * call syntaxes (chat_tools_calls.c: JSON objects, named calls, XML
 * parameters).  The parser keeps the whole reply and a position; each
 * step either decides on text that will read the same whatever follows
 * (and emits its events) or waits for more, so any split of the reply into
 * pieces gives the same events joined.
 */
#ifndef PL_CHAT_TOOLS_PARSER_H
#define PL_CHAT_TOOLS_PARSER_H

#include "chat/chat_tools_internal.h"

enum {
    /* content */
    P_CONTENT,   /* text, watching for the trigger */
    P_L3_START,  /* llama3: is the reply a call? */
    P_TEXT_ONLY, /* llama3: the reply is text */
    P_L3_AFTER,  /* llama3: after a call: ';' / '{' for another */
    P_SECTION_CLOSE,
    P_RECIPIENT, /* after `open` (or at the start, prompt_opens): text_name (text follows) or a call's name */
    /* JSON objects */
    P_J_LIST_OPEN, /* '[' */
    P_J_ITEM,      /* '{' */
    P_J_KEY,       /* a key or '}' (first) */
    P_J_KEYSTR,    /* the key's string */
    P_J_COLON,
    P_J_VALUE,
    P_J_NAMESTR,   /* the name's string */
    P_J_SCAN,      /* a value through the validator */
    P_J_NEXTKEY,   /* ',' or '}' */
    P_J_LIST_NEXT, /* ',' or ']' */
    P_J_MULTI_NEXT,/* '{' or the section's close */
    /* named calls */
    P_N_CALL,      /* call_open or the section's close */
    P_N_NAME_OPEN,
    P_N_NAME,
    P_N_ARGS_OPEN,
    P_N_ARGS,      /* '{' */
    P_N_SCAN,
    P_N_ARGS_CLOSE,
    P_N_CALL_CLOSE,
    /* XML calls */
    P_X_CALL,      /* call_open or the section's close */
    P_X_NAME,
    P_X_NAME_CLOSE,
    P_X_PARAM,     /* param_open or call_close */
    P_X_KEY,
    P_X_KEY_CLOSE,
    P_X_VALUE_OPEN,
    P_X_VALUE,
    /* Python calls */
    P_P_NAME,      /* the function's name */
    P_P_OPEN,      /* '(' */
    P_P_KEY,       /* a keyword or ')' */
    P_P_EQ,        /* '=' */
    P_P_VALUE,     /* a Python literal */
    P_P_NEXT,      /* ',' or ')' */
    P_P_CALL_NEXT, /* ',' (another call) or ']' */
    P_BOTCHED
};

/* what a step did */
enum {
    R_GO,   /* progress: step again */
    R_WAIT, /* needs more text (at the end of the reply: the call is unterminated) */
    R_IDLE  /* nothing more to do with the text so far (fine at the end too) */
};

typedef struct pl_tcall {
    char name[65];
    char id[32];
    pl_tsb args;
} pl_tcall;

struct pl_tool_parser {
    const pl_tool_spec *spec;
    const cJSON *tools;
    uint64_t seed;
    pl_tsb text;    /* the reply so far */
    size_t pos;     /* parsed up to here */
    size_t settled; /* the text before this is represented by events */
    size_t cscan;   /* content: no trigger starts before this */
    int st;
    bool final;      /* finishing: no more text will come */
    bool after_call; /* content: whitespace after a call is dropped */
    char err[200];
    pl_tool_event_fn fn;
    void *user;
    /* results */
    pl_tcall *calls;
    int ncalls, cap;
    pl_tsb content;
    /* the call in progress */
    bool in_call;         /* CALL_START sent */
    const cJSON *fn_schema;
    int section_calls;    /* calls finished in this section */
    /* a JSON call object */
    char key[16];
    int key_role;         /* KEY_NAME, KEY_ARGS, KEY_OTHER */
    int nkeys;
    bool have_name, have_args;
    bool args_str;        /* the arguments came as a JSON string (decoded into sargs) */
    pl_tsb sargs;
    size_t args_start, args_end;
    pl_jscan js;
    /* an XML call */
    int nparams;
    unsigned ptypes;     /* the value's JSON types (PL_JT_*), 0: unknown */
    size_t vstart, vemit, vscan;
};

enum { KEY_OTHER, KEY_NAME, KEY_ARGS };

/* core (chat_tools_parse.c) */
int pl_tp_botch(pl_tool_parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool pl_tp_ws(char c);
/* Skips whitespace; whether a byte is there after it. */
bool pl_tp_skip_ws(pl_tool_parser *p);
/* The literal (outer whitespace trimmed) at pos, after whitespace when
 * skip_ws: 1 matched (pos moved past it), 0 not there, -1 the text ends
 * inside it (wait). */
int pl_tp_expect(pl_tool_parser *p, const char *lit, bool skip_ws);
/* The literal, trimmed. */
const char *pl_tp_trim(const char *lit, size_t *n);
/* The first occurrence of needle in text[from, len), or (size_t)-1. */
size_t pl_tp_find(const pl_tool_parser *p, size_t from, const char *needle, size_t nn);
/* How many bytes at the end of text[from, len) could start needle. */
size_t pl_tp_partial(const pl_tool_parser *p, size_t from, const char *needle, size_t nn);
/* A function's name at pos, after whitespace: R_GO with *end after it,
 * else R_WAIT (it may go on) or a botch. */
int pl_tp_name(pl_tool_parser *p, size_t *end);
/* Start call (CALL_START) for the name text[a, b); botched when not a tool. */
bool pl_tp_call_start(pl_tool_parser *p, size_t a, size_t b);
void pl_tp_args(pl_tool_parser *p, const char *s, size_t n);
/* The call in progress is complete; its closing markup ends at pos. */
void pl_tp_call_end(pl_tool_parser *p);
/* After a call's markup: back to content, or the next call of the section. */
void pl_tp_after_call(pl_tool_parser *p);
/* The trigger was matched: the first state of a section. */
void pl_tp_section(pl_tool_parser *p);

/* call syntaxes (chat_tools_calls.c, chat_tools_xml.c) */
int pl_tp_step_json(pl_tool_parser *p);
int pl_tp_step_named(pl_tool_parser *p);
int pl_tp_step_xml(pl_tool_parser *p);
int pl_tp_step_py(pl_tool_parser *p);
/* The arguments object's text through the validator, sent as ARGS while
 * it streams; R_GO once it is complete (args_end set). */
int pl_tp_scan_args(pl_tool_parser *p, bool is_args);
/* A literal that may come after up to 64 other bytes (an id, an index). */
int pl_tp_skip_to(pl_tool_parser *p, const char *lit);
/* A section's next call or its close; R_GO with *call when a call opens. */
int pl_tp_next_in_section(pl_tool_parser *p, bool *call);

#endif
