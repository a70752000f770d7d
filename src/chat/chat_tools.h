/*
 * chat_tools.h -- tool calling in the chat templates' own formats: which
 * format a template uses (detected from its source text), the text that
 * starts a call (for lazy grammar activation), the GBNF that forces a
 * call, and a streaming parser that turns the model's reply into content
 * and tool calls.  The batch result is the streamed one: feed everything,
 * then finish, and read the calls and content back.
 *
 * The engine's sources call no cJSON function (the engine library does not
 * link cJSON): they only read the cJSON structs the caller passes.  The
 * OpenAI-shaped result is built by pl_tool_parser_calls_json below, an
 * inline function compiled into the caller (the server links cJSON).
 */
#ifndef PL_CHAT_TOOLS_H
#define PL_CHAT_TOOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

typedef enum pl_tool_format {
    PL_TOOLS_NONE,        /* the template neither lists tools nor writes tool calls */
    PL_TOOLS_UNSUPPORTED, /* it does, in a format this module does not parse (family names it) */
    PL_TOOLS_HERMES,      /* <tool_call>\n{"name": .., "arguments": {..}}\n</tool_call> (Qwen2.5/3, Hermes, Granite 4...) */
    PL_TOOLS_QWEN_XML,    /* <tool_call>\n<function=f>\n<parameter=p>\nv\n</parameter>\n</function>\n</tool_call> */
    PL_TOOLS_LLAMA3_JSON, /* the whole reply {"name": .., "parameters": {..}} (Llama 3.1/3.2/3.3) */
    PL_TOOLS_MISTRAL,     /* [TOOL_CALLS]f[ARGS]{..} (Devstral, Ministral 3) */
    PL_TOOLS_MISTRAL_CALL_ID, /* [TOOL_CALLS]f[CALL_ID]abcdefghi[ARGS]{..} (Mistral Small 3.2) */
    PL_TOOLS_MISTRAL_NEMO,    /* [TOOL_CALLS][{"name": .., "arguments": {..}, "id": ..}] */
    PL_TOOLS_GRANITE,     /* <|tool_call|>[{"name": .., "arguments": {..}}] (Granite 3.x) */
    PL_TOOLS_FIREFUNCTION,/* functools[{"name": .., "arguments": {..}}] */
    PL_TOOLS_APRIEL,      /* <tool_calls>[{"name": .., "arguments": {..}}]</tool_calls> */
    PL_TOOLS_MINIMAX_M1,  /* <tool_calls>\n{"name": .., "arguments": {..}}\n...</tool_calls> */
    PL_TOOLS_NEMOTRON_V2, /* <TOOLCALL>[{"name": .., "arguments": {..}}]</TOOLCALL> */
    PL_TOOLS_KIMI_K2,     /* <|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{..}... */
    PL_TOOLS_DEEPSEEK_R1, /* <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{..}\n```... */
    PL_TOOLS_DEEPSEEK_V31,/* <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{..}<｜tool▁call▁end｜>... */
    PL_TOOLS_FUNCTIONARY_V31, /* <function=f>{..}</function> */
    PL_TOOLS_SOLAR,       /* <|tool_call:begin|>id<|tool_call:name|>f<|tool_call:args|>{..}<|tool_call:end|> */
    PL_TOOLS_SEED_OSS,    /* <seed:tool_call>\n<function=f>\n<parameter=p>v</parameter>\n</function>\n</seed:tool_call> */
    PL_TOOLS_MINIMAX_M2,  /* <minimax:tool_call>\n<invoke name="f">\n<parameter name="p">v</parameter>\n</invoke>\n... */
    PL_TOOLS_GLM,         /* <tool_call>f\n<arg_key>p</arg_key>\n<arg_value>v</arg_value>\n</tool_call> (GLM 4.6/4.7, Laguna) */
    PL_TOOLS_DSML_V32,    /* <｜DSML｜function_calls>\n<｜DSML｜invoke name="f">\n<｜DSML｜parameter name="p" string="true">v... */
    PL_TOOLS_DSML_V4,     /* the same with <｜DSML｜tool_calls> (DeepSeek V4) */
    PL_TOOLS_HY3,         /* <tool_calls:opensource>\n<tool_call:opensource>f<tool_sep:opensource>\n<arg_key:opensource>... */
    PL_TOOLS_COMMAND_R7B, /* <|START_ACTION|>[{"tool_call_id": "0", "tool_name": f, "parameters": {...}}]<|END_ACTION|> */
    PL_TOOLS_MINICPM5,    /* <function name="f"><param name="k">v</param></function> */
    PL_TOOLS_APERTUS,     /* <|tools_prefix|>[{"f": {...}}, ...]<|tools_suffix|> */
    PL_TOOLS_LFM2,        /* <|tool_call_start|>[f(k="v", n=1), g()]<|tool_call_end|> */
    PL_TOOLS_FUNCTIONARY_V32, /* (the prompt ends ">>>") f\n{..}>>>g\n{..}, or all\ntext (Functionary v3.2) */
    PL_TOOLS_COUNT
} pl_tool_format;

