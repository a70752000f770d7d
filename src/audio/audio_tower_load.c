/*
 * audio_tower_load.c -- open Qwen3-ASR's audio tower (an mmproj GGUF with
 * clip.has_audio_encoder and projector qwen3a, as llama.cpp's converter
 * writes it: Qwen3ASRMmprojModel): read its hyperparameters, check every
 * tensor's presence, shape and type against them (a bad file is a one-line
 * error, never a crash), bind the weights as views into the mapping, place
 * them on the text model's device as the text model's are placed, and make
 * the tower's own compute instance there.
 *
 * Which tensors are required follows libmtmd's loader (clip.cpp
 * load_tensors, case PROJECTOR_TYPE_QWEN3A): the three conv kernels and
 * biases, conv_out (its bias, if any, is not read: libmtmd's graph has
 * none), the projector's two linears with biases, per block the four
 * attention matrices and the FFN's two; norms and the blocks' biases may
 * be absent.  Matrices are never copied; vectors stored in f16/bf16 are
 * widened to f32, as the text loader does.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audio/audio_tower_internal.h"
#include "base/error.h"
#include "quant/types.h"
#include "vision/mmproj_load.h"

#define MAX_DIM (1 << 16)
#define MAX_LAYERS 256

typedef struct loader {
    pl_audio_tower *a;
    const char *path;
    pl_mmproj_loader m; /* the shared binding helpers' view of a */
} loader;

static pocketllm_status read_hparams(loader *ld) {
    pl_audio_hparams *hp = &ld->a->hp;
    const pl_gguf *g = ld->a->gguf;
    if (!pl_mmproj_get_bool(&ld->m, "clip.has_audio_encoder"))
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "no audio encoder (clip.has_audio_encoder is not set)");
    /* as clip.cpp: the single-modality key first, else the audio one */
    const char *proj = pl_gguf_get_str(g, "clip.projector_type");
    if (!proj) proj = pl_gguf_get_str(g, "clip.audio.projector_type");
    if (!proj) return pl_fail(POCKETLLM_ERR_FORMAT, "no clip.audio.projector_type: not an audio mmproj");
    snprintf(hp->projector, sizeof hp->projector, "%s", proj);
    if (strcmp(proj, "qwen3a") != 0)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "audio projector '%s' is not supported (qwen3a is)", hp->projector);
    pocketllm_status st;
    int64_t head_kv = 0;
    if ((st = pl_mmproj_get_int(&ld->m, "clip.audio.embedding_length", true, 0, 4, MAX_DIM, &hp->n_embd)) ||
        (st = pl_mmproj_get_int(&ld->m, "clip.audio.block_count", true, 0, 1, MAX_LAYERS, &hp->n_layer)) ||
        (st = pl_mmproj_get_int(&ld->m, "clip.audio.feed_forward_length", true, 0, 1, MAX_DIM * 4, &hp->n_ff)) ||
        (st = pl_mmproj_get_int(&ld->m, "clip.audio.attention.head_count", true, 0, 1, MAX_DIM, &hp->n_head)) ||
        (st = pl_mmproj_get_int(&ld->m, "clip.audio.attention.head_count_kv", false, (uint64_t)hp->n_head, 1, MAX_DIM, &head_kv)) ||
        (st = pl_mmproj_get_int(&ld->m, "clip.audio.attention.head_dim", false, (uint64_t)(hp->n_embd / hp->n_head), 1,
                      PL_MAX_HEAD_DIM, &hp->head_dim)) ||
        (st = pl_mmproj_get_int(&ld->m, "clip.audio.projection_dim", true, 0, 1, MAX_DIM, &hp->n_embd_text)) ||
        (st = pl_mmproj_get_int(&ld->m, "clip.audio.num_mel_bins", true, 0, 3, 1024, &hp->n_mel)))
        return st;
    if (head_kv != hp->n_head)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "the tower has %lld KV heads for %lld heads; Qwen3-ASR's has one each",
                       (long long)head_kv, (long long)hp->n_head);
    if (hp->n_head * hp->head_dim != hp->n_embd)
        return pl_fail(POCKETLLM_ERR_FORMAT, "%lld heads of %lld do not make the width %lld", (long long)hp->n_head,
                       (long long)hp->head_dim, (long long)hp->n_embd);
    double eps;
    if (!pl_gguf_get(g, "clip.audio.attention.layer_norm_epsilon"))
        return pl_fail(POCKETLLM_ERR_FORMAT, "missing hyperparameter clip.audio.attention.layer_norm_epsilon");
    if ((st = pl_gguf_get_f64(g, "clip.audio.attention.layer_norm_epsilon", 0, &eps))) return st;
    if (!(eps >= 0 && eps < 1)) return pl_fail(POCKETLLM_ERR_FORMAT, "layer_norm_epsilon %g is not usable", eps);
    hp->eps = (float)eps;
    return POCKETLLM_OK;
}

