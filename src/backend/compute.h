/*
 * compute.h -- a backend instance that runs ops: its threads, its scratch
 * memory, its device.  Model graphs are written against this interface
 * only, so a new backend runs every architecture without touching the
 * graphs.  Buffers come from the instance (device memory on a GPU); the
 * graph hands them to ops and never reads them itself, except through
 * download().
 *
 * Ops do not return a status: the first failure is kept in c->status and
 * every later op of the pass is skipped, so that graph code reads like the
 * math and checks once at the end of a pass.
 */
#ifndef PL_COMPUTE_H
#define PL_COMPUTE_H

#include <stddef.h>
#include <stdint.h>

#include "ops/ref.h"
#include "ops/weight.h"
#include "pocketllm.h"

typedef struct pl_compute pl_compute;

/* What a session will ask of the instance, so that it can size its
 * scratch once (no allocation happens inside a forward pass). */
typedef struct pl_compute_limits {
    int64_t n_batch;  /* most tokens in one pass */
    int64_t max_in;   /* longest weight row (elements) */
    int64_t n_ctx;    /* most KV positions attention will read */
    int64_t head_dim;
    /* a mixture-of-experts model (0 and 0 for a dense one): experts per
     * token and the width of an expert's FFN, for moe_ffn's scratch */
    int64_t moe_n_used;
    int64_t moe_n_ff;
} pl_compute_limits;

typedef struct pl_compute_ops {
    void (*free)(pl_compute *c);
    pocketllm_status (*reserve)(pl_compute *c, const pl_compute_limits *lim);
    /* device memory, aligned for the kernels; NULL (and a message) on failure */
    void *(*alloc)(pl_compute *c, size_t bytes);
    void (*release)(pl_compute *c, void *p);
    void (*upload)(pl_compute *c, void *dst, const void *src, size_t bytes);
    void (*download)(pl_compute *c, void *dst, const void *src, size_t bytes);

    void (*get_rows)(pl_compute *c, const pl_weight *w, const int32_t *ids, int64_t n, float *y);
    void (*mul_mat)(pl_compute *c, const pl_weight *w, const float *x, int64_t n_tok, float *y);
    /* y[i] = w[i] x for n_w weights of the same n_in sharing one input (q,
     * k, v; gate, up): one conversion of x and one parallel job where a
     * backend can, each result bit for bit its mul_mat.  NULL: mul_mat per
     * weight. */
    void (*mul_mat_multi)(pl_compute *c, int n_w, const pl_weight *const *w, const float *x, int64_t n_tok,
                          float *const *y);
    void (*rms_norm)(pl_compute *c, const float *x, const float *w, float *y, int64_t rows, int64_t n, float eps);
    void (*add)(pl_compute *c, const float *a, const float *b, float *y, int64_t rows, int64_t n, int64_t b_rows);
    void (*mul)(pl_compute *c, const float *a, const float *b, float *y, int64_t rows, int64_t n, int64_t b_rows);
    void (*scale)(pl_compute *c, const float *x, float s, float *y, int64_t n);
    void (*silu_mul)(pl_compute *c, const float *g, const float *u, float *y, int64_t n);
    /* pl_ref_layer_norm / pl_ref_gelu (the vision tower's) */
    void (*layer_norm)(pl_compute *c, const float *x, const float *w, const float *b, float *y, int64_t rows,
                       int64_t n, float eps);
    void (*gelu)(pl_compute *c, const float *x, float *y, int64_t n);
    void (*softmax)(pl_compute *c, const float *x, float *y, int64_t rows, int64_t n);
    void (*rope)(pl_compute *c, const pl_rope_params *rp, const float *x, float *y, int64_t n_tok, int64_t n_head,
                 int64_t head_dim, const int32_t *pos);
    void (*kv_store)(pl_compute *c, uint32_t type, const float *x, void *dst, int64_t n);
    /* The same into a head-major cache (pl_attn_params.kv_cap): n_tok rows
     * of n_head_kv heads go to positions pos .. pos+n_tok-1 of each head's
     * run of kv_cap positions in dst.  A backend that has it keeps its
     * caches head-major (pl_kv_head_major); NULL: rows of all heads. */
    void (*kv_store_heads)(pl_compute *c, uint32_t type, const float *x, void *dst, int64_t n_tok, int64_t pos,
                           int64_t n_head_kv, int64_t head_dim, int64_t kv_cap);
    void (*attention)(pl_compute *c, const pl_attn_params *ap, const float *q, const void *k_cache,
                      const void *v_cache, int64_t n_tok, int64_t pos0, float *out);
    int64_t (*argmax)(pl_compute *c, const float *x, int64_t n);
    /* pl_ref_gelu_erf / pl_ref_im2col / pl_ref_transpose (the audio
     * tower's); NULL in a backend without them: the wrappers fail the pass */
    void (*gelu_erf)(pl_compute *c, const float *x, float *y, int64_t n);
    void (*im2col)(pl_compute *c, const pl_im2col_params *p, const float *x, float *y);
    void (*transpose)(pl_compute *c, const float *x, float *y, int64_t batch, int64_t rows, int64_t cols);
    /* Mixture of experts; NULL in a backend without them (the wrappers
     * fail the pass).  moe_route: pl_ref_moe_route (ids and w are compute
     * memory).  moe_ffn: pl_ref_moe_ffn -- the routed experts' SwiGLU FFNs
     * and their weighted sum, reading only the chosen experts' rows; its
     * intermediate products go in `work` (compute memory of work_bytes the
     * graph does not need during the op) where they fit, else in the
     * instance's own scratch (reserve() sizes it from moe_n_used and
     * moe_n_ff).  sigmoid_gate: pl_ref_sigmoid_gate. */
    void (*moe_route)(pl_compute *c, const pl_moe_route_params *p, const float *logits, int64_t n_tok, int32_t *ids,
                      float *w);
    void (*moe_ffn)(pl_compute *c, const pl_moe_ffn_weights *e, const float *x, const int32_t *ids, const float *w,
                    int64_t n_used, int64_t n_tok, float *y, void *work, size_t work_bytes);
    void (*sigmoid_gate)(pl_compute *c, const float *x, const float *g, float *y, int64_t rows, int64_t n);
} pl_compute_ops;

