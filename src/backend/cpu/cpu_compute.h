/*
 * cpu_compute.h -- the CPU backend instance shared by its op drivers: the
 * chosen row-kernel table, the thread pool, and scratch reserved up front.
 */
#ifndef PL_CPU_COMPUTE_H
#define PL_CPU_COMPUTE_H

#include "backend/compute.h"
#include "backend/cpu/cpu_isa.h"
#include "base/threadpool.h"
#include "quant/kernels.h"

typedef struct pl_cpu_compute {
    pl_compute base;
    const pl_cpu_isa *isa;
    pl_quant_tier qtier; /* the quant module's kernels matching isa */
    pl_pool *pool;
    int n_threads;
    pl_compute_limits lim;
    /* matmul: the activations converted to a weight's vec_dot type */
    void *act;
    size_t act_bytes;
    /* attention: per thread, scores (4 n_ctx floats: two heads' scores,
     * then the flash path's rescale factors of those two) and q in f16; a
     * packed cache's flash block (cpu_attention_packed.c) takes 10 bytes a
     * head value for its first query, the scores' room for more */
    void *attn;
    size_t attn_stride; /* bytes per thread */
    /* moe_ffn (cpu_moe_ffn.c), when the limits name experts: the grouping
     * (grouped row -> pair, then pair -> grouped row), and -- used only when
     * the graph's work rows are too small, and faulted in only as far as a
     * pass uses them -- the SwiGLU outputs in down's vec_dot type, x in up's
     * when gate's differs, and a region per thread */
    int32_t *moe_order;
    void *moe_h;
    void *moe_tok2;
    void *moe_thread;
    int64_t moe_pairs;     /* most (token, slot) pairs of a pass */
    size_t moe_h_bytes, moe_thread_bytes;
} pl_cpu_compute;

static inline pl_cpu_compute *pl_cpu(pl_compute *c) { return (pl_cpu_compute *)c; }

/* Run fn over the pool in chunks sized by `work`, or on the calling
 * thread alone when the job is too small to pay for waking the workers. */
void pl_cpu_parallel(pl_cpu_compute *cc, pl_pool_chunk_fn fn, void *ctx, int64_t work);
/* fn over items 0 .. n-1 as contiguous per-thread ranges
 * (pl_pool_run_ranges), in grains of about one chunk's work that are
 * multiples of `align` items; on the calling thread alone when the whole
 * is one grain. */
void pl_cpu_parallel_ranges(pl_cpu_compute *cc, pl_pool_range_fn fn, void *ctx, int64_t n, int64_t work_per_item,
                            int64_t align);

/* Rows of W handled together while the tokens loop inside. */
#define PL_MM_ROW_BLOCK 8

/* The product of rows lo .. hi-1 of w with n_tok activation rows already
 * in w's vec_dot type (act, act_row bytes apart), with kernels k: the
 * result of row r for token t goes to y[t * y_stride + (r - lo)].  Tiles
 * where the type has them, the rows kernel for single tokens, vec_dot for
 * what is left: every entry bit for bit vec_dot's. */
void pl_cpu_mm_rows(const pl_weight *w, const pl_quant_kernel_set *k, const void *act, size_t act_row, int64_t n_tok,
                    float *y, size_t y_stride, int64_t lo, int64_t hi);

void pl_cpu_get_rows(pl_compute *c, const pl_weight *w, const int32_t *ids, int64_t n, float *y);
void pl_cpu_mul_mat(pl_compute *c, const pl_weight *w, const float *x, int64_t n_tok, float *y);
void pl_cpu_mul_mat_multi(pl_compute *c, int n_w, const pl_weight *const *w, const float *x, int64_t n_tok,
                          float *const *y);
void pl_cpu_rope(pl_compute *c, const pl_rope_params *rp, const float *x, float *y, int64_t n_tok, int64_t n_head,
                 int64_t head_dim, const int32_t *pos);
void pl_cpu_attention(pl_compute *c, const pl_attn_params *ap, const float *q, const void *k_cache,
                      const void *v_cache, int64_t n_tok, int64_t pos0, float *out);
/* a packed cache, or K and V of different types (cpu_attention_packed.c) */
/* The flash path's running maximum and sum over n scores, continuing *M
 * and *S: w becomes the rows' V weights, ms their rescales (1: none) --
 * what the ISA's flash_rows_* folds take (cpu_attention.c); through the
 * ISA's flash_weights where it has one. */
void pl_cpu_flash_weights(const pl_cpu_isa *isa, float *w, float *ms, int64_t n, float *M, float *S);

void pl_cpu_attention_packed(pl_compute *c, const pl_attn_params *ap, const float *q, const void *k_cache,
                             const void *v_cache, int64_t n_tok, int64_t pos0, float *out);
/* the audio tower's ops (cpu_conv.c) */
void pl_cpu_gelu_erf(pl_compute *c, const float *x, float *y, int64_t n);
void pl_cpu_im2col(pl_compute *c, const pl_im2col_params *p, const float *x, float *y);
void pl_cpu_transpose(pl_compute *c, const float *x, float *y, int64_t batch, int64_t rows, int64_t cols);

/* mixture of experts (cpu_moe.c, cpu_moe_ffn.c): the scratch, sized from
 * the limits' moe_n_used and moe_n_ff (nothing for a dense model), and the
 * ops */
pocketllm_status pl_cpu_moe_reserve(pl_cpu_compute *cc, const pl_compute_limits *lim);
void pl_cpu_moe_free(pl_cpu_compute *cc);
void pl_cpu_moe_route(pl_compute *c, const pl_moe_route_params *p, const float *logits, int64_t n_tok, int32_t *ids,
                      float *w);
void pl_cpu_moe_ffn(pl_compute *c, const pl_moe_ffn_weights *e, const float *x, const int32_t *ids, const float *w,
                    int64_t n_used, int64_t n_tok, float *y, void *work, size_t work_bytes);
void pl_cpu_sigmoid_gate(pl_compute *c, const float *x, const float *g, float *y, int64_t rows, int64_t n);

/* Whether mul_mat/get_rows can run on weights of this type. */
bool pl_cpu_weight_type_ok(uint32_t type);

#endif
