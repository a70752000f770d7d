/*
 * imatrix.c -- the importance matrix: an observer on the session's matrix
 * multiplications sums the squares of every input column per weight, as
 * llama-imatrix's collect_imatrix does (float sums, one count per dense
 * matrix, weights named "blk.*" plus output.weight on request), and
 * writes llama.cpp's GGUF imatrix file.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/compute.h"
#include "base/checked.h"
#include "base/error.h"
#include "base/strmap.h"
#include "eval/eval.h"
#include "runtime/session_hooks.h"

typedef struct imat_entry {
    char *name;
    int64_t n_in;
    float *sum2;
    int64_t count;
} imat_entry;

struct pl_imat {
    bool process_output;
    pl_strmap index; /* name -> entry */
    imat_entry *e;
    size_t n, cap;
    float *buf;      /* the activations, copied out of compute memory */
    size_t buf_floats;
};

pocketllm_status pl_imat_new(bool process_output, pl_imat **out) {
    *out = NULL;
    pl_imat *im = calloc(1, sizeof *im);
    if (!im || !pl_strmap_init(&im->index, 64)) {
        free(im);
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    }
    im->process_output = process_output;
    *out = im;
    return POCKETLLM_OK;
}

void pl_imat_free(pl_imat *im) {
    if (!im) return;
    for (size_t i = 0; i < im->n; i++) free(im->e[i].name), free(im->e[i].sum2);
    free(im->e);
    free(im->buf);
    pl_strmap_free(&im->index);
    free(im);
}

size_t pl_imat_count(const pl_imat *im) { return im->n; }

const char *pl_imat_entry(const pl_imat *im, size_t i, const float **sum2, int64_t *n_in, int64_t *count) {
    if (i >= im->n) return NULL;
    if (sum2) *sum2 = im->e[i].sum2;
    if (n_in) *n_in = im->e[i].n_in;
    if (count) *count = im->e[i].count;
    return im->e[i].name;
}

/* The entry of a weight, made on first sight. */
static imat_entry *entry_for(pl_imat *im, const pl_weight *w) {
    const size_t len = strlen(w->name);
    uint64_t i;
    if (pl_strmap_get(&im->index, w->name, len, &i)) return &im->e[i];
    if (im->n == im->cap) {
        size_t cap = im->cap ? 2 * im->cap : 64;
        imat_entry *g = realloc(im->e, cap * sizeof *g);
        if (!g) return NULL;
        im->e = g, im->cap = cap;
    }
    imat_entry *e = &im->e[im->n];
    e->name = malloc(len + 1);
    e->sum2 = calloc((size_t)w->n_in, sizeof *e->sum2);
    if (!e->name || !e->sum2) {
        free(e->name), free(e->sum2);
        return NULL;
    }
    memcpy(e->name, w->name, len + 1);
    e->n_in = w->n_in;
    e->count = 0;
    if (pl_strmap_put(&im->index, e->name, len, im->n, NULL) < 0) {
        free(e->name), free(e->sum2);
        return NULL;
    }
    im->n++;
    return e;
}

