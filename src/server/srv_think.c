/*
 * srv_think.c -- the streaming reasoning split of srv_think.h.
 */
#include "srv_think.h"

#include <string.h>

void srv_think_init(srv_think *th, const pocketllm_chat_template *t, const char *prompt) {
    memset(th, 0, sizeof *th);
    th->t = t;
    th->prompt = prompt;
}

void srv_think_free(srv_think *th) {
    srv_buf_free(&th->text);
    srv_buf_free(&th->sent_r);
    srv_buf_free(&th->sent_c);
}

/* Length of the end of s[0..n) that is a proper prefix of tag. */
static size_t tag_tail(const char *s, size_t n, const char *tag) {
    const size_t t = strlen(tag);
    for (size_t k = t - 1 < n ? t - 1 : n; k > 0; k--)
        if (memcmp(s + n - k, tag, k) == 0) return k;
    return 0;
}

static size_t stable_len(const char *s, size_t n, bool reasoning) {
    size_t a = tag_tail(s, n, "</think>"), b = tag_tail(s, n, "<think>");
    n -= a > b ? a : b;
    if (reasoning)
        while (n > 0 && s[n - 1] == '\n') n--;
    return srv_utf8_boundary(s, n);
}

/* Hand out the part of now[0..n) past what was sent, when what was sent is
 * still its beginning (a split that changed its mind sends nothing more). */
static void emit(srv_buf *sent, const char *now, size_t n, srv_buf *out) {
    if (n <= sent->n || (sent->n && memcmp(sent->p, now, sent->n) != 0)) return;
    srv_buf_add(out, now + sent->n, n - sent->n);
    srv_buf_add(sent, now + sent->n, n - sent->n);
}

pocketllm_status srv_think_push(srv_think *th, const char *s, size_t n, bool final, srv_buf *r, srv_buf *c) {
    if (!srv_buf_add(&th->text, s, n)) return POCKETLLM_ERR_NO_MEMORY;
    pocketllm_chat_split sp;
    pocketllm_status st = pocketllm_chat_split_reasoning(th->t, th->prompt, th->text.p, th->text.n, &sp);
    if (st) return st;
    size_t rn = sp.reasoning ? sp.reasoning_len : 0, cn = sp.content_len;
    if (!final) {
        /* reasoning before a closing tag is complete */
        if (!memmem(th->text.p, th->text.n, "</think>", 8)) rn = stable_len(sp.reasoning ? sp.reasoning : "", rn, true);
        cn = stable_len(sp.content, cn, false);
        /* leading whitespace may still turn out to come before "<think>" */
        size_t ws = 0;
        while (ws < cn && strchr(" \t\r\n", sp.content[ws])) ws++;
        if (ws == cn && th->sent_c.n == 0) cn = 0;
    }
    if (rn) emit(&th->sent_r, sp.reasoning, rn, r);
    if (cn) emit(&th->sent_c, sp.content, cn, c);
    pocketllm_chat_split_free(&sp);
    return POCKETLLM_OK;
}