/* The format of a chat template, from its source text.  *family (when not
 * NULL) gets a short name for messages: the family detected, for
 * PL_TOOLS_UNSUPPORTED too (e.g. "gpt-oss (harmony)"), so a server can
 * refuse `tools` with a 400 that says which format it lacks. */
pl_tool_format pl_tools_detect(const char *template_src, const char **family);

/* Whether the template itself lists the tools it is given (mentions the
 * `tools` variable).  A few templates write calls in a known format but
 * never show the model the tool list (DeepSeek V3.1, the R1 distills); a
 * caller then has to describe the tools in a system message itself. */
bool pl_tools_template_lists_tools(const char *template_src);

/* The family name of a format ("hermes", "qwen-xml", ...). */
const char *pl_tools_format_name(pl_tool_format f);

/* The text that starts a call (or a block of calls) in this format, e.g.
 * "<tool_call>": under tool_choice auto the call grammar is activated when
 * it appears, and pl_tools_grammar's text starts with it.  NULL when the
 * whole reply must be checked (Llama 3's JSON: the reply starts with '{'),
 * and for NONE / UNSUPPORTED.  "" when the generation prompt already ends
 * with it (Functionary v3.2's ">>>"): the reply's first word says whether
 * it is text ("all") or a call, so under tool_choice auto the grammar made
 * with for_auto applies from the first token, and the reply is parsed even
 * when no tools are offered (tools "[]": the leading "all\n" is markup). */
const char *pl_tools_trigger(pl_tool_format f);

/* GBNF forcing one call (with parallel: one or more) to one of `tools`
 * (OpenAI's array: [{"type":"function","function":{"name","description",
 * "parameters"}}]); only_name != NULL restricts it to that function
 * (tool_choice naming one).  The arguments are constrained by each
 * function's parameters schema through pl_schema_to_gbnf (prefix "t<i>-",
 * and "t<i>p<j>-" for the parameters of the XML formats).  Start rule
 * "root"; the other rules of this module are named "tc-...".  NULL and a
 * message in err on a bad tools array, an unknown only_name, a keyword the
 * schema compiler refuses (its message names it), a string-parameter
 * keyword the XML formats cannot express, or a format without calls.
 * for_auto: the grammar for tool_choice auto -- the same text (activated
 * at the trigger), except where the trigger is "" (pl_tools_trigger): then
 * it also allows the format's text reply, and applies from the start. */
char *pl_tools_grammar(pl_tool_format f, const cJSON *tools, const char *only_name, bool parallel, bool for_auto,
                       char *err, size_t errlen);

/* ---- the streaming parser ---------------------------------------------
 * Feed the reply's text (content only: reasoning already split off) in
 * any pieces; it emits events.  Content events never hold tool-call
 * markup: text that could start a trigger is held back until decided, and
 * whitespace next to calls is dropped.  CALL_START comes once the name is
 * complete and known to be one of the tools (any name when tools is NULL);
 * ARGS events carry fragments of function.arguments: for the JSON formats
 * the model's own text of the arguments object (when the model wrote a
 * JSON string holding the object, as OpenAI does: its decoded text, sent
 * whole once checked), for the XML formats a JSON
 * object built as the parameters arrive ({"city": "Par ... is"}), each
 * value typed by the tool's parameter schema.  Calls get index 0, 1, ... */
