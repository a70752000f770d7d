/*
 * srv_http_asr.c -- answering POST /v1/audio/transcriptions once its form
 * is parsed (srv_transcribe.h): the request goes to the scheduler as one
 * job (srv_sched.c says what it means for the other sequences), the
 * connection waits for it, polling so that a client that hangs up cancels
 * it, and the transcript goes back in the format asked for.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "srv_http.h"
#include "srv_response.h"
#include "srv_transcribe.h"

static enum MHD_Result reply_body(struct MHD_Connection *conn, unsigned status, char *body, size_t len,
                                  const char *content_type, uint32_t n_cut) {
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", content_type);
    /* the text formats cannot say it in the body: pieces whose generation
     * was cut at the token bound (a repetition loop) */
    char cut[16];
    snprintf(cut, sizeof cut, "%u", n_cut);
    MHD_add_response_header(r, "X-Transcript-Cut-Pieces", cut);
    enum MHD_Result ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

enum MHD_Result srv_http_transcribe(srv_http *h, struct MHD_Connection *conn, srv_request *req, unsigned *status) {
    srv_error e;
    srv_task *t = srv_sched_submit(h->s, req, &e);
    if (!t) {
        srv_request_free(req);
        *status = (unsigned)e.http;
        return srv_http_reply_json(conn, (unsigned)e.http, srv_json_error(&e));
    }
    srv_update u;
    srv_update_init(&u, 1);
    enum MHD_Result ret;
    if (!srv_http_wait(h, conn, t, &u, status, &ret)) return ret;
    pocketllm_transcript *tr = u.failed ? NULL : srv_task_take_transcript(h->s, t);
    if (!tr) {
        srv_fail(&e, 500, NULL, "%s", u.failed ? u.error : "the transcription left no transcript");
        *status = 500;
        ret = srv_http_reply_json(conn, 500, srv_json_error(&e));
    } else {
        char *body = NULL;
        size_t len = 0;
        const char *ct = NULL;
        if (!srv_transcription_reply(srv_task_request(t), tr, &body, &len, &ct)) {
            *status = 500;
            ret = srv_http_reply_json(conn, 500, NULL); /* (out of memory) */
        } else {
            *status = 200;
            ret = reply_body(conn, 200, body, len, ct, tr->n_cut);
        }
        pocketllm_transcript_free(tr);
    }
    srv_update_free(&u);
    srv_sched_release(h->s, t);
    return ret;
}
