/*
 * imatrix.c -- read importance-matrix files (GGUF and the legacy .dat
 * format) into normalised per-tensor weights, as llama-quantize does.
 * Stricter than llama.cpp where it would read past a buffer or divide by
 * zero: such files are refused with a message.
 */
#include "quantize/imatrix.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/error.h"
#include "base/file.h"
#include "gguf/gguf.h"
#include "quant/types.h"

/* The largest imatrix file we read (a 1T-parameter MoE has well under it). */
#define PL_IMATRIX_MAX_FILE (4ull << 30)

void pl_imatrix_free(pl_imatrix *im) {
    if (!im) return;
    for (uint64_t i = 0; i < im->n_entries; i++) free(im->entries[i].values);
    free(im->entries);
    pl_strmap_free(&im->index);
    pl_arena_free(&im->arena);
    memset(im, 0, sizeof *im);
}

const pl_imatrix_entry *pl_imatrix_find(const pl_imatrix *im, const char *tensor) {
    uint64_t i;
    if (!im || !im->index.slots || !pl_strmap_get(&im->index, tensor, strlen(tensor), &i)) return NULL;
    return &im->entries[i];
}

/* Add (or, for a repeated name in a legacy file, replace: the last wins, as
 * in llama.cpp's map) an entry that takes ownership of values. */
static pocketllm_status put_entry(pl_imatrix *im, const char *name, size_t name_len, float *values, uint64_t n,
                                  uint64_t rows, uint64_t cap) {
    const char *key = pl_arena_strndup(&im->arena, name, name_len);
    if (!key) {
        free(values);
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "imatrix: out of memory");
    }
    size_t klen = strlen(key); /* a name is read up to its first NUL, as llama.cpp does */
    uint64_t old;
    int r = pl_strmap_put(&im->index, key, klen, im->n_entries, &old);
    if (r < 0) {
        free(values);
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "imatrix: out of memory");
    }
    if (r == 0) {
        free(im->entries[old].values);
        im->entries[old].values = values;
        im->entries[old].n = n;
        im->entries[old].rows = rows;
        return POCKETLLM_OK;
    }
    if (im->n_entries >= cap) {
        free(values);
        return pl_fail(POCKETLLM_ERR_INTERNAL, "imatrix: entry table overflow");
    }
    im->entries[im->n_entries++] = (pl_imatrix_entry){key, values, n, rows};
    return POCKETLLM_OK;
}

