/*
 * synth.c -- random-weight checkpoints at real model shapes.
 *
 * The named Qwen3 shapes carry the real hyperparameters of Qwen3-0.6B,
 * 1.7B, 4B and 8B (from their Hugging Face config.json files); `tiny` and
 * `small` are ours, for fast tests.  qwen3asr-0.6b / -1.7b are the text
 * models of Qwen3-ASR (Qwen3-0.6B / 1.7B widths as arch qwen3vl, written as
 * conversion/qwen3vl.py's Qwen3ASRTextModel does: no DeepStack, Qwen3-ASR's
 * audio tokens in the vocabulary, BOS = EOS = <|im_end|>, chatml).  Every
 * tensor's values come from a generator seeded by (seed, tensor name), so
 * the file does not depend on the order of generation, and the data is
 * streamed to disk in chunks so an 8B shape needs no more memory than a
 * small one.
 *
 * Mixtures of experts (qwen3moe, qwen2moe) are laid out as llama.cpp's
 * converter writes them: a router (ffn_gate_inp, f32) and each layer's
 * experts stacked in 3-D ffn_{gate,up,down}_exps tensors in place of the
 * dense FFN; qwen2moe adds Q/K/V biases and a shared expert with its
 * one-row sigmoid gate.  qwen3moe-30b-a3b and qwen2moe-a2.7b carry the
 * config.json values of Qwen3-30B-A3B and Qwen1.5-MoE-A2.7B.
 *
 * Scales keep activations O(1) through the network: matrices are uniform
 * with variance 1/fan_in, norms are 1 +- 0.1, embeddings have unit-order
 * entries -- enough spread that greedy decoding is mostly decidable.
 *
 * With a quantization recipe (params->quant) the file is the quantized rung
 * itself, written directly (synth_quant.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/error.h"
#include "base/half.h"
#include "base/rng.h"
#include "quant/types.h"
#include "synth/synth.h"

typedef struct shape {
    const char *name, *summary;
    uint32_t n_embd, n_layer, n_head, n_head_kv, head_dim, n_ff, n_vocab, n_ctx;
    const char *arch; /* the shape's own architecture (NULL: qwen3 unless --arch says otherwise) */
    bool asr;         /* a Qwen3-ASR text model (see the top of the file) */
    /* mixture of experts (0: a dense model): experts, used per token, each
     * one's FFN width, the shared expert's (qwen2moe) */
    uint32_t n_expert, n_expert_used, n_ff_exp, n_ff_shexp;
    bool untied;      /* the real model has its own output matrix */
} shape;

