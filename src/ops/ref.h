/*
 * ref.h -- the scalar reference implementation of every op: short, obvious
 * and normative.  Each fast kernel of a backend is tested against these.
 *
 * Where llama.cpp's CPU path rounds an operand (activations converted to a
 * weight's vec_dot type, Q and the softmax weights rounded to f16 against
 * an f16 KV cache, RMS sums in double), the reference rounds the same way,
 * so that "the same tokens as llama.cpp" is a property of the math here,
 * not of luck.  Activations are f32, row-major.
 */
#ifndef PL_OPS_REF_H
#define PL_OPS_REF_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ops/weight.h"
#include "quant/kv_types.h"
#include "pocketllm.h"

/* Rotary embedding (the ggml definition): for pair i (0 <= i < n_rot/2),
 * theta_i = pos * freq_scale * freq_base^(-2i/n_rot) / freq_factors[i].
 * NORMAL rotates adjacent elements (2i, 2i+1) -- llama; NEOX rotates
 * (i, i + n_rot/2) -- qwen.  Elements at n_rot and beyond pass through. */
enum { PL_ROPE_NORMAL = 0, PL_ROPE_NEOX = 2, PL_ROPE_VISION = 24, PL_ROPE_MROPE_INTERLEAVED = 40 };
/* The multi-axis modes (the values are ggml's GGML_ROPE_TYPE_VISION and
 * GGML_ROPE_TYPE_IMROPE) take four positions per token: pos[a * n_tok + t]
 * for axis a = time, height, width, extra, and pick each pair's axis from
 * `sections` (pairs per axis):
 *   PL_ROPE_MROPE_INTERLEAVED (Qwen3-VL's text model): NEOX pairs over
 *     n_rot elements; pair i is in sector s = i % (sum of sections) and
 *     takes height when s % 3 == 1 && s < 3*sections[1], width when
 *     s % 3 == 2 && s < 3*sections[2], time when s % 3 == 0 && s <
 *     3*sections[0], else extra (ggml_mrope_cache_init, is_imrope).
 *   PL_ROPE_VISION (Qwen2/3-VL's tower): n_rot == head_dim; pair i (i <
 *     head_dim/2) rotates (i, i + head_dim/2); pairs run through the
 *     sections in order, each section's angles restarting at its axis's
 *     position (independent sections), with theta_scale =
 *     freq_base^(-2/(n_rot/2)) -- ggml_rope_multi with n_dims = n_rot/2. */

/* Largest head dimension the ops accept (models are checked at load). */
#define PL_MAX_HEAD_DIM 1024

typedef struct pl_rope_params {
    int mode;                  /* PL_ROPE_NORMAL, NEOX, VISION or MROPE_INTERLEAVED */
    int64_t n_rot;             /* rotated elements per head: even, <= head_dim */
    float freq_base;
    float freq_scale;          /* 1 / linear scaling factor */
    const float *freq_factors; /* n_rot/2 divisors (llama 3 rope_freqs), or NULL */
    int32_t sections[4];       /* the multi-axis modes only: pairs per axis */
} pl_rope_params;

/* Causal attention of n_tok query rows at positions pos0 .. pos0+n_tok-1
 * against a KV cache whose rows 0 .. pos0+n_tok-1 are filled.  q and out
 * are [n_tok][n_head][head_dim]; the caches are rows of [n_head_kv]
 * [head_dim] values (or head-major: kv_cap below) in k_type and v_type (f32, f16, bf16 or a block type
 * whose block divides head_dim: quant/kv_types.h).  Query head h reads KV
 * head h / (n_head / n_head_kv) (grouped-query attention).
 *
 * As llama.cpp computes it: q is converted to K's vec_dot type (f16 for
 * f16, q8_0 for q8_0 and q4_0, ...) and dotted with each K row by that
 * type's vec_dot; the default path then rounds the softmax weights to V's
 * type (f32, f16 or bf16 -- a quantized V needs flash, as in llama.cpp). */
typedef struct pl_attn_params {
    int64_t n_head, n_head_kv, head_dim;
    float scale; /* applied to q.k before the softmax */
    uint32_t k_type, v_type;
    /* llama.cpp's flash-attention arithmetic instead of its default path:
     * one pass over the positions with a running maximum and sum (online
     * softmax), the weighted V sum kept in f16 (rounded after every
     * position) for an f16 V, in f32 for any other, divided by the sum at
     * the end.  An f32 cache is read through f16 (llama.cpp casts an f32
     * K or V to f16 for flash attention). */
    bool flash;
    /* > 0: not causal (a vision tower): every query reads KV rows 0 ..
     * n_kv-1 and pos0 is unused; 0: causal as above. */
    int64_t n_kv;
    /* The caches' layout.  0: rows of all KV heads, position after
     * position (a row is n_head_kv heads of head_dim values).  > 0 (causal
     * only): head-major, each KV head's values a run of kv_cap positions
     * (head_dim values each) before the next head's -- so one head's
     * attention reads one contiguous stream, not head_dim values out of
     * every row (on the CPU about twice the read speed at depth). */
    int64_t kv_cap;
} pl_attn_params;

