/*
 * srv_upload.h -- a multipart/form-data upload (OpenAI's file endpoints:
 * POST /v1/audio/transcriptions) collected from a request body.  The
 * parsing is libmicrohttpd's own post processor (MHD_create_post_processor
 * / MHD_post_process), not ours: this only gathers what it hands over --
 * each part into a bounded buffer (the file part up to the server's upload
 * limit, every other field up to SRV_UPLOAD_MAX_FIELD bytes) -- and says
 * what was wrong with the body when anything was: not multipart, a part
 * given twice, too large, cut short (no closing boundary).
 */
#ifndef PL_SRV_UPLOAD_H
#define PL_SRV_UPLOAD_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>

#include "srv_request.h"
#include "srv_text.h"

#define SRV_UPLOAD_MAX_FIELD ((size_t)64 << 10) /* a form field that is not a file */
#define SRV_UPLOAD_MAX_PARTS 32                 /* parts in one body */

/* One part of the form, in the order the body holds them. */
typedef struct srv_upload_part {
    char *name;         /* the part's field name */
    char *filename;     /* the filename= of its Content-Disposition, NULL when none */
    char *content_type; /* its Content-Type, NULL when none */
    srv_buf data;       /* its bytes (NUL-terminated when not empty) */
} srv_upload_part;

typedef struct srv_upload {
    struct MHD_PostProcessor *pp;
    size_t max_file;     /* bytes the part named "file" may hold */
    size_t body_bytes;   /* body bytes fed so far */
    srv_upload_part parts[SRV_UPLOAD_MAX_PARTS];
    size_t n_parts;
    srv_error err;       /* the first problem found while feeding (http 0: none) */
} srv_upload;

/* Start collecting the body of conn's request, whose Content-Type must be
 * multipart/form-data with a boundary.  false (e filled, a 400 or a 415)
 * otherwise; nothing is left to free then. */
bool srv_upload_begin(srv_upload *u, struct MHD_Connection *conn, size_t max_file, srv_error *e);
/* Feed the next n body bytes.  After the first problem the rest is read
 * and dropped (the answer is sent once the body is in). */
void srv_upload_feed(srv_upload *u, const char *data, size_t n);
/* The body is complete: true when it was a whole, well-formed form within
 * the limits; false with e filled (413 for a part over its limit, 400 for
 * the rest). */
bool srv_upload_end(srv_upload *u, srv_error *e);
void srv_upload_free(srv_upload *u);

/* The part named `name`, NULL when the form has none. */
const srv_upload_part *srv_upload_find(const srv_upload *u, const char *name);

#endif