static const shape shapes[] = {
    {"tiny", "4 layers of 64, 4 heads (2 KV) of 16, for fast tests", 64, 4, 4, 2, 16, 192, 0, 4096, NULL, false, 0,
     0, 0, 0, false},
    {"small", "6 layers of 256, 8 heads (4 KV) of 32", 256, 6, 8, 4, 32, 704, 0, 4096, NULL, false, 0, 0, 0, 0,
     false},
    {"qwen3-0.6b", "Qwen3-0.6B: 28 layers of 1024, 16 heads (8 KV) of 128, FFN 3072", 1024, 28, 16, 8, 128, 3072,
     151936, 40960, NULL, false, 0, 0, 0, 0, false},
    {"qwen3-1.7b", "Qwen3-1.7B: 28 layers of 2048, 16 heads (8 KV) of 128, FFN 6144", 2048, 28, 16, 8, 128, 6144,
     151936, 40960, NULL, false, 0, 0, 0, 0, false},
    {"qwen3-4b", "Qwen3-4B: 36 layers of 2560, 32 heads (8 KV) of 128, FFN 9728", 2560, 36, 32, 8, 128, 9728, 151936,
     40960, NULL, false, 0, 0, 0, 0, false},
    {"qwen3-8b", "Qwen3-8B: 36 layers of 4096, 32 heads (8 KV) of 128, FFN 12288", 4096, 36, 32, 8, 128, 12288,
     151936, 40960, NULL, false, 0, 0, 0, 0, false},
    /* the text model of Qwen3-VL-2B-Instruct (its config.json text_config) */
    {"qwen3vl-2b", "Qwen3-VL-2B text: 28 layers of 2048, 16 heads (8 KV) of 128, FFN 6144, M-RoPE, 3 DeepStack",
     2048, 28, 16, 8, 128, 6144, 151936, 262144, "qwen3vl", false, 0, 0, 0, 0, false},
    /* the text models of Qwen3-ASR-0.6B / 1.7B: the Qwen3-0.6B / 1.7B widths
     * (their config.json thinker_config.text_config; context 65536) */
    {"qwen3asr-0.6b", "Qwen3-ASR-0.6B text: 28 layers of 1024, 16 heads (8 KV) of 128, FFN 3072, M-RoPE, audio tokens",
     1024, 28, 16, 8, 128, 3072, 151936, 65536, "qwen3vl", true, 0, 0, 0, 0, false},
    {"qwen3asr-1.7b", "Qwen3-ASR-1.7B text: 28 layers of 2048, 16 heads (8 KV) of 128, FFN 6144, M-RoPE, audio tokens",
     2048, 28, 16, 8, 128, 6144, 151936, 65536, "qwen3vl", true, 0, 0, 0, 0, false},
    /* mixtures of experts.  The small ones are ours: moe-small's rows are
     * whole k-quant blocks (256), so a quantized rung has no fallbacks; 8
     * experts would trigger llama.cpp's Mixtral-only recipe rules there. */
    {"moe-tiny", "qwen3moe: 4 layers of 64, 4 heads (2 KV) of 16, 8 experts (2 used) of FFN 32, for fast tests", 64,
     4, 4, 2, 16, 64, 0, 4096, "qwen3moe", false, 8, 2, 32, 0, false},
    {"moe-small", "qwen3moe: 4 layers of 256, 8 heads (4 KV) of 32, 16 experts (4 used) of FFN 256", 256, 4, 8, 4, 32,
     1024, 0, 4096, "qwen3moe", false, 16, 4, 256, 0, false},
    {"qwen2moe-tiny", "qwen2moe: 4 layers of 64, 4 heads (4 KV) of 16, 6 experts (2 used) of FFN 32, shared FFN 64",
     64, 4, 4, 4, 16, 64, 0, 4096, "qwen2moe", false, 6, 2, 32, 64, true},
    /* Qwen3-30B-A3B's and Qwen1.5-MoE-A2.7B's config.json (feed_forward_length
     * is their intermediate_size, as the converter writes it) */
    {"qwen3moe-30b-a3b", "Qwen3-30B-A3B: 48 layers of 2048, 32 heads (4 KV) of 128, 128 experts (8 used) of FFN 768",
     2048, 48, 32, 4, 128, 6144, 151936, 40960, "qwen3moe", false, 128, 8, 768, 0, true},
    {"qwen2moe-a2.7b",
     "Qwen1.5-MoE-A2.7B: 24 layers of 2048, 16 heads (16 KV) of 128, 60 experts (4 used) of FFN 1408, shared 5632",
     2048, 24, 16, 16, 128, 5632, 151936, 8192, "qwen2moe", false, 60, 4, 1408, 5632, true},
};
#define N_SHAPES (sizeof shapes / sizeof shapes[0])

const char *pocketllm_synth_shape_name(uint32_t i) { return i < N_SHAPES ? shapes[i].name : NULL; }
const char *pocketllm_synth_shape_summary(uint32_t i) { return i < N_SHAPES ? shapes[i].summary : NULL; }

pocketllm_synth_params pocketllm_synth_default_params(void) {
    pocketllm_synth_params p;
    memset(&p, 0, sizeof p);
    p.arch = NULL; /* the shape's architecture, else qwen3 */
    p.type = PL_TYPE_F32;
    return p;
}

/* The resolved configuration. */
typedef struct config {
    const char *arch; /* qwen3, qwen3vl, llama, qwen3moe or qwen2moe */
    bool qwen3;       /* per-head Q/K norm: qwen3, qwen3vl, qwen3moe */
    bool qwen;        /* Qwen's rope base and rms epsilon */
    bool vl;          /* qwen3vl: M-RoPE sections and DeepStack count */
    bool asr;         /* Qwen3-ASR: no DeepStack, its tokens and template */
    bool moe;         /* routed experts in place of the dense FFN */
    bool qwen2moe;    /* Q/K/V biases and a gated shared expert */
    shape s;
    uint32_t type;    /* the matrices' type before any quantized rung */
    bool untied;
} config;