/* Where KV head kvh's position 0 starts, in bytes from the cache's start,
 * and the bytes from one of its positions to the next, for a cache of
 * `type` laid out as ap->kv_cap says. */
static inline size_t pl_attn_head_offset(const pl_attn_params *ap, uint32_t type, int64_t kvh) {
    const size_t head = (size_t)pl_kv_row_bytes(type, ap->head_dim);
    return (size_t)kvh * head * (ap->kv_cap > 0 ? (size_t)ap->kv_cap : 1);
}
static inline size_t pl_attn_pos_stride(const pl_attn_params *ap, uint32_t type) {
    return (size_t)pl_kv_row_bytes(type, ap->kv_cap > 0 ? ap->head_dim : ap->n_head_kv * ap->head_dim);
}

/* One position of llama.cpp's flash-attention online softmax: score s
 * against the running maximum *M.  On a new maximum (returns true) *M
 * becomes s, *ms = e^(old - s) is the factor the running sums are scaled
 * by and the position weighs *vs = 1; otherwise *ms = 1 and *vs = e^(s - M).
 * The caller then adds vs x V to its sum and sets S = S * ms + vs. */
static inline bool pl_flash_step(float s, float *M, float *ms, float *vs) {
    if (s > *M) {
        *ms = expf(*M - s);
        *M = s;
        *vs = 1.0f;
        return true;
    }
    *ms = 1.0f;
    *vs = expf(s - *M);
    return false;
}

/* y[r] = embedding row ids[r] of w, decoded to f32 (ids already checked). */
void pl_ref_get_rows(const pl_weight *w, const int32_t *ids, int64_t n, float *y);

/* y[t][o] = sum_i w[o][i] * x[t][i] for n_tok rows of x; x is first
 * converted to the weight type's vec_dot type (act_from_float), as
 * llama.cpp's CPU backend does. */
pocketllm_status pl_ref_mul_mat(const pl_weight *w, const float *x, int64_t n_tok, float *y);

/* Each of `rows` rows of n: y = x / sqrt(mean(x^2) + eps) * w (w may be
 * NULL: no weight).  The sum of squares is accumulated in double. */
void pl_ref_rms_norm(const float *x, const float *w, float *y, int64_t rows, int64_t n, float eps);

/* y = a + b over rows of n; b is one row broadcast to all rows when
 * b_rows == 1, else `rows` rows. */
void pl_ref_add(const float *a, const float *b, float *y, int64_t rows, int64_t n, int64_t b_rows);
void pl_ref_mul(const float *a, const float *b, float *y, int64_t rows, int64_t n, int64_t b_rows);
void pl_ref_scale(const float *x, float s, float *y, int64_t n);

/* Each of `rows` rows of n: y = (x - mean) / sqrt(var + eps) * w + b
 * (ggml_norm, then ggml_mul and ggml_add: the mean and the variance summed
 * in double, the rest in f32; w and b may be NULL). */
void pl_ref_layer_norm(const float *x, const float *w, const float *b, float *y, int64_t rows, int64_t n, float eps);

/* y = gelu(x), the tanh approximation as llama.cpp's CPU backend computes
 * it (GGML_GELU_FP16): 0 for x <= -10, x for x >= 10, otherwise x rounded
 * to f16, looked up as f16(0.5 x (1 + tanh(sqrt(2/pi) x (1 + 0.044715
 * x^2)))) and widened back. */
void pl_ref_gelu(const float *x, float *y, int64_t n);
/* That table: entry h is f16(gelu(f16 h as f32)), built on first use
 * (thread-safe), shared so that every kernel looks up the same values. */
const uint16_t *pl_gelu_f16_table(void);

/* y = 0.5 x (1 + erf(x / sqrt 2)), the exact GELU of the audio tower, as
 * llama.cpp's CPU backend computes GGML_UNARY_OP_GELU_ERF for f32
 * (ggml_vec_gelu_erf_f32): libm erff in float, 0.5f * x * (1.0f + erff(x *
 * 0.70710678f)) in that order, no f16 table (GGML_GELU_FP16 is for the tanh
 * GELU only).  One exception: -inf gives -0 (the limit; ggml's inf * 0 is
 * NaN).  x == y is allowed. */
void pl_ref_gelu_erf(const float *x, float *y, int64_t n);

