/*
 * audio_tower_internal.h -- the loaded Qwen3-ASR audio tower as the loader
 * (audio_tower_load.c) binds it and the graph (audio_tower_graph.c) runs
 * it.  Not part of the engine's interface: audio_tower.h is.
 */
#ifndef PL_AUDIO_TOWER_INTERNAL_H
#define PL_AUDIO_TOWER_INTERNAL_H

#include "audio/audio_tower.h"
#include "backend/compute.h"
#include "gguf/gguf.h"

/* Frames of a conv chunk (n_window * 2) and the tokens it becomes after
 * three stride-2 convolutions (100 -> 50 -> 25 -> 13). */
#define PL_AUDIO_CHUNK_FRAMES 100
#define PL_AUDIO_CHUNK_TOKENS 13

/* Rows of one matrix multiplication: bounds the compute instance's
 * activation scratch and the MLPs' hidden rows, whatever the window. */
#define PL_AUDIO_ROWS 256

/* The longest window encoded at once: libmtmd's (and audio_mel.h's)
 * windows are 800 frames (104 tokens); 30 s (3000 frames) is the most a
 * caller may pass. */
#define PL_AUDIO_MAX_FRAMES 3000

/* One pre-norm encoder block; vectors f32 (the mapping's, or the
 * loader's copies), NULL where the file has none. */
typedef struct pl_audio_layer {
    const float *ln1_w, *ln1_b, *ln2_w, *ln2_b;
    pl_weight q, k, v, out, up, down;
    const float *q_b, *k_b, *v_b, *out_b, *up_b, *down_b;
} pl_audio_layer;

/* One 3x3 stride-2 convolution: the kernel [3, 3, c_in, c_out] as c_out
 * rows of 9 c_in (ggml's column order), its bias. */
typedef struct pl_audio_conv {
    pl_weight w;
    const float *b;
    int64_t c_in, h, w_in; /* input channels and image (mel rows x frames) */
    int64_t oh, ow;        /* output image */
} pl_audio_conv;

struct pl_audio_tower {
    pl_model *text;
    pl_gguf *gguf;
    pl_audio_hparams hp;
    pl_audio_conv conv[3];
    bool conv_f16;          /* the kernels are f16: im2col rounds to f16 (ggml's does) */
    pl_weight conv_out;     /* c * oh3 -> n_embd, no bias */
    const float *pos;       /* the sinusoidal table's first 13 rows (13 x n_embd) */
    pl_audio_layer *layers;
    const float *post_w, *post_b;
    pl_weight mm1, mm2;
    const float *mm1_b, *mm2_b;
    pl_compute *c;          /* the tower's own instance on text's device */
    int64_t reserved_tokens;
    int64_t max_in;         /* longest weight row */
    void **consts;          /* host memory the loader made (f32 copies of vectors) */
    size_t n_consts;
};

/* Reserve the instance's scratch for windows of up to n_tokens (grows only). */
pocketllm_status pl_audio_reserve(pl_audio_tower *a, int64_t n_tokens);

#endif
