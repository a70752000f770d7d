/*
 * test_recipe.c -- the recipe table and llama.cpp's per-tensor type rule
 * (src/quantize/recipe.c) on hand-built models, with the expected types
 * worked out from llama.cpp v0.4.0's llama-quant.cpp by hand; the names
 * pocketllm_quantize accepts.  (The oracle tests compare whole files with
 * llama.cpp's own output; these pin the rule's corners one by one.)
 */
#include <stdlib.h>
#include <string.h>

#include "pltest.h"
#include "quant/types.h"
#include "quantize/recipe.h"

/* A dense model's tensors, in llama.cpp's order. */
typedef struct model {
    char names[1024][64];
    int64_t ne[1024][4];
    const char *ptrs[1024];
    int n;
} model;

static void add(model *m, const char *name, int64_t ne0, int64_t ne1) {
    snprintf(m->names[m->n], 64, "%s", name);
    m->ne[m->n][0] = ne0;
    m->ne[m->n][1] = ne1;
    m->ne[m->n][2] = m->ne[m->n][3] = 1;
    m->ptrs[m->n] = m->names[m->n];
    m->n++;
}


/* n_layer layers of width n_embd, ffn n_ff, kv width kv; untied adds
 * output.weight. */
static void build(model *m, int n_layer, int64_t n_embd, int64_t kv, int64_t n_ff, int untied) {
    memset(m, 0, sizeof *m);
    add(m, "token_embd.weight", n_embd, 300);
    add(m, "output_norm.weight", n_embd, 1);
    if (untied) add(m, "output.weight", n_embd, 300);
    for (int i = 0; i < n_layer; i++) {
        char b[64];
#define L(s, a, c) (snprintf(b, sizeof b, "blk.%d." s, i), add(m, b, a, c))
        L("attn_norm.weight", n_embd, 1);
        L("attn_q.weight", n_embd, n_embd);
        L("attn_k.weight", n_embd, kv);
        L("attn_v.weight", n_embd, kv);
        L("attn_output.weight", n_embd, n_embd);
        L("ffn_norm.weight", n_embd, 1);
        L("ffn_gate.weight", n_embd, n_ff);
        L("ffn_up.weight", n_embd, n_ff);
        L("ffn_down.weight", n_ff, n_embd);
#undef L
    }
}

/* Types chosen for every tensor; out[i] follows the sorted order. */
typedef struct plan {
    const char *name[1024];
    uint32_t type[1024];
    int n;
} plan;

