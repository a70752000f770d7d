/*
 * llama_load.c -- read the hyperparameters of a llama / qwen2 / qwen3 /
 * qwen3vl / qwen2moe / qwen3moe checkpoint and bind its tensors, checking every shape and type against
 * them, so that the graph never meets a tensor it did not expect.  Weight
 * matrices stay where they are in the mapping; only small vectors stored
 * in f16/bf16 are copied out to f32.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "base/error.h"
#include "base/half.h"
#include "model/llama.h"
#include "quant/types.h"
#include "tokenizer/tokenizer.h"

/* Bounds far beyond any real model; they keep products of sizes small. */
#define MAX_DIM (1 << 20)
#define MAX_LAYERS 4096

typedef struct loader {
    pl_model *m;
    pl_llama *L;
    const char *arch;
    bool moe; /* qwen2moe, qwen3moe */
} loader;

static pocketllm_status get_int(const loader *ld, const char *suffix, bool required, uint64_t def, uint64_t lo,
                                uint64_t hi, int64_t *out) {
    char key[160];
    snprintf(key, sizeof key, "%s.%s", ld->arch, suffix);
    const pocketllm_gguf_value *v = pl_gguf_get(ld->m->gguf, key);
    if (!v && required) return pl_fail(POCKETLLM_ERR_FORMAT, "missing hyperparameter %s", key);
    if (v && v->type == POCKETLLM_GGUF_ARRAY)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "%s varies per layer, which this architecture does not support", key);
    uint64_t u;
    pocketllm_status st = pl_gguf_get_u64(ld->m->gguf, key, def, &u);
    if (st) return st;
    if (u < lo || u > hi)
        return pl_fail(POCKETLLM_ERR_FORMAT, "%s = %llu is outside %llu..%llu", key, (unsigned long long)u,
                       (unsigned long long)lo, (unsigned long long)hi);
    *out = (int64_t)u;
    return POCKETLLM_OK;
}

static pocketllm_status get_float(const loader *ld, const char *suffix, bool required, double def, float *out) {
    char key[160];
    snprintf(key, sizeof key, "%s.%s", ld->arch, suffix);
    if (required && !pl_gguf_get(ld->m->gguf, key)) return pl_fail(POCKETLLM_ERR_FORMAT, "missing hyperparameter %s", key);
    double d;
    pocketllm_status st = pl_gguf_get_f64(ld->m->gguf, key, def, &d);
    if (st) return st;
    if (!isfinite(d) || fabs(d) > 1e30) return pl_fail(POCKETLLM_ERR_FORMAT, "%s = %g is not a usable number", key, d);
    *out = (float)d;
    return POCKETLLM_OK;
}

static const pl_gguf_tensor *find(const loader *ld, const char *name) {
    return pl_gguf_tensor_by_name(ld->m->gguf, name);
}

/* Bind tensor `name` as a matrix of shape [n_in, n_out] (n_expert 0), a
 * 3-D expert tensor [n_in, n_out, n_expert], or (n_out 1, one_d) a 1-D
 * [n_in] vector used as a one-row matrix; w->data stays NULL when an
 * optional tensor is absent. */
