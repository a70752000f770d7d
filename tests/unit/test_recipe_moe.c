/*
 * test_recipe_moe.c -- quantization of mixture-of-experts checkpoints,
 * piece by piece: llama.cpp's rule on expert models (the router kept, the
 * layer of an expert tensor read from its name, the n_expert-dependent
 * choices, qwen2moe's shared experts sharing the ffn_down counter); the
 * importance matrix of expert products collected per expert by the
 * MUL_MAT_ID observer (eval/imatrix.c) against llama-imatrix's loop
 * written out here, written in its format and read back by the
 * quantizer; and the refusals of damaged MoE files and of importance
 * rows that do not line up with the experts.  The oracle test
 * (tests/oracle/test_quantize_moe.sh) holds whole files to llama-quantize's.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/compute.h"
#include "eval/eval.h"
#include "gguf/gguf.h"
#include "pltest.h"
#include "quant/types.h"
#include "quantize/imatrix.h"
#include "quantize/recipe.h"

static char dir[] = "/tmp/pl_test_qmoe.XXXXXX";
static char in_path[256], out_path[256], im_path[256];

/* ---- the rule ---------------------------------------------------------------- */

typedef struct tens {
    char name[64];
    int64_t ne[4];
} tens;

/* A qwen3moe (shexp: qwen2moe) model's tensors, in llama.cpp's order. */
static int moe_model(tens *t, int n_layer, int64_t n_expert, bool shexp) {
    int n = 0;
#define T(a, b, c, ...)                                                                                        \
    (snprintf(t[n].name, sizeof t[n].name, __VA_ARGS__), t[n].ne[0] = a, t[n].ne[1] = b, t[n].ne[2] = c, \
     t[n].ne[3] = 1, n++)
    T(256, 1, 1, "output_norm.weight");
    T(256, 300, 1, "output.weight");
    T(256, 300, 1, "token_embd.weight");
    for (int i = 0; i < n_layer; i++) {
        T(256, 512, 1, "blk.%d.attn_k.weight", i);
        T(256, 1, 1, "blk.%d.attn_norm.weight", i);
        T(256, 256, 1, "blk.%d.attn_output.weight", i);
        T(256, 256, 1, "blk.%d.attn_q.weight", i);
        T(256, 512, 1, "blk.%d.attn_v.weight", i);
        T(512, 256, n_expert, "blk.%d.ffn_down_exps.weight", i);
        if (shexp) T(256, 256, 1, "blk.%d.ffn_down_shexp.weight", i);
        T(256, 512, n_expert, "blk.%d.ffn_gate_exps.weight", i);
        T(256, n_expert, 1, "blk.%d.ffn_gate_inp.weight", i);
        if (shexp) T(256, 1, 1, "blk.%d.ffn_gate_inp_shexp.weight", i);
        if (shexp) T(256, 256, 1, "blk.%d.ffn_gate_shexp.weight", i);
        T(256, 1, 1, "blk.%d.ffn_norm.weight", i);
        T(256, 512, n_expert, "blk.%d.ffn_up_exps.weight", i);
        if (shexp) T(256, 256, 1, "blk.%d.ffn_up_shexp.weight", i);
    }
#undef T
    return n;
}

static uint32_t types[1024];

static int plan(const tens *t, int n, const pl_recipe_model *f, const char *recipe, bool imatrix) {
    const char *names[1024];
    for (int i = 0; i < n; i++) names[i] = t[i].name;
    pl_recipe_state s;
    pl_recipe_begin(&s, f, pl_recipe_find(recipe), false, true, imatrix, names, (uint64_t)n);
    for (int i = 0; i < n; i++)
        if (pl_recipe_choose(&s, t[i].name, PL_TYPE_F16, t[i].ne, &types[i])) return 1;
    return 0;
}

static void expect(const tens *t, int n, const char *name, uint32_t want) {
    for (int i = 0; i < n; i++)
        if (!strcmp(t[i].name, name)) {
            CHECK_MSG(types[i] == want, "%s: %s, want %s", name, pl_type_get(types[i])->name, pl_type_get(want)->name);
            return;
        }
    CHECK_MSG(0, "no tensor %s", name);
}

