/*
 * fuzz_image_prep.c -- libFuzzer target for Qwen3-VL's image preprocessing
 * (src/vision/image_prep.c): the first 12 bytes choose the image's sides
 * (each 1..2^20, but the pixels are bounded so a run stays fast: a side
 * beyond what the input can fill repeats the input's bytes), the token
 * limits and the mean/std bytes; the rest are the pixels.  Every accepted
 * image must come out at the size pl_qwen3vl_target_size says, with only
 * finite floats; refusals must come with a message.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vision/image_prep.h"

static uint32_t u16le(const uint8_t *p) { return (uint32_t)p[0] | ((uint32_t)p[1] << 8); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 12) return 0;
    /* sides: mostly small, sometimes extreme strips (a high bit stretches) */
    uint32_t w = u16le(data) % 512 + 1, h = u16le(data + 2) % 512 + 1;
    if (data[4] & 1) w = (w << 11) > PL_IMAGE_MAX_SIDE ? PL_IMAGE_MAX_SIDE : w << 11;
    if (data[4] & 2) h = (h << 11) > PL_IMAGE_MAX_SIDE ? PL_IMAGE_MAX_SIDE : h << 11;
    if ((uint64_t)w * h > (1u << 22)) h = (uint32_t)((1u << 22) / w) + (data[4] & 4 ? 1 : 0); /* bounded pixels */
    if (h == 0) h = 1;
    pl_qwen3vl_prep p;
    pl_qwen3vl_prep_default(&p);
    if (data[5] & 1) p.min_tokens = u16le(data + 6) % 5000;
    if (data[5] & 2) p.max_tokens = u16le(data + 8) % 5000;
    if (data[5] & 4) p.std[data[10] % 3] = (float)data[11] / 64.0f;
    if (data[5] & 8) p.mean[data[11] % 3] = (float)data[10] / 128.0f;
    const uint8_t *px = data + 12;
    const size_t npx = size - 12;

    uint32_t tw = 0, th = 0;
    const pocketllm_status size_st = pl_qwen3vl_target_size(w, h, &p, &tw, &th);
    pl_image_rgb8 img;
    if (pl_image_rgb8_alloc(&img, w, h) != POCKETLLM_OK) return 0;
    const size_t n = (size_t)w * h * 3;
    for (size_t i = 0; i < n; i++) img.rgb[i] = npx ? px[i % npx] : (uint8_t)i;
    pl_image_f32 out;
    const pocketllm_status st = pl_qwen3vl_preprocess(&img, &p, &out);
    if (st == POCKETLLM_OK) {
        if (size_st != POCKETLLM_OK || out.width != tw || out.height != th) abort();
        const size_t m = (size_t)out.width * out.height * 3;
        for (size_t i = 0; i < m; i++)
            if (!isfinite(out.rgb[i])) abort();
        pl_image_f32_free(&out);
    } else {
        const char *msg = pocketllm_last_error();
        if (!msg || !*msg) abort();
    }
    pl_image_rgb8_free(&img);
    return 0;
}