/* im2col for a 2-D convolution over channel-last images (the layout a
 * matmul's output rows have: one row per pixel, the channels contiguous):
 *   input x[((b * h + iy) * w + ix) * c_in + ch], n images of h x w pixels;
 *   output oh = (h + 2 ph - kh) / sh + 1, ow = (w + 2 pw - kw) / sw + 1,
 *   one row per output pixel, row r = (b * oh + oy) * ow + ox, of c_in * kh
 *   * kw columns in ggml's kernel order: column (ch * kh + ky) * kw + kx
 *   holds x[b][oy*sh - ph + ky][ox*sw - pw + kx][ch], 0 outside;
 *   round_f16: each value rounded to f16 and back (ggml's im2col writes f16
 *   when the kernel is f16: ggml_conv_2d passes a->type), else copied.
 * A conv2d is then pl_mul_mat(kernel as a c_out x (c_in kh kw) weight, these
 * rows) -> rows of c_out: channel-last again, ready for the next im2col. */
typedef struct pl_im2col_params {
    int64_t n, c_in, h, w;
    int32_t kh, kw, sh, sw, ph, pw;
    bool round_f16;
} pl_im2col_params;
static inline int64_t pl_im2col_out_h(const pl_im2col_params *p) { return (p->h + 2 * (int64_t)p->ph - p->kh) / p->sh + 1; }
static inline int64_t pl_im2col_out_w(const pl_im2col_params *p) { return (p->w + 2 * (int64_t)p->pw - p->kw) / p->sw + 1; }
/* POCKETLLM_OK, or INVALID_ARGUMENT with a message: sizes < 1, negative
 * padding, an image smaller than the kernel, sides past 2^31. */
pocketllm_status pl_im2col_check(const pl_im2col_params *p);
void pl_ref_im2col(const pl_im2col_params *p, const float *x, float *y);

/* batch matrices of rows x cols transposed:
 * y[(b * cols + j) * rows + i] = x[(b * rows + i) * cols + j] (x != y) */
void pl_ref_transpose(const float *x, float *y, int64_t batch, int64_t rows, int64_t cols);

/* y = silu(g) * u, silu(x) = x / (1 + e^-x). */
void pl_ref_silu_mul(const float *g, const float *u, float *y, int64_t n);

/* y = softmax(x) over one row of n (max subtracted, sum in double). */
void pl_ref_softmax(const float *x, float *y, int64_t n);

/* x and y are [n_tok][n_head][head_dim]; token t is at position pos[t]. */
void pl_ref_rope(const pl_rope_params *rp, const float *x, float *y, int64_t n_tok, int64_t n_head,
                 int64_t head_dim, const int32_t *pos);

/* Write n f32 values (whole blocks) into a cache of a KV type, encoded
 * as llama.cpp stores them (quant/kv_types.h). */
void pl_ref_kv_store(uint32_t type, const float *x, void *dst, int64_t n);

pocketllm_status pl_ref_attention(const pl_attn_params *ap, const float *q, const void *k_cache, const void *v_cache,
                                  int64_t n_tok, int64_t pos0, float *out);

/* Index of the largest value (the first on ties). */
int64_t pl_ref_argmax(const float *x, int64_t n);

/* The cos/sin table of one position for rope: cache[2i] = cos theta_i,
 * cache[2i+1] = sin theta_i, i < n_rot/2 (shared by every rope kernel so
 * that all compute the angles the same way: iterated products, as ggml). */
void pl_rope_angles(const pl_rope_params *rp, int32_t pos, float *cache);
/* The same table for PL_ROPE_VISION and PL_ROPE_MROPE_INTERLEAVED from one
 * token's four positions pos[a] (a = time, height, width, extra): pair i <
 * n_rot/2 rotates (i, i + n_rot/2) by cache[2i], cache[2i+1]
 * (ggml_mrope_cache_init: four angles advanced together by theta_scale at
 * every pair, the pair taking its axis's; VISION restarts an axis's angle
 * at its position where its section begins).  sections must sum to > 0. */
void pl_rope_angles_multi(const pl_rope_params *rp, const int32_t pos[4], float *cache);
/* Whether rp is a multi-axis mode (four positions per token). */
static inline bool pl_rope_is_multi(int mode) { return mode == PL_ROPE_VISION || mode == PL_ROPE_MROPE_INTERLEAVED; }

/* Mixture of experts (src/ops/ref_moe.c).  Most experts a router may
 * have (llama.cpp's LLAMA_MAX_EXPERTS is 512; the models we run have at
 * most 256, and the routing kernels keep one row of probabilities on the
 * stack). */
#define PL_MAX_EXPERTS 256

typedef struct pl_moe_route_params {
    int64_t n_expert, n_used; /* 1 <= n_used <= n_expert <= PL_MAX_EXPERTS */
    bool norm;                /* renormalise the chosen weights to sum 1 (qwen3moe yes, qwen2moe no) */
    float scale;              /* expert_weights_scale: applied when not 0 and not 1 */
} pl_moe_route_params;

