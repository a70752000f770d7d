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

struct pocketllm_model {
    pl_gguf *gguf;
    struct pl_vocab *vocab;      /* NULL when the file carries no tokenizer */
    char arch_name[64];          /* general.architecture, "" if absent */
    const struct pl_arch *arch;  /* NULL when vocab-only */
    void *weights;               /* the architecture's loaded state, owned by arch */
    int n_threads;
};

typedef struct pocketllm_model pl_model;

/* An architecture the engine runs: load reads hyperparameters and binds
 * weight tensors (views into the mapping) into m->weights; unload frees
 * that state. */
typedef struct pl_arch {
    const char *name;
    const char *summary;
    pocketllm_status (*load)(pl_model *m);
    void (*unload)(pl_model *m);
} pl_arch;

/* The architecture called `name`, or NULL. */
const pl_arch *pl_arch_find(const char *name);

#endif
