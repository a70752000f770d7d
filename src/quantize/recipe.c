/*
 * recipe.c -- the recipe table and the per-tensor type rule of llama.cpp
 * v0.4.0 (src/llama-quant.cpp), rewritten branch for branch: the order of
 * the tests matters (the first matching branch wins), so it is kept.
 */
#include "quantize/recipe.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "quant/types.h"

/* The names and file types are llama-quantize's (tools/quantize); the
 * summaries are ours.  Aliases (Q3_K, Q4_K, Q5_K) are listed after the
 * recipe they stand for. */
static const pl_recipe pl_recipes[] = {
    {"F32", PL_FTYPE_ALL_F32, PL_TYPE_F32, "every matrix in f32"},
    {"F16", PL_FTYPE_F16, PL_TYPE_F16, "every matrix in f16"},
    {"BF16", PL_FTYPE_BF16, PL_TYPE_BF16, "every matrix in bf16"},
    {"Q8_0", PL_FTYPE_Q8_0, PL_TYPE_Q8_0, "q8_0 throughout"},
    {"Q6_K", PL_FTYPE_Q6_K, PL_TYPE_Q6_K, "q6_K throughout"},
    {"Q5_K_M", PL_FTYPE_Q5_K_M, PL_TYPE_Q5_K, "q5_K; attn_v and some ffn_down in q6_K"},
    {"Q5_K_S", PL_FTYPE_Q5_K_S, PL_TYPE_Q5_K, "q5_K; output q6_K"},
    {"Q5_K", PL_FTYPE_Q5_K_M, PL_TYPE_Q5_K, "alias of Q5_K_M"},
    {"Q5_1", PL_FTYPE_Q5_1, PL_TYPE_Q5_1, "q5_1; output q6_K"},
    {"Q5_0", PL_FTYPE_Q5_0, PL_TYPE_Q5_0, "q5_0; output q6_K"},
    {"Q4_K_M", PL_FTYPE_Q4_K_M, PL_TYPE_Q4_K, "q4_K; attn_v and some ffn_down in q6_K"},
    {"Q4_K_S", PL_FTYPE_Q4_K_S, PL_TYPE_Q4_K, "q4_K; the first attn_v and ffn_down in q5_K"},
    {"Q4_K", PL_FTYPE_Q4_K_M, PL_TYPE_Q4_K, "alias of Q4_K_M"},
    {"Q4_1", PL_FTYPE_Q4_1, PL_TYPE_Q4_1, "q4_1; output q6_K"},
    {"Q4_0", PL_FTYPE_Q4_0, PL_TYPE_Q4_0, "q4_0; output q6_K"},
    {"IQ4_XS", PL_FTYPE_IQ4_XS, PL_TYPE_IQ4_XS, "iq4_xs (4.25 bits per weight)"},
    {"IQ4_NL", PL_FTYPE_IQ4_NL, PL_TYPE_IQ4_NL, "iq4_nl (4.5 bits per weight, blocks of 32)"},
    {"Q3_K_L", PL_FTYPE_Q3_K_L, PL_TYPE_Q3_K, "q3_K; attn_v, attn_output, ffn_down in q5_K"},
    {"Q3_K_M", PL_FTYPE_Q3_K_M, PL_TYPE_Q3_K, "q3_K; attn_v, attn_output, ffn_down in q4_K/q5_K"},
    {"Q3_K_S", PL_FTYPE_Q3_K_S, PL_TYPE_Q3_K, "q3_K throughout; output q6_K"},
    {"Q3_K", PL_FTYPE_Q3_K_M, PL_TYPE_Q3_K, "alias of Q3_K_M"},
    {"IQ3_M", PL_FTYPE_IQ3_M, PL_TYPE_IQ3_S, "iq3_s with q4_K where it matters"},
    {"IQ3_S", PL_FTYPE_IQ3_S, PL_TYPE_IQ3_S, "iq3_s (3.44 bits per weight)"},
    {"IQ3_XS", PL_FTYPE_IQ3_XS, PL_TYPE_IQ3_S, "iq3_s and iq3_xxs (needs an imatrix)"},
    {"IQ3_XXS", PL_FTYPE_IQ3_XXS, PL_TYPE_IQ3_XXS, "iq3_xxs (needs an imatrix)"},
    {"Q2_K", PL_FTYPE_Q2_K, PL_TYPE_Q2_K, "q2_K; attn_v, ffn_down, attn_output in q3_K/q4_K"},
    {"Q2_K_S", PL_FTYPE_Q2_K_S, PL_TYPE_Q2_K, "q2_K throughout (needs an imatrix)"},
    {"IQ2_M", PL_FTYPE_IQ2_M, PL_TYPE_IQ2_S, "iq2_s (2.7 bits per weight; needs an imatrix)"},
    {"IQ2_S", PL_FTYPE_IQ2_S, PL_TYPE_IQ2_XS, "iq2_xs with iq3_s where it matters (needs an imatrix)"},
    {"IQ2_XS", PL_FTYPE_IQ2_XS, PL_TYPE_IQ2_XS, "iq2_xs (2.31 bits per weight; needs an imatrix)"},
    {"IQ2_XXS", PL_FTYPE_IQ2_XXS, PL_TYPE_IQ2_XXS, "iq2_xxs (2.06 bits per weight; needs an imatrix)"},
    {"IQ1_M", PL_FTYPE_IQ1_M, PL_TYPE_IQ1_M, "iq1_m (1.75 bits per weight; needs an imatrix)"},
    {"IQ1_S", PL_FTYPE_IQ1_S, PL_TYPE_IQ1_S, "iq1_s (1.56 bits per weight; needs an imatrix)"},
    {"TQ2_0", PL_FTYPE_TQ2_0, PL_TYPE_TQ2_0, "ternary, 2.06 bits per weight"},
    {"TQ1_0", PL_FTYPE_TQ1_0, PL_TYPE_TQ1_0, "ternary, 1.69 bits per weight"},
    {"Q2_0", PL_FTYPE_Q2_0, PL_TYPE_Q2_0, "q2_0 (blocks of 64)"},
    {"Q1_0", PL_FTYPE_Q1_0, PL_TYPE_Q1_0, "q1_0 (blocks of 128)"},
    {"MXFP4_MOE", PL_FTYPE_MXFP4_MOE, PL_TYPE_MXFP4, "mxfp4 experts, q8_0 elsewhere"},
};
#define N_RECIPES (sizeof pl_recipes / sizeof pl_recipes[0])

