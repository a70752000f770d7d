/*
 * synth_audio.c -- random-weight audio towers: the mmproj GGUF of
 * Qwen3-ASR, laid out as llama.cpp's converter writes it
 * (conversion/qwen3vl.py Qwen3ASRMmprojModel, which is Qwen3OmniMmprojModel
 * without vision, and conversion/qwenvl.py Qwen25AudioModel) so that
 * libmtmd loads it as projector "qwen3a".
 *
 * The encoder (Qwen3-ASR's audio_config): three 3x3 stride-2 Conv2d over
 * the mel spectrogram (1 -> 480 -> 480 -> 480 channels, each with a bias
 * and GELU), conv_out (480 x 16 mel rows = 7680 -> d_model, no bias), a
 * sinusoidal position table of 1500 rows, d_model wide; pre-norm
 * transformer blocks (LayerNorm with bias, q/k/v/out Linear with bias, a
 * GELU MLP fc1/fc2 with bias); ln_post; the projector proj1 (d_model ->
 * d_model), GELU, proj2 (d_model -> the text model's width).
 *
 *   qwen3asr-0.6b: d_model 896, 18 blocks, 14 heads, FFN 3584, output 1024
 *   qwen3asr-1.7b: d_model 1024, 24 blocks, 16 heads, FFN 4096, output 2048
 *   both: 128 mel bins, downsample_hidden_size 480, layer_norm_eps 1e-5
 *   (the converter's default: the configs carry none)
 *
 * Tensor types follow the converter: its tensor_force_quant makes every
 * audio_tower ".conv*" ".weight" f16 whatever the output type (the three
 * conv kernels and conv_out); the other matrices take the file's type
 * (f32, f16 or bf16); biases (the conv ones shaped [1,1,480] as
 * Qwen3OmniMmprojModel.modify_tensors unsqueezes them), norms and the
 * position table (generate_extra_tensors: computed, not random) are f32.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "quant/types.h"
#include "synth/synth_mmproj.h"

typedef struct audio_shape {
    const char *name;
    uint32_t n_layer, n_embd, n_head, n_ff, proj;
    uint32_t n_mel, conv, n_pos;
    float eps;
} audio_shape;

static const audio_shape audio_shapes[] = {
    {"qwen3asr-0.6b", 18, 896, 14, 3584, 1024, 128, 480, 1500, 1e-5f},
    {"qwen3asr-1.7b", 24, 1024, 16, 4096, 2048, 128, 480, 1500, 1e-5f},
};
#define N_AUDIO_SHAPES (sizeof audio_shapes / sizeof audio_shapes[0])

static const audio_shape *find(const char *name) {
    for (size_t i = 0; name && i < N_AUDIO_SHAPES; i++)
        if (!strcmp(audio_shapes[i].name, name)) return &audio_shapes[i];
    return NULL;
}

bool pl_synth_audio_shape(const char *shape) { return find(shape) != NULL; }

/* Set the last tensor's type to f16 (the converter's forced conv types). */
static void force_f16(pl_mm_plan *p) { p->t[p->n - 1].type = PL_TYPE_F16; }

static pocketllm_status plan(const audio_shape *s, pl_mm_plan *p) {
    const int64_t d = s->n_embd, c = s->conv;
    /* mel rows after three stride-2 convs: 128 -> 64 -> 32 -> 16 */
    const int64_t rows = ((((int64_t)s->n_mel + 1) / 2 + 1) / 2 + 1) / 2;
    char b[64];
    pocketllm_status st = POCKETLLM_OK;
    for (int i = 1; i <= 3 && !st; i++) {
        const int64_t in = i == 1 ? 1 : c;
        snprintf(b, sizeof b, "a.conv2d.%d.weight", i);
        st = pl_synth_mm_add(p, b, 4, 3, 3, in, c, FILL_MATRIX, 9.0f * (float)in);
        if (!st) force_f16(p);
        snprintf(b, sizeof b, "a.conv2d.%d.bias", i);
        if (!st) st = pl_synth_mm_add(p, b, 3, 1, 1, c, 1, FILL_BIAS, 0);
    }
    if (!st) st = pl_synth_mm_add(p, "a.conv_out.weight", 2, c * rows, d, 1, 1, FILL_MATRIX, (float)(c * rows));
    if (!st) force_f16(p);
    if (!st) st = pl_synth_mm_add(p, "a.position_embd.weight", 2, d, s->n_pos, 1, 1, FILL_SINUS, 0);
    for (uint32_t l = 0; l < s->n_layer && !st; l++) {
        snprintf(b, sizeof b, "a.blk.%u.ln1", l);
        st = pl_synth_mm_layer_norm(p, b, d);
        snprintf(b, sizeof b, "a.blk.%u.attn_q", l);
        if (!st) st = pl_synth_mm_linear(p, b, d, d);
        snprintf(b, sizeof b, "a.blk.%u.attn_k", l);
        if (!st) st = pl_synth_mm_linear(p, b, d, d);
        snprintf(b, sizeof b, "a.blk.%u.attn_v", l);
        if (!st) st = pl_synth_mm_linear(p, b, d, d);
        snprintf(b, sizeof b, "a.blk.%u.attn_out", l);
        if (!st) st = pl_synth_mm_linear(p, b, d, d);
        snprintf(b, sizeof b, "a.blk.%u.ln2", l);
        if (!st) st = pl_synth_mm_layer_norm(p, b, d);
        snprintf(b, sizeof b, "a.blk.%u.ffn_up", l);
        if (!st) st = pl_synth_mm_linear(p, b, d, s->n_ff);
        snprintf(b, sizeof b, "a.blk.%u.ffn_down", l);
        if (!st) st = pl_synth_mm_linear(p, b, s->n_ff, d);
    }
    if (!st) st = pl_synth_mm_layer_norm(p, "a.post_ln", d);
    if (!st) st = pl_synth_mm_linear(p, "mm.a.mlp.1", d, d);
    if (!st) st = pl_synth_mm_linear(p, "mm.a.mlp.2", d, s->proj);
    return st;
}

