/*
 * srv_http.h -- the HTTP side of `pocketllm serve`, on libmicrohttpd: one
 * thread per connection, routing, the API key, the body limit, and the
 * answer to a completion request (whole, or streamed as server-sent
 * events).  The protocol itself lives in srv_request/srv_response.
 */
#ifndef PL_SRV_HTTP_H
#define PL_SRV_HTTP_H

#include <microhttpd.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "srv_model.h"
#include "srv_sched.h"

typedef struct srv_http_params {
    const char *host;        /* address to bind (default 127.0.0.1) */
    uint16_t port;           /* 0: any free port (see srv_http_port) */
    const char *api_key;     /* NULL: no key needed */
    size_t max_body;         /* bytes */
    size_t max_upload;       /* bytes of an uploaded file (POST /v1/audio/transcriptions) */
    uint32_t max_connections;
    int keepalive_ms;        /* SSE comment interval while nothing else is sent */
    bool log;                /* one line per request on stderr */
    int32_t pooling;         /* POST /v1/embeddings: --pooling, else the model's (pocketllm_pooling) */
    struct srv_metrics *metrics; /* counters every request updates (srv_metrics.h); NULL: none */
    bool metrics_endpoint;   /* serve GET /metrics (--metrics); else it is a 404 */
    bool no_webui;           /* --no-webui: no chat page at / (a 404 there) */
} srv_http_params;

typedef struct srv_http srv_http;

/* Bind and start serving; *err gets a message on failure (caller frees). */
bool srv_http_start(const srv_http_params *p, const srv_model *m, srv_sched *s, srv_http **out, char **err);
uint16_t srv_http_port(const srv_http *h);
/* Stop: requests in progress are cancelled and their connections closed. */
void srv_http_stop(srv_http *h);

/* ---- shared by the srv_http*.c files ---------------------------------------- */

/* How long one poll of a task waits for news (ms): bounds how late a stop
 * or a gone client is noticed. */
#define SRV_HTTP_POLL_MS 100

struct srv_http {
    srv_http_params p;
    const srv_model *m;
    srv_sched *s;
    struct MHD_Daemon *d;
    atomic_bool stopping;
    uint16_t port;
};

/* Whether the client's side of the connection has closed. */
bool srv_http_client_gone(struct MHD_Connection *conn);
/* Answer with a JSON body (taken over; NULL: a 500). */
enum MHD_Result srv_http_reply_json(struct MHD_Connection *conn, unsigned status, char *json);
/* Poll task t into *u until it is done or has failed: true.  False when
 * the server stops (the task released, *u freed, a 503 answered into *ret)
 * or the client has gone (released and freed, *ret MHD_NO: nobody to
 * answer, and dropping the task cancels it); *status is the HTTP status. */
bool srv_http_wait(srv_http *h, struct MHD_Connection *conn, srv_task *t, srv_update *u, unsigned *status,
                   enum MHD_Result *ret);
/* Run a parsed completion request to its answer (whole or streamed). */
enum MHD_Result srv_http_generate(srv_http *h, struct MHD_Connection *conn, srv_request *req, unsigned *status);
/* Answer POST /v1/embeddings from its body (srv_http_embed.c). */
enum MHD_Result srv_http_embeddings(srv_http *h, struct MHD_Connection *conn, const char *body, size_t len,
                                    unsigned *status);
/* Run a parsed transcription request to its answer (srv_http_asr.c). */
enum MHD_Result srv_http_transcribe(srv_http *h, struct MHD_Connection *conn, srv_request *req, unsigned *status);

#endif
