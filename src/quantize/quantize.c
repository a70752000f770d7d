/*
 * quantize.c -- pocketllm_quantize: plan the run (plan.c), write the
 * metadata as llama.cpp does, then stream the tensors one by one through
 * the GGUF writer: copied ones straight from the input mapping, converted
 * ones in slabs of rows spread over the thread pool.  Rows are independent,
 * so the bytes do not depend on the thread count.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/threadpool.h"
#include "gguf/gguf.h"
#include "quant/types.h"
#include "quantize/imatrix.h"
#include "quantize/plan.h"
#include "quantize/recipe.h"

/* Output bytes converted per slab: the memory a run holds beyond the maps. */
#define SLAB_BYTES (16u << 20)
/* llama.cpp's GGML_QNT_VERSION, stored as general.quantization_version. */
#define QNT_VERSION 2

pocketllm_quantize_params pocketllm_quantize_default_params(void) {
    pocketllm_quantize_params p;
    memset(&p, 0, sizeof p);
    return p;
}

/* ---- names ----------------------------------------------------------------- */

static bool has_lower(const char *s) {
    for (; *s; s++)
        if (islower((unsigned char)*s)) return true;
    return false;
}

/* A name without lower-case letters is a recipe (llama-quantize's
 * spelling); one with them is a tensor type (ggml's, case-insensitive). */
static const pl_recipe *resolve(const char *name, bool *pure_type) {
    *pure_type = false;
    if (!name || !*name) return NULL;
    if (!has_lower(name)) return pl_recipe_find(name);
    int32_t t = pocketllm_type_from_name(name);
    if (t < 0) return NULL;
    *pure_type = true;
    return pl_recipe_for_type((uint32_t)t);
}

int pocketllm_quantize_type_known(const char *type) {
    bool pure;
    return resolve(type, &pure) != NULL;
}

const char *pocketllm_quantize_name(uint32_t i, int *is_recipe, const char **summary) {
    const pl_recipe *r = pl_recipe_at(i);
    if (r) {
        if (is_recipe) *is_recipe = 1;
        if (summary) *summary = r->summary;
        return r->name;
    }
    uint32_t n_recipes = 0;
    while (pl_recipe_at(n_recipes)) n_recipes++;
    uint32_t k = i - n_recipes;
    for (uint32_t t = 0; t < PL_TYPE_COUNT; t++) {
        if (!pl_type_valid(t) || !pl_recipe_for_type(t) || k-- != 0) continue;
        const pl_type_traits *tr = pl_type_get(t);
        if (is_recipe) *is_recipe = 0;
        if (summary)
            *summary = tr->from_float && tr->to_float ? "every quantizable tensor in this type"
                                                      : "every quantizable tensor in this type (not encodable yet)";
        return tr->name;
    }
    return NULL;
}

/* ---- metadata ---------------------------------------------------------------- */

/* llama.cpp sets a key by removing it and appending it: the key moves to
 * the end.  Doing the same gives the same key order. */
static pocketllm_status move_u32(pocketllm_gguf_writer *w, const char *key, uint32_t v) {
    pocketllm_status st = pocketllm_gguf_writer_remove(w, key);
    if (st && st != POCKETLLM_ERR_NOT_FOUND) return st;
    return pocketllm_gguf_writer_set_u32(w, key, v);
}

static pocketllm_status move_str127(pocketllm_gguf_writer *w, const char *key, const char *v) {
    char s[128];
    snprintf(s, sizeof s, "%s", v); /* llama-quantize keeps 127 bytes */
    pocketllm_status st = pocketllm_gguf_writer_remove(w, key);
    if (st && st != POCKETLLM_ERR_NOT_FOUND) return st;
    return pocketllm_gguf_writer_set_str(w, key, s);
}

