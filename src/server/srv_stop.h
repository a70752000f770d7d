/*
 * srv_stop.h -- stop strings over streamed text.  Text comes in piece by
 * piece; what can no longer be the start of a stop string is released,
 * the rest held back (never more than the longest stop string less one
 * byte, and never a cut inside a UTF-8 character), so that a stop string
 * never reaches the client, not even in part.  When one appears, the text
 * before it is released and everything from it on is dropped.
 */
#ifndef PL_SRV_STOP_H
#define PL_SRV_STOP_H

#include <stdbool.h>
#include <stddef.h>

#include "srv_text.h"

typedef struct srv_stop {
    char *const *stops; /* borrowed */
    size_t n_stops;
    srv_buf held;
    bool matched;
} srv_stop;

void srv_stop_init(srv_stop *s, char *const *stops, size_t n_stops);
void srv_stop_free(srv_stop *s);
/* Take n more bytes; append what is released to out.  Returns true when a
 * stop string has now been seen (later pushes release nothing). */
bool srv_stop_push(srv_stop *s, const char *text, size_t n, srv_buf *out);
/* The end of the generation: release what was held. */
void srv_stop_flush(srv_stop *s, srv_buf *out);

#endif
