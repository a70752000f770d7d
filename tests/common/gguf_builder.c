/*
 * gguf_builder.c -- byte-level GGUF assembly for malformed-file tests.
 */
#include "gguf_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gb_bytes(gb *b, const void *data, size_t n) {
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n) cap *= 2;
        b->p = realloc(b->p, cap);
        if (!b->p) {
            fprintf(stderr, "gguf_builder: out of memory\n");
            exit(1);
        }
        b->cap = cap;
    }
    if (data) memcpy(b->p + b->n, data, n);
    else memset(b->p + b->n, 0, n);
    b->n += n;
}

void gb_u8(gb *b, uint8_t v) { gb_bytes(b, &v, 1); }
void gb_u32(gb *b, uint32_t v) { gb_bytes(b, &v, 4); }
void gb_u64(gb *b, uint64_t v) { gb_bytes(b, &v, 8); }

void gb_str(gb *b, const char *s) {
    gb_u64(b, strlen(s));
    gb_bytes(b, s, strlen(s));
}

void gb_header(gb *b, uint32_t version, uint64_t n_tensors, uint64_t n_kv) {
    gb_bytes(b, "GGUF", 4);
    gb_u32(b, version);
    gb_u64(b, n_tensors);
    gb_u64(b, n_kv);
}

void gb_kv_u32(gb *b, const char *key, uint32_t v) {
    gb_str(b, key);
    gb_u32(b, 4);
    gb_u32(b, v);
}

void gb_kv_str(gb *b, const char *key, const char *v) {
    gb_str(b, key);
    gb_u32(b, 8);
    gb_str(b, v);
}

void gb_tensor(gb *b, const char *name, uint32_t n_dims, const uint64_t *ne, uint32_t type, uint64_t offset) {
    gb_str(b, name);
    gb_u32(b, n_dims);
    for (uint32_t i = 0; i < n_dims; i++) gb_u64(b, ne[i]);
    gb_u32(b, type);
    gb_u64(b, offset);
}

void gb_pad(gb *b, size_t align) {
    while (b->n % align) gb_u8(b, 0);
}

void gb_zeros(gb *b, size_t n) { gb_bytes(b, NULL, n); }

void gb_free(gb *b) {
    free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
}