/* An observer of matrix multiplications (eval/imatrix.c collects the
 * importance matrix through it): called before each mul_mat of a pass with
 * the weight and its n_tok input rows of w->n_in floats, which live in
 * compute memory (read them through ops->download).  It may stop the pass
 * with pl_compute_fail. */
typedef void (*pl_mul_mat_observer)(void *user, pl_compute *c, const pl_weight *w, const float *x, int64_t n_tok);
/* An observer of the router: called after each moe_route of a pass with
 * its n_tok tokens' chosen experts and weights ([n_tok][n_used], compute
 * memory). */
typedef void (*pl_route_observer)(void *user, pl_compute *c, const int32_t *ids, const float *w, int64_t n_tok,
                                  int64_t n_used);
/* The same for the expert products inside moe_ffn, called by the backend
 * before each of them: w is the 3-D expert tensor, x its input rows
 * [n_tok][x_slots][w->n_in] (x_slots 1 for gate and up, which read the
 * token's row; n_used for down, which reads each slot's own row) and ids
 * the routing [n_tok][n_used] -- row (t, slot j) goes to expert
 * ids[t * n_used + j].  x and ids are compute memory. */
typedef void (*pl_mul_mat_id_observer)(void *user, pl_compute *c, const pl_weight *w, const float *x, int64_t x_slots,
                                       const int32_t *ids, int64_t n_used, int64_t n_tok);

