/*
 * arena.h -- a bump allocator for objects that live exactly as long as their
 * owner (a parsed file's strings and value nodes): one free releases all.
 */
#ifndef PL_ARENA_H
#define PL_ARENA_H

#include <stddef.h>

typedef struct pl_arena_chunk pl_arena_chunk;

typedef struct pl_arena {
    pl_arena_chunk *head;
    size_t used;   /* bytes used in head */
    size_t cap;    /* bytes available in head */
} pl_arena;

/* Zeroed, `align`-aligned memory (align a power of two <= 16), or NULL. */
void *pl_arena_alloc(pl_arena *a, size_t size, size_t align);
/* NUL-terminated copy of len bytes, or NULL. */
char *pl_arena_strndup(pl_arena *a, const char *s, size_t len);
void pl_arena_free(pl_arena *a);

#endif
