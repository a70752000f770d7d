/*
 * mmproj_plan.h -- what the mmproj loader tests (test_vision_load.c,
 * test_audio_load.c) share to write their tiny towers: random f32 data, a
 * plan that adds tensors to a GGUF writer and keeps their buffers until the
 * file is written, and the linear / layer-norm tensor pairs.  Header-only,
 * included after pltest.h: its CHECKs count in the including test.
 */
#ifndef PL_TEST_MMPROJ_PLAN_H
#define PL_TEST_MMPROJ_PLAN_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/half.h"
#include "pltest.h"
#include "pocketllm.h"
#include "quant/types.h"

/* n floats in [-scale, scale] from rand() (the tests seed it per file). */
static float *rnd(size_t n, float scale) {
    float *p = malloc(n * sizeof *p);
    for (size_t i = 0; i < n; i++) p[i] = scale * (float)((int)(rand() % 2001) - 1000) / 1000.0f;
    return p;
}

typedef struct plan {
    pocketllm_gguf_writer *w;
    void *keep[128];
    int n_keep;
} plan;

/* A tensor of [e0, e1, e2, e3] (n_dims of them count) of random values:
 * f32, or rounded to f16 / bf16; q8_0 is zero blocks (a valid row). */
static void tensor(plan *p, const char *name, uint32_t type, uint32_t n_dims, int64_t e0, int64_t e1, int64_t e2,
                   int64_t e3, float scale) {
    const int64_t ne[4] = {e0, e1, e2, e3};
    const size_t n = (size_t)(e0 * e1 * e2 * e3);
    void *data;
    if (type == PL_TYPE_Q8_0) {
        data = calloc(n / 32, 34);
    } else {
        float *f = rnd(n, scale);
        data = f;
        if (type == PL_TYPE_F16 || type == PL_TYPE_BF16) {
            uint16_t *h = malloc(n * sizeof *h);
            for (size_t i = 0; i < n; i++) h[i] = type == PL_TYPE_F16 ? pl_f32_to_f16(f[i]) : pl_f32_to_bf16(f[i]);
            free(f);
            data = h;
        }
    }
    p->keep[p->n_keep++] = data;
    CHECK(pocketllm_gguf_writer_add_tensor(p->w, name, type, n_dims, ne, data) == POCKETLLM_OK);
}

/* `base`.weight [in, out] and, if `bias`, `base`.bias [out]. */
static void linear(plan *p, const char *base, int64_t in, int64_t out, bool bias) {
    char nm[96];
    snprintf(nm, sizeof nm, "%s.weight", base);
    tensor(p, nm, PL_TYPE_F32, 2, in, out, 1, 1, 1.0f / sqrtf((float)in));
    snprintf(nm, sizeof nm, "%s.bias", base);
    if (bias) tensor(p, nm, PL_TYPE_F32, 1, out, 1, 1, 1, 0.1f);
}

/* `base`.weight and `base`.bias, both [n]. */
static void norm(plan *p, const char *base, int64_t n) {
    char nm[96];
    snprintf(nm, sizeof nm, "%s.weight", base);
    tensor(p, nm, PL_TYPE_F32, 1, n, 1, 1, 1, 0.1f);
    snprintf(nm, sizeof nm, "%s.bias", base);
    tensor(p, nm, PL_TYPE_F32, 1, n, 1, 1, 1, 0.1f);
}

/* A qwen3vl text model of width `width` and n_layer layers written to
 * `path` (synth gives it n_layer - 1 DeepStack inputs) and opened on one
 * thread; NULL (a failed CHECK) when that fails. */
static pocketllm_model *open_text(const char *path, int64_t width, uint32_t n_layer) {
    pocketllm_synth_params sp = pocketllm_synth_default_params();
    sp.arch = "qwen3vl";
    sp.n_embd = (uint32_t)width, sp.n_layer = n_layer, sp.n_head = 2, sp.n_head_kv = 1, sp.head_dim = 16, sp.n_ff = 32;
    CHECK_MSG(pocketllm_synth(&sp, path) == POCKETLLM_OK, "%s", pocketllm_last_error());
    pocketllm_model_params mp = pocketllm_model_default_params();
    mp.n_threads = 1;
    pocketllm_model *text = NULL;
    CHECK_MSG(pocketllm_model_open(path, &mp, &text) == POCKETLLM_OK, "%s", pocketllm_last_error());
    return text;
}

/* Write the planned file to `path` and free the plan. */
static void plan_write(plan *p, const char *path) {
    CHECK_MSG(pocketllm_gguf_writer_write(p->w, path) == POCKETLLM_OK, "%s", pocketllm_last_error());
    pocketllm_gguf_writer_free(p->w);
    for (int i = 0; i < p->n_keep; i++) free(p->keep[i]);
}

#endif
