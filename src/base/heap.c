/*
 * heap.c -- bytes in use on the heap, from whichever allocator this build
 * runs on: AddressSanitizer replaces malloc and keeps its own count; glibc
 * reports in-use bytes of all its arenas plus its mmapped chunks.
 */
#include "base/heap.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PL_HEAP_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define PL_HEAP_ASAN 1
#endif

#if defined(PL_HEAP_ASAN)
#include <sanitizer/allocator_interface.h>
#else
#include <stdint.h> /* defines __GLIBC__ on glibc */
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#endif

bool pl_heap_in_use(uint64_t *bytes) {
#if defined(PL_HEAP_ASAN)
    *bytes = (uint64_t)__sanitizer_get_current_allocated_bytes();
    return true;
#elif defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 mi = mallinfo2();
    *bytes = (uint64_t)mi.uordblks + (uint64_t)mi.hblkhd;
    return true;
#else
    *bytes = 0;
    return false;
#endif
}
