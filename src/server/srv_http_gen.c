/*
 * srv_http_gen.c -- answering a completion request: submit it to the
 * scheduler, then either wait for the whole answer (polling, so that a
 * client that hangs up cancels its request), or stream it as server-sent
 * events: one chunk per piece of new text (reasoning_content split off
 * for chat), keep-alive comments while nothing comes (long prefills, a
 * queue), the finish_reason of each choice, the usage chunk when asked
 * for, and "data: [DONE]".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "srv_http.h"
#include "srv_metrics.h"
#include "srv_response.h"
#include "srv_think.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* ---- the whole answer ----------------------------------------------------------- */

static enum MHD_Result whole(srv_http *h, struct MHD_Connection *conn, srv_task *t, unsigned *status) {
    const srv_request *r = srv_task_request(t);
    srv_update u;
    srv_update_init(&u, r->n_prompts * r->n);
    srv_error e;
    enum MHD_Result ret;
    if (!srv_http_wait(h, conn, t, &u, status, &ret)) return ret;
    if (u.failed) {
        srv_fail(&e, 500, NULL, "%s", u.error);
        *status = 500;
        ret = srv_http_reply_json(conn, 500, srv_json_error(&e));
    } else {
        srv_reply rp;
        srv_reply_init(&rp, h->m, r);
        *status = 200;
        ret = srv_http_reply_json(conn, 200, srv_json_final(&rp, &u));
    }
    srv_update_free(&u);
    srv_sched_release(h->s, t);
    return ret;
}

/* ---- the stream ------------------------------------------------------------------ */

typedef struct stream {
    srv_http *h;
    struct MHD_Connection *conn;
    srv_task *t;
    srv_reply rp;
    srv_update u;
    srv_buf out;            /* SSE bytes not yet handed to the library */
    size_t out_at;
    srv_think *think;       /* per choice (chat) */
    pocketllm_tool_parser **tools; /* per choice, when tools are offered: content -> calls */
    bool *role_sent, *finish_sent;
    uint64_t *text_off;     /* per choice: bytes of text sent (completions' logprobs) */
    bool ended;
    double last_sent, t0;
} stream;

static void sse_data(stream *st, char *json) {
    if (!json) {
        st->out.oom = true;
        return;
    }
    srv_buf_str(&st->out, "data: ");
    srv_buf_str(&st->out, json);
    srv_buf_str(&st->out, "\n\n");
    free(json);
}

/* A tool parser's event as a chunk of choice i. */
typedef struct tool_ctx {
    stream *st;
    size_t i;
} tool_ctx;

static void tool_event(void *user, const pocketllm_tool_event *ev) {
    tool_ctx *tc = user;
    stream *st = tc->st;
    srv_chunk ch = {.index = tc->i, .call = -1, .role = !st->role_sent[tc->i]};
    if (ev->kind == POCKETLLM_TOOL_CONTENT) {
        ch.content = ev->text, ch.content_len = ev->len;
    } else if (ev->kind == POCKETLLM_TOOL_CALL_START) {
        ch.call = ev->index, ch.call_id = ev->id, ch.call_name = ev->name, ch.args = "", ch.args_len = 0;
    } else {
        if (!ev->len) return;
        ch.call = ev->index, ch.args = ev->text, ch.args_len = ev->len;
    }
    if (ch.role && ev->kind != POCKETLLM_TOOL_CONTENT) ch.content = NULL; /* the role's chunk: content null */
    sse_data(st, srv_json_chunk(&st->rp, &ch));
    st->role_sent[tc->i] = true;
}

