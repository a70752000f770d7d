/*
 * gguf_read.c -- parse and validate a GGUF v2/v3 file.
 *
 * The file is untrusted input.  Every count, length and offset read from it
 * is checked against the bytes that remain before anything is allocated or
 * indexed, with overflow-safe arithmetic; every failure names what is wrong
 * and the byte offset where it was found.  Nothing here aborts or loops on
 * a count read from the file without that count having been bounded first.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/checked.h"
#include "base/error.h"
#include "gguf/gguf.h"
#include "quant/types.h"

/* Smallest possible encodings, used to bound counts before allocating. */
#define MIN_KV_BYTES 14u     /* key length (8) + 1 key byte + type (4) + 1 value byte */
#define MIN_TENSOR_BYTES 24u /* name length (8) + n_dims (4) + type (4) + offset (8) */
#define MIN_ARRAY_BYTES 12u  /* element type (4) + count (8) */
#define STRING_LEN_BYTES 8u

typedef struct cursor {
    const uint8_t *base;
    uint64_t size;
    uint64_t pos;
    uint64_t n_values; /* metadata values created so far (bounded) */
} cursor;

static uint64_t remaining(const cursor *c) { return c->size - c->pos; }

static pocketllm_status need(const cursor *c, uint64_t n, const char *what) {
    if (n > remaining(c))
        return pl_fail(POCKETLLM_ERR_FORMAT, "file ends inside %s (needs %" PRIu64 " bytes, %" PRIu64
                       " left) at byte %" PRIu64, what, n, remaining(c), c->pos);
    return POCKETLLM_OK;
}

static pocketllm_status read_u32(cursor *c, uint32_t *v, const char *what) {
    pocketllm_status st = need(c, 4, what);
    if (st) return st;
    memcpy(v, c->base + c->pos, 4);
    c->pos += 4;
    return POCKETLLM_OK;
}

static pocketllm_status read_u64(cursor *c, uint64_t *v, const char *what) {
    pocketllm_status st = need(c, 8, what);
    if (st) return st;
    memcpy(v, c->base + c->pos, 8);
    c->pos += 8;
    return POCKETLLM_OK;
}

/* A length-prefixed string; on success *s points into the file. */
static pocketllm_status read_str(cursor *c, const char **s, uint64_t *len, const char *what) {
    uint64_t at = c->pos;
    pocketllm_status st = read_u64(c, len, what);
    if (st) return st;
    if (*len > remaining(c))
        return pl_fail(POCKETLLM_ERR_FORMAT, "%s has length %" PRIu64 ", past the end of the file (%" PRIu64
                       " bytes left) at byte %" PRIu64, what, *len, remaining(c), at);
    *s = (const char *)c->base + c->pos;
    c->pos += *len;
    return POCKETLLM_OK;
}

const char *pl_gguf_type_name(uint32_t type) {
    static const char *names[] = {"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32",
                                  "bool", "string", "array", "uint64", "int64", "float64"};
    return type < sizeof names / sizeof names[0] ? names[type] : "invalid";
}

uint32_t pl_gguf_type_size(uint32_t type) {
    switch (type) {
    case POCKETLLM_GGUF_UINT8: case POCKETLLM_GGUF_INT8: case POCKETLLM_GGUF_BOOL: return 1;
    case POCKETLLM_GGUF_UINT16: case POCKETLLM_GGUF_INT16: return 2;
    case POCKETLLM_GGUF_UINT32: case POCKETLLM_GGUF_INT32: case POCKETLLM_GGUF_FLOAT32: return 4;
    case POCKETLLM_GGUF_UINT64: case POCKETLLM_GGUF_INT64: case POCKETLLM_GGUF_FLOAT64: return 8;
    default: return 0;
    }
}

static pocketllm_status count_value(cursor *c, uint64_t n) {
    if (n > PL_GGUF_MAX_VALUES || c->n_values > PL_GGUF_MAX_VALUES - n)
        return pl_fail(POCKETLLM_ERR_FORMAT, "metadata holds more than %u values at byte %" PRIu64,
                       PL_GGUF_MAX_VALUES, c->pos);
    c->n_values += n;
    return POCKETLLM_OK;
}

