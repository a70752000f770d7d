/*
 * test_recipe_pipeline.c -- pocketllm_quantize on hand-made checkpoints
 * with the shapes and inputs the synth models of the oracle tests do not
 * have: expert stacks (3-D) whose importance weights are per expert, a
 * tensor with no rows (kept as such: llama.cpp would write a header that
 * drops the 0 extent), data at odd offsets (general.alignment 1), values
 * that do not fit the target type, a tensor type that cannot be converted,
 * a quantized input (copied, refused, or requantized), a split model.  The
 * expected bytes are computed independently: each row through the type's
 * own encoder (pl_quant_from_float) with the weights it should get.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gguf/gguf.h"
#include "pltest.h"
#include "quant/types.h"

static char dir[] = "/tmp/pl_test_qpipe.XXXXXX";
static char in_path[256], out_path[256], im_path[256];

typedef struct tdef {
    const char *name;
    uint32_t type, n_dims;
    int64_t ne[3];
    const void *data;
} tdef;

/* A llama-architecture checkpoint holding these tensors (and the keys the
 * quantizer reads); extra: a key to add ("split" or "align1"). */
static int write_model(const tdef *t, int n, uint32_t n_expert, const char *extra) {
    pocketllm_gguf_writer *w;
    pocketllm_gguf_writer_new(&w);
    pocketllm_gguf_writer_set_str(w, "general.architecture", "llama");
    if (extra && !strcmp(extra, "align1")) pocketllm_gguf_writer_set_u32(w, "general.alignment", 1);
    pocketllm_gguf_writer_set_u32(w, "llama.block_count", 1);
    pocketllm_gguf_writer_set_u32(w, "llama.attention.head_count", 2);
    pocketllm_gguf_writer_set_u32(w, "llama.attention.head_count_kv", 1);
    if (n_expert) pocketllm_gguf_writer_set_u32(w, "llama.expert_count", n_expert);
    /* llama.cpp refuses an expert count without a used count, as we do */
    if (n_expert) pocketllm_gguf_writer_set_u32(w, "llama.expert_used_count", 1);
    if (extra && !strcmp(extra, "split")) pocketllm_gguf_writer_set_u32(w, "split.count", 2);
    for (int i = 0; i < n; i++) pocketllm_gguf_writer_add_tensor(w, t[i].name, t[i].type, t[i].n_dims, t[i].ne, t[i].data);
    pocketllm_status st = pocketllm_gguf_writer_write(w, in_path);
    pocketllm_gguf_writer_free(w);
    return st == POCKETLLM_OK;
}

static pocketllm_status quantize(const char *type, const char *imatrix, int allow_requantize) {
    pocketllm_quantize_params p = pocketllm_quantize_default_params();
    p.type = type;
    p.imatrix = imatrix;
    p.allow_requantize = allow_requantize;
    p.n_threads = 3;
    unlink(out_path);
    return pocketllm_quantize(in_path, out_path, &p);
}

static bool no_output(void) {
    char partial[300];
    snprintf(partial, sizeof partial, "%s.partial", out_path);
    return access(out_path, F_OK) != 0 && access(partial, F_OK) != 0;
}

/* The output tensor `name`, or NULL (g receives the open file). */
static const pl_gguf_tensor *out_tensor(pl_gguf **g, const char *name) {
    if (pocketllm_gguf_open(out_path, g)) return NULL;
    return pl_gguf_tensor_by_name(*g, name);
}

static float frand(uint64_t *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((*s >> 40) & 0xffffff) / 16777216.0f * 2.0f - 1.0f;
}

