/*
 * vision_load.c -- open a Qwen3-VL vision tower (an mmproj GGUF of
 * clip.projector_type qwen3vl_merger): read its hyperparameters, check
 * every tensor's presence, shape and type against them (a bad file is an
 * error message, never a crash), bind the weights as views into the
 * mapping, place them on the text model's device as the text model's are
 * placed, and make the tower's own compute instance there.
 *
 * Matrices are never copied, with one exception that follows the
 * reference's arithmetic: ggml convolves through im2col in f16 and so
 * multiplies f16 pixels by an f32 patch kernel rounded to f16; an f32
 * kernel gets an f16 copy here (2 x 768 x n_embd halves).  Vectors stored
 * in f16/bf16 are widened to f32, as the text loader does.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/half.h"
#include "model/llama.h"
#include "quant/types.h"
#include "vision/mmproj_load.h"
#include "vision/vision_internal.h"

#define MAX_DIM (1 << 16)
#define MAX_LAYERS 256

typedef struct loader {
    pl_vision *v;
    const char *path;
    pl_mmproj_loader m; /* the shared binding helpers' view of v */
} loader;

/* Three floats of an array key (the image mean / std). */
static pocketllm_status get_float3(const loader *ld, const char *key, float *out) {
    const pocketllm_gguf_value *a = pl_gguf_get(ld->v->gguf, key);
    if (!a) return pl_fail(POCKETLLM_ERR_FORMAT, "missing hyperparameter %s", key);
    if (pocketllm_gguf_value_type(a) != POCKETLLM_GGUF_ARRAY || pocketllm_gguf_array_len(a) < 3)
        return pl_fail(POCKETLLM_ERR_FORMAT, "%s must be an array of 3 numbers", key);
    for (uint64_t i = 0; i < 3; i++) {
        double d;
        if (pocketllm_gguf_value_f64(pocketllm_gguf_array_get(a, i), &d) || !isfinite(d) || fabs(d) > 1e6)
            return pl_fail(POCKETLLM_ERR_FORMAT, "%s[%llu] is not a usable number", key, (unsigned long long)i);
        out[i] = (float)d;
    }
    return POCKETLLM_OK;
}