static pocketllm_status bind_weight(const loader *ld, const char *name, int64_t n_in, int64_t n_out, int64_t n_expert,
                                    bool one_d, bool optional, pl_weight *w) {
    memset(w, 0, sizeof *w);
    const pl_gguf_tensor *t = find(ld, name);
    if (!t) return optional ? POCKETLLM_OK : pl_fail(POCKETLLM_ERR_FORMAT, "tensor %s is missing", name);
    const uint32_t dims = n_expert ? 3 : one_d ? 1 : 2;
    if (t->n_dims != dims || t->ne[0] != n_in || (dims > 1 && t->ne[1] != n_out) || (dims > 2 && t->ne[2] != n_expert)) {
        if (n_expert)
            return pl_fail(POCKETLLM_ERR_FORMAT, "tensor %s has %u dimensions [%lld, %lld, %lld], expected [%lld, %lld, %lld]",
                           name, t->n_dims, (long long)t->ne[0], (long long)t->ne[1], (long long)t->ne[2],
                           (long long)n_in, (long long)n_out, (long long)n_expert);
        if (one_d)
            return pl_fail(POCKETLLM_ERR_FORMAT, "tensor %s has %u dimensions of which the first is %lld, expected [%lld]",
                           name, t->n_dims, (long long)t->ne[0], (long long)n_in);
        return pl_fail(POCKETLLM_ERR_FORMAT, "tensor %s has shape [%lld, %lld, %lld], expected [%lld, %lld]", name,
                       (long long)t->ne[0], (long long)t->ne[1], (long long)t->ne[2], (long long)n_in,
                       (long long)n_out);
    }
    const pl_op op = n_expert ? PL_OP_MOE_FFN : PL_OP_MUL_MAT;
    if (!pl_cpu_supports(op, t->type) || (!n_expert && !pl_cpu_supports(PL_OP_GET_ROWS, t->type)))
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "tensor %s is %s, which this build cannot compute with yet (see 'pocketllm ops')",
                       name, pocketllm_type_name(t->type));
    uint64_t row;
    const uint64_t mats = n_expert ? (uint64_t)n_expert : 1;
    if (!pl_type_row_bytes(t->type, (uint64_t)n_in, &row) || row * (uint64_t)n_out * mats != t->n_bytes)
        return pl_fail(POCKETLLM_ERR_FORMAT, "tensor %s: rows of %lld do not fit %s blocks", name, (long long)n_in,
                       pocketllm_type_name(t->type));
    w->name = t->name;
    w->data = t->data;
    w->type = t->type;
    w->n_in = n_in;
    w->n_out = n_out;
    w->row_bytes = (size_t)row;
    w->n_expert = n_expert;
    w->expert_bytes = n_expert ? (size_t)(row * (uint64_t)n_out) : 0;
    return POCKETLLM_OK;
}

static pocketllm_status matrix(const loader *ld, const char *name, int64_t n_in, int64_t n_out, bool optional,
                               pl_weight *w) {
    return bind_weight(ld, name, n_in, n_out, 0, false, optional, w);
}

/* Bind vector `name` of n elements as f32 (*out stays NULL when an optional
 * vector is absent). */
static pocketllm_status vector(const loader *ld, const char *name, int64_t n, bool optional, const float **out) {
    *out = NULL;
    const pl_gguf_tensor *t = find(ld, name);
    if (!t) return optional ? POCKETLLM_OK : pl_fail(POCKETLLM_ERR_FORMAT, "tensor %s is missing", name);
    if (t->n_dims != 1 || t->ne[0] != n)
        return pl_fail(POCKETLLM_ERR_FORMAT, "tensor %s has %u dimensions of which the first is %lld, expected [%lld]",
                       name, t->n_dims, (long long)t->ne[0], (long long)n);
    if (t->type == PL_TYPE_F32) {
        *out = (const float *)t->data;
        return POCKETLLM_OK;
    }
    if (t->type != PL_TYPE_F16 && t->type != PL_TYPE_BF16)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "tensor %s is %s; vectors must be f32, f16 or bf16", name,
                       pocketllm_type_name(t->type));
    float *f = pl_model_const_alloc(ld->m, (size_t)n * sizeof *f);
    if (!f) return POCKETLLM_ERR_NO_MEMORY;
    const uint16_t *h = (const uint16_t *)t->data;
    for (int64_t i = 0; i < n; i++) f[i] = t->type == PL_TYPE_F16 ? pl_f16_to_f32(h[i]) : pl_bf16_to_f32(h[i]);
    *out = f;
    return POCKETLLM_OK;
}

/* qwen3vl: the rotary sections (required, as llama.cpp requires them:
 * four counts of rotary pairs, covering at most the rotated dimensions) and
 * the DeepStack count (at most the layer count). */