/* The chunks of choice i for what the last poll brought. */
static void format_choice(stream *st, size_t i) {
    srv_choice_update *c = &st->u.c[i];
    const srv_request *r = st->rp.r;
    const bool finishing = c->finished && !st->finish_sent[i];
    srv_buf rs = {0}, cs = {0};
    srv_chunk ch = {.index = i, .lp = c->lp, .n_lp = c->n_lp, .text_offset = st->text_off[i], .call = -1};
    const char *finish = c->finish ? c->finish : "stop";
    if (r->kind == SRV_CHAT) {
        srv_think_push(&st->think[i], c->text.p ? c->text.p : "", c->text.n, finishing, &rs, &cs);
        ch.reasoning = rs.p, ch.reasoning_len = rs.n;
        ch.content = cs.p ? cs.p : "", ch.content_len = cs.n;
        ch.role = !st->role_sent[i];
        if (st->tools && st->tools[i]) {
            /* the content goes through the tool parser: its events become
             * content and tool-call chunks (the reasoning and log-probs
             * still go in this chunk) */
            tool_ctx tc = {st, i};
            if (ch.role || ch.reasoning_len || ch.n_lp) {
                srv_chunk head = ch;
                head.content = "", head.content_len = 0;
                sse_data(st, srv_json_chunk(&st->rp, &head));
                st->role_sent[i] = true;
            }
            pocketllm_tool_parser_feed(st->tools[i], cs.p ? cs.p : "", cs.n, tool_event, &tc);
            if (finishing) {
                if (!pocketllm_tool_parser_finish(st->tools[i], tool_event, &tc)) {
                    /* a botched call: what no event carried goes as text */
                    size_t n = 0;
                    const char *rest = pocketllm_tool_parser_unsent(st->tools[i], &n);
                    if (n) tool_event(&tc, &(pocketllm_tool_event){.kind = POCKETLLM_TOOL_CONTENT, .text = rest, .len = n});
                    if (!strcmp(finish, "tool_calls")) finish = "stop";
                } else if (pocketllm_tool_parser_n_calls(st->tools[i]) > 0 && strcmp(finish, "length")) {
                    finish = "tool_calls";
                }
            }
            ch.role = false, ch.reasoning_len = 0, ch.content_len = 0, ch.n_lp = 0;
        }
    } else if (r->echo && !st->role_sent[i]) {
        /* echo: the prompt comes first, in the first chunk */
        const srv_prompt *p = &r->prompts[i / r->n];
        srv_buf_add(&cs, p->text, p->text_len);
        srv_buf_add(&cs, c->text.p ? c->text.p : "", c->text.n);
        ch.content = cs.p ? cs.p : "", ch.content_len = cs.n;
        ch.role = true; /* (no role in completions: it only marks the first chunk) */
    } else {
        ch.content = c->text.p ? c->text.p : "", ch.content_len = c->text.n;
    }
    if (ch.role || ch.reasoning_len || ch.content_len || ch.n_lp) {
        sse_data(st, srv_json_chunk(&st->rp, &ch));
        st->role_sent[i] = true;
    }
    st->text_off[i] += c->text.n;
    if (finishing) {
        srv_chunk fin = {.index = i, .content = "", .finish = finish, .call = -1};
        sse_data(st, srv_json_chunk(&st->rp, &fin));
        st->finish_sent[i] = true;
    }
    srv_buf_free(&rs);
    srv_buf_free(&cs);
}

/* Turn the last poll into SSE bytes. */
static void format_update(stream *st) {
    if (st->u.failed) {
        srv_error e;
        srv_fail(&e, 500, NULL, "%s", st->u.error);
        sse_data(st, srv_json_error(&e));
        srv_buf_str(&st->out, "data: [DONE]\n\n");
        st->ended = true;
        return;
    }
    for (size_t i = 0; i < st->u.n_choices; i++) format_choice(st, i);
    if (st->u.done) {
        if (st->rp.r->include_usage) sse_data(st, srv_json_usage_chunk(&st->rp, &st->u));
        srv_buf_str(&st->out, "data: [DONE]\n\n");
        st->ended = true;
    }
    /* keep the counts, drop the pieces already formatted */
    srv_update_clear(&st->u);
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max) {
    stream *st = cls;
    for (;;) {
        if (st->out.oom) return MHD_CONTENT_READER_END_WITH_ERROR;
        if (st->out_at < st->out.n) {
            size_t k = st->out.n - st->out_at;
            if (k > max) k = max;
            memcpy(buf, st->out.p + st->out_at, k);
            st->out_at += k;
            if (st->out_at == st->out.n) {
                srv_buf_clear(&st->out);
                st->out_at = 0;
            }
            st->last_sent = now_ms();
            return (ssize_t)k;
        }
        if (st->ended) return MHD_CONTENT_READER_END_OF_STREAM;
        if (atomic_load(&st->h->stopping) || srv_http_client_gone(st->conn)) return MHD_CONTENT_READER_END_WITH_ERROR;
        if (srv_sched_poll(st->h->s, st->t, SRV_HTTP_POLL_MS, &st->u)) format_update(st);
        else if (now_ms() - st->last_sent >= st->h->p.keepalive_ms) srv_buf_str(&st->out, ": keep-alive\n\n");
    }
}

