/*
 * synth_mmproj.c -- random-weight vision towers: the "mmproj" GGUF of a
 * multimodal model, laid out as llama.cpp's converter writes it (its
 * conversion/qwen3vl.py and MmprojModel) so that libmtmd loads it.
 *
 * qwen3vl-2b is the vision encoder of Qwen3-VL-2B-Instruct (its
 * config.json vision_config): 24 pre-norm ViT blocks of 1024 (16 heads,
 * LayerNorm with bias, one fused QKV with bias, a GELU MLP of 4096), a
 * Conv3d patch embedding of 16x16 pixels x 2 frames (written as two 2D
 * kernels, ".weight" and ".weight.1", and a bias), a learned 48x48
 * position table (2304 entries, so image_size 768), a 2x2 patch merger
 * (LayerNorm over 1024, then 4096 -> 4096 -> 2048: the text model's width)
 * and the DeepStack mergers that tap blocks 5, 11 and 17 (LayerNorm over
 * the merged 4096, then 4096 -> 4096 -> 2048 each).
 *
 * Tensor types follow the converter: in an f16 file the matrices and the
 * patch kernels are f16; norms, biases and the position table are always
 * f32.  Values come from a generator seeded by (seed, tensor name), as in
 * synth.c, and are streamed.  Scales keep activations O(1): matrices
 * uniform with variance 1/fan_in (the patch kernels count both frames in
 * their fan-in), norm weights 1 +- 0.1, biases +- 0.1, position entries
 * +- 1.
 *
 * n_layer cuts the depth for tests; DeepStack taps past the last block are
 * dropped (each one left widens the output by the projection width, and
 * the text model's input width must match: 2048 x (1 + taps)).
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/half.h"
#include "base/rng.h"
#include "base/strmap.h"
#include "quant/types.h"
#include "synth/synth.h"
#include "synth/synth_mmproj.h"


typedef struct vision_shape {
    const char *name;
    uint32_t n_layer, n_embd, n_head, n_ff;
    uint32_t patch, merge, n_pos_embd, proj;
    uint32_t n_deepstack, deepstack[4];
    float eps;
} vision_shape;

static const vision_shape vision_shapes[] = {
    /* Qwen3-VL-2B-Instruct vision_config: depth 24, hidden_size 1024,
     * num_heads 16, intermediate_size 4096, patch_size 16,
     * spatial_merge_size 2, temporal_patch_size 2, out_hidden_size 2048,
     * num_position_embeddings 2304, deepstack_visual_indexes [5, 11, 17];
     * eps: the text model's rms_norm_eps, which the converter writes */
    {"qwen3vl-2b", 24, 1024, 16, 4096, 16, 2, 2304, 2048, 3, {5, 11, 17, 0}, 1e-6f},
};
#define N_VISION_SHAPES (sizeof vision_shapes / sizeof vision_shapes[0])

/* A vision tower's plan: the tensors, its shape, its DeepStack taps. */
typedef struct vplan {
    pl_mm_plan m;
    vision_shape s;
    bool deep[64]; /* block l taps DeepStack */
} vplan;

pocketllm_status pl_synth_mm_add(pl_mm_plan *p, const char *name, uint32_t n_dims, int64_t e0, int64_t e1, int64_t e2,
                                 int64_t e3, int fill, float fan_in) {
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 64;
        vtensor *t = realloc(p->t, cap * sizeof *t);
        if (!t) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
        p->t = t;
        p->cap = cap;
    }
    vtensor *t = &p->t[p->n++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->n_dims = n_dims;
    t->ne[0] = e0, t->ne[1] = e1, t->ne[2] = e2, t->ne[3] = e3;
    t->fill = fill;
    /* the converter: matrices (and the patch kernels) in the file's type,
     * everything 1-D and the position table in f32 */
    t->type = fill == FILL_MATRIX ? p->type : PL_TYPE_F32;
    t->scale = fill == FILL_MATRIX ? sqrtf(3.0f / fan_in) : fill == FILL_POS ? 1.0f : 0.1f;
    return POCKETLLM_OK;
}