/* Read one value of `type` (already read) into v.  `depth` counts array
 * nesting so that a crafted file cannot recurse without bound. */
static pocketllm_status read_value(cursor *c, pl_arena *arena, uint32_t type, int depth,
                                   pocketllm_gguf_value *v, const char *what) {
    pocketllm_status st;
    v->type = type;
    v->offset = c->pos;
    uint32_t fixed = pl_gguf_type_size(type);
    if (fixed) {
        if ((st = need(c, fixed, what))) return st;
        v->raw = c->base + c->pos;
        c->pos += fixed;
        return POCKETLLM_OK;
    }
    if (type == POCKETLLM_GGUF_STRING) {
        const char *s = NULL;
        uint64_t len = 0;
        if ((st = read_str(c, &s, &len, what))) return st;
        v->n = len;
        v->str = pl_arena_strndup(arena, s, (size_t)len);
        if (!v->str) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory copying %s", what);
        return POCKETLLM_OK;
    }
    if (type != POCKETLLM_GGUF_ARRAY)
        return pl_fail(POCKETLLM_ERR_FORMAT, "%s has invalid value type %" PRIu32 " at byte %" PRIu64,
                       what, type, c->pos - 4);
    if (depth >= PL_GGUF_MAX_NESTING)
        return pl_fail(POCKETLLM_ERR_FORMAT, "%s: arrays nested deeper than %d levels at byte %" PRIu64,
                       what, PL_GGUF_MAX_NESTING, c->pos);
    uint64_t at = c->pos;
    uint32_t et = 0;
    uint64_t n = 0;
    if ((st = read_u32(c, &et, what)) || (st = read_u64(c, &n, what))) return st;
    if (et > POCKETLLM_GGUF_FLOAT64)
        return pl_fail(POCKETLLM_ERR_FORMAT, "%s is an array of invalid element type %" PRIu32
                       " at byte %" PRIu64, what, et, at);
    v->elem_type = et;
    v->n = n;
    uint32_t esize = pl_gguf_type_size(et);
    uint64_t min_elem = esize ? esize : (et == POCKETLLM_GGUF_STRING ? STRING_LEN_BYTES : MIN_ARRAY_BYTES);
    if (n > remaining(c) / min_elem)
        return pl_fail(POCKETLLM_ERR_FORMAT, "%s is an array of %" PRIu64 " %s elements, more than the %" PRIu64
                       " bytes left can hold at byte %" PRIu64, what, n, pl_gguf_type_name(et), remaining(c), at);
    if (esize) {
        v->raw = c->base + c->pos;
        c->pos += n * esize; /* bounded by the check above */
        return POCKETLLM_OK;
    }
    if ((st = count_value(c, n))) return st;
    if (et == POCKETLLM_GGUF_STRING) {
        /* validated and located, not copied (see str_off) */
        const uint64_t first = c->pos;
        uint64_t *off = n ? pl_arena_alloc(arena, (size_t)n * sizeof *off, 8) : NULL;
        if (n && !off) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for %s (%" PRIu64 " strings)", what, n);
        for (uint64_t i = 0; i < n; i++) {
            const char *s;
            uint64_t len;
            off[i] = c->pos - first;
            if ((st = read_str(c, &s, &len, what))) return st;
        }
        v->raw = c->base + first;
        v->str_off = off;
        v->arena = arena;
        return POCKETLLM_OK;
    }
    v->elems = n ? pl_arena_alloc(arena, (size_t)n * sizeof *v->elems, 8) : NULL;
    if (n && !v->elems) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for %s (%" PRIu64 " elements)", what, n);
    /* elements of an array of arrays each carry their own element type and
     * count, so each is read as an ARRAY value one level deeper */
    for (uint64_t i = 0; i < n; i++)
        if ((st = read_value(c, arena, et, depth + 1, &v->elems[i], what))) return st;
    return POCKETLLM_OK;
}

