/*
 * srv_http.c -- the libmicrohttpd daemon of `pocketllm serve`: binding,
 * routing (GET / and /ui/...: the chat page, srv_webui.h; GET /health, GET /v1/models[/ID], POST /v1/chat/completions,
 * POST /v1/completions, POST /v1/audio/transcriptions, POST /v1/embeddings,
 * GET /metrics with --metrics), the API key (401),
 * the body limits (413: --max-body for JSON, --max-upload-mb for an
 * uploaded file), and the errors of srv_request as JSON.  An upload's
 * multipart body goes through libmicrohttpd's post processor as it
 * arrives (srv_upload.h), never whole into one buffer first.  Each
 * connection has its own thread, so a handler may block while its request
 * runs (srv_http_gen.c, srv_http_asr.c).
 */
#include "srv_http.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "srv_metrics.h"
#include "srv_response.h"
#include "srv_text.h"
#include "srv_transcribe.h"
#include "srv_upload.h"
#include "srv_webui.h"

#define ASR_URL "/v1/audio/transcriptions"
#define EMBED_URL "/v1/embeddings"
/* what a form may hold beside its file: every other field at its limit */
#define UPLOAD_SLACK (SRV_UPLOAD_MAX_PARTS * SRV_UPLOAD_MAX_FIELD + ((size_t)64 << 10))

/* One request on a connection, from its headers to its answer. */
typedef struct conn_state {
    srv_buf body;
    bool too_large;
    bool upload;        /* a multipart form (ASR_URL), fed to up as it comes */
    size_t body_bytes;
    srv_upload up;
    double t0;
} conn_state;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

