/*
 * synth_mmproj.h -- the pieces of the random-weight mmproj writer shared by
 * its vision (synth_mmproj.c) and audio (synth_audio.c) towers: a plan of
 * tensors, the helpers that add the converter's layer kinds to it, and the
 * writer that fills and streams them.
 */
#ifndef PL_SYNTH_MMPROJ_H
#define PL_SYNTH_MMPROJ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gguf/gguf.h"
#include "pocketllm.h"

/* How a tensor is filled: random matrix (variance 1/fan_in), norm weight
 * (1 +- 0.1), bias (+- 0.1), learned position table (+- 1), or Whisper's
 * sinusoidal position table (computed, not random: see synth_audio.c). */
enum { FILL_MATRIX, FILL_NORM, FILL_BIAS, FILL_POS, FILL_SINUS };

typedef struct vtensor {
    char name[64];
    uint32_t n_dims;
    int64_t ne[4];
    uint32_t type;
    int fill;
    float scale;
} vtensor;

typedef struct pl_mm_plan {
    uint32_t type; /* the matrices' type */
    vtensor *t;
    size_t n, cap;
} pl_mm_plan;

/* Append a tensor (ne in GGUF order); matrices get the plan's type,
 * everything else f32, as the converter writes them. */
pocketllm_status pl_synth_mm_add(pl_mm_plan *p, const char *name, uint32_t n_dims, int64_t e0, int64_t e1, int64_t e2,
                                 int64_t e3, int fill, float fan_in);
/* A Linear layer: base.weight [in, out] and base.bias [out]. */
pocketllm_status pl_synth_mm_linear(pl_mm_plan *p, const char *base, int64_t in, int64_t out);
/* A LayerNorm: base.weight and base.bias [n]. */
pocketllm_status pl_synth_mm_layer_norm(pl_mm_plan *p, const char *base, int64_t n);
/* Add the plan's tensors to w (whose metadata is set), then fill and
 * stream them to path; frees nothing. */
pocketllm_status pl_synth_mm_write(pocketllm_gguf_writer *w, const pl_mm_plan *p, const char *path,
                                   const pocketllm_synth_mmproj_params *prm);

/* The audio towers (synth_audio.c): true when shape names one. */
bool pl_synth_audio_shape(const char *shape);
pocketllm_status pl_synth_audio_mmproj(const pocketllm_synth_mmproj_params *prm, const char *path);

#endif