static int run(const model *m0, const pl_recipe_model *facts, const char *recipe, int pure, int quantize_output,
               int has_imatrix, plan *p) {
    model m = *m0;
    for (int i = 0; i < m.n; i++) m.ptrs[i] = m.names[i];
    /* sort names and shapes together */
    int idx[1024];
    for (int i = 0; i < m.n; i++) idx[i] = i;
    for (int i = 1; i < m.n; i++)
        for (int j = i; j > 0 && pl_recipe_order_cmp(m.names[idx[j - 1]], m.names[idx[j]]) > 0; j--) {
            int t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
    const char *names[1024];
    for (int i = 0; i < m.n; i++) names[i] = m.names[idx[i]];
    pl_recipe_state s;
    pl_recipe_begin(&s, facts, pl_recipe_find(recipe), pure, quantize_output, has_imatrix, names, (uint64_t)m.n);
    p->n = m.n;
    for (int i = 0; i < m.n; i++) {
        p->name[i] = m0->names[idx[i]];
        if (pl_recipe_choose(&s, names[i], PL_TYPE_F16, m.ne[idx[i]], &p->type[i])) return 1;
    }
    return 0;
}

static uint32_t type_of(const plan *p, const char *name) {
    for (int i = 0; i < p->n; i++)
        if (strcmp(p->name[i], name) == 0) return p->type[i];
    return 9999;
}

static void expect(const plan *p, const char *name, uint32_t want) {
    uint32_t got = type_of(p, name);
    CHECK_MSG(got == want, "%s: got %s, want %s", name, got < PL_TYPE_COUNT ? pl_type_get(got)->name : "?",
              pl_type_get(want)->name);
}

static void expect_layers(const plan *p, const char *suffix, int n_layer, const uint32_t *want) {
    for (int i = 0; i < n_layer; i++) {
        char b[64];
        snprintf(b, sizeof b, "blk.%d.%s", i, suffix);
        expect(p, b, want[i]);
    }
}

static void test_names(void) {
    CHECK(pocketllm_quantize_type_known("Q4_K_M"));
    CHECK(pocketllm_quantize_type_known("IQ2_XXS"));
    CHECK(pocketllm_quantize_type_known("Q4_K"));   /* llama-quantize's alias of Q4_K_M */
    CHECK(pocketllm_quantize_type_known("q4_K"));   /* a tensor type */
    CHECK(pocketllm_quantize_type_known("q4_k"));
    CHECK(pocketllm_quantize_type_known("f16"));
    CHECK(pocketllm_quantize_type_known("F16"));
    CHECK(!pocketllm_quantize_type_known("q4_K_M")); /* lower case: a type, and there is none such */
    CHECK(!pocketllm_quantize_type_known("q8_K"));   /* no llama.cpp file is made of q8_K */
    CHECK(!pocketllm_quantize_type_known("Q9_0"));
    CHECK(!pocketllm_quantize_type_known(""));
    CHECK(!pocketllm_quantize_type_known(NULL));
    CHECK(pl_recipe_find("Q4_K")->ftype == PL_FTYPE_Q4_K_M);
    CHECK(pl_recipe_find("IQ2_S")->base_type == PL_TYPE_IQ2_XS); /* as llama.cpp: IQ2_S is mostly iq2_xs */
    CHECK(pl_recipe_find("IQ2_M")->base_type == PL_TYPE_IQ2_S);
    CHECK(pl_recipe_for_type(PL_TYPE_Q4_K)->ftype == PL_FTYPE_Q4_K_S);
    CHECK(pl_recipe_for_type(PL_TYPE_IQ2_S)->ftype == PL_FTYPE_IQ2_M);
    CHECK(pl_recipe_for_type(PL_TYPE_Q8_K) == NULL);
    /* every listed name is known, recipes first */
    int recipes = 0, types = 0, is_recipe, seen_type = 0;
    const char *name, *summary;
    for (uint32_t i = 0; (name = pocketllm_quantize_name(i, &is_recipe, &summary)); i++) {
        CHECK_MSG(pocketllm_quantize_type_known(name), "%s", name);
        CHECK(summary && *summary);
        if (is_recipe) {
            CHECK(!seen_type);
            recipes++;
        } else {
            seen_type = 1;
            types++;
        }
    }
    CHECK(recipes == 38);
    CHECK(types == 27);
}

static void test_order_and_filters(void) {
    CHECK(pl_recipe_order_cmp("output.weight", "blk.0.attn_q.weight") < 0); /* no layer sorts first */
    CHECK(pl_recipe_order_cmp("blk.2.ffn_up.weight", "blk.10.attn_q.weight") < 0);
    CHECK(pl_recipe_order_cmp("blk.1.attn_v.weight", "blk.1.attn_k.weight") > 0);
    CHECK(pl_recipe_order_cmp("output_norm.weight", "output.weight") > 0);
    int64_t vec[4] = {64, 1, 1, 1}, mat[4] = {64, 64, 1, 1}, row[4] = {64, 1, 1, 1};
    CHECK(pl_recipe_n_dims(vec) == 1);
    CHECK(pl_recipe_n_dims(mat) == 2);
    int64_t stack[4] = {64, 1, 8, 1};
    CHECK(pl_recipe_n_dims(stack) == 3);
    pl_recipe_state s;
    pl_recipe_model facts = {.n_layer = 1};
    const char *none[1] = {"x"};
    pl_recipe_begin(&s, &facts, pl_recipe_find("Q4_0"), false, true, false, none, 1);
    CHECK(pl_recipe_allows_quantization(&s, "blk.0.attn_q.weight", mat));
    CHECK(!pl_recipe_allows_quantization(&s, "blk.0.attn_q.weight", row)); /* [64, 1] counts as 1-D */
    CHECK(!pl_recipe_allows_quantization(&s, "blk.0.attn_norm.weight", mat));
    CHECK(!pl_recipe_allows_quantization(&s, "blk.0.ffn_gate_inp.weight", mat));
    CHECK(!pl_recipe_allows_quantization(&s, "blk.0.attn_q.bias", mat));
    CHECK(!pl_recipe_allows_quantization(&s, "position_embd.weight", mat));
    CHECK(pl_recipe_allows_quantization(&s, "abcde", mat)); /* llama.cpp's rfind quirk */
    CHECK(pl_recipe_allows_quantization(&s, "output.weight", mat));
    pl_recipe_begin(&s, &facts, pl_recipe_find("Q4_0"), false, false, false, none, 1);
    CHECK(!pl_recipe_allows_quantization(&s, "output.weight", mat)); /* --leave-output */
    CHECK(pl_recipe_requires_imatrix("blk.0.attn_q.weight", PL_TYPE_IQ2_XXS, PL_FTYPE_IQ2_XXS));
    CHECK(pl_recipe_requires_imatrix("blk.0.attn_q.weight", PL_TYPE_IQ3_XXS, PL_FTYPE_IQ3_M));
    CHECK(!pl_recipe_requires_imatrix("token_embd.weight", PL_TYPE_IQ2_XXS, PL_FTYPE_IQ2_XXS));
    CHECK(!pl_recipe_requires_imatrix("output.weight", PL_TYPE_IQ1_S, PL_FTYPE_IQ1_S));
    CHECK(pl_recipe_requires_imatrix("blk.0.ffn_up.weight", PL_TYPE_Q2_K, PL_FTYPE_Q2_K_S));
    CHECK(!pl_recipe_requires_imatrix("blk.0.ffn_up.weight", PL_TYPE_Q2_K, PL_FTYPE_Q2_K));
    CHECK(!pl_recipe_requires_imatrix("blk.0.ffn_up.weight", PL_TYPE_IQ3_S, PL_FTYPE_IQ3_S));
}

enum { Q4K = PL_TYPE_Q4_K, Q5K = PL_TYPE_Q5_K, Q6K = PL_TYPE_Q6_K, Q3K = PL_TYPE_Q3_K };

static void test_k_mixtures(void) {
    static model m;
    plan p;
    /* 8 layers, gqa 2, tied, every row a multiple of 256 */
    build(&m, 8, 256, 128, 512, 0);
    pl_recipe_model f8 = {.n_layer = 8, .n_gqa = 2};
    CHECK(run(&m, &f8, "Q4_K_M", 0, 1, 0, &p) == 0);
    /* use_more_bits(i, 8): i < 1, i >= 7, (i - 1) % 3 == 2 -> layers 0, 3, 6, 7 */
    const uint32_t more[8] = {Q6K, Q4K, Q4K, Q6K, Q4K, Q4K, Q6K, Q6K};
    expect_layers(&p, "attn_v.weight", 8, more);
    expect_layers(&p, "ffn_down.weight", 8, more);
    expect(&p, "blk.4.attn_q.weight", Q4K);
    expect(&p, "token_embd.weight", Q6K); /* tied: quantized as the output */
    expect(&p, "output_norm.weight", PL_TYPE_F16); /* 1-D: left as it is */

    CHECK(run(&m, &f8, "Q3_K_M", 0, 1, 0, &p) == 0);
    const uint32_t v3[8] = {Q5K, Q5K, Q4K, Q4K, Q4K, Q4K, Q4K, Q4K};
    expect_layers(&p, "attn_v.weight", 8, v3);
    const uint32_t d3[8] = {Q4K, Q4K, Q4K, Q4K, Q4K, Q4K, Q4K, Q4K}; /* 8/16 = 0 layers of q5_K; not falcon */
    expect_layers(&p, "ffn_down.weight", 8, d3);
    expect(&p, "blk.0.attn_output.weight", Q4K);
    expect(&p, "blk.0.ffn_up.weight", Q3K);

    CHECK(run(&m, &f8, "Q4_K_S", 0, 1, 0, &p) == 0);
    const uint32_t vs[8] = {Q5K, Q5K, Q5K, Q5K, Q4K, Q4K, Q4K, Q4K};
    expect_layers(&p, "attn_v.weight", 8, vs);
    const uint32_t ds[8] = {Q5K, Q4K, Q4K, Q4K, Q4K, Q4K, Q4K, Q4K};
    expect_layers(&p, "ffn_down.weight", 8, ds);

    CHECK(run(&m, &f8, "Q2_K", 0, 1, 0, &p) == 0);
    expect(&p, "blk.5.attn_v.weight", Q3K); /* gqa 2 */
    expect(&p, "blk.5.ffn_down.weight", Q3K);
    expect(&p, "blk.5.attn_output.weight", Q3K);
    expect(&p, "blk.5.attn_q.weight", PL_TYPE_Q2_K);
    pl_recipe_model g4 = f8;
    g4.n_gqa = 4;
    CHECK(run(&m, &g4, "Q2_K", 0, 1, 0, &p) == 0);
    expect(&p, "blk.5.attn_v.weight", Q4K);

    /* Q4_0 with an imatrix: the first n/8 ffn_down layers become q4_1 */
    CHECK(run(&m, &f8, "Q4_0", 0, 1, 1, &p) == 0);
    expect(&p, "blk.0.ffn_down.weight", PL_TYPE_Q4_1);
    expect(&p, "blk.1.ffn_down.weight", PL_TYPE_Q4_0);
    CHECK(run(&m, &f8, "Q4_0", 0, 1, 0, &p) == 0);
    expect(&p, "blk.0.ffn_down.weight", PL_TYPE_Q4_0);
    expect(&p, "token_embd.weight", Q6K);

    /* --pure: the base type everywhere, the output too */
    CHECK(run(&m, &f8, "Q4_K_M", 1, 1, 0, &p) == 0);
    expect(&p, "blk.0.attn_v.weight", Q4K);
    expect(&p, "token_embd.weight", Q4K);

    /* untied: output.weight takes the output rule, token_embd the base type */
    build(&m, 8, 256, 128, 512, 1);
    CHECK(run(&m, &f8, "Q5_K_S", 0, 1, 0, &p) == 0);
    expect(&p, "output.weight", Q6K);
    expect(&p, "token_embd.weight", Q5K);
    CHECK(run(&m, &f8, "Q5_K_S", 0, 0, 0, &p) == 0); /* --leave-output */
    expect(&p, "output.weight", PL_TYPE_F16);
    expect(&p, "token_embd.weight", Q5K);
}

static void test_fallbacks(void) {
    static model m;
    plan p;
    /* ffn rows of 352 (11 x 32): 256-blocks fall back */
    build(&m, 8, 256, 128, 352, 0);
    pl_recipe_model f8 = {.n_layer = 8, .n_gqa = 2};
    CHECK(run(&m, &f8, "Q4_K_M", 0, 1, 0, &p) == 0);
    expect(&p, "blk.0.ffn_down.weight", PL_TYPE_Q8_0); /* q6_K -> q8_0 */
    expect(&p, "blk.1.ffn_down.weight", PL_TYPE_Q5_0); /* q4_K -> q5_0 */
    expect(&p, "blk.1.ffn_up.weight", Q4K);            /* rows of 256 */
    CHECK(run(&m, &f8, "Q5_K_S", 0, 1, 0, &p) == 0);
    expect(&p, "blk.1.ffn_down.weight", PL_TYPE_Q5_1);
    CHECK(run(&m, &f8, "Q3_K_S", 0, 1, 0, &p) == 0);
    expect(&p, "blk.1.ffn_down.weight", PL_TYPE_Q4_0);
    CHECK(run(&m, &f8, "IQ3_S", 0, 1, 0, &p) == 0);
    expect(&p, "blk.1.ffn_down.weight", PL_TYPE_IQ4_NL);
    /* width 80: not even whole 32-blocks -> f16; the output -> q8_0 -> f16 */
    build(&m, 2, 80, 40, 96, 0);
    pl_recipe_model f2 = {.n_layer = 2, .n_gqa = 2};
    CHECK(run(&m, &f2, "Q4_K_M", 0, 1, 0, &p) == 0);
    expect(&p, "blk.0.attn_q.weight", PL_TYPE_F16);
    expect(&p, "token_embd.weight", PL_TYPE_F16);
    expect(&p, "blk.0.ffn_down.weight", PL_TYPE_Q5_0); /* rows of 96: q4_K -> q5_0 */
    expect(&p, "blk.1.ffn_down.weight", PL_TYPE_Q8_0); /* use_more_bits(1, 2): q6_K -> q8_0 */
    CHECK(run(&m, &f2, "Q8_0", 0, 1, 0, &p) == 0);
    expect(&p, "blk.1.ffn_down.weight", PL_TYPE_Q8_0);
    expect(&p, "blk.1.ffn_up.weight", PL_TYPE_F16);
    /* a 128-block type has no fallback: llama.cpp refuses */
    CHECK(run(&m, &f2, "Q1_0", 1, 1, 0, &p) != 0);
}

static void test_low_bit(void) {
    static model m;
    plan p;
    build(&m, 8, 256, 128, 512, 0);
    pl_recipe_model f8 = {.n_layer = 8, .n_gqa = 2};
    CHECK(run(&m, &f8, "IQ2_XXS", 0, 1, 1, &p) == 0);
    expect(&p, "token_embd.weight", PL_TYPE_Q5_K); /* tied: the output rule for IQ1/IQ2 */
    expect(&p, "blk.0.attn_v.weight", PL_TYPE_Q2_K);
    expect(&p, "blk.0.ffn_down.weight", PL_TYPE_Q2_K); /* first n/8 layers */
    expect(&p, "blk.1.ffn_down.weight", PL_TYPE_IQ2_XXS);
    expect(&p, "blk.1.attn_output.weight", PL_TYPE_IQ2_XXS);
    CHECK(run(&m, &f8, "IQ1_M", 0, 1, 1, &p) == 0);
    expect(&p, "blk.1.attn_output.weight", PL_TYPE_IQ2_XXS);
    expect(&p, "blk.1.attn_q.weight", PL_TYPE_IQ1_M);
    CHECK(run(&m, &f8, "IQ2_M", 0, 1, 1, &p) == 0);
    expect(&p, "blk.0.attn_v.weight", PL_TYPE_IQ3_S);
    expect(&p, "blk.3.attn_q.weight", PL_TYPE_IQ2_S);
    /* IQ3_XXS: attn_v and ffn_down depend on whether there is an imatrix */
    CHECK(run(&m, &f8, "IQ3_XXS", 0, 1, 0, &p) == 0);
    expect(&p, "blk.2.attn_v.weight", PL_TYPE_IQ3_S);
    expect(&p, "blk.0.ffn_down.weight", Q4K);
    expect(&p, "blk.2.ffn_down.weight", Q3K);
    expect(&p, "blk.2.attn_q.weight", PL_TYPE_IQ2_S);
    CHECK(run(&m, &f8, "IQ3_XXS", 0, 1, 1, &p) == 0);
    expect(&p, "blk.2.attn_v.weight", PL_TYPE_IQ3_XXS);
    expect(&p, "blk.2.ffn_down.weight", PL_TYPE_IQ3_XXS);
    CHECK(run(&m, &f8, "TQ1_0", 0, 1, 0, &p) == 0);
    expect(&p, "token_embd.weight", Q6K); /* tied: the output rule comes first */
    build(&m, 8, 256, 128, 512, 1);
    CHECK(run(&m, &f8, "TQ1_0", 0, 1, 0, &p) == 0);
    expect(&p, "token_embd.weight", Q4K);
    expect(&p, "blk.0.ffn_up.weight", PL_TYPE_TQ1_0);
}

static void test_model_specific(void) {
    static model m;
    plan p;
    /* a 70B llama: attn_v that would be q4_K becomes q5_K */
    build(&m, 80, 256, 32, 256, 1);
    pl_recipe_model f70 = {.n_layer = 80, .n_gqa = 8, .is_70b = true};
    CHECK(run(&m, &f70, "Q4_K_S", 0, 1, 0, &p) == 0);
    expect(&p, "blk.40.attn_v.weight", Q5K);
    /* counters follow llama.cpp's order: blk.10 comes after blk.9 */
    pl_recipe_model f80 = {.n_layer = 80, .n_gqa = 2};
    CHECK(run(&m, &f80, "Q3_K_M", 0, 1, 0, &p) == 0);
    expect(&p, "blk.0.attn_v.weight", Q5K);
    expect(&p, "blk.1.attn_v.weight", Q5K);
    expect(&p, "blk.4.ffn_down.weight", Q5K); /* 80/16 = 5 */
    expect(&p, "blk.5.ffn_down.weight", Q4K);
    expect(&p, "blk.2.ffn_down.weight", Q5K); /* (in name order blk.2 would come after blk.19) */
    expect(&p, "blk.10.ffn_down.weight", Q4K);
    /* falcon */
    build(&m, 8, 256, 128, 512, 1);
    pl_recipe_model fal = {.n_layer = 8, .n_gqa = 2, .falcon = true};
    CHECK(run(&m, &fal, "Q3_K_L", 0, 1, 0, &p) == 0);
    expect(&p, "blk.3.ffn_down.weight", Q4K);
    expect(&p, "blk.3.attn_output.weight", Q4K);
    expect(&p, "output.weight", PL_TYPE_Q8_0);
    /* 8 experts: attn_v in q8_0, layer read from the name */
    pl_recipe_model moe = {.n_layer = 8, .n_gqa = 2, .n_expert = 8};
    CHECK(run(&m, &moe, "Q4_K_M", 0, 1, 0, &p) == 0);
    expect(&p, "blk.2.attn_v.weight", PL_TYPE_Q8_0);
    expect(&p, "blk.2.attn_k.weight", PL_TYPE_Q8_0);
    expect(&p, "blk.2.attn_output.weight", Q5K);
}

int main(void) {
    test_names();
    test_order_and_filters();
    test_k_mixtures();
    test_fallbacks();
    test_low_bit();
    test_model_specific();
    TEST_DONE();
}
