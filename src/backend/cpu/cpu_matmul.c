/*
 * cpu_matmul.c -- the matrix product y = W x and the embedding lookup on
 * the CPU, with W packed in its stored type inside the mapped file.
 *
 * mul_mat first converts the activation rows to the weight type's vec_dot
 * type (as llama.cpp does: f16 weights see f16 activations, q8_0 weights
 * see q8_0 blocks), then splits the weight rows over the threads; each
 * thread walks its rows in small blocks and, per block, every token, so a
 * block of weights is read from memory once per pass while it is hot.
 * f32/f16/bf16 use this backend's SIMD dot products; every other type runs
 * through the quant module's kernels (quant/kernels.h: llama.cpp's
 * activation encoding and dot product, SIMD where written), so a type that
 * gains a row there runs here unchanged.
 */
#include <string.h>

#include "backend/cpu/cpu_compute.h"
#include "base/error.h"
#include "base/half.h"
#include "quant/types.h"

/* Rows of W handled together while the tokens loop inside. */
#define PL_MM_ROW_BLOCK 8

static bool pl_cpu_is_float_type(uint32_t type) {
    return type == PL_TYPE_F32 || type == PL_TYPE_F16 || type == PL_TYPE_BF16;
}

bool pl_cpu_weight_type_ok(uint32_t type) { return pl_cpu_is_float_type(type) || pl_ref_type_ok(type); }

typedef struct {
    pl_cpu_compute *cc;
    const pl_weight *w;
    const float *x;
    int64_t n_tok;
    float *y;
    uint32_t act_type;
    size_t act_row;  /* bytes of one converted activation row */
    const void *act; /* converted activations, or x itself for f32 */
    pl_vec_dot_fn dot;            /* for the types without a SIMD path here */
    pl_act_from_float_fn act_fn;  /* ... and their activation encoder */
} mm_job;

static void mm_convert(void *ctx, int chunk, int n_chunks, int thread) {
    mm_job *j = ctx;
    long long lo, hi;
    pl_pool_split(j->n_tok, chunk, n_chunks, &lo, &hi);
    const int64_t n = j->w->n_in;
    for (int64_t t = lo; t < hi; t++) {
        const float *x = j->x + t * n;
        void *dst = (uint8_t *)j->cc->act + (size_t)t * j->act_row;
        if (j->act_type == PL_TYPE_F16) j->cc->isa->to_f16(x, dst, n);
        else if (j->act_type == PL_TYPE_BF16) j->cc->isa->to_bf16(x, dst, n);
        else j->act_fn(x, dst, n);
    }
}

static inline float dot_one(const mm_job *j, const void *wrow, const void *arow) {
    const int64_t n = j->w->n_in;
    switch (j->w->type) {
    case PL_TYPE_F32: return j->cc->isa->dot_f32(wrow, arow, n);
    case PL_TYPE_F16: return j->cc->isa->dot_f16(wrow, arow, n);
    case PL_TYPE_BF16: return j->cc->isa->dot_bf16(wrow, arow, n);
    default: return j->dot(n, wrow, arow);
    }
}

static void mm_dots(void *ctx, int chunk, int n_chunks, int thread) {
    mm_job *j = ctx;
    const pl_weight *w = j->w;
    long long lo, hi;
    pl_pool_split(w->n_out, chunk, n_chunks, &lo, &hi);
    for (int64_t r0 = lo; r0 < hi; r0 += PL_MM_ROW_BLOCK) {
        const int64_t r1 = r0 + PL_MM_ROW_BLOCK < hi ? r0 + PL_MM_ROW_BLOCK : hi;
        for (int64_t t = 0; t < j->n_tok; t++) {
            const void *a = (const uint8_t *)j->act + (size_t)t * j->act_row;
            float *y = j->y + t * w->n_out;
            for (int64_t r = r0; r < r1; r++) y[r] = dot_one(j, pl_weight_row(w, r), a);
        }
    }
}

void pl_cpu_mul_mat(pl_compute *c, const pl_weight *w, const float *x, int64_t n_tok, float *y) {
    pl_cpu_compute *cc = pl_cpu(c);
    const pl_type_traits *t = pl_type_get(w->type);
    mm_job j = {cc, w, x, n_tok, y, 0, 0, NULL, NULL, NULL};
    if (!pl_cpu_weight_type_ok(w->type)) {
        pl_fail(POCKETLLM_ERR_UNSUPPORTED, "mul_mat: no CPU kernel for %s weights (%s)", t ? t->name : "?", w->name);
        pl_compute_fail(c, POCKETLLM_ERR_UNSUPPORTED);
        return;
    }
    j.act_type = pl_cpu_is_float_type(w->type) ? w->type : t->vec_dot_type;
    if (!pl_cpu_is_float_type(w->type)) {
        j.dot = pl_quant_kernels_tier(w->type, cc->qtier)->vec_dot;
        j.act_fn = pl_quant_kernels_tier(j.act_type, cc->qtier)->act_from_float;
    }
    uint64_t row = 0;
    if (!pl_type_row_bytes(j.act_type, (uint64_t)w->n_in, &row) || n_tok > cc->lim.n_batch || w->n_in > cc->lim.max_in ||
        (uint64_t)n_tok * row > cc->act_bytes) {
        pl_fail(POCKETLLM_ERR_INTERNAL, "mul_mat %s: %lld x %lld exceeds the reserved scratch", w->name, (long long)n_tok,
                (long long)w->n_in);
        pl_compute_fail(c, POCKETLLM_ERR_INTERNAL);
        return;
    }
    j.act_row = (size_t)row;
    if (j.act_type == PL_TYPE_F32) {
        j.act = x; /* f32 weights read the activations as they are */
    } else {
        j.act = cc->act;
        pl_cpu_parallel(cc, mm_convert, &j, n_tok * w->n_in);
    }
    pl_cpu_parallel(cc, mm_dots, &j, n_tok * w->n_in * w->n_out);
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
    const int64_t n_in = j->w->n_in;
    for (int64_t r = lo; r < hi; r++) {
        const void *src = pl_weight_row(j->w, j->ids[r]);
        float *y = j->y + r * n_in;
        switch (j->w->type) {
        case PL_TYPE_F32: memcpy(y, src, (size_t)n_in * sizeof(float)); break;
        case PL_TYPE_F16:
            for (int64_t i = 0; i < n_in; i++) y[i] = pl_f16_to_f32(((const uint16_t *)src)[i]);
            break;
        case PL_TYPE_BF16:
            for (int64_t i = 0; i < n_in; i++) y[i] = pl_bf16_to_f32(((const uint16_t *)src)[i]);
            break;
        default: j->decode(src, y, n_in); break;
        }
    }
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
