/*
 * fuzz_image_decode.c -- libFuzzer target for the image decoders
 * (src/vision/image_decode.c and the JPEG, PNG, WebP and EXIF code beside
 * it) followed by Qwen3-VL's preprocessing of what they accept: any bytes
 * must give either an image within the limits or a one-line message, and
 * an accepted image must preprocess (or be refused with a message) to the
 * size pl_qwen3vl_target_size says.  Seeds: tests/fuzz/seeds/
 * fuzz_image_decode.sh (small files ImageMagick writes at fuzz time).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vision/image_decode.h"
#include "vision/image_prep.h"

/* preprocessing cost grows with the input's pixels; beyond this many the
 * decode alone is checked, so a run stays fast */
#define PREP_MAX_PIXELS (1u << 22)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    pl_image_rgb8 img;
    if (pl_image_decode(data, size, &img) != POCKETLLM_OK) {
        const char *msg = pocketllm_last_error();
        if (!msg || !*msg || strchr(msg, '\n')) abort();
        if (img.rgb || img.width || img.height) abort();
        return 0;
    }
    if (!img.rgb || img.width == 0 || img.height == 0 || img.width > PL_IMAGE_MAX_SIDE ||
        img.height > PL_IMAGE_MAX_SIDE || (uint64_t)img.width * img.height > PL_IMAGE_MAX_PIXELS)
        abort();
    /* every byte defined (MSan would say more; ASan at least reads them) */
    const size_t n = (size_t)img.width * img.height * 3;
    unsigned sum = 0;
    for (size_t i = 0; i < n; i++) sum += img.rgb[i];
    (void)sum;
    if ((uint64_t)img.width * img.height <= PREP_MAX_PIXELS) {
        pl_qwen3vl_prep p;
        pl_qwen3vl_prep_default(&p);
        uint32_t tw = 0, th = 0;
        const pocketllm_status size_st = pl_qwen3vl_target_size(img.width, img.height, &p, &tw, &th);
        pl_image_f32 f;
        if (pl_qwen3vl_preprocess(&img, &p, &f) == POCKETLLM_OK) {
            if (size_st != POCKETLLM_OK || f.width != tw || f.height != th) abort();
            pl_image_f32_free(&f);
        } else {
            const char *msg = pocketllm_last_error();
            if (!msg || !*msg) abort();
        }
    }
    pl_image_rgb8_free(&img);
    return 0;
}