static const char *const archs[] = {"qwen3", "qwen3vl", "llama", "qwen3moe", "qwen2moe"};

/* The experts: the shape's, overridden; refusals in one line. */
static pocketllm_status resolve_moe(const pocketllm_synth_params *p, config *c) {
    shape *s = &c->s;
    bool asked = p->n_expert || p->n_expert_used || p->n_ff_exp || p->n_ff_shexp;
    if (!c->moe) {
        if (s->n_expert)
            return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "synth: shape %s is a mixture of experts: its "
                           "architecture is qwen3moe or qwen2moe, not %s", s->name, c->arch);
        if (asked)
            return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "synth: experts need a mixture-of-experts architecture "
                           "(qwen3moe or qwen2moe), not %s", c->arch);
        return POCKETLLM_OK;
    }
    if (p->n_ff_shexp && !c->qwen2moe)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "synth: %s has no shared expert (a shared FFN width is for "
                       "qwen2moe)", c->arch);
    if (p->n_expert) s->n_expert = p->n_expert;
    if (p->n_expert_used) s->n_expert_used = p->n_expert_used;
    if (p->n_ff_exp) s->n_ff_exp = p->n_ff_exp;
    if (p->n_ff_shexp) s->n_ff_shexp = p->n_ff_shexp;
    if (!c->qwen2moe) s->n_ff_shexp = 0; /* a qwen2moe shape written as qwen3moe drops it */
    if (!s->n_expert || !s->n_expert_used)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "synth: %s needs an expert count and the experts used per "
                       "token (at least 1 each)", c->arch);
    if (s->n_expert > 1024) /* llama.cpp's LLAMA_MAX_EXPERTS */
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "synth: %u experts: llama.cpp takes at most 1024", s->n_expert);
    if (s->n_expert_used > s->n_expert)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "synth: %u experts used per token, but only %u experts",
                       s->n_expert_used, s->n_expert);
    /* llama.cpp's own default when a file has no expert width */
    if (!s->n_ff_exp) s->n_ff_exp = s->n_ff / s->n_expert_used;
    if (!s->n_ff_exp)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "synth: %s needs the experts' FFN width", c->arch);
    /* the converter writes intermediate_size, which is this for both real models */
    if (!s->n_ff) s->n_ff = s->n_ff_exp * s->n_expert_used;
    if (c->qwen2moe && !s->n_ff_shexp) s->n_ff_shexp = s->n_ff;
    if (s->n_ff_exp > 262144 || s->n_ff_shexp > 262144 || s->n_ff > 262144)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "synth: dimensions beyond any real model");
    return POCKETLLM_OK;
}

