/*
 * heap.h -- how many bytes the process has allocated from the heap right
 * now, read from the allocator itself, so that a caller can measure what
 * opening a model or a session really costs (tokenizer tables included)
 * instead of estimating it.
 */
#ifndef PL_HEAP_H
#define PL_HEAP_H

#include <stdbool.h>
#include <stdint.h>

/* Bytes in use (every thread's allocations), or false when this build's
 * allocator cannot say (then *bytes is 0).  Under AddressSanitizer the
 * sanitizer's own count; with glibc, mallinfo2's. */
bool pl_heap_in_use(uint64_t *bytes);

#endif
