/*
 * tiny_model.c -- write a small random-weight llama / qwen2 / qwen3 /
 * qwen2moe / qwen3moe checkpoint through the public GGUF writer (see tiny_model.h).  Values
 * are uniform with variance 1/fan_in for matrices, 1 +- 0.1 for norms,
 * +-1 for embeddings and +-0.1 for biases, from a generator seeded by the
 * spec's seed, so a spec always gives the same file.
 */
#include "tiny_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/half.h"
#include "base/rng.h"
#include "quant/types.h"

tiny_model_spec tiny_model_default(void) {
    tiny_model_spec s;
    memset(&s, 0, sizeof s);
    s.arch = "qwen3";
    s.n_embd = 64;
    s.n_layer = 2;
    s.n_head = 4;
    s.n_head_kv = 2;
    s.head_dim = 16;
    s.n_ff = 96;
    s.n_vocab = 300;
    s.type = PL_TYPE_F32;
    s.n_expert = 8;
    s.n_expert_used = 2;
    s.n_ff_exp = 32;
    s.n_ff_shexp = 48;
    s.seed = 1;
    return s;
}

/* Everything the writer must keep alive until it writes. */
typedef struct keep {
    void **p;
    size_t n;
} keep;

static void *hold(keep *k, void *p) {
    if (!p) return NULL;
    void **g = realloc(k->p, (k->n + 1) * sizeof *g);
    if (!g) {
        free(p);
        return NULL;
    }
    k->p = g;
    k->p[k->n++] = p;
    return p;
}

/* A tensor of n0 x n1 x n2 (a vector when n1 is 0, a matrix when n2 is 0)
 * filled uniformly in [lo, hi]. */
static pocketllm_status add3(pocketllm_gguf_writer *w, keep *k, pl_rng *r, const char *name, int64_t n0, int64_t n1,
                             int64_t n2, uint32_t type, float lo, float hi) {
    const uint32_t n_dims = n2 ? 3 : n1 ? 2 : 1;
    const int64_t mats = n2 ? n2 : 1;
    if (!n1) n1 = 1;
    n1 *= mats; /* rows of every matrix one after another */
    const int64_t n = n0 * n1;
    float *f = malloc((size_t)n * sizeof *f);
    if (!f) return POCKETLLM_ERR_NO_MEMORY;
    for (int64_t i = 0; i < n; i++) f[i] = lo + (hi - lo) * pl_rng_uniform(r);
    void *data = f;
    if (type != PL_TYPE_F32) {
        uint64_t row;
        const pl_type_traits *t = pl_type_get(type);
        if (!pl_type_row_bytes(type, (uint64_t)n0, &row)) {
            free(f);
            return POCKETLLM_ERR_INVALID_ARGUMENT;
        }
        uint8_t *q = malloc((size_t)(row * (uint64_t)n1));
        if (!q) {
            free(f);
            return POCKETLLM_ERR_NO_MEMORY;
        }
        for (int64_t j = 0; j < n1; j++) {
            const float *src = f + j * n0;
            uint8_t *dst = q + (size_t)j * row;
            if (type == PL_TYPE_F16)
                for (int64_t i = 0; i < n0; i++) ((uint16_t *)dst)[i] = pl_f32_to_f16(src[i]);
            else if (type == PL_TYPE_BF16)
                for (int64_t i = 0; i < n0; i++) ((uint16_t *)dst)[i] = pl_f32_to_bf16(src[i]);
            else if (t && t->from_float)
                t->from_float(src, dst, n0, NULL);
            else {
                free(f);
                free(q);
                return POCKETLLM_ERR_UNSUPPORTED;
            }
        }
        free(f);
        data = q;
    }
    if (!hold(k, data)) return POCKETLLM_ERR_NO_MEMORY;
    const int64_t ne[3] = {n0, n1 / mats, mats};
    return pocketllm_gguf_writer_add_tensor(w, name, type, n_dims, ne, data);
}

static pocketllm_status add(pocketllm_gguf_writer *w, keep *k, pl_rng *r, const char *name, int64_t n0, int64_t n1,
                            uint32_t type, float lo, float hi) {
    return add3(w, k, r, name, n0, n1, 0, type, lo, hi);
}

static pocketllm_status set_u32(pocketllm_gguf_writer *w, const char *arch, const char *key, int64_t v) {
    char k[128];
    snprintf(k, sizeof k, "%s.%s", arch, key);
    return pocketllm_gguf_writer_set_u32(w, k, (uint32_t)v);
}

