/*
 * synth.c -- random-weight checkpoints at real model shapes.
 *
 * The named Qwen3 shapes carry the real hyperparameters of Qwen3-0.6B,
 * 1.7B, 4B and 8B (from their Hugging Face config.json files); `tiny` and
 * `small` are ours, for fast tests.  qwen3asr-0.6b / -1.7b are the text
 * models of Qwen3-ASR (Qwen3-0.6B / 1.7B widths as arch qwen3vl, written as
 * conversion/qwen3vl.py's Qwen3ASRTextModel does: no DeepStack, Qwen3-ASR's
 * audio tokens in the vocabulary, BOS = EOS = <|im_end|>, chatml).  Every tensor's values come from a
 * generator seeded by (seed, tensor name), so the file does not depend on
 * the order of generation, and the data is streamed to disk in chunks so
 * an 8B shape needs no more memory than a small one.
 *
 * Scales keep activations O(1) through the network: matrices are uniform
 * with variance 1/fan_in, norms are 1 +- 0.1, embeddings have unit-order
 * entries -- enough spread that greedy decoding is mostly decidable.
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
} shape;

static const shape shapes[] = {
    {"tiny", "4 layers of 64, 4 heads (2 KV) of 16, for fast tests", 64, 4, 4, 2, 16, 192, 0, 4096, NULL, false},
    {"small", "6 layers of 256, 8 heads (4 KV) of 32", 256, 6, 8, 4, 32, 704, 0, 4096, NULL, false},
    {"qwen3-0.6b", "Qwen3-0.6B: 28 layers of 1024, 16 heads (8 KV) of 128, FFN 3072", 1024, 28, 16, 8, 128, 3072,
     151936, 40960, NULL, false},
    {"qwen3-1.7b", "Qwen3-1.7B: 28 layers of 2048, 16 heads (8 KV) of 128, FFN 6144", 2048, 28, 16, 8, 128, 6144,
     151936, 40960, NULL, false},
    {"qwen3-4b", "Qwen3-4B: 36 layers of 2560, 32 heads (8 KV) of 128, FFN 9728", 2560, 36, 32, 8, 128, 9728, 151936,
     40960, NULL, false},
    {"qwen3-8b", "Qwen3-8B: 36 layers of 4096, 32 heads (8 KV) of 128, FFN 12288", 4096, 36, 32, 8, 128, 12288,
     151936, 40960, NULL, false},
    /* the text model of Qwen3-VL-2B-Instruct (its config.json text_config) */
    {"qwen3vl-2b", "Qwen3-VL-2B text: 28 layers of 2048, 16 heads (8 KV) of 128, FFN 6144, M-RoPE, 3 DeepStack",
     2048, 28, 16, 8, 128, 6144, 151936, 262144, "qwen3vl", false},
    /* the text models of Qwen3-ASR-0.6B / 1.7B: the Qwen3-0.6B / 1.7B widths
     * (their config.json thinker_config.text_config; context 65536) */
    {"qwen3asr-0.6b", "Qwen3-ASR-0.6B text: 28 layers of 1024, 16 heads (8 KV) of 128, FFN 3072, M-RoPE, audio tokens",
     1024, 28, 16, 8, 128, 3072, 151936, 65536, "qwen3vl", true},
    {"qwen3asr-1.7b", "Qwen3-ASR-1.7B text: 28 layers of 2048, 16 heads (8 KV) of 128, FFN 6144, M-RoPE, audio tokens",
     2048, 28, 16, 8, 128, 6144, 151936, 65536, "qwen3vl", true},
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
    const char *arch; /* qwen3, qwen3vl or llama */
    bool qwen3;       /* per-head Q/K norm: qwen3 and qwen3vl */
    bool vl;          /* qwen3vl: M-RoPE sections and DeepStack count */
    bool asr;         /* Qwen3-ASR: no DeepStack, its tokens and template */
    shape s;
    uint32_t type;
    bool untied;
} config;

static pocketllm_status resolve(const pocketllm_synth_params *p, config *c) {
    memset(c, 0, sizeof *c);
    const shape *named = NULL;
    for (size_t i = 0; p->shape && i < N_SHAPES && !named; i++)
        if (!strcmp(shapes[i].name, p->shape)) named = &shapes[i];
    /* a shape of another architecture brings its own unless --arch names one */
    const char *arch = p->arch ? p->arch : named && named->arch ? named->arch : "qwen3";
    if (strcmp(arch, "qwen3") && strcmp(arch, "qwen3vl") && strcmp(arch, "llama"))
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "synth: unknown architecture '%s' (qwen3, qwen3vl or llama)", arch);
    c->arch = arch;
    c->vl = strcmp(arch, "qwen3vl") == 0;
    c->qwen3 = c->vl || strcmp(arch, "qwen3") == 0;
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
    if (p->type != PL_TYPE_F32 && p->type != PL_TYPE_F16 && p->type != PL_TYPE_BF16)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "synth: weight type must be f32, f16 or bf16");
    c->type = p->type;
    c->untied = p->untied != 0;
    uint32_t have;
    pocketllm_status st = pl_synth_vocab_count(p->vocab_path, &have);
    if (st) return st;
    if (have > c->s.n_vocab) c->s.n_vocab = have;
    return POCKETLLM_OK;
}

