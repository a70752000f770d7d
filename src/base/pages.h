/*
 * pages.h -- preparing large long-lived buffers (KV caches, scratch) for
 * the access that follows: every page faulted in at once, up front.
 */
#ifndef PL_PAGES_H
#define PL_PAGES_H

#include <stddef.h>

/* Buffers of at least this many bytes are worth preparing. */
#define PL_PAGES_LARGE (1u << 20)
/* Their alignment: whole pages. */
#define PL_PAGES_ALIGN 4096u

/* Fault every page of [p, p + bytes) in with one system call, keeping the
 * contents.  Best effort: where the kernel cannot, the buffer is left as
 * it is (its pages then fault in on first use). */
void pl_pages_prepare(void *p, size_t bytes);

#endif
