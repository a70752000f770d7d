/*
 * asr.c -- Qwen3-ASR's request and answer formats (see asr.h): the prompt
 * of one piece through the model's chat template, the parse of the
 * generated "language X<asr_text>words", and the generation bound.
 */
#include "runtime/asr.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "model/model.h"
#include "runtime/media_prompt.h"

/* llama.cpp's converter writes this template into Qwen3-ASR text models
 * (conversion/qwen3vl.py, Qwen3ASRTextModel.set_vocab); used only when the
 * file carries none. */
static const char CHATML[] =
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + "
    "'\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/* The longest language name or context accepted (bytes); a context is
 * prompt text, bounded so a request cannot fill the context with it. */
#define MAX_LANGUAGE 64
#define MAX_CONTEXT 16384

pocketllm_status pl_asr_prompt(const pocketllm_model *m, const char *language, const char *context, char **out) {
    if (!out) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "asr prompt: no output pointer");
    *out = NULL;
    if (!m) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "asr prompt: no model");
    if (language && (!*language || strlen(language) > MAX_LANGUAGE || strpbrk(language, "<>\n\r")))
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "the language must be a name such as \"English\" (1..%d bytes, "
                       "no '<', '>' or line breaks)", MAX_LANGUAGE);
    if (context && strlen(context) > MAX_CONTEXT)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "the context (prompt) text is longer than %d bytes", MAX_CONTEXT);
    const char *src = CHATML;
    uint64_t src_len = sizeof CHATML - 1;
    const pocketllm_gguf_value *tv = m->gguf ? pocketllm_gguf_find(m->gguf, "tokenizer.chat_template") : NULL;
    const char *ts = tv ? pocketllm_gguf_value_str(tv, &src_len) : NULL;
    if (ts) src = ts;
    else src_len = sizeof CHATML - 1;
    pocketllm_chat_template *t;
    pocketllm_status st = pocketllm_chat_template_new(src, (size_t)src_len, &t);
    if (st) {
        pl_error_prefix("the model's chat template");
        return st;
    }
    /* Qwen's qwen_asr toolkit: a system turn with the context (empty when
     * none), a user turn that is the audio alone, the generation prompt */
    const pocketllm_chat_message msgs[2] = {
        {.role = "system", .content = context ? context : ""},
        {.role = "user", .content = PL_MEDIA_MARKER},
    };
    pocketllm_chat_options opt = pocketllm_chat_default_options();
    opt.add_generation_prompt = 1;
    char *r = NULL;
    size_t rlen = 0;
    st = pocketllm_chat_render(t, msgs, 2, &opt, &r, &rlen);
    pocketllm_chat_template_free(t);
    if (st) return st;
    const size_t extra = language ? strlen("language ") + strlen(language) + strlen(PL_ASR_TEXT_TAG) : 0;
    char *p = malloc(rlen + extra + 1);
    if (!p) {
        pocketllm_chat_free(r);
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    }
    memcpy(p, r, rlen);
    pocketllm_chat_free(r);
    p[rlen] = '\0';
    /* the answer's prefix written for the model: it goes on with the words */
    if (language) snprintf(p + rlen, extra + 1, "language %s%s", language, PL_ASR_TEXT_TAG);
    *out = p;
    return POCKETLLM_OK;
}

/* Remove [from, to) of the NUL-terminated s. */
static void cut(char *s, size_t from, size_t to) { memmove(s + from, s + to, strlen(s + to) + 1); }

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

/* Trim leading and trailing white space of s in place. */
static void trim(char *s) {
    size_t n = strlen(s), a = 0;
    while (n && is_space(s[n - 1])) s[--n] = '\0';
    while (a < n && is_space(s[a])) a++;
    if (a) cut(s, 0, a);
}

pocketllm_status pl_asr_parse(const char *gen, size_t len, const char *forced_language, char **text, char *lang,
                              size_t cap) {
    if (!text || (!gen && len)) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "asr parse: NULL argument");
    *text = NULL;
    char *s = malloc(len + 1);
    if (!s) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    if (len) memcpy(s, gen, len);
    s[len] = '\0';
    /* reasoning: every <think>...</think>, and an unfinished <think> to the end */
    for (char *a; (a = strstr(s, "<think>"));) {
        char *b = strstr(a, "</think>");
        if (b) cut(s, (size_t)(a - s), (size_t)(b - s) + strlen("</think>"));
        else *a = '\0';
    }
    char *stray;
    while ((stray = strstr(s, "</think>"))) cut(s, (size_t)(stray - s), (size_t)(stray - s) + strlen("</think>"));
    /* the answer's prefix "language X<asr_text>": the last tag ends it */
    char language[MAX_LANGUAGE + 1] = "";
    char *tag = NULL;
    for (char *at = strstr(s, PL_ASR_TEXT_TAG); at; at = strstr(at + 1, PL_ASR_TEXT_TAG)) tag = at;
    if (tag) {
        *tag = '\0';
        char *meta = s;
        char *lw = strstr(meta, "language ");
        if (lw) {
            lw += strlen("language ");
            while (*lw == ' ') lw++;
            snprintf(language, sizeof language, "%s", lw);
            for (char *c = language; *c; c++)
                if (*c == '<' || *c == '\n' || *c == '\r') *c = '\0';
            trim(language);
        }
        cut(s, 0, (size_t)(tag - s) + strlen(PL_ASR_TEXT_TAG));
    }
    /* special tokens the model wrote (<|im_end|>, <|endoftext|>, ...) */
    for (char *a = strstr(s, "<|"); a; a = strstr(a, "<|")) {
        char *b = strstr(a + 2, "|>");
        if (!b) break;
        cut(s, (size_t)(a - s), (size_t)(b - s) + 2);
    }
    trim(s);
    /* Qwen3-ASR answers "language None" for audio without speech */
    if (!strcmp(language, "None")) language[0] = '\0';
    if (lang && cap) snprintf(lang, cap, "%s", forced_language ? forced_language : language);
    *text = s;
    return POCKETLLM_OK;
}

uint32_t pl_asr_token_budget(double seconds) {
    if (!(seconds > 0)) seconds = 0;
    if (seconds > PL_ASR_MAX_SECONDS) seconds = PL_ASR_MAX_SECONDS;
    return 64 + (uint32_t)(16.0 * seconds + 0.999);
}