static pocketllm_status set_hparams(pocketllm_gguf_writer *w, const audio_shape *s, uint32_t type, uint64_t seed) {
    char name[128];
    snprintf(name, sizeof name, "synth mmproj %s seed %llu", s->name, (unsigned long long)seed);
    uint32_t ftype = type == PL_TYPE_F32 ? 0 : type == PL_TYPE_F16 ? 1 : 32; /* LLAMA_FTYPE_* */
    pocketllm_status st = pocketllm_gguf_writer_set_str(w, "general.architecture", "clip");
    if (!st) st = pocketllm_gguf_writer_set_str(w, "general.type", "mmproj");
    if (!st) st = pocketllm_gguf_writer_set_str(w, "general.name", name);
    if (!st) st = pocketllm_gguf_writer_set_u32(w, "general.file_type", ftype);
    /* MmprojModel.set_gguf_parameters (audio part), then Qwen25AudioModel's,
     * then Qwen3OmniMmprojModel's projector type -- only the audio key: the
     * converter writes no clip.projector_type for an audio-only model */
    if (!st) st = pocketllm_gguf_writer_set_bool(w, "clip.has_audio_encoder", 1);
    if (!st) st = pocketllm_gguf_writer_set_u32(w, "clip.audio.projection_dim", s->proj);
    if (!st) st = pocketllm_gguf_writer_set_u32(w, "clip.audio.embedding_length", s->n_embd);
    if (!st) st = pocketllm_gguf_writer_set_u32(w, "clip.audio.feed_forward_length", s->n_ff);
    if (!st) st = pocketllm_gguf_writer_set_u32(w, "clip.audio.block_count", s->n_layer);
    if (!st) st = pocketllm_gguf_writer_set_u32(w, "clip.audio.attention.head_count", s->n_head);
    if (!st) st = pocketllm_gguf_writer_set_u32(w, "clip.audio.num_mel_bins", s->n_mel);
    if (!st) st = pocketllm_gguf_writer_set_f32(w, "clip.audio.attention.layer_norm_epsilon", s->eps);
    if (!st) st = pocketllm_gguf_writer_set_str(w, "clip.audio.projector_type", "qwen3a");
    return st;
}

pocketllm_status pl_synth_audio_mmproj(const pocketllm_synth_mmproj_params *prm, const char *path) {
    const audio_shape *named = find(prm->shape);
    if (!named) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "synth: shape '%s' has no audio tower", prm->shape);
    if (prm->type != PL_TYPE_F32 && prm->type != PL_TYPE_F16 && prm->type != PL_TYPE_BF16)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "synth: an audio tower's weight type must be f32, f16 or bf16");
    audio_shape s = *named;
    if (prm->n_layer) {
        if (prm->n_layer > named->n_layer)
            return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "synth: %s's audio tower has %u blocks, not %u", named->name,
                           named->n_layer, prm->n_layer);
        s.n_layer = prm->n_layer;
    }
    pl_mm_plan p = {.type = prm->type};
    pocketllm_gguf_writer *w = NULL;
    pocketllm_status st = plan(&s, &p);
    if (!st) st = pocketllm_gguf_writer_new(&w);
    if (!st) st = set_hparams(w, &s, prm->type, prm->seed);
    if (!st) st = pl_synth_mm_write(w, &p, path, prm);
    free(p.t);
    pocketllm_gguf_writer_free(w);
    return st;
}
