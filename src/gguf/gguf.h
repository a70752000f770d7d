/*
 * gguf.h -- the engine's view of a GGUF file: the parsed and validated
 * metadata tree and tensor table over a read-only memory mapping.  The
 * public pocketllm_gguf handle is this struct; the engine uses the fields
 * directly, outside callers go through the accessors in pocketllm.h.
 */
#ifndef PL_GGUF_H
#define PL_GGUF_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "base/arena.h"
#include "base/strmap.h"
#include "pocketllm.h"

#define PL_GGUF_MAX_NAME 63          /* longest tensor name llama.cpp accepts */
#define PL_GGUF_MAX_DIMS 4
#define PL_GGUF_MAX_NESTING 8        /* arrays of arrays, this deep at most */
#define PL_GGUF_MAX_VALUES (1u << 24) /* metadata values (array elements count) */
#define PL_GGUF_DEFAULT_ALIGNMENT 32

struct pocketllm_gguf_value {
    uint32_t type;       /* pocketllm_gguf_type */
    uint32_t elem_type;  /* arrays: the element type */
    uint64_t n;          /* arrays: element count; strings: byte length */
    uint64_t offset;     /* byte offset of the value in the file (for messages) */
    const uint8_t *raw;  /* scalars and arrays of fixed-size elements: little-endian bytes;
                          * arrays of strings: the first element's length prefix */
    const char *str;     /* strings: NUL-terminated copy */
    struct pocketllm_gguf_value *elems; /* arrays of arrays */
    /* Arrays of strings stay in the file: a vocabulary's 151936 tokens and
     * as many merges would take ~15 MiB as nodes and copies, where their
     * bytes are already mapped.  str_off[i] is where element i's length
     * prefix is, from raw (pl_gguf_array_str reads it); a node of its own
     * is made only when pocketllm_gguf_array_get asks for one (nodes, in
     * `arena`, made under a lock: a header is shared between threads). */
    const uint64_t *str_off;
    struct pocketllm_gguf_value **nodes;
    pl_arena *arena;
};

/* String i of an array of strings: its bytes in the file, NOT
 * NUL-terminated, and its length in *len. */
static inline const char *pl_gguf_array_str(const struct pocketllm_gguf_value *v, uint64_t i, uint64_t *len) {
    const uint8_t *p = v->raw + v->str_off[i];
    memcpy(len, p, 8); /* little-endian, as the reader takes every number */
    return (const char *)p + 8;
}

typedef struct pl_gguf_kv {
    const char *key;
    pocketllm_gguf_value value;
} pl_gguf_kv;

typedef struct pl_gguf_tensor {
    const char *name;
    uint32_t type;
    uint32_t n_dims;
    int64_t ne[PL_GGUF_MAX_DIMS];
    uint64_t offset;     /* relative to the data section */
    uint64_t n_bytes;
    uint64_t n_elements;
    const uint8_t *data;
} pl_gguf_tensor;

struct pocketllm_gguf {
    char *path;
    const uint8_t *base;   /* the mapping (or caller memory) */
    uint64_t size;
    bool mapped;
    uint32_t version;
    uint32_t alignment;
    uint64_t data_offset;
    uint64_t n_kv;
    pl_gguf_kv *kv;
    uint64_t n_tensors;
    pl_gguf_tensor *tensors;
    pl_strmap key_index;
    pl_strmap tensor_index;
    pl_arena arena;
};

typedef struct pocketllm_gguf pl_gguf;

/* Parse a GGUF image already in memory (the fuzzer's entry point); `name`
 * prefixes error messages.  The memory must outlive the result. */
pocketllm_status pl_gguf_open_memory(const void *data, uint64_t size, const char *name, pl_gguf **out);

/* Lookups used throughout the engine. */
const pocketllm_gguf_value *pl_gguf_get(const pl_gguf *g, const char *key);
const pl_gguf_tensor *pl_gguf_tensor_by_name(const pl_gguf *g, const char *name);

/* Typed getters with defaults: return `def` when the key is absent.  When
 * present with an unusable type or value they fail with a message naming
 * the key. */
pocketllm_status pl_gguf_get_u64(const pl_gguf *g, const char *key, uint64_t def, uint64_t *out);
pocketllm_status pl_gguf_get_f64(const pl_gguf *g, const char *key, double def, double *out);
/* NULL when absent or not a string. */
const char *pl_gguf_get_str(const pl_gguf *g, const char *key);

/* Name of a GGUF value type ("uint32", "array", ...). */
const char *pl_gguf_type_name(uint32_t type);
/* Bytes of one element of a fixed-size value type; 0 for string/array/invalid. */
uint32_t pl_gguf_type_size(uint32_t type);

/* Scalar conversion shared by the accessors. */
pocketllm_status pl_gguf_scalar_u64(uint32_t type, const uint8_t *raw, uint64_t *out);
pocketllm_status pl_gguf_scalar_i64(uint32_t type, const uint8_t *raw, int64_t *out);
pocketllm_status pl_gguf_scalar_f64(uint32_t type, const uint8_t *raw, double *out);

#endif
