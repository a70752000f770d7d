/*
 * vk_compute.h -- a compute instance on a Vulkan device, shared by the op
 * drivers: the command buffer a pass is recorded into, the hazards that
 * decide where barriers go, the ring that carries host inputs (token ids,
 * rope tables) to the device, the readback buffer, and the scratch the ops
 * need (activations rounded to 8-bit blocks, attention scores).
 *
 * Recording.  Ops record dispatches and return at once; nothing runs until
 * the pass is submitted -- by a download (which waits for it), by argmax,
 * or by the ring filling up.  So a forward pass is one submission and one
 * wait, whatever the number of ops in it.  A barrier is recorded only
 * where an op reads or writes memory a dispatch recorded since the last
 * barrier wrote, or writes memory one read: independent ops (q, k and v,
 * gate and up) run together.
 */
#ifndef PL_VK_COMPUTE_H
#define PL_VK_COMPUTE_H

#include "backend/compute.h"
#include "backend/vulkan/vk_device.h"

/* [lo, hi) of device addresses an op touches. */
typedef struct pl_vk_range {
    VkDeviceAddress lo, hi;
} pl_vk_range;

#define PL_VK_MAX_PENDING 96

typedef struct pl_vk_compute {
    pl_compute base;
    pl_vk_device *d;
    VkCommandPool pool;
    VkCommandBuffer cmd;
    VkFence fence;
    bool recording; /* cmd has been begun and not submitted */
    bool in_flight; /* submitted, not waited for */
    VkPipeline bound;
    pl_vk_range pend_w[PL_VK_MAX_PENDING], pend_r[PL_VK_MAX_PENDING];
    int n_w, n_r;
    /* host-visible, coherent: inputs for the recorded commands; reused
     * after each wait */
    pl_vk_buffer *ring;
    size_t ring_used;
    pl_vk_buffer *readback;
    pl_compute_limits lim;
    /* activations in 8-bit blocks: qs (act_elems bytes: n_batch x max_in,
     * or the rows of moe_ffn's down products when more), then the scale of
     * every 32 and a float of every 16 elements */
    pl_vk_buffer *act;
    size_t act_d_off, act_s_off;
    uint64_t act_elems;
    /* which x the act buffer holds (so q, k, v convert their input once) */
    const void *act_src;
    uint32_t act_type;
    int64_t act_n_in, act_n_tok;
    /* attention scores that do not fit shared memory */
    pl_vk_buffer *scores;
    /* moe_ffn's scratch (vk_ops_moe.c), keyed so that the expert-product
     * observer can download the rows: the gate products then the up
     * products (the gate's become the down products' input in place), the
     * down products, the grouping table; NULL for a dense model */
    float *moe_gu, *moe_d;
    uint32_t *moe_tab;
    int64_t moe_pairs; /* the most (token, slot) pairs they hold */
    /* the rope table of the last call: reused while positions and
     * parameters are the same (q and k of every layer of a pass) */
    VkDeviceAddress rope_addr;
    pl_rope_params rope_rp;
    int32_t *rope_pos;         /* n_tok positions, or 4 x n_tok (multi-axis modes) */
    int64_t rope_n, rope_cap;
    /* gelu's table (65536 f16 values by f16 bits), copied on first use */
    pl_vk_buffer *gelu_tab;
    /* counters (tests and bench) */
    uint64_t n_dispatch, n_barrier, n_submit;
    /* POCKETLLM_VK_PROFILE=1: every dispatch waited for and timed, the
     * seconds per shader printed to stderr when the instance is freed (a
     * developer's tool: it serializes the device) */
    bool profile;
    struct pl_vk_prof {
        char name[48];
        double seconds;
        uint64_t calls;
    } prof[64];
    int n_prof;
} pl_vk_compute;

static inline pl_vk_compute *pl_vkc(pl_compute *c) { return (pl_vk_compute *)c; }

/* Work-group size of the elementwise shaders, and the grid that covers n
 * invocations of it (x at most 65535, then rows of y). */
#define PL_VK_WG 256
void pl_vk_grid(uint64_t groups, uint32_t g[3]);

/* Record one dispatch of shader `name` (spec: its specialization constants,
 * spec[0] the work-group size) with push constants `push`; reads and
 * writes are the ranges it touches.  Failures go to c->status. */
void pl_vk_dispatch(pl_vk_compute *vc, const char *name, const uint32_t *spec, uint32_t n_spec, const void *push,
                    uint32_t push_bytes, const uint32_t groups[3], const pl_vk_range *reads, int n_reads,
                    const pl_vk_range *writes, int n_writes);
/* Record a copy between buffers. */
void pl_vk_copy(pl_vk_compute *vc, VkBuffer src, size_t src_off, VkDeviceAddress src_addr, VkBuffer dst, size_t dst_off,
                VkDeviceAddress dst_addr, size_t bytes);
