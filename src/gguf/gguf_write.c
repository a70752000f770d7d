/*
 * gguf_write.c -- write GGUF v3 files: metadata in the order it was set,
 * tensors in the order they were added, data aligned to general.alignment
 * (32 unless set).  Values are encoded when set, so the header is a plain
 * concatenation at write time.  Output goes to "<path>.partial" and is
 * renamed into place only when every byte has been written.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/checked.h"
#include "base/error.h"
#include "gguf/gguf.h"
#include "quant/types.h"

typedef struct buf {
    uint8_t *p;
    size_t n, cap;
} buf;

static bool buf_put(buf *b, const void *data, size_t n) {
    if (n > SIZE_MAX - b->n) return false;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n) {
            if (cap > SIZE_MAX / 2) return false;
            cap *= 2;
        }
        uint8_t *p = realloc(b->p, cap);
        if (!p) return false;
        b->p = p;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, data, n);
    b->n += n;
    return true;
}

static bool buf_u32(buf *b, uint32_t v) { return buf_put(b, &v, 4); }
static bool buf_u64(buf *b, uint64_t v) { return buf_put(b, &v, 8); }
static bool buf_str(buf *b, const char *s, uint64_t len) { return buf_u64(b, len) && buf_put(b, s, (size_t)len); }

typedef struct wkv {
    char *key;
    uint32_t type;
    buf value; /* encoded value, without the type */
} wkv;

typedef struct wtensor {
    char *name;
    uint32_t type, n_dims;
    int64_t ne[4];
    uint64_t n_bytes, offset;
    const void *data;
} wtensor;

struct pocketllm_gguf_writer {
    wkv *kv;
    size_t n_kv, cap_kv;
    wtensor *t;
    size_t n_t, cap_t;
    /* streaming state */
    FILE *f;
    char *path, *partial;
    uint32_t alignment;
    size_t cur;           /* tensor being written */
    uint64_t cur_written; /* bytes of it written so far */
    pocketllm_status failed;
};

pocketllm_status pocketllm_gguf_writer_new(pocketllm_gguf_writer **out) {
    if (!out) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "writer: no output pointer");
    *out = calloc(1, sizeof **out);
    return *out ? POCKETLLM_OK : pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
}

static void close_partial(pocketllm_gguf_writer *w) {
    if (w->f) {
        fclose(w->f);
        w->f = NULL;
        if (w->partial) unlink(w->partial);
    }
    free(w->path);
    free(w->partial);
    w->path = w->partial = NULL;
}

void pocketllm_gguf_writer_free(pocketllm_gguf_writer *w) {
    if (!w) return;
    close_partial(w);
    for (size_t i = 0; i < w->n_kv; i++) {
        free(w->kv[i].key);
        free(w->kv[i].value.p);
    }
    for (size_t i = 0; i < w->n_t; i++) free(w->t[i].name);
    free(w->kv);
    free(w->t);
    free(w);
}

static pocketllm_status oom(void) { return pl_fail(POCKETLLM_ERR_NO_MEMORY, "gguf writer: out of memory"); }

/* The entry for `key`, created empty at the end if absent. */
static pocketllm_status slot(pocketllm_gguf_writer *w, const char *key, wkv **out) {
    if (!w || !key || !*key) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "gguf writer: empty key");
    if (w->f) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "gguf writer: metadata changed after begin");
    for (size_t i = 0; i < w->n_kv; i++) {
        if (strcmp(w->kv[i].key, key) == 0) {
            w->kv[i].value.n = 0;
            *out = &w->kv[i];
            return POCKETLLM_OK;
        }
    }
    if (w->n_kv == w->cap_kv) {
        size_t cap = w->cap_kv ? w->cap_kv * 2 : 32;
        wkv *kv = realloc(w->kv, cap * sizeof *kv);
        if (!kv) return oom();
        w->kv = kv;
        w->cap_kv = cap;
    }
    wkv *e = &w->kv[w->n_kv];
    memset(e, 0, sizeof *e);
    if (!(e->key = strdup(key))) return oom();
    w->n_kv++;
    *out = e;
    return POCKETLLM_OK;
}