static void test_rule(void) {
    static tens t[1024];
    /* the 30B-A3B facts: 128 experts, gqa 8 */
    pl_recipe_model f = {.n_layer = 8, .n_gqa = 8, .n_expert = 128};
    int n = moe_model(t, 8, 128, false);
    CHECK(plan(t, n, &f, "Q4_K_M", false) == 0);
    expect(t, n, "blk.0.ffn_gate_inp.weight", PL_TYPE_F16); /* the router is never quantized */
    expect(t, n, "blk.0.ffn_down_exps.weight", PL_TYPE_Q6_K); /* use_more_bits(0, 8) */
    expect(t, n, "blk.1.ffn_down_exps.weight", PL_TYPE_Q4_K);
    expect(t, n, "blk.3.ffn_down_exps.weight", PL_TYPE_Q6_K); /* (3 - 1) % 3 == 2 */
    expect(t, n, "blk.7.ffn_down_exps.weight", PL_TYPE_Q6_K);
    expect(t, n, "blk.2.ffn_gate_exps.weight", PL_TYPE_Q4_K);
    expect(t, n, "blk.2.attn_v.weight", PL_TYPE_Q4_K); /* not 8 experts: no q8_0 */
    expect(t, n, "blk.2.attn_output.weight", PL_TYPE_Q4_K);
    CHECK(plan(t, n, &f, "Q2_K", false) == 0);
    expect(t, n, "blk.2.attn_v.weight", PL_TYPE_Q4_K); /* gqa >= 4 */
    expect(t, n, "blk.2.ffn_down_exps.weight", PL_TYPE_Q3_K);
    expect(t, n, "blk.2.attn_output.weight", PL_TYPE_Q3_K);
    /* 8 experts: attn_v and attn_k in q8_0, attn_output in q5_K */
    f.n_expert = 8;
    f.n_gqa = 1;
    n = moe_model(t, 8, 8, false);
    CHECK(plan(t, n, &f, "Q3_K_M", false) == 0);
    expect(t, n, "blk.5.attn_v.weight", PL_TYPE_Q8_0);
    expect(t, n, "blk.5.attn_k.weight", PL_TYPE_Q8_0);
    expect(t, n, "blk.5.attn_output.weight", PL_TYPE_Q5_K);
    CHECK(plan(t, n, &f, "IQ2_XXS", true) == 0);
    expect(t, n, "blk.5.attn_v.weight", PL_TYPE_Q4_K); /* n_expert >= 4 though gqa 1 */
    expect(t, n, "blk.5.attn_k.weight", PL_TYPE_Q4_K);
    expect(t, n, "blk.5.attn_output.weight", PL_TYPE_Q5_K);
    expect(t, n, "blk.0.ffn_down_exps.weight", PL_TYPE_Q2_K);
    expect(t, n, "blk.1.ffn_down_exps.weight", PL_TYPE_IQ2_XXS);
    /* qwen2moe, 4 experts: the shared expert's ffn_down counts too, so the
     * first eighth of 8 layers is blk.0's exps alone (it sorts first) */
    f.n_expert = 4;
    n = moe_model(t, 8, 4, true);
    CHECK(plan(t, n, &f, "IQ2_XXS", true) == 0);
    expect(t, n, "blk.0.ffn_down_exps.weight", PL_TYPE_Q2_K);
    expect(t, n, "blk.0.ffn_down_shexp.weight", PL_TYPE_IQ2_XXS);
    expect(t, n, "blk.0.ffn_gate_inp_shexp.weight", PL_TYPE_F16); /* 1-D */
    expect(t, n, "blk.0.attn_v.weight", PL_TYPE_Q4_K);
    CHECK(plan(t, n, &f, "Q4_K_M", false) == 0);
    expect(t, n, "blk.3.ffn_down_shexp.weight", PL_TYPE_Q6_K); /* by layer, like the experts */
    expect(t, n, "blk.4.ffn_down_shexp.weight", PL_TYPE_Q4_K);
    /* an expert tensor named outside a layer is refused, as in llama.cpp */
    snprintf(t[n].name, sizeof t[n].name, "ffn_down_exps.weight");
    memcpy(t[n].ne, t[n - 1].ne, sizeof t[n].ne);
    CHECK(plan(t, n + 1, &f, "Q4_K_M", false) != 0);
}

