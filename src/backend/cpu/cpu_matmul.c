/*
 * cpu_matmul.c -- the matrix product y = W x and the embedding lookup on
 * the CPU, with W packed in its stored type inside the mapped file.
 *
 * Every weight type goes through the quant module's kernels
 * (quant/kernels.h) of the instance's tier: mul_mat converts the
 * activation rows to the weight type's vec_dot type the way llama.cpp's CPU
 * backend does (f16 weights see f16 activations, q8_0 weights see q8_0
 * blocks), then splits the weight rows over the threads; each chunk walks
 * its rows in small blocks and, per block, every token, so a block of
 * weights is read from memory once per pass while it is hot.  Where the
 * type has a tile kernel (kernels.h: a few rows x a few tokens at once,
 * each entry vec_dot's bits) the tokens go through it in tiles, so a
 * weight block is unpacked once for several tokens; leftover rows and
 * tokens take vec_dot, with the same result.  A type that gains kernels
 * there runs here unchanged.
 */
#include <string.h>

#include "backend/cpu/cpu_compute.h"
#include "base/error.h"
#include "quant/kernels.h"
#include "quant/types.h"

bool pl_cpu_weight_type_ok(uint32_t type) { return pl_ref_type_ok(type); }

typedef struct {
    pl_cpu_compute *cc;
    const pl_weight *w;
    const float *x;
    int64_t n_tok;
    float *y;
    size_t act_row;               /* bytes of one converted activation row */
    const void *act;              /* converted activations, or x itself for f32 */
    const pl_quant_kernel_set *k; /* the weight type's kernels (vec_dot, vec_dot_tile) */
    pl_act_from_float_fn act_fn;  /* f32 -> the vec_dot type */
} mm_job;

static void mm_convert(void *ctx, int chunk, int n_chunks, int thread) {
    mm_job *j = ctx;
    long long lo, hi;
    pl_pool_split(j->n_tok, chunk, n_chunks, &lo, &hi);
    for (int64_t t = lo; t < hi; t++)
        j->act_fn(j->x + t * j->w->n_in, (uint8_t *)j->cc->act + (size_t)t * j->act_row, j->w->n_in);
}

void pl_cpu_mm_rows(const pl_weight *w, const pl_quant_kernel_set *k, const void *act, size_t act_row, int64_t n_tok,
                    float *y, size_t y_stride, int64_t lo, int64_t hi) {
    /* tiles of tile_rows x tile_cols where they fit (identical bits to
     * vec_dot, see kernels.h), vec_dot for the rows and tokens left over */
    const int64_t tr = k->vec_dot_tile ? k->tile_rows : 0, tc = k->vec_dot_tile ? k->tile_cols : 0;
    const int64_t t_tiled = tc ? n_tok - n_tok % tc : 0;
    for (int64_t r0 = lo; r0 < hi; r0 += PL_MM_ROW_BLOCK) {
        const int64_t r1 = r0 + PL_MM_ROW_BLOCK < hi ? r0 + PL_MM_ROW_BLOCK : hi;
        const int64_t r_tiled = tr ? r0 + (r1 - r0) / tr * tr : r0;
        for (int64_t t = 0; t < t_tiled; t += tc) {
            const void *a = (const uint8_t *)act + (size_t)t * act_row;
            float *yt = y + (size_t)t * y_stride;
            for (int64_t r = r0; r < r_tiled; r += tr)
                k->vec_dot_tile(w->n_in, pl_weight_row(w, r), w->row_bytes, a, act_row, yt + (r - lo), y_stride);
            for (int64_t c = 0; c < tc; c++)
                for (int64_t r = r_tiled; r < r1; r++)
                    yt[(size_t)c * y_stride + (size_t)(r - lo)] = k->vec_dot(w->n_in, pl_weight_row(w, r), (const uint8_t *)a + (size_t)c * act_row);
        }
        /* two or three tokens left over (a short verification pass, the
         * tail of a longer one): one part-tile per row, the block unpacked
         * once for them, where the type has one */
        const int64_t left = n_tok - t_tiled;
        if (left >= 2 && left < PL_PART_COLS && k->vec_dot_cols[left]) {
            const void *a = (const uint8_t *)act + (size_t)t_tiled * act_row;
            float *yt = y + (size_t)t_tiled * y_stride;
            for (int64_t r = r0; r < r1; r++)
                k->vec_dot_cols[left](w->n_in, pl_weight_row(w, r), w->row_bytes, a, act_row, yt + (r - lo), y_stride);
            continue;
        }
        /* the tokens left over (every token of a decode): the rows kernel
         * where the type has one, vec_dot for the rows it leaves */
        const int64_t dr = k->vec_dot_rows ? k->dot_rows : 0, r_rows = dr ? r0 + (r1 - r0) / dr * dr : r0;
        for (int64_t t = t_tiled; t < n_tok; t++) {
            const void *a = (const uint8_t *)act + (size_t)t * act_row;
            float *yt = y + (size_t)t * y_stride;
            for (int64_t r = r0; r < r_rows; r += dr) k->vec_dot_rows(w->n_in, pl_weight_row(w, r), w->row_bytes, a, 0, yt + (r - lo), 0);
            for (int64_t r = r_rows; r < r1; r++) yt[r - lo] = k->vec_dot(w->n_in, pl_weight_row(w, r), a);
        }
    }
}