pocketllm_status pocketllm_gguf_writer_set_scalar(pocketllm_gguf_writer *w, const char *key, pocketllm_gguf_type type,
                                                  const void *v) {
    uint32_t size = pl_gguf_type_size(type);
    if (!size || !v) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "gguf writer: '%s': not a scalar type", key);
    wkv *e;
    pocketllm_status st = slot(w, key, &e);
    if (st) return st;
    e->type = type;
    return buf_put(&e->value, v, size) ? POCKETLLM_OK : oom();
}

pocketllm_status pocketllm_gguf_writer_set_u32(pocketllm_gguf_writer *w, const char *key, uint32_t v) {
    return pocketllm_gguf_writer_set_scalar(w, key, POCKETLLM_GGUF_UINT32, &v);
}
pocketllm_status pocketllm_gguf_writer_set_i32(pocketllm_gguf_writer *w, const char *key, int32_t v) {
    return pocketllm_gguf_writer_set_scalar(w, key, POCKETLLM_GGUF_INT32, &v);
}
pocketllm_status pocketllm_gguf_writer_set_u64(pocketllm_gguf_writer *w, const char *key, uint64_t v) {
    return pocketllm_gguf_writer_set_scalar(w, key, POCKETLLM_GGUF_UINT64, &v);
}
pocketllm_status pocketllm_gguf_writer_set_f32(pocketllm_gguf_writer *w, const char *key, float v) {
    return pocketllm_gguf_writer_set_scalar(w, key, POCKETLLM_GGUF_FLOAT32, &v);
}
pocketllm_status pocketllm_gguf_writer_set_bool(pocketllm_gguf_writer *w, const char *key, int v) {
    uint8_t b = v ? 1 : 0;
    return pocketllm_gguf_writer_set_scalar(w, key, POCKETLLM_GGUF_BOOL, &b);
}

pocketllm_status pocketllm_gguf_writer_set_str(pocketllm_gguf_writer *w, const char *key, const char *v) {
    if (!v) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "gguf writer: '%s': NULL string", key ? key : "");
    wkv *e;
    pocketllm_status st = slot(w, key, &e);
    if (st) return st;
    e->type = POCKETLLM_GGUF_STRING;
    return buf_str(&e->value, v, strlen(v)) ? POCKETLLM_OK : oom();
}

pocketllm_status pocketllm_gguf_writer_set_array(pocketllm_gguf_writer *w, const char *key, pocketllm_gguf_type et,
                                                 const void *data, uint64_t n) {
    uint32_t size = pl_gguf_type_size(et);
    uint64_t bytes;
    if (!size || (n && !data) || !pl_mul_u64(n, size, &bytes) || bytes > SIZE_MAX)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "gguf writer: '%s': bad array", key ? key : "");
    wkv *e;
    pocketllm_status st = slot(w, key, &e);
    if (st) return st;
    e->type = POCKETLLM_GGUF_ARRAY;
    if (!buf_u32(&e->value, et) || !buf_u64(&e->value, n) || !buf_put(&e->value, data, (size_t)bytes)) return oom();
    return POCKETLLM_OK;
}

pocketllm_status pocketllm_gguf_writer_set_str_array(pocketllm_gguf_writer *w, const char *key,
                                                     const char *const *strs, uint64_t n) {
    if (n && !strs) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "gguf writer: '%s': NULL array", key ? key : "");
    wkv *e;
    pocketllm_status st = slot(w, key, &e);
    if (st) return st;
    e->type = POCKETLLM_GGUF_ARRAY;
    if (!buf_u32(&e->value, POCKETLLM_GGUF_STRING) || !buf_u64(&e->value, n)) return oom();
    for (uint64_t i = 0; i < n; i++) {
        const char *s = strs[i] ? strs[i] : "";
        if (!buf_str(&e->value, s, strlen(s))) return oom();
    }
    return POCKETLLM_OK;
}