static pocketllm_status resolve(const pocketllm_synth_params *p, config *c) {
    memset(c, 0, sizeof *c);
    const shape *named = NULL;
    for (size_t i = 0; p->shape && i < N_SHAPES && !named; i++)
        if (!strcmp(shapes[i].name, p->shape)) named = &shapes[i];
    /* a shape of another architecture brings its own unless --arch names one */
    const char *arch = p->arch ? p->arch : named && named->arch ? named->arch : "qwen3";
    for (size_t i = 0; i < sizeof archs / sizeof archs[0] && !c->arch; i++)
        if (!strcmp(arch, archs[i])) c->arch = archs[i];
    if (!c->arch)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT,
                       "synth: unknown architecture '%s' (qwen3, qwen3vl, llama, qwen3moe or qwen2moe)", arch);
    c->vl = strcmp(arch, "qwen3vl") == 0;
    c->qwen2moe = strcmp(arch, "qwen2moe") == 0;
    c->moe = c->qwen2moe || strcmp(arch, "qwen3moe") == 0;
    c->qwen3 = c->vl || strcmp(arch, "qwen3") == 0 || strcmp(arch, "qwen3moe") == 0;
    c->qwen = c->qwen3 || c->qwen2moe;
    if (p->shape) {
        if (!named) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "synth: unknown shape '%s'", p->shape);
        c->s = *named;
        c->asr = named->asr;
    } else {
        c->s.name = "custom";
        c->s.n_ctx = 4096;
    }
    /* explicit dimensions override the named shape's */
    if (p->n_embd) c->s.n_embd = p->n_embd;
    if (p->n_layer) c->s.n_layer = p->n_layer;
    if (p->n_head) c->s.n_head = p->n_head;
    if (p->n_head_kv) c->s.n_head_kv = p->n_head_kv;
    if (p->head_dim) c->s.head_dim = p->head_dim;
    if (p->n_ff) c->s.n_ff = p->n_ff;
    pocketllm_status st = resolve_moe(p, c);
    if (st) return st;
    const shape *s = &c->s;
    if (!s->n_embd || !s->n_layer || !s->n_head || !s->n_head_kv || !s->head_dim || !s->n_ff)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "synth: without --shape every dimension must be given "
                       "(n_embd, n_layer, n_head, n_head_kv, head_dim, n_ff)");
    if (s->n_head % s->n_head_kv)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "synth: n_head %u is not a multiple of n_head_kv %u", s->n_head,
                       s->n_head_kv);
    if (s->head_dim % 2)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "synth: head_dim %u must be even (rotary pairs)", s->head_dim);
    if (s->n_embd > 65536 || s->n_ff > 262144 || s->n_layer > 1024 || s->n_head > 1024 || s->head_dim > 1024)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "synth: dimensions beyond any real model");
    /* llama.cpp's qwen2moe makes attn_q and attn_output n_embd square */
    if (c->qwen2moe && s->n_head * s->head_dim != s->n_embd)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "synth: qwen2moe needs n_head x head_dim = n_embd (%u x %u != %u)",
                       s->n_head, s->head_dim, s->n_embd);
    if (p->type != PL_TYPE_F32 && p->type != PL_TYPE_F16 && p->type != PL_TYPE_BF16)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "synth: weight type must be f32, f16 or bf16");
    /* a quantized rung is planned from the f16 file the converter would write */
    c->type = p->quant ? PL_TYPE_F16 : p->type;
    /* llama.cpp's qwen2moe requires output.weight */
    c->untied = p->untied != 0 || s->untied || c->qwen2moe;
    uint32_t have;
    if ((st = pl_synth_vocab_count(p->vocab_path, &have))) return st;
    if (have > c->s.n_vocab) c->s.n_vocab = have;
    return POCKETLLM_OK;
}