static pocketllm_status read_vl_hparams(loader *ld) {
    pl_llama_hparams *hp = &ld->L->hp;
    char key[160];
    snprintf(key, sizeof key, "%s.rope.dimension_sections", ld->arch);
    const pocketllm_gguf_value *v = pl_gguf_get(ld->m->gguf, key);
    if (!v) return pl_fail(POCKETLLM_ERR_FORMAT, "missing hyperparameter %s", key);
    const uint64_t n = pocketllm_gguf_array_len(v);
    if (pocketllm_gguf_value_type(v) != POCKETLLM_GGUF_ARRAY || n < 3 || n > 4)
        return pl_fail(POCKETLLM_ERR_FORMAT, "%s must be an array of 3 or 4 integers", key);
    int64_t sum = 0;
    for (uint64_t i = 0; i < 4; i++) {
        int64_t x = 0;
        if (i < n && pocketllm_gguf_value_i64(pocketllm_gguf_array_get(v, i), &x))
            return pl_fail(POCKETLLM_ERR_FORMAT, "%s[%llu] is not an integer", key, (unsigned long long)i);
        if (x < 0 || x > PL_MAX_HEAD_DIM) return pl_fail(POCKETLLM_ERR_FORMAT, "%s[%llu] = %lld is out of range", key,
                                                          (unsigned long long)i, (long long)x);
        hp->rope_sections[i] = (int32_t)x;
        sum += x;
    }
    if (sum == 0 || 2 * sum > ld->L->rope.n_rot)
        return pl_fail(POCKETLLM_ERR_FORMAT, "%s sums to %lld rotary pairs; the heads rotate %lld", key, (long long)sum,
                       (long long)(ld->L->rope.n_rot / 2));
    pl_rope_params *rm = &ld->L->rope_multi;
    *rm = ld->L->rope;
    rm->mode = PL_ROPE_MROPE_INTERLEAVED;
    for (int i = 0; i < 4; i++) rm->sections[i] = hp->rope_sections[i];
    ld->m->dims.n_pos_axes = 4;
    return get_int(ld, "n_deepstack_layers", false, 0, 0, (uint64_t)hp->n_layer, &hp->n_deepstack);
}

/* qwen2moe / qwen3moe: the experts, as llama.cpp reads them -- a count and
 * the count routed per token (one value for every layer), an expert's
 * FFN width (expert_feed_forward_length, else feed_forward_length / the
 * routed count) and qwen2moe's shared expert's (its own key, else
 * feed_forward_length).  The router's weights are renormalised as
 * expert_weights_norm says (llama.cpp's graphs: qwen3moe yes, qwen2moe
 * no, which the converter leaves unwritten) and scaled by
 * expert_weights_scale when that is neither 0 nor 1. */
static pocketllm_status read_moe_hparams(loader *ld) {
    pl_llama_hparams *hp = &ld->L->hp;
    pocketllm_status st;
    if ((st = get_int(ld, "expert_count", true, 0, 1, 1u << 20, &hp->n_expert))) return st;
    if (hp->n_expert > PL_MAX_EXPERTS)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "%s.expert_count = %lld: at most %d experts are supported", ld->arch,
                       (long long)hp->n_expert, PL_MAX_EXPERTS);
    if ((st = get_int(ld, "expert_used_count", true, 0, 1, (uint64_t)hp->n_expert, &hp->n_expert_used))) return st;
    const bool qwen2moe = strcmp(ld->arch, "qwen2moe") == 0;
    const int64_t ff_exp_def = hp->n_ff / hp->n_expert_used;
    if ((st = get_int(ld, "expert_feed_forward_length", ff_exp_def == 0, (uint64_t)ff_exp_def, 1, MAX_DIM, &hp->n_ff_exp)))
        return st;
    if (qwen2moe && (st = get_int(ld, "expert_shared_feed_forward_length", hp->n_ff == 0, (uint64_t)hp->n_ff, 1, MAX_DIM,
                                  &hp->n_ff_shexp)))
        return st;
    int64_t norm;
    float scale = 0;
    if ((st = get_int(ld, "expert_weights_norm", false, qwen2moe ? 0 : 1, 0, 1, &norm)) ||
        (st = get_float(ld, "expert_weights_scale", false, 0, &scale)))
        return st;
    ld->L->route = (pl_moe_route_params){hp->n_expert, hp->n_expert_used, norm != 0, scale};
    return POCKETLLM_OK;
}