const pl_recipe *pl_recipe_at(uint32_t i) { return i < N_RECIPES ? &pl_recipes[i] : NULL; }

const pl_recipe *pl_recipe_find(const char *name) {
    for (size_t i = 0; name && i < N_RECIPES; i++)
        if (strcmp(pl_recipes[i].name, name) == 0) return &pl_recipes[i];
    return NULL;
}

/* A file quantized purely to one type records the file type whose base
 * type it is; where several share one (Q4_K_S and Q4_K_M), the one without
 * additions (_S), and IQ2_M for iq2_s (IQ2_S's base type is iq2_xs). */
const pl_recipe *pl_recipe_for_type(uint32_t type) {
    static const struct {
        uint32_t type;
        const char *recipe;
    } pure[] = {
        {PL_TYPE_F32, "F32"},         {PL_TYPE_F16, "F16"},         {PL_TYPE_BF16, "BF16"},
        {PL_TYPE_Q4_0, "Q4_0"},       {PL_TYPE_Q4_1, "Q4_1"},       {PL_TYPE_Q5_0, "Q5_0"},
        {PL_TYPE_Q5_1, "Q5_1"},       {PL_TYPE_Q8_0, "Q8_0"},       {PL_TYPE_Q2_K, "Q2_K"},
        {PL_TYPE_Q3_K, "Q3_K_S"},     {PL_TYPE_Q4_K, "Q4_K_S"},     {PL_TYPE_Q5_K, "Q5_K_S"},
        {PL_TYPE_Q6_K, "Q6_K"},       {PL_TYPE_IQ2_XXS, "IQ2_XXS"}, {PL_TYPE_IQ2_XS, "IQ2_XS"},
        {PL_TYPE_IQ2_S, "IQ2_M"},     {PL_TYPE_IQ3_XXS, "IQ3_XXS"}, {PL_TYPE_IQ3_S, "IQ3_S"},
        {PL_TYPE_IQ1_S, "IQ1_S"},     {PL_TYPE_IQ1_M, "IQ1_M"},     {PL_TYPE_IQ4_NL, "IQ4_NL"},
        {PL_TYPE_IQ4_XS, "IQ4_XS"},   {PL_TYPE_TQ1_0, "TQ1_0"},     {PL_TYPE_TQ2_0, "TQ2_0"},
        {PL_TYPE_MXFP4, "MXFP4_MOE"}, {PL_TYPE_Q1_0, "Q1_0"},       {PL_TYPE_Q2_0, "Q2_0"},
    };
    for (size_t i = 0; i < sizeof pure / sizeof pure[0]; i++)
        if (pure[i].type == type) return pl_recipe_find(pure[i].recipe);
    return NULL;
}