static pocketllm_status parse_header(cursor *c, pl_gguf *g, uint64_t *n_tensors, uint64_t *n_kv) {
    pocketllm_status st;
    if (c->size < 4)
        return pl_fail(POCKETLLM_ERR_FORMAT, "file is %" PRIu64 " bytes, too short for the GGUF magic at byte 0",
                       c->size);
    if (memcmp(c->base, "GGUF", 4) != 0) {
        char m[5];
        for (int i = 0; i < 4; i++) m[i] = (c->base[i] >= 32 && c->base[i] < 127) ? (char)c->base[i] : '?';
        m[4] = '\0';
        return pl_fail(POCKETLLM_ERR_FORMAT, "bad magic '%s', not a GGUF file at byte 0", m);
    }
    c->pos = 4;
    if ((st = read_u32(c, &g->version, "the version"))) return st;
    if (g->version == 1)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "GGUF version 1 is not supported (only 2 and 3) at byte 4");
    if (g->version != 2 && g->version != 3) {
        if (g->version != 0 && (g->version & 0xffffu) == 0)
            return pl_fail(POCKETLLM_ERR_FORMAT, "GGUF version %" PRIu32 " looks byte-swapped: big-endian files "
                           "are not supported at byte 4", g->version);
        return pl_fail(POCKETLLM_ERR_FORMAT, "bad GGUF version %" PRIu32 " (expected 2 or 3) at byte 4", g->version);
    }
    if ((st = read_u64(c, n_tensors, "the tensor count"))) return st;
    if (*n_tensors > remaining(c) / MIN_TENSOR_BYTES)
        return pl_fail(POCKETLLM_ERR_FORMAT, "tensor count %" PRIu64 " is more than the file can hold at byte 8",
                       *n_tensors);
    if ((st = read_u64(c, n_kv, "the metadata count"))) return st;
    if (*n_kv > remaining(c) / MIN_KV_BYTES)
        return pl_fail(POCKETLLM_ERR_FORMAT, "metadata count %" PRIu64 " is more than the file can hold at byte 16",
                       *n_kv);
    return POCKETLLM_OK;
}

static pocketllm_status parse_kv(cursor *c, pl_gguf *g) {
    pocketllm_status st;
    g->kv = g->n_kv ? pl_arena_alloc(&g->arena, (size_t)g->n_kv * sizeof *g->kv, 8) : NULL;
    if (g->n_kv && !g->kv) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for %" PRIu64 " keys", g->n_kv);
    if (!pl_strmap_init(&g->key_index, (size_t)g->n_kv))
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for the key index");
    if ((st = count_value(c, g->n_kv))) return st;
    char what[96];
    for (uint64_t i = 0; i < g->n_kv; i++) {
        uint64_t at = c->pos;
        const char *k = NULL;
        uint64_t klen = 0;
        snprintf(what, sizeof what, "key %" PRIu64, i);
        if ((st = read_str(c, &k, &klen, what))) return st;
        if (klen == 0) return pl_fail(POCKETLLM_ERR_FORMAT, "key %" PRIu64 " is empty at byte %" PRIu64, i, at);
        if (memchr(k, '\0', (size_t)klen))
            return pl_fail(POCKETLLM_ERR_FORMAT, "key %" PRIu64 " contains a NUL byte at byte %" PRIu64, i, at);
        pl_gguf_kv *kv = &g->kv[i];
        kv->key = pl_arena_strndup(&g->arena, k, (size_t)klen);
        if (!kv->key) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory copying key %" PRIu64, i);
        uint64_t first = 0;
        int r = pl_strmap_put(&g->key_index, kv->key, (size_t)klen, i, &first);
        if (r < 0) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for the key index");
        if (r == 0)
            return pl_fail(POCKETLLM_ERR_FORMAT, "duplicate key '%.80s' (entries %" PRIu64 " and %" PRIu64
                           ") at byte %" PRIu64, kv->key, first, i, at);
        uint32_t type = 0;
        snprintf(what, sizeof what, "value of '%.60s'", kv->key);
        if ((st = read_u32(c, &type, what))) return st;
        if (type > POCKETLLM_GGUF_FLOAT64)
            return pl_fail(POCKETLLM_ERR_FORMAT, "key '%.80s' has invalid value type %" PRIu32 " at byte %" PRIu64,
                           kv->key, type, c->pos - 4);
        if ((st = read_value(c, &g->arena, type, 0, &kv->value, what))) return st;
    }
    return POCKETLLM_OK;
}