static pocketllm_status read_hparams(loader *ld) {
    pl_vision_hparams *hp = &ld->v->hp;
    const pl_gguf *g = ld->v->gguf;
    const char *proj = pl_gguf_get_str(g, "clip.projector_type");
    if (!proj) proj = pl_gguf_get_str(g, "clip.vision.projector_type");
    if (!proj) return pl_fail(POCKETLLM_ERR_FORMAT, "no clip.projector_type: not an mmproj file");
    snprintf(hp->projector, sizeof hp->projector, "%s", proj);
    if (strcmp(proj, "qwen3vl_merger") != 0)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "projector '%s' is not supported (qwen3vl_merger is)", hp->projector);
    if (pl_gguf_get(g, "clip.has_vision_encoder") && !pl_mmproj_get_bool(&ld->m, "clip.has_vision_encoder"))
        return pl_fail(POCKETLLM_ERR_FORMAT, "clip.has_vision_encoder is false: the file has no vision tower");
    pocketllm_status st;
    int64_t head_kv = 0, merge = 0;
    if ((st = pl_mmproj_get_int(&ld->m, "clip.vision.embedding_length", true, 0, 4, MAX_DIM, &hp->n_embd)) ||
        (st = pl_mmproj_get_int(&ld->m, "clip.vision.block_count", true, 0, 1, MAX_LAYERS, &hp->n_layer)) ||
        (st = pl_mmproj_get_int(&ld->m, "clip.vision.feed_forward_length", true, 0, 1, MAX_DIM * 4, &hp->n_ff)) ||
        (st = pl_mmproj_get_int(&ld->m, "clip.vision.attention.head_count", true, 0, 1, MAX_DIM, &hp->n_head)) ||
        (st = pl_mmproj_get_int(&ld->m, "clip.vision.attention.head_count_kv", false, (uint64_t)hp->n_head, 1, MAX_DIM, &head_kv)) ||
        (st = pl_mmproj_get_int(&ld->m, "clip.vision.attention.head_dim", false, (uint64_t)(hp->n_embd / hp->n_head), 1,
                      PL_MAX_HEAD_DIM, &hp->head_dim)) ||
        (st = pl_mmproj_get_int(&ld->m, "clip.vision.patch_size", true, 0, 1, 64, &hp->patch_size)) ||
        (st = pl_mmproj_get_int(&ld->m, "clip.vision.image_size", true, 0, 1, 1 << 16, &hp->image_size)) ||
        (st = pl_mmproj_get_int(&ld->m, "clip.vision.projection_dim", true, 0, 1, MAX_DIM, &hp->n_embd_text)) ||
        (st = pl_mmproj_get_int(&ld->m, "clip.vision.spatial_merge_size", false, 2, 1, 16, &merge)))
        return st;
    hp->n_merge = merge;
    if (head_kv != hp->n_head)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "the tower has %lld KV heads for %lld heads; Qwen3-VL's has one each",
                       (long long)head_kv, (long long)hp->n_head);
    if (hp->n_head * hp->head_dim != hp->n_embd || hp->head_dim % 4)
        return pl_fail(POCKETLLM_ERR_FORMAT, "%lld heads of %lld do not make the width %lld (with a head a multiple of 4)",
                       (long long)hp->n_head, (long long)hp->head_dim, (long long)hp->n_embd);
    if (hp->n_merge != 2)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "clip.vision.spatial_merge_size %lld: Qwen3-VL's merger is 2 x 2",
                       (long long)hp->n_merge);
    double eps;
    if (!pl_gguf_get(g, "clip.vision.attention.layer_norm_epsilon"))
        return pl_fail(POCKETLLM_ERR_FORMAT, "missing hyperparameter clip.vision.attention.layer_norm_epsilon");
    if ((st = pl_gguf_get_f64(g, "clip.vision.attention.layer_norm_epsilon", 0, &eps))) return st;
    if (!(eps >= 0 && eps < 1)) return pl_fail(POCKETLLM_ERR_FORMAT, "layer_norm_epsilon %g is not usable", eps);
    hp->eps = (float)eps;
    if ((st = get_float3(ld, "clip.vision.image_mean", hp->mean)) || (st = get_float3(ld, "clip.vision.image_std", hp->std)))
        return st;
    for (int i = 0; i < 3; i++)
        if (!(hp->std[i] != 0.0f)) return pl_fail(POCKETLLM_ERR_FORMAT, "clip.vision.image_std[%d] is 0", i);
    /* llama.cpp picks the blocks' activation from these flags (quick GELU
     * when neither is set); Qwen3-VL's is the tanh GELU */
    if (!pl_mmproj_get_bool(&ld->m, "clip.use_gelu") || pl_mmproj_get_bool(&ld->m, "clip.use_silu"))
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "the tower's activation is not GELU (clip.use_gelu is not set)");
    return POCKETLLM_OK;
}

/* The two temporal patch kernels [P, P, 3, n_embd]: n_embd rows of 3 P P. */
static pocketllm_status bind_patch(loader *ld) {
    pl_vision *v = ld->v;
    const int64_t p = v->hp.patch_size, d = v->hp.n_embd, n_in = 3 * p * p;
    const char *names[2] = {"v.patch_embd.weight", "v.patch_embd.weight.1"};
    for (int k = 0; k < 2; k++) {
        const pl_gguf_tensor *t = pl_mmproj_find(&ld->m, names[k]);
        if (!t) return pl_fail(POCKETLLM_ERR_FORMAT, "tensor %s is missing", names[k]);
        if (t->n_dims != 4 || t->ne[0] != p || t->ne[1] != p || t->ne[2] != 3 || t->ne[3] != d)
            return pl_fail(POCKETLLM_ERR_FORMAT, "tensor %s has shape [%lld, %lld, %lld, %lld], expected [%lld, %lld, 3, %lld]",
                           names[k], (long long)t->ne[0], (long long)t->ne[1], (long long)t->ne[2], (long long)t->ne[3],
                           (long long)p, (long long)p, (long long)d);
        pocketllm_status st = pl_mmproj_bind_rows(&ld->m, t, n_in, d, &v->patch[k]);
        if (st) return st;
        if (t->type == PL_TYPE_F32) {
            uint16_t *h = pl_mmproj_const_alloc(&ld->m, (size_t)(n_in * d) * sizeof *h);
            if (!h) return POCKETLLM_ERR_NO_MEMORY;
            const float *f = (const float *)t->data;
            for (int64_t i = 0; i < n_in * d; i++) h[i] = pl_f32_to_f16(f[i]);
            v->patch[k].data = h;
            v->patch[k].type = PL_TYPE_F16;
            v->patch[k].row_bytes = (size_t)n_in * 2;
        }
    }
    if (v->patch[0].type != v->patch[1].type)
        return pl_fail(POCKETLLM_ERR_FORMAT, "the two patch kernels have different types (%s, %s)",
                       pocketllm_type_name(v->patch[0].type), pocketllm_type_name(v->patch[1].type));
    /* ggml_conv_2d's im2col is f16 for every kernel type but bf16 */
    v->patch_f16_input = v->patch[0].type != PL_TYPE_BF16;
    return pl_mmproj_vector(&ld->m, "v.patch_embd.bias", d, false, &v->patch_b);
}

