/*
 * audio_tower_graph.c -- one mel window through Qwen3-ASR's audio tower,
 * the graph of libmtmd's models/qwen3a.cpp (with clip.cpp's build_vit,
 * NORM_TYPE_NORMAL, and build_ffn) written against the compute instance's
 * ops, so every backend that has them runs it unchanged:
 *
 *   the window (n_mel x n_len) as n_len / 100 chunks of 100 frames, each
 *   an image of n_mel rows x 100 columns, one channel;
 *   per chunk three times: im2col (3x3, stride 2, padding 1; rounded to
 *   f16 when the kernel is f16, as ggml's im2col writes the kernel's type),
 *   the kernel as a matmul, + bias, GELU (erf) -- channel-last rows all
 *   along (one row per output pixel);
 *   the 16 x 13 x 480 result transposed per chunk so that a token (a
 *   column ow) has its 7680 features in ggml's order (channel * 16 + row);
 *   conv_out; + the position table's rows 0..12 in every chunk;
 *   the blocks: LayerNorm, Q/K/V (+ biases), full attention over all the
 *   window's tokens (not causal; f32 scores and softmax as libmtmd's
 *   non-flash path), out (+ bias), residual; LayerNorm, up (+ bias),
 *   GELU (erf), down (+ bias), residual;
 *   the post norm; mm.a.mlp.1 (+ bias), GELU (erf), mm.a.mlp.2 (+ bias).
 *
 * Memory, for a window of T = n_len / 100 * 13 tokens, width D, FFN F,
 * text width E, C = 480 channels, R = PL_AUDIO_ROWS rows a matmul:
 *   compute: the window's input (n_mel x n_len), per chunk two conv
 *   buffers reused by the three convs (the largest output, 64 x 50 x C,
 *   and the largest im2col, 32 x 25 x 9 C), T x 16 C conv_out rows, five
 *   T x D activations, R x max(F, D) hidden rows, T x E output; the
 *   instance's scratch is R rows of the longest weight row plus attention
 *   rows of T scores a thread.
 *   host: the window's input rows (n_mel x n_len) while uploading.
 * An 800-frame window at the 1.7B shape (T = 104, D = 1024, F = 4096,
 * E = 2048): 0.4 + 5.9 + 13.3 + 3.2 + 2.1 + 4.2 + 0.9 MiB -- about 30 MiB,
 * sized per window and freed before returning.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audio/audio_mel.h"
#include "audio/audio_tower_internal.h"
#include "base/error.h"
#include "quant/types.h"
#include "vision/tower_ops.h"

typedef struct enc {
    pl_audio_tower *a;
    pl_compute *c;
    int64_t n_chunks, n; /* chunks, tokens */
    float *in, *ca, *cb; /* the window's input, the two conv buffers */
    float *feat;         /* conv_out's input rows */
    float *x, *h, *q, *k, *v, *t, *o;
} enc;

/* y = w x (+ b) for n rows, R rows a matmul. */
static void linear(const enc *e, const pl_weight *w, const float *b, const float *x, int64_t n, float *y) {
    pl_tower_linear(e->c, PL_AUDIO_ROWS, w, b, x, n, y);
}

/* fc2(gelu_erf(fc1 x + b1)) + b2 for n rows of x, through the hidden rows t. */
static void mlp(const enc *e, const pl_weight *fc1, const float *b1, const pl_weight *fc2, const float *b2,
                const float *x, int64_t n, float *y) {
    pl_tower_mlp(e->c, PL_AUDIO_ROWS, true, fc1, b1, fc2, b2, x, n, e->t, y);
}

/* One conv of a chunk: rows of x (channel-last, cv->h x cv->w_in pixels)
 * to rows of y (cv->oh x cv->ow pixels of c channels), through cols. */
static void conv(const enc *e, const pl_audio_conv *cv, const float *x, float *cols, float *y) {
    const pl_im2col_params p = {.n = 1, .c_in = cv->c_in, .h = cv->h, .w = cv->w_in, .kh = 3, .kw = 3, .sh = 2,
                                .sw = 2, .ph = 1, .pw = 1, .round_f16 = e->a->conv_f16};
    const int64_t rows = cv->oh * cv->ow;
    pl_im2col(e->c, &p, x, cols);
    linear(e, &cv->w, cv->b, cols, rows, y);
    pl_gelu_erf(e->c, y, y, rows * cv->w.n_out);
}

/* The convs chunk by chunk into the conv_out rows, then conv_out and the
 * positions into e->x. */
