/*
 * srv_think.h -- the reasoning split of a chat reply while it streams.
 * The final split is the chat module's (pocketllm_chat_split_reasoning):
 * Qwen3's <think>...</think> block becomes reasoning_content, the rest
 * content.  While the reply grows, each push splits everything so far and
 * hands out only what a longer reply cannot change any more: trailing
 * newlines of the reasoning, a tail that may be the start of a think tag,
 * and content that is still only whitespace wait for the next piece.
 * Pieces are cut on UTF-8 character boundaries.
 */
#ifndef PL_SRV_THINK_H
#define PL_SRV_THINK_H

#include <stdbool.h>

#include "pocketllm.h"
#include "srv_text.h"

typedef struct srv_think {
    const pocketllm_chat_template *t; /* borrowed; NULL: think tags are always recognised */
    const char *prompt;               /* borrowed: the rendered prompt (may be NULL) */
    srv_buf text;                     /* the reply so far */
    srv_buf sent_r, sent_c;           /* reasoning and content handed out so far */
} srv_think;

void srv_think_init(srv_think *th, const pocketllm_chat_template *t, const char *prompt);
void srv_think_free(srv_think *th);
/* Add n bytes of reply; append the new reasoning to r and the new content
 * to c.  With final set nothing is held back. */
pocketllm_status srv_think_push(srv_think *th, const char *s, size_t n, bool final, srv_buf *r, srv_buf *c);

#endif