static size_t plan_tensors(const config *c, pl_synth_tensor *t) {
    const shape *s = &c->s;
    size_t n = 0;
    int64_t q = (int64_t)s->n_head * s->head_dim, kv = (int64_t)s->n_head_kv * s->head_dim;
    /* vectors (and the router, which llama.cpp never quantizes) are f32, as
     * the converter writes them */
#define ADD(nm, nd, e0, e1, e2, f)                                                              \
    do {                                                                                        \
        if (t) {                                                                                \
            snprintf(t[n].name, sizeof t[n].name, "%s", nm);                                     \
            t[n].n_dims = nd, t[n].ne[0] = e0, t[n].ne[1] = e1, t[n].ne[2] = e2, t[n].fill = f; \
            t[n].type = nd == 1 || f == PL_FILL_ROUTER ? PL_TYPE_F32 : c->type;                 \
        }                                                                                       \
        n++;                                                                                    \
    } while (0)
    ADD("token_embd.weight", 2, s->n_embd, s->n_vocab, 1, PL_FILL_EMBED);
    ADD("output_norm.weight", 1, s->n_embd, 1, 1, PL_FILL_NORM);
    if (c->untied) ADD("output.weight", 2, s->n_embd, s->n_vocab, 1, PL_FILL_MATRIX);
    for (uint32_t l = 0; l < s->n_layer; l++) {
        char nm[64];
#define LAYER(suffix, nd, e0, e1, e2, f)                               \
    do {                                                               \
        snprintf(nm, sizeof nm, "blk.%u.%s", l, suffix);               \
        ADD(nm, nd, e0, e1, e2, f);                                    \
    } while (0)
        LAYER("attn_norm.weight", 1, s->n_embd, 1, 1, PL_FILL_NORM);
        LAYER("attn_q.weight", 2, s->n_embd, q, 1, PL_FILL_MATRIX);
        LAYER("attn_k.weight", 2, s->n_embd, kv, 1, PL_FILL_MATRIX);
        LAYER("attn_v.weight", 2, s->n_embd, kv, 1, PL_FILL_MATRIX);
        if (c->qwen2moe) {
            LAYER("attn_q.bias", 1, q, 1, 1, PL_FILL_BIAS);
            LAYER("attn_k.bias", 1, kv, 1, 1, PL_FILL_BIAS);
            LAYER("attn_v.bias", 1, kv, 1, 1, PL_FILL_BIAS);
        }
        LAYER("attn_output.weight", 2, q, s->n_embd, 1, PL_FILL_MATRIX);
        if (c->qwen3) {
            LAYER("attn_q_norm.weight", 1, s->head_dim, 1, 1, PL_FILL_NORM);
            LAYER("attn_k_norm.weight", 1, s->head_dim, 1, 1, PL_FILL_NORM);
        }
        LAYER("ffn_norm.weight", 1, s->n_embd, 1, 1, PL_FILL_NORM);
        if (c->moe) {
            /* experts stacked along ne[2], as the converter merges them */
            LAYER("ffn_gate_inp.weight", 2, s->n_embd, s->n_expert, 1, PL_FILL_ROUTER);
            LAYER("ffn_gate_exps.weight", 3, s->n_embd, s->n_ff_exp, s->n_expert, PL_FILL_MATRIX);
            LAYER("ffn_up_exps.weight", 3, s->n_embd, s->n_ff_exp, s->n_expert, PL_FILL_MATRIX);
            LAYER("ffn_down_exps.weight", 3, s->n_ff_exp, s->n_embd, s->n_expert, PL_FILL_MATRIX);
            if (c->qwen2moe) {
                /* the shared expert's gate is one row: its logit is O(1), so the sigmoid spreads */
                LAYER("ffn_gate_inp_shexp.weight", 1, s->n_embd, 1, 1, PL_FILL_MATRIX);
                LAYER("ffn_gate_shexp.weight", 2, s->n_embd, s->n_ff_shexp, 1, PL_FILL_MATRIX);
                LAYER("ffn_up_shexp.weight", 2, s->n_embd, s->n_ff_shexp, 1, PL_FILL_MATRIX);
                LAYER("ffn_down_shexp.weight", 2, s->n_ff_shexp, s->n_embd, 1, PL_FILL_MATRIX);
            }
        } else {
            LAYER("ffn_gate.weight", 2, s->n_embd, s->n_ff, 1, PL_FILL_MATRIX);
            LAYER("ffn_up.weight", 2, s->n_embd, s->n_ff, 1, PL_FILL_MATRIX);
            LAYER("ffn_down.weight", 2, s->n_ff, s->n_embd, 1, PL_FILL_MATRIX);
        }
#undef LAYER
    }
#undef ADD
    return n;
}

