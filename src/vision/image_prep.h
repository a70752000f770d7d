/*
 * image_prep.h -- Qwen3-VL's image preprocessing: one decoded RGB image in,
 * the normalised f32 image the vision tower takes out, bit for bit what
 * llama.cpp v0.4.0's libmtmd produces (mtmd_image_preprocessor_dyn_size
 * with the Qwen2/2.5/3-VL hyperparameters of clip.cpp).
 *
 * The steps, as libmtmd does them:
 *   1. the target size: both sides rounded to a multiple of patch x merge
 *      (32 px), then, when that is over the token budget, both sides
 *      scaled by 1/sqrt(h w / max_pixels) and floored to 32, or under it,
 *      scaled by sqrt(min_pixels / (h w)) and ceiled to 32 (float
 *      arithmetic, as libmtmd does it);
 *   2. the image resized into the target keeping its aspect ratio
 *      (Pillow's separable bicubic, a = -0.5, 22-bit fixed-point weights,
 *      horizontal pass then vertical, each rounded and clamped to uint8)
 *      and centred on black (the rest of the target);
 *   3. each byte v to (v / 255 - mean[c]) / std[c], as float.
 * The result is interleaved, like libmtmd's clip_image_f32: width x height
 * pixels row by row, R G B floats per pixel.
 *
 * Memory: the output, plus a window of at most one filter's height of
 * horizontally resampled rows and the filter tables -- never a second copy
 * of the input or of the output.
 */
#ifndef PL_IMAGE_PREP_H
#define PL_IMAGE_PREP_H

#include <stdint.h>

#include "pocketllm.h"

/* The largest side accepted (pixels); beyond it the float arithmetic of the
 * size rules is no longer exact on the side lengths. */
#define PL_IMAGE_MAX_SIDE (1u << 20)

/* An 8-bit RGB image: width x height pixels, row by row from the top, three
 * bytes (R, G, B) a pixel, no row padding. */
typedef struct pl_image_rgb8 {
    uint32_t width, height;
    uint8_t *rgb;
} pl_image_rgb8;

/* A float image as the vision tower takes it: width x height pixels, row by
 * row, three floats (R, G, B) a pixel. */
typedef struct pl_image_f32 {
    uint32_t width, height;
    float *rgb;
} pl_image_f32;

/* Qwen3-VL's preprocessing parameters. */
typedef struct pl_qwen3vl_prep {
    uint32_t patch_size; /* 16 */
    uint32_t n_merge;    /* 2: sides align to patch_size * n_merge */
    /* the token budget in merged tokens (llama.cpp's --image-min-tokens /
     * --image-max-tokens; defaults 8 and 4096); pixels = tokens x
     * (patch_size * n_merge)^2.  As in llama.cpp, min above max is taken as
     * given (the max rule is tried first). */
    uint32_t min_tokens, max_tokens;
    float mean[3], std[3]; /* the mmproj's image mean / std (0.5 each) */
} pl_qwen3vl_prep;

/* The defaults above. */
void pl_qwen3vl_prep_default(pl_qwen3vl_prep *p);

/* Allocate a width x height image (zeroed); refuses a 0 side, a side over
 * PL_IMAGE_MAX_SIDE and sizes that do not fit memory. */
pocketllm_status pl_image_rgb8_alloc(pl_image_rgb8 *img, uint32_t width, uint32_t height);
void pl_image_rgb8_free(pl_image_rgb8 *img);
void pl_image_f32_free(pl_image_f32 *img);

/* The size (pixels, multiples of patch_size * n_merge) an image of
 * width x height is resized to.  Refuses a 0 side or one over
 * PL_IMAGE_MAX_SIDE, parameters out of range (patch or merge 0, a 0 token
 * limit, a budget whose pixel count does not fit int32 as in libmtmd), and
 * -- unlike libmtmd, which goes on with it -- an aspect ratio so extreme
 * that the aligned result needs more than twice the larger of the two
 * token limits (POCKETLLM_ERR_UNSUPPORTED; only ratios beyond about
 * 2 x max_tokens : 1 do). */
pocketllm_status pl_qwen3vl_target_size(uint32_t width, uint32_t height, const pl_qwen3vl_prep *p,
                                        uint32_t *out_width, uint32_t *out_height);

/* Preprocess `src` into *out (allocated here; free with pl_image_f32_free).
 * On failure *out is empty and the status says why. */
pocketllm_status pl_qwen3vl_preprocess(const pl_image_rgb8 *src, const pl_qwen3vl_prep *p, pl_image_f32 *out);

#endif