static pocketllm_status set_f32(pocketllm_gguf_writer *w, const char *arch, const char *key, float v) {
    char k[128];
    snprintf(k, sizeof k, "%s.%s", arch, key);
    return pocketllm_gguf_writer_set_f32(w, k, v);
}

/* A MoE layer's FFN: the router (spread wide enough that its top-k is
 * rarely a near-tie), the experts, and qwen2moe's shared expert. */
static pocketllm_status experts(pocketllm_gguf_writer *w, keep *k, pl_rng *r, const tiny_model_spec *s, int64_t l) {
    const int64_t d = s->n_embd, f = s->n_ff_exp ? s->n_ff_exp : s->n_ff / (s->n_expert_used ? s->n_expert_used : 1);
    const int64_t ne = s->n_expert_tensors ? s->n_expert_tensors : s->n_expert;
    const int64_t fs = s->n_ff_shexp ? s->n_ff_shexp : s->n_ff;
    const float m_in = sqrtf(3.0f / (float)d), m_f = sqrtf(3.0f / (float)f), m_fs = sqrtf(3.0f / (float)fs);
    char n[96];
    pocketllm_status st;
#define T3(suffix, n0, n1, n2, type, lo, hi) \
    (snprintf(n, sizeof n, "blk.%lld." suffix, (long long)l), add3(w, k, r, n, n0, n1, n2, type, lo, hi))
    if ((st = T3("ffn_gate_inp.weight", d, s->n_expert, 0, PL_TYPE_F32, -4 * m_in, 4 * m_in)) ||
        (st = T3("ffn_gate_exps.weight", d, f, ne, s->type, -m_in, m_in)) ||
        (st = T3("ffn_up_exps.weight", d, f, ne, s->type, -m_in, m_in)) ||
        (st = T3("ffn_down_exps.weight", f, d, ne, s->type, -m_f, m_f)))
        return st;
    if (!strcmp(s->arch, "qwen2moe") &&
        ((st = T3("ffn_gate_inp_shexp.weight", d, 0, 0, PL_TYPE_F32, -m_in, m_in)) ||
         (st = T3("ffn_gate_shexp.weight", d, fs, 0, s->type, -m_in, m_in)) ||
         (st = T3("ffn_up_shexp.weight", d, fs, 0, s->type, -m_in, m_in)) ||
         (st = T3("ffn_down_shexp.weight", fs, d, 0, s->type, -m_fs, m_fs))))
        return st;
#undef T3
    return POCKETLLM_OK;
}