/* Copy host data into the ring for the commands recorded next; its device
 * address (0 on failure, with c->status set).  When the ring is full the
 * pass so far is submitted and waited for first. */
VkDeviceAddress pl_vk_ring_put(pl_vk_compute *vc, const void *data, size_t bytes);
/* The POCKETLLM_VK_PROFILE table, to stderr. */
void pl_vk_profile_print(const pl_vk_compute *vc);
/* Submit what is recorded (no wait). */
void pl_vk_submit(pl_vk_compute *vc);
/* Submit and wait: everything recorded has run. */
void pl_vk_sync(pl_vk_compute *vc);

/* The device address of an operand (bytes of it must be inside one
 * buffer); 0 with c->status set, naming the op, when it is not device
 * memory. */
VkDeviceAddress pl_vk_operand(pl_vk_compute *vc, const void *p, size_t bytes, const char *op);
/* elementwise.comp's push constants */
typedef struct pl_vk_elementwise_pc {
    uint32_t a[2], b[2], y[2];
    uint32_t n, row_n, op;
    float s;
    uint32_t k;
} pl_vk_elementwise_pc;

/* Addresses as the shaders' uvec2. */
static inline void pl_vk_put_addr(uint32_t *dst, VkDeviceAddress a) {
    dst[0] = (uint32_t)a;
    dst[1] = (uint32_t)(a >> 32);
}

/* The op drivers (vk_ops_*.c). */
void pl_vk_get_rows(pl_compute *c, const pl_weight *w, const int32_t *ids, int64_t n, float *y);
void pl_vk_mul_mat(pl_compute *c, const pl_weight *w, const float *x, int64_t n_tok, float *y);
void pl_vk_mul_mat_multi(pl_compute *c, int n_w, const pl_weight *const *w, const float *x, int64_t n_tok,
                         float *const *y);
/* The rows of an expert product (ggml's mul_mat_id; shaders/moe.glsl):
 * output row `pair` (t * n_used + j) is expert ids[pair]'s matrix times x
 * row pair / x_div.  Either a pair per matrix-vector grid row, its expert
 * read from the ids (route = the ids), or 64-pair tiles of one expert
 * each in the GEMM (grouped; route = moe_group.comp's table, grid rows
 * for n_tiles tiles). */
typedef struct pl_vk_moe_rows {
    VkDeviceAddress route;
    size_t route_bytes;
    int64_t n_pairs;
    uint32_t x_div;
    uint32_t n_tiles;
    bool grouped;
} pl_vk_moe_rows;
/* mul_mat_multi, or with moe the expert products of 3-D weights: x has
 * n_tok rows, y[i] moe->n_pairs rows. */
void pl_vk_mul_mat_rows(pl_compute *c, int n_w, const pl_weight *const *w, const float *x, int64_t n_tok,
                        float *const *y, const pl_vk_moe_rows *moe);
/* Whether a product of n_tok rows goes to the tiled GEMM. */
bool pl_vk_use_gemm(const pl_vk_compute *vc, int64_t n_tok);
/* Whether moe_ffn groups the pairs by expert for the GEMM (else a
 * matrix-vector row per pair). */
bool pl_vk_moe_grouped(const pl_vk_compute *vc, int64_t n_tok, int64_t n_used, int64_t n_expert);
void pl_vk_moe_route(pl_compute *c, const pl_moe_route_params *p, const float *logits, int64_t n_tok, int32_t *ids,
                     float *w);
void pl_vk_moe_ffn(pl_compute *c, const pl_moe_ffn_weights *e, const float *x, const int32_t *ids, const float *w,
                   int64_t n_used, int64_t n_tok, float *y, void *work, size_t work_bytes);
void pl_vk_sigmoid_gate(pl_compute *c, const float *x, const float *g, float *y, int64_t rows, int64_t n);
/* moe_ffn's scratch for the limits (nothing for a dense model), and its
 * release; reserve() and free() call them. */
pocketllm_status pl_vk_moe_reserve(pl_vk_compute *vc, const pl_compute_limits *lim);
void pl_vk_moe_release(pl_vk_compute *vc);
void pl_vk_rope(pl_compute *c, const pl_rope_params *rp, const float *x, float *y, int64_t n_tok, int64_t n_head,
                int64_t head_dim, const int32_t *pos);
void pl_vk_kv_store(pl_compute *c, uint32_t type, const float *x, void *dst, int64_t n);
void pl_vk_attention(pl_compute *c, const pl_attn_params *ap, const float *q, const void *k_cache,
                     const void *v_cache, int64_t n_tok, int64_t pos0, float *out);

/* Whether mul_mat and get_rows have shaders for this weight type in this
 * build. */
bool pl_vk_weight_type_ok(uint32_t type);

#endif