static void test_experts(void) {
    /* 3 experts of 4 rows of 256; importance weights differ per expert */
    enum { E = 3, R = 4, N = 256 };
    static float w[E * R * N], norm[N];
    uint64_t s = 1;
    for (int i = 0; i < E * R * N; i++) w[i] = frand(&s);
    for (int i = 0; i < N; i++) norm[i] = 1.0f;
    tdef t[2] = {{"blk.0.ffn_up_exps.weight", PL_TYPE_F32, 3, {N, R, E}, w},
                 {"blk.0.ffn_norm.weight", PL_TYPE_F32, 1, {N, 1, 1}, norm}};
    CHECK(write_model(t, 2, E, NULL));
    /* legacy imatrix: one entry of E * N values, 1 call */
    static float im[E * N];
    for (int i = 0; i < E * N; i++) im[i] = 0.01f + (float)((i * 7919) % 1000) / 100.0f;
    FILE *f = fopen(im_path, "wb");
    int32_t one = 1, len = (int32_t)strlen(t[0].name), nval = E * N;
    fwrite(&one, 4, 1, f);
    fwrite(&len, 4, 1, f);
    fwrite(t[0].name, 1, (size_t)len, f);
    fwrite(&one, 4, 1, f);
    fwrite(&nval, 4, 1, f);
    fwrite(im, 4, (size_t)nval, f);
    fclose(f);
    CHECK(quantize("q4_K", im_path, 0) == POCKETLLM_OK);
    pl_gguf *g = NULL;
    const pl_gguf_tensor *o = out_tensor(&g, t[0].name);
    CHECK(o && o->type == PL_TYPE_Q4_K && o->ne[2] == E);
    uint64_t row_bytes;
    pl_type_row_bytes(PL_TYPE_Q4_K, N, &row_bytes);
    static uint8_t want[E * R * 144];
    for (int e = 0; e < E; e++)
        CHECK(pl_quant_from_float(PL_TYPE_Q4_K, w + e * R * N, want + e * R * row_bytes, R, N, im + e * N) == 0);
    CHECK(o && o->n_bytes == sizeof want && memcmp(o->data, want, sizeof want) == 0);
    /* and the weights made a difference (else this would prove nothing) */
    static uint8_t plain[E * R * 144];
    pl_quant_from_float(PL_TYPE_Q4_K, w, plain, E * R, N, NULL);
    CHECK(memcmp(plain, want, sizeof want) != 0);
    const pl_gguf_tensor *nrm = pl_gguf_tensor_by_name(g, "blk.0.ffn_norm.weight");
    CHECK(nrm && nrm->type == PL_TYPE_F32 && memcmp(nrm->data, norm, sizeof norm) == 0);
    pocketllm_gguf_close(g);
}

static void test_shapes_and_values(void) {
    enum { N = 64 };
    static uint16_t h[3 * N];
    static float f[2 * N];
    for (int i = 0; i < 3 * N; i++) h[i] = (uint16_t)(0x3c00 + (i % 200)); /* 1.0 .. */
    for (int i = 0; i < 2 * N; i++) f[i] = (float)i / 10.0f;
    /* no rows, and f16 data at an odd offset: with general.alignment 1,
     * a pad tensor of 1 or 2 bytes puts attn_k at an odd address */
    static const int8_t pad[2] = {1, 2};
    tdef t[3] = {{"blk.0.aaa_pad.bias", PL_TYPE_I8, 1, {1, 1, 1}, pad},
                 {"blk.0.attn_q.weight", PL_TYPE_F16, 2, {N, 0, 1}, h},
                 {"blk.0.attn_k.weight", PL_TYPE_F16, 2, {N, 3, 1}, h}};
    pl_gguf *g = NULL;
    bool odd = false;
    for (int k = 1; k <= 2 && !odd; k++) {
        t[0].ne[0] = k;
        CHECK(write_model(t, 3, 0, "align1"));
        CHECK(pocketllm_gguf_open(in_path, &g) == POCKETLLM_OK);
        odd = g && ((uintptr_t)pl_gguf_tensor_by_name(g, "blk.0.attn_k.weight")->data & 1) != 0;
        pocketllm_gguf_close(g);
    }
    CHECK(odd);
    CHECK(quantize("Q8_0", NULL, 0) == POCKETLLM_OK);
    const pl_gguf_tensor *o = out_tensor(&g, "blk.0.attn_q.weight");
    /* [64, 0] counts as 1-D for llama.cpp (ggml_n_dims): not quantized */
    CHECK(o && o->type == PL_TYPE_F16 && o->n_bytes == 0 && o->ne[1] == 0);
    o = g ? pl_gguf_tensor_by_name(g, "blk.0.attn_k.weight") : NULL;
    float rows[3 * N];
    pl_type_get(PL_TYPE_F16)->to_float(h, rows, 3 * N);
    uint8_t want[3 * 68];
    pl_quant_from_float(PL_TYPE_Q8_0, rows, want, 3, N, NULL);
    CHECK(o && o->n_bytes == sizeof want && memcmp(o->data, want, sizeof want) == 0);
    pocketllm_gguf_close(g);

    /* values f16 cannot hold, or not numbers at all: refused, no file */
    f[5] = 1e6f;
    tdef big = {"blk.0.attn_v.weight", PL_TYPE_F32, 2, {N, 2, 1}, f};
    CHECK(write_model(&big, 1, 0, NULL));
    CHECK(quantize("f16", NULL, 0) == POCKETLLM_ERR_FORMAT);
    CHECK(strstr(pocketllm_last_error(), "blk.0.attn_v.weight") && strstr(pocketllm_last_error(), "not finite"));
    CHECK(no_output());
    f[5] = NAN;
    f[6] = INFINITY;
    CHECK(write_model(&big, 1, 0, NULL));
    CHECK(quantize("Q4_0", NULL, 0) == POCKETLLM_ERR_FORMAT);
    CHECK(no_output());

    /* an integer matrix named like a weight cannot be converted */
    static int32_t ints[2 * N];
    tdef it = {"blk.0.attn_output.weight", PL_TYPE_I32, 2, {N, 2, 1}, ints};
    CHECK(write_model(&it, 1, 0, NULL));
    CHECK(quantize("Q8_0", NULL, 0) == POCKETLLM_ERR_UNSUPPORTED);
    CHECK(strstr(pocketllm_last_error(), "i32") != NULL);
    CHECK(no_output());

    /* one file of a split model */
    CHECK(write_model(t + 2, 1, 0, "split"));
    CHECK(quantize("Q8_0", NULL, 0) == POCKETLLM_ERR_UNSUPPORTED);
    CHECK(strstr(pocketllm_last_error(), "split") != NULL);
    CHECK(no_output());

    /* input and output the same file */
    CHECK(write_model(t + 2, 1, 0, NULL));
    pocketllm_quantize_params p = pocketllm_quantize_default_params();
    p.type = "Q8_0";
    CHECK(pocketllm_quantize(in_path, in_path, &p) == POCKETLLM_ERR_INVALID_ARGUMENT);
    p.type = "Q4_K_X";
    CHECK(pocketllm_quantize(in_path, out_path, &p) == POCKETLLM_ERR_INVALID_ARGUMENT);
    CHECK(strstr(pocketllm_last_error(), "Q4_K_X") != NULL);
}

