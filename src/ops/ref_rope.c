/*
 * ref_rope.c -- rotary position embedding, NORMAL (adjacent pairs, llama)
 * and NEOX (split halves, qwen), with partial rotation (n_rot < head_dim)
 * and per-pair frequency factors; and the multi-axis modes of Qwen2/3-VL
 * (VISION, MROPE_INTERLEAVED), NEOX pairs whose angles come from one of
 * four positions per token.
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

void pl_rope_angles_multi(const pl_rope_params *rp, const int32_t pos[4], float *cache) {
    const bool vision = rp->mode == PL_ROPE_VISION;
    const int32_t *sec = rp->sections;
    /* ggml's n_dims: head_dim/2 for VISION (whose n_rot is head_dim) */
    const int64_t n_dims = vision ? rp->n_rot / 2 : rp->n_rot;
    const float theta_scale = powf(rp->freq_base, -2.0f / (float)n_dims);
    const float base[4] = {(float)pos[0], (float)pos[1], (float)pos[2], (float)pos[3]};
    float th[4] = {base[0], base[1], base[2], base[3]};
    int sect_dims = sec[0] + sec[1] + sec[2] + sec[3];
    if (sect_dims < 1) sect_dims = 1; /* rejected by the kernels; no division by zero here */
    const int sec_w = sec[0] + sec[1], sec_e = sec_w + sec[2];
    for (int64_t i = 0; i < rp->n_rot / 2; i++) {
        const int sector = (int)(i % sect_dims);
        int axis;
        if (vision) {
            /* independent sections: an axis restarts where its section does */
            if (sector == 0) th[0] = base[0];
            else if (sector == sec[0]) th[1] = base[1];
            else if (sector == sec_w) th[2] = base[2];
            else if (sector == sec_e) th[3] = base[3];
            axis = sector < sec[0] ? 0 : sector < sec_w ? 1 : sector < sec_e ? 2 : 3;
        } else {
            /* interleaved: t h w t h w ..., each axis for its first 3 x
             * sections[a] sectors, the rest the extra axis */
            if (sector % 3 == 1 && sector < 3 * sec[1]) axis = 1;
            else if (sector % 3 == 2 && sector < 3 * sec[2]) axis = 2;
            else if (sector % 3 == 0 && sector < 3 * sec[0]) axis = 0;
            else axis = 3;
        }
        const float ff = rp->freq_factors ? rp->freq_factors[i] : 1.0f;
        const float t = rp->freq_scale * (th[axis] / ff);
        cache[2 * i + 0] = cosf(t);
        cache[2 * i + 1] = sinf(t);
        for (int a = 0; a < 4; a++) th[a] *= theta_scale;
    }
}

void pl_ref_rope(const pl_rope_params *rp, const float *x, float *y, int64_t n_tok, int64_t n_head,
                 int64_t head_dim, const int32_t *pos) {
    float cache[PL_MAX_HEAD_DIM];
    const int64_t half = rp->n_rot / 2;
    const bool multi = pl_rope_is_multi(rp->mode), neox = multi || rp->mode == PL_ROPE_NEOX;
    for (int64_t t = 0; t < n_tok; t++) {
        if (multi) {
            const int32_t p4[4] = {pos[t], pos[n_tok + t], pos[2 * n_tok + t], pos[3 * n_tok + t]};
            pl_rope_angles_multi(rp, p4, cache);
        } else {
            pl_rope_angles(rp, pos[t], cache);
        }
        for (int64_t h = 0; h < n_head; h++) {
            const float *xs = x + (t * n_head + h) * head_dim;
            float *ys = y + (t * n_head + h) * head_dim;
            float tmp[PL_MAX_HEAD_DIM];
            memcpy(tmp, xs, (size_t)head_dim * sizeof(float)); /* allows y == x */
            for (int64_t i = 0; i < half; i++) {
                const float c = cache[2 * i], s = cache[2 * i + 1];
                const int64_t a = neox ? i : 2 * i;
                const int64_t b = neox ? i + half : 2 * i + 1;
                ys[a] = tmp[a] * c - tmp[b] * s;
                ys[b] = tmp[a] * s + tmp[b] * c;
            }
            for (int64_t i = rp->n_rot; i < head_dim; i++) ys[i] = tmp[i];
        }
    }
}
