/*
 * srv_stop.c -- the stop-string filter of srv_stop.h.
 */
#include "srv_stop.h"

#include <string.h>

void srv_stop_init(srv_stop *s, char *const *stops, size_t n_stops) {
    memset(s, 0, sizeof *s);
    s->stops = stops;
    s->n_stops = n_stops;
}

void srv_stop_free(srv_stop *s) { srv_buf_free(&s->held); }

/* Bytes at the end of p[0..n) that are a proper prefix of some stop
 * string (the longest such). */
static size_t partial_tail(const srv_stop *s, const char *p, size_t n) {
    size_t best = 0;
    for (size_t i = 0; i < s->n_stops; i++) {
        const size_t len = strlen(s->stops[i]);
        for (size_t k = len - 1 < n ? len - 1 : n; k > best; k--)
            if (memcmp(p + n - k, s->stops[i], k) == 0) {
                best = k;
                break;
            }
    }
    return best;
}

bool srv_stop_push(srv_stop *s, const char *text, size_t n, srv_buf *out) {
    if (s->matched) return true;
    if (s->n_stops == 0) {
        srv_buf_add(out, text, n);
        return false;
    }
    srv_buf_add(&s->held, text, n);
    const char *p = s->held.p ? s->held.p : "";
    const size_t len = s->held.n;
    /* the earliest occurrence of any stop string */
    size_t first = len;
    for (size_t i = 0; i < s->n_stops; i++) {
        const char *hit = memmem(p, len, s->stops[i], strlen(s->stops[i]));
        if (hit && (size_t)(hit - p) < first) first = (size_t)(hit - p);
    }
    if (first < len) {
        srv_buf_add(out, p, first);
        srv_buf_clear(&s->held);
        s->matched = true;
        return true;
    }
    size_t keep = partial_tail(s, p, len);
    size_t release = srv_utf8_boundary(p, len - keep);
    srv_buf_add(out, p, release);
    srv_buf_consume(&s->held, release);
    return false;
}

void srv_stop_flush(srv_stop *s, srv_buf *out) {
    if (!s->matched && s->held.n) srv_buf_add(out, s->held.p, s->held.n);
    srv_buf_clear(&s->held);
}
