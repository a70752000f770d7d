/*
 * srv_request_internal.h -- what the two halves of the request handler
 * share: srv_request.c (the fields, one by one, and the assembly) and
 * srv_prompt.c (messages through the chat template, prompts through the
 * tokenizer, the context check).
 */
#ifndef PL_SRV_REQUEST_INTERNAL_H
#define PL_SRV_REQUEST_INTERNAL_H

#include <cjson/cJSON.h>

#include "srv_request.h"

/* What the field handlers collect before the request is assembled. */
typedef struct pctx {
    const srv_model *m;
    srv_kind kind;
    srv_request *r;
    srv_error *e;
    const cJSON *messages, *prompt;
    int64_t max_tokens, max_completion_tokens; /* -1: not given */
    bool logprobs_flag;                        /* chat: logprobs: true */
    int64_t logprobs_n;                        /* completions: logprobs: N (-1: not given) */
    int64_t top_logprobs;                      /* chat (-1: not given) */
    int64_t best_of;                           /* -1: not given */
    bool stream_options_given;
    int enable_thinking;                       /* -1: not given */
    cJSON *template_vars;                      /* chat_template_kwargs without enable_thinking (owned) */
    pocketllm_image *images[SRV_MAX_IMAGES];   /* the messages' images until the prompt takes them (owned) */
    size_t n_images;
    uint64_t image_pixels;                     /* their pixels together */
    pocketllm_audio *audios[SRV_MAX_AUDIO];    /* the messages' input_audio clips, likewise (owned) */
    size_t n_audios;
    double audio_seconds;                      /* their audio together */
    pocketllm_media media[SRV_MAX_IMAGES + SRV_MAX_AUDIO]; /* images and clips in the order sent */
    size_t n_media;
    /* what srv_constrain.c collects before it builds the grammar */
    const cJSON *response_format, *grammar, *json_schema, *tools, *tool_choice;
    int parallel_tool_calls;                   /* -1: not given */
    char *gbnf;                                /* the grammar to compile once the prompt is known (owned) */
    const char *gbnf_param;                    /* the field it came from, for errors */
    bool gbnf_think;                           /* a think block may come first */
    const char *triggers[2];                   /* lazy activation (tool_choice auto) */
    size_t n_triggers;
} pctx;

/* Typed reads of a JSON value: false (and e filled) when it is not one. */
bool srv_want_bool(pctx *c, const cJSON *v, const char *name, bool *out);
bool srv_want_number(pctx *c, const cJSON *v, const char *name, double lo, double hi, double *out);
bool srv_want_int(pctx *c, const cJSON *v, const char *name, int64_t lo, int64_t hi, int64_t *out);
/* A string that is valid UTF-8 (JSON escapes decoded). */
bool srv_want_string(pctx *c, const cJSON *v, const char *name, const char **out);

/* The shape of the reply (srv_constrain.c): the fields, then the grammar
 * built from them once every field is read (before the prompt: the tools
 * go to the chat template). */
bool srv_field_response_format(pctx *c, const cJSON *v, const char *name);
bool srv_field_grammar(pctx *c, const cJSON *v, const char *name);
bool srv_field_json_schema(pctx *c, const cJSON *v, const char *name);
bool srv_field_tools(pctx *c, const cJSON *v, const char *name);
bool srv_field_tool_choice(pctx *c, const cJSON *v, const char *name);
bool srv_field_parallel_tool_calls(pctx *c, const cJSON *v, const char *name);
bool srv_build_constraint(pctx *c);
/* r->grammar from c->gbnf, once the prompt is rendered: a prompt that
 * leaves a think block open makes the grammar start inside it.  false
 * with e set (a 400 naming the field when the grammar does not parse). */
bool srv_finish_constraint(pctx *c);
/* The tools, tool_choice and parallel_tool_calls fields checked, and the
 * grammar tool_choice asks for (srv_tools.c). */
bool srv_tools_build(pctx *c);

/* The prompts of the request (srv_prompt.c). */
bool srv_build_chat_prompt(pctx *c);
bool srv_build_completion_prompts(pctx *c);
/* Every prompt fits the context with room for the completion. */
bool srv_context_checks(pctx *c);

#endif
