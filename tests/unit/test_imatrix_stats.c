/*
 * test_imatrix_stats.c -- the importance matrix collected through the
 * forward pass's matmul observer, against the same statistics computed
 * directly: the model run with the scalar reference ops, written out here
 * step by step, summing the square of every input column of every weight.
 * Then the written file read back by the quantizer's own imatrix reader
 * (the path `pocketllm quantize --imatrix` takes), the collector detached
 * (a pass without it leaves the statistics alone), and the name filter
 * (blk.* only; output.weight on request; never the token embeddings).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/tiny_model.h"
#include "eval/eval.h"
#include "model/llama.h"
#include "model/model.h"
#include "ops/ref.h"
#include "pltest.h"
#include "quant/types.h"
#include "quantize/imatrix.h"

/* Expected statistics: one accumulator per weight of the model. */
typedef struct ref_stat {
    const pl_weight *w;
    double *sum2;
} ref_stat;

typedef struct ref_stats {
    ref_stat s[64];
    int n;
} ref_stats;

static void acc(ref_stats *R, const pl_weight *w, const float *x, int64_t n) {
    ref_stat *e = NULL;
    for (int i = 0; i < R->n && !e; i++)
        if (R->s[i].w == w) e = &R->s[i];
    if (!e) {
        e = &R->s[R->n++];
        e->w = w;
        e->sum2 = calloc((size_t)w->n_in, sizeof(double));
    }
    for (int64_t r = 0; r < n; r++)
        for (int64_t j = 0; j < w->n_in; j++) e->sum2[j] += (double)x[r * w->n_in + j] * x[r * w->n_in + j];
}

static void mm(ref_stats *R, const pl_weight *w, const float *x, int64_t n, float *y) {
    acc(R, w, x, n);
    pl_ref_mul_mat(w, x, n, y);
}

/* The whole forward pass of ids with the reference ops (f32 cache),
 * every matmul's input accounted for. */
static void reference_stats(const pl_model *m, const int32_t *ids, int64_t n, ref_stats *R) {
    const pl_llama *L = m->weights;
    const pl_llama_hparams *hp = &L->hp;
    const int64_t E = hp->n_embd, H = hp->n_head, KH = hp->n_head_kv, D = hp->head_dim, F = hp->n_ff;
    const int64_t q_dim = H * D, kv_dim = KH * D, V = hp->n_vocab;
    float *x = calloc((size_t)(n * E), 4), *xb = calloc((size_t)(n * E), 4), *q = calloc((size_t)(n * q_dim), 4);
    float *k = calloc((size_t)(n * kv_dim), 4), *v = calloc((size_t)(n * kv_dim), 4), *att = calloc((size_t)(n * q_dim), 4);
    float *g = calloc((size_t)(n * F), 4), *u = calloc((size_t)(n * F), 4), *out = calloc((size_t)(n * V), 4);
    int32_t *pos = calloc((size_t)n, 4);
    for (int64_t i = 0; i < n; i++) pos[i] = (int32_t)i;
    pl_ref_get_rows(&L->token_embd, ids, n, x);
    for (int64_t il = 0; il < hp->n_layer; il++) {
        const pl_llama_layer *ly = &L->layers[il];
        float *kc = calloc((size_t)(n * kv_dim), 4), *vc = calloc((size_t)(n * kv_dim), 4);
        pl_ref_rms_norm(x, ly->attn_norm, xb, n, E, hp->rms_eps);
        mm(R, &ly->attn_q, xb, n, q);
        mm(R, &ly->attn_k, xb, n, k);
        mm(R, &ly->attn_v, xb, n, v);
        if (ly->attn_q_norm) pl_ref_rms_norm(q, ly->attn_q_norm, q, n * H, D, hp->rms_eps);
        if (ly->attn_k_norm) pl_ref_rms_norm(k, ly->attn_k_norm, k, n * KH, D, hp->rms_eps);
        pl_ref_rope(&L->rope, q, q, n, H, D, pos);
        pl_ref_rope(&L->rope, k, k, n, KH, D, pos);
        pl_ref_kv_store(PL_TYPE_F32, k, kc, n * kv_dim);
        pl_ref_kv_store(PL_TYPE_F32, v, vc, n * kv_dim);
        pl_attn_params ap = {H, KH, D, hp->attn_scale, PL_TYPE_F32, PL_TYPE_F32, false, 0, 0};
        pl_ref_attention(&ap, q, kc, vc, n, 0, att);
        mm(R, &ly->attn_output, att, n, xb);
        pl_ref_add(x, xb, x, n, E, n);
        pl_ref_rms_norm(x, ly->ffn_norm, xb, n, E, hp->rms_eps);
        mm(R, &ly->ffn_gate, xb, n, g);
        mm(R, &ly->ffn_up, xb, n, u);
        pl_ref_silu_mul(g, u, g, n * F);
        mm(R, &ly->ffn_down, g, n, xb);
        pl_ref_add(x, xb, x, n, E, n);
        free(kc), free(vc);
    }
    pl_ref_rms_norm(x, L->output_norm, xb, n, E, hp->rms_eps);
    mm(R, &L->output, xb, n, out);
    free(x), free(xb), free(q), free(k), free(v), free(att), free(g), free(u), free(out), free(pos);
}

static const ref_stat *ref_find(const ref_stats *R, const char *name) {
    for (int i = 0; i < R->n; i++)
        if (!strcmp(R->s[i].w->name, name)) return &R->s[i];
    return NULL;
}

