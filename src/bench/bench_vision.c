/*
 * bench_vision.c -- the image-encode measurement of `pocketllm bench`: an
 * image (a file, or a synthetic one of a given size) preprocessed and run
 * through the vision tower, each repetition timed in its two parts, as
 * `pl_mtmd bench` times libmtmd (mtmd_tokenize, which preprocesses, and
 * mtmd_encode_chunk, the tower), so bench/compare can set them side by side.
 */
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "model/model.h"
#include "vision/image_decode.h"
#include "vision/image_prep.h"
#include "vision/vision.h"

/* A deterministic picture: gradients and a checkerboard (not constant, so
 * nothing in the tower sees a degenerate input). */
static void synth_image(pl_image_rgb8 *img) {
    for (uint32_t y = 0; y < img->height; y++)
        for (uint32_t x = 0; x < img->width; x++) {
            uint8_t *p = img->rgb + 3 * ((size_t)y * img->width + x);
            p[0] = (uint8_t)(x * 255u / img->width);
            p[1] = (uint8_t)(y * 255u / img->height);
            p[2] = ((x / 16 + y / 16) & 1) ? 230 : 30;
        }
}

pocketllm_status pocketllm_bench_image_encode(pocketllm_model *model, const char *mmproj, const char *image_path,
                                              uint32_t width, uint32_t height, uint32_t max_tokens, int reps,
                                              pocketllm_bench_image *runs) {
    if (!model || !mmproj || !runs || reps < 1 || reps > 1000)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "bench_image_encode: bad arguments");
    pl_image_rgb8 src = {0, 0, NULL};
    pocketllm_status st;
    if (image_path) st = pl_image_load(image_path, &src);
    else if (!(st = pl_image_rgb8_alloc(&src, width, height))) synth_image(&src);
    if (st) return st;
    pl_vision *v = NULL;
    if ((st = pl_vision_open(model, mmproj, &v))) {
        pl_image_rgb8_free(&src);
        return st;
    }
    pl_qwen3vl_prep prm;
    pl_vision_prep_params(v, 0, max_tokens, &prm);
    float *out = NULL;
    /* one untimed run first: pages in the weights, starts the threads */
    for (int r = -1; r < reps && !st; r++) {
        pl_image_f32 f = {0, 0, NULL};
        const double t0 = pl_now_s();
        if ((st = pl_qwen3vl_preprocess(&src, &prm, &f))) break;
        const double t1 = pl_now_s();
        const uint64_t n_tok = (uint64_t)(f.width / (prm.patch_size * prm.n_merge)) *
                               (uint64_t)(f.height / (prm.patch_size * prm.n_merge));
        if (!out && !(out = malloc((size_t)(n_tok * (uint64_t)pl_vision_out_width(v)) * sizeof *out))) {
            pl_image_f32_free(&f);
            st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for the image's output");
            break;
        }
        st = pl_vision_encode(v, &f, out);
        const double t2 = pl_now_s();
        if (!st && r >= 0)
            runs[r] = (pocketllm_bench_image){src.width, src.height, f.width, f.height, (uint32_t)n_tok,
                                              (t1 - t0) * 1e3, (t2 - t1) * 1e3};
        pl_image_f32_free(&f);
    }
    free(out);
    pl_vision_close(v);
    pl_image_rgb8_free(&src);
    return st;
}