/* idx[0..n) = 0..n-1 ordered by x descending exactly as libstdc++'s
 * std::sort with the comparator x[a] > x[b] orders them (ggml's CPU argsort,
 * which llama.cpp's top-k of a router is): introsort with threshold 16,
 * median of three moved to the front, unguarded partition, heapsort below
 * depth 2 floor(log2 n), then insertion sort.  std::sort is not stable, so
 * exact ties land where that algorithm leaves them, and so must ours.
 * Written without recursion so that a shader can run the same steps. */
void pl_ref_argsort_desc(const float *x, int32_t *idx, int64_t n);

/* The router of llama.cpp's build_moe_ffn with softmax gating, per token
 * t: p = softmax(logits[t]) (pl_ref_softmax); ids[t][0..n_used) = the first
 * n_used of pl_ref_argsort_desc(p); w[t][j] = p[ids[t][j]]; when norm, s =
 * the sum of the w (in double, rounded to f32: ggml_sum_rows), clamped to at
 * least 6.103515625e-5 (ggml_clamp), w /= s (ggml_div); then w *= scale when
 * scale is neither 0 nor 1 (ggml_scale).  logits [n_tok][n_expert], ids and
 * w [n_tok][n_used]. */
void pl_ref_moe_route(const pl_moe_route_params *p, const float *logits, int64_t n_tok, int32_t *ids, float *w);

/* Expert products (ggml_mul_mat_id): y[t][j] = W[ids[t][j]] . x_row, with
 * x_row = x[t] when x_slots == 1 (gate and up: x is [n_tok][n_in]) or
 * x[t][j] when x_slots == n_used (down: x is [n_tok][n_used][n_in]); y is
 * [n_tok][n_used][n_out].  Each product is pl_ref_mul_mat on the expert's
 * matrix, bit for bit.  An id outside 0 .. n_expert-1, or x_slots neither 1
 * nor n_used: POCKETLLM_ERR_INVALID_ARGUMENT with a message. */
pocketllm_status pl_ref_mul_mat_id(const pl_weight *w, const float *x, int64_t x_slots, const int32_t *ids,
                                   int64_t n_used, int64_t n_tok, float *y);

/* The weighted sum of the experts' outputs, as llama.cpp builds it
 * (ggml_mul by the weights, then a chain of ggml_add in slot order): y[t] =
 * ((e[t][0] w[t][0] + e[t][1] w[t][1]) + e[t][2] w[t][2]) ..., each product
 * rounded to f32.  e is [n_tok][n_used][n], w [n_tok][n_used]. */
void pl_ref_moe_sum(const float *e, const float *w, float *y, int64_t n_tok, int64_t n_used, int64_t n);

/* The routed FFN of a mixture-of-experts layer, the composition of the
 * ops above as llama.cpp's build_moe_ffn (SiLU, separate gate and up)
 * builds it: for every token t and slot j, with e = ids[t][j],
 *   h[t][j] = silu(gate[e] . x[t]) * (up[e] . x[t])   (pl_ref_mul_mat_id, pl_ref_silu_mul)
 *   d[t][j] = down[e] . h[t][j]                       (pl_ref_mul_mat_id with x_slots = n_used)
 *   y[t]    = pl_ref_moe_sum(d, w)
 * x [n_tok][n_in], ids and w [n_tok][n_used], y [n_tok][down->n_out].  The
 * three tensors are 3-D with the same n_expert; gate and up are
 * [n_in, n_ff], down [n_ff, n_out].  Errors as pl_ref_mul_mat_id's, or
 * POCKETLLM_ERR_NO_MEMORY. */
typedef struct pl_moe_ffn_weights {
    const pl_weight *gate, *up, *down;
} pl_moe_ffn_weights;
pocketllm_status pl_ref_moe_ffn(const pl_moe_ffn_weights *e, const float *x, const int32_t *ids, const float *w,
                                int64_t n_used, int64_t n_tok, float *y);
/* Whether e's tensors agree with each other (3-D, the same expert count,
 * gate and up of one shape, down's input their output): POCKETLLM_OK, or
 * POCKETLLM_ERR_INVALID_ARGUMENT with a message. */
pocketllm_status pl_moe_ffn_check(const pl_moe_ffn_weights *e, int64_t n_used);

/* qwen2moe's shared-expert gate: y[r][i] = x[r][i] * s[r], s[r] = silu(g[r])
 * / g[r] in f32, silu(v) = v / (1 + e^-v) (llama.cpp writes the sigmoid as
 * ggml_div(ggml_silu(g), g); g == 0 gives NaN there and here). */
void pl_ref_sigmoid_gate(const float *x, const float *g, float *y, int64_t rows, int64_t n);

/* Whether the element type can be used as a weight by the reference ops
 * (decode and dot product available). */
bool pl_ref_type_ok(uint32_t type);

#endif