static pocketllm_status bind_pos_embd(loader *ld) {
    pl_vision *v = ld->v;
    const pl_gguf_tensor *t = pl_mmproj_find(&ld->m, "v.position_embd.weight");
    if (!t) return pl_fail(POCKETLLM_ERR_FORMAT, "tensor v.position_embd.weight is missing");
    int64_t side = (int64_t)sqrt((double)t->ne[1]);
    while (side * side > t->ne[1]) side--;
    while ((side + 1) * (side + 1) <= t->ne[1]) side++;
    if (t->n_dims != 2 || t->ne[0] != v->hp.n_embd || side < 1 || side * side != t->ne[1])
        return pl_fail(POCKETLLM_ERR_FORMAT, "tensor v.position_embd.weight has shape [%lld, %lld], expected [%lld, a square]",
                       (long long)t->ne[0], (long long)t->ne[1], (long long)v->hp.n_embd);
    if (t->type != PL_TYPE_F32 && t->type != PL_TYPE_F16 && t->type != PL_TYPE_BF16)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "tensor v.position_embd.weight is %s; it must be f32, f16 or bf16",
                       pocketllm_type_name(t->type));
    v->pos_embd = t;
    v->pos_side = side;
    return POCKETLLM_OK;
}

static pocketllm_status bind_layer(loader *ld, int il) {
    pl_vision *v = ld->v;
    pl_vision_layer *ly = &v->layers[il];
    const int64_t d = v->hp.n_embd;
    char b[64], name[96];
    pocketllm_status st;
    ly->deepstack = -1;
    snprintf(name, sizeof name, "v.blk.%d.ffn_gate.weight", il);
    if (pl_mmproj_find(&ld->m, name)) return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "%s: a gated FFN is not Qwen3-VL's tower", name);
    snprintf(b, sizeof b, "v.blk.%d.ln1", il);
    if ((st = pl_mmproj_norm(&ld->m, b, d, &ly->ln1_w, &ly->ln1_b))) return st;
    snprintf(b, sizeof b, "v.blk.%d.ln2", il);
    if ((st = pl_mmproj_norm(&ld->m, b, d, &ly->ln2_w, &ly->ln2_b))) return st;
    /* the fused Q/K/V: its three row blocks are three matrices */
    pl_weight qkv;
    const float *qkv_b;
    snprintf(b, sizeof b, "v.blk.%d.attn_qkv", il);
    if ((st = pl_mmproj_linear(&ld->m, b, d, 3 * d, true, &qkv, &qkv_b))) return st;
    pl_weight *parts[3] = {&ly->q, &ly->k, &ly->v};
    for (int k = 0; k < 3; k++) {
        *parts[k] = qkv;
        parts[k]->data = (const uint8_t *)qkv.data + (size_t)(k * d) * qkv.row_bytes;
        parts[k]->n_out = d;
    }
    ly->q_b = qkv_b, ly->k_b = qkv_b + d, ly->v_b = qkv_b + 2 * d;
    snprintf(b, sizeof b, "v.blk.%d.attn_out", il);
    if ((st = pl_mmproj_linear(&ld->m, b, d, d, false, &ly->out, &ly->out_b))) return st;
    snprintf(b, sizeof b, "v.blk.%d.ffn_up", il);
    if ((st = pl_mmproj_linear(&ld->m, b, d, v->hp.n_ff, false, &ly->up, &ly->up_b))) return st;
    snprintf(b, sizeof b, "v.blk.%d.ffn_down", il);
    return pl_mmproj_linear(&ld->m, b, v->hp.n_ff, d, false, &ly->down, &ly->down_b);
}

