/*
 * gguf_access.c -- lookups and typed reads over a parsed GGUF file, for the
 * engine (pl_gguf_*) and for outside callers (pocketllm_gguf_*).
 */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "gguf/gguf.h"

const pocketllm_gguf_value *pl_gguf_get(const pl_gguf *g, const char *key) {
    uint64_t i;
    if (!g || !key || !pl_strmap_get(&g->key_index, key, strlen(key), &i)) return NULL;
    return &g->kv[i].value;
}

const pl_gguf_tensor *pl_gguf_tensor_by_name(const pl_gguf *g, const char *name) {
    uint64_t i;
    if (!g || !name || !pl_strmap_get(&g->tensor_index, name, strlen(name), &i)) return NULL;
    return &g->tensors[i];
}

pocketllm_status pl_gguf_scalar_u64(uint32_t type, const uint8_t *raw, uint64_t *out) {
    int64_t s;
    switch (type) {
    case POCKETLLM_GGUF_UINT8: case POCKETLLM_GGUF_BOOL: *out = raw[0]; return POCKETLLM_OK;
    case POCKETLLM_GGUF_UINT16: { uint16_t v; memcpy(&v, raw, 2); *out = v; return POCKETLLM_OK; }
    case POCKETLLM_GGUF_UINT32: { uint32_t v; memcpy(&v, raw, 4); *out = v; return POCKETLLM_OK; }
    case POCKETLLM_GGUF_UINT64: memcpy(out, raw, 8); return POCKETLLM_OK;
    case POCKETLLM_GGUF_INT8: case POCKETLLM_GGUF_INT16: case POCKETLLM_GGUF_INT32: case POCKETLLM_GGUF_INT64:
        if (pl_gguf_scalar_i64(type, raw, &s)) return POCKETLLM_ERR_INVALID_ARGUMENT;
        if (s < 0) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "negative value %" PRId64 " where a count was expected", s);
        *out = (uint64_t)s;
        return POCKETLLM_OK;
    default:
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "a %s value where an integer was expected", pl_gguf_type_name(type));
    }
}

pocketllm_status pl_gguf_scalar_i64(uint32_t type, const uint8_t *raw, int64_t *out) {
    switch (type) {
    case POCKETLLM_GGUF_INT8: *out = (int8_t)raw[0]; return POCKETLLM_OK;
    case POCKETLLM_GGUF_INT16: { int16_t v; memcpy(&v, raw, 2); *out = v; return POCKETLLM_OK; }
    case POCKETLLM_GGUF_INT32: { int32_t v; memcpy(&v, raw, 4); *out = v; return POCKETLLM_OK; }
    case POCKETLLM_GGUF_INT64: memcpy(out, raw, 8); return POCKETLLM_OK;
    case POCKETLLM_GGUF_UINT8: case POCKETLLM_GGUF_BOOL: case POCKETLLM_GGUF_UINT16: case POCKETLLM_GGUF_UINT32:
    case POCKETLLM_GGUF_UINT64: {
        uint64_t u;
        pl_gguf_scalar_u64(type, raw, &u);
        if (u > (uint64_t)INT64_MAX) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "value %" PRIu64 " is too large", u);
        *out = (int64_t)u;
        return POCKETLLM_OK;
    }
    default:
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "a %s value where an integer was expected", pl_gguf_type_name(type));
    }
}

pocketllm_status pl_gguf_scalar_f64(uint32_t type, const uint8_t *raw, double *out) {
    if (type == POCKETLLM_GGUF_FLOAT32) {
        float f;
        memcpy(&f, raw, 4);
        *out = f;
        return POCKETLLM_OK;
    }
    if (type == POCKETLLM_GGUF_FLOAT64) {
        memcpy(out, raw, 8);
        return POCKETLLM_OK;
    }
    int64_t i = 0;
    uint64_t u = 0;
    if (type == POCKETLLM_GGUF_UINT64) {
        pl_gguf_scalar_u64(type, raw, &u);
        *out = (double)u;
        return POCKETLLM_OK;
    }
    if (pl_gguf_scalar_i64(type, raw, &i))
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "a %s value where a number was expected", pl_gguf_type_name(type));
    *out = (double)i;
    return POCKETLLM_OK;
}

