/*
 * arena.c -- chunked bump allocation; large requests get a chunk of their own.
 */
#include "arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct pl_arena_chunk {
    pl_arena_chunk *next;
    size_t pad_; /* keeps the payload 16-byte aligned */
};

#define PL_ARENA_CHUNK (256u * 1024u)

void *pl_arena_alloc(pl_arena *a, size_t size, size_t align) {
    if (align == 0) align = 1;
    size_t start = (a->used + align - 1) & ~(align - 1);
    if (!a->head || start > a->cap || size > a->cap - start) {
        size_t cap = size + 64 > PL_ARENA_CHUNK ? size + 64 : PL_ARENA_CHUNK;
        if (cap < size) return NULL; /* overflow */
        pl_arena_chunk *c = malloc(sizeof *c + cap);
        if (!c) return NULL;
        c->next = a->head;
        a->head = c;
        a->cap = cap;
        /* payload starts after the header; align inside it */
        uintptr_t base = (uintptr_t)(c + 1);
        size_t off = (size_t)((((base + align - 1) & ~(uintptr_t)(align - 1))) - base);
        start = off;
    }
    void *p = (char *)(a->head + 1) + start;
    a->used = start + size;
    memset(p, 0, size);
    return p;
}

char *pl_arena_strndup(pl_arena *a, const char *s, size_t len) {
    if (len == SIZE_MAX) return NULL;
    char *p = pl_arena_alloc(a, len + 1, 1);
    if (!p) return NULL;
    if (len) memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

void pl_arena_free(pl_arena *a) {
    pl_arena_chunk *c = a->head;
    while (c) {
        pl_arena_chunk *n = c->next;
        free(c);
        c = n;
    }
    a->head = NULL;
    a->used = a->cap = 0;
}