static pocketllm_status read_hparams(loader *ld) {
    pl_llama_hparams *hp = &ld->L->hp;
    pocketllm_status st;
    if ((st = get_int(ld, "embedding_length", true, 0, 1, MAX_DIM, &hp->n_embd)) ||
        (st = get_int(ld, "block_count", true, 0, 1, MAX_LAYERS, &hp->n_layer)) ||
        (st = get_int(ld, "feed_forward_length", !ld->moe, 0, ld->moe ? 0 : 1, MAX_DIM, &hp->n_ff)) ||
        (st = get_int(ld, "attention.head_count", true, 0, 1, PL_MAX_HEAD_DIM * 64, &hp->n_head)))
        return st;
    if ((st = get_int(ld, "attention.head_count_kv", false, (uint64_t)hp->n_head, 1, (uint64_t)hp->n_head,
                      &hp->n_head_kv)) ||
        (st = get_int(ld, "attention.key_length", false, (uint64_t)(hp->n_embd / hp->n_head), 1, PL_MAX_HEAD_DIM,
                      &hp->head_dim)) ||
        (st = get_int(ld, "context_length", false, 2048, 1, 1u << 24, &hp->n_ctx_train)))
        return st;
    int64_t v_len;
    if ((st = get_int(ld, "attention.value_length", false, (uint64_t)hp->head_dim, 1, PL_MAX_HEAD_DIM, &v_len)))
        return st;
    if (v_len != hp->head_dim)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "%s.attention.value_length %lld differs from key_length %lld", ld->arch,
                       (long long)v_len, (long long)hp->head_dim);
    if (hp->n_head % hp->n_head_kv)
        return pl_fail(POCKETLLM_ERR_FORMAT, "%lld attention heads cannot be shared by %lld KV heads", (long long)hp->n_head,
                       (long long)hp->n_head_kv);
    if (hp->n_head * hp->head_dim > MAX_DIM)
        return pl_fail(POCKETLLM_ERR_FORMAT, "%lld heads of %lld are too wide", (long long)hp->n_head, (long long)hp->head_dim);
    if ((st = get_float(ld, "attention.layer_norm_rms_epsilon", true, 0, &hp->rms_eps))) return st;
    if (hp->rms_eps < 0) return pl_fail(POCKETLLM_ERR_FORMAT, "negative RMS norm epsilon");
    float scale = 0;
    if ((st = get_float(ld, "attention.scale", false, 0, &scale))) return st;
    hp->attn_scale = scale != 0.0f ? scale : 1.0f / sqrtf((float)hp->head_dim);

    /* rotary: the dimension count may be below the head size (the rest of
     * each head passes through); scaling "linear" divides the angles */
    pl_rope_params *rp = &ld->L->rope;
    if ((st = get_int(ld, "rope.dimension_count", false, (uint64_t)hp->head_dim, 0, (uint64_t)hp->head_dim, &rp->n_rot)))
        return st;
    if (rp->n_rot % 2) return pl_fail(POCKETLLM_ERR_FORMAT, "%s.rope.dimension_count %lld is odd", ld->arch, (long long)rp->n_rot);
    if ((st = get_float(ld, "rope.freq_base", false, 10000.0, &rp->freq_base))) return st;
    if (!(rp->freq_base > 0)) return pl_fail(POCKETLLM_ERR_FORMAT, "%s.rope.freq_base must be positive", ld->arch);
    char key[160];
    snprintf(key, sizeof key, "%s.rope.scaling.type", ld->arch);
    const char *scaling = pl_gguf_get_str(ld->m->gguf, key);
    float factor = 0;
    if ((st = get_float(ld, "rope.scaling.factor", false, 0, &factor))) return st;
    if (factor == 0 && (st = get_float(ld, "rope.scale_linear", false, 0, &factor))) return st;
    if (scaling && strcmp(scaling, "none") != 0 && strcmp(scaling, "linear") != 0)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "rope scaling '%s' is not supported (none and linear are)", scaling);
    rp->freq_scale = factor == 0.0f || (scaling && strcmp(scaling, "none") == 0) ? 1.0f : 1.0f / factor;
    rp->mode = strcmp(ld->arch, "llama") == 0 ? PL_ROPE_NORMAL : PL_ROPE_NEOX;
    if (!strcmp(ld->arch, "qwen3vl")) return read_vl_hparams(ld);
    if (ld->moe) return read_moe_hparams(ld);
    return POCKETLLM_OK;
}