/* Rows lo .. hi-1 of w (kernels k) against the job's converted
 * activations, into y ([n_tok][w->n_out]). */
static void mm_rows(const mm_job *j, const pl_weight *w, const pl_quant_kernel_set *k, float *y_all, int64_t lo,
                    int64_t hi) {
    pl_cpu_mm_rows(w, k, j->act, j->act_row, j->n_tok, y_all + lo, (size_t)w->n_out, lo, hi);
}

static void mm_dots(void *ctx, int64_t lo, int64_t hi, int thread) {
    (void)thread;
    mm_job *j = ctx;
    mm_rows(j, j->w, j->k, j->y, lo, hi);
}

/* Several weights over one input: their rows laid end to end and split
 * over the chunks as one matrix, so one job (one wait) serves them all. */
typedef struct {
    mm_job base; /* the shared activations; base.w is w[0] */
    int n_w;
    const pl_weight *const *w;
    float *const *y;
    const pl_quant_kernel_set *k[PL_MUL_MAT_MULTI_MAX];
    int64_t rows; /* the sum of their n_out */
} mm_multi_job;

static void mm_multi_dots(void *ctx, int64_t lo, int64_t hi, int thread) {
    (void)thread;
    mm_multi_job *j = ctx;
    int64_t off = 0;
    for (int i = 0; i < j->n_w && off < hi; off += j->w[i]->n_out, i++) {
        const int64_t a = lo > off ? lo - off : 0, b = hi - off < j->w[i]->n_out ? hi - off : j->w[i]->n_out;
        if (a < b) mm_rows(&j->base, j->w[i], j->k[i], j->y[i], a, b);
    }
}

/* j (its cc, w, x, n_tok already set) gets the activations in w's vec_dot
 * type: x itself for f32, else converted into the reserved scratch.  False
 * (the pass failed) when they do not fit the reservation. */
static bool mm_activations(pl_compute *c, mm_job *j) {
    pl_cpu_compute *cc = j->cc;
    const pl_weight *w = j->w;
    const uint32_t act_type = pl_type_get(w->type)->vec_dot_type;
    uint64_t row = 0;
    if (!pl_type_row_bytes(act_type, (uint64_t)w->n_in, &row) || j->n_tok > cc->lim.n_batch || w->n_in > cc->lim.max_in ||
        (uint64_t)j->n_tok * row > cc->act_bytes) {
        pl_fail(POCKETLLM_ERR_INTERNAL, "mul_mat %s: %lld x %lld exceeds the reserved scratch", w->name,
                (long long)j->n_tok, (long long)w->n_in);
        pl_compute_fail(c, POCKETLLM_ERR_INTERNAL);
        return false;
    }
    j->act_row = (size_t)row;
    if (act_type == PL_TYPE_F32) {
        j->act = j->x; /* f32 activations are used as they are */
    } else {
        j->act = cc->act;
        j->act_fn = pl_quant_kernels_tier(act_type, cc->qtier)->act_from_float;
        pl_cpu_parallel(cc, mm_convert, j, j->n_tok * w->n_in);
    }
    return true;
}