static pocketllm_status parse_alignment(pl_gguf *g) {
    g->alignment = PL_GGUF_DEFAULT_ALIGNMENT;
    const pocketllm_gguf_value *v = pl_gguf_get(g, "general.alignment");
    if (!v) return POCKETLLM_OK;
    if (v->type != POCKETLLM_GGUF_UINT32)
        return pl_fail(POCKETLLM_ERR_FORMAT, "general.alignment must be uint32, not %s at byte %" PRIu64,
                       pl_gguf_type_name(v->type), v->offset);
    uint32_t a;
    memcpy(&a, v->raw, 4);
    if (!pl_is_pow2(a))
        return pl_fail(POCKETLLM_ERR_FORMAT, "general.alignment %" PRIu32 " is not a power of two at byte %" PRIu64,
                       a, v->offset);
    g->alignment = a;
    return POCKETLLM_OK;
}

static pocketllm_status parse_tensor_info(cursor *c, pl_gguf *g, uint64_t i) {
    pocketllm_status st;
    pl_gguf_tensor *t = &g->tensors[i];
    uint64_t at = c->pos;
    const char *name = NULL;
    uint64_t nlen = 0;
    char what[96];
    snprintf(what, sizeof what, "the name of tensor %" PRIu64, i);
    if ((st = read_str(c, &name, &nlen, what))) return st;
    if (nlen > PL_GGUF_MAX_NAME)
        return pl_fail(POCKETLLM_ERR_FORMAT, "tensor %" PRIu64 " name is %" PRIu64 " bytes, longer than %d at byte %"
                       PRIu64, i, nlen, PL_GGUF_MAX_NAME, at);
    if (memchr(name, '\0', (size_t)nlen))
        return pl_fail(POCKETLLM_ERR_FORMAT, "tensor %" PRIu64 " name contains a NUL byte at byte %" PRIu64, i, at);
    t->name = pl_arena_strndup(&g->arena, name, (size_t)nlen);
    if (!t->name) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory copying a tensor name");
    uint64_t first = 0;
    int r = pl_strmap_put(&g->tensor_index, t->name, (size_t)nlen, i, &first);
    if (r < 0) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for the tensor index");
    if (r == 0)
        return pl_fail(POCKETLLM_ERR_FORMAT, "duplicate tensor name '%s' (tensors %" PRIu64 " and %" PRIu64
                       ") at byte %" PRIu64, t->name, first, i, at);

    snprintf(what, sizeof what, "tensor '%s'", t->name);
    uint64_t dims_at = c->pos;
    if ((st = read_u32(c, &t->n_dims, what))) return st;
    if (t->n_dims > PL_GGUF_MAX_DIMS)
        return pl_fail(POCKETLLM_ERR_FORMAT, "tensor '%s' has %" PRIu32 " dimensions, more than %d at byte %" PRIu64,
                       t->name, t->n_dims, PL_GGUF_MAX_DIMS, dims_at);
    uint64_t n_el = 1;
    for (uint32_t d = 0; d < PL_GGUF_MAX_DIMS; d++) {
        t->ne[d] = 1;
        if (d >= t->n_dims) continue;
        uint64_t ne = 0;
        uint64_t ne_at = c->pos;
        if ((st = read_u64(c, &ne, what))) return st;
        if (ne > (uint64_t)INT64_MAX)
            return pl_fail(POCKETLLM_ERR_FORMAT, "tensor '%s' dimension %" PRIu32 " is negative (%" PRId64 ") at byte %"
                           PRIu64, t->name, d, (int64_t)ne, ne_at);
        t->ne[d] = (int64_t)ne;
        if (!pl_mul_u64(n_el, ne, &n_el) || n_el > (uint64_t)INT64_MAX)
            return pl_fail(POCKETLLM_ERR_FORMAT, "tensor '%s' element count overflows (dimension %" PRIu32 " = %" PRIu64
                           ") at byte %" PRIu64, t->name, d, ne, ne_at);
    }
    t->n_elements = n_el;
    uint64_t type_at = c->pos;
    if ((st = read_u32(c, &t->type, what))) return st;
    const pl_type_traits *tt = pl_type_get(t->type);
    if (!tt)
        return pl_fail(POCKETLLM_ERR_FORMAT, "tensor '%s' has unknown type id %" PRIu32 " at byte %" PRIu64,
                       t->name, t->type, type_at);
    if (tt->block == 0)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "tensor '%s' has type id %" PRIu32 " (%s), which GGUF no longer "
                       "allows at byte %" PRIu64, t->name, t->type, tt->name, type_at);
    if ((uint64_t)t->ne[0] % tt->block != 0)
        return pl_fail(POCKETLLM_ERR_FORMAT, "tensor '%s' rows of %" PRId64 " elements are not whole %s blocks of %"
                       PRIu32 " at byte %" PRIu64, t->name, t->ne[0], tt->name, tt->block, dims_at);
    if (!pl_type_row_bytes(t->type, n_el, &t->n_bytes))
        return pl_fail(POCKETLLM_ERR_FORMAT, "tensor '%s' byte size overflows at byte %" PRIu64, t->name, dims_at);
    uint64_t off_at = c->pos;
    if ((st = read_u64(c, &t->offset, what))) return st;
    if (t->offset % g->alignment != 0)
        return pl_fail(POCKETLLM_ERR_FORMAT, "tensor '%s' data offset %" PRIu64 " is not a multiple of the alignment %"
                       PRIu32 " at byte %" PRIu64, t->name, t->offset, g->alignment, off_at);
    return POCKETLLM_OK;
}