static void observe(void *user, pl_compute *c, const pl_weight *w, const float *x, int64_t n_tok) {
    pl_imat *im = user;
    if (!w->name || n_tok < 1) return;
    if (strncmp(w->name, "blk.", 4) != 0 && !(im->process_output && strcmp(w->name, "output.weight") == 0)) return;
    imat_entry *e = entry_for(im, w);
    if (!e) {
        pl_compute_fail(c, pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory collecting the importance matrix"));
        return;
    }
    if (e->n_in != w->n_in) {
        pl_compute_fail(c, pl_fail(POCKETLLM_ERR_INTERNAL, "%s multiplied with rows of %lld and of %lld", w->name,
                                   (long long)e->n_in, (long long)w->n_in));
        return;
    }
    const size_t floats = (size_t)n_tok * (size_t)w->n_in;
    if (floats > im->buf_floats) {
        float *b = realloc(im->buf, floats * sizeof *b);
        if (!b) {
            pl_compute_fail(c, pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory collecting the importance matrix"));
            return;
        }
        im->buf = b, im->buf_floats = floats;
    }
    c->ops->download(c, im->buf, x, floats * sizeof(float));
    float *acc = e->sum2;
    for (int64_t r = 0; r < n_tok; r++) {
        const float *row = im->buf + (size_t)r * (size_t)w->n_in;
        for (int64_t j = 0; j < w->n_in; j++) acc[j] += row[j] * row[j];
    }
    e->count += n_tok;
    for (int64_t j = 0; j < w->n_in; j++)
        if (!isfinite(acc[j])) {
            pl_compute_fail(c, pl_fail(POCKETLLM_ERR_FORMAT, "non-finite activations entering %s (column %lld): the "
                                       "model's weights are broken", w->name, (long long)j));
            return;
        }
}

void pl_imat_attach(pl_imat *im, pocketllm_session *s) {
    pl_compute *c = pl_session_compute(s);
    c->observe_mul_mat = im ? observe : NULL;
    c->observe_user = im;
}

static int by_name(const void *a, const void *b) {
    return strcmp((*(const imat_entry *const *)a)->name, (*(const imat_entry *const *)b)->name);
}

pocketllm_status pl_imat_write(const pl_imat *im, const char *path, const char *dataset, int64_t chunk_size) {
    if (im->n == 0)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "no matrix multiplication was observed: nothing to write to %s",
                       path);
    const imat_entry **order = malloc(im->n * sizeof *order);
    float *counts = malloc(im->n * sizeof *counts);
    pocketllm_gguf_writer *w = NULL;
    pocketllm_status st = POCKETLLM_OK;
    if (!order || !counts) {
        st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    int64_t max_count = 0;
    for (size_t i = 0; i < im->n; i++) {
        order[i] = &im->e[i];
        if (im->e[i].count > max_count) max_count = im->e[i].count;
    }
    /* llama.cpp's order: tensor names sorted bytewise */
    qsort(order, im->n, sizeof *order, by_name);
    if ((st = pocketllm_gguf_writer_new(&w))) goto done;
    const char *ds[1] = {dataset};
    const int64_t chunks = chunk_size > 0 ? max_count / chunk_size : 0;
    if ((st = pocketllm_gguf_writer_set_str(w, "general.type", "imatrix")) ||
        (st = pocketllm_gguf_writer_set_str_array(w, "imatrix.datasets", ds, dataset ? 1 : 0)) ||
        (st = pocketllm_gguf_writer_set_u32(w, "imatrix.chunk_count", (uint32_t)(chunks > UINT32_MAX ? UINT32_MAX : chunks))) ||
        (st = pocketllm_gguf_writer_set_u32(w, "imatrix.chunk_size", (uint32_t)chunk_size)))
        goto done;
    for (size_t i = 0; i < im->n; i++) {
        const imat_entry *e = order[i];
        char name[128];
        if (strlen(e->name) + 9 > 63) {
            st = pl_fail(POCKETLLM_ERR_UNSUPPORTED, "tensor name '%s' is too long for an imatrix entry", e->name);
            goto done;
        }
        counts[i] = (float)e->count;
        const int64_t ne_sum[1] = {e->n_in}, ne_count[1] = {1};
        snprintf(name, sizeof name, "%s.in_sum2", e->name);
        if ((st = pocketllm_gguf_writer_add_tensor(w, name, 0, 1, ne_sum, e->sum2))) goto done;
        snprintf(name, sizeof name, "%s.counts", e->name);
        if ((st = pocketllm_gguf_writer_add_tensor(w, name, 0, 1, ne_count, &counts[i]))) goto done;
    }
    st = pocketllm_gguf_writer_write(w, path);
done:
    pocketllm_gguf_writer_free(w);
    free(order);
    free(counts);
    return st;
}