static pocketllm_status check_finite(const char *file, const char *name, const float *v, uint64_t n) {
    for (uint64_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return pl_fail(POCKETLLM_ERR_FORMAT, "%s: %s: importance value %" PRIu64 " is not finite", file, name, i);
    return POCKETLLM_OK;
}

/* ---- GGUF ------------------------------------------------------------------ */

static bool ends_with(const char *s, size_t len, const char *suffix, size_t *stem) {
    size_t n = strlen(suffix);
    if (len < n || memcmp(s + len - n, suffix, n) != 0) return false;
    *stem = len - n;
    return true;
}

static pocketllm_status parse_gguf(const void *data, size_t size, const char *file, pl_imatrix *im) {
    pl_gguf *g;
    pocketllm_status st = pl_gguf_open_memory(data, size, file, &g);
    if (st) return st;
    if (g->n_tensors < 1) {
        st = pl_fail(POCKETLLM_ERR_FORMAT, "%s: the imatrix holds no data", file);
        goto out;
    }
    /* llama-quantize refuses a GGUF imatrix without these three keys */
    const char *keys[] = {"imatrix.datasets", "imatrix.chunk_count", "imatrix.chunk_size"};
    for (int k = 0; k < 3; k++)
        if (!pl_gguf_get(g, keys[k])) {
            st = pl_fail(POCKETLLM_ERR_FORMAT, "%s: imatrix metadata key %s is missing", file, keys[k]);
            goto out;
        }
    uint64_t chunks;
    if ((st = pl_gguf_get_u64(g, "imatrix.chunk_count", 0, &chunks))) goto out;
    if (chunks > UINT32_MAX) {
        st = pl_fail(POCKETLLM_ERR_FORMAT, "%s: imatrix.chunk_count %" PRIu64 " is out of range", file, chunks);
        goto out;
    }
    im->chunk_count = (int64_t)chunks;
    const pocketllm_gguf_value *ds = pl_gguf_get(g, "imatrix.datasets");
    uint64_t ds_len = 0;
    const char *ds0 = ds->type == POCKETLLM_GGUF_ARRAY && ds->elem_type == POCKETLLM_GGUF_STRING && ds->n > 0
                          ? pl_gguf_array_str(ds, 0, &ds_len)
                          : NULL;
    /* up to a NUL inside, as the C string the name was before */
    if (ds0 && !(im->dataset = pl_arena_strndup(&im->arena, ds0, strnlen(ds0, (size_t)ds_len)))) {
        st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "imatrix: out of memory");
        goto out;
    }
    if (!(im->entries = calloc((size_t)g->n_tensors, sizeof *im->entries)) ||
        !pl_strmap_init(&im->index, (size_t)g->n_tensors)) {
        st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "imatrix: out of memory");
        goto out;
    }
    char other[PL_GGUF_MAX_NAME + 16];
    for (uint64_t i = 0; i < g->n_tensors; i++) {
        const pl_gguf_tensor *t = &g->tensors[i];
        size_t len = strlen(t->name), stem;
        bool is_sums = ends_with(t->name, len, ".in_sum2", &stem);
        if (!is_sums && !ends_with(t->name, len, ".counts", &stem)) continue;
        if (stem == 0) continue; /* an empty name is skipped, as llama.cpp does */
        snprintf(other, sizeof other, "%.*s%s", (int)stem, t->name, is_sums ? ".counts" : ".in_sum2");
        const pl_gguf_tensor *o = pl_gguf_tensor_by_name(g, other);
        if (!o) {
            st = pl_fail(POCKETLLM_ERR_FORMAT, "%s: %s has no matching %s", file, t->name, other);
            goto out;
        }
        if (!is_sums) continue; /* each pair is taken once, from its sums */
        const pl_gguf_tensor *sums = t, *counts = o;
        if (sums->type != PL_TYPE_F32 || counts->type != PL_TYPE_F32) {
            st = pl_fail(POCKETLLM_ERR_FORMAT, "%s: sums and counts for %.*s must be f32", file, (int)stem, t->name);
            goto out;
        }
        uint64_t nval = sums->n_elements, ncnt = counts->n_elements;
        if (nval == 0 || ncnt == 0 || nval % ncnt != 0) {
            st = pl_fail(POCKETLLM_ERR_FORMAT, "%s: %.*s has %" PRIu64 " sums for %" PRIu64 " counts (not a multiple)",
                         file, (int)stem, t->name, nval, ncnt);
            goto out;
        }
        uint64_t ne0 = nval / ncnt, bytes;
        float *v = NULL;
        if (!pl_mul_u64(nval, sizeof(float), &bytes) || bytes > SIZE_MAX || !(v = malloc((size_t)bytes))) {
            st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "imatrix: out of memory for %" PRIu64 " values", nval);
            goto out;
        }
        for (uint64_t j = 0; j < ncnt; j++) {
            float c;
            memcpy(&c, counts->data + j * 4, 4);
            /* llama.cpp rounds each count to an integer (std::lround) */
            if (!isfinite(c) || fabsf(c) > 9.0e15f) {
                free(v);
                st = pl_fail(POCKETLLM_ERR_FORMAT, "%s: %.*s: count %" PRIu64 " is not a usable number", file,
                             (int)stem, t->name, j);
                goto out;
            }
            float count = (float)llroundf(c);
            for (uint64_t k = 0; k < ne0; k++) {
                float sum;
                memcpy(&sum, sums->data + (j * ne0 + k) * 4, 4);
                v[j * ne0 + k] = count > 0.0f ? sum / count : 1.0f;
            }
        }
        if ((st = check_finite(file, t->name, v, nval))) {
            free(v);
            goto out;
        }
        if ((st = put_entry(im, t->name, stem, v, nval, ncnt, g->n_tensors))) goto out;
    }
out:
    pocketllm_gguf_close(g);
    return st;
}

/* ---- legacy .dat ------------------------------------------------------------- */