/* A Linear layer: weight [in, out] (GGUF order) and its bias. */
pocketllm_status pl_synth_mm_linear(pl_mm_plan *p, const char *base, int64_t in, int64_t out) {
    char nm[64];
    if (snprintf(nm, sizeof nm, "%s.weight", base) >= (int)sizeof nm) return pl_fail(POCKETLLM_ERR_INTERNAL, "name");
    pocketllm_status st = pl_synth_mm_add(p, nm, 2, in, out, 1, 1, FILL_MATRIX, (float)in);
    if (snprintf(nm, sizeof nm, "%s.bias", base) >= (int)sizeof nm) return pl_fail(POCKETLLM_ERR_INTERNAL, "name");
    if (!st) st = pl_synth_mm_add(p, nm, 1, out, 1, 1, 1, FILL_BIAS, 0);
    return st;
}

pocketllm_status pl_synth_mm_layer_norm(pl_mm_plan *p, const char *base, int64_t n) {
    char nm[64];
    if (snprintf(nm, sizeof nm, "%s.weight", base) >= (int)sizeof nm) return pl_fail(POCKETLLM_ERR_INTERNAL, "name");
    pocketllm_status st = pl_synth_mm_add(p, nm, 1, n, 1, 1, 1, FILL_NORM, 0);
    if (snprintf(nm, sizeof nm, "%s.bias", base) >= (int)sizeof nm) return pl_fail(POCKETLLM_ERR_INTERNAL, "name");
    if (!st) st = pl_synth_mm_add(p, nm, 1, n, 1, 1, 1, FILL_BIAS, 0);
    return st;
}

static pocketllm_status plan(const pocketllm_synth_mmproj_params *prm, vplan *p) {
    memset(p, 0, sizeof *p);
    const vision_shape *named = NULL;
    for (size_t i = 0; prm->shape && i < N_VISION_SHAPES && !named; i++)
        if (!strcmp(vision_shapes[i].name, prm->shape)) named = &vision_shapes[i];
    if (!named)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "synth: shape '%s' has no vision tower (mmproj shapes: qwen3vl-2b, qwen3asr-0.6b, qwen3asr-1.7b)",
                       prm->shape ? prm->shape : "(none)");
    if (prm->type != PL_TYPE_F32 && prm->type != PL_TYPE_F16)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "synth: an mmproj's weight type must be f32 or f16");
    p->s = *named;
    p->m.type = prm->type;
    if (prm->n_layer) {
        if (prm->n_layer > named->n_layer)
            return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "synth: %s's vision tower has %u blocks, not %u", named->name,
                           named->n_layer, prm->n_layer);
        p->s.n_layer = prm->n_layer;
    }
    const vision_shape *s = &p->s;
    /* the DeepStack taps that exist at this depth */
    uint32_t kept = 0;
    for (uint32_t i = 0; i < named->n_deepstack; i++)
        if (named->deepstack[i] < s->n_layer) {
            p->deep[named->deepstack[i]] = true;
            p->s.deepstack[kept++] = named->deepstack[i];
        }
    p->s.n_deepstack = kept;

    const int64_t d = s->n_embd, merged = (int64_t)s->n_embd * s->merge * s->merge;
    /* patch embedding: the Conv3d [d, 3, 2, P, P] split into its two frames,
     * each [d, 3, P, P] (GGUF order reversed); the fan-in is both frames' */
    float patch_fan_in = 2.0f * 3.0f * (float)s->patch * (float)s->patch;
    pocketllm_status st = pl_synth_mm_add(&p->m, "v.patch_embd.weight", 4, s->patch, s->patch, 3, d, FILL_MATRIX, patch_fan_in);
    if (!st) st = pl_synth_mm_add(&p->m, "v.patch_embd.weight.1", 4, s->patch, s->patch, 3, d, FILL_MATRIX, patch_fan_in);
    if (!st) st = pl_synth_mm_add(&p->m, "v.patch_embd.bias", 1, d, 1, 1, 1, FILL_BIAS, 0);
    if (!st) st = pl_synth_mm_add(&p->m, "v.position_embd.weight", 2, d, s->n_pos_embd, 1, 1, FILL_POS, 0);
    for (uint32_t l = 0; l < s->n_layer && !st; l++) {
        char b[64];
        snprintf(b, sizeof b, "v.blk.%u.ln1", l);
        st = pl_synth_mm_layer_norm(&p->m, b, d);
        snprintf(b, sizeof b, "v.blk.%u.attn_qkv", l);
        if (!st) st = pl_synth_mm_linear(&p->m, b, d, 3 * d);
        snprintf(b, sizeof b, "v.blk.%u.attn_out", l);
        if (!st) st = pl_synth_mm_linear(&p->m, b, d, d);
        snprintf(b, sizeof b, "v.blk.%u.ln2", l);
        if (!st) st = pl_synth_mm_layer_norm(&p->m, b, d);
        snprintf(b, sizeof b, "v.blk.%u.ffn_up", l);
        if (!st) st = pl_synth_mm_linear(&p->m, b, d, s->n_ff);
        snprintf(b, sizeof b, "v.blk.%u.ffn_down", l);
        if (!st) st = pl_synth_mm_linear(&p->m, b, s->n_ff, d);
    }
    /* DeepStack mergers, named by the block they tap */
    for (uint32_t i = 0; i < s->n_deepstack && !st; i++) {
        char b[64];
        snprintf(b, sizeof b, "v.deepstack.%u.norm", s->deepstack[i]);
        st = pl_synth_mm_layer_norm(&p->m, b, merged);
        snprintf(b, sizeof b, "v.deepstack.%u.fc1", s->deepstack[i]);
        if (!st) st = pl_synth_mm_linear(&p->m, b, merged, merged);
        snprintf(b, sizeof b, "v.deepstack.%u.fc2", s->deepstack[i]);
        if (!st) st = pl_synth_mm_linear(&p->m, b, merged, s->proj);
    }
    /* the patch merger: its norm (over one patch) is v.post_ln, its MLP mm.0 / mm.2 */
    if (!st) st = pl_synth_mm_layer_norm(&p->m, "v.post_ln", d);
    if (!st) st = pl_synth_mm_linear(&p->m, "mm.0", merged, merged);
    if (!st) st = pl_synth_mm_linear(&p->m, "mm.2", merged, s->proj);
    if (st) {
        free(p->m.t);
        p->m.t = NULL;
    }
    return st;
}