struct pl_compute {
    const pl_compute_ops *ops;
    const char *backend;     /* "cpu", ... */
    pocketllm_status status; /* first failure of the current pass, POCKETLLM_OK if none */
    uint64_t reserved_bytes; /* memory reserve() holds (the instance's own scratch) */
    bool device_memory;      /* buffers are device memory: the host reads them only through download() */
    /* kv_store and attention take every type of quant/kv_types.h, and K
     * and V of different types; false: f16 or f32, the same for both */
    bool kv_packed;
    pl_mul_mat_observer observe_mul_mat; /* NULL when off: one test per matmul */
    pl_mul_mat_id_observer observe_mul_mat_id; /* NULL when off */
    void *observe_user;                  /* both observers' */
    pl_route_observer observe_route;     /* NULL when off */
    void *observe_route_user;
};

/* Record a failure (the first one wins; its message stays the thread's
 * last error). */
void pl_compute_fail(pl_compute *c, pocketllm_status st);

/* The graph's vocabulary: one line per op, the math in the name. */
static inline void pl_get_rows(pl_compute *c, const pl_weight *w, const int32_t *ids, int64_t n, float *y) {
    if (!c->status) c->ops->get_rows(c, w, ids, n, y);
}
static inline void pl_mul_mat(pl_compute *c, const pl_weight *w, const float *x, int64_t n_tok, float *y) {
    if (c->status) return;
    if (c->observe_mul_mat) {
        c->observe_mul_mat(c->observe_user, c, w, x, n_tok);
        if (c->status) return;
    }
    c->ops->mul_mat(c, w, x, n_tok, y);
}
/* Most weights one pl_mul_mat_multi takes. */
#define PL_MUL_MAT_MULTI_MAX 4
static inline void pl_mul_mat_multi(pl_compute *c, int n_w, const pl_weight *const *w, const float *x, int64_t n_tok,
                                    float *const *y) {
    if (c->status) return;
    if (c->observe_mul_mat)
        for (int i = 0; i < n_w; i++) {
            c->observe_mul_mat(c->observe_user, c, w[i], x, n_tok);
            if (c->status) return;
        }
    if (c->ops->mul_mat_multi && n_w > 1 && n_w <= PL_MUL_MAT_MULTI_MAX) {
        c->ops->mul_mat_multi(c, n_w, w, x, n_tok, y);
        return;
    }
    for (int i = 0; i < n_w && !c->status; i++) c->ops->mul_mat(c, w[i], x, n_tok, y[i]);
}
static inline void pl_rms_norm(pl_compute *c, const float *x, const float *w, float *y, int64_t rows, int64_t n,
                               float eps) {
    if (!c->status) c->ops->rms_norm(c, x, w, y, rows, n, eps);
}
static inline void pl_add(pl_compute *c, const float *a, const float *b, float *y, int64_t rows, int64_t n,
                          int64_t b_rows) {
    if (!c->status) c->ops->add(c, a, b, y, rows, n, b_rows);
}
static inline void pl_silu_mul(pl_compute *c, const float *g, const float *u, float *y, int64_t n) {
    if (!c->status) c->ops->silu_mul(c, g, u, y, n);
}
static inline void pl_layer_norm(pl_compute *c, const float *x, const float *w, const float *b, float *y,
                                 int64_t rows, int64_t n, float eps) {
    if (!c->status) c->ops->layer_norm(c, x, w, b, y, rows, n, eps);
}
static inline void pl_gelu(pl_compute *c, const float *x, float *y, int64_t n) {
    if (!c->status) c->ops->gelu(c, x, y, n);
}
static inline void pl_scale(pl_compute *c, const float *x, float s, float *y, int64_t n) {
    if (!c->status) c->ops->scale(c, x, s, y, n);
}
static inline void pl_rope(pl_compute *c, const pl_rope_params *rp, const float *x, float *y, int64_t n_tok,
                           int64_t n_head, int64_t head_dim, const int32_t *pos) {
    if (!c->status) c->ops->rope(c, rp, x, y, n_tok, n_head, head_dim, pos);
}
static inline void pl_kv_store(pl_compute *c, uint32_t type, const float *x, void *dst, int64_t n) {
    if (!c->status) c->ops->kv_store(c, type, x, dst, n);
}
/* Whether this backend's KV caches are head-major (see kv_store_heads). */
static inline bool pl_kv_head_major(const pl_compute *c) { return c->ops->kv_store_heads != NULL; }
static inline void pl_kv_store_heads(pl_compute *c, uint32_t type, const float *x, void *dst, int64_t n_tok,
                                     int64_t pos, int64_t n_head_kv, int64_t head_dim, int64_t kv_cap) {
    if (!c->status) c->ops->kv_store_heads(c, type, x, dst, n_tok, pos, n_head_kv, head_dim, kv_cap);
}
static inline void pl_attention(pl_compute *c, const pl_attn_params *ap, const float *q, const void *k_cache,
                                const void *v_cache, int64_t n_tok, int64_t pos0, float *out) {
    if (!c->status) c->ops->attention(c, ap, q, k_cache, v_cache, n_tok, pos0, out);
}
/* The audio tower's ops: a backend without them fails the pass with
 * POCKETLLM_ERR_UNSUPPORTED (and a message). */
