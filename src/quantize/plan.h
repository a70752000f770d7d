/*
 * plan.h -- the plan of one quantization run, made before a byte is
 * written: the model facts the recipe needs, each tensor's output type in
 * llama.cpp's order, the importance weights each will use, and every reason
 * to refuse (so a refused run leaves no file behind).
 */
#ifndef PL_QUANTIZE_PLAN_H
#define PL_QUANTIZE_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "gguf/gguf.h"
#include "quantize/imatrix.h"
#include "quantize/recipe.h"

typedef struct pl_quant_item {
    const pl_gguf_tensor *t;
    uint32_t to;             /* output type (== t->type: copied as is) */
    uint32_t n_dims;         /* as ggml counts them (what llama.cpp writes) */
    const float *imatrix;    /* ne[0] * ne[2] weights, or NULL */
} pl_quant_item;

typedef struct pl_quant_plan {
    const pl_recipe *recipe;
    pl_recipe_state rs;
    pl_quant_item *items;    /* every tensor, in output order */
    uint64_t n_items;
    uint64_t bytes_in;       /* tensor bytes of the input */
    uint64_t bytes_out;      /* tensor bytes of the output */
} pl_quant_plan;

typedef struct pl_quant_options {
    const pl_recipe *recipe;
    bool pure, leave_output, allow_requantize;
    bool dry_run;              /* plan only: do not refuse types this build cannot encode */
    const pl_imatrix *imatrix; /* NULL: none */
    const char *imatrix_path;  /* for messages */
} pl_quant_options;

/* Read the model facts from g: fails when g is not a model checkpoint, or
 * when its experts disagree with its metadata (pl_quant_check_experts). */
pocketllm_status pl_quant_model_facts(const pl_gguf *g, pl_recipe_model *out);
/* (experts.c) Check the expert counts of `arch` against llama.cpp's limits
 * and, for the layouts known here, every tensor's shape against m->n_expert
 * (which it may clear, where llama.cpp ignores a count of 1). */
pocketllm_status pl_quant_check_experts(const pl_gguf *g, const char *arch, pl_recipe_model *m);

/* Plan the run (plan is zeroed first; free it with pl_quant_plan_free). */
pocketllm_status pl_quant_plan_make(const pl_gguf *g, const pl_quant_options *o, pl_quant_plan *plan);
void pl_quant_plan_free(pl_quant_plan *plan);

#endif