/* One tensor to write: shape and how to fill it. */
typedef struct tensor_plan {
    char name[64];
    uint32_t n_dims;
    int64_t ne[2];
    uint32_t type;
    enum { FILL_MATRIX, FILL_NORM, FILL_EMBED } fill;
} tensor_plan;

static size_t plan_tensors(const config *c, tensor_plan *t) {
    const shape *s = &c->s;
    size_t n = 0;
    int64_t q = (int64_t)s->n_head * s->head_dim, kv = (int64_t)s->n_head_kv * s->head_dim;
#define ADD(nm, nd, e0, e1, f)                                                   \
    do {                                                                         \
        if (t) {                                                                 \
            snprintf(t[n].name, sizeof t[n].name, "%s", nm);                      \
            t[n].n_dims = nd, t[n].ne[0] = e0, t[n].ne[1] = e1, t[n].fill = f;   \
            t[n].type = f == FILL_NORM ? PL_TYPE_F32 : c->type;                  \
        }                                                                        \
        n++;                                                                     \
    } while (0)
    ADD("token_embd.weight", 2, s->n_embd, s->n_vocab, FILL_EMBED);
    ADD("output_norm.weight", 1, s->n_embd, 1, FILL_NORM);
    if (c->untied) ADD("output.weight", 2, s->n_embd, s->n_vocab, FILL_MATRIX);
    for (uint32_t l = 0; l < s->n_layer; l++) {
        char nm[64];
#define LAYER(suffix, nd, e0, e1, f)                                   \
    do {                                                               \
        snprintf(nm, sizeof nm, "blk.%u.%s", l, suffix);               \
        ADD(nm, nd, e0, e1, f);                                        \
    } while (0)
        LAYER("attn_norm.weight", 1, s->n_embd, 1, FILL_NORM);
        LAYER("attn_q.weight", 2, s->n_embd, q, FILL_MATRIX);
        LAYER("attn_k.weight", 2, s->n_embd, kv, FILL_MATRIX);
        LAYER("attn_v.weight", 2, s->n_embd, kv, FILL_MATRIX);
        LAYER("attn_output.weight", 2, q, s->n_embd, FILL_MATRIX);
        if (c->qwen3) {
            LAYER("attn_q_norm.weight", 1, s->head_dim, 1, FILL_NORM);
            LAYER("attn_k_norm.weight", 1, s->head_dim, 1, FILL_NORM);
        }
        LAYER("ffn_norm.weight", 1, s->n_embd, 1, FILL_NORM);
        LAYER("ffn_gate.weight", 2, s->n_embd, s->n_ff, FILL_MATRIX);
        LAYER("ffn_up.weight", 2, s->n_embd, s->n_ff, FILL_MATRIX);
        LAYER("ffn_down.weight", 2, s->n_ff, s->n_embd, FILL_MATRIX);
#undef LAYER
    }
#undef ADD
    return n;
}