typedef struct rd {
    const uint8_t *p;
    size_t n, at;
} rd;

static bool rd_i32(rd *r, int32_t *v) {
    if (r->n - r->at < 4) return false;
    memcpy(v, r->p + r->at, 4);
    r->at += 4;
    return true;
}

static pocketllm_status parse_legacy(const void *data, size_t size, const char *file, pl_imatrix *im) {
    rd r = {data, size, 0};
    int32_t n_entries;
    if (!rd_i32(&r, &n_entries) || n_entries < 1)
        return pl_fail(POCKETLLM_ERR_FORMAT, "%s: not an imatrix (neither GGUF nor a legacy file with entries)", file);
    /* each entry takes at least 16 bytes: no more entries than that allows */
    if ((uint64_t)n_entries > size / 16)
        return pl_fail(POCKETLLM_ERR_FORMAT, "%s: %d entries cannot fit in %zu bytes", file, n_entries, size);
    im->legacy = true;
    if (!(im->entries = calloc((size_t)n_entries, sizeof *im->entries)) ||
        !pl_strmap_init(&im->index, (size_t)n_entries))
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "imatrix: out of memory");
    for (int32_t e = 0; e < n_entries; e++) {
        int32_t len, ncall, nval;
        if (!rd_i32(&r, &len) || len < 0 || (size_t)len > r.n - r.at)
            return pl_fail(POCKETLLM_ERR_FORMAT, "%s: entry %d: bad name length at byte %zu", file, e + 1, r.at);
        const char *name = (const char *)r.p + r.at;
        r.at += (size_t)len;
        if (!rd_i32(&r, &ncall) || !rd_i32(&r, &nval) || nval < 1)
            return pl_fail(POCKETLLM_ERR_FORMAT, "%s: entry %d: bad value count at byte %zu", file, e + 1, r.at);
        if ((size_t)nval > (r.n - r.at) / 4)
            return pl_fail(POCKETLLM_ERR_FORMAT, "%s: entry %d: %d values run past the end of the file", file, e + 1,
                           nval);
        float *v = malloc((size_t)nval * sizeof(float));
        if (!v) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "imatrix: out of memory");
        memcpy(v, r.p + r.at, (size_t)nval * sizeof(float));
        r.at += (size_t)nval * sizeof(float);
        /* stored as (sum / count) * calls: divide the calls back out */
        if (ncall > 0)
            for (int32_t i = 0; i < nval; i++) v[i] = v[i] / (float)ncall;
        pocketllm_status st = check_finite(file, len ? name : "(unnamed)", v, (uint64_t)nval);
        if (st) {
            free(v);
            return st;
        }
        if ((st = put_entry(im, name, (size_t)len, v, (uint64_t)nval, 0, (uint64_t)n_entries))) return st;
    }
    /* optional trailer: chunk count, then the dataset's name */
    int32_t chunks, dlen;
    if (rd_i32(&r, &chunks)) {
        im->chunk_count = chunks;
        if (rd_i32(&r, &dlen) && dlen > 0 && (size_t)dlen <= r.n - r.at &&
            !(im->dataset = pl_arena_strndup(&im->arena, (const char *)r.p + r.at, (size_t)dlen)))
            return pl_fail(POCKETLLM_ERR_NO_MEMORY, "imatrix: out of memory");
    }
    return POCKETLLM_OK;
}

pocketllm_status pl_imatrix_parse(const void *data, size_t size, const char *name, pl_imatrix *out) {
    memset(out, 0, sizeof *out);
    if (!name) name = "<imatrix>";
    pocketllm_status st = size >= 4 && memcmp(data, "GGUF", 4) == 0 ? parse_gguf(data, size, name, out)
                                                                     : parse_legacy(data, size, name, out);
    if (st) pl_imatrix_free(out);
    return st;
}

pocketllm_status pl_imatrix_load(const char *path, pl_imatrix *out) {
    memset(out, 0, sizeof *out);
    char *data;
    size_t len;
    pocketllm_status st = pl_read_file(path, PL_IMATRIX_MAX_FILE, &data, &len);
    if (st) return st;
    st = pl_imatrix_parse(data, len, path, out);
    free(data);
    return st;
}