/* A mixture-of-experts layer's FFN: the router, the experts, and
 * qwen2moe's shared expert. */
static pocketllm_status bind_experts(loader *ld, int64_t il, pl_llama_layer *ly) {
    const pl_llama_hparams *hp = &ld->L->hp;
    const int64_t ne = hp->n_expert, d = hp->n_embd, f = hp->n_ff_exp;
    char name[96];
    pocketllm_status st;
#define NAME(suffix) (snprintf(name, sizeof name, "blk.%lld." suffix, (long long)il), name)
    if ((st = matrix(ld, NAME("ffn_gate_inp.weight"), d, ne, false, &ly->ffn_gate_inp)) ||
        (st = bind_weight(ld, NAME("ffn_gate_exps.weight"), d, f, ne, false, false, &ly->ffn_gate_exps)) ||
        (st = bind_weight(ld, NAME("ffn_up_exps.weight"), d, f, ne, false, false, &ly->ffn_up_exps)) ||
        (st = bind_weight(ld, NAME("ffn_down_exps.weight"), f, d, ne, false, false, &ly->ffn_down_exps)))
        return st;
    if (strcmp(ld->arch, "qwen2moe") == 0) {
        const int64_t fs = hp->n_ff_shexp;
        if ((st = bind_weight(ld, NAME("ffn_gate_inp_shexp.weight"), d, 1, 0, true, false, &ly->ffn_gate_inp_shexp)) ||
            (st = matrix(ld, NAME("ffn_gate_shexp.weight"), d, fs, false, &ly->ffn_gate_shexp)) ||
            (st = matrix(ld, NAME("ffn_up_shexp.weight"), d, fs, false, &ly->ffn_up_shexp)) ||
            (st = matrix(ld, NAME("ffn_down_shexp.weight"), fs, d, false, &ly->ffn_down_shexp)))
            return st;
    }
#undef NAME
    return POCKETLLM_OK;
}