/* Output side of a 3x3, stride 2, padding 1 convolution. */
static int64_t conv_side(int64_t n) { return (n + 2 - 3) / 2 + 1; }

/* The three convolutions: kernels [3, 3, c_in, c] (c from the first),
 * biases of c; the image shrinks from n_mel x 100 to oh3 x 13. */
static pocketllm_status bind_convs(loader *ld) {
    pl_audio_tower *a = ld->a;
    const pl_gguf_tensor *t1 = pl_mmproj_find(&ld->m, "a.conv2d.1.weight");
    if (!t1) return pl_fail(POCKETLLM_ERR_FORMAT, "tensor a.conv2d.1.weight is missing");
    const int64_t c = t1->n_dims == 4 ? t1->ne[3] : 0;
    if (c < 1 || c > 4096) return pl_fail(POCKETLLM_ERR_FORMAT, "tensor a.conv2d.1.weight is not [3, 3, 1, channels]");
    a->hp.conv_channels = c;
    int64_t h = a->hp.n_mel, w = PL_AUDIO_CHUNK_FRAMES;
    for (int i = 0; i < 3; i++) {
        pl_audio_conv *cv = &a->conv[i];
        const int64_t c_in = i ? c : 1;
        char name[64];
        snprintf(name, sizeof name, "a.conv2d.%d.weight", i + 1);
        const pl_gguf_tensor *t = pl_mmproj_find(&ld->m, name);
        if (!t) return pl_fail(POCKETLLM_ERR_FORMAT, "tensor %s is missing", name);
        if (t->n_dims != 4 || t->ne[0] != 3 || t->ne[1] != 3 || t->ne[2] != c_in || t->ne[3] != c)
            return pl_fail(POCKETLLM_ERR_FORMAT, "tensor %s has shape [%lld, %lld, %lld, %lld], expected [3, 3, %lld, %lld]",
                           name, (long long)t->ne[0], (long long)t->ne[1], (long long)t->ne[2], (long long)t->ne[3],
                           (long long)c_in, (long long)c);
        /* ggml's im2col writes the kernel's type, f16 or f32 (the converter
         * forces f16); other kernel types it cannot convolve with */
        if (t->type != PL_TYPE_F16 && t->type != PL_TYPE_F32)
            return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "tensor %s is %s; conv kernels must be f16 or f32", name,
                           pocketllm_type_name(t->type));
        if (i && (t->type == PL_TYPE_F16) != a->conv_f16)
            return pl_fail(POCKETLLM_ERR_FORMAT, "the conv kernels have different types");
        a->conv_f16 = t->type == PL_TYPE_F16;
        pocketllm_status st = pl_mmproj_bind_rows(&ld->m, t, 9 * c_in, c, &cv->w);
        snprintf(name, sizeof name, "a.conv2d.%d.bias", i + 1);
        if (!st) st = pl_mmproj_vector(&ld->m, name, c, false, &cv->b);
        if (st) return st;
        cv->c_in = c_in, cv->h = h, cv->w_in = w;
        cv->oh = h = conv_side(h);
        cv->ow = w = conv_side(w);
    }
    if (w != PL_AUDIO_CHUNK_TOKENS) return pl_fail(POCKETLLM_ERR_INTERNAL, "conv geometry");
    return pl_mmproj_matrix(&ld->m, "a.conv_out.weight", c * h, a->hp.n_embd, &a->conv_out);
}