/* ---- tensor categories ---------------------------------------------------- */

typedef enum cat {
    CAT_TOKEN_EMBD,
    CAT_ATTN_Q,
    CAT_ATTN_V,
    CAT_ATTN_K,
    CAT_ATTN_QKV,
    CAT_ATTN_KV_B,
    CAT_ATTN_OUTPUT,
    CAT_FFN_UP,
    CAT_FFN_GATE,
    CAT_FFN_DOWN,
    CAT_OUTPUT,
    CAT_OTHER
} cat;

static bool is_token_embd(const char *name) {
    return strcmp(name, "token_embd.weight") == 0 || strcmp(name, "per_layer_token_embd.weight") == 0;
}

static bool has(const char *name, const char *part) { return strstr(name, part) != NULL; }

/* Broad categories by name, tested in llama.cpp's order (a name can hold
 * more than one of the parts). */
static cat category(const char *name) {
    if (strcmp(name, "output.weight") == 0) return CAT_OUTPUT;
    if (is_token_embd(name)) return CAT_TOKEN_EMBD;
    if (has(name, "attn_qkv.weight")) return CAT_ATTN_QKV;
    if (has(name, "attn_kv_b.weight")) return CAT_ATTN_KV_B;
    if (has(name, "attn_v.weight")) return CAT_ATTN_V;
    if (has(name, "attn_k.weight")) return CAT_ATTN_K;
    if (has(name, "attn_q.weight")) return CAT_ATTN_Q;
    if (has(name, "attn_output.weight")) return CAT_ATTN_OUTPUT;
    if (has(name, "ffn_up")) return CAT_FFN_UP;
    if (has(name, "ffn_gate")) return CAT_FFN_GATE;
    if (has(name, "ffn_down")) return CAT_FFN_DOWN;
    return CAT_OTHER;
}

/* attn_v and the tensors that hold it (fused qkv, MLA's kv_b): the most
 * sensitive to quantization. */
static bool is_attn_v(cat c) { return c == CAT_ATTN_V || c == CAT_ATTN_QKV || c == CAT_ATTN_KV_B; }