/* Encode a parsed value (any type, nested arrays included). */
static bool encode_value(buf *b, const pocketllm_gguf_value *v) {
    uint32_t size = pl_gguf_type_size(v->type);
    if (size) return buf_put(b, v->raw, size);
    if (v->type == POCKETLLM_GGUF_STRING) return buf_str(b, v->str, v->n);
    if (!buf_u32(b, v->elem_type) || !buf_u64(b, v->n)) return false;
    uint32_t esize = pl_gguf_type_size(v->elem_type);
    if (esize) return buf_put(b, v->raw, (size_t)(v->n * esize)); /* bounded by the file it came from */
    if (v->elem_type == POCKETLLM_GGUF_STRING) {
        for (uint64_t i = 0; i < v->n; i++) {
            uint64_t len;
            const char *s = pl_gguf_array_str(v, i, &len);
            if (!buf_str(b, s, len)) return false;
        }
        return true;
    }
    for (uint64_t i = 0; i < v->n; i++)
        if (!encode_value(b, &v->elems[i])) return false;
    return true;
}

pocketllm_status pocketllm_gguf_writer_set_value(pocketllm_gguf_writer *w, const char *key,
                                                 const pocketllm_gguf_value *v) {
    if (!v) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "gguf writer: '%s': no value", key ? key : "");
    wkv *e;
    pocketllm_status st = slot(w, key, &e);
    if (st) return st;
    e->type = v->type;
    return encode_value(&e->value, v) ? POCKETLLM_OK : oom();
}

pocketllm_status pocketllm_gguf_writer_remove(pocketllm_gguf_writer *w, const char *key) {
    if (!w || !key) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "gguf writer: no key");
    for (size_t i = 0; i < w->n_kv; i++) {
        if (strcmp(w->kv[i].key, key) != 0) continue;
        free(w->kv[i].key);
        free(w->kv[i].value.p);
        memmove(&w->kv[i], &w->kv[i + 1], (w->n_kv - i - 1) * sizeof *w->kv);
        w->n_kv--;
        return POCKETLLM_OK;
    }
    return pl_fail(POCKETLLM_ERR_NOT_FOUND, "gguf writer: no key '%s'", key);
}

pocketllm_status pocketllm_gguf_writer_add_tensor(pocketllm_gguf_writer *w, const char *name, uint32_t type,
                                                  uint32_t n_dims, const int64_t *ne, const void *data) {
    if (!w || !name || !ne || n_dims == 0 || n_dims > 4)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "gguf writer: bad tensor arguments");
    if (w->f) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "gguf writer: tensor added after begin");
    if (strlen(name) > PL_GGUF_MAX_NAME)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "gguf writer: tensor name '%s' is longer than %d bytes", name,
                       PL_GGUF_MAX_NAME);
    for (size_t i = 0; i < w->n_t; i++)
        if (strcmp(w->t[i].name, name) == 0)
            return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "gguf writer: duplicate tensor '%s'", name);
    wtensor t = {.type = type, .n_dims = n_dims, .ne = {1, 1, 1, 1}, .data = data};
    uint64_t n_el = 1;
    for (uint32_t d = 0; d < n_dims; d++) {
        if (ne[d] < 0 || !pl_mul_u64(n_el, (uint64_t)ne[d], &n_el) || n_el > (uint64_t)INT64_MAX)
            return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "gguf writer: tensor '%s' has a bad shape", name);
        t.ne[d] = ne[d];
    }
    if (!pl_type_valid(type)) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "gguf writer: tensor '%s': bad type %u", name, type);
    if ((uint64_t)t.ne[0] % pl_type_get(type)->block != 0 || !pl_type_row_bytes(type, n_el, &t.n_bytes))
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "gguf writer: tensor '%s': rows of %" PRId64
                       " are not whole %s blocks", name, t.ne[0], pl_type_get(type)->name);
    if (w->n_t == w->cap_t) {
        size_t cap = w->cap_t ? w->cap_t * 2 : 64;
        wtensor *nt = realloc(w->t, cap * sizeof *nt);
        if (!nt) return oom();
        w->t = nt;
        w->cap_t = cap;
    }
    if (!(t.name = strdup(name))) return oom();
    w->t[w->n_t++] = t;
    return POCKETLLM_OK;
}

