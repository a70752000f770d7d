/*
 * recipe.h -- llama.cpp's quantization recipes (its "file types": Q4_K_M,
 * IQ2_XS, ...) and its rule for the type each tensor of a model gets under
 * one.  The rule reproduces llama.cpp v0.4.0's choices exactly
 * (src/llama-quant.cpp: llama_tensor_get_type and its helpers) so that a
 * file we write is the file llama-quantize would write: the same tensors
 * kept, the same layers given more bits, the same fallbacks for row lengths
 * that are not whole blocks.
 */
#ifndef PL_QUANTIZE_RECIPE_H
#define PL_QUANTIZE_RECIPE_H

#include <stdbool.h>
#include <stdint.h>

#include "pocketllm.h"

/* llama.cpp's llama_ftype values, as stored in general.file_type. */
enum pl_ftype {
    PL_FTYPE_ALL_F32 = 0,
    PL_FTYPE_F16 = 1,
    PL_FTYPE_Q4_0 = 2,
    PL_FTYPE_Q4_1 = 3,
    PL_FTYPE_Q8_0 = 7,
    PL_FTYPE_Q5_0 = 8,
    PL_FTYPE_Q5_1 = 9,
    PL_FTYPE_Q2_K = 10,
    PL_FTYPE_Q3_K_S = 11,
    PL_FTYPE_Q3_K_M = 12,
    PL_FTYPE_Q3_K_L = 13,
    PL_FTYPE_Q4_K_S = 14,
    PL_FTYPE_Q4_K_M = 15,
    PL_FTYPE_Q5_K_S = 16,
    PL_FTYPE_Q5_K_M = 17,
    PL_FTYPE_Q6_K = 18,
    PL_FTYPE_IQ2_XXS = 19,
    PL_FTYPE_IQ2_XS = 20,
    PL_FTYPE_Q2_K_S = 21,
    PL_FTYPE_IQ3_XS = 22,
    PL_FTYPE_IQ3_XXS = 23,
    PL_FTYPE_IQ1_S = 24,
    PL_FTYPE_IQ4_NL = 25,
    PL_FTYPE_IQ3_S = 26,
    PL_FTYPE_IQ3_M = 27,
    PL_FTYPE_IQ2_S = 28,
    PL_FTYPE_IQ2_M = 29,
    PL_FTYPE_IQ4_XS = 30,
    PL_FTYPE_IQ1_M = 31,
    PL_FTYPE_BF16 = 32,
    PL_FTYPE_TQ1_0 = 36,
    PL_FTYPE_TQ2_0 = 37,
    PL_FTYPE_MXFP4_MOE = 38,
    PL_FTYPE_Q1_0 = 40,
    PL_FTYPE_Q2_0 = 41
};

typedef struct pl_recipe {
    const char *name;    /* as llama-quantize spells it: "Q4_K_M" */
    uint32_t ftype;      /* enum pl_ftype */
    uint32_t base_type;  /* the type most tensors get (llama_ftype_get_default_type) */
    const char *summary;
} pl_recipe;

/* Recipe i of the table (aliases such as "Q4_K" included), NULL past the end. */
const pl_recipe *pl_recipe_at(uint32_t i);
/* The recipe spelled exactly `name` (llama-quantize's upper-case names). */
const pl_recipe *pl_recipe_find(const char *name);
/* The file type a file quantized purely to `type` records, or NULL when
 * llama.cpp has no file type whose tensors are of that type. */
const pl_recipe *pl_recipe_for_type(uint32_t type);

/* The facts of a model that the choice depends on. */
typedef struct pl_recipe_model {
    bool falcon;        /* general.architecture == "falcon" */
    bool bailingmoe3;   /* general.architecture == "bailingmoe3" */
    bool is_70b;        /* llama.cpp's LLM_TYPE_70B for this architecture and depth */
    uint32_t n_layer;   /* {arch}.block_count */
    uint32_t n_gqa;     /* head_count / head_count_kv of layer 0 (0 when head_count_kv is 0) */
    uint32_t n_expert;  /* {arch}.expert_count, 0 when absent */
} pl_recipe_model;

/* The state of one quantization run: the choice for a tensor depends on how
 * many attn_v / ffn_down tensors came before it in llama.cpp's order. */
typedef struct pl_recipe_state {
    pl_recipe_model model;
    uint32_t ftype, base_type;
    bool pure;             /* --pure: every quantizable tensor gets base_type */
    bool quantize_output;  /* false with --leave-output */
    bool has_imatrix;
    bool tied;             /* no output.weight: token_embd doubles as the output */
    int n_attention_wv, i_attention_wv;
    int n_ffn_down, i_ffn_down, n_ffn_gate, i_ffn_gate, n_ffn_up, i_ffn_up;
    int n_fallback;
} pl_recipe_state;

/* Prepare a run over the tensors named names[0..n) (the whole model). */
void pl_recipe_begin(pl_recipe_state *s, const pl_recipe_model *m, const pl_recipe *r, bool pure,
                     bool quantize_output, bool has_imatrix, const char *const *names, uint64_t n);

/* Number of dimensions as ggml counts them: 1 + the last index whose extent
 * is above 1 (a [64, 1] tensor has one). */
uint32_t pl_recipe_n_dims(const int64_t ne[4]);

/* Whether llama.cpp quantizes this tensor at all (2-D or more, a weight,
 * not a norm, ...). */
bool pl_recipe_allows_quantization(const pl_recipe_state *s, const char *name, const int64_t ne[4]);

/* The type of tensor `name` (now of `type`, extents ne) in the output.  Call
 * once per tensor, in llama.cpp's order (pl_recipe_order_cmp).  Fails, with
 * a message, only where llama.cpp fails. */
pocketllm_status pl_recipe_choose(pl_recipe_state *s, const char *name, uint32_t type, const int64_t ne[4],
                                  uint32_t *out);

/* llama.cpp's rule for "this quantization needs an importance matrix":
 * every IQ1/IQ2 type and iq3_xxs, and q2_K inside Q2_K_S, except for the
 * token embeddings and the output. */
bool pl_recipe_requires_imatrix(const char *name, uint32_t type, uint32_t ftype);

/* llama.cpp's tensor order (its loader's weight map): by layer number
 * ("blk.N."; -1 for tensors outside a layer), then by name. */
int pl_recipe_order_cmp(const char *a, const char *b);

#endif