void pl_recipe_begin(pl_recipe_state *s, const pl_recipe_model *m, const pl_recipe *r, bool pure,
                     bool quantize_output, bool has_imatrix, const char *const *names, uint64_t n) {
    memset(s, 0, sizeof *s);
    s->model = *m;
    s->ftype = r->ftype;
    s->base_type = r->base_type;
    s->pure = pure;
    s->quantize_output = quantize_output;
    s->has_imatrix = has_imatrix;
    s->tied = true;
    for (uint64_t i = 0; i < n; i++) {
        cat c = category(names[i]);
        if (is_attn_v(c)) s->n_attention_wv++;
        if (c == CAT_OUTPUT) s->tied = false;
    }
    /* the per-layer counters are compared with the depth, not with how many
     * such tensors there are */
    s->n_ffn_down = s->n_ffn_gate = s->n_ffn_up = (int)m->n_layer;
}

uint32_t pl_recipe_n_dims(const int64_t ne[4]) {
    for (int i = 3; i >= 1; i--)
        if (ne[i] > 1) return (uint32_t)i + 1;
    return 1;
}

bool pl_recipe_allows_quantization(const pl_recipe_state *s, const char *name, const int64_t ne[4]) {
    if (pl_recipe_n_dims(ne) < 2) return false;
    size_t len = strlen(name);
    /* llama.cpp tests name.rfind("weight") == name.size() - 6, which also
     * holds for any 5-byte name (npos == size_t(-1)); kept for equality */
    if (!((len >= 6 && strcmp(name + len - 6, "weight") == 0) || len == 5)) return false;
    if (has(name, "_norm.weight")) return false;
    if (!s->quantize_output && strcmp(name, "output.weight") == 0) return false;
    static const char *const never[] = {
        "ffn_gate_inp.weight",  "ffn_gate_tid2eid.weight", "altup", "laurel", "per_layer_model_proj",
        "ssm_conv1d", "shortconv.conv.weight", "indexer.k_proj.weight", "indexer.q_proj.weight",
        "time_mix_first.weight", "time_mix_w0.weight", "time_mix_w1.weight", "time_mix_w2.weight",
        "time_mix_v0.weight", "time_mix_v1.weight", "time_mix_v2.weight", "time_mix_a0.weight",
        "time_mix_a1.weight", "time_mix_a2.weight", "time_mix_g1.weight", "time_mix_g2.weight",
        "time_mix_decay_w1.weight", "time_mix_decay_w2.weight", "time_mix_lerp_fused.weight",
        "attn_rel_b.weight", ".position_embd", "sam.pos_embd", "sam.neck.", "sam.net_", ".rel_pos",
        ".patch_embd", ".patch_merger", "a.rvq.codebook", "mm.a.code_embd",
    };
    for (size_t i = 0; i < sizeof never / sizeof never[0]; i++)
        if (has(name, never[i])) return false;
    if (strcmp(name, "position_embd.weight") == 0 || strcmp(name, "token_types.weight") == 0) return false;
    return true;
}

/* ---- the choice ------------------------------------------------------------- */

static bool use_more_bits(int i_layer, int n_layer) {
    return i_layer < n_layer / 8 || i_layer >= 7 * n_layer / 8 || (i_layer - n_layer / 8) % 3 == 2;
}

/* Layer of an ffn tensor: the running count, except in mixture-of-experts
 * models, where llama.cpp reads it from the name. */
static pocketllm_status layer_of(const pl_recipe_state *s, int counter, const char *name, int *i_layer) {
    *i_layer = counter;
    if (s->model.n_expert <= 1) return POCKETLLM_OK;
    if (strncmp(name, "blk.", 4) != 0)
        return pl_fail(POCKETLLM_ERR_FORMAT, "quantize: cannot tell the layer of tensor %s", name);
    char *end;
    long v = strtol(name + 4, &end, 10);
    if (end == name + 4) return pl_fail(POCKETLLM_ERR_FORMAT, "quantize: cannot tell the layer of tensor %s", name);
    if (v < 0 || v >= (long)s->model.n_layer)
        return pl_fail(POCKETLLM_ERR_FORMAT, "quantize: tensor %s is in layer %ld of %u", name, v, s->model.n_layer);
    *i_layer = (int)v;
    return POCKETLLM_OK;
}

