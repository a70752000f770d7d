/*
 * srv_text.c -- the growable buffer and the UTF-8 helpers of srv_text.h.
 */
#include "srv_text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool srv_buf_add(srv_buf *b, const void *s, size_t n) {
    if (b->oom) return false;
    if (n > SRV_BUF_MAX - b->n - 1) {
        b->oom = true;
        return false;
    }
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return false;
        }
        b->p = p;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
    return true;
}

bool srv_buf_str(srv_buf *b, const char *s) { return srv_buf_add(b, s, strlen(s)); }

bool srv_buf_printf(srv_buf *b, const char *fmt, ...) {
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (k < 0) return false;
    if ((size_t)k < sizeof small) return srv_buf_add(b, small, (size_t)k);
    char *big = malloc((size_t)k + 1);
    if (!big) {
        b->oom = true;
        return false;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)k + 1, fmt, ap);
    va_end(ap);
    bool ok = srv_buf_add(b, big, (size_t)k);
    free(big);
    return ok;
}

void srv_buf_consume(srv_buf *b, size_t n) {
    if (n >= b->n) {
        b->n = 0;
    } else {
        memmove(b->p, b->p + n, b->n - n);
        b->n -= n;
    }
    if (b->p) b->p[b->n] = '\0';
}

void srv_buf_clear(srv_buf *b) {
    b->n = 0;
    if (b->p) b->p[0] = '\0';
}

void srv_buf_free(srv_buf *b) {
    free(b->p);
    memset(b, 0, sizeof *b);
}

char *srv_buf_take(srv_buf *b, size_t *len) {
    if (!b->p && !srv_buf_add(b, "", 0)) return NULL;
    char *p = b->p;
    if (len) *len = b->n;
    memset(b, 0, sizeof *b);
    return p;
}

size_t srv_utf8_char(const uint8_t *s, size_t n) {
    if (n == 0) return 0;
    const uint8_t c = s[0];
    if (c < 0x80) return 1;
    size_t need;
    uint8_t lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
    if (c >= 0xc2 && c <= 0xdf) need = 2;
    else if (c == 0xe0) need = 3, lo = 0xa0;
    else if (c == 0xed) need = 3, hi = 0x9f; /* no surrogates */
    else if (c >= 0xe1 && c <= 0xef) need = 3;
    else if (c == 0xf0) need = 4, lo = 0x90;
    else if (c == 0xf4) need = 4, hi = 0x8f;
    else if (c >= 0xf1 && c <= 0xf3) need = 4;
    else return 0;
    if (n < need) return 0;
    if (s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < need; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    return need;
}

size_t srv_utf8_boundary(const char *s, size_t n) {
    const uint8_t *p = (const uint8_t *)s;
    /* look back at most 3 bytes for the start of a character that the end
     * cuts short */
    for (size_t k = 1; k <= 3 && k <= n; k++) {
        const uint8_t c = p[n - k];
        if ((c & 0xc0) == 0x80) continue;
        size_t need = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 1;
        if (need <= k) return n;
        /* a real prefix of a character only if its bytes so far are valid */
        uint8_t tmp[4] = {0};
        memcpy(tmp, p + n - k, k);
        for (size_t i = k; i < need; i++) tmp[i] = (i == 1 && (c == 0xe0)) ? 0xa0 : (i == 1 && c == 0xf0) ? 0x90 : 0x80;
        return srv_utf8_char(tmp, need) == need ? n - k : n;
    }
    return n;
}

bool srv_utf8_valid(const char *s, size_t n) {
    const uint8_t *p = (const uint8_t *)s;
    for (size_t i = 0; i < n;) {
        if (p[i] == 0) return false;
        size_t k = srv_utf8_char(p + i, n - i);
        if (!k) return false;
        i += k;
    }
    return true;
}

bool srv_buf_add_utf8(srv_buf *b, const char *s, size_t n) {
    const uint8_t *p = (const uint8_t *)s;
    size_t run = 0; /* start of the pending valid run */
    for (size_t i = 0; i < n;) {
        size_t k = p[i] ? srv_utf8_char(p + i, n - i) : 0;
        if (k) {
            i += k;
            continue;
        }
        if (!srv_buf_add(b, s + run, i - run)) return false;
        if (p[i] && !srv_buf_add(b, "\xef\xbf\xbd", 3)) return false;
        run = ++i;
    }
    return srv_buf_add(b, s + run, n - run);
}