static pocketllm_status write_fail(pocketllm_gguf_writer *w, pocketllm_status st) {
    w->failed = st;
    close_partial(w);
    return st;
}

static pocketllm_status put(pocketllm_gguf_writer *w, const void *p, size_t n) {
    if (n && fwrite(p, 1, n, w->f) != n)
        return write_fail(w, pl_fail(POCKETLLM_ERR_IO, "%s: write failed: %s", w->partial, strerror(errno)));
    return POCKETLLM_OK;
}

static pocketllm_status pad(pocketllm_gguf_writer *w, uint64_t written) {
    static const uint8_t zeros[4096];
    uint64_t to = written;
    pl_align_up_u64(written, w->alignment, &to);
    for (uint64_t left = to - written; left;) {
        size_t n = left > sizeof zeros ? sizeof zeros : (size_t)left;
        pocketllm_status st = put(w, zeros, n);
        if (st) return st;
        left -= n;
    }
    return POCKETLLM_OK;
}

/* Write tensors that were given with their data, until one that must be
 * streamed (or the end). */
static pocketllm_status advance(pocketllm_gguf_writer *w) {
    while (w->cur < w->n_t && w->t[w->cur].data) {
        const wtensor *t = &w->t[w->cur];
        pocketllm_status st = put(w, t->data, (size_t)t->n_bytes);
        if (st || (st = pad(w, t->n_bytes))) return st;
        w->cur++;
    }
    return POCKETLLM_OK;
}

pocketllm_status pocketllm_gguf_writer_begin(pocketllm_gguf_writer *w, const char *path) {
    if (!w || !path) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "gguf writer: no path");
    if (w->f) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "gguf writer: already writing");
    w->alignment = PL_GGUF_DEFAULT_ALIGNMENT;
    for (size_t i = 0; i < w->n_kv; i++) {
        if (strcmp(w->kv[i].key, "general.alignment") != 0) continue;
        uint32_t a = 0;
        if (w->kv[i].type == POCKETLLM_GGUF_UINT32) memcpy(&a, w->kv[i].value.p, 4);
        if (!pl_is_pow2(a))
            return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "gguf writer: general.alignment must be a uint32 power of two");
        w->alignment = a;
    }
    /* offsets of the tensor data, relative to the data section */
    uint64_t off = 0;
    for (size_t i = 0; i < w->n_t; i++) {
        w->t[i].offset = off;
        if (!pl_add_u64(off, w->t[i].n_bytes, &off) || !pl_align_up_u64(off, w->alignment, &off))
            return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "gguf writer: total tensor size overflows");
    }
    size_t plen = strlen(path);
    w->path = strdup(path);
    w->partial = malloc(plen + sizeof ".partial");
    if (!w->path || !w->partial) {
        close_partial(w);
        return oom();
    }
    memcpy(w->partial, path, plen);
    memcpy(w->partial + plen, ".partial", sizeof ".partial");
    w->f = fopen(w->partial, "wb");
    if (!w->f) {
        pocketllm_status st = pl_fail(POCKETLLM_ERR_IO, "%s: cannot create: %s", w->partial, strerror(errno));
        close_partial(w);
        return st;
    }
    setvbuf(w->f, NULL, _IOFBF, 1 << 20);
    w->failed = POCKETLLM_OK;
    w->cur = 0;
    w->cur_written = 0;

    buf h = {0};
    bool ok = buf_put(&h, "GGUF", 4) && buf_u32(&h, 3) && buf_u64(&h, w->n_t) && buf_u64(&h, w->n_kv);
    for (size_t i = 0; ok && i < w->n_kv; i++)
        ok = buf_str(&h, w->kv[i].key, strlen(w->kv[i].key)) && buf_u32(&h, w->kv[i].type) &&
             buf_put(&h, w->kv[i].value.p, w->kv[i].value.n);
    for (size_t i = 0; ok && i < w->n_t; i++) {
        const wtensor *t = &w->t[i];
        ok = buf_str(&h, t->name, strlen(t->name)) && buf_u32(&h, t->n_dims);
        for (uint32_t d = 0; ok && d < t->n_dims; d++) ok = buf_u64(&h, (uint64_t)t->ne[d]);
        ok = ok && buf_u32(&h, t->type) && buf_u64(&h, t->offset);
    }
    if (!ok) {
        free(h.p);
        return write_fail(w, oom());
    }
    pocketllm_status st = put(w, h.p, h.n);
    size_t header = h.n;
    free(h.p);
    if (st) return st;
    /* a file without tensors ends after its metadata, as llama.cpp's vocab files do */
    if (w->n_t && (st = pad(w, header))) return st;
    return advance(w);
}

