/*
 * test_server_text.c -- the server's text rules: UTF-8 boundaries and
 * sanitising, the stop-string filter (a stop string never reaches the
 * output, not even in part, whatever the pieces; releases never cut a
 * character), the streaming reasoning split (the streamed pieces add up to
 * the chat module's split of the whole reply, for every way of cutting the
 * reply), and log-probabilities.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pltest.h"
#include "srv_logprobs.h"
#include "srv_stop.h"
#include "srv_text.h"
#include "srv_think.h"

static void test_utf8(void) {
    CHECK(srv_utf8_valid("abc", 3));
    CHECK(srv_utf8_valid("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9));
    CHECK(!srv_utf8_valid("\xc3", 1));
    CHECK(!srv_utf8_valid("\x80", 1));
    CHECK(!srv_utf8_valid("\xed\xa0\x80", 3)); /* a surrogate */
    CHECK(!srv_utf8_valid("\xc0\xaf", 2));     /* overlong */
    CHECK(!srv_utf8_valid("a\0b", 3));
    CHECK_EQ_U64(srv_utf8_boundary("ab\xe2\x82", 4), 2);
    CHECK_EQ_U64(srv_utf8_boundary("ab\xe2\x82\xac", 5), 5);
    CHECK_EQ_U64(srv_utf8_boundary("ab\xf0", 3), 2);
    CHECK_EQ_U64(srv_utf8_boundary("ab\xff", 3), 3);     /* invalid: a character of its own */
    CHECK_EQ_U64(srv_utf8_boundary("ab\xe0\x80", 4), 4); /* not a prefix of any character */
    srv_buf b = {0};
    CHECK(srv_buf_add_utf8(&b, "a\xff" "b\xc3", 4));
    CHECK_STR(b.p, "a\xef\xbf\xbd" "b\xef\xbf\xbd");
    srv_buf_free(&b);
}

/* Push `text` through a filter in pieces given by cuts; check each release. */
static void run_stop(const char *text, char *const *stops, size_t n_stops, unsigned seed, const char *want) {
    srv_stop st;
    srv_stop_init(&st, stops, n_stops);
    srv_buf out = {0};
    srv_buf_add(&out, "", 0);
    const size_t len = strlen(text);
    size_t at = 0;
    srand(seed);
    while (at < len && !st.matched) {
        size_t k = 1 + (size_t)rand() % 4;
        if (k > len - at) k = len - at;
        size_t before = out.n;
        srv_stop_push(&st, text + at, k, &out);
        at += k;
        /* what was released so far is the start of the answer and ends on
         * a character boundary */
        CHECK_MSG(out.n <= strlen(want) && memcmp(out.p, want, out.n) == 0, "'%s' is not a start of '%s'", out.p, want);
        CHECK(srv_utf8_boundary(out.p, out.n) == out.n);
        (void)before;
    }
    srv_stop_flush(&st, &out);
    CHECK_MSG(strcmp(out.p, want) == 0, "'%s' != '%s' (seed %u)", out.p, want, seed);
    srv_stop_free(&st);
    srv_buf_free(&out);
}

static void test_stop(void) {
    char *one[] = {"END"};
    char *two[] = {"stop here", "\xc3\xa9!"};
    char *none[] = {NULL};
    for (unsigned seed = 1; seed <= 50; seed++) {
        run_stop("abcENDxyz", one, 1, seed, "abc");
        run_stop("abcENxyzEN", one, 1, seed, "abcENxyzEN");
        run_stop("ENDabc", one, 1, seed, "");
        run_stop("caf\xc3\xa9 is \xc3\xa9!x stop here", two, 2, seed, "caf\xc3\xa9 is ");
        run_stop("we stop here \xc3\xa9!", two, 2, seed, "we ");
        run_stop("\xe2\x82\xac\xe2\x82\xac\xc3\xa9", two, 2, seed, "\xe2\x82\xac\xe2\x82\xac\xc3\xa9");
        run_stop("plain text", none, 0, seed, "plain text");
    }
    /* the hold-back is at most the longest stop string less one byte */
    srv_stop st;
    srv_stop_init(&st, one, 1);
    srv_buf out = {0};
    srv_stop_push(&st, "abcdEN", 6, &out);
    CHECK_EQ_U64(out.n, 4);
    CHECK_EQ_U64(st.held.n, 2);
    srv_stop_free(&st);
    srv_buf_free(&out);
}