static void embed(const enc *e) {
    const pl_audio_tower *a = e->a;
    const int64_t d = a->hp.n_embd, img = a->hp.n_mel * PL_AUDIO_CHUNK_FRAMES;
    const int64_t oh = a->conv[2].oh, ow = a->conv[2].ow, ch = a->hp.conv_channels, f = oh * ch;
    for (int64_t b = 0; b < e->n_chunks; b++) {
        conv(e, &a->conv[0], e->in + b * img, e->cb, e->ca);
        conv(e, &a->conv[1], e->ca, e->cb, e->ca);
        conv(e, &a->conv[2], e->ca, e->cb, e->ca);
        /* [oh][ow x ch] -> [ow x ch][oh]: token ow's features ch * oh + row */
        pl_transpose(e->c, e->ca, e->feat + b * ow * f, 1, oh, ow * ch);
    }
    linear(e, &a->conv_out, NULL, e->feat, e->n, e->x);
    for (int64_t b = 0; b < e->n_chunks; b++)
        pl_add(e->c, e->x + b * ow * d, a->pos, e->x + b * ow * d, ow, d, ow);
}

static void block(const enc *e, const pl_audio_layer *ly) {
    const pl_audio_hparams *hp = &e->a->hp;
    const int64_t n = e->n, d = hp->n_embd, hd = hp->head_dim;
    pl_compute *c = e->c;
    pl_layer_norm(c, e->x, ly->ln1_w, ly->ln1_b, e->h, n, d, hp->eps);
    const pl_weight *w[3] = {&ly->q, &ly->k, &ly->v};
    for (int64_t r = 0; r < n; r += PL_AUDIO_ROWS) {
        const int64_t k = n - r < PL_AUDIO_ROWS ? n - r : PL_AUDIO_ROWS;
        float *y[3] = {e->q + r * d, e->k + r * d, e->v + r * d};
        pl_mul_mat_multi(c, 3, w, e->h + r * d, k, y);
    }
    if (ly->q_b) pl_add(c, e->q, ly->q_b, e->q, n, d, 1);
    if (ly->k_b) pl_add(c, e->k, ly->k_b, e->k, n, d, 1);
    if (ly->v_b) pl_add(c, e->v, ly->v_b, e->v, n, d, 1);
    pl_attn_params ap = {.n_head = hp->n_head, .n_head_kv = hp->n_head, .head_dim = hd,
                         .scale = 1.0f / sqrtf((float)hd), .k_type = PL_TYPE_F32, .v_type = PL_TYPE_F32, .flash = false, .n_kv = n};
    pl_attention(c, &ap, e->q, e->k, e->v, n, 0, e->h);
    linear(e, &ly->out, ly->out_b, e->h, n, e->q);
    pl_add(c, e->q, e->x, e->x, n, d, n);
    pl_layer_norm(c, e->x, ly->ln2_w, ly->ln2_b, e->h, n, d, hp->eps);
    mlp(e, &ly->up, ly->up_b, &ly->down, ly->down_b, e->h, n, e->q);
    pl_add(c, e->x, e->q, e->x, n, d, n);
}

static void run(const enc *e) {
    const pl_audio_tower *a = e->a;
    embed(e);
    for (int il = 0; il < a->hp.n_layer; il++) block(e, &a->layers[il]);
    const float *y = e->x;
    if (a->post_w || a->post_b) {
        pl_layer_norm(e->c, e->x, a->post_w, a->post_b, e->h, e->n, a->hp.n_embd, a->hp.eps);
        y = e->h;
    }
    mlp(e, &a->mm1, a->mm1_b, &a->mm2, a->mm2_b, y, e->n, e->o);
}

/* The window as chunk-major images: chunk b's row m is frames
 * b*100 .. b*100+99 of mel row m. */
static pocketllm_status upload_input(const enc *e, const pl_mel *mel) {
    const int64_t n_mel = mel->n_mel, len = mel->n_len, cf = PL_AUDIO_CHUNK_FRAMES;
    float *rows = malloc((size_t)(n_mel * len) * sizeof *rows);
    if (!rows) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for a window of %lld frames", (long long)len);
    for (int64_t b = 0; b < e->n_chunks; b++)
        for (int64_t m = 0; m < n_mel; m++)
            memcpy(rows + (b * n_mel + m) * cf, mel->data + m * len + b * cf, (size_t)cf * sizeof *rows);
    e->c->ops->upload(e->c, e->in, rows, (size_t)(n_mel * len) * sizeof *rows);
    free(rows);
    return e->c->status;
}