pocketllm_status pocketllm_gguf_writer_write_data(pocketllm_gguf_writer *w, const void *data, size_t n) {
    if (!w || !w->f) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "gguf writer: not writing");
    const uint8_t *p = data;
    while (n) {
        if (w->cur >= w->n_t)
            return write_fail(w, pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "gguf writer: more data than the tensors hold"));
        const wtensor *t = &w->t[w->cur];
        uint64_t left = t->n_bytes - w->cur_written;
        size_t k = n < left ? n : (size_t)left;
        pocketllm_status st = put(w, p, k);
        if (st) return st;
        p += k;
        n -= k;
        w->cur_written += k;
        if (w->cur_written == t->n_bytes) {
            if ((st = pad(w, t->n_bytes))) return st;
            w->cur++;
            w->cur_written = 0;
            if ((st = advance(w))) return st;
        }
    }
    return POCKETLLM_OK;
}

pocketllm_status pocketllm_gguf_writer_finish(pocketllm_gguf_writer *w) {
    if (!w || !w->f) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "gguf writer: not writing");
    /* zero-byte tensors still waiting for streamed data are complete */
    while (w->cur < w->n_t && w->t[w->cur].n_bytes == 0 && w->cur_written == 0) {
        w->cur++;
        pocketllm_status st = advance(w);
        if (st) return st;
    }
    if (w->cur != w->n_t)
        return write_fail(w, pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "gguf writer: tensor '%s' is missing %" PRIu64
                                     " bytes of data", w->t[w->cur].name, w->t[w->cur].n_bytes - w->cur_written));
    FILE *f = w->f;
    w->f = NULL;
    if (fflush(f) != 0 || fsync(fileno(f)) != 0) {
        pocketllm_status st = pl_fail(POCKETLLM_ERR_IO, "%s: write failed: %s", w->partial, strerror(errno));
        fclose(f);
        unlink(w->partial);
        close_partial(w);
        return st;
    }
    if (fclose(f) != 0 || rename(w->partial, w->path) != 0) {
        pocketllm_status st = pl_fail(POCKETLLM_ERR_IO, "%s: cannot finish: %s", w->path, strerror(errno));
        unlink(w->partial);
        close_partial(w);
        return st;
    }
    close_partial(w);
    return POCKETLLM_OK;
}

pocketllm_status pocketllm_gguf_writer_write(pocketllm_gguf_writer *w, const char *path) {
    if (!w) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "gguf writer: NULL");
    for (size_t i = 0; i < w->n_t; i++)
        if (!w->t[i].data && w->t[i].n_bytes)
            return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "gguf writer: tensor '%s' has no data", w->t[i].name);
    pocketllm_status st = pocketllm_gguf_writer_begin(w, path);
    return st ? st : pocketllm_gguf_writer_finish(w);
}
