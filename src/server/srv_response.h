/*
 * srv_response.h -- the JSON the server sends, in OpenAI's shapes: errors,
 * the model list, whole chat/text completions, stream chunks and the
 * usage chunk.  Every string is made valid UTF-8 on the way out.  All
 * functions return a malloc'd NUL-terminated string, NULL when out of
 * memory.
 */
#ifndef PL_SRV_RESPONSE_H
#define PL_SRV_RESPONSE_H

#include <stdbool.h>
#include <stdint.h>

#include "srv_model.h"
#include "srv_request.h"
#include "srv_sched.h"

/* What every response to one request names. */
typedef struct srv_reply {
    const srv_model *m;
    const srv_request *r;
    char id[48];          /* chatcmpl-... / cmpl-... */
    int64_t created;
} srv_reply;

void srv_reply_init(srv_reply *rp, const srv_model *m, const srv_request *r);

char *srv_json_error(const srv_error *e);
char *srv_json_models(const srv_model *m);

/* A whole completion from the choices' full output in u. */
char *srv_json_final(const srv_reply *rp, const srv_update *u);

/* One stream chunk of choice `index`.  Chat: reasoning and content deltas
 * (either may be empty), role on the first chunk.  Completions: content is
 * the text delta.  finish: NULL while running. text_offset: bytes of text
 * before this chunk's (completions' logprobs). */
typedef struct srv_chunk {
    size_t index;
    const char *reasoning;
    size_t reasoning_len;
    const char *content;
    size_t content_len;
    const srv_logprob *lp;
    size_t n_lp;
    uint64_t text_offset;
    const char *finish;
    bool role;
    /* a tool-call delta (chat): call >= 0 is its index; a call's first
     * delta has its id and name (arguments ""), later ones only argument
     * fragments */
    int call;
    const char *call_id, *call_name;
    const char *args;
    size_t args_len;
} srv_chunk;
char *srv_json_chunk(const srv_reply *rp, const srv_chunk *c);
/* The seed of the tool-call ids of choice i of a reply. */
uint64_t srv_reply_call_seed(const srv_reply *rp, size_t i);
/* The last chunk of stream_options.include_usage: no choices, the usage. */
char *srv_json_usage_chunk(const srv_reply *rp, const srv_update *u);

/* Prompt tokens and completion tokens of a request so far. */
void srv_usage_counts(const srv_request *r, const srv_update *u, uint64_t *prompt, uint64_t *completion);

#endif
