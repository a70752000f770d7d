/*
 * fuzz_multipart.c -- libFuzzer target for the upload path of POST
 * /v1/audio/transcriptions: the input is the raw body of a
 * multipart/form-data request under a fixed boundary ("plfuzz").  It goes
 * through a real libmicrohttpd connection -- an in-process daemon without a
 * listening socket, handed one end of a socketpair with
 * MHD_add_connection, the HTTP request written into the other end -- so
 * that libmicrohttpd's own post processor parses it, exactly as in `pocketllm
 * serve`, into the server's upload handler (srv_upload.c), then the form's
 * fields are checked (srv_transcribe.c) and the file part, when the fields
 * are good, goes to the server's audio decoding (srv_audio.c: libsndfile).
 * Nothing may crash, leak, hang or allocate without bound; every refusal
 * must be an HTTP error with a message.
 *
 * The upload limit is 64 KiB here, so the 413 path is reached; the first
 * input byte picks how the body is sent (Content-Length or chunked) and
 * how it is cut into writes.  Seeds: seeds/fuzz_multipart.sh.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pocketllm.h"
#include "srv_audio.h"
#include "srv_request.h"
#include "srv_response.h"
#include "srv_transcribe.h"
#include "srv_upload.h"

#define MAX_FILE ((size_t)64 << 10)

static struct MHD_Daemon *daemon_;
static srv_model no_tower; /* a model without --mmproj: the parse ends at the tower check */

typedef struct state {
    srv_upload up;
    bool upload;
} state;

static enum MHD_Result reply(struct MHD_Connection *conn, const srv_error *e) {
    if (e->http < 400 || e->http > 599 || !e->message[0]) abort(); /* every refusal has a status and a message */
    /* (FUZZ_MULTIPART_VERBOSE=1: each answer on stderr, to read what the seeds reach) */
    if (getenv("FUZZ_MULTIPART_VERBOSE")) fprintf(stderr, "fuzz_multipart: %d %s\n", e->http, e->message);
    char *json = srv_json_error(e);
    if (!json) return MHD_NO;
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(json), json, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(json);
        return MHD_NO;
    }
    enum MHD_Result ret = MHD_queue_response(conn, (unsigned)e->http, r);
    MHD_destroy_response(r);
    return ret;
}

/* What srv_http.c's handler does for the endpoint, without a scheduler. */
static enum MHD_Result handler(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                               const char *version, const char *data, size_t *size, void **con_cls) {
    (void)cls, (void)url, (void)method, (void)version;
    state *st = *con_cls;
    srv_error e = {0};
    if (!st) {
        if (!(st = calloc(1, sizeof *st))) return MHD_NO;
        *con_cls = st;
        if (!(st->upload = srv_upload_begin(&st->up, conn, MAX_FILE, &e))) return reply(conn, &e);
        return MHD_YES;
    }
    if (*size) {
        srv_upload_feed(&st->up, data, *size);
        *size = 0;
        return MHD_YES;
    }
    bool ok = srv_upload_end(&st->up, &e);
    if (ok) {
        /* the fields, then the file through the decoder */
        srv_asr a = {0};
        const srv_upload_part *file = NULL;
        ok = srv_transcription_fields(&st->up, &a, &file, &e);
        free(a.context);
        if (ok) {
            /* the whole parse, which must refuse for want of a tower */
            srv_request r;
            if (srv_transcription_parse(&no_tower, &st->up, &r, &e) || e.http != 400) abort();
            pocketllm_audio *clip = NULL;
            ok = srv_audio_decode("file", file->data.p, file->data.n, SRV_MAX_AUDIO_SECONDS, &clip, &e);
            pocketllm_audio_free(clip);
        }
    }
    srv_upload_free(&st->up);
    st->upload = false;
    if (!ok) return reply(conn, &e);
    srv_fail(&e, 400, "file", "(accepted)");
    return reply(conn, &e);
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe) {
    (void)cls, (void)conn, (void)toe;
    state *st = *con_cls;
    if (!st) return;
    if (st->upload) srv_upload_free(&st->up);
    free(st);
    *con_cls = NULL;
}

static void quiet(void *cls, const char *fmt, va_list ap) { (void)cls, (void)fmt, (void)ap; }

static int setup(void) {
    daemon_ = MHD_start_daemon(MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ERROR_LOG, 0, NULL, NULL, handler, NULL,
                               MHD_OPTION_EXTERNAL_LOGGER, quiet, NULL, MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
                               MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10, MHD_OPTION_END);
    return daemon_ != NULL;
}

/* Write what is left of out[*at..n) that the socket takes now. */
static void pump_out(int fd, const char *out, size_t n, size_t *at, size_t step) {
    while (*at < n) {
        size_t k = n - *at < step ? n - *at : step;
        ssize_t w = send(fd, out + *at, k, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w <= 0) return;
        *at += (size_t)w;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int ready;
    if (!ready) ready = setup() ? 1 : -1;
    if (ready < 0) abort(); /* the harness itself is broken: say so loudly */
    if (size < 1) return 0;
    const bool chunked = data[0] & 1;
    const size_t step = (size_t)61 << (data[0] >> 1 & 7); /* bytes per write: 61 .. 7808 */
    const uint8_t *body = data + 1;
    const size_t len = size - 1;

    srv_buf req = {0};
    srv_buf_printf(&req, "POST /v1/audio/transcriptions HTTP/1.1\r\nHost: fuzz\r\nConnection: close\r\n"
                         "Content-Type: multipart/form-data; boundary=plfuzz\r\n");
    if (chunked) {
        srv_buf_str(&req, "Transfer-Encoding: chunked\r\n\r\n");
        for (size_t at = 0; at < len; at += 4096) {
            const size_t k = len - at < 4096 ? len - at : 4096;
            srv_buf_printf(&req, "%zx\r\n", k);
            srv_buf_add(&req, body + at, k);
            srv_buf_str(&req, "\r\n");
        }
        srv_buf_str(&req, "0\r\n\r\n");
    } else {
        srv_buf_printf(&req, "Content-Length: %zu\r\n\r\n", len);
        srv_buf_add(&req, body, len);
    }
    if (req.oom) abort();

    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) abort();
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(1)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    /* the daemon owns (and closes) sv[0] from here */
    if (MHD_add_connection(daemon_, sv[0], (const struct sockaddr *)&addr, sizeof addr) != MHD_YES) abort();
    size_t at = 0;
    bool eof = false;
    char buf[4096];
    /* (each round moves bytes; a connection that makes no progress for
     * this many rounds is a hang) */
    for (int round = 0; !eof && round < 200000; round++) {
        pump_out(sv[1], req.p, req.n, &at, step);
        MHD_run(daemon_);
        for (;;) {
            ssize_t r = recv(sv[1], buf, sizeof buf, MSG_DONTWAIT);
            if (r > 0) continue;
            if (r == 0) eof = true;
            break;
        }
    }
    if (!eof) abort(); /* the server never answered and closed */
    close(sv[1]);
    MHD_run(daemon_); /* let the daemon forget the connection */
    srv_buf_free(&req);
    return 0;
}