/* ---- the importance matrix of expert products --------------------------------- */

enum { NI = 5, NE = 4, NU = 2, NT = 7 };

static void test_observer(void) {
    pl_compute *c = NULL;
    CHECK(pl_cpu_compute_new(1, NULL, &c) == POCKETLLM_OK);
    if (!c) return;
    pl_imat *im = NULL;
    CHECK(pl_imat_new(false, &im) == POCKETLLM_OK);
    pl_imat_attach_compute(im, c);
    CHECK(c->observe_mul_mat_id != NULL);
    pl_weight up = {.name = "blk.0.ffn_up_exps.weight", .n_in = NI, .n_out = 3, .n_expert = NE};
    pl_weight down = {.name = "blk.0.ffn_down_exps.weight", .n_in = NI, .n_out = 3, .n_expert = NE};
    pl_weight dense = {.name = "blk.0.attn_q.weight", .n_in = NI, .n_out = 3};
    /* expert 3 is never chosen: its row stays 0 with a count of 0 */
    static const int32_t ids[NT * NU] = {0, 1, 1, 2, 2, 0, 0, 1, 1, 0, 2, 1, 0, 2};
    float x[NT * NU * NI];
    for (int i = 0; i < NT * NU * NI; i++) x[i] = (float)((i * 37) % 23) / 7.0f - 1.3f;
    for (int pass = 0; pass < 2; pass++) { /* twice: the sums accumulate */
        c->observe_mul_mat_id(c->observe_user, c, &up, x, 1, ids, NU, NT);
        c->observe_mul_mat_id(c->observe_user, c, &down, x, NU, ids, NU, NT);
        c->observe_mul_mat(c->observe_user, c, &dense, x, NT);
    }
    CHECK(c->status == POCKETLLM_OK);
    /* llama-imatrix's loop: slot by slot, token by token, float sums */
    float want_up[NE * NI] = {0}, want_down[NE * NI] = {0};
    int64_t want_n[NE] = {0};
    for (int pass = 0; pass < 2; pass++)
        for (int j = 0; j < NU; j++)
            for (int t = 0; t < NT; t++) {
                const int ex = ids[t * NU + j];
                want_n[ex]++;
                for (int k = 0; k < NI; k++) {
                    const float a = x[t * NI + k], b = x[(t * NU + j) * NI + k];
                    want_up[ex * NI + k] += a * a;
                    want_down[ex * NI + k] += b * b;
                }
            }
    CHECK(pl_imat_count(im) == 3);
    for (size_t i = 0; i < pl_imat_count(im); i++) {
        const float *sum2;
        int64_t n_in, count;
        const int64_t *counts;
        const char *name = pl_imat_entry(im, i, &sum2, &n_in, &count);
        const int64_t rows = pl_imat_entry_rows(im, i, &counts);
        CHECK(n_in == NI);
        if (!strcmp(name, dense.name)) {
            CHECK(rows == 1 && count == 2 * NT);
            continue;
        }
        CHECK_MSG(rows == NE, "%s: %lld rows", name, (long long)rows);
        if (rows != NE) continue;
        const float *want = !strcmp(name, up.name) ? want_up : want_down;
        CHECK_MSG(memcmp(sum2, want, sizeof want_up) == 0, "%s: sums are not llama-imatrix's", name);
        CHECK(memcmp(counts, want_n, sizeof want_n) == 0 && want_n[3] == 0);
    }
    /* written in llama.cpp's layout and read back by the quantizer */
    CHECK(pl_imat_write(im, im_path, "unit", 4) == POCKETLLM_OK);
    pl_gguf *g = NULL;
    CHECK(pocketllm_gguf_open(im_path, &g) == POCKETLLM_OK);
    const pl_gguf_tensor *s = g ? pl_gguf_tensor_by_name(g, "blk.0.ffn_up_exps.weight.in_sum2") : NULL;
    const pl_gguf_tensor *n = g ? pl_gguf_tensor_by_name(g, "blk.0.ffn_up_exps.weight.counts") : NULL;
    CHECK(s && s->n_dims == 2 && s->ne[0] == NI && s->ne[1] == NE);
    CHECK(n && n->n_dims == 2 && n->ne[0] == 1 && n->ne[1] == NE);
    uint64_t chunks = 0;
    CHECK(g && pl_gguf_get_u64(g, "imatrix.chunk_count", 0, &chunks) == POCKETLLM_OK && chunks == 2 * NT / 4);
    pocketllm_gguf_close(g);
    pl_imatrix q;
    CHECK(pl_imatrix_load(im_path, &q) == POCKETLLM_OK);
    const pl_imatrix_entry *e = pl_imatrix_find(&q, up.name);
    CHECK(e && e->n == NE * NI && e->rows == NE);
    for (int k = 0; e && k < NE * NI; k++) {
        const float v = want_n[k / NI] ? want_up[k] / (float)want_n[k / NI] : 1.0f;
        CHECK_MSG(e->values[k] == v, "value %d: %g, want %g", k, e->values[k], v);
    }
    pl_imatrix_free(&q);

    /* the pass stops, with a message, on a routing or a shape it cannot take */
    static const int32_t bad[NT * NU] = {0, 1, 1, 9};
    c->observe_mul_mat_id(c->observe_user, c, &up, x, 1, bad, NU, NT);
    CHECK(c->status != POCKETLLM_OK && strstr(pocketllm_last_error(), "expert 9 of 4"));
    c->status = POCKETLLM_OK;
    pl_weight other = up;
    other.n_expert = 8;
    c->observe_mul_mat_id(c->observe_user, c, &other, x, 1, ids, NU, NT);
    CHECK(c->status != POCKETLLM_OK && strstr(pocketllm_last_error(), up.name));
    c->status = POCKETLLM_OK;
    c->observe_mul_mat_id(c->observe_user, c, &down, x, 3, ids, NU, NT);
    CHECK(c->status != POCKETLLM_OK);
    c->status = POCKETLLM_OK;
    pl_imat_attach_compute(NULL, c);
    CHECK(!c->observe_mul_mat_id && !c->observe_mul_mat);
    pl_imat_free(im);
    c->ops->free(c);
}

