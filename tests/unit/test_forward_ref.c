/*
 * test_forward_ref.c -- the engine's forward pass (graph + fast CPU
 * kernels + session) against the same model computed with the scalar
 * reference ops alone, written out here step by step from the math.  It
 * covers the variant switches llama.cpp cannot check for us (a llama with
 * rope.dimension_count below the head size -- llama.cpp refuses those --
 * and rope frequency factors) as well as qwen2 biases and qwen3 Q/K norms,
 * for f32 and f16 KV caches and every weight type the tests can encode.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/tiny_model.h"
#include "model/llama.h"
#include "model/model.h"
#include "ops/ref.h"
#include "pltest.h"
#include "quant/types.h"

/* Logits of every position of ids, with the reference ops only. */
static float *reference_forward(const pl_model *m, const int32_t *ids, int64_t n, uint32_t kv_type) {
    const pl_llama *L = m->weights;
    const pl_llama_hparams *hp = &L->hp;
    const int64_t E = hp->n_embd, H = hp->n_head, KH = hp->n_head_kv, D = hp->head_dim, F = hp->n_ff;
    const int64_t q_dim = H * D, kv_dim = KH * D, V = hp->n_vocab;
    const size_t esz = kv_type == PL_TYPE_F16 ? 2 : 4;
    float *x = calloc((size_t)(n * E), 4), *xb = calloc((size_t)(n * E), 4), *q = calloc((size_t)(n * q_dim), 4);
    float *k = calloc((size_t)(n * kv_dim), 4), *v = calloc((size_t)(n * kv_dim), 4), *att = calloc((size_t)(n * q_dim), 4);
    float *g = calloc((size_t)(n * F), 4), *u = calloc((size_t)(n * F), 4), *out = calloc((size_t)(n * V), 4);
    int32_t *pos = calloc((size_t)n, 4);
    for (int64_t i = 0; i < n; i++) pos[i] = (int32_t)i;
    pl_ref_get_rows(&L->token_embd, ids, n, x);
    for (int64_t il = 0; il < hp->n_layer; il++) {
        const pl_llama_layer *ly = &L->layers[il];
        char *kc = calloc((size_t)(n * kv_dim), esz), *vc = calloc((size_t)(n * kv_dim), esz);
        /* attention */
        pl_ref_rms_norm(x, ly->attn_norm, xb, n, E, hp->rms_eps);
        pl_ref_mul_mat(&ly->attn_q, xb, n, q);
        pl_ref_mul_mat(&ly->attn_k, xb, n, k);
        pl_ref_mul_mat(&ly->attn_v, xb, n, v);
        if (ly->attn_q_bias) pl_ref_add(q, ly->attn_q_bias, q, n, q_dim, 1);
        if (ly->attn_k_bias) pl_ref_add(k, ly->attn_k_bias, k, n, kv_dim, 1);
        if (ly->attn_v_bias) pl_ref_add(v, ly->attn_v_bias, v, n, kv_dim, 1);
        if (ly->attn_q_norm) pl_ref_rms_norm(q, ly->attn_q_norm, q, n * H, D, hp->rms_eps);
        if (ly->attn_k_norm) pl_ref_rms_norm(k, ly->attn_k_norm, k, n * KH, D, hp->rms_eps);
        pl_ref_rope(&L->rope, q, q, n, H, D, pos);
        pl_ref_rope(&L->rope, k, k, n, KH, D, pos);
        pl_ref_kv_store(kv_type, k, kc, n * kv_dim);
        pl_ref_kv_store(kv_type, v, vc, n * kv_dim);
        pl_attn_params ap = {H, KH, D, hp->attn_scale, kv_type, kv_type, false, 0, 0};
        pl_ref_attention(&ap, q, kc, vc, n, 0, att);
        pl_ref_mul_mat(&ly->attn_output, att, n, xb);
        pl_ref_add(x, xb, x, n, E, n);
        /* feed-forward */
        pl_ref_rms_norm(x, ly->ffn_norm, xb, n, E, hp->rms_eps);
        pl_ref_mul_mat(&ly->ffn_gate, xb, n, g);
        pl_ref_mul_mat(&ly->ffn_up, xb, n, u);
        pl_ref_silu_mul(g, u, g, n * F);
        pl_ref_mul_mat(&ly->ffn_down, g, n, xb);
        pl_ref_add(x, xb, x, n, E, n);
        free(kc), free(vc);
    }
    pl_ref_rms_norm(x, L->output_norm, xb, n, E, hp->rms_eps);
    pl_ref_mul_mat(&L->output, xb, n, out);
    if (L->output_bias) pl_ref_add(out, L->output_bias, out, n, V, 1);
    free(x), free(xb), free(q), free(k), free(v), free(att), free(g), free(u), free(pos);
    return out;
}