static void check_model(const tiny_model_spec *spec, const char *dir, const char *what) {
    char path[512], out[512];
    snprintf(path, sizeof path, "%s/m.gguf", dir);
    snprintf(out, sizeof out, "%s/m.imatrix", dir);
    CHECK_MSG(tiny_model_write(spec, path) == POCKETLLM_OK, "%s: %s", what, pocketllm_last_error());
    pocketllm_model *m = NULL;
    if (pocketllm_model_open(path, NULL, &m) != POCKETLLM_OK) {
        CHECK_MSG(0, "%s: %s", what, pocketllm_last_error());
        return;
    }
    const int64_t n = 23, V = m->dims.n_vocab;
    int32_t ids[23];
    for (int i = 0; i < n; i++) ids[i] = (int32_t)((i * 97 + 5) % V);

    for (int process_output = 0; process_output <= 1; process_output++) {
        pl_imat *im = NULL;
        CHECK(pl_imat_new(process_output, &im) == POCKETLLM_OK);
        pocketllm_session_params sp = pocketllm_session_default_params();
        sp.kv_type = PL_TYPE_F32;
        sp.n_ctx = 64;
        sp.n_batch = 8; /* several passes: the sums must not care */
        pocketllm_session *s = NULL;
        CHECK(pocketllm_session_new(m, &sp, &s) == POCKETLLM_OK);
        pl_imat_attach(im, s);
        CHECK(pocketllm_session_eval(s, ids, (size_t)n, 1) == POCKETLLM_OK);
        pl_imat_attach(NULL, s);
        /* detached: this pass is not counted */
        CHECK(pocketllm_session_eval(s, ids, 5, 1) == POCKETLLM_OK);

        ref_stats R = {0};
        reference_stats(m, ids, n, &R);
        const int64_t per_layer = 7;
        const size_t want = (size_t)(m->dims.n_layer * per_layer + (process_output && !spec->tied ? 1 : 0));
        CHECK_MSG(pl_imat_count(im) == want, "%s: %zu matrices collected, %zu expected", what, pl_imat_count(im), want);
        double max_rel = 0;
        for (size_t i = 0; i < pl_imat_count(im); i++) {
            const float *sum2;
            int64_t n_in, count;
            const char *name = pl_imat_entry(im, i, &sum2, &n_in, &count);
            CHECK_MSG(!strncmp(name, "blk.", 4) || (process_output && !strcmp(name, "output.weight")),
                      "%s: collected %s", what, name);
            CHECK_MSG(count == n, "%s: %s counted %lld tokens, not %lld", what, name, (long long)count, (long long)n);
            const ref_stat *r = ref_find(&R, name);
            CHECK_MSG(r && r->w->n_in == n_in, "%s: %s has no reference", what, name);
            if (!r) continue;
            for (int64_t j = 0; j < n_in; j++) {
                const double rel = fabs(sum2[j] - r->sum2[j]) / fmax(r->sum2[j], 1e-20);
                if (rel > max_rel || isnan(rel)) max_rel = isnan(rel) ? INFINITY : rel;
            }
        }
        /* both are the same math in f32 (the fast kernels against the scalar
         * reference, the sum in float against double): 1e-4 of each column's
         * own size; a missed or doubled pass would be 100% */
        fprintf(stderr, "%s (process_output %d): %zu matrices, max relative difference %.3g\n", what, process_output,
                pl_imat_count(im), max_rel);
        CHECK_MSG(max_rel <= 1e-4, "%s: statistics differ from the reference by %.3g", what, max_rel);

        /* the file, read back as the quantizer reads it: mean squares */
        CHECK(pl_imat_write(im, out, "unit test", 8) == POCKETLLM_OK);
        pl_imatrix q;
        if (pl_imatrix_load(out, &q) == POCKETLLM_OK) {
            CHECK_EQ_U64(q.n_entries, pl_imat_count(im));
            CHECK(q.chunk_count == n / 8);
            CHECK_STR(q.dataset, "unit test");
            for (size_t i = 0; i < pl_imat_count(im); i++) {
                const float *sum2;
                int64_t n_in, count;
                const char *name = pl_imat_entry(im, i, &sum2, &n_in, &count);
                const pl_imatrix_entry *e = pl_imatrix_find(&q, name);
                CHECK_MSG(e && e->n == (uint64_t)n_in, "%s: %s not read back", what, name);
                if (!e) continue;
                for (int64_t j = 0; j < n_in; j++)
                    CHECK_MSG(e->values[j] == sum2[j] / (float)count, "%s: %s[%lld] reads %g, wrote %g/%lld", what, name,
                              (long long)j, e->values[j], sum2[j], (long long)count);
            }
            pl_imatrix_free(&q);
        } else {
            CHECK_MSG(0, "%s: the quantizer cannot read the imatrix: %s", what, pocketllm_last_error());
        }
        for (int i = 0; i < R.n; i++) free(R.s[i].sum2);
        pocketllm_session_free(s);
        pl_imat_free(im);
    }
    pocketllm_model_close(m);
    remove(path);
    remove(out);
}

int main(void) {
    char dir[] = "/tmp/pl_test_imatrix.XXXXXX";
    if (!mkdtemp(dir)) return 1;
    tiny_model_spec s = tiny_model_default();
    check_model(&s, dir, "qwen3 f32 untied");
    s.tied = true;
    s.arch = "llama";
    check_model(&s, dir, "llama f32 tied");

    /* nothing observed: nothing to write */
    pl_imat *im = NULL;
    CHECK(pl_imat_new(false, &im) == POCKETLLM_OK);
    char out[512];
    snprintf(out, sizeof out, "%s/empty.imatrix", dir);
    CHECK(pl_imat_write(im, out, NULL, 512) == POCKETLLM_ERR_INVALID_ARGUMENT);
    CHECK(access(out, F_OK) != 0);
    pl_imat_free(im);
    rmdir(dir);
    TEST_DONE();
}