/* ---- refusals ----------------------------------------------------------------- */

typedef struct mk {
    uint32_t n_expert, n_used;
    int64_t q_ne2, exps_ne2, router_rows;
} mk;

/* A one-layer qwen3moe of 4 experts (or what m damages). */
static void write_moe(const mk *m) {
    static float data[256 * 1100];
    for (int i = 0; i < 256 * 1100; i++) data[i] = (float)(((unsigned)i * 7919u) % 1000u) / 1000.0f - 0.5f;
    pocketllm_gguf_writer *w;
    pocketllm_gguf_writer_new(&w);
    pocketllm_gguf_writer_set_str(w, "general.architecture", "qwen3moe");
    pocketllm_gguf_writer_set_u32(w, "qwen3moe.block_count", 1);
    pocketllm_gguf_writer_set_u32(w, "qwen3moe.attention.head_count", 2);
    if (m->n_expert) pocketllm_gguf_writer_set_u32(w, "qwen3moe.expert_count", m->n_expert);
    if (m->n_used) pocketllm_gguf_writer_set_u32(w, "qwen3moe.expert_used_count", m->n_used);
    const int64_t q[3] = {256, 64 / m->q_ne2, m->q_ne2}, r[2] = {256, m->router_rows};
    const int64_t e[3] = {256, 64 / m->exps_ne2 * 4, m->exps_ne2}, d[3] = {64 / m->exps_ne2 * 4, 256, m->exps_ne2};
    pocketllm_gguf_writer_add_tensor(w, "blk.0.attn_q.weight", PL_TYPE_F32, m->q_ne2 > 1 ? 3 : 2, q, data);
    pocketllm_gguf_writer_add_tensor(w, "blk.0.ffn_gate_inp.weight", PL_TYPE_F32, 2, r, data);
    pocketllm_gguf_writer_add_tensor(w, "blk.0.ffn_up_exps.weight", PL_TYPE_F32, 3, e, data);
    pocketllm_gguf_writer_add_tensor(w, "blk.0.ffn_down_exps.weight", PL_TYPE_F32, 3, d, data);
    CHECK(pocketllm_gguf_writer_write(w, in_path) == POCKETLLM_OK);
    pocketllm_gguf_writer_free(w);
}