static void check_model(const tiny_model_spec *spec, const char *path, const char *what) {
    CHECK_MSG(tiny_model_write(spec, path) == POCKETLLM_OK, "%s: %s", what, pocketllm_last_error());
    pocketllm_model *m = NULL;
    if (pocketllm_model_open(path, NULL, &m) != POCKETLLM_OK) {
        CHECK_MSG(0, "%s: %s", what, pocketllm_last_error());
        return;
    }
    const int64_t n = 19, V = m->dims.n_vocab;
    int32_t ids[19];
    for (int i = 0; i < n; i++) ids[i] = (int32_t)((i * 89 + 3) % V);
    for (uint32_t kv = 0; kv <= 1; kv++) {
        pocketllm_session_params sp = pocketllm_session_default_params();
        sp.kv_type = kv;
        sp.n_ctx = 32;
        pocketllm_session *s = NULL;
        CHECK(pocketllm_session_new(m, &sp, &s) == POCKETLLM_OK);
        CHECK(pocketllm_session_eval(s, ids, (size_t)n, 1) == POCKETLLM_OK);
        float *ref = reference_forward(m, ids, n, kv);
        double max_diff = 0, lo = INFINITY, hi = -INFINITY;
        int argmax_agree = 0;
        for (int64_t i = 0; i < n; i++) {
            const float *a = pocketllm_session_logits(s, (int32_t)i), *b = ref + i * V;
            int64_t ia = 0, ib = 0;
            for (int64_t j = 0; j < V; j++) {
                double d = fabs((double)a[j] - (double)b[j]);
                if (d > max_diff || isnan(d)) max_diff = isnan(d) ? INFINITY : d;
                if (b[j] < lo) lo = b[j];
                if (b[j] > hi) hi = b[j];
                if (a[j] > a[ia]) ia = j;
                if (b[j] > b[ib]) ib = j;
            }
            argmax_agree += ia == ib;
        }
        /* The two differ in the order of summation only, but wherever a
         * value is rounded to a narrower type -- activations for f16/bf16/
         * q8_0 weights, q and the softmax weights for an f16 cache -- a
         * value next to a rounding boundary may round the other way and
         * carry one step of that type onward: 2^-11 (f16), 2^-8 (bf16),
         * 1/254 of a block's range (q8_0).  A wiring mistake is O(1). */
        const double rel = max_diff / (hi - lo);
        const double tol = spec->type == PL_TYPE_Q8_0 ? 2e-2 : spec->type != PL_TYPE_F32 ? 2e-3 : kv ? 2e-3 : 1e-5;
        fprintf(stderr, "%s, kv %s: max |diff| %.3g = %.3g of the range %.3g, argmax %d/%lld\n", what, kv ? "f16" : "f32",
                max_diff, rel, hi - lo, argmax_agree, (long long)n);
        CHECK_MSG(rel <= tol, "%s kv %u: relative difference %.3g > %.3g", what, kv, rel, tol);
        free(ref);
        pocketllm_session_free(s);
    }
    pocketllm_model_close(m);
    remove(path);
}

int main(void) {
    char dir[] = "/tmp/pl_test_fwd.XXXXXX";
    if (!mkdtemp(dir)) return 1;
    char path[256];
    snprintf(path, sizeof path, "%s/m.gguf", dir);
    tiny_model_spec s = tiny_model_default();
    check_model(&s, path, "qwen3 f32");
    s.type = PL_TYPE_F16;
    s.tied = true;
    check_model(&s, path, "qwen3 f16 tied");
    s = tiny_model_default();
    s.arch = "llama";
    s.n_rot = 6; /* partial rotary */
    s.rope_freqs = true;
    s.type = PL_TYPE_BF16;
    check_model(&s, path, "llama bf16, 6 of 16 rotated, rope_freqs");
    s = tiny_model_default();
    s.arch = "qwen2";
    s.qkv_bias = true;
    s.n_head_kv = 1;
    check_model(&s, path, "qwen2 biases, one KV head");
    if (pl_ref_type_ok(PL_TYPE_Q8_0) && pl_type_get(PL_TYPE_Q8_0)->from_float) {
        s = tiny_model_default();
        s.type = PL_TYPE_Q8_0;
        check_model(&s, path, "qwen3 q8_0");
    } else {
        CHECK_MSG(0, "q8_0 has no reference kernels in the type table: the q8_0 model was not checked");
    }
    rmdir(dir);
    TEST_DONE();
}