static pocketllm_status bind_layer(loader *ld, int64_t il, pl_llama_layer *ly) {
    const pl_llama_hparams *hp = &ld->L->hp;
    const int64_t q_dim = hp->n_head * hp->head_dim, kv_dim = hp->n_head_kv * hp->head_dim;
    const bool llama = strcmp(ld->arch, "llama") == 0;
    const bool qwen3 = strcmp(ld->arch, "qwen3") == 0 || strcmp(ld->arch, "qwen3vl") == 0 || strcmp(ld->arch, "qwen3moe") == 0;
    char name[96];
    pocketllm_status st;
#define NAME(suffix) (snprintf(name, sizeof name, "blk.%lld." suffix, (long long)il), name)
    if (find(ld, NAME("attn_qkv.weight")))
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "%s: a fused Q/K/V matrix is not supported (separate attn_q/k/v are)", name);
    if ((st = vector(ld, NAME("attn_norm.weight"), hp->n_embd, false, &ly->attn_norm)) ||
        (st = matrix(ld, NAME("attn_q.weight"), hp->n_embd, q_dim, false, &ly->attn_q)) ||
        (st = matrix(ld, NAME("attn_k.weight"), hp->n_embd, kv_dim, false, &ly->attn_k)) ||
        (st = matrix(ld, NAME("attn_v.weight"), hp->n_embd, kv_dim, false, &ly->attn_v)) ||
        (st = matrix(ld, NAME("attn_output.weight"), q_dim, hp->n_embd, false, &ly->attn_output)) ||
        /* which optional vectors each variant reads follows llama.cpp: Q/K/V
         * biases in all three, the others only where noted */
        (st = vector(ld, NAME("attn_q.bias"), q_dim, true, &ly->attn_q_bias)) ||
        (st = vector(ld, NAME("attn_k.bias"), kv_dim, true, &ly->attn_k_bias)) ||
        (st = vector(ld, NAME("attn_v.bias"), kv_dim, true, &ly->attn_v_bias)) ||
        (llama && (st = vector(ld, NAME("attn_output.bias"), hp->n_embd, true, &ly->attn_output_bias))) ||
        /* qwen3 normalises each Q and K head before the rotation */
        (qwen3 && (st = vector(ld, NAME("attn_q_norm.weight"), hp->head_dim, false, &ly->attn_q_norm))) ||
        (qwen3 && (st = vector(ld, NAME("attn_k_norm.weight"), hp->head_dim, false, &ly->attn_k_norm))) ||
        (st = vector(ld, NAME("ffn_norm.weight"), hp->n_embd, false, &ly->ffn_norm)))
        return st;
    if (ld->moe) return bind_experts(ld, il, ly);
    if ((st = matrix(ld, NAME("ffn_gate.weight"), hp->n_embd, hp->n_ff, false, &ly->ffn_gate)) ||
        (st = matrix(ld, NAME("ffn_up.weight"), hp->n_embd, hp->n_ff, false, &ly->ffn_up)) ||
        (st = matrix(ld, NAME("ffn_down.weight"), hp->n_ff, hp->n_embd, false, &ly->ffn_down)) ||
        (llama && (st = vector(ld, NAME("ffn_gate.bias"), hp->n_ff, true, &ly->ffn_gate_bias))) ||
        (llama && (st = vector(ld, NAME("ffn_up.bias"), hp->n_ff, true, &ly->ffn_up_bias))) ||
        (llama && (st = vector(ld, NAME("ffn_down.bias"), hp->n_embd, true, &ly->ffn_down_bias))))
        return st;
#undef NAME
    return POCKETLLM_OK;
}

static void llama_unload(pl_model *m) {
    pl_llama *L = m->weights;
    if (!L) return;
    free(L->layers);
    free(L);
    m->weights = NULL;
}