/* A merger over the merged 4 x n_embd: norm (norm_n wide), fc1, fc2. */
static pocketllm_status bind_merger(loader *ld, const char *norm_base, int64_t norm_n, const char *fc1, const char *fc2,
                                    pl_vision_merger *mg) {
    const int64_t m = 4 * ld->v->hp.n_embd;
    pocketllm_status st;
    mg->norm_n = norm_n;
    if ((st = pl_mmproj_norm(&ld->m, norm_base, norm_n, &mg->norm_w, &mg->norm_b)) ||
        (st = pl_mmproj_linear(&ld->m, fc1, m, m, true, &mg->fc1, &mg->fc1_b)))
        return st;
    return pl_mmproj_linear(&ld->m, fc2, m, ld->v->hp.n_embd_text, true, &mg->fc2, &mg->fc2_b);
}

static pocketllm_status bind_deepstack(loader *ld) {
    pl_vision *v = ld->v;
    pl_vision_hparams *hp = &v->hp;
    const pocketllm_gguf_value *flags = pl_gguf_get(v->gguf, "clip.vision.is_deepstack_layers");
    if (flags && (pocketllm_gguf_value_type(flags) != POCKETLLM_GGUF_ARRAY ||
                  pocketllm_gguf_array_len(flags) != (uint64_t)hp->n_layer))
        return pl_fail(POCKETLLM_ERR_FORMAT, "clip.vision.is_deepstack_layers must be an array of %lld booleans",
                       (long long)hp->n_layer);
    /* libmtmd taps the blocks that have DeepStack tensors (it does not read
     * the flags); a file whose flags say otherwise is inconsistent */
    for (int il = 0; il < hp->n_layer; il++) {
        char fc1[64], nm[64], fc2[64], name[96];
        snprintf(fc1, sizeof fc1, "v.deepstack.%d.fc1", il);
        snprintf(name, sizeof name, "%s.weight", fc1);
        const bool has = pl_mmproj_find(&ld->m, name) != NULL;
        uint64_t flag = has;
        if (flags && pocketllm_gguf_value_u64(pocketllm_gguf_array_get(flags, (uint64_t)il), &flag))
            return pl_fail(POCKETLLM_ERR_FORMAT, "clip.vision.is_deepstack_layers[%d] is not a boolean", il);
        if ((flag != 0) != has)
            return pl_fail(POCKETLLM_ERR_FORMAT, "clip.vision.is_deepstack_layers[%d] is %s but %s is %s", il,
                           flag ? "true" : "false", name, has ? "present" : "missing");
        if (!has) continue;
        if (hp->n_deepstack == PL_VISION_MAX_DEEPSTACK)
            return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "more than %d DeepStack layers", PL_VISION_MAX_DEEPSTACK);
        snprintf(nm, sizeof nm, "v.deepstack.%d.norm", il);
        snprintf(fc2, sizeof fc2, "v.deepstack.%d.fc2", il);
        pocketllm_status st = bind_merger(ld, nm, 4 * hp->n_embd, fc1, fc2, &v->ds[hp->n_deepstack]);
        if (st) return st;
        v->layers[il].deepstack = (int)hp->n_deepstack;
        hp->deepstack_layers[hp->n_deepstack++] = il;
    }
    return POCKETLLM_OK;
}

/* The text model's DeepStack count (0 for a text model without it). */
static int64_t text_deepstack(const pl_model *m) {
    if (strcmp(m->arch->name, "qwen3vl") != 0) return 0;
    return ((const pl_llama *)m->weights)->hp.n_deepstack;
}

static pocketllm_status check_text(loader *ld) {
    const pl_vision *v = ld->v;
    const pl_model *m = v->text;
    if (v->hp.n_embd_text != m->dims.n_embd)
        return pl_fail(POCKETLLM_ERR_FORMAT, "the tower projects to %lld but the text model's width is %lld: not a pair",
                       (long long)v->hp.n_embd_text, (long long)m->dims.n_embd);
    if (v->hp.n_deepstack != text_deepstack(m))
        return pl_fail(POCKETLLM_ERR_FORMAT, "the tower has %lld DeepStack layers but the text model takes %lld: not a pair",
                       (long long)v->hp.n_deepstack, (long long)text_deepstack(m));
    return POCKETLLM_OK;
}