static pocketllm_status key_problem(const char *key) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s", pocketllm_last_error());
    return pl_fail(POCKETLLM_ERR_FORMAT, "metadata '%s': %s", key, msg);
}

pocketllm_status pl_gguf_get_u64(const pl_gguf *g, const char *key, uint64_t def, uint64_t *out) {
    const pocketllm_gguf_value *v = pl_gguf_get(g, key);
    if (!v) {
        *out = def;
        return POCKETLLM_OK;
    }
    if (!v->raw || pl_gguf_type_size(v->type) == 0 || pl_gguf_scalar_u64(v->type, v->raw, out)) {
        if (!v->raw || pl_gguf_type_size(v->type) == 0)
            pl_fail(POCKETLLM_ERR_FORMAT, "a %s where an integer was expected", pl_gguf_type_name(v->type));
        return key_problem(key);
    }
    return POCKETLLM_OK;
}

pocketllm_status pl_gguf_get_f64(const pl_gguf *g, const char *key, double def, double *out) {
    const pocketllm_gguf_value *v = pl_gguf_get(g, key);
    if (!v) {
        *out = def;
        return POCKETLLM_OK;
    }
    if (!v->raw || pl_gguf_type_size(v->type) == 0 || pl_gguf_scalar_f64(v->type, v->raw, out)) {
        if (!v->raw || pl_gguf_type_size(v->type) == 0)
            pl_fail(POCKETLLM_ERR_FORMAT, "a %s where a number was expected", pl_gguf_type_name(v->type));
        return key_problem(key);
    }
    if (!isfinite(*out)) return pl_fail(POCKETLLM_ERR_FORMAT, "metadata '%s' is not a finite number", key);
    return POCKETLLM_OK;
}

const char *pl_gguf_get_str(const pl_gguf *g, const char *key) {
    const pocketllm_gguf_value *v = pl_gguf_get(g, key);
    return v && v->type == POCKETLLM_GGUF_STRING ? v->str : NULL;
}

/* ---- public accessors ---- */

const char *pocketllm_gguf_type_name(pocketllm_gguf_type type) { return pl_gguf_type_name(type); }

uint32_t pocketllm_gguf_version(const pocketllm_gguf *g) { return g ? g->version : 0; }
uint64_t pocketllm_gguf_file_size(const pocketllm_gguf *g) { return g ? g->size : 0; }
uint32_t pocketllm_gguf_alignment(const pocketllm_gguf *g) { return g ? g->alignment : 0; }
uint64_t pocketllm_gguf_data_offset(const pocketllm_gguf *g) { return g ? g->data_offset : 0; }
uint64_t pocketllm_gguf_kv_count(const pocketllm_gguf *g) { return g ? g->n_kv : 0; }

const char *pocketllm_gguf_kv_key(const pocketllm_gguf *g, uint64_t i) {
    return g && i < g->n_kv ? g->kv[i].key : NULL;
}

const pocketllm_gguf_value *pocketllm_gguf_kv_value(const pocketllm_gguf *g, uint64_t i) {
    return g && i < g->n_kv ? &g->kv[i].value : NULL;
}

const pocketllm_gguf_value *pocketllm_gguf_find(const pocketllm_gguf *g, const char *key) {
    return pl_gguf_get(g, key);
}

pocketllm_gguf_type pocketllm_gguf_value_type(const pocketllm_gguf_value *v) {
    return v ? (pocketllm_gguf_type)v->type : POCKETLLM_GGUF_UINT8;
}

static pocketllm_status need_scalar(const pocketllm_gguf_value *v) {
    if (!v) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "no value");
    if (pl_gguf_type_size(v->type) == 0)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "a %s value is not a number", pl_gguf_type_name(v->type));
    return POCKETLLM_OK;
}

pocketllm_status pocketllm_gguf_value_u64(const pocketllm_gguf_value *v, uint64_t *out) {
    pocketllm_status st = need_scalar(v);
    return st ? st : pl_gguf_scalar_u64(v->type, v->raw, out);
}

pocketllm_status pocketllm_gguf_value_i64(const pocketllm_gguf_value *v, int64_t *out) {
    pocketllm_status st = need_scalar(v);
    return st ? st : pl_gguf_scalar_i64(v->type, v->raw, out);
}

