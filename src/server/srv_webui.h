/*
 * srv_webui.h -- the browser chat page of `pocketllm serve` (webui/, built
 * into the binary by cmake/embed_files.cmake): GET / and its assets under
 * /ui/, with a Content-Security-Policy that lets only the page's own
 * script run.
 */
#ifndef PL_SRV_WEBUI_H
#define PL_SRV_WEBUI_H

#include <stdbool.h>
#include <stddef.h>
#include <microhttpd.h>

/* One embedded file: the URL it is served at, its bytes. */
typedef struct srv_webui_file {
    const char *name;
    const unsigned char *bytes;
    size_t size;
} srv_webui_file;
/* webui_files.c, generated at build time: ends with a NULL name */
extern const srv_webui_file srv_webui_files[];

/* When url is the page or one of its assets: queue it (*ret: MHD's
 * answer) and return true; false for any other url. */
bool srv_webui_reply(struct MHD_Connection *conn, const char *url, enum MHD_Result *ret);

#endif