pocketllm_status pl_vision_reserve(pl_vision *v, int64_t n_patches) {
    if (n_patches <= v->reserved_patches) return POCKETLLM_OK;
    pl_compute_limits lim = {.n_batch = PL_VISION_CHUNK, .max_in = v->max_in, .n_ctx = n_patches, .head_dim = v->hp.head_dim};
    pocketllm_status st = v->c->ops->reserve(v->c, &lim);
    if (!st) v->reserved_patches = n_patches;
    return st;
}

static pocketllm_status open_compute(pl_vision *v) {
    pl_model *m = v->text;
    pocketllm_status st = pl_mmproj_compute_new(m, &v->c);
    if (st) return st;
    if (!v->c->ops->layer_norm || !v->c->ops->gelu)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "the %s backend has no layer-norm / GELU kernels yet (the vision tower needs them)",
                       v->c->backend);
    /* sized once for the default token budget's largest image (4096
     * merged tokens); pl_vision_encode grows it for a larger one */
    return pl_vision_reserve(v, 4 * 4096);
}

pocketllm_status pl_vision_open(pl_model *text, const char *path, pl_vision **out) {
    if (!text || !path || !out) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "vision_open: no model or path");
    *out = NULL;
    if (!text->arch) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "vision_open: the text model has no weights loaded");
    pl_vision *v = calloc(1, sizeof *v);
    if (!v) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    v->text = text;
    loader ld = {v, path, {text, NULL, &v->consts, &v->n_consts, &v->max_in, false}};
    const size_t first_const = text->n_consts;
    pocketllm_status st = pocketllm_gguf_open(path, &v->gguf);
    if (st) goto fail;
    ld.m.gguf = v->gguf;
    if ((st = read_hparams(&ld))) goto fail_named;
    v->layers = calloc((size_t)v->hp.n_layer, sizeof *v->layers);
    if (!v->layers) {
        st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
        goto fail;
    }
    if ((st = bind_patch(&ld)) || (st = bind_pos_embd(&ld))) goto fail_named;
    if (pl_mmproj_find(&ld.m, "v.pre_ln.weight") || pl_mmproj_find(&ld.m, "v.pre_ln.bias")) {
        st = pl_fail(POCKETLLM_ERR_UNSUPPORTED, "v.pre_ln: a norm before the blocks is not Qwen3-VL's tower");
        goto fail_named;
    }
    for (int il = 0; il < v->hp.n_layer; il++)
        if ((st = bind_layer(&ld, il))) goto fail_named;
    if ((st = bind_deepstack(&ld)) ||
        (st = bind_merger(&ld, "v.post_ln", v->hp.n_embd, "mm.0", "mm.2", &v->merger)) || (st = check_text(&ld)))
        goto fail_named;
    if (text->device && (st = pl_mmproj_upload(text, v->gguf, first_const))) goto fail_named;
    if ((st = open_compute(v))) goto fail;
    *out = v;
    return POCKETLLM_OK;
fail_named:
    pl_error_prefix(path);
fail:
    pl_vision_close(v);
    return st;
}

void pl_vision_close(pl_vision *v) {
    if (!v) return;
    if (v->c) v->c->ops->free(v->c);
    free(v->layers);
    pl_mmproj_release(v->text, v->gguf, v->consts, v->n_consts);
    free(v);
}

const pl_vision_hparams *pl_vision_hparams_of(const pl_vision *v) { return &v->hp; }

int64_t pl_vision_out_width(const pl_vision *v) { return v->hp.n_embd_text * (1 + v->hp.n_deepstack); }

void pl_vision_prep_params(const pl_vision *v, uint32_t min_tokens, uint32_t max_tokens, pl_qwen3vl_prep *out) {
    pl_qwen3vl_prep_default(out);
    out->patch_size = (uint32_t)v->hp.patch_size;
    out->n_merge = (uint32_t)v->hp.n_merge;
    if (min_tokens) out->min_tokens = min_tokens;
    if (max_tokens) out->max_tokens = max_tokens;
    for (int i = 0; i < 3; i++) {
        out->mean[i] = v->hp.mean[i];
        out->std[i] = v->hp.std[i];
    }
}
