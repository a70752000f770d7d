/*
 * srv_text.h -- the small text tools the server and `pocketllm chat`
 * share: a growable byte buffer, and the UTF-8 rules that keep JSON and
 * SSE output valid (a stream is only ever cut between characters; bytes
 * that are not UTF-8 become U+FFFD on the way out).
 */
#ifndef PL_SRV_TEXT_H
#define PL_SRV_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct srv_buf {
    char *p;    /* NUL-terminated when not NULL */
    size_t n, cap;
    bool oom;   /* an append failed: the content is incomplete */
} srv_buf;

/* Append n bytes (the buffer stays NUL-terminated); false when out of
 * memory or past `SRV_BUF_MAX` (and oom is set). */
bool srv_buf_add(srv_buf *b, const void *s, size_t n);
bool srv_buf_str(srv_buf *b, const char *s);
bool srv_buf_printf(srv_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Drop the first n bytes. */
void srv_buf_consume(srv_buf *b, size_t n);
void srv_buf_clear(srv_buf *b);
void srv_buf_free(srv_buf *b);
/* Hand the content over (the buffer is left empty); never NULL unless out
 * of memory. */
char *srv_buf_take(srv_buf *b, size_t *len);

#define SRV_BUF_MAX ((size_t)1 << 30)

/* Length of the longest prefix of s[0..n) that ends on a character
 * boundary: n minus the bytes of a character still missing its tail (an
 * invalid byte counts as a whole character). */
size_t srv_utf8_boundary(const char *s, size_t n);
/* Length of the valid UTF-8 sequence starting at s (1..4), or 0 when the
 * bytes there are not one (a stray continuation byte, an overlong form, a
 * surrogate, or a character cut short by the end). */
size_t srv_utf8_char(const uint8_t *s, size_t n);
/* Whether s[0..n) is valid UTF-8 without NUL bytes. */
bool srv_utf8_valid(const char *s, size_t n);
/* Append s[0..n) to b with every invalid byte replaced by U+FFFD and NUL
 * bytes dropped, so that the result can go into JSON. */
bool srv_buf_add_utf8(srv_buf *b, const char *s, size_t n);

#endif
