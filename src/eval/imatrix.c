/*
 * imatrix.c -- the importance matrix: observers on the session's matrix
 * multiplications sum the squares of every input column per weight, as
 * llama-imatrix's collect_imatrix does -- for a dense matrix float sums and
 * one count (weights named "blk.*" plus output.weight on request); for a
 * 3-D expert tensor (its MUL_MAT_ID) one row of sums and one count per
 * expert, each routed (token, slot) row added to its expert's, every such
 * tensor collected -- and writes llama.cpp's GGUF imatrix file.
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
    int64_t n_mat;   /* rows of sums: 1 for a dense matrix, n_expert for an expert tensor */
    float *sum2;     /* [n_mat][n_in] */
    int64_t *counts; /* [n_mat] */
} imat_entry;

struct pl_imat {
    bool process_output;
    pl_strmap index; /* name -> entry */
    imat_entry *e;
    size_t n, cap;
    float *buf;      /* the activations, copied out of compute memory */
    size_t buf_floats;
    int32_t *ids;    /* the routing, likewise */
    size_t ids_n;
    uint8_t *touched; /* per expert: routed to in this product */
    size_t touched_n;
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
    for (size_t i = 0; i < im->n; i++) free(im->e[i].name), free(im->e[i].sum2), free(im->e[i].counts);
    free(im->e);
    free(im->buf);
    free(im->ids);
    free(im->touched);
    pl_strmap_free(&im->index);
    free(im);
}

size_t pl_imat_count(const pl_imat *im) { return im->n; }

const char *pl_imat_entry(const pl_imat *im, size_t i, const float **sum2, int64_t *n_in, int64_t *count) {
    if (i >= im->n) return NULL;
    if (sum2) *sum2 = im->e[i].sum2;
    if (n_in) *n_in = im->e[i].n_in;
    if (count) *count = im->e[i].counts[0];
    return im->e[i].name;
}

int64_t pl_imat_entry_rows(const pl_imat *im, size_t i, const int64_t **counts) {
    if (i >= im->n) return 0;
    if (counts) *counts = im->e[i].counts;
    return im->e[i].n_mat;
}