static pocketllm_status llama_load(pl_model *m) {
    pl_llama *L = calloc(1, sizeof *L);
    if (!L) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    m->weights = L;
    loader ld = {m, L, m->arch->name, !strcmp(m->arch->name, "qwen2moe") || !strcmp(m->arch->name, "qwen3moe")};
    pl_llama_hparams *hp = &L->hp;
    pocketllm_status st = read_hparams(&ld);
    if (st) return st;

    const pl_gguf_tensor *te = find(&ld, "token_embd.weight");
    if (!te) return pl_fail(POCKETLLM_ERR_FORMAT, "tensor token_embd.weight is missing");
    if (te->n_dims != 2 || te->ne[1] < 1 || te->ne[1] > (1 << 24))
        return pl_fail(POCKETLLM_ERR_FORMAT, "token_embd.weight has an unusable shape");
    hp->n_vocab = te->ne[1];
    if (m->vocab && pl_vocab_n_tokens(m->vocab) != hp->n_vocab)
        return pl_fail(POCKETLLM_ERR_FORMAT, "token_embd.weight has %lld rows but the vocabulary has %d tokens",
                       (long long)hp->n_vocab, pl_vocab_n_tokens(m->vocab));
    if ((st = matrix(&ld, "token_embd.weight", hp->n_embd, hp->n_vocab, false, &L->token_embd)) ||
        (st = vector(&ld, "output_norm.weight", hp->n_embd, false, &L->output_norm)) ||
        /* llama.cpp requires qwen2moe's output matrix; the others may tie it */
        (st = matrix(&ld, "output.weight", hp->n_embd, hp->n_vocab, strcmp(ld.arch, "qwen2moe") != 0, &L->output)) ||
        (!strcmp(ld.arch, "qwen2") && (st = vector(&ld, "output.bias", hp->n_vocab, true, &L->output_bias))))
        return st;
    if (!L->output.data) L->output = L->token_embd; /* tied embeddings */
    /* llama 3 divides the rotary frequencies by per-pair factors */
    if (!strcmp(ld.arch, "llama") && (st = vector(&ld, "rope_freqs.weight", L->rope.n_rot / 2, true, &L->rope.freq_factors)))
        return st;

    L->layers = calloc((size_t)hp->n_layer, sizeof *L->layers);
    if (!L->layers) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for %lld layers", (long long)hp->n_layer);
    for (int64_t il = 0; il < hp->n_layer; il++)
        if ((st = bind_layer(&ld, il, &L->layers[il]))) return st;

    pl_model_dims *d = &m->dims;
    d->n_vocab = hp->n_vocab;
    d->n_embd = hp->n_embd;
    d->n_layer = hp->n_layer;
    d->n_ctx_train = hp->n_ctx_train;
    d->kv_dim = hp->n_head_kv * hp->head_dim;
    d->head_dim = hp->head_dim;
    d->n_deepstack = hp->n_deepstack;
    d->n_expert = hp->n_expert;
    d->n_expert_used = hp->n_expert_used;
    d->n_ff_exp = hp->n_ff_exp;
    int64_t q_dim = hp->n_head * hp->head_dim, mx = hp->n_embd;
    const int64_t widths[] = {hp->n_ff, q_dim, hp->n_ff_exp, hp->n_ff_shexp};
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) mx = widths[i] > mx ? widths[i] : mx;
    d->max_in = mx;
    return POCKETLLM_OK;
}

const pl_arch pl_arch_llama = {
    "llama", "Llama family: RMSNorm, rotary on adjacent pairs, grouped-query attention, SwiGLU",
    llama_load, llama_unload, pl_llama_forward, pl_llama_scratch_floats,
};

const pl_arch pl_arch_qwen2 = {
    "qwen2", "Qwen2: as llama with Q/K/V biases and rotary on split halves",
    llama_load, llama_unload, pl_llama_forward, pl_llama_scratch_floats,
};

const pl_arch pl_arch_qwen3 = {
    "qwen3", "Qwen3: as qwen2 without biases, with RMSNorm of each Q/K head before rotary",
    llama_load, llama_unload, pl_llama_forward, pl_llama_scratch_floats,
};

/* Qwen3-VL's text model.  Text: every position axis holds the token's
 * position, so the multi-axis rotation equals qwen3's (bit for bit, as
 * ggml computes both), and DeepStack adds the zeros llama.cpp pads token
 * embeddings with.  Images come in as embeddings with four positions per
 * token and their DeepStack sets (runtime/media_prompt.c). */
const pl_arch pl_arch_qwen3vl = {
    "qwen3vl", "Qwen3-VL text model: qwen3 with multi-axis rotary sections and DeepStack (text and images)",
    llama_load, llama_unload, pl_llama_forward, pl_llama_scratch_floats,
};

const pl_arch pl_arch_qwen2moe = {
    "qwen2moe", "Qwen2-MoE: qwen2 with a mixture of experts (softmax router, top-k) and a gated shared expert in every layer",
    llama_load, llama_unload, pl_llama_forward, pl_llama_scratch_floats,
};

const pl_arch pl_arch_qwen3moe = {
    "qwen3moe", "Qwen3-MoE (e.g. Qwen3-30B-A3B): qwen3 with a mixture of experts (softmax router, top-k, renormalised) in every layer",
    llama_load, llama_unload, pl_llama_forward, pl_llama_scratch_floats,
};