/* Stream `reply` cut every `step` bytes; the pieces must add up to the
 * one-shot split, and each piece end on a character boundary. */
static void run_think(const char *prompt, const char *reply, size_t step) {
    srv_think th;
    srv_think_init(&th, NULL, prompt);
    srv_buf r = {0}, c = {0};
    srv_buf_add(&r, "", 0);
    srv_buf_add(&c, "", 0);
    const size_t len = strlen(reply);
    for (size_t at = 0; at < len; at += step) {
        size_t k = len - at < step ? len - at : step;
        size_t rn = r.n, cn = c.n;
        CHECK(srv_think_push(&th, reply + at, k, false, &r, &c) == POCKETLLM_OK);
        CHECK(srv_utf8_boundary(r.p, r.n) == r.n && srv_utf8_boundary(c.p, c.n) == c.n);
        (void)rn;
        (void)cn;
    }
    CHECK(srv_think_push(&th, "", 0, true, &r, &c) == POCKETLLM_OK);
    pocketllm_chat_split sp;
    CHECK(pocketllm_chat_split_reasoning(NULL, prompt, reply, len, &sp) == POCKETLLM_OK);
    CHECK_MSG(r.n == (sp.reasoning ? sp.reasoning_len : 0) && (!r.n || !memcmp(r.p, sp.reasoning, r.n)),
              "reasoning '%s' != '%s' (step %zu)", r.p, sp.reasoning ? sp.reasoning : "", step);
    CHECK_MSG(c.n == sp.content_len && !memcmp(c.p, sp.content, c.n), "content '%s' != '%s' (step %zu)", c.p, sp.content,
              step);
    pocketllm_chat_split_free(&sp);
    srv_think_free(&th);
    srv_buf_free(&r);
    srv_buf_free(&c);
}

static void test_think(void) {
    const char *replies[] = {
        "<think>\nLet me think.\n\n</think>\n\nHello!",
        "\n<think>a<b</think>c",
        "Hello <b>world</b> and </thin",
        "no tags at all \xe2\x82\xac",
        "<think>\nstill thinking\n",
        "<think>r\xc3\xa9</think>\n\n\xf0\x9f\x98\x80 done",
    };
    for (size_t i = 0; i < sizeof replies / sizeof *replies; i++)
        for (size_t step = 1; step <= 9; step++) run_think(NULL, replies[i], step);
    /* a prompt that opened the block: the reply starts inside it */
    for (size_t step = 1; step <= 5; step++) {
        run_think("<|im_start|>assistant\n<think>\n", "reasoning here\n</think>\n\nanswer", step);
        run_think("<|im_start|>assistant\n<think>\n\n</think>\n\n", "just the answer", step);
    }
}

static void test_logprobs(void) {
    float logits[6] = {1.0f, 3.0f, -2.0f, 3.0f, 0.5f, 2.0f};
    srv_logprob lp;
    srv_logprobs_compute(logits, 6, 4, 3, &lp);
    double sum = 0;
    for (int i = 0; i < 6; i++) sum += exp((double)logits[i]);
    CHECK(fabs(lp.lp - (0.5 - log(sum))) < 1e-5);
    CHECK(lp.n_top == 3);
    CHECK(lp.top_id[0] == 1 && lp.top_id[1] == 3 && lp.top_id[2] == 5); /* ties: the lower id first */
    CHECK(fabs(lp.top_lp[0] - (3.0 - log(sum))) < 1e-5);
    srv_logprobs_compute(logits, 6, 0, 0, &lp);
    CHECK(lp.n_top == 0);
}

int main(void) {
    test_utf8();
    test_stop();
    test_think();
    test_logprobs();
    TEST_DONE();
}