pocketllm_status pl_compute_missing(pl_compute *c, const char *op);
static inline void pl_gelu_erf(pl_compute *c, const float *x, float *y, int64_t n) {
    if (c->status) return;
    if (!c->ops->gelu_erf) pl_compute_missing(c, "gelu_erf");
    else c->ops->gelu_erf(c, x, y, n);
}
/* p is checked (pl_im2col_check) before the backend sees it */
static inline void pl_im2col(pl_compute *c, const pl_im2col_params *p, const float *x, float *y) {
    if (c->status) return;
    pocketllm_status st;
    if (!c->ops->im2col) pl_compute_missing(c, "im2col");
    else if ((st = pl_im2col_check(p))) pl_compute_fail(c, st);
    else c->ops->im2col(c, p, x, y);
}
static inline void pl_transpose(pl_compute *c, const float *x, float *y, int64_t batch, int64_t rows, int64_t cols) {
    if (c->status) return;
    if (!c->ops->transpose) pl_compute_missing(c, "transpose");
    else c->ops->transpose(c, x, y, batch, rows, cols);
}

/* Mixture of experts (see the ops above). */
static inline void pl_moe_route(pl_compute *c, const pl_moe_route_params *p, const float *logits, int64_t n_tok,
                                int32_t *ids, float *w) {
    if (c->status) return;
    if (!c->ops->moe_route) pl_compute_missing(c, "moe_route");
    else c->ops->moe_route(c, p, logits, n_tok, ids, w);
    if (c->observe_route && !c->status) c->observe_route(c->observe_route_user, c, ids, w, n_tok, p->n_used);
}
static inline void pl_moe_ffn(pl_compute *c, const pl_moe_ffn_weights *e, const float *x, const int32_t *ids,
                              const float *w, int64_t n_used, int64_t n_tok, float *y, void *work, size_t work_bytes) {
    if (c->status) return;
    if (!c->ops->moe_ffn) pl_compute_missing(c, "moe_ffn");
    else c->ops->moe_ffn(c, e, x, ids, w, n_used, n_tok, y, work, work_bytes);
}
static inline void pl_sigmoid_gate(pl_compute *c, const float *x, const float *g, float *y, int64_t rows, int64_t n) {
    if (c->status) return;
    if (!c->ops->sigmoid_gate) pl_compute_missing(c, "sigmoid_gate");
    else c->ops->sigmoid_gate(c, x, g, y, rows, n);
}

/* A CPU instance with n_threads threads (0 = the physical cores) and the
 * given row-kernel table (NULL = the best for this host). */
struct pl_cpu_isa;
pocketllm_status pl_cpu_compute_new(int n_threads, const struct pl_cpu_isa *isa, pl_compute **out);

#endif
