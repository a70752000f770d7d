/*
 * model.h -- the engine's model: the mapped GGUF, its tokenizer, and the
 * architecture's weights.  The public pocketllm_model handle is this struct.
 */
#ifndef PL_MODEL_H
#define PL_MODEL_H

#include "gguf/gguf.h"
#include "pocketllm.h"

struct pl_vocab;
struct pl_arch;
struct pl_forward;

/* What the runtime needs to know of a loaded model, whatever its
 * architecture (set by the architecture's load). */
typedef struct pl_model_dims {
    int64_t n_vocab;     /* rows of the output (logits per position) */
    int64_t n_embd;
    int64_t n_layer;
    int64_t n_ctx_train; /* context length the model was trained for */
    int64_t kv_dim;      /* K (and V) elements per position per layer */
    int64_t head_dim;
    int64_t max_in;      /* longest weight row (elements), for scratch sizing */
    int n_pos_axes;      /* rotary positions per token of an embedding pass: 4 (qwen3vl) or 0 (one) */
    int64_t n_deepstack; /* DeepStack feature sets an image's embeddings carry (qwen3vl), else 0 */
    /* mixture of experts (0 for a dense model): experts per layer, routed
     * per token, and the width of one expert's FFN */
    int64_t n_expert, n_expert_used, n_ff_exp;
} pl_model_dims;

struct pocketllm_model {
    pl_gguf *gguf;
    struct pl_vocab *vocab;      /* NULL when the file carries no tokenizer */
    char arch_name[64];          /* general.architecture, "" if absent */
    const struct pl_arch *arch;  /* NULL when vocab-only */
    void *weights;               /* the architecture's loaded state, owned by arch */
    int n_threads;
    pl_model_dims dims;          /* valid when arch is set */
    struct pl_device *device;    /* the accelerator the weights live on; NULL: the CPU */
    /* host memory the architecture made for the graph to read as weights
     * (f32 copies of f16 vectors): uploaded with the tensors */
    struct pl_model_const *consts;
    size_t n_consts;
    /* the vocabulary's byte trie for constrained decoding, built on first
     * use (grammar/grammar_vocab.c) */
    struct pl_gvocab *gvocab;
};

typedef struct pl_model_const {
    void *p;
    size_t bytes;
} pl_model_const;

/* Host memory of `bytes` the model keeps (and frees) for its graph, which
 * reaches the device with the tensors; NULL with a message. */
void *pl_model_const_alloc(struct pocketllm_model *m, size_t bytes);

typedef struct pocketllm_model pl_model;

/* An architecture the engine runs: load reads hyperparameters and binds
 * weight tensors (views into the mapping) into m->weights and fills
 * m->dims; unload frees that state.  forward runs one pass of the graph
 * (see model/forward.h); scratch_floats says how much activation memory a
 * pass of up to n_batch tokens needs. */
typedef struct pl_arch {
    const char *name;
    const char *summary;
    pocketllm_status (*load)(pl_model *m);
    void (*unload)(pl_model *m);
    void (*forward)(const pl_model *m, struct pl_forward *f);
    uint64_t (*scratch_floats)(const pl_model *m, int64_t n_batch);
} pl_arch;

/* The architecture called `name`, or NULL. */
const pl_arch *pl_arch_find(const char *name);

#endif
