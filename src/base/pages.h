/*
 * pages.h -- preparing large long-lived buffers (KV caches, scratch) for
 * the access that follows: every page faulted in at once, up front; and
 * giving back the pages of mapped weights a device holds a copy of.
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

/* Let the kernel drop the resident pages of a read-only file mapping in
 * [p, p + bytes) (whole pages inside it): they read back from the file if
 * touched again.  For weights that now live on a device. */
void pl_pages_drop(const void *p, size_t bytes);

#endif
