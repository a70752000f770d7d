/*
 * vision_graph.c -- one image through the Qwen3-VL vision tower, the graph
 * of libmtmd's models/qwen3vl.cpp written against the compute instance's
 * ops (so every backend runs it unchanged): the patch embedding (both
 * temporal kernels summed, as libmtmd does for a still image), its bias
 * and the resampled position table; per block a pre-norm attention with
 * 2-D rotary positions over all patches (not causal) and a GELU MLP;
 * DeepStack mergers at their blocks; the post norm and the 2 x 2 merger.
 * Tokens are in the merger's order throughout (vision_input.c), so a
 * merged token's input is four consecutive patch rows.
 *
 * Memory, for N patches of width D (N/4 merged tokens, projection P, FFN
 * F, C = PL_VISION_CHUNK rows a matmul):
 *   compute memory: five N x D activations (residual, normed, Q, K, V),
 *     C x max(F, 4 D) for the MLPs' hidden rows, N/4 x P for one merger's
 *     output, and during the embedding N x 3 P^2 patch rows; the
 *     instance's scratch is C rows of the longest weight row plus
 *     attention rows of N scores a thread;
 *   host memory: the patch rows and the position rows (N x 3 P^2 and
 *     N x D, freed after the embedding) and one merger's N/4 x P output.
 * A 1024 x 1024 image at the Qwen3-VL-2B shape (N = 4096, D = 1024,
 * F = 4096, P = 2048): 80 MiB of activations + 4 MiB hidden rows + 8 MiB
 * merger output (+ 12 MiB patch rows during the embedding), about 4 MiB of
 * matmul scratch -- about 110 MiB at the peak; host about 36 MiB at the
 * peak (besides the caller's image and output).  All of it is sized per image and freed before returning.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "quant/types.h"
#include "vision/tower_ops.h"
#include "vision/vision_internal.h"

typedef struct enc {
    pl_vision *v;
    pl_compute *c;
    int64_t n, m; /* patches, merged tokens */
    float *x, *h, *q, *k, *vv, *t, *o, *in;
} enc;

/* y = w x (+ b) for n rows, C rows a matmul. */
static void linear(const enc *e, const pl_weight *w, const float *b, const float *x, int64_t n, float *y) {
    pl_tower_linear(e->c, PL_VISION_CHUNK, w, b, x, n, y);
}

/* fc2(gelu(fc1 x + b1)) + b2 for n rows of x, through the hidden rows t. */
static void mlp(const enc *e, const pl_weight *fc1, const float *b1, const pl_weight *fc2, const float *b2,
                const float *x, int64_t n, float *y) {
    pl_tower_mlp(e->c, PL_VISION_CHUNK, false, fc1, b1, fc2, b2, x, n, e->t, y);
}

/* Patch rows (already in e->in) and position rows (in e->h) to the block
 * input e->x: conv0 + conv1, + bias, + positions, in libmtmd's order. */
static void embed(const enc *e) {
    const pl_vision *v = e->v;
    const int64_t d = v->hp.n_embd, n_in = v->patch[0].n_in;
    const pl_weight *w[2] = {&v->patch[0], &v->patch[1]};
    for (int64_t r = 0; r < e->n; r += PL_VISION_CHUNK) {
        const int64_t k = e->n - r < PL_VISION_CHUNK ? e->n - r : PL_VISION_CHUNK;
        float *y[2] = {e->q + r * d, e->k + r * d};
        pl_mul_mat_multi(e->c, 2, w, e->in + r * n_in, k, y);
    }
    pl_add(e->c, e->q, e->k, e->x, e->n, d, e->n);
    pl_add(e->c, e->x, v->patch_b, e->x, e->n, d, 1);
    pl_add(e->c, e->x, e->h, e->x, e->n, d, e->n);
}