static bool ft_in(uint32_t ft, const uint32_t *list, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (list[i] == ft) return true;
    return false;
}
#define FT_IN(ft, ...) ft_in((ft), (const uint32_t[]){__VA_ARGS__}, sizeof((const uint32_t[]){__VA_ARGS__}) / sizeof(uint32_t))

/* The recipe's own choice (llama_tensor_get_type_impl), before the
 * row-length fallback. */
static pocketllm_status recipe_type(pl_recipe_state *s, const char *name, const int64_t ne[4], cat c,
                                    uint32_t *type) {
    const uint32_t ft = s->ftype;
    const pl_recipe_model *m = &s->model;
    uint32_t t = *type;
    int i_layer;
    pocketllm_status st;

    if (c == CAT_OUTPUT || (s->tied && c == CAT_TOKEN_EMBD)) {
        /* the output (or the embedding that doubles as it) */
        if (ft == PL_FTYPE_MXFP4_MOE) t = PL_TYPE_Q8_0;
        else if (m->falcon || ne[0] % pl_type_get(t)->block != 0) t = PL_TYPE_Q8_0;
        else if (FT_IN(ft, PL_FTYPE_IQ2_XXS, PL_FTYPE_IQ2_XS, PL_FTYPE_IQ3_XXS, PL_FTYPE_IQ1_S, PL_FTYPE_IQ2_S,
                       PL_FTYPE_IQ2_M, PL_FTYPE_IQ1_M))
            t = PL_TYPE_Q5_K;
        else if (t != PL_TYPE_Q8_0) t = PL_TYPE_Q6_K;
    } else if (ft == PL_FTYPE_MXFP4_MOE) {
        /* experts (3-D) in mxfp4, everything else q8_0; in bailingmoe3 only
         * the ffn experts count (its MLA projections are 3-D too) */
        bool expert = !m->bailingmoe3 || c == CAT_FFN_UP || c == CAT_FFN_GATE || c == CAT_FFN_DOWN;
        t = ne[2] > 1 && expert ? PL_TYPE_MXFP4 : PL_TYPE_Q8_0;
    } else if (c == CAT_TOKEN_EMBD) {
        if (FT_IN(ft, PL_FTYPE_IQ2_XXS, PL_FTYPE_IQ2_XS, PL_FTYPE_IQ1_S, PL_FTYPE_IQ1_M)) t = PL_TYPE_Q2_K;
        else if (FT_IN(ft, PL_FTYPE_IQ2_S, PL_FTYPE_IQ2_M)) t = PL_TYPE_IQ3_S;
        else if (ft == PL_FTYPE_IQ3_XXS) t = PL_TYPE_IQ3_S;
        else if (FT_IN(ft, PL_FTYPE_TQ1_0, PL_FTYPE_TQ2_0, PL_FTYPE_Q2_0)) t = PL_TYPE_Q4_K;
    } else if (FT_IN(ft, PL_FTYPE_IQ2_XXS, PL_FTYPE_IQ2_XS, PL_FTYPE_IQ1_S, PL_FTYPE_IQ2_S, PL_FTYPE_IQ2_M,
                     PL_FTYPE_IQ1_M)) {
        const bool iq2_sm = ft == PL_FTYPE_IQ2_S || ft == PL_FTYPE_IQ2_M;
        if (is_attn_v(c)) {
            if (m->n_gqa >= 4 || m->n_expert >= 4) t = PL_TYPE_Q4_K;
            else t = iq2_sm ? PL_TYPE_IQ3_S : PL_TYPE_Q2_K;
            s->i_attention_wv++;
        } else if (m->n_expert == 8 && c == CAT_ATTN_K) {
            t = PL_TYPE_Q4_K;
        } else if (c == CAT_FFN_DOWN) {
            if (s->i_ffn_down < s->n_ffn_down / 8) t = iq2_sm ? PL_TYPE_IQ3_S : PL_TYPE_Q2_K;
            s->i_ffn_down++;
        } else if (c == CAT_ATTN_OUTPUT) {
            if (m->n_expert == 8) t = PL_TYPE_Q5_K;
            else if (ft == PL_FTYPE_IQ1_S || ft == PL_FTYPE_IQ1_M) t = PL_TYPE_IQ2_XXS;
            else if (iq2_sm) t = PL_TYPE_IQ3_S;
        }
    } else if (is_attn_v(c)) {
        if (ft == PL_FTYPE_Q2_K) t = m->n_gqa >= 4 ? PL_TYPE_Q4_K : PL_TYPE_Q3_K;
        else if (ft == PL_FTYPE_Q2_K_S && m->n_gqa >= 4) t = PL_TYPE_Q4_K;
        else if (ft == PL_FTYPE_IQ3_XXS)
            t = m->n_gqa >= 4 ? PL_TYPE_Q4_K : !s->has_imatrix ? PL_TYPE_IQ3_S : PL_TYPE_IQ3_XXS;
        else if ((ft == PL_FTYPE_IQ3_XS || ft == PL_FTYPE_IQ3_S) && m->n_gqa >= 4) t = PL_TYPE_Q4_K;
        else if (ft == PL_FTYPE_IQ3_M) t = PL_TYPE_Q4_K;
        else if (ft == PL_FTYPE_Q3_K_M) t = s->i_attention_wv < 2 ? PL_TYPE_Q5_K : PL_TYPE_Q4_K;
        else if (ft == PL_FTYPE_Q3_K_L) t = PL_TYPE_Q5_K;
        else if ((ft == PL_FTYPE_IQ4_NL || ft == PL_FTYPE_IQ4_XS) && m->n_gqa >= 4) t = PL_TYPE_Q5_K;
        else if ((ft == PL_FTYPE_Q4_K_M || ft == PL_FTYPE_Q5_K_M) && use_more_bits(s->i_attention_wv, s->n_attention_wv))
            t = PL_TYPE_Q6_K;
        else if (ft == PL_FTYPE_Q4_K_S && s->i_attention_wv < 4) t = PL_TYPE_Q5_K;
        /* 70B: attn_v is 8x smaller than attn_q, so more bits cost little */
        if (m->is_70b && (t == PL_TYPE_Q3_K || t == PL_TYPE_Q4_K)) t = PL_TYPE_Q5_K;
        if (m->n_expert == 8) t = PL_TYPE_Q8_0;
        s->i_attention_wv++;
    } else if (c == CAT_ATTN_K) {
        if (m->n_expert == 8) t = PL_TYPE_Q8_0;
        else if (ft == PL_FTYPE_IQ3_XS) t = PL_TYPE_IQ3_XXS;
        else if (ft == PL_FTYPE_IQ3_XXS) t = PL_TYPE_IQ2_S;
    } else if (c == CAT_ATTN_Q) {
        if (ft == PL_FTYPE_IQ3_XS) t = PL_TYPE_IQ3_XXS;
        else if (ft == PL_FTYPE_IQ3_XXS) t = PL_TYPE_IQ2_S;
    } else if (c == CAT_FFN_DOWN) {
        if ((st = layer_of(s, s->i_ffn_down, name, &i_layer))) return st;
        const int n = s->n_ffn_down;
        if (ft == PL_FTYPE_Q2_K) t = PL_TYPE_Q3_K;
        else if (ft == PL_FTYPE_Q2_K_S) {
            if (i_layer < n / 8) t = PL_TYPE_Q4_K;
        } else if (ft == PL_FTYPE_IQ3_XXS && !s->has_imatrix) {
            t = i_layer < n / 8 ? PL_TYPE_Q4_K : PL_TYPE_Q3_K;
        } else if (ft == PL_FTYPE_Q3_K_M) {
            t = i_layer < n / 16 ? PL_TYPE_Q5_K
                : !m->falcon || use_more_bits(i_layer, n) ? PL_TYPE_Q4_K
                                                           : PL_TYPE_Q3_K;
        } else if (ft == PL_FTYPE_IQ3_M && (i_layer < n / 8 || (m->n_expert == 8 && use_more_bits(i_layer, n)))) {
            t = PL_TYPE_Q4_K;
        } else if (ft == PL_FTYPE_Q3_K_L) {
            t = m->falcon ? PL_TYPE_Q4_K : PL_TYPE_Q5_K;
        } else if (ft == PL_FTYPE_Q4_K_M) {
            if (m->falcon)
                t = i_layer < n / 16 ? PL_TYPE_Q6_K : use_more_bits(i_layer, n) ? PL_TYPE_Q5_K : PL_TYPE_Q4_K;
            else if (use_more_bits(i_layer, n)) t = PL_TYPE_Q6_K;
        } else if (i_layer < n / 8 && (ft == PL_FTYPE_IQ4_NL || ft == PL_FTYPE_IQ4_XS) && !s->has_imatrix) {
            t = PL_TYPE_Q5_K;
        } else if (ft == PL_FTYPE_Q5_K_M && use_more_bits(i_layer, n)) {
            t = PL_TYPE_Q6_K;
        } else if (ft == PL_FTYPE_Q4_K_S && !m->falcon && i_layer < n / 8) {
            t = PL_TYPE_Q5_K;
        } else if ((ft == PL_FTYPE_Q4_0 || ft == PL_FTYPE_Q5_0) && s->has_imatrix && i_layer < n / 8) {
            /* with an imatrix the first ffn_down layers get the _1 variant */
            t = ft == PL_FTYPE_Q4_0 ? PL_TYPE_Q4_1 : PL_TYPE_Q5_1;
        }
        s->i_ffn_down++;
    } else if (c == CAT_ATTN_OUTPUT) {
        if (!m->falcon) {
            if (m->n_expert == 8) {
                if (FT_IN(ft, PL_FTYPE_Q2_K, PL_FTYPE_IQ3_XS, PL_FTYPE_IQ3_XXS, PL_FTYPE_Q3_K_S, PL_FTYPE_Q3_K_M,
                          PL_FTYPE_IQ4_NL, PL_FTYPE_Q4_K_S, PL_FTYPE_Q4_K_M, PL_FTYPE_IQ3_S, PL_FTYPE_IQ3_M,
                          PL_FTYPE_IQ4_XS))
                    t = PL_TYPE_Q5_K;
            } else {
                if (ft == PL_FTYPE_Q2_K) t = PL_TYPE_Q3_K;
                else if (ft == PL_FTYPE_IQ3_XXS) t = PL_TYPE_IQ3_S;
                else if (ft == PL_FTYPE_Q3_K_M) t = PL_TYPE_Q4_K;
                else if (ft == PL_FTYPE_Q3_K_L) t = PL_TYPE_Q5_K;
                else if (ft == PL_FTYPE_IQ3_M) t = PL_TYPE_Q4_K;
            }
        } else if (ft == PL_FTYPE_Q3_K_L) {
            t = PL_TYPE_Q4_K;
        }
    } else if (c == CAT_FFN_GATE || c == CAT_FFN_UP) {
        /* (llama.cpp also has a branch for attn_qkv here; is_attn_v() above
         * always takes that category first, so it never runs) */
        int *counter = c == CAT_FFN_GATE ? &s->i_ffn_gate : &s->i_ffn_up;
        const int n = c == CAT_FFN_GATE ? s->n_ffn_gate : s->n_ffn_up;
        if ((st = layer_of(s, *counter, name, &i_layer))) return st;
        if (ft == PL_FTYPE_IQ3_XS && i_layer >= n / 8 && i_layer < 7 * n / 8) t = PL_TYPE_IQ3_XXS;
        (*counter)++;
    }
    *type = t;
    return POCKETLLM_OK;
}