static void fail_oom(pl_compute *c) {
    pl_compute_fail(c, pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory collecting the importance matrix"));
}

/* The entry of a weight, made on first sight with n_mat rows; a weight
 * seen again with another width or row count stops the pass. */
static imat_entry *entry_for(pl_imat *im, pl_compute *c, const pl_weight *w, int64_t n_mat) {
    const size_t len = strlen(w->name);
    uint64_t i;
    if (pl_strmap_get(&im->index, w->name, len, &i)) {
        imat_entry *e = &im->e[i];
        if (e->n_in == w->n_in && e->n_mat == n_mat) return e;
        pl_compute_fail(c, pl_fail(POCKETLLM_ERR_INTERNAL, "%s multiplied as %lld rows of %lld and as %lld rows of %lld",
                                   w->name, (long long)e->n_mat, (long long)e->n_in, (long long)n_mat,
                                   (long long)w->n_in));
        return NULL;
    }
    if (im->n == im->cap) {
        size_t cap = im->cap ? 2 * im->cap : 64;
        imat_entry *g = realloc(im->e, cap * sizeof *g);
        if (!g) {
            fail_oom(c);
            return NULL;
        }
        im->e = g, im->cap = cap;
    }
    imat_entry *e = &im->e[im->n];
    e->name = malloc(len + 1);
    e->sum2 = calloc((size_t)w->n_in * (size_t)n_mat, sizeof *e->sum2);
    e->counts = calloc((size_t)n_mat, sizeof *e->counts);
    if (e->name) memcpy(e->name, w->name, len + 1);
    if (!e->name || !e->sum2 || !e->counts || pl_strmap_put(&im->index, e->name, len, im->n, NULL) < 0) {
        free(e->name), free(e->sum2), free(e->counts);
        fail_oom(c);
        return NULL;
    }
    e->n_in = w->n_in;
    e->n_mat = n_mat;
    im->n++;
    return e;
}

/* Room for n floats of activations in im->buf. */
static bool reserve_buf(pl_imat *im, pl_compute *c, size_t floats) {
    if (floats <= im->buf_floats) return true;
    float *b = realloc(im->buf, floats * sizeof *b);
    if (!b) {
        fail_oom(c);
        return false;
    }
    im->buf = b, im->buf_floats = floats;
    return true;
}

static bool finite_row(pl_compute *c, const char *name, const float *acc, int64_t n) {
    for (int64_t j = 0; j < n; j++)
        if (!isfinite(acc[j])) {
            pl_compute_fail(c, pl_fail(POCKETLLM_ERR_FORMAT, "non-finite activations entering %s (column %lld): the "
                                       "model's weights are broken", name, (long long)j));
            return false;
        }
    return true;
}

static void observe(void *user, pl_compute *c, const pl_weight *w, const float *x, int64_t n_tok) {
    pl_imat *im = user;
    if (!w->name || n_tok < 1) return;
    if (strncmp(w->name, "blk.", 4) != 0 && !(im->process_output && strcmp(w->name, "output.weight") == 0)) return;
    imat_entry *e = entry_for(im, c, w, 1);
    const size_t floats = (size_t)n_tok * (size_t)w->n_in;
    if (!e || !reserve_buf(im, c, floats)) return;
    c->ops->download(c, im->buf, x, floats * sizeof(float));
    float *acc = e->sum2;
    for (int64_t r = 0; r < n_tok; r++) {
        const float *row = im->buf + (size_t)r * (size_t)w->n_in;
        for (int64_t j = 0; j < w->n_in; j++) acc[j] += row[j] * row[j];
    }
    e->counts[0] += n_tok;
    finite_row(c, w->name, acc, w->n_in);
}

/* An expert product: row (t, slot j) -- x[t][j % x_slots] -- is added to
 * expert ids[t][j]'s sums, slot by slot and token by token within a slot,
 * the order llama-imatrix adds them in (so the float sums round alike). */
static void observe_id(void *user, pl_compute *c, const pl_weight *w, const float *x, int64_t x_slots,
                       const int32_t *ids, int64_t n_used, int64_t n_tok) {
    pl_imat *im = user;
    if (!w->name || n_tok < 1 || n_used < 1) return;
    const int64_t n_as = w->n_expert > 0 ? w->n_expert : 1, n_in = w->n_in;
    if (x_slots != 1 && x_slots != n_used) {
        pl_compute_fail(c, pl_fail(POCKETLLM_ERR_INTERNAL, "%s: %lld input rows per token for %lld experts used",
                                   w->name, (long long)x_slots, (long long)n_used));
        return;
    }
    imat_entry *e = entry_for(im, c, w, n_as);
    const size_t floats = (size_t)n_tok * (size_t)x_slots * (size_t)n_in, n_ids = (size_t)n_tok * (size_t)n_used;
    if (!e || !reserve_buf(im, c, floats)) return;
    if (n_ids > im->ids_n) {
        int32_t *p = realloc(im->ids, n_ids * sizeof *p);
        if (!p) {
            fail_oom(c);
            return;
        }
        im->ids = p, im->ids_n = n_ids;
    }
    if ((size_t)n_as > im->touched_n) {
        uint8_t *p = realloc(im->touched, (size_t)n_as);
        if (!p) {
            fail_oom(c);
            return;
        }
        im->touched = p, im->touched_n = (size_t)n_as;
    }
    c->ops->download(c, im->buf, x, floats * sizeof(float));
    c->ops->download(c, im->ids, ids, n_ids * sizeof(int32_t));
    for (size_t i = 0; i < n_ids; i++)
        if (im->ids[i] < 0 || im->ids[i] >= n_as) {
            pl_compute_fail(c, pl_fail(POCKETLLM_ERR_INTERNAL, "%s: token %lld routed to expert %d of %lld", w->name,
                                       (long long)(i / (size_t)n_used), im->ids[i], (long long)n_as));
            return;
        }
    memset(im->touched, 0, (size_t)n_as);
    for (int64_t slot = 0; slot < n_used; slot++)
        for (int64_t t = 0; t < n_tok; t++) {
            const int32_t ex = im->ids[t * n_used + slot];
            const float *row = im->buf + ((size_t)t * (size_t)x_slots + (size_t)(slot % x_slots)) * (size_t)n_in;
            float *acc = e->sum2 + (size_t)ex * (size_t)n_in;
            for (int64_t j = 0; j < n_in; j++) acc[j] += row[j] * row[j];
            e->counts[ex]++;
            im->touched[ex] = 1;
        }
    for (int64_t ex = 0; ex < n_as; ex++)
        if (im->touched[ex] && !finite_row(c, w->name, e->sum2 + (size_t)ex * (size_t)n_in, n_in)) return;
}

void pl_imat_attach_compute(pl_imat *im, pl_compute *c) {
    c->observe_mul_mat = im ? observe : NULL;
    c->observe_mul_mat_id = im ? observe_id : NULL;
    c->observe_user = im;
}

void pl_imat_attach(pl_imat *im, pocketllm_session *s) { pl_imat_attach_compute(im, pl_session_compute(s)); }

static int by_name(const void *a, const void *b) {
    return strcmp((*(const imat_entry *const *)a)->name, (*(const imat_entry *const *)b)->name);
}

pocketllm_status pl_imat_write(const pl_imat *im, const char *path, const char *dataset, int64_t chunk_size) {
    if (im->n == 0)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "no matrix multiplication was observed: nothing to write to %s",
                       path);
    size_t n_counts = 0;
    int64_t max_count = 0;
    for (size_t i = 0; i < im->n; i++) {
        n_counts += (size_t)im->e[i].n_mat;
        for (int64_t k = 0; k < im->e[i].n_mat; k++)
            if (im->e[i].counts[k] > max_count) max_count = im->e[i].counts[k];
    }
    const imat_entry **order = malloc(im->n * sizeof *order);
    float *counts = malloc(n_counts * sizeof *counts); /* the writer reads them at the end */
    pocketllm_gguf_writer *w = NULL;
    pocketllm_status st = POCKETLLM_OK;
    if (!order || !counts) {
        st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < im->n; i++) order[i] = &im->e[i];
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
    float *cnt = counts;
    for (size_t i = 0; i < im->n; i++) {
        const imat_entry *e = order[i];
        char name[128];
        if (strlen(e->name) + 9 > 63) {
            st = pl_fail(POCKETLLM_ERR_UNSUPPORTED, "tensor name '%s' is too long for an imatrix entry", e->name);
            goto done;
        }
        for (int64_t k = 0; k < e->n_mat; k++) cnt[k] = (float)e->counts[k];
        /* llama-imatrix's [n_in, n_mat] and [1, n_mat], written with as
         * many dimensions as ggml counts (one for a dense matrix) */
        const uint32_t dims = e->n_mat > 1 ? 2 : 1;
        const int64_t ne_sum[2] = {e->n_in, e->n_mat}, ne_count[2] = {1, e->n_mat};
        snprintf(name, sizeof name, "%s.in_sum2", e->name);
        if ((st = pocketllm_gguf_writer_add_tensor(w, name, 0, dims, ne_sum, e->sum2))) goto done;
        snprintf(name, sizeof name, "%s.counts", e->name);
        if ((st = pocketllm_gguf_writer_add_tensor(w, name, 0, dims, ne_count, cnt))) goto done;
        cnt += e->n_mat;
    }
    st = pocketllm_gguf_writer_write(w, path);
done:
    pocketllm_gguf_writer_free(w);
    free(order);
    free(counts);
    return st;
}