static pocketllm_status set_hparams(pocketllm_gguf_writer *w, const vplan *p, uint64_t seed) {
    const vision_shape *s = &p->s;
    char name[128];
    snprintf(name, sizeof name, "synth mmproj %s seed %llu", s->name, (unsigned long long)seed);
    const float mean[3] = {0.5f, 0.5f, 0.5f}, stdv[3] = {0.5f, 0.5f, 0.5f};
    uint8_t deep[64];
    for (uint32_t l = 0; l < s->n_layer; l++) deep[l] = p->deep[l];
    uint32_t grid = (uint32_t)(sqrt((double)s->n_pos_embd) + 0.5);
    pocketllm_status st = pocketllm_gguf_writer_set_str(w, "general.architecture", "clip");
    if (!st) st = pocketllm_gguf_writer_set_str(w, "general.type", "mmproj");
    if (!st) st = pocketllm_gguf_writer_set_str(w, "general.name", name);
    if (!st) st = pocketllm_gguf_writer_set_u32(w, "general.file_type", p->m.type == PL_TYPE_F16 ? 1 : 0);
    if (!st) st = pocketllm_gguf_writer_set_bool(w, "clip.has_vision_encoder", 1);
    if (!st) st = pocketllm_gguf_writer_set_u32(w, "clip.vision.projection_dim", s->proj);
    if (!st) st = pocketllm_gguf_writer_set_u32(w, "clip.vision.image_size", grid * s->patch);
    if (!st) st = pocketllm_gguf_writer_set_u32(w, "clip.vision.patch_size", s->patch);
    if (!st) st = pocketllm_gguf_writer_set_u32(w, "clip.vision.embedding_length", s->n_embd);
    if (!st) st = pocketllm_gguf_writer_set_u32(w, "clip.vision.feed_forward_length", s->n_ff);
    if (!st) st = pocketllm_gguf_writer_set_u32(w, "clip.vision.block_count", s->n_layer);
    if (!st) st = pocketllm_gguf_writer_set_u32(w, "clip.vision.attention.head_count", s->n_head);
    if (!st) st = pocketllm_gguf_writer_set_array(w, "clip.vision.image_mean", POCKETLLM_GGUF_FLOAT32, mean, 3);
    if (!st) st = pocketllm_gguf_writer_set_array(w, "clip.vision.image_std", POCKETLLM_GGUF_FLOAT32, stdv, 3);
    if (!st) st = pocketllm_gguf_writer_set_str(w, "clip.projector_type", "qwen3vl_merger");
    if (!st) st = pocketllm_gguf_writer_set_bool(w, "clip.use_gelu", 1);
    if (!st) st = pocketllm_gguf_writer_set_u32(w, "clip.vision.spatial_merge_size", s->merge);
    if (!st) st = pocketllm_gguf_writer_set_f32(w, "clip.vision.attention.layer_norm_epsilon", s->eps);
    if (!st) st = pocketllm_gguf_writer_set_array(w, "clip.vision.is_deepstack_layers", POCKETLLM_GGUF_BOOL, deep, s->n_layer);
    return st;
}