static void stream_free(void *cls) {
    stream *st = cls;
    /* (499: the client went away before the end) */
    srv_metrics_request(st->h->p.metrics, st->rp.r->kind == SRV_CHAT ? "/v1/chat/completions" : "/v1/completions",
                        st->ended ? 200 : 499, (now_ms() - st->t0) / 1e3);
    if (st->h->p.log)
        fprintf(stderr, "pocketllm serve: POST %s 200 %.3fs (stream%s)\n",
                st->rp.r->kind == SRV_CHAT ? "/v1/chat/completions" : "/v1/completions", (now_ms() - st->t0) / 1e3,
                st->ended ? "" : ", cut short");
    /* a stream that ends early (the client left) cancels its request */
    srv_sched_release(st->h->s, st->t);
    for (size_t i = 0; st->think && i < st->u.n_choices; i++) srv_think_free(&st->think[i]);
    free(st->think);
    for (size_t i = 0; st->tools && i < st->u.n_choices; i++) pocketllm_tool_parser_free(st->tools[i]);
    free(st->tools);
    free(st->role_sent);
    free(st->finish_sent);
    free(st->text_off);
    srv_update_free(&st->u);
    srv_buf_free(&st->out);
    free(st);
}

static enum MHD_Result streamed(srv_http *h, struct MHD_Connection *conn, srv_task *t, unsigned *status) {
    const srv_request *r = srv_task_request(t);
    const size_t n = r->n_prompts * r->n;
    stream *st = calloc(1, sizeof *st);
    if (st) {
        st->h = h;
        st->conn = conn;
        st->t = t;
        srv_reply_init(&st->rp, h->m, r);
        srv_update_init(&st->u, n);
        st->think = calloc(n, sizeof *st->think);
        st->role_sent = calloc(n, sizeof *st->role_sent);
        st->finish_sent = calloc(n, sizeof *st->finish_sent);
        st->text_off = calloc(n, sizeof *st->text_off);
        st->last_sent = st->t0 = now_ms();
    }
    if (!st || st->u.n_choices != n || !st->think || !st->role_sent || !st->finish_sent || !st->text_off) {
        if (st) stream_free(st);
        else srv_sched_release(h->s, t);
        *status = 500;
        return MHD_NO;
    }
    for (size_t i = 0; i < n; i++) srv_think_init(&st->think[i], h->m->tmpl, r->prompts[i / r->n].text);
    const char *reply_tools = r->kind == SRV_CHAT ? srv_reply_tools(r) : NULL;
    if (reply_tools) {
        st->tools = calloc(n, sizeof *st->tools);
        for (size_t i = 0; st->tools && i < n; i++)
            if (pocketllm_tool_parser_new(h->m->tmpl, reply_tools, strlen(reply_tools),
                                          srv_reply_call_seed(&st->rp, i), &st->tools[i]))
                break;
    }
    struct MHD_Response *resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, stream_read, st, stream_free);
    if (!resp) {
        stream_free(st);
        *status = 500;
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", "text/event-stream");
    MHD_add_response_header(resp, "Cache-Control", "no-cache");
    enum MHD_Result ret = MHD_queue_response(conn, 200, resp);
    MHD_destroy_response(resp);
    *status = 0; /* logged when the stream ends */
    return ret;
}

enum MHD_Result srv_http_generate(srv_http *h, struct MHD_Connection *conn, srv_request *req, unsigned *status) {
    srv_error e;
    srv_task *t = srv_sched_submit(h->s, req, &e);
    if (!t) {
        srv_request_free(req);
        *status = (unsigned)e.http;
        char *json = srv_json_error(&e);
        return srv_http_reply_json(conn, (unsigned)e.http, json);
    }
    return srv_task_request(t)->stream ? streamed(h, conn, t, status) : whole(h, conn, t, status);
}
