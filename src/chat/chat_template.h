/*
 * chat_template.h -- the chat-template handle behind pocketllm.h's opaque
 * pocketllm_chat_template (shared by chat_template.c and chat_reasoning.c).
 */
#ifndef PL_CHAT_TEMPLATE_H
#define PL_CHAT_TEMPLATE_H

#include <stdbool.h>

#include "chat/jinja.h"
#include "pocketllm.h"

struct pocketllm_chat_template {
    pl_jinja_template *tmpl;
    bool think_tags; /* the template writes <think>...</think> blocks (Qwen3, QwQ, DeepSeek-R1...) */
    int tool_format; /* how its models call tools (chat_tools.h's pl_tool_format), read from the source */
    const char *tool_family;
    bool lists_tools; /* it shows the model the tools it is given */
    /* it writes a call's arguments as they are (`+ arguments`), so callers
     * must pass them as JSON text, not the object the other templates
     * format (Functionary v3.2); found by rendering a call both ways */
    bool args_as_text;
};

#endif
