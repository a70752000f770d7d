/*
 * vision_input.c -- what the tower takes of one image, made on the host:
 * the patches as matrix rows, the learned position table resampled to the
 * image's patch grid, and the 2-D rotary positions -- each in the token
 * order of libmtmd's Qwen3-VL graph, whose permutes put the 2 x 2 patches
 * of one merged token next to each other (so the merger's 4 x n_embd input
 * is four consecutive rows).  Per-image inputs, like the pixels.
 */
#include <math.h>
#include <string.h>

#include "base/half.h"
#include "quant/types.h"
#include "vision/vision_internal.h"

/* Row of patch (x, y) of a grid px wide: merged token by merged token,
 * each as top-left, top-right, bottom-left, bottom-right. */
static inline int64_t token_of(int64_t x, int64_t y, int64_t px) {
    return ((y / 2) * (px / 2) + x / 2) * 4 + (y % 2) * 2 + x % 2;
}

void pl_vision_patchify(const pl_vision *v, const pl_image_f32 *img, float *rows) {
    const int64_t p = v->hp.patch_size, w = img->width, px = w / p, py = img->height / p, n_in = 3 * p * p;
    for (int64_t y = 0; y < py; y++)
        for (int64_t x = 0; x < px; x++) {
            float *r = rows + token_of(x, y, px) * n_in;
            for (int64_t c = 0; c < 3; c++)
                for (int64_t ky = 0; ky < p; ky++) {
                    const float *src = img->rgb + ((y * p + ky) * w + x * p) * 3 + c;
                    float *dst = r + (c * p + ky) * p;
                    for (int64_t kx = 0; kx < p; kx++) {
                        const float f = src[kx * 3];
                        dst[kx] = v->patch_f16_input ? pl_f16_to_f32(pl_f32_to_f16(f)) : f;
                    }
                }
        }
}

/* Row i of the position table as f32: in place, or decoded into buf. */
static const float *table_row(const pl_vision *v, int64_t i, float *buf) {
    const pl_gguf_tensor *t = v->pos_embd;
    const int64_t n = v->hp.n_embd;
    if (t->type == PL_TYPE_F32) return (const float *)t->data + i * n;
    const uint16_t *h = (const uint16_t *)t->data + i * n;
    for (int64_t k = 0; k < n; k++) buf[k] = t->type == PL_TYPE_F16 ? pl_f16_to_f32(h[k]) : pl_bf16_to_f32(h[k]);
    return buf;
}

/* One axis of ggml's bilinear interpolation with aligned corners
 * (ggml_compute_forward_upscale_f32, float arithmetic as there). */
static void axis(int64_t i, float sf, int64_t side, int64_t *i0, int64_t *i1, float *frac) {
    const float x = (float)i / sf;
    int64_t a = (int64_t)floorf(x), b = a + 1;
    a = a < 0 ? 0 : a > side - 1 ? side - 1 : a;
    b = b < 0 ? 0 : b > side - 1 ? side - 1 : b;
    float d = x - (float)a;
    *frac = d < 0.0f ? 0.0f : d > 1.0f ? 1.0f : d;
    *i0 = a;
    *i1 = b;
}

pocketllm_status pl_vision_pos_embd(const pl_vision *v, int64_t px, int64_t py, float *out, float *tmp) {
    const int64_t n = v->hp.n_embd, side = v->pos_side;
    if (px == side && py == side) {
        /* libmtmd adds the table as it is */
        for (int64_t y = 0; y < py; y++)
            for (int64_t x = 0; x < px; x++)
                memcpy(out + token_of(x, y, px) * n, table_row(v, y * side + x, tmp), (size_t)n * sizeof *out);
        return POCKETLLM_OK;
    }
    float sf0 = (float)px / (float)side, sf1 = (float)py / (float)side;
    if (px > 1 && side > 1) sf0 = (float)(px - 1) / (float)(side - 1);
    if (py > 1 && side > 1) sf1 = (float)(py - 1) / (float)(side - 1);
    for (int64_t y = 0; y < py; y++) {
        int64_t y0, y1;
        float dy;
        axis(y, sf1, side, &y0, &y1, &dy);
        for (int64_t x = 0; x < px; x++) {
            int64_t x0, x1;
            float dx;
            axis(x, sf0, side, &x0, &x1, &dx);
            const float *a = table_row(v, y0 * side + x0, tmp), *b = table_row(v, y0 * side + x1, tmp + n),
                        *c = table_row(v, y1 * side + x0, tmp + 2 * n), *d = table_row(v, y1 * side + x1, tmp + 3 * n);
            float *o = out + token_of(x, y, px) * n;
            for (int64_t k = 0; k < n; k++)
                o[k] = a[k] * (1 - dx) * (1 - dy) + b[k] * dx * (1 - dy) + c[k] * (1 - dx) * dy + d[k] * dx * dy;
        }
    }
    return POCKETLLM_OK;
}

void pl_vision_positions(int64_t px, int64_t py, int32_t *pos) {
    const int64_t n = px * py;
    for (int64_t y = 0; y < py; y++)
        for (int64_t x = 0; x < px; x++) {
            const int64_t t = token_of(x, y, px);
            pos[t] = pos[2 * n + t] = (int32_t)y;
            pos[n + t] = pos[3 * n + t] = (int32_t)x;
        }
}
