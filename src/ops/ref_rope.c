/*
 * ref_rope.c -- rotary position embedding, NORMAL (adjacent pairs, llama)
 * and NEOX (split halves, qwen), with partial rotation (n_rot < head_dim)
 * and per-pair frequency factors.
 */
#include <math.h>
#include <string.h>

#include "ops/ref.h"

void pl_rope_angles(const pl_rope_params *rp, int32_t pos, float *cache) {
    /* theta_i = pos * base^(-2i/n_rot), formed by repeated multiplication in
     * float as ggml forms it, so both engines rotate by the same angles */
    const float theta_scale = powf(rp->freq_base, -2.0f / (float)rp->n_rot);
    float theta = (float)pos;
    for (int64_t i = 0; i < rp->n_rot / 2; i++) {
        const float ff = rp->freq_factors ? rp->freq_factors[i] : 1.0f;
        const float t = rp->freq_scale * (theta / ff);
        cache[2 * i + 0] = cosf(t);
        cache[2 * i + 1] = sinf(t);
        theta *= theta_scale;
    }
}

void pl_ref_rope(const pl_rope_params *rp, const float *x, float *y, int64_t n_tok, int64_t n_head,
                 int64_t head_dim, const int32_t *pos) {
    float cache[PL_MAX_HEAD_DIM];
    const int64_t half = rp->n_rot / 2;
    for (int64_t t = 0; t < n_tok; t++) {
        pl_rope_angles(rp, pos[t], cache);
        for (int64_t h = 0; h < n_head; h++) {
            const float *xs = x + (t * n_head + h) * head_dim;
            float *ys = y + (t * n_head + h) * head_dim;
            float tmp[PL_MAX_HEAD_DIM];
            memcpy(tmp, xs, (size_t)head_dim * sizeof(float)); /* allows y == x */
            for (int64_t i = 0; i < half; i++) {
                const float c = cache[2 * i], s = cache[2 * i + 1];
                const int64_t a = rp->mode == PL_ROPE_NEOX ? i : 2 * i;
                const int64_t b = rp->mode == PL_ROPE_NEOX ? i + half : 2 * i + 1;
                ys[a] = tmp[a] * c - tmp[b] * s;
                ys[b] = tmp[a] * s + tmp[b] * c;
            }
            for (int64_t i = rp->n_rot; i < head_dim; i++) ys[i] = tmp[i];
        }
    }
}