static void test_requantize(void) {
    enum { N = 256 };
    static float f[2 * N];
    uint64_t s = 9;
    for (int i = 0; i < 2 * N; i++) f[i] = frand(&s);
    uint8_t q8[2 * 8 * 34];
    pl_quant_from_float(PL_TYPE_Q8_0, f, q8, 2, N, NULL);
    tdef t = {"blk.0.attn_q.weight", PL_TYPE_Q8_0, 2, {N, 2, 1}, q8};
    CHECK(write_model(&t, 1, 0, NULL));
    /* already in the target type: copied */
    CHECK(quantize("Q8_0", NULL, 0) == POCKETLLM_OK);
    pl_gguf *g = NULL;
    const pl_gguf_tensor *o = out_tensor(&g, t.name);
    CHECK(o && o->type == PL_TYPE_Q8_0 && memcmp(o->data, q8, sizeof q8) == 0);
    pocketllm_gguf_close(g);
    /* to another type: refused without allow_requantize */
    CHECK(quantize("Q4_0", NULL, 0) == POCKETLLM_ERR_UNSUPPORTED);
    CHECK(strstr(pocketllm_last_error(), "requantiz") != NULL);
    CHECK(no_output());
    /* with it: decoded, then encoded */
    CHECK(quantize("Q4_0", NULL, 1) == POCKETLLM_OK);
    float back[2 * N];
    pl_type_get(PL_TYPE_Q8_0)->to_float(q8, back, 2 * N);
    uint8_t want[2 * 8 * 18];
    pl_quant_from_float(PL_TYPE_Q4_0, back, want, 2, N, NULL);
    o = out_tensor(&g, t.name);
    CHECK(o && o->type == PL_TYPE_Q4_0 && o->n_bytes == sizeof want && memcmp(o->data, want, sizeof want) == 0);
    pocketllm_gguf_close(g);
}

int main(void) {
    if (!mkdtemp(dir)) return 1;
    snprintf(in_path, sizeof in_path, "%s/in.gguf", dir);
    snprintf(out_path, sizeof out_path, "%s/out.gguf", dir);
    snprintf(im_path, sizeof im_path, "%s/im.dat", dir);
    test_experts();
    test_shapes_and_values();
    test_requantize();
    unlink(in_path);
    unlink(out_path);
    unlink(im_path);
    rmdir(dir);
    TEST_DONE();
}