pocketllm_status tiny_model_write(const tiny_model_spec *s, const char *path) {
    pocketllm_gguf_writer *w = NULL;
    pocketllm_gguf *voc = NULL;
    keep k = {NULL, 0};
    pl_rng r;
    pl_rng_seed(&r, s->seed);
    pocketllm_status st = pocketllm_gguf_writer_new(&w);
    if (st) return st;
    const char *a = s->arch;
    const bool qwen = strcmp(a, "llama") != 0, moe = strstr(a, "moe") != NULL, qwen2moe = !strcmp(a, "qwen2moe");
    const bool qk_norm = !strcmp(a, "qwen3") || !strcmp(a, "qwen3moe");
    int64_t n_vocab = s->n_vocab;
    if (s->vocab_from) {
        if ((st = pocketllm_gguf_open(s->vocab_from, &voc))) goto done;
        const pocketllm_gguf_value *tok = pocketllm_gguf_find(voc, "tokenizer.ggml.tokens");
        if (!tok) {
            st = POCKETLLM_ERR_FORMAT;
            goto done;
        }
        n_vocab = (int64_t)pocketllm_gguf_array_len(tok);
    }
    const int64_t n_rot = s->n_rot ? s->n_rot : s->head_dim;
    const int64_t q = s->n_head * s->head_dim, kv = s->n_head_kv * s->head_dim;
    st = pocketllm_gguf_writer_set_str(w, "general.architecture", a);
    if (!st) st = pocketllm_gguf_writer_set_str(w, "general.name", "tiny test model");
    if (!st) st = set_u32(w, a, "context_length", s->n_ctx ? s->n_ctx : 4096);
    if (!st) st = set_u32(w, a, "embedding_length", s->n_embd);
    if (!st) st = set_u32(w, a, "block_count", s->n_layer);
    if (!st) st = set_u32(w, a, "feed_forward_length", s->n_ff);
    if (!st && moe) st = set_u32(w, a, "expert_count", s->n_expert);
    if (!st && moe) st = set_u32(w, a, "expert_used_count", s->n_expert_used);
    if (!st && moe && s->n_ff_exp) st = set_u32(w, a, "expert_feed_forward_length", s->n_ff_exp);
    if (!st && qwen2moe && s->n_ff_shexp) st = set_u32(w, a, "expert_shared_feed_forward_length", s->n_ff_shexp);
    if (!st) st = set_u32(w, a, "attention.head_count", s->n_head);
    if (!st) st = set_u32(w, a, "attention.head_count_kv", s->n_head_kv);
    if (!st) st = set_u32(w, a, "attention.key_length", s->head_dim);
    if (!st) st = set_u32(w, a, "attention.value_length", s->head_dim);
    if (!st) st = set_u32(w, a, "rope.dimension_count", n_rot);
    if (!st) st = set_f32(w, a, "rope.freq_base", s->freq_base > 0 ? s->freq_base : qwen ? 1e6f : 1e4f);
    if (!st) st = set_f32(w, a, "attention.layer_norm_rms_epsilon", qwen ? 1e-6f : 1e-5f);
    for (uint64_t i = 0; !st && voc && i < pocketllm_gguf_kv_count(voc); i++) {
        const char *key = pocketllm_gguf_kv_key(voc, i);
        if (!strncmp(key, "tokenizer.", 10))
            st = pocketllm_gguf_writer_set_value(w, key, pocketllm_gguf_kv_value(voc, i));
    }
    const float m_in = sqrtf(3.0f / (float)s->n_embd), m_q = sqrtf(3.0f / (float)q), m_ff = sqrtf(3.0f / (float)s->n_ff);
    if (!st) st = add(w, &k, &r, "token_embd.weight", s->n_embd, n_vocab, s->type, -1, 1);
    if (!st) st = add(w, &k, &r, "output_norm.weight", s->n_embd, 0, PL_TYPE_F32, 0.9f, 1.1f);
    if (!st && !s->tied) st = add(w, &k, &r, "output.weight", s->n_embd, n_vocab, s->type, -m_in, m_in);
    if (!st && s->rope_freqs) st = add(w, &k, &r, "rope_freqs.weight", n_rot / 2, 0, PL_TYPE_F32, 1.0f, 8.0f);
    for (int64_t l = 0; !st && l < s->n_layer; l++) {
        char n[96];
#define T(suffix, n0, n1, type, lo, hi) \
    (snprintf(n, sizeof n, "blk.%lld." suffix, (long long)l), add(w, &k, &r, n, n0, n1, type, lo, hi))
        st = T("attn_norm.weight", s->n_embd, 0, PL_TYPE_F32, 0.9f, 1.1f);
        if (!st) st = T("attn_q.weight", s->n_embd, q, s->type, -m_in, m_in);
        if (!st) st = T("attn_k.weight", s->n_embd, kv, s->type, -m_in, m_in);
        if (!st) st = T("attn_v.weight", s->n_embd, kv, s->type, -m_in, m_in);
        if (!st && s->qkv_bias) st = T("attn_q.bias", q, 0, PL_TYPE_F32, -0.1f, 0.1f);
        if (!st && s->qkv_bias) st = T("attn_k.bias", kv, 0, PL_TYPE_F32, -0.1f, 0.1f);
        if (!st && s->qkv_bias) st = T("attn_v.bias", kv, 0, PL_TYPE_F32, -0.1f, 0.1f);
        if (!st && qk_norm) st = T("attn_q_norm.weight", s->head_dim, 0, PL_TYPE_F32, 0.9f, 1.1f);
        if (!st && qk_norm) st = T("attn_k_norm.weight", s->head_dim, 0, PL_TYPE_F32, 0.9f, 1.1f);
        if (!st) st = T("attn_output.weight", q, s->n_embd, s->type, -m_q, m_q);
        if (!st) st = T("ffn_norm.weight", s->n_embd, 0, PL_TYPE_F32, 0.9f, 1.1f);
        if (!st && moe) {
            st = experts(w, &k, &r, s, l);
            continue;
        }
        if (!st) st = T("ffn_gate.weight", s->n_embd, s->n_ff, s->type, -m_in, m_in);
        if (!st) st = T("ffn_up.weight", s->n_embd, s->n_ff, s->type, -m_in, m_in);
        if (!st) st = T("ffn_down.weight", s->n_ff, s->n_embd, s->type, -m_ff, m_ff);
#undef T
    }
    if (!st) st = pocketllm_gguf_writer_write(w, path);
done:
    pocketllm_gguf_writer_free(w);
    pocketllm_gguf_close(voc);
    for (size_t i = 0; i < k.n; i++) free(k.p[i]);
    free(k.p);
    return st;
}
