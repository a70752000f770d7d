/*
 * fuzz_jinja.c -- libFuzzer target for the chat-template interpreter:
 * arbitrary template text (and, after a NUL byte, arbitrary messages JSON)
 * is parsed and rendered with small limits, so a template that loops
 * forever or explodes must stop with an error, never crash, leak or hang;
 * the result then goes through the reasoning split.  Seeds: the bundled
 * llama.cpp templates and hand-written snippets (seeds/fuzz_jinja.sh).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "chat/chat_template.h"
#include "chat/jinja.h"
#include "chat/jinja_internal.h"

static const char DEFAULT_MESSAGES[] =
    "[{\"role\":\"system\",\"content\":\"sys\"},{\"role\":\"user\",\"content\":\"Hi {{ x }}\"},"
    "{\"role\":\"assistant\",\"content\":\"<think>r</think>ok\",\"reasoning_content\":\"r\","
    "\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":{\"a\":1}}}]},"
    "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"42\"},{\"role\":\"user\",\"content\":\"more\"}]";

typedef struct args {
    const char *messages;
    size_t len;
} args;

static void build(pl_jinja_ctx *x, void *user) {
    const args *a = user;
    pl_jv msgs = pl_json_parse(x, a->messages, a->len, "messages");
    pl_jx_set_global(x, "messages", msgs);
    pl_jx_set_global(x, "tools", pl_json_parse(x, "[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}]", 43, "tools"));
    pl_jx_set_global(x, "add_generation_prompt", pl_jv_bool(true));
    pl_jx_set_global(x, "bos_token", pl_jv_cstr(x, "<s>"));
    pl_jx_set_global(x, "eos_token", pl_jv_cstr(x, "</s>"));
    pl_jx_set_global(x, "enable_thinking", pl_jv_bool(false));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* exact-size copies, so a read past either part is caught */
    const uint8_t *nul = memchr(data, 0, size);
    size_t tlen = nul ? (size_t)(nul - data) : size;
    char *tmpl = malloc(tlen ? tlen : 1);
    if (tlen) memcpy(tmpl, data, tlen);
    args a = {DEFAULT_MESSAGES, sizeof DEFAULT_MESSAGES - 1};
    char *msgs = NULL;
    if (nul) {
        size_t mlen = size - tlen - 1;
        msgs = malloc(mlen ? mlen : 1);
        if (mlen) memcpy(msgs, nul + 1, mlen);
        a.messages = msgs;
        a.len = mlen;
    }
    pl_jinja_template *t;
    if (pl_jinja_parse(tmpl, tlen, &t) == POCKETLLM_OK) {
        pl_jinja_limits lim = {.max_output = 1u << 20, .max_memory = 32u << 20, .max_steps = 200000, .max_depth = 32};
        pl_jinja_ctx *x = pl_jinja_ctx_new(&lim);
        pl_jinja_ctx_set_now(x, 1753525800);
        char *out = NULL;
        size_t len = 0;
        if (pl_jinja_build(x, build, &a) == POCKETLLM_OK && pl_jinja_render(x, t, &out, &len) == POCKETLLM_OK) {
            pocketllm_chat_template ct = {.tmpl = t, .think_tags = true};
            pocketllm_chat_split sp;
            if (pocketllm_chat_split_reasoning(&ct, out, out, len, &sp) == POCKETLLM_OK) pocketllm_chat_split_free(&sp);
        }
        free(out);
        pl_jinja_ctx_free(x);
        pl_jinja_template_free(t);
    }
    free(msgs);
    free(tmpl);
    return 0;
}