static pocketllm_status set_hparams(pocketllm_gguf_writer *w, const config *c, uint64_t seed) {
    const shape *s = &c->s;
    const char *a = c->arch;
    char key[96], name[128];
    pocketllm_status st = pocketllm_gguf_writer_set_str(w, "general.architecture", a);
    snprintf(name, sizeof name, "synth %s %s seed %llu", a, s->name, (unsigned long long)seed);
    if (!st) st = pocketllm_gguf_writer_set_str(w, "general.name", name);
    uint32_t ftype = c->type == PL_TYPE_F32 ? 0 : c->type == PL_TYPE_F16 ? 1 : 32; /* LLAMA_FTYPE_* */
    if (!st) st = pocketllm_gguf_writer_set_u32(w, "general.file_type", ftype);
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
    F32("rope.freq_base", c->vl && !c->asr ? 5000000.0f : c->qwen3 ? 1000000.0f : 10000.0f);
    F32("attention.layer_norm_rms_epsilon", c->qwen3 ? 1e-6f : 1e-5f);
    U32("vocab_size", s->n_vocab);
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

/* Fill n values of tensor t starting at element `start`, converted to its
 * type, into out.  The generator is positioned per chunk so that chunks
 * can be produced independently. */
static void fill_chunk(const tensor_plan *t, pl_rng *r, uint64_t n, void *out) {
    float scale;
    if (t->fill == FILL_MATRIX) scale = sqrtf(3.0f / (float)t->ne[0]);
    else if (t->fill == FILL_EMBED) scale = 1.0f;
    else scale = 0.1f;
    for (uint64_t i = 0; i < n; i++) {
        float v = (2.0f * pl_rng_uniform(r) - 1.0f) * scale;
        if (t->fill == FILL_NORM) v += 1.0f;
        if (t->type == PL_TYPE_F32) ((float *)out)[i] = v;
        else if (t->type == PL_TYPE_F16) ((uint16_t *)out)[i] = pl_f32_to_f16(v);
        else ((uint16_t *)out)[i] = pl_f32_to_bf16(v);
    }
}

static uint64_t tensor_bytes(const tensor_plan *t) {
    uint64_t b = 0;
    pl_type_row_bytes(t->type, (uint64_t)t->ne[0] * (uint64_t)t->ne[1], &b);
    return b;
}

static pocketllm_status build(const pocketllm_synth_params *p, config *c, pocketllm_gguf_writer **out,
                              tensor_plan **plan, size_t *n_plan) {
    pocketllm_status st = resolve(p, c);
    if (st) return st;
    size_t n = plan_tensors(c, NULL);
    tensor_plan *t = calloc(n, sizeof *t);
    if (!t) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    plan_tensors(c, t);
    pocketllm_gguf_writer *w;
    if ((st = pocketllm_gguf_writer_new(&w))) {
        free(t);
        return st;
    }
    st = set_hparams(w, c, p->seed);
    if (!st) st = pl_synth_vocab_write(w, p->vocab_path, p->template_path, c->s.n_vocab, c->asr);
    for (size_t i = 0; i < n && !st; i++)
        st = pocketllm_gguf_writer_add_tensor(w, t[i].name, t[i].type, t[i].n_dims, t[i].ne, NULL);
    if (st) {
        pocketllm_gguf_writer_free(w);
        free(t);
        return st;
    }
    *out = w;
    *plan = t;
    *n_plan = n;
    return POCKETLLM_OK;
}

pocketllm_status pocketllm_synth_size(const pocketllm_synth_params *p, uint64_t *bytes) {
    if (!p || !bytes) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "synth: no parameters");
    config c;
    pocketllm_status st = resolve(p, &c);
    if (st) return st;
    size_t n = plan_tensors(&c, NULL);
    tensor_plan *t = calloc(n, sizeof *t);
    if (!t) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    plan_tensors(&c, t);
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t b = tensor_bytes(&t[i]);
        pl_add_u64(total, b, &total);
        pl_align_up_u64(total, 32, &total);
    }
    free(t);
    *bytes = total; /* tensor data; the header adds a little (the vocabulary) */
    return POCKETLLM_OK;
}

pocketllm_status pocketllm_synth(const pocketllm_synth_params *p, const char *path) {
    if (!p || !path) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "synth: no parameters or path");
    config c;
    pocketllm_gguf_writer *w = NULL;
    tensor_plan *t = NULL;
    size_t n = 0;
    pocketllm_status st = build(p, &c, &w, &t, &n);
    if (st) return st;
    uint64_t total = 0, done = 0;
    for (size_t i = 0; i < n; i++) total += tensor_bytes(&t[i]);
    enum { CHUNK = 1 << 20 }; /* elements per piece */
    void *buf = malloc((size_t)CHUNK * 4);
    if (!buf) st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    if (!st) st = pocketllm_gguf_writer_begin(w, path);
    for (size_t i = 0; i < n && !st; i++) {
        pl_rng r;
        /* seed by (seed, name): independent of the order tensors are made in */
        pl_rng_seed(&r, p->seed ^ pl_hash_bytes(t[i].name, strlen(t[i].name)));
        uint64_t count = (uint64_t)t[i].ne[0] * (uint64_t)t[i].ne[1];
        uint32_t esize = pl_type_get(t[i].type)->bytes;
        for (uint64_t off = 0; off < count && !st; off += CHUNK) {
            uint64_t k = count - off < CHUNK ? count - off : CHUNK;
            fill_chunk(&t[i], &r, k, buf);
            st = pocketllm_gguf_writer_write_data(w, buf, (size_t)(k * esize));
            done += k * esize;
            if (p->progress) p->progress(p->progress_user, done, total);
        }
    }
    if (!st) st = pocketllm_gguf_writer_finish(w);
    free(buf);
    free(t);
    pocketllm_gguf_writer_free(w);
    return st;
}