/* A row length that is not whole blocks of the chosen type falls back to a
 * type with smaller blocks (llama.cpp's tensor_type_fallback), and to f16
 * when even that does not divide it. */
static pocketllm_status fallback(pl_recipe_state *s, const char *name, const int64_t ne[4], uint32_t *type) {
    const uint32_t want = *type;
    const uint32_t block = pl_type_get(want)->block;
    if (ne[0] % block == 0) return POCKETLLM_OK;
    s->n_fallback++;
    uint32_t t;
    switch (want) {
    case PL_TYPE_IQ1_S: case PL_TYPE_IQ1_M: case PL_TYPE_IQ2_XXS: case PL_TYPE_IQ2_XS: case PL_TYPE_IQ2_S:
    case PL_TYPE_IQ3_XXS: case PL_TYPE_IQ3_S: case PL_TYPE_IQ4_XS:
        t = PL_TYPE_IQ4_NL;
        break;
    case PL_TYPE_Q2_0: case PL_TYPE_Q2_K: case PL_TYPE_Q3_K: case PL_TYPE_TQ1_0: case PL_TYPE_TQ2_0:
        t = PL_TYPE_Q4_0;
        break;
    case PL_TYPE_Q4_K: t = PL_TYPE_Q5_0; break;
    case PL_TYPE_Q5_K: t = PL_TYPE_Q5_1; break;
    case PL_TYPE_Q6_K: t = PL_TYPE_Q8_0; break;
    default:
        if (block > 32)
            return pl_fail(POCKETLLM_ERR_UNSUPPORTED,
                           "quantize: %s has rows of %lld, not whole %s blocks of %u, and %s has no smaller-block "
                           "fallback (as in llama.cpp)",
                           name, (long long)ne[0], pl_type_get(want)->name, block, pl_type_get(want)->name);
        t = want;
    }
    if (ne[0] % pl_type_get(t)->block != 0) t = PL_TYPE_F16;
    *type = t;
    return POCKETLLM_OK;
}