typedef struct pl_tool_parser pl_tool_parser;

/* NULL for NONE / UNSUPPORTED (or out of memory).  tools may be NULL; it is
 * read during the parse, so it must outlive the parser.  id_seed makes the
 * call ids ("call_" + 24 characters) differ between responses. */
pl_tool_parser *pl_tool_parser_new(pl_tool_format f, const cJSON *tools, uint64_t id_seed);

typedef enum pl_tool_event_kind { PL_TEV_CONTENT, PL_TEV_CALL_START, PL_TEV_ARGS } pl_tool_event_kind;

typedef struct pl_tool_event {
    pl_tool_event_kind kind;
    int index;        /* CALL_START, ARGS: the call's index */
    const char *text; /* CONTENT: text; ARGS: a fragment of the arguments JSON */
    size_t len;
    const char *name; /* CALL_START: the function's name */
    const char *id;   /* CALL_START: the call's id */
} pl_tool_event;

typedef void (*pl_tool_event_fn)(void *user, const pl_tool_event *ev);

/* fn may be NULL (the batch use: read the result after finish). */
void pl_tool_parser_feed(pl_tool_parser *p, const char *text, size_t len, pl_tool_event_fn fn, void *user);

/* End of the reply: flushes held-back text.  False when a call was botched
 * (invalid JSON, unknown function, malformed or unterminated markup): no
 * event follows the botch, pl_tool_parser_error says what it was, and the
 * caller answers with the whole reply (pl_tool_parser_text) as content and
 * finish_reason "stop"; a streaming caller that already sent deltas can
 * send pl_tool_parser_unsent as one more content delta. */
bool pl_tool_parser_finish(pl_tool_parser *p, pl_tool_event_fn fn, void *user);

void pl_tool_parser_free(pl_tool_parser *p);

/* ---- the result (after finish; valid until free) --------------------- */
int pl_tool_parser_ncalls(const pl_tool_parser *p);
/* Call i: its name, id and complete arguments JSON text (NUL-terminated). */
void pl_tool_parser_call(const pl_tool_parser *p, int i, const char **name, const char **id, const char **arguments);
/* The content events joined, as a C string (cut at a NUL byte the model
 * wrote); NULL when empty or whitespace only. */
const char *pl_tool_parser_content(const pl_tool_parser *p);
/* Why the parse was botched, NULL when it was not. */
const char *pl_tool_parser_error(const pl_tool_parser *p);
/* The whole reply as fed. */
const char *pl_tool_parser_text(const pl_tool_parser *p, size_t *len);
/* The tail of the reply that no event represents (after a botch: from the
 * start of the botched markup), so a streaming caller can still send it. */
const char *pl_tool_parser_unsent(const pl_tool_parser *p, size_t *len);

/* The calls in OpenAI's shape, [{"id","type":"function","function":{"name",
 * "arguments"}}] (a new cJSON array, empty when there were none; NULL when
 * out of memory).  Inline so that only its caller links cJSON. */
static inline cJSON *pl_tool_parser_calls_json(const pl_tool_parser *p) {
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; arr && i < pl_tool_parser_ncalls(p); i++) {
        const char *name, *id, *args;
        pl_tool_parser_call(p, i, &name, &id, &args);
        cJSON *c = cJSON_CreateObject(), *fn = cJSON_CreateObject();
        if (!c || !fn || !cJSON_AddStringToObject(c, "id", id) || !cJSON_AddStringToObject(c, "type", "function") ||
            !cJSON_AddStringToObject(fn, "name", name) || !cJSON_AddStringToObject(fn, "arguments", args)) {
            cJSON_Delete(c);
            cJSON_Delete(fn);
            cJSON_Delete(arr);
            return NULL;
        }
        cJSON_AddItemToObject(c, "function", fn);
        cJSON_AddItemToArray(arr, c);
    }
    return arr;
}

#endif
