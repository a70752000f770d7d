/*
 * vision.h -- a Qwen3-VL vision tower (an mmproj GGUF whose
 * clip.projector_type is qwen3vl_merger) loaded beside a text model, on the
 * text model's device, and run on one preprocessed image.
 *
 * The tower has its own compute instance on that device (its activations
 * are sized per image and freed after it, so a session's scratch never
 * grows for images).  Its output comes back to the host in libmtmd's
 * layout -- per merged token, the projection's n_embd_text floats then
 * each DeepStack set's -- so that the composition (runtime) can split it
 * for the text model and a host program can read it through the ABI.
 */
#ifndef PL_VISION_H
#define PL_VISION_H

#include <stdint.h>

#include "model/model.h"
#include "pocketllm.h"
#include "vision/image_prep.h"

#define PL_VISION_MAX_DEEPSTACK 8

typedef struct pl_vision_hparams {
    char projector[32];        /* clip.projector_type ("qwen3vl_merger") */
    int64_t n_embd;            /* the tower's width (1024 for Qwen3-VL-2B) */
    int64_t n_layer, n_head, head_dim, n_ff;
    int64_t patch_size;        /* 16 */
    int64_t n_merge;           /* spatial merge: 2 (2x2 patches a token) */
    int64_t image_size;        /* the learned position table's side is image_size / patch_size */
    int64_t n_embd_text;       /* the projection's width = the text model's n_embd */
    int64_t n_deepstack;       /* DeepStack feature sets */
    int32_t deepstack_layers[PL_VISION_MAX_DEEPSTACK]; /* the tower layers they come from, ascending */
    float eps;                 /* layer-norm epsilon */
    float mean[3], std[3];     /* image normalisation */
} pl_vision_hparams;

typedef struct pl_vision pl_vision;

/* Open the mmproj at `path` for `text` (its weights go to text's device;
 * n_threads as the text model's).  Refuses a file that is not a Qwen3-VL
 * tower, one whose projection width is not text's n_embd, or whose
 * DeepStack count differs from the text model's, with a message. */
pocketllm_status pl_vision_open(pl_model *text, const char *path, pl_vision **out);
void pl_vision_close(pl_vision *v);

const pl_vision_hparams *pl_vision_hparams_of(const pl_vision *v);

/* The preprocessing parameters the tower's file asks for (mean/std, patch
 * and merge), with the given token limits (0: the defaults). */
void pl_vision_prep_params(const pl_vision *v, uint32_t min_tokens, uint32_t max_tokens, pl_qwen3vl_prep *out);

/* Floats per output token: n_embd_text * (1 + n_deepstack). */
int64_t pl_vision_out_width(const pl_vision *v);

/* Run the tower on a preprocessed image (sides multiples of patch x
 * merge).  out (host memory) receives (width/32) x (height/32) tokens,
 * row-major over the merged grid, of pl_vision_out_width floats each. */
pocketllm_status pl_vision_encode(pl_vision *v, const pl_image_f32 *img, float *out);

/* The memory (compute and host, bytes) pl_vision_encode takes for an image
 * of m merged tokens, the caller's image and output included -- what
 * `fit` counts for the largest image of a budget. */
uint64_t pl_vision_image_bytes(const pl_vision_hparams *hp, uint64_t m);

#endif