static void block(const enc *e, const pl_vision_layer *ly, const int32_t *pos) {
    const pl_vision_hparams *hp = &e->v->hp;
    const int64_t n = e->n, d = hp->n_embd, hd = hp->head_dim;
    pl_compute *c = e->c;
    pl_layer_norm(c, e->x, ly->ln1_w, ly->ln1_b, e->h, n, d, hp->eps);
    const pl_weight *w[3] = {&ly->q, &ly->k, &ly->v};
    for (int64_t r = 0; r < n; r += PL_VISION_CHUNK) {
        const int64_t k = n - r < PL_VISION_CHUNK ? n - r : PL_VISION_CHUNK;
        float *y[3] = {e->q + r * d, e->k + r * d, e->vv + r * d};
        pl_mul_mat_multi(c, 3, w, e->h + r * d, k, y);
    }
    pl_add(c, e->q, ly->q_b, e->q, n, d, 1);
    pl_add(c, e->k, ly->k_b, e->k, n, d, 1);
    pl_add(c, e->vv, ly->v_b, e->vv, n, d, 1);
    /* ggml_rope_multi(..., d_head/2, {d/4, d/4, d/4, d/4}, VISION, base 10000) */
    pl_rope_params rp = {.mode = PL_ROPE_VISION, .n_rot = hd, .freq_base = 10000.0f, .freq_scale = 1.0f,
                         .sections = {(int32_t)(hd / 4), (int32_t)(hd / 4), (int32_t)(hd / 4), (int32_t)(hd / 4)}};
    pl_rope(c, &rp, e->q, e->q, n, hp->n_head, hd, pos);
    pl_rope(c, &rp, e->k, e->k, n, hp->n_head, hd, pos);
    /* libmtmd's non-flash path (its flash attention is off): f32 scores,
     * softmax, f32 weighted sum; K and V themselves are the cache */
    pl_attn_params ap = {.n_head = hp->n_head, .n_head_kv = hp->n_head, .head_dim = hd,
                         .scale = 1.0f / sqrtf((float)hd), .k_type = PL_TYPE_F32, .v_type = PL_TYPE_F32, .flash = false, .n_kv = n};
    pl_attention(c, &ap, e->q, e->k, e->vv, n, 0, e->h);
    linear(e, &ly->out, ly->out_b, e->h, n, e->q);
    pl_add(c, e->q, e->x, e->x, n, d, n);
    pl_layer_norm(c, e->x, ly->ln2_w, ly->ln2_b, e->h, n, d, hp->eps);
    mlp(e, &ly->up, ly->up_b, &ly->down, ly->down_b, e->h, n, e->q);
    pl_add(c, e->x, e->q, e->x, n, d, n);
}

/* One merger's output (in e->o) to column block `set` of the host output. */
static pocketllm_status take(const enc *e, int set, float *host, float *out) {
    const int64_t p = e->v->hp.n_embd_text, width = pl_vision_out_width(e->v);
    if (e->c->status) return e->c->status;
    e->c->ops->download(e->c, host, e->o, (size_t)(e->m * p) * sizeof *host);
    if (e->c->status) return e->c->status;
    for (int64_t t = 0; t < e->m; t++) memcpy(out + t * width + set * p, host + t * p, (size_t)p * sizeof *out);
    return POCKETLLM_OK;
}

static pocketllm_status run(enc *e, const int32_t *pos, float *host, float *out) {
    const pl_vision *v = e->v;
    const pl_vision_hparams *hp = &v->hp;
    const int64_t d = hp->n_embd;
    pocketllm_status st = POCKETLLM_OK;
    embed(e);
    e->c->ops->release(e->c, e->in);
    e->in = NULL;
    for (int il = 0; il < hp->n_layer && !st; il++) {
        const pl_vision_layer *ly = &v->layers[il];
        block(e, ly, pos);
        if (ly->deepstack < 0) continue;
        /* four consecutive patches are one merged token: [m][4 d] */
        const pl_vision_merger *mg = &v->ds[ly->deepstack];
        pl_layer_norm(e->c, e->x, mg->norm_w, mg->norm_b, e->h, e->m, 4 * d, hp->eps);
        mlp(e, &mg->fc1, mg->fc1_b, &mg->fc2, mg->fc2_b, e->h, e->m, e->o);
        st = take(e, 1 + ly->deepstack, host, out);
    }
    if (st) return st;
    pl_layer_norm(e->c, e->x, v->merger.norm_w, v->merger.norm_b, e->h, e->n, d, hp->eps);
    mlp(e, &v->merger.fc1, v->merger.fc1_b, &v->merger.fc2, v->merger.fc2_b, e->h, e->m, e->o);
    return take(e, 0, host, out);
}

/* Host inputs of the image: patch rows and position rows uploaded into
 * e->in and e->h, rotary positions into pos. */
static pocketllm_status inputs(enc *e, const pl_image_f32 *img, int32_t *pos) {
    const pl_vision *v = e->v;
    const int64_t d = v->hp.n_embd, n_in = v->patch[0].n_in, p = v->hp.patch_size;
    const int64_t px = img->width / p, py = img->height / p;
    float *rows = malloc((size_t)(e->n * n_in) * sizeof *rows);
    float *pe = malloc((size_t)(e->n * d) * sizeof *pe), *tmp = malloc((size_t)(4 * d) * sizeof *tmp);
    pocketllm_status st = POCKETLLM_OK;
    if (!rows || !pe || !tmp) st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for the image's %lld patches", (long long)e->n);
    if (!st) {
        pl_vision_patchify(v, img, rows);
        st = pl_vision_pos_embd(v, px, py, pe, tmp);
    }
    if (!st) {
        pl_vision_positions(px, py, pos);
        e->c->ops->upload(e->c, e->in, rows, (size_t)(e->n * n_in) * sizeof *rows);
        e->c->ops->upload(e->c, e->h, pe, (size_t)(e->n * d) * sizeof *pe);
        st = e->c->status;
    }
    free(rows);
    free(pe);
    free(tmp);
    return st;
}

