/*
 * gguf_builder.h -- assemble GGUF bytes field by field, for tests that need
 * files the writer would refuse to produce (malformed on purpose).
 */
#ifndef PL_TEST_GGUF_BUILDER_H
#define PL_TEST_GGUF_BUILDER_H

#include <stddef.h>
#include <stdint.h>

typedef struct gb {
    uint8_t *p;
    size_t n, cap;
} gb;

void gb_bytes(gb *b, const void *data, size_t n);
void gb_u8(gb *b, uint8_t v);
void gb_u32(gb *b, uint32_t v);
void gb_u64(gb *b, uint64_t v);
void gb_str(gb *b, const char *s);
/* magic, version, tensor count, kv count */
void gb_header(gb *b, uint32_t version, uint64_t n_tensors, uint64_t n_kv);
void gb_kv_u32(gb *b, const char *key, uint32_t v);
void gb_kv_str(gb *b, const char *key, const char *v);
/* tensor info: name, dims, type, offset */
void gb_tensor(gb *b, const char *name, uint32_t n_dims, const uint64_t *ne, uint32_t type, uint64_t offset);
/* zero bytes up to a multiple of `align` */
void gb_pad(gb *b, size_t align);
void gb_zeros(gb *b, size_t n);
void gb_free(gb *b);

#endif