static uint64_t vtensor_elems(const vtensor *t) {
    return (uint64_t)t->ne[0] * (uint64_t)t->ne[1] * (uint64_t)t->ne[2] * (uint64_t)t->ne[3];
}

/* Whisper's sinusoidal position entry (row t, column c of a table `ch`
 * wide), as conversion/qwenvl.py's Qwen25AudioModel.generate_extra_tensors
 * computes it in float32: inv = exp(-c * log(10000) / (ch/2 - 1)), then
 * [sin(t * inv) | cos(t * inv)]. */
static float sinusoid(uint64_t t, uint64_t c, uint64_t ch) {
    const uint64_t half = ch / 2;
    const float incr = (float)(log(10000.0) / (double)(half - 1));
    const uint64_t k = c < half ? c : c - half;
    const float inv = (float)exp((double)(-incr * (float)k));
    const float x = (float)t * inv;
    return c < half ? (float)sin((double)x) : (float)cos((double)x);
}

pocketllm_status pl_synth_mm_write(pocketllm_gguf_writer *w, const pl_mm_plan *p, const char *path,
                                   const pocketllm_synth_mmproj_params *prm) {
    void *buf = NULL;
    uint64_t total = 0, done = 0;
    pocketllm_status st = POCKETLLM_OK;
    for (size_t i = 0; i < p->n; i++) total += vtensor_elems(&p->t[i]) * pl_type_get(p->t[i].type)->bytes;
    enum { CHUNK = 1 << 20 }; /* elements per piece */
    for (size_t i = 0; i < p->n && !st; i++)
        st = pocketllm_gguf_writer_add_tensor(w, p->t[i].name, p->t[i].type, p->t[i].n_dims, p->t[i].ne, NULL);
    if (!st && !(buf = malloc((size_t)CHUNK * 4))) st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    if (!st) st = pocketllm_gguf_writer_begin(w, path);
    for (size_t i = 0; i < p->n && !st; i++) {
        const vtensor *t = &p->t[i];
        pl_rng r;
        /* seed by (seed, name): independent of the order tensors are made in */
        pl_rng_seed(&r, prm->seed ^ pl_hash_bytes(t->name, strlen(t->name)));
        uint64_t count = vtensor_elems(t);
        uint32_t esize = pl_type_get(t->type)->bytes;
        for (uint64_t off = 0; off < count && !st; off += CHUNK) {
            uint64_t k = count - off < CHUNK ? count - off : CHUNK;
            for (uint64_t j = 0; j < k; j++) {
                float v;
                if (t->fill == FILL_SINUS) {
                    uint64_t e = off + j, ch = (uint64_t)t->ne[0];
                    v = sinusoid(e / ch, e % ch, ch);
                } else {
                    v = (2.0f * pl_rng_uniform(&r) - 1.0f) * t->scale;
                    if (t->fill == FILL_NORM) v += 1.0f;
                }
                if (t->type == PL_TYPE_F32) ((float *)buf)[j] = v;
                else if (t->type == PL_TYPE_F16) ((uint16_t *)buf)[j] = pl_f32_to_f16(v);
                else ((uint16_t *)buf)[j] = pl_f32_to_bf16(v);
            }
            st = pocketllm_gguf_writer_write_data(w, buf, (size_t)(k * esize));
            done += k * esize;
            if (prm->progress) prm->progress(prm->progress_user, done, total);
        }
    }
    if (!st) st = pocketllm_gguf_writer_finish(w);
    free(buf);
    return st;
}

pocketllm_status pocketllm_synth_mmproj(const pocketllm_synth_mmproj_params *prm, const char *path) {
    if (!prm || !path) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "synth: no parameters or path");
    if (pl_synth_audio_shape(prm->shape)) return pl_synth_audio_mmproj(prm, path);
    vplan p;
    pocketllm_status st = plan(prm, &p);
    if (st) return st;
    pocketllm_gguf_writer *w = NULL;
    st = pocketllm_gguf_writer_new(&w);
    if (!st) st = set_hparams(w, &p, prm->seed);
    if (!st) st = pl_synth_mm_write(w, &p.m, path, prm);
    free(p.m.t);
    pocketllm_gguf_writer_free(w);
    return st;
}