static pocketllm_status set_hparams(pocketllm_gguf_writer *w, const config *c, uint64_t seed, uint32_t ftype,
                                    bool quantized) {
    const shape *s = &c->s;
    const char *a = c->arch;
    char key[96], name[128];
    pocketllm_status st = pocketllm_gguf_writer_set_str(w, "general.architecture", a);
    snprintf(name, sizeof name, "synth %s %s seed %llu", a, s->name, (unsigned long long)seed);
    if (!st) st = pocketllm_gguf_writer_set_str(w, "general.name", name);
    if (!st) st = pocketllm_gguf_writer_set_u32(w, "general.file_type", ftype);
    /* what llama-quantize records (GGML_QNT_VERSION) */
    if (!st && quantized)
        st = pocketllm_gguf_writer_set_u32(w, "general.quantization_version", 2);
#define U32(k, v)                                                     \
    if (!st) {                                                        \
        snprintf(key, sizeof key, "%s.%s", a, k);                     \
        st = pocketllm_gguf_writer_set_u32(w, key, v);                \
    }
#define F32(k, v)                                                     \
    if (!st) {                                                        \
        snprintf(key, sizeof key, "%s.%s", a, k);                     \
        st = pocketllm_gguf_writer_set_f32(w, key, v);                \
    }
    U32("context_length", s->n_ctx);
    U32("embedding_length", s->n_embd);
    U32("block_count", s->n_layer);
    U32("feed_forward_length", s->n_ff);
    U32("attention.head_count", s->n_head);
    U32("attention.head_count_kv", s->n_head_kv);
    U32("attention.key_length", s->head_dim);
    U32("attention.value_length", s->head_dim);
    U32("rope.dimension_count", s->head_dim);
    /* Qwen3-VL's rope_theta is 5e6; Qwen3-ASR keeps Qwen3's 1e6 */
    F32("rope.freq_base", c->vl && !c->asr ? 5000000.0f : c->qwen ? 1000000.0f : 10000.0f);
    F32("attention.layer_norm_rms_epsilon", c->qwen ? 1e-6f : 1e-5f);
    U32("vocab_size", s->n_vocab);
    if (c->moe) {
        U32("expert_count", s->n_expert);
        U32("expert_used_count", s->n_expert_used);
        U32("expert_feed_forward_length", s->n_ff_exp);
        if (c->qwen2moe) U32("expert_shared_feed_forward_length", s->n_ff_shexp);
    }
    if (c->vl) {
        /* M-RoPE: rotary pairs per axis (time, height, width, extra) in
         * Qwen3-VL's proportions (24/20/20 of 64 pairs) -- what the
         * converter writes as rope.dimension_sections -- and the DeepStack
         * feature sets the vision tower adds to the first layers (3 for the
         * real models; fewer than the layers: llama.cpp's graph cannot add
         * one to the last layer, whose rows it has already cut to the
         * outputs) */
        const int32_t pairs = (int32_t)s->head_dim / 2, hw = pairs * 20 / 64;
        const int32_t sections[4] = {pairs - 2 * hw, hw, hw, 0};
        if (!st) {
            snprintf(key, sizeof key, "%s.rope.dimension_sections", a);
            st = pocketllm_gguf_writer_set_array(w, key, POCKETLLM_GGUF_INT32, sections, 4);
        }
        /* Qwen3-ASR: the converter writes 0 (an audio tower has no taps) */
        U32("n_deepstack_layers", c->asr ? 0 : s->n_layer <= 3 ? s->n_layer - 1 : 3);
    }
#undef U32
#undef F32
    return st;
}

float pl_synth_scale(const pl_synth_tensor *t) {
    switch (t->fill) {
    case PL_FILL_MATRIX: return sqrtf(3.0f / (float)t->ne[0]);
    /* std 2 / sqrt(fan_in): unit-RMS inputs give router logits of std ~2,
     * so the k-th and (k+1)-th experts are rarely a near-tie and the
     * experts near the cut carry little of the softmax weight */
    case PL_FILL_ROUTER: return sqrtf(12.0f / (float)t->ne[0]);
    case PL_FILL_EMBED: return 1.0f;
    case PL_FILL_BIAS: return 0.5f;
    default: return 0.1f;
    }
}

uint64_t pl_synth_elements(const pl_synth_tensor *t) {
    return (uint64_t)t->ne[0] * (uint64_t)t->ne[1] * (uint64_t)t->ne[2];
}

/* Fill n float values of tensor t, continuing its generator, converted to
 * its type, into out. */
static void fill_chunk(const pl_synth_tensor *t, pl_rng *r, uint64_t n, void *out) {
    const float scale = pl_synth_scale(t);
    for (uint64_t i = 0; i < n; i++) {
        float v = (2.0f * pl_rng_uniform(r) - 1.0f) * scale;
        if (t->fill == PL_FILL_NORM) v += 1.0f;
        if (t->type == PL_TYPE_F32) ((float *)out)[i] = v;
        else if (t->type == PL_TYPE_F16) ((uint16_t *)out)[i] = pl_f32_to_f16(v);
        else ((uint16_t *)out)[i] = pl_f32_to_bf16(v);
    }
}

static uint64_t tensor_bytes(const pl_synth_tensor *t) {
    uint64_t b = 0;
    pl_type_row_bytes(t->type, pl_synth_elements(t), &b);
    return b;
}

/* The configuration and every tensor with its final type. */
static pocketllm_status make_plan(const pocketllm_synth_params *p, config *c, pl_synth_tensor **plan, size_t *n_plan,
                                  uint32_t *ftype) {
    pocketllm_status st = resolve(p, c);
    if (st) return st;
    size_t n = plan_tensors(c, NULL);
    pl_synth_tensor *t = calloc(n, sizeof *t);
    if (!t) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    plan_tensors(c, t);
    *ftype = c->type == PL_TYPE_F32 ? 0 : c->type == PL_TYPE_F16 ? 1 : 32; /* LLAMA_FTYPE_* */
    if (p->quant) {
        const pl_synth_facts f = {c->arch, c->s.n_layer, c->s.n_head, c->s.n_head_kv, c->s.n_expert,
                                   c->s.n_expert_used};
        if ((st = pl_synth_quant_types(p->quant, &f, t, n, ftype))) {
            free(t);
            return st;
        }
    }
    *plan = t;
    *n_plan = n;
    return POCKETLLM_OK;
}