static pocketllm_status write_metadata(pocketllm_gguf_writer *w, const pl_gguf *g, const pl_quant_plan *plan,
                                       const pl_imatrix *im, const char *im_path) {
    pocketllm_status st = POCKETLLM_OK;
    for (uint64_t i = 0; i < g->n_kv && !st; i++) {
        const char *k = g->kv[i].key;
        if (!strcmp(k, "split.no") || !strcmp(k, "split.count") || !strcmp(k, "split.tensors.count")) continue;
        st = pocketllm_gguf_writer_set_value(w, k, &g->kv[i].value);
    }
    if (!st) st = move_u32(w, "general.quantization_version", QNT_VERSION);
    if (!st) st = move_u32(w, "general.file_type", plan->recipe->ftype);
    /* what llama-quantize records about the imatrix it used */
    if (!st && im) {
        st = move_str127(w, "quantize.imatrix.file", im_path);
        if (!st && im->dataset) st = move_str127(w, "quantize.imatrix.dataset", im->dataset);
        if (!st) st = move_u32(w, "quantize.imatrix.entries_count", (uint32_t)im->n_entries);
        if (!st && im->chunk_count > 0) st = move_u32(w, "quantize.imatrix.chunks_count", (uint32_t)im->chunk_count);
    }
    for (uint64_t i = 0; i < plan->n_items && !st; i++) {
        const pl_quant_item *it = &plan->items[i];
        st = pocketllm_gguf_writer_add_tensor(w, it->t->name, it->to, it->n_dims, it->t->ne, NULL);
    }
    return st;
}

/* ---- conversion of one slab of rows -------------------------------------------- */

typedef struct slab_job {
    const pl_quant_item *it;
    int64_t n_per_row, rows_per_expert;
    uint64_t in_row_bytes, out_row_bytes;
    int64_t row0, nrows;      /* the slab: rows [row0, row0 + nrows) of the tensor */
    uint8_t *out;             /* nrows * out_row_bytes */
    float **scratch;          /* per thread: 2 * n_per_row floats + one input row */
    /* the first failure, reported by the calling thread */
    _Atomic int failed;
    pocketllm_status status;
    char message[512];
} slab_job;

static void slab_fail(slab_job *j, pocketllm_status st, const char *msg) {
    int expect = 0;
    if (atomic_compare_exchange_strong(&j->failed, &expect, 1)) {
        j->status = st;
        snprintf(j->message, sizeof j->message, "%s", msg);
    }
}

/* Chunk `chunk` of the slab's rows, on thread `thread` (whose scratch it
 * uses).  Threads claim chunks, so a descheduled thread delays nobody. */
static void slab_run(void *ctx, int chunk, int n_chunks, int thread) {
    slab_job *j = ctx;
    long long lo, hi;
    pl_pool_split(j->nrows, chunk, n_chunks, &lo, &hi);
    const pl_gguf_tensor *t = j->it->t;
    const pl_type_traits *from = pl_type_get(t->type), *to = pl_type_get(j->it->to);
    float *f32 = j->scratch[thread], *check = f32 + j->n_per_row;
    void *raw = check + j->n_per_row;
    for (long long r = lo; r < hi && !atomic_load(&j->failed); r++) {
        int64_t row = j->row0 + r;
        /* the mapping may be unaligned for the element type: copy first */
        memcpy(raw, t->data + (uint64_t)row * j->in_row_bytes, (size_t)j->in_row_bytes);
        from->to_float(raw, f32, j->n_per_row);
        /* the encoders turn floats into integers: a nan or inf would be
         * undefined behaviour there (llama.cpp's too), so it stops here */
        for (int64_t k = 0; k < j->n_per_row; k++) {
            if (!isfinite(f32[k])) {
                char msg[256];
                snprintf(msg, sizeof msg, "quantize: %s row %" PRId64 " holds a value that is not a finite number",
                         t->name, row);
                slab_fail(j, POCKETLLM_ERR_FORMAT, msg);
                return;
            }
        }
        const float *im = j->it->imatrix ? j->it->imatrix + (row / j->rows_per_expert) * j->n_per_row : NULL;
        uint8_t *dst = j->out + (uint64_t)r * j->out_row_bytes;
        pocketllm_status st = pl_quant_from_float(j->it->to, f32, dst, 1, j->n_per_row, im);
        if (st) {
            slab_fail(j, st, pocketllm_last_error());
            return;
        }
        /* llama.cpp validates every quantized row (ggml_validate_row_data):
         * a scale that overflowed to inf or nan is refused.  Decoding the
         * row catches the same rows without knowing each block layout. */
        to->to_float(dst, check, j->n_per_row);
        for (int64_t k = 0; k < j->n_per_row; k++) {
            if (!isfinite(check[k])) {
                char msg[256];
                snprintf(msg, sizeof msg,
                         "quantize: %s row %" PRId64 ": the %s data is not finite (the input holds values %s "
                         "cannot represent)",
                         t->name, row, to->name, to->name);
                slab_fail(j, POCKETLLM_ERR_FORMAT, msg);
                return;
            }
        }
    }
}