/* The conv buffers' sizes (floats): the largest conv output and im2col. */
static void conv_sizes(const pl_audio_hparams *hp, int64_t *out_f, int64_t *cols_f) {
    int64_t h = hp->n_mel, w = PL_AUDIO_CHUNK_FRAMES, c_in = 1;
    *out_f = *cols_f = 0;
    for (int i = 0; i < 3; i++) {
        h = (h - 1) / 2 + 1, w = (w - 1) / 2 + 1;
        const int64_t o = h * w * hp->conv_channels, k = h * w * 9 * c_in;
        if (o > *out_f) *out_f = o;
        if (k > *cols_f) *cols_f = k;
        c_in = hp->conv_channels;
    }
}

pocketllm_status pl_audio_encode(pl_audio_tower *a, const pl_mel *mel, float *out) {
    if (!a || !mel || !mel->data || !out) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "audio_encode: NULL argument");
    const pl_audio_hparams *hp = &a->hp;
    if (mel->n_mel != hp->n_mel)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "audio_encode: a window of %lld mel bins for a tower of %lld",
                       (long long)mel->n_mel, (long long)hp->n_mel);
    if (mel->n_len < PL_AUDIO_CHUNK_FRAMES || mel->n_len % PL_AUDIO_CHUNK_FRAMES || mel->n_len > PL_AUDIO_MAX_FRAMES)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT,
                       "audio_encode: a window of %lld frames is not a multiple of %d up to %d", (long long)mel->n_len,
                       PL_AUDIO_CHUNK_FRAMES, PL_AUDIO_MAX_FRAMES);
    enc e = {.a = a, .c = a->c, .n_chunks = mel->n_len / PL_AUDIO_CHUNK_FRAMES, .n = pl_audio_window_tokens(mel->n_len)};
    pocketllm_status st = pl_audio_reserve(a, e.n);
    if (st) return st;
    pl_compute *c = a->c;
    c->status = POCKETLLM_OK;
    const int64_t d = hp->n_embd, big = hp->n_ff > a->mm1.n_out ? hp->n_ff : a->mm1.n_out;
    int64_t conv_out_f, cols_f;
    conv_sizes(hp, &conv_out_f, &cols_f);
    const size_t act = (size_t)(e.n * d) * sizeof(float);
    struct {
        float **p;
        size_t bytes;
    } bufs[] = {
        {&e.in, (size_t)(hp->n_mel * mel->n_len) * sizeof(float)},
        {&e.ca, (size_t)conv_out_f * sizeof(float)},
        {&e.cb, (size_t)cols_f * sizeof(float)},
        {&e.feat, (size_t)(e.n * a->conv_out.n_in) * sizeof(float)},
        {&e.x, act}, {&e.h, act}, {&e.q, act}, {&e.k, act}, {&e.v, act},
        {&e.t, (size_t)(PL_AUDIO_ROWS * big) * sizeof(float)},
        {&e.o, (size_t)(e.n * hp->n_embd_text) * sizeof(float)},
    };
    const size_t n_bufs = sizeof bufs / sizeof bufs[0];
    for (size_t i = 0; i < n_bufs && !st; i++)
        if (!(*bufs[i].p = c->ops->alloc(c, bufs[i].bytes))) st = POCKETLLM_ERR_NO_MEMORY;
    if (!st) st = upload_input(&e, mel);
    if (!st) {
        run(&e);
        if (!c->status) c->ops->download(c, out, e.o, (size_t)(e.n * hp->n_embd_text) * sizeof *out);
        st = c->status;
    }
    for (size_t i = 0; i < n_bufs; i++)
        if (*bufs[i].p) c->ops->release(c, *bufs[i].p);
    return st;
}

/* Kept beside pl_audio_encode's allocations, which it sums, plus the
 * host's input rows and the caller's window and output. */
uint64_t pl_audio_window_bytes(const pl_audio_hparams *hp, int64_t n_len) {
    int64_t conv_out_f, cols_f;
    conv_sizes(hp, &conv_out_f, &cols_f);
    const uint64_t n = (uint64_t)pl_audio_window_tokens(n_len), d = (uint64_t)hp->n_embd;
    const uint64_t big = (uint64_t)(hp->n_ff > hp->n_embd ? hp->n_ff : hp->n_embd);
    const uint64_t rows3 = (uint64_t)(((hp->n_mel - 1) / 2 / 2 / 2) + 1), feat = rows3 * (uint64_t)hp->conv_channels;
    const uint64_t in = (uint64_t)(hp->n_mel * n_len);
    uint64_t floats = in + (uint64_t)conv_out_f + (uint64_t)cols_f + n * feat + 5 * n * d + PL_AUDIO_ROWS * big +
                      n * (uint64_t)hp->n_embd_text;
    floats += 2 * in + n * (uint64_t)hp->n_embd_text; /* host: input rows, the caller's window and output */
    return floats * sizeof(float);
}
