/*
 * audio_tower.h -- Qwen3-ASR's audio tower (an mmproj GGUF whose audio
 * projector is qwen3a) loaded beside a text model, on the text model's
 * device, and run on one mel window (audio_mel.h) at a time.
 *
 * The graph is libmtmd's (tools/mtmd/models/qwen3a.cpp): the window cut
 * into 100-frame chunks, three 3x3 stride-2 convolutions with GELU per
 * chunk (128 mel x 100 frames -> 16 x 13 at 480 channels), conv_out to the
 * tower's width, the first 13 rows of the sinusoidal table per chunk, the
 * pre-norm blocks with full attention over the window's tokens, the post
 * norm, and the projector (mm.a.mlp.1, GELU, mm.a.mlp.2) to the text
 * model's width.  Weights stay in their GGUF types (f32, f16, bf16,
 * quantized: the kernels decode them); the tower has its own compute
 * instance, its activations are sized per window and freed after it.
 */
#ifndef PL_AUDIO_TOWER_H
#define PL_AUDIO_TOWER_H

#include <stdint.h>

#include "audio/audio_mel.h"
#include "model/model.h"
#include "pocketllm.h"

typedef struct pl_audio_hparams {
    char projector[32];     /* "qwen3a" */
    int64_t n_embd, n_layer, n_head, head_dim, n_ff;
    int64_t n_mel;          /* 128 */
    int64_t conv_channels;  /* 480 */
    int64_t n_embd_text;    /* the projector's output width = the text model's n_embd */
    float eps;
} pl_audio_hparams;

typedef struct pl_audio_tower pl_audio_tower;

/* Open the audio tower of the mmproj at path for `text` (refuses a file
 * without a qwen3a audio encoder, a projector width != text's n_embd,
 * missing/misshapen tensors: one-line messages). */
pocketllm_status pl_audio_open(pl_model *text, const char *path, pl_audio_tower **out);
void pl_audio_close(pl_audio_tower *a);
const pl_audio_hparams *pl_audio_hparams_of(const pl_audio_tower *a);

/* Tokens a mel window of n_len frames (a multiple of 100) becomes: n_len / 100 * 13. */
int64_t pl_audio_window_tokens(int64_t n_len);

/* One mel window (audio_mel.h's pl_mel: n_mel rows of n_len floats, n_len a
 * multiple of 100 up to 3000) through the tower: out (host memory) receives
 * pl_audio_window_tokens(n_len) rows of n_embd_text floats. */
pocketllm_status pl_audio_encode(pl_audio_tower *a, const struct pl_mel *mel, float *out);

/* Compute + host memory of encoding one window of n_len frames (for `fit`). */
uint64_t pl_audio_window_bytes(const pl_audio_hparams *hp, int64_t n_len);

#endif
