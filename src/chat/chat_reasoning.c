/*
 * chat_reasoning.c -- splits generated text into reasoning and answer for
 * templates whose models think inside <think>...</think> (Qwen3, QwQ,
 * DeepSeek-R1 and their kin).  The split is the one those templates apply
 * to an assistant message when they render it back:
 *   reasoning = text.split('</think>')[0].rstrip('\n').split('<think>')[-1].lstrip('\n')
 *   content   = text.split('</think>')[-1].lstrip('\n')
 * so that a reply fed back as reasoning_content + content renders as the
 * model wrote it.  Text without "</think>" is all reasoning when the prompt
 * (or the text) opened a think block, else all content.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "chat/chat_template.h"

static const char OPEN[] = "<think>", CLOSE[] = "</think>";

/* Last occurrence of needle in s[0..n). */
static const char *last_of(const char *s, size_t n, const char *needle) {
    size_t k = strlen(needle);
    if (n < k) return NULL;
    for (size_t i = n - k + 1; i > 0; i--)
        if (memcmp(s + i - 1, needle, k) == 0) return s + i - 1;
    return NULL;
}

static char *dup_range(const char *s, size_t n) {
    char *p = malloc(n + 1);
    if (!p) return NULL;
    if (n) memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

/* Whether the prompt ends inside an open think block. */
static int prompt_opens_think(const char *prompt) {
    if (!prompt) return 0;
    size_t n = strlen(prompt);
    const char *o = last_of(prompt, n, OPEN), *c = last_of(prompt, n, CLOSE);
    return o && (!c || c < o);
}

pocketllm_status pocketllm_chat_split_reasoning(const pocketllm_chat_template *t, const char *prompt, const char *text,
                                                size_t len, pocketllm_chat_split *out) {
    if (!out || (!text && len)) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "split reasoning: missing argument");
    memset(out, 0, sizeof *out);
    if (!text) text = "";
    const char *content = text, *reasoning = NULL;
    size_t content_len = len, reasoning_len = 0;
    if (!t || t->think_tags) {
        const char *first_close = memmem(text, len, CLOSE, sizeof CLOSE - 1);
        if (first_close) {
            /* reasoning: before the first </think>, after the last <think> */
            size_t rn = (size_t)(first_close - text);
            while (rn > 0 && text[rn - 1] == '\n') rn--;
            const char *o = last_of(text, rn, OPEN);
            const char *r = o ? o + sizeof OPEN - 1 : text;
            rn -= (size_t)(r - text);
            while (rn > 0 && *r == '\n') {
                r++;
                rn--;
            }
            reasoning = r;
            reasoning_len = rn;
            const char *after = last_of(text, len, CLOSE) + sizeof CLOSE - 1;
            content = after;
            content_len = len - (size_t)(after - text);
        } else {
            size_t lead = 0;
            while (lead < len && (text[lead] == ' ' || text[lead] == '\n' || text[lead] == '\t' || text[lead] == '\r')) lead++;
            bool opened_here = len - lead >= sizeof OPEN - 1 && !memcmp(text + lead, OPEN, sizeof OPEN - 1);
            if (opened_here || prompt_opens_think(prompt)) {
                /* unterminated reasoning (generation stopped inside it) */
                const char *r = opened_here ? text + lead + sizeof OPEN - 1 : text;
                size_t rn = len - (size_t)(r - text);
                while (rn > 0 && *r == '\n') {
                    r++;
                    rn--;
                }
                reasoning = r;
                reasoning_len = rn;
                content = text + len;
                content_len = 0;
            }
        }
        while (content_len > 0 && *content == '\n') {
            content++;
            content_len--;
        }
    }
    out->content = dup_range(content, content_len);
    out->content_len = content_len;
    if (reasoning) {
        out->reasoning = dup_range(reasoning, reasoning_len);
        out->reasoning_len = reasoning_len;
        out->has_reasoning = 1;
    }
    if (!out->content || (reasoning && !out->reasoning)) {
        pocketllm_chat_split_free(out);
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "split reasoning: out of memory");
    }
    return POCKETLLM_OK;
}

void pocketllm_chat_split_free(pocketllm_chat_split *s) {
    if (!s) return;
    free(s->content);
    free(s->reasoning);
    memset(s, 0, sizeof *s);
}