/* ---- the run ---------------------------------------------------------------- */

typedef struct run {
    const pl_gguf *g;
    pl_quant_plan plan;
    pocketllm_gguf_writer *w;
    pl_pool *pool;
    float **scratch;
    int n_threads;
    uint8_t *slab;
    size_t slab_cap;
    /* progress within a long tensor: reported after every slab */
    const pocketllm_quantize_params *params;
    pocketllm_quantize_progress pr;
} run;

/* Report slab progress: `in_bytes` more input bytes of the current tensor
 * are done.  The tensor count only moves when a tensor is complete. */
static void slab_progress(run *R, const pl_quant_item *it, uint64_t in_bytes, uint64_t out_bytes) {
    R->pr.bytes_done += in_bytes;
    R->pr.out_bytes_done += out_bytes;
    R->pr.name = it->t->name;
    R->pr.from_type = it->t->type;
    R->pr.to_type = it->to;
    if (R->params->progress) R->params->progress(R->params->progress_user, &R->pr);
}

/* Drop input pages once their rows are written: the mapping stays valid
 * (pages come back from the file if touched again), but the process does
 * not keep the whole model resident. */
static void release(const run *R, const uint8_t *p, uint64_t n) {
    if (!R->g->mapped || n == 0) return;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1), hi = ((uintptr_t)p + n) & ~(page - 1);
    if (hi > lo) madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

static pocketllm_status convert_tensor(run *R, const pl_quant_item *it) {
    const pl_gguf_tensor *t = it->t;
    if (t->n_elements == 0) return POCKETLLM_OK; /* a 0-row tensor: only its type changes */
    slab_job j;
    memset(&j, 0, sizeof j);
    j.it = it;
    j.n_per_row = t->ne[0];
    j.rows_per_expert = t->ne[1];
    pl_type_row_bytes(t->type, (uint64_t)t->ne[0], &j.in_row_bytes);
    pl_type_row_bytes(it->to, (uint64_t)t->ne[0], &j.out_row_bytes);
    j.scratch = R->scratch;
    int64_t nrows = (int64_t)(t->n_elements / (uint64_t)t->ne[0]);
    int64_t per_slab = j.out_row_bytes ? (int64_t)(SLAB_BYTES / j.out_row_bytes) : nrows;
    if (per_slab < 1) per_slab = 1;
    if (per_slab > nrows) per_slab = nrows;
    size_t need = (size_t)per_slab * (size_t)j.out_row_bytes;
    if (need > R->slab_cap) {
        uint8_t *p = realloc(R->slab, need);
        if (!p) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "quantize: out of memory for %zu bytes", need);
        R->slab = p;
        R->slab_cap = need;
    }
    j.out = R->slab;
    for (int64_t r0 = 0; r0 < nrows; r0 += per_slab) {
        j.row0 = r0;
        j.nrows = nrows - r0 < per_slab ? nrows - r0 : per_slab;
        /* a few chunks per thread, for balance; never more than rows */
        int64_t n_chunks = 4 * (int64_t)R->n_threads;
        if (n_chunks > j.nrows) n_chunks = j.nrows;
        pl_pool_run_chunks(R->pool, slab_run, &j, (int)n_chunks);
        if (atomic_load(&j.failed)) return pl_fail(j.status, "%s", j.message);
        pocketllm_status st =
            pocketllm_gguf_writer_write_data(R->w, j.out, (size_t)j.nrows * (size_t)j.out_row_bytes);
        if (st) return st;
        release(R, t->data + (uint64_t)r0 * j.in_row_bytes, (uint64_t)j.nrows * j.in_row_bytes);
        if (r0 + j.nrows < nrows)
            slab_progress(R, it, (uint64_t)j.nrows * j.in_row_bytes, (uint64_t)j.nrows * j.out_row_bytes);
    }
    return POCKETLLM_OK;
}

static pocketllm_status copy_tensor(run *R, const pl_quant_item *it) {
    const pl_gguf_tensor *t = it->t;
    for (uint64_t off = 0; off < t->n_bytes; off += SLAB_BYTES) {
        uint64_t n = t->n_bytes - off < SLAB_BYTES ? t->n_bytes - off : SLAB_BYTES;
        pocketllm_status st = pocketllm_gguf_writer_write_data(R->w, t->data + off, (size_t)n);
        if (st) return st;
        release(R, t->data + off, n);
        if (off + n < t->n_bytes) slab_progress(R, it, n, n);
    }
    return POCKETLLM_OK;
}