static int cmp_tensor_offset(const void *a, const void *b) {
    const pl_gguf_tensor *x = *(const pl_gguf_tensor *const *)a, *y = *(const pl_gguf_tensor *const *)b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Every tensor's data lies inside the file and no two overlap. */
static pocketllm_status check_tensor_data(pl_gguf *g, uint64_t infos_end) {
    if (!pl_align_up_u64(infos_end, g->alignment, &g->data_offset))
        return pl_fail(POCKETLLM_ERR_FORMAT, "data section offset overflows at byte %" PRIu64, infos_end);
    if (g->n_tensors == 0) return POCKETLLM_OK;
    if (g->data_offset > g->size)
        return pl_fail(POCKETLLM_ERR_FORMAT, "data section would start at byte %" PRIu64 ", past the end of the file "
                       "(%" PRIu64 " bytes) at byte %" PRIu64, g->data_offset, g->size, infos_end);
    uint64_t data_size = g->size - g->data_offset;
    for (uint64_t i = 0; i < g->n_tensors; i++) {
        pl_gguf_tensor *t = &g->tensors[i];
        uint64_t end;
        if (!pl_add_u64(t->offset, t->n_bytes, &end) || end > data_size)
            return pl_fail(POCKETLLM_ERR_FORMAT, "tensor '%s' data (%" PRIu64 " bytes at data offset %" PRIu64
                           ") runs past the end of the file (%" PRIu64 " bytes) at byte %" PRIu64,
                           t->name, t->n_bytes, t->offset, g->size,
                           g->data_offset + (t->offset < data_size ? t->offset : data_size));
        t->data = g->base + g->data_offset + t->offset;
    }
    pl_gguf_tensor **order = malloc((size_t)g->n_tensors * sizeof *order);
    if (!order) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory sorting tensors");
    for (uint64_t i = 0; i < g->n_tensors; i++) order[i] = &g->tensors[i];
    qsort(order, (size_t)g->n_tensors, sizeof *order, cmp_tensor_offset);
    pocketllm_status st = POCKETLLM_OK;
    for (uint64_t i = 1; i < g->n_tensors && !st; i++) {
        const pl_gguf_tensor *a = order[i - 1], *b = order[i];
        if (a->n_bytes && b->n_bytes && a->offset + a->n_bytes > b->offset)
            st = pl_fail(POCKETLLM_ERR_FORMAT, "tensors '%s' and '%s' overlap at byte %" PRIu64, a->name, b->name,
                         g->data_offset + b->offset);
    }
    free(order);
    return st;
}

static pocketllm_status parse(pl_gguf *g) {
    cursor c = {.base = g->base, .size = g->size};
    uint64_t n_tensors = 0, n_kv = 0;
    pocketllm_status st;
    if ((st = parse_header(&c, g, &n_tensors, &n_kv))) return st;
    g->n_kv = n_kv;
    if ((st = parse_kv(&c, g))) return st;
    if ((st = parse_alignment(g))) return st;
    g->n_tensors = n_tensors;
    g->tensors = n_tensors ? pl_arena_alloc(&g->arena, (size_t)n_tensors * sizeof *g->tensors, 8) : NULL;
    if (n_tensors && !g->tensors)
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for %" PRIu64 " tensors", n_tensors);
    if (!pl_strmap_init(&g->tensor_index, (size_t)n_tensors))
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for the tensor index");
    for (uint64_t i = 0; i < n_tensors; i++)
        if ((st = parse_tensor_info(&c, g, i))) return st;
    return check_tensor_data(g, c.pos);
}

static pocketllm_status finish_open(pl_gguf *g, const char *name, pl_gguf **out) {
    pocketllm_status st = parse(g);
    if (st) {
        pl_error_prefix(name);
        pocketllm_gguf_close(g);
        return st;
    }
    *out = g;
    return POCKETLLM_OK;
}

pocketllm_status pl_gguf_open_memory(const void *data, uint64_t size, const char *name, pl_gguf **out) {
    if (!out || (!data && size)) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "gguf: no data");
    *out = NULL;
    pl_gguf *g = calloc(1, sizeof *g);
    if (!g) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    g->base = data;
    g->size = size;
    g->path = strdup(name ? name : "<memory>");
    if (!g->path) {
        free(g);
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    }
    return finish_open(g, g->path, out);
}