bool srv_http_client_gone(struct MHD_Connection *conn) {
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci) return false;
    struct pollfd pfd = {.fd = ci->connect_fd, .events = POLLIN | POLLRDHUP};
    if (poll(&pfd, 1, 0) <= 0) return false;
    if (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) return true;
    /* readable: a closed socket reads 0 bytes (pipelined data is left alone) */
    char c;
    return recv(ci->connect_fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

enum MHD_Result srv_http_reply_json(struct MHD_Connection *conn, unsigned status, char *json) {
    if (!json) {
        static const char oom[] = "{\"error\":{\"message\":\"out of memory\",\"type\":\"server_error\",\"param\":null,\"code\":null}}";
        json = strdup(oom);
        status = 500;
        if (!json) return MHD_NO;
    }
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(json), json, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(json);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", "application/json");
    enum MHD_Result ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result reply_error(struct MHD_Connection *conn, const srv_error *e) {
    char *json = srv_json_error(e);
    if (e->http == 401 && json) {
        struct MHD_Response *r = MHD_create_response_from_buffer(strlen(json), json, MHD_RESPMEM_MUST_FREE);
        if (!r) {
            free(json);
            return MHD_NO;
        }
        MHD_add_response_header(r, "Content-Type", "application/json");
        MHD_add_response_header(r, "WWW-Authenticate", "Bearer");
        enum MHD_Result ret = MHD_queue_response(conn, 401, r);
        MHD_destroy_response(r);
        return ret;
    }
    return srv_http_reply_json(conn, (unsigned)e->http, json);
}

/* Whether the Authorization header carries the key (in constant time). */
static bool authorized(const srv_http *h, struct MHD_Connection *conn) {
    if (!h->p.api_key) return true;
    const char *v = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
    if (!v || strncmp(v, "Bearer ", 7) != 0) return false;
    v += 7;
    const char *k = h->p.api_key;
    size_t nv = strlen(v), nk = strlen(k);
    unsigned diff = nv != nk;
    for (size_t i = 0; i < nk; i++) diff |= (unsigned char)k[i] ^ (unsigned char)(i < nv ? v[i] : 0);
    return diff == 0;
}

static enum MHD_Result reply_health(srv_http *h, struct MHD_Connection *conn) {
    srv_sched_stats st;
    srv_sched_stats_get(h->s, &st);
    srv_buf b = {0};
    srv_buf_printf(&b,
                   "{\"status\":\"ok\",\"n_ctx\":%u,\"sequences_busy\":%u,\"parallel\":%u,\"requests_waiting\":%u,\"queue\":%u,"
                   "\"forward_passes\":%llu,\"tokens_evaluated\":%llu,\"most_sequences_in_a_pass\":%u,"
                   "\"modalities\":{\"vision\":%s,\"audio\":%s},",
                   h->m->n_ctx, st.active, st.parallel, st.queued, st.queue_cap, (unsigned long long)st.passes,
                   (unsigned long long)st.tokens, st.most_sequences, h->m->has_vision ? "true" : "false",
                   h->m->has_audio ? "true" : "false");
    /* speculative decoding: how (lookup's n-gram, or the draft model's
     * name), what was drafted, what was kept, their ratio (null before any
     * draft); null without --lookup or --draft */
    if (st.lookup || st.draft_model) {
        srv_buf_printf(&b, "\"speculative\":{\"lookup\":%u,\"draft_model\":", st.lookup);
        cJSON *jn = st.draft_model ? cJSON_CreateString(st.draft_model) : NULL;
        char *name = jn ? cJSON_PrintUnformatted(jn) : NULL;
        srv_buf_str(&b, name ? name : "null");
        cJSON_free(name);
        cJSON_Delete(jn);
        srv_buf_printf(&b, ",\"drafted\":%llu,\"accepted\":%llu,\"acceptance_rate\":", (unsigned long long)st.drafted,
                       (unsigned long long)st.accepted);
        if (st.drafted) srv_buf_printf(&b, "%.6f}}", (double)st.accepted / (double)st.drafted);
        else srv_buf_printf(&b, "null}}");
    } else
        srv_buf_printf(&b, "\"speculative\":null}");
    return srv_http_reply_json(conn, 200, b.oom ? NULL : srv_buf_take(&b, NULL));
}

/* The Prometheus page (srv_metrics.h), in text format 0.0.4. */
static enum MHD_Result reply_metrics(srv_http *h, struct MHD_Connection *conn, unsigned *status) {
    srv_sched_stats st;
    srv_sched_stats_get(h->s, &st);
    char *text = srv_metrics_render(h->p.metrics, &st);
    struct MHD_Response *r = text ? MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE) : NULL;
    if (!r) {
        free(text);
        *status = 500;
        return srv_http_reply_json(conn, 500, NULL);
    }
    MHD_add_response_header(r, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
    enum MHD_Result ret = MHD_queue_response(conn, 200, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result route_get(srv_http *h, struct MHD_Connection *conn, const char *url, unsigned *status) {
    srv_error e;
    *status = 200;
    if (strcmp(url, "/health") == 0) return reply_health(h, conn);
    enum MHD_Result page;
    if (!h->p.no_webui && srv_webui_reply(conn, url, &page)) return page;
    if (!h->p.no_webui && strncmp(url, "/ui/", 4) == 0) { /* the page's files are public: no key asked for one */
        srv_fail(&e, 404, NULL, "the chat page has no file %.200s", url);
        *status = 404;
        return reply_error(conn, &e);
    }
    /* like /health, no key: a scraper reads counters, never content */
    if (strcmp(url, "/metrics") == 0 && h->p.metrics_endpoint && h->p.metrics) return reply_metrics(h, conn, status);
    if (!authorized(h, conn)) {
        srv_fail(&e, 401, NULL, "a valid API key is needed: send 'Authorization: Bearer KEY'");
    } else if (strcmp(url, "/v1/models") == 0) {
        return srv_http_reply_json(conn, 200, srv_json_models(h->m));
    } else if (strncmp(url, "/v1/models/", 11) == 0) {
        if (strcmp(url + 11, h->m->id) == 0) {
            char *list = srv_json_models(h->m);
            /* the one entry of the list */
            char *one = NULL;
            const char *a = list ? strchr(list, '[') : NULL;
            if (a) {
                size_t n = strlen(a + 1);
                one = n >= 2 ? strndup(a + 1, n - 2) : NULL;
            }
            free(list);
            return srv_http_reply_json(conn, 200, one);
        }
        srv_fail(&e, 404, "model", "no model '%.200s' here; this server serves '%.200s'", url + 11, h->m->id);
    } else if (strcmp(url, "/v1/chat/completions") == 0 || strcmp(url, "/v1/completions") == 0 ||
               strcmp(url, ASR_URL) == 0 || strcmp(url, EMBED_URL) == 0) {
        srv_fail(&e, 405, NULL, "%s takes POST", url);
    } else if (h->p.no_webui && (!strcmp(url, "/") || !strncmp(url, "/ui/", 4))) {
        srv_fail(&e, 404, NULL, "the web UI is off on this server (--no-webui)");
    } else {
        srv_fail(&e, 404, NULL, "no such endpoint: %.200s", url);
    }
    *status = (unsigned)e.http;
    return reply_error(conn, &e);
}

static void log_line(const srv_http *h, const char *method, const char *url, unsigned status, double t0) {
    /* streams log when they end (srv_http_gen.c) */
    if (status) srv_metrics_request(h->p.metrics, url, status, now_s() - t0);
    if (h->p.log && status) fprintf(stderr, "pocketllm serve: %s %s %u %.3fs\n", method, url, status, now_s() - t0);
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                               const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls) {
    srv_http *h = cls;
    conn_state *cs = *con_cls;
    srv_error e;
    unsigned status = 0;
    enum MHD_Result ret;
    if (!cs) {
        /* the headers: everything that needs no body is answered now */
        if (!(cs = calloc(1, sizeof *cs))) return MHD_NO;
        cs->t0 = now_s();
        *con_cls = cs;
        if (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0) {
            ret = route_get(h, conn, url, &status);
            log_line(h, method, url, status, cs->t0);
            return ret;
        }
        const bool asr = strcmp(url, ASR_URL) == 0;
        const bool known = strcmp(url, "/v1/chat/completions") == 0 || strcmp(url, "/v1/completions") == 0 || asr ||
                           strcmp(url, EMBED_URL) == 0;
        if (strcmp(method, "POST") != 0) srv_fail(&e, known || !strcmp(url, "/health") || !strncmp(url, "/v1/models", 10) ? 405 : 404, NULL, "%s %.200s is not served", method, url);
        else if (!known) srv_fail(&e, 404, NULL, "no such endpoint: %.200s", url);
        else if (!authorized(h, conn)) srv_fail(&e, 401, NULL, "a valid API key is needed: send 'Authorization: Bearer KEY'");
        else {
            const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
            if (asr) {
                if (cl && strtoull(cl, NULL, 10) > h->p.max_upload + UPLOAD_SLACK)
                    srv_fail(&e, 413, "file", "the upload is larger than the %zu MiB this server takes (--max-upload-mb)",
                             h->p.max_upload >> 20);
                else if ((cs->upload = srv_upload_begin(&cs->up, conn, h->p.max_upload, &e)))
                    return MHD_YES; /* read the form */
            } else if (cl && strtoull(cl, NULL, 10) > h->p.max_body) {
                srv_fail(&e, 413, NULL, "the body is larger than the %zu bytes this server takes", h->p.max_body);
            } else {
                return MHD_YES; /* read the body */
            }
        }
        log_line(h, method, url, (unsigned)e.http, cs->t0);
        return reply_error(conn, &e);
    }
    if (*upload_data_size && cs->upload) {
        cs->body_bytes += *upload_data_size;
        if (cs->body_bytes > h->p.max_upload + UPLOAD_SLACK) cs->too_large = true;
        if (!cs->too_large) srv_upload_feed(&cs->up, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (*upload_data_size) {
        if (!cs->too_large && cs->body.n + *upload_data_size <= h->p.max_body)
            srv_buf_add(&cs->body, upload_data, *upload_data_size);
        else
            cs->too_large = true; /* the rest is read and dropped */
        *upload_data_size = 0;
        return MHD_YES;
    }
    /* the whole body is here */
    if (cs->upload) {
        srv_request req;
        if (cs->too_large)
            srv_fail(&e, 413, "file", "the upload is larger than the %zu MiB this server takes (--max-upload-mb)",
                     h->p.max_upload >> 20);
        const bool ok = !cs->too_large && srv_upload_end(&cs->up, &e) && srv_transcription_parse(h->m, &cs->up, &req, &e);
        /* the form's bytes are no longer needed: the file is decoded */
        srv_upload_free(&cs->up);
        cs->upload = false;
        if (!ok) {
            log_line(h, method, url, (unsigned)e.http, cs->t0);
            return reply_error(conn, &e);
        }
        ret = srv_http_transcribe(h, conn, &req, &status);
        log_line(h, method, url, status, cs->t0);
        return ret;
    }
    if (cs->too_large || cs->body.oom) {
        srv_fail(&e, 413, NULL, "the body is larger than the %zu bytes this server takes", h->p.max_body);
        log_line(h, method, url, 413, cs->t0);
        return reply_error(conn, &e);
    }
    if (strcmp(url, EMBED_URL) == 0) {
        ret = srv_http_embeddings(h, conn, cs->body.p ? cs->body.p : "", cs->body.n, &status);
        log_line(h, method, url, status, cs->t0);
        return ret;
    }
    srv_request req;
    const srv_kind kind = strcmp(url, "/v1/chat/completions") == 0 ? SRV_CHAT : SRV_COMPLETION;
    if (!srv_request_parse(h->m, kind, cs->body.p ? cs->body.p : "", cs->body.n, &req, &e)) {
        log_line(h, method, url, (unsigned)e.http, cs->t0);
        return reply_error(conn, &e);
    }
    srv_buf_free(&cs->body);
    ret = srv_http_generate(h, conn, &req, &status);
    log_line(h, method, url, status, cs->t0);
    return ret;
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe) {
    conn_state *cs = *con_cls;
    if (!cs) return;
    srv_buf_free(&cs->body);
    if (cs->upload) srv_upload_free(&cs->up);
    free(cs);
    *con_cls = NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap) {
    const srv_http *h = cls;
    if (!h->p.log) return;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n && msg[n - 1] == '\n') msg[--n] = '\0';
    fprintf(stderr, "pocketllm serve: http: %s\n", msg);
}

bool srv_http_start(const srv_http_params *p, const srv_model *m, srv_sched *s, srv_http **out, char **err) {
    *out = NULL;
    *err = NULL;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *ai = NULL;
    char port[8];
    snprintf(port, sizeof port, "%u", p->port);
    int gai = getaddrinfo(p->host, port, &hints, &ai);
    if (gai != 0 || !ai) {
        char tmp[300];
        snprintf(tmp, sizeof tmp, "cannot resolve --host '%.200s': %s", p->host, gai_strerror(gai));
        *err = strdup(tmp);
        return false;
    }
    srv_http *h = calloc(1, sizeof *h);
    if (!h) {
        freeaddrinfo(ai);
        *err = strdup("out of memory");
        return false;
    }
    h->p = *p;
    h->m = m;
    h->s = s;
    atomic_init(&h->stopping, false);
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
    if (ai->ai_family == AF_INET6) flags |= MHD_USE_IPv6;
    /* (the logger must come first to catch the messages of the options) */
    h->d = MHD_start_daemon(flags, p->port, NULL, NULL, handler, h,
                            MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h,
                            MHD_OPTION_SOCK_ADDR, ai->ai_addr,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, h,
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned)p->max_connections,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120,
                            MHD_OPTION_END);
    freeaddrinfo(ai);
    if (!h->d) {
        char tmp[300];
        snprintf(tmp, sizeof tmp, "cannot listen on %.200s port %u (in use, or not an address of this host?)", p->host,
                 p->port);
        *err = strdup(tmp);
        free(h);
        return false;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    h->port = di ? di->port : p->port;
    *out = h;
    return true;
}

uint16_t srv_http_port(const srv_http *h) { return h->port; }

void srv_http_stop(srv_http *h) {
    if (!h) return;
    atomic_store(&h->stopping, true);
    MHD_stop_daemon(h->d);
    free(h);
}

bool srv_http_wait(srv_http *h, struct MHD_Connection *conn, srv_task *t, srv_update *u, unsigned *status,
                   enum MHD_Result *ret) {
    for (;;) {
        srv_sched_poll(h->s, t, SRV_HTTP_POLL_MS, u);
        if (u->done || u->failed) return true;
        if (atomic_load(&h->stopping)) {
            srv_sched_release(h->s, t);
            srv_update_free(u);
            srv_error e;
            srv_fail(&e, 503, NULL, "the server is stopping");
            *status = 503;
            *ret = srv_http_reply_json(conn, 503, srv_json_error(&e));
            return false;
        }
        if (srv_http_client_gone(conn)) {
            /* nobody to answer: dropping the task cancels it */
            srv_sched_release(h->s, t);
            srv_update_free(u);
            *status = 499;
            *ret = MHD_NO;
            return false;
        }
    }
}