/* The first 13 rows of the position table (each chunk restarts at 0). */
static pocketllm_status bind_pos(loader *ld) {
    pl_audio_tower *a = ld->a;
    const int64_t d = a->hp.n_embd, n = PL_AUDIO_CHUNK_TOKENS * d;
    const pl_gguf_tensor *t = pl_mmproj_find(&ld->m, "a.position_embd.weight");
    if (!t) return pl_fail(POCKETLLM_ERR_FORMAT, "tensor a.position_embd.weight is missing");
    if (t->n_dims != 2 || t->ne[0] != d || t->ne[1] < PL_AUDIO_CHUNK_TOKENS)
        return pl_fail(POCKETLLM_ERR_FORMAT, "tensor a.position_embd.weight has shape [%lld, %lld], expected [%lld, >= %d]",
                       (long long)t->ne[0], (long long)t->ne[1], (long long)d, PL_AUDIO_CHUNK_TOKENS);
    if (t->type != PL_TYPE_F32 && t->type != PL_TYPE_F16 && t->type != PL_TYPE_BF16)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "tensor a.position_embd.weight is %s; it must be f32, f16 or bf16",
                       pocketllm_type_name(t->type));
    return pl_mmproj_f32_of(&ld->m, t, n, &a->pos);
}

static pocketllm_status bind_layer(loader *ld, int il) {
    pl_audio_tower *a = ld->a;
    pl_audio_layer *ly = &a->layers[il];
    const int64_t d = a->hp.n_embd;
    char b[64], name[96];
    pocketllm_status st;
    snprintf(name, sizeof name, "a.blk.%d.ffn_gate.weight", il);
    if (pl_mmproj_find(&ld->m, name)) return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "%s: a gated FFN is not Qwen3-ASR's encoder", name);
    snprintf(name, sizeof name, "a.blk.%d.attn_qkv.weight", il);
    if (pl_mmproj_find(&ld->m, name)) return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "%s: a fused Q/K/V is not Qwen3-ASR's encoder", name);
    snprintf(b, sizeof b, "a.blk.%d.ln1", il);
    if ((st = pl_mmproj_norm(&ld->m, b, d, &ly->ln1_w, &ly->ln1_b))) return st;
    snprintf(b, sizeof b, "a.blk.%d.ln2", il);
    if ((st = pl_mmproj_norm(&ld->m, b, d, &ly->ln2_w, &ly->ln2_b))) return st;
    snprintf(b, sizeof b, "a.blk.%d.attn_q", il);
    if ((st = pl_mmproj_linear(&ld->m, b, d, d, false, &ly->q, &ly->q_b))) return st;
    snprintf(b, sizeof b, "a.blk.%d.attn_k", il);
    if ((st = pl_mmproj_linear(&ld->m, b, d, d, false, &ly->k, &ly->k_b))) return st;
    snprintf(b, sizeof b, "a.blk.%d.attn_v", il);
    if ((st = pl_mmproj_linear(&ld->m, b, d, d, false, &ly->v, &ly->v_b))) return st;
    snprintf(b, sizeof b, "a.blk.%d.attn_out", il);
    if ((st = pl_mmproj_linear(&ld->m, b, d, d, false, &ly->out, &ly->out_b))) return st;
    snprintf(b, sizeof b, "a.blk.%d.ffn_up", il);
    if ((st = pl_mmproj_linear(&ld->m, b, d, a->hp.n_ff, false, &ly->up, &ly->up_b))) return st;
    snprintf(b, sizeof b, "a.blk.%d.ffn_down", il);
    return pl_mmproj_linear(&ld->m, b, a->hp.n_ff, d, false, &ly->down, &ly->down_b);
}

pocketllm_status pl_audio_reserve(pl_audio_tower *a, int64_t n_tokens) {
    if (n_tokens <= a->reserved_tokens) return POCKETLLM_OK;
    pl_compute_limits lim = {.n_batch = PL_AUDIO_ROWS, .max_in = a->max_in, .n_ctx = n_tokens, .head_dim = a->hp.head_dim};
    pocketllm_status st = a->c->ops->reserve(a->c, &lim);
    if (!st) a->reserved_tokens = n_tokens;
    return st;
}

