/*
 * strmap.c -- open-addressing string hash map with linear probing (FNV-1a
 * hash, load factor kept at most 3/4: a vocabulary's maps are large, and
 * a checkpoint's memory bound counts them).
 */
#include "strmap.h"

#include <stdlib.h>
#include <string.h>

uint64_t pl_hash_bytes(const void *data, size_t len) {
    const unsigned char *p = data;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    /* final mix so that short keys spread over the low bits too */
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    return h;
}

bool pl_strmap_init(pl_strmap *m, size_t n) {
    size_t cap = 16;
    while (cap / 4 * 3 < n + 1) {
        if (cap > SIZE_MAX / 4 / sizeof(pl_strmap_slot)) return false;
        cap *= 2;
    }
    m->slots = calloc(cap, sizeof *m->slots);
    m->cap = m->slots ? cap : 0;
    m->count = 0;
    return m->slots != NULL;
}

void pl_strmap_free(pl_strmap *m) {
    free(m->slots);
    m->slots = NULL;
    m->cap = m->count = 0;
}

static pl_strmap_slot *pl_strmap_find(const pl_strmap *m, const char *key, size_t len) {
    size_t mask = m->cap - 1;
    size_t i = (size_t)pl_hash_bytes(key, len) & mask;
    for (;;) {
        pl_strmap_slot *s = &m->slots[i];
        if (!s->key || (s->len == len && memcmp(s->key, key, len) == 0)) return s;
        i = (i + 1) & mask;
    }
}

static bool pl_strmap_grow(pl_strmap *m) {
    pl_strmap bigger;
    if (!pl_strmap_init(&bigger, m->cap)) return false; /* doubles the capacity */
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->slots[i].key) continue;
        *pl_strmap_find(&bigger, m->slots[i].key, m->slots[i].len) = m->slots[i];
    }
    bigger.count = m->count;
    free(m->slots);
    *m = bigger;
    return true;
}

int pl_strmap_put(pl_strmap *m, const char *key, size_t len, uint64_t value, uint64_t *existing) {
    if (!m->slots && !pl_strmap_init(m, 16)) return -1;
    if (m->count + 1 > m->cap / 4 * 3 && !pl_strmap_grow(m)) return -1;
    pl_strmap_slot *s = pl_strmap_find(m, key, len);
    if (s->key) {
        if (existing) *existing = s->value;
        return 0;
    }
    s->key = key ? key : "";
    s->len = len;
    s->value = value;
    m->count++;
    return 1;
}

bool pl_strmap_get(const pl_strmap *m, const char *key, size_t len, uint64_t *value) {
    if (!m->slots) return false;
    const pl_strmap_slot *s = pl_strmap_find(m, key, len);
    if (!s->key) return false;
    if (value) *value = s->value;
    return true;
}