pocketllm_status pl_vision_encode(pl_vision *v, const pl_image_f32 *img, float *out) {
    if (!v || !img || !img->rgb || !out) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "vision_encode: NULL argument");
    const pl_vision_hparams *hp = &v->hp;
    const int64_t align = hp->patch_size * hp->n_merge;
    if (!img->width || !img->height || img->width % align || img->height % align)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "vision_encode: a %ux%u image is not a multiple of %lld pixels a side",
                       img->width, img->height, (long long)align);
    const int64_t px = img->width / hp->patch_size, py = img->height / hp->patch_size;
    if (px * py / 4 > PL_VISION_MAX_TOKENS)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "vision_encode: a %ux%u image is %lld tokens; at most %d are taken",
                       img->width, img->height, (long long)(px * py / 4), PL_VISION_MAX_TOKENS);
    pocketllm_status st = pl_vision_reserve(v, px * py);
    if (st) return st;
    pl_compute *c = v->c;
    c->status = POCKETLLM_OK;
    enc e = {.v = v, .c = c, .n = px * py, .m = px * py / 4};
    const int64_t d = hp->n_embd, big = hp->n_ff > 4 * d ? hp->n_ff : 4 * d;
    const size_t act = (size_t)(e.n * d) * sizeof(float);
    float **bufs[5] = {&e.x, &e.h, &e.q, &e.k, &e.vv};
    for (int i = 0; i < 5 && !st; i++)
        if (!(*bufs[i] = c->ops->alloc(c, act))) st = POCKETLLM_ERR_NO_MEMORY;
    if (!st && !(e.t = c->ops->alloc(c, (size_t)(PL_VISION_CHUNK * big) * sizeof(float)))) st = POCKETLLM_ERR_NO_MEMORY;
    if (!st && !(e.o = c->ops->alloc(c, (size_t)(e.m * hp->n_embd_text) * sizeof(float)))) st = POCKETLLM_ERR_NO_MEMORY;
    if (!st && !(e.in = c->ops->alloc(c, (size_t)(e.n * v->patch[0].n_in) * sizeof(float)))) st = POCKETLLM_ERR_NO_MEMORY;
    int32_t *pos = st ? NULL : malloc((size_t)(4 * e.n) * sizeof *pos);
    float *host = st ? NULL : malloc((size_t)(e.m * hp->n_embd_text) * sizeof *host);
    if (!st && (!pos || !host)) st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for the image's %lld patches", (long long)e.n);
    if (!st) st = inputs(&e, img, pos);
    if (!st) st = run(&e, pos, host, out);
    if (!st && c->status) st = c->status;
    float *all[8] = {e.x, e.h, e.q, e.k, e.vv, e.t, e.o, e.in};
    for (int i = 0; i < 8; i++)
        if (all[i]) c->ops->release(c, all[i]);
    free(pos);
    free(host);
    return st;
}

/* Kept beside run()'s allocations, which it sums: five N x width
 * activations, the MLP's chunk of hidden rows, the merger's output and the
 * patch rows in compute memory; the merger output, patch and position rows
 * on the host; the caller's preprocessed image and output embeddings; the
 * rotary positions -- all alive together at the peak (the embedding). */
uint64_t pl_vision_image_bytes(const pl_vision_hparams *hp, uint64_t m) {
    const uint64_t d = (uint64_t)hp->n_embd, p = (uint64_t)hp->patch_size, n_in = 3 * p * p;
    const uint64_t big = (uint64_t)(hp->n_ff > 4 * hp->n_embd ? hp->n_ff : 4 * hp->n_embd);
    const uint64_t n = m * (uint64_t)(hp->n_merge * hp->n_merge), pt = (uint64_t)hp->n_embd_text;
    uint64_t floats = 5 * n * d + PL_VISION_CHUNK * big + m * pt + n * n_in;
    floats += m * pt + n * n_in + n * d + 4 * d;
    floats += n * n_in + m * pt * (uint64_t)(1 + hp->n_deepstack);
    return floats * sizeof(float) + 4 * n * sizeof(int32_t);
}