static pocketllm_status open_compute(pl_audio_tower *a) {
    pl_model *m = a->text;
    pocketllm_status st = pl_mmproj_compute_new(m, &a->c);
    if (st) return st;
    if (!a->c->ops->layer_norm || !a->c->ops->gelu_erf || !a->c->ops->im2col || !a->c->ops->transpose)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED,
                       "the %s backend has no layer-norm / GELU (erf) / im2col / transpose kernels yet (the audio tower "
                       "needs them)",
                       a->c->backend);
    /* sized once for libmtmd's windows (800 frames, 104 tokens) */
    return pl_audio_reserve(a, pl_audio_window_tokens(800));
}

pocketllm_status pl_audio_open(pl_model *text, const char *path, pl_audio_tower **out) {
    if (!text || !path || !out) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "audio_open: no model or path");
    *out = NULL;
    if (!text->arch) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "audio_open: the text model has no weights loaded");
    pl_audio_tower *a = calloc(1, sizeof *a);
    if (!a) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    a->text = text;
    /* the conv biases are [1, 1, c]: vectors of any shape */
    loader ld = {a, path, {text, NULL, &a->consts, &a->n_consts, &a->max_in, true}};
    const size_t first_const = text->n_consts;
    pocketllm_status st = pocketllm_gguf_open(path, &a->gguf);
    if (st) goto fail;
    ld.m.gguf = a->gguf;
    if ((st = read_hparams(&ld))) goto fail_named;
    if (!(a->layers = calloc((size_t)a->hp.n_layer, sizeof *a->layers))) {
        st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
        goto fail;
    }
    if ((st = bind_convs(&ld)) || (st = bind_pos(&ld))) goto fail_named;
    if (pl_mmproj_find(&ld.m, "a.pre_ln.weight") || pl_mmproj_find(&ld.m, "a.pre_ln.bias")) {
        st = pl_fail(POCKETLLM_ERR_UNSUPPORTED, "a.pre_ln: a norm before the blocks is not Qwen3-ASR's encoder");
        goto fail_named;
    }
    for (int il = 0; il < a->hp.n_layer; il++)
        if ((st = bind_layer(&ld, il))) goto fail_named;
    if ((st = pl_mmproj_norm(&ld.m, "a.post_ln", a->hp.n_embd, &a->post_w, &a->post_b)) ||
        (st = pl_mmproj_linear(&ld.m, "mm.a.mlp.1", a->hp.n_embd, -1, true, &a->mm1, &a->mm1_b)) ||
        (st = pl_mmproj_linear(&ld.m, "mm.a.mlp.2", a->mm1.n_out, a->hp.n_embd_text, true, &a->mm2, &a->mm2_b)))
        goto fail_named;
    if (a->hp.n_embd_text != text->dims.n_embd) {
        st = pl_fail(POCKETLLM_ERR_FORMAT, "the tower projects to %lld but the text model's width is %lld: not a pair",
                     (long long)a->hp.n_embd_text, (long long)text->dims.n_embd);
        goto fail_named;
    }
    if (text->device && (st = pl_mmproj_upload(text, a->gguf, first_const))) goto fail_named;
    if ((st = open_compute(a))) goto fail;
    *out = a;
    return POCKETLLM_OK;
fail_named:
    pl_error_prefix(path);
fail:
    pl_audio_close(a);
    return st;
}

void pl_audio_close(pl_audio_tower *a) {
    if (!a) return;
    if (a->c) a->c->ops->free(a->c);
    free(a->layers);
    pl_mmproj_release(a->text, a->gguf, a->consts, a->n_consts);
    free(a);
}

const pl_audio_hparams *pl_audio_hparams_of(const pl_audio_tower *a) { return a ? &a->hp : NULL; }

int64_t pl_audio_window_tokens(int64_t n_len) { return n_len / PL_AUDIO_CHUNK_FRAMES * PL_AUDIO_CHUNK_TOKENS; }
