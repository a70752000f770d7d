/*
 * srv_http_embed.c -- answering POST /v1/embeddings: parse the body
 * (srv_embed.h; every refusal a 400 before anything queues), hand the
 * request to the scheduler as one job (srv_sched.c runs it one input per
 * step on a free sequence), wait for it polling -- a client that hangs up
 * cancels it -- and answer with OpenAI's list of embeddings.
 */
#include <stdlib.h>

#include "srv_embed.h"
#include "srv_http.h"
#include "srv_metrics.h"
#include "srv_response.h"

enum MHD_Result srv_http_embeddings(srv_http *h, struct MHD_Connection *conn, const char *body, size_t len,
                                    unsigned *status) {
    srv_error e;
    srv_embd *em = NULL;
    if (!srv_embd_parse(h->m, h->p.pooling, body, len, &em, &e)) {
        *status = (unsigned)e.http;
        return srv_http_reply_json(conn, (unsigned)e.http, srv_json_error(&e));
    }
    const size_t n_inputs = em->n_inputs;
    const uint64_t n_tokens = em->n_tokens;
    srv_task *t = srv_sched_submit_embed(h->s, em, &e);
    if (!t) {
        srv_embd_free(em);
        *status = (unsigned)e.http;
        return srv_http_reply_json(conn, (unsigned)e.http, srv_json_error(&e));
    }
    srv_update u;
    srv_update_init(&u, 1);
    enum MHD_Result ret;
    if (!srv_http_wait(h, conn, t, &u, status, &ret)) return ret;
    if (u.failed) {
        srv_fail(&e, 500, NULL, "%s", u.error);
        *status = 500;
        ret = srv_http_reply_json(conn, 500, srv_json_error(&e));
    } else {
        *status = 200;
        ret = srv_http_reply_json(conn, 200, srv_embd_reply(srv_task_embd(t), h->m->id));
        srv_metrics_embeddings(h->p.metrics, n_inputs, n_tokens);
    }
    srv_update_free(&u);
    srv_sched_release(h->s, t);
    return ret;
}