pocketllm_status pocketllm_gguf_value_f64(const pocketllm_gguf_value *v, double *out) {
    pocketllm_status st = need_scalar(v);
    return st ? st : pl_gguf_scalar_f64(v->type, v->raw, out);
}

const char *pocketllm_gguf_value_str(const pocketllm_gguf_value *v, uint64_t *len) {
    if (!v || v->type != POCKETLLM_GGUF_STRING) return NULL;
    if (len) *len = v->n;
    return v->str;
}

pocketllm_gguf_type pocketllm_gguf_array_type(const pocketllm_gguf_value *v) {
    return v && v->type == POCKETLLM_GGUF_ARRAY ? (pocketllm_gguf_type)v->elem_type : POCKETLLM_GGUF_UINT8;
}

uint64_t pocketllm_gguf_array_len(const pocketllm_gguf_value *v) {
    return v && v->type == POCKETLLM_GGUF_ARRAY ? v->n : 0;
}

static pthread_mutex_t string_nodes_mu = PTHREAD_MUTEX_INITIALIZER;

/* Element i of an array of strings as a node of its own (a NUL-terminated
 * copy), made on first use and kept with the header: the nodes are a cache
 * beside the value, which is otherwise left as it was read. */
static const pocketllm_gguf_value *string_node(const pocketllm_gguf_value *cv, uint64_t i) {
    pocketllm_gguf_value *v = (pocketllm_gguf_value *)cv; /* the header's own memory, not a const object */
    pthread_mutex_lock(&string_nodes_mu);
    if (!v->nodes) v->nodes = pl_arena_alloc(v->arena, (size_t)v->n * sizeof *v->nodes, 8);
    pocketllm_gguf_value *node = v->nodes ? v->nodes[i] : NULL;
    if (v->nodes && !node && (node = pl_arena_alloc(v->arena, sizeof *node, 8))) {
        uint64_t len;
        const char *s = pl_gguf_array_str(v, i, &len);
        node->type = POCKETLLM_GGUF_STRING;
        node->n = len;
        node->offset = v->offset + 12 + v->str_off[i];
        node->str = pl_arena_strndup(v->arena, s, (size_t)len);
        if (node->str) v->nodes[i] = node;
        else node = NULL;
    }
    pthread_mutex_unlock(&string_nodes_mu);
    if (!node) pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for a string of a GGUF array");
    return node;
}

const pocketllm_gguf_value *pocketllm_gguf_array_get(const pocketllm_gguf_value *v, uint64_t i) {
    if (!v || v->type != POCKETLLM_GGUF_ARRAY || i >= v->n) return NULL;
    if (v->elem_type == POCKETLLM_GGUF_STRING) return string_node(v, i);
    if (v->elems) return &v->elems[i];
    /* fixed-size elements have no node of their own: make one on the
     * caller's thread, valid until the next call on this thread */
    static _Thread_local pocketllm_gguf_value scratch;
    uint32_t sz = pl_gguf_type_size(v->elem_type);
    memset(&scratch, 0, sizeof scratch);
    scratch.type = v->elem_type;
    scratch.raw = v->raw + i * sz;
    scratch.offset = v->offset + 12 + i * sz;
    return &scratch;
}

uint64_t pocketllm_gguf_tensor_count(const pocketllm_gguf *g) { return g ? g->n_tensors : 0; }

pocketllm_status pocketllm_gguf_tensor(const pocketllm_gguf *g, uint64_t i, pocketllm_tensor_info *out) {
    if (!g || !out || i >= g->n_tensors)
        return pl_fail(POCKETLLM_ERR_NOT_FOUND, "tensor index %" PRIu64 " out of range", i);
    const pl_gguf_tensor *t = &g->tensors[i];
    out->name = t->name;
    out->type = t->type;
    out->n_dims = t->n_dims;
    memcpy(out->ne, t->ne, sizeof out->ne);
    out->offset = g->data_offset + t->offset;
    out->n_bytes = t->n_bytes;
    out->data = t->data;
    return POCKETLLM_OK;
}

int64_t pocketllm_gguf_find_tensor(const pocketllm_gguf *g, const char *name) {
    const pl_gguf_tensor *t = pl_gguf_tensor_by_name(g, name);
    return t ? (int64_t)(t - g->tensors) : -1;
}
