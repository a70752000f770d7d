/*
 * srv_upload.c -- a multipart/form-data body gathered through
 * libmicrohttpd's post processor (srv_upload.h).  The library splits the
 * body into parts and calls back with each part's bytes, in pieces; this
 * file keeps them, each in a bounded buffer, and turns what the library or
 * the limits refuse into a 4xx message.
 */
#include "srv_upload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The post processor's own buffer: a part's bytes come in pieces of about
 * this size (and the headers of a part must fit in it). */
#define PP_BUFFER 16384

static bool has_err(const srv_upload *u) { return u->err.http != 0; }

static char *dup_or_null(const char *s, bool *oom) {
    if (!s) return NULL;
    char *d = strdup(s);
    if (!d) *oom = true;
    return d;
}

static enum MHD_Result on_data(void *cls, enum MHD_ValueKind kind, const char *key, const char *filename,
                               const char *content_type, const char *transfer_encoding, const char *data,
                               uint64_t off, size_t size) {
    (void)kind;
    (void)transfer_encoding;
    srv_upload *u = cls;
    if (has_err(u)) return MHD_NO;
    if (!key) key = "";
    srv_upload_part *p = u->n_parts ? &u->parts[u->n_parts - 1] : NULL;
    /* a new part begins at offset 0 (a part's later pieces continue it) */
    if (off == 0 && !(p && strcmp(p->name, key) == 0 && p->data.n == 0)) {
        for (size_t i = 0; i < u->n_parts; i++)
            if (strcmp(u->parts[i].name, key) == 0) {
                srv_fail(&u->err, 400, key, "the form field '%.60s' is given twice", key);
                return MHD_NO;
            }
        if (u->n_parts == SRV_UPLOAD_MAX_PARTS) {
            srv_fail(&u->err, 400, NULL, "the form has more than %d fields", SRV_UPLOAD_MAX_PARTS);
            return MHD_NO;
        }
        p = &u->parts[u->n_parts++];
        memset(p, 0, sizeof *p);
        bool oom = false;
        p->name = dup_or_null(key, &oom);
        p->filename = dup_or_null(filename, &oom);
        p->content_type = dup_or_null(content_type, &oom);
        if (oom) {
            srv_fail(&u->err, 500, NULL, "out of memory");
            return MHD_NO;
        }
    } else if (!p || strcmp(p->name, key) != 0 || off != p->data.n) {
        /* not the continuation of the last part: the library's pieces
         * always are, so this is a body it misread */
        srv_fail(&u->err, 400, key, "the form field '%.60s' comes in pieces out of order", key);
        return MHD_NO;
    }
    const bool is_file = strcmp(key, "file") == 0;
    const size_t cap = is_file ? u->max_file : SRV_UPLOAD_MAX_FIELD;
    if (size > cap - p->data.n) {
        if (is_file)
            srv_fail(&u->err, 413, "file", "the file is larger than the %zu MiB this server takes (--max-upload-mb)",
                     u->max_file >> 20);
        else
            srv_fail(&u->err, 400, key, "the form field '%.60s' is longer than %zu bytes", key, SRV_UPLOAD_MAX_FIELD);
        return MHD_NO;
    }
    if (size && !srv_buf_add(&p->data, data, size)) {
        srv_fail(&u->err, 500, NULL, "out of memory");
        return MHD_NO;
    }
    return MHD_YES;
}

bool srv_upload_begin(srv_upload *u, struct MHD_Connection *conn, size_t max_file, srv_error *e) {
    memset(u, 0, sizeof *u);
    u->max_file = max_file;
    const char *ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    if (!ct || strncasecmp(ct, MHD_HTTP_POST_ENCODING_MULTIPART_FORMDATA, strlen(MHD_HTTP_POST_ENCODING_MULTIPART_FORMDATA)) != 0)
        return srv_fail(e, 415, NULL, "the body must be multipart/form-data (a form with a 'file' field), not '%.80s'",
                        ct ? ct : "(no Content-Type)");
    /* (the library finds the boundary= itself, and refuses without one) */
    u->pp = MHD_create_post_processor(conn, PP_BUFFER, on_data, u);
    if (!u->pp) return srv_fail(e, 400, NULL, "the multipart/form-data Content-Type has no usable boundary");
    return true;
}

void srv_upload_feed(srv_upload *u, const char *data, size_t n) {
    u->body_bytes += n;
    if (has_err(u) || !u->pp || !n) return;
    if (MHD_post_process(u->pp, data, n) != MHD_YES && !has_err(u))
        srv_fail(&u->err, 400, NULL, "the multipart/form-data body is malformed (near byte %zu)", u->body_bytes);
}

bool srv_upload_end(srv_upload *u, srv_error *e) {
    struct MHD_PostProcessor *pp = u->pp;
    u->pp = NULL;
    /* the library says whether the body ended where a form may end: after
     * its closing boundary */
    const bool whole = pp ? MHD_destroy_post_processor(pp) == MHD_YES : false;
    if (has_err(u)) {
        *e = u->err;
        return false;
    }
    if (!whole)
        return srv_fail(e, 400, NULL, "the multipart/form-data body is cut short (no closing boundary after %zu bytes)",
                        u->body_bytes);
    return true;
}

void srv_upload_free(srv_upload *u) {
    if (u->pp) MHD_destroy_post_processor(u->pp);
    u->pp = NULL;
    for (size_t i = 0; i < u->n_parts; i++) {
        free(u->parts[i].name);
        free(u->parts[i].filename);
        free(u->parts[i].content_type);
        srv_buf_free(&u->parts[i].data);
    }
    u->n_parts = 0;
}

const srv_upload_part *srv_upload_find(const srv_upload *u, const char *name) {
    for (size_t i = 0; i < u->n_parts; i++)
        if (strcmp(u->parts[i].name, name) == 0) return &u->parts[i];
    return NULL;
}
