/*
 * srv_webui.c -- serves the embedded chat page (srv_webui.h).  The page is
 * static: it holds no secret and reads nothing of the server's but what
 * its own requests to /health and /v1/... return, so it needs no API key
 * (the page asks the person for one when /v1/... answers 401).
 */
#include "srv_webui.h"

#include <string.h>

/* Scripts and styles from this origin only (no inline script, none from
 * any other origin, no eval); images and audio the person attaches are
 * data: or blob: URLs; requests go to this server only; no framing, no
 * <base>, no form posting anywhere. */
static const char CSP[] = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
                          "media-src 'self' data: blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
                          "frame-ancestors 'none'";

static const char *content_type(const char *name) {
    const char *dot = strrchr(name, '.');
    if (!dot || !strcmp(name, "/")) return "text/html; charset=utf-8";
    if (!strcmp(dot, ".js")) return "text/javascript; charset=utf-8";
    if (!strcmp(dot, ".css")) return "text/css; charset=utf-8";
    return "application/octet-stream";
}

bool srv_webui_reply(struct MHD_Connection *conn, const char *url, enum MHD_Result *ret) {
    if (strcmp(url, "/") != 0 && strncmp(url, "/ui/", 4) != 0) return false;
    for (size_t i = 0; srv_webui_files[i].name; i++) {
        if (strcmp(srv_webui_files[i].name, url) != 0) continue;
        struct MHD_Response *r = MHD_create_response_from_buffer(srv_webui_files[i].size,
                                                                 (void *)srv_webui_files[i].bytes, MHD_RESPMEM_PERSISTENT);
        if (!r) {
            *ret = MHD_NO;
            return true;
        }
        MHD_add_response_header(r, "Content-Type", content_type(url));
        MHD_add_response_header(r, "Content-Security-Policy", CSP);
        MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
        MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
        MHD_add_response_header(r, "Cache-Control", "no-cache");
        *ret = MHD_queue_response(conn, 200, r);
        MHD_destroy_response(r);
        return true;
    }
    return false; /* an unknown /ui/ path: the caller's 404 */
}