pocketllm_status pocketllm_gguf_open(const char *path, pocketllm_gguf **out) {
    if (!out || !path) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "gguf_open: no path");
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return pl_fail(POCKETLLM_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return pl_fail(POCKETLLM_ERR_IO, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return pl_fail(POCKETLLM_ERR_IO, "%s: not a regular file", path);
    }
    pl_gguf *g = calloc(1, sizeof *g);
    if (!g || !(g->path = strdup(path))) {
        free(g);
        close(fd);
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    }
    g->size = (uint64_t)sb.st_size;
    if (g->size > 0) {
        void *m = mmap(NULL, (size_t)g->size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            int e = errno;
            close(fd);
            free(g->path);
            free(g);
            return pl_fail(POCKETLLM_ERR_IO, "%s: cannot map %" PRIu64 " bytes: %s", path, (uint64_t)sb.st_size,
                           strerror(e));
        }
        g->base = m;
        g->mapped = true;
    }
    close(fd);
    return finish_open(g, g->path, out);
}

void pocketllm_gguf_close(pocketllm_gguf *g) {
    if (!g) return;
    if (g->mapped && g->base) munmap((void *)g->base, (size_t)g->size);
    pl_strmap_free(&g->key_index);
    pl_strmap_free(&g->tensor_index);
    pl_arena_free(&g->arena);
    free(g->path);
    free(g);
}
