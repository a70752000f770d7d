/*
 * fit_vision.h -- what a vision tower (an mmproj beside the text model)
 * adds to `fit`'s need: its weights and the activations of the largest
 * image the token budget allows.
 */
#ifndef PL_EVAL_FIT_VISION_H
#define PL_EVAL_FIT_VISION_H

#include <stdint.h>

#include "pocketllm.h"

typedef struct pl_fit_vision_need {
    uint64_t weights_bytes;  /* the mmproj's mapping + what opening the tower allocated */
    uint64_t image_bytes;    /* one image of `tokens` merged tokens through the tower */
    uint32_t tokens;         /* the largest image's merged tokens */
    uint32_t square_side;    /* the side (pixels) of the largest square image at that budget */
} pl_fit_vision_need;

/* Open the tower at `mmproj` beside the text model at `model_path` (on the
 * CPU, n_threads) -- which also refuses a pair that does not belong
 * together -- and size its need for an image of at most max_tokens merged
 * tokens (0: the preprocessing's default, 4096), held to n_ctx - 2 (the
 * span and its two markers must fit the context). */
pocketllm_status pl_fit_vision(const char *model_path, const char *mmproj, uint32_t max_tokens, uint32_t n_ctx,
                               int n_threads, pl_fit_vision_need *out);

#endif