pocketllm_status pocketllm_synth_size(const pocketllm_synth_params *p, uint64_t *bytes) {
    if (!p || !bytes) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "synth: no parameters");
    config c;
    pl_synth_tensor *t;
    size_t n;
    uint32_t ftype;
    pocketllm_status st = make_plan(p, &c, &t, &n, &ftype);
    if (st) return st;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        pl_add_u64(total, tensor_bytes(&t[i]), &total);
        pl_align_up_u64(total, 32, &total);
    }
    free(t);
    *bytes = total; /* tensor data; the header adds a little (the vocabulary) */
    return POCKETLLM_OK;
}

/* Stream tensor t's data: floats element by element, quantized types block
 * by block from the pools. */
static pocketllm_status write_tensor(pocketllm_gguf_writer *w, const pl_synth_tensor *t, uint64_t seed,
                                     pl_synth_pools *pools, void *buf, size_t buf_bytes, uint64_t *done, uint64_t total,
                                     const pocketllm_synth_params *p) {
    pl_rng r;
    /* seed by (seed, name): independent of the order tensors are made in */
    pl_rng_seed(&r, seed ^ pl_hash_bytes(t->name, strlen(t->name)));
    const pl_type_traits *tt = pl_type_get(t->type);
    const uint64_t units = pl_synth_elements(t) / tt->block; /* elements or blocks */
    const uint64_t per = buf_bytes / tt->bytes;
    pocketllm_status st = POCKETLLM_OK;
    for (uint64_t off = 0; off < units && !st; off += per) {
        uint64_t k = units - off < per ? units - off : per;
        if (tt->quantized) st = pl_synth_quant_fill(pools, t->type, pl_synth_scale(t), &r, k, buf);
        else fill_chunk(t, &r, k, buf);
        if (!st) st = pocketllm_gguf_writer_write_data(w, buf, (size_t)(k * tt->bytes));
        *done += k * tt->bytes;
        if (p->progress) p->progress(p->progress_user, *done, total);
    }
    return st;
}

pocketllm_status pocketllm_synth(const pocketllm_synth_params *p, const char *path) {
    if (!p || !path) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "synth: no parameters or path");
    config c;
    pl_synth_tensor *t = NULL;
    size_t n = 0;
    uint32_t ftype;
    pocketllm_status st = make_plan(p, &c, &t, &n, &ftype);
    if (st) return st;
    pocketllm_gguf_writer *w = NULL;
    pl_synth_pools *pools = NULL;
    enum { BUF_BYTES = 4 << 20 };
    void *buf = malloc(BUF_BYTES);
    if (!buf) st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    if (!st && p->quant) st = pl_synth_pools_new(p->seed, &pools);
    if (!st) st = pocketllm_gguf_writer_new(&w);
    if (!st) st = set_hparams(w, &c, p->seed, ftype, p->quant != NULL);
    if (!st) st = pl_synth_vocab_write(w, p->vocab_path, p->template_path, c.s.n_vocab, c.asr);
    for (size_t i = 0; i < n && !st; i++)
        st = pocketllm_gguf_writer_add_tensor(w, t[i].name, t[i].type, t[i].n_dims, t[i].ne, NULL);
    uint64_t total = 0, done = 0;
    for (size_t i = 0; i < n; i++) total += tensor_bytes(&t[i]);
    if (!st) st = pocketllm_gguf_writer_begin(w, path);
    for (size_t i = 0; i < n && !st; i++) st = write_tensor(w, &t[i], p->seed, pools, buf, BUF_BYTES, &done, total, p);
    if (!st) st = pocketllm_gguf_writer_finish(w);
    pocketllm_gguf_writer_free(w);
    pl_synth_pools_free(pools);
    free(buf);
    free(t);
    return st;
}