void pl_cpu_mul_mat(pl_compute *c, const pl_weight *w, const float *x, int64_t n_tok, float *y) {
    pl_cpu_compute *cc = pl_cpu(c);
    if (!pl_cpu_weight_type_ok(w->type)) {
        pl_fail(POCKETLLM_ERR_UNSUPPORTED, "mul_mat: no CPU kernel for %s weights (%s)", pocketllm_type_name(w->type),
                w->name);
        pl_compute_fail(c, POCKETLLM_ERR_UNSUPPORTED);
        return;
    }
    mm_job j = {.cc = cc, .w = w, .x = x, .n_tok = n_tok, .y = y, .k = pl_quant_kernels_tier(w->type, cc->qtier)};
    if (mm_activations(c, &j)) pl_cpu_parallel_ranges(cc, mm_dots, &j, w->n_out, n_tok * w->n_in, PL_MM_ROW_BLOCK);
}

void pl_cpu_mul_mat_multi(pl_compute *c, int n_w, const pl_weight *const *w, const float *x, int64_t n_tok,
                          float *const *y) {
    pl_cpu_compute *cc = pl_cpu(c);
    const uint32_t act_type = pl_type_get(w[0]->type)->vec_dot_type;
    bool shared = n_w <= PL_MUL_MAT_MULTI_MAX && act_type != PL_TYPE_F32;
    for (int i = 0; i < n_w && shared; i++)
        shared = pl_cpu_weight_type_ok(w[i]->type) && w[i]->n_in == w[0]->n_in &&
                 pl_type_get(w[i]->type)->vec_dot_type == act_type;
    if (!shared) { /* different inputs to the kernels: one at a time */
        for (int i = 0; i < n_w && !c->status; i++) pl_cpu_mul_mat(c, w[i], x, n_tok, y[i]);
        return;
    }
    mm_multi_job j = {.base = {.cc = cc, .w = w[0], .x = x, .n_tok = n_tok}, .n_w = n_w, .w = w, .y = y};
    for (int i = 0; i < n_w; i++) {
        j.k[i] = pl_quant_kernels_tier(w[i]->type, cc->qtier);
        j.rows += w[i]->n_out;
    }
    if (mm_activations(c, &j.base))
        pl_cpu_parallel_ranges(cc, mm_multi_dots, &j, j.rows, n_tok * w[0]->n_in, PL_MM_ROW_BLOCK);
}

typedef struct {
    const pl_weight *w;
    const int32_t *ids;
    int64_t n;
    float *y;
    pl_to_float_fn decode;
} gr_job;

static void gr_run(void *ctx, int chunk, int n_chunks, int thread) {
    gr_job *j = ctx;
    long long lo, hi;
    pl_pool_split(j->n, chunk, n_chunks, &lo, &hi);
    for (int64_t r = lo; r < hi; r++) j->decode(pl_weight_row(j->w, j->ids[r]), j->y + r * j->w->n_in, j->w->n_in);
}

void pl_cpu_get_rows(pl_compute *c, const pl_weight *w, const int32_t *ids, int64_t n, float *y) {
    if (!pl_cpu_weight_type_ok(w->type)) {
        pl_fail(POCKETLLM_ERR_UNSUPPORTED, "get_rows: no CPU kernel for %s (%s)", pocketllm_type_name(w->type), w->name);
        pl_compute_fail(c, POCKETLLM_ERR_UNSUPPORTED);
        return;
    }
    for (int64_t r = 0; r < n; r++)
        if (ids[r] < 0 || ids[r] >= w->n_out) {
            pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "token id %d is outside the vocabulary (0..%lld)", ids[r],
                    (long long)w->n_out - 1);
            pl_compute_fail(c, POCKETLLM_ERR_INVALID_ARGUMENT);
            return;
        }
    gr_job j = {w, ids, n, y, pl_quant_kernels_tier(w->type, pl_cpu(c)->qtier)->to_float};
    pl_cpu_parallel(pl_cpu(c), gr_run, &j, n * w->n_in);
}