pocketllm_status pl_recipe_choose(pl_recipe_state *s, const char *name, uint32_t type, const int64_t ne[4],
                                  uint32_t *out) {
    *out = type;
    if (!pl_recipe_allows_quantization(s, name, ne)) return POCKETLLM_OK;
    uint32_t t = s->base_type;
    if (pl_type_get(t)->quantized) {
        pocketllm_status st;
        if (!s->pure && (st = recipe_type(s, name, ne, category(name), &t))) return st;
        if ((st = fallback(s, name, ne, &t))) return st;
    }
    *out = t;
    return POCKETLLM_OK;
}

bool pl_recipe_requires_imatrix(const char *name, uint32_t type, uint32_t ftype) {
    if (is_token_embd(name) || strcmp(name, "output.weight") == 0) return false;
    switch (type) {
    case PL_TYPE_IQ3_XXS: case PL_TYPE_IQ2_XXS: case PL_TYPE_IQ2_XS: case PL_TYPE_IQ2_S: case PL_TYPE_IQ1_M:
    case PL_TYPE_IQ1_S:
        return true;
    case PL_TYPE_Q2_K:
        return ftype == PL_FTYPE_Q2_K_S;
    default:
        return false;
    }
}

/* The layer number as sscanf("blk.%d.") reads it: -1 when absent. */
static long layer_number(const char *name) {
    if (strncmp(name, "blk.", 4) != 0) return -1;
    char *end;
    long v = strtol(name + 4, &end, 10);
    if (end == name + 4) return -1;
    if (v > INT32_MAX || v < INT32_MIN) return -1; /* out of %d's range: treat as absent */
    return v;
}

int pl_recipe_order_cmp(const char *a, const char *b) {
    long la = layer_number(a), lb = layer_number(b);
    if (la != lb) return la < lb ? -1 : 1;
    return strcmp(a, b);
}