static pocketllm_status quantize(const char *imatrix) {
    pocketllm_quantize_params p = pocketllm_quantize_default_params();
    p.type = "Q4_K_M";
    p.imatrix = imatrix;
    p.n_threads = 2;
    unlink(out_path);
    return pocketllm_quantize(in_path, out_path, &p);
}

static void refused(const mk *m, const char *want) {
    write_moe(m);
    CHECK_MSG(quantize(NULL) == POCKETLLM_ERR_FORMAT, "quantized a file that should be refused (%s)", want);
    CHECK_MSG(strstr(pocketllm_last_error(), want) && !strchr(pocketllm_last_error(), '\n'), "%s: %s", want,
              pocketllm_last_error());
    CHECK(access(out_path, F_OK) != 0);
}

/* An imatrix for the good file's ffn_up_exps: rows of counts as given. */
static void write_imatrix(int64_t rows) {
    static float sums[256 * 4], counts[4];
    for (int i = 0; i < 256 * 4; i++) sums[i] = 1.0f + (float)(i % 17);
    for (int i = 0; i < 4; i++) counts[i] = 3.0f;
    pocketllm_gguf_writer *w;
    pocketllm_gguf_writer_new(&w);
    const char *ds = "unit";
    pocketllm_gguf_writer_set_str_array(w, "imatrix.datasets", &ds, 1);
    pocketllm_gguf_writer_set_u32(w, "imatrix.chunk_count", 1);
    pocketllm_gguf_writer_set_u32(w, "imatrix.chunk_size", 512);
    const int64_t s[2] = {256 * 4 / rows, rows}, n[2] = {1, rows};
    pocketllm_gguf_writer_add_tensor(w, "blk.0.ffn_up_exps.weight.in_sum2", PL_TYPE_F32, 2, s, sums);
    pocketllm_gguf_writer_add_tensor(w, "blk.0.ffn_up_exps.weight.counts", PL_TYPE_F32, 2, n, counts);
    CHECK(pocketllm_gguf_writer_write(w, im_path) == POCKETLLM_OK);
    pocketllm_gguf_writer_free(w);
}

static void test_refusals(void) {
    const mk good = {4, 2, 1, 4, 4};
    write_moe(&good);
    CHECK(quantize(NULL) == POCKETLLM_OK);
    mk m = good;
    m.n_expert = 8;
    refused(&m, "ffn_up_exps.weight is [256, 64, 4, 1]: 4 experts, but qwen3moe.expert_count is 8");
    m = good, m.n_expert = 0, m.n_used = 0;
    refused(&m, "holds experts, but the model has no qwen3moe.expert_count");
    m = good, m.q_ne2 = 2;
    refused(&m, "blk.0.attn_q.weight is [256, 32, 2, 1], where qwen3moe has a matrix");
    m = good, m.router_rows = 3;
    refused(&m, "the router blk.0.ffn_gate_inp.weight has 3 rows");
    m = good, m.n_used = 5;
    refused(&m, "uses 5 experts per token of 4");
    m = good, m.n_used = 0;
    refused(&m, "expert_used_count is missing or 0");
    m = good, m.n_expert = 1025, m.exps_ne2 = 1, m.router_rows = 1025;
    refused(&m, "expert_count = 1025 is out of range");

    /* importance rows: one per expert, or one for all (llama.cpp's
     * broadcast of an old file) -- not two for four */
    write_moe(&good);
    write_imatrix(4);
    CHECK(quantize(im_path) == POCKETLLM_OK);
    write_imatrix(1);
    CHECK(quantize(im_path) == POCKETLLM_OK);
    write_imatrix(2);
    CHECK(quantize(im_path) == POCKETLLM_ERR_FORMAT);
    CHECK(strstr(pocketllm_last_error(), "has 2 rows of counts, the tensor 4 experts") != NULL);
}

int main(void) {
    if (!mkdtemp(dir)) return 1;
    snprintf(in_path, sizeof in_path, "%s/in.gguf", dir);
    snprintf(out_path, sizeof out_path, "%s/out.gguf", dir);
    snprintf(im_path, sizeof im_path, "%s/im.gguf", dir);
    test_rule();
    test_observer();
    test_refusals();
    unlink(in_path);
    unlink(out_path);
    unlink(im_path);
    rmdir(dir);
    TEST_DONE();
}