/* Per-thread scratch, sized for the longest row converted. */
static pocketllm_status alloc_scratch(run *R) {
    uint64_t longest = 0, widest = 0;
    for (uint64_t i = 0; i < R->plan.n_items; i++) {
        const pl_quant_item *it = &R->plan.items[i];
        if (it->to == it->t->type) continue;
        uint64_t rb;
        pl_type_row_bytes(it->t->type, (uint64_t)it->t->ne[0], &rb);
        if ((uint64_t)it->t->ne[0] > longest) longest = (uint64_t)it->t->ne[0];
        if (rb > widest) widest = rb;
    }
    if (!(R->scratch = calloc((size_t)R->n_threads, sizeof *R->scratch)))
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "quantize: out of memory");
    size_t bytes = (size_t)(2 * longest * sizeof(float) + widest + 64);
    for (int i = 0; i < R->n_threads; i++)
        if (!(R->scratch[i] = malloc(bytes))) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "quantize: out of memory");
    return POCKETLLM_OK;
}

static void run_free(run *R) {
    for (int i = 0; R->scratch && i < R->n_threads; i++) free(R->scratch[i]);
    free(R->scratch);
    free(R->slab);
    if (R->pool) pl_pool_free(R->pool);
    pocketllm_gguf_writer_free(R->w); /* removes a partial file */
    pl_quant_plan_free(&R->plan);
}

static bool same_file(const char *a, const char *b) {
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

pocketllm_status pocketllm_quantize(const char *in_path, const char *out_path, const pocketllm_quantize_params *p) {
    if (!in_path || !p) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "quantize: missing argument");
    bool pure_type;
    const pl_recipe *recipe = resolve(p->type, &pure_type);
    if (!recipe)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "quantize: unknown type '%s'", p->type ? p->type : "(none)");
    if (p->n_threads < 0 || p->n_threads > 1024)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "quantize: %d threads is out of range", p->n_threads);
    if (!p->dry_run && !out_path) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "quantize: no output path");
    if (out_path && same_file(in_path, out_path))
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "quantize: input and output are the same file: %s", in_path);

    pl_gguf *g = NULL;
    pl_imatrix im;
    memset(&im, 0, sizeof im);
    run R;
    memset(&R, 0, sizeof R);
    pocketllm_status st = pocketllm_gguf_open(in_path, &g);
    if (!st && p->imatrix) st = pl_imatrix_load(p->imatrix, &im);
    if (!st) {
        pl_quant_options o = {recipe, p->pure || pure_type, p->leave_output != 0, p->allow_requantize != 0,
                              p->dry_run != 0, p->imatrix ? &im : NULL, p->imatrix};
        st = pl_quant_plan_make(g, &o, &R.plan);
    }
    R.g = g;
    R.n_threads = p->n_threads ? p->n_threads : pl_pool_default_threads();
    bool write = !p->dry_run;
    if (!st && write) st = pocketllm_gguf_writer_new(&R.w);
    if (!st && write) st = write_metadata(R.w, g, &R.plan, p->imatrix ? &im : NULL, p->imatrix);
    if (!st && write) st = pl_pool_new(R.n_threads, &R.pool);
    if (!st && write) st = alloc_scratch(&R);
    if (!st && write) st = pocketllm_gguf_writer_begin(R.w, out_path);
    R.params = p;
    R.pr = (pocketllm_quantize_progress){0, R.plan.n_items, NULL, 0, 0, 0, R.plan.bytes_in, 0};
    for (uint64_t i = 0; !st && i < R.plan.n_items; i++) {
        const pl_quant_item *it = &R.plan.items[i];
        /* the input and output bytes of this tensor before it started */
        uint64_t in0 = R.pr.bytes_done, out0 = R.pr.out_bytes_done, out_bytes = 0;
        if (write) st = it->to == it->t->type ? copy_tensor(&R, it) : convert_tensor(&R, it);
        if (st) break;
        pl_type_row_bytes(it->to, it->t->n_elements, &out_bytes);
        R.pr.tensor = i + 1;
        R.pr.bytes_done = in0;
        R.pr.out_bytes_done = out0;
        slab_progress(&R, it, it->t->n_bytes, out_bytes);
    }
    if (!st && write) st = pocketllm_gguf_writer_finish(R.w);
    run_free(&R);
    pl_imatrix_free(&im);
    pocketllm_gguf_close(g);
    return st;
}
