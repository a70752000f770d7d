/*
 * pages.c -- up-front faulting of large buffers.
 *
 * Why: a decode step writes one new KV row per layer, so without this a
 * fresh cache takes a page fault every few tokens in every layer, which in
 * a virtual machine costs tens of microseconds each (measured here: ~0.6 ms
 * per token of Qwen3-0.6B, about 6% of a decode).  llama.cpp clears its KV
 * buffer at creation, to the same effect.  One madvise faults the whole
 * buffer in far cheaper than a trap per page.  (Huge pages were tried as
 * well and measured slower on this host: not used.)
 */
#include "base/pages.h"

#include <stdint.h>

#if defined(__linux__)
#include <sys/mman.h>
#endif

void pl_pages_prepare(void *p, size_t bytes) {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
    if (!p || bytes < PL_PAGES_LARGE) return;
    const uintptr_t page = PL_PAGES_ALIGN, lo = ((uintptr_t)p + page - 1) & ~(page - 1),
                    hi = ((uintptr_t)p + bytes) & ~(page - 1);
    if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#else
    (void)p, (void)bytes;
#endif
}

void pl_pages_drop(const void *p, size_t bytes) {
    const uintptr_t lo = ((uintptr_t)p + PL_PAGES_ALIGN - 1) & ~(uintptr_t)(PL_PAGES_ALIGN - 1);
    const uintptr_t hi = ((uintptr_t)p + bytes) & ~(uintptr_t)(PL_PAGES_ALIGN - 1);
    if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
}
