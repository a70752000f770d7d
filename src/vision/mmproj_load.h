/*
 * mmproj_load.h -- the binding helpers both mmproj towers' loaders share
 * (vision_load.c for Qwen3-VL's vision tower, audio_tower_load.c for
 * Qwen3-ASR's audio tower): hyperparameter reads with range checks, tensor
 * lookup with shape and type checks, weights bound as views into the
 * mapping, f16/bf16 vectors widened to f32 copies, and the upload of a
 * tower's tensors to the text model's device.  Internal to the engine.
 */
#ifndef PL_MMPROJ_LOAD_H
#define PL_MMPROJ_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/compute.h"
#include "gguf/gguf.h"
#include "model/model.h"
#include "ops/weight.h"

/* What one tower's loader binds into: the tower's own fields, by address,
 * so that both tower structs keep their layouts. */
typedef struct pl_mmproj_loader {
    pl_model *text;      /* the text model: its device and, there, the copies' owner */
    const pl_gguf *gguf; /* the mmproj file */
    void ***consts;      /* the tower's host copies (without a device) */
    size_t *n_consts;
    int64_t *max_in;     /* the tower's longest weight row, grown by each binding */
    /* a vector may be of any shape of n elements (the audio conv biases
     * are [1, 1, c]); false: its first dimension must be n */
    bool vector_any_shape;
} pl_mmproj_loader;

/* Memory for a loader's copy: the text model's when it has a device (the
 * device keeps the addresses), else the tower's consts.  NULL: error set. */
void *pl_mmproj_const_alloc(pl_mmproj_loader *ld, size_t bytes);

/* Integer key `key` in lo..hi; absent: an error if `required`, else def. */
pocketllm_status pl_mmproj_get_int(const pl_mmproj_loader *ld, const char *key, bool required, uint64_t def,
                                   uint64_t lo, uint64_t hi, int64_t *out);

/* Key `key` is present and non-zero. */
bool pl_mmproj_get_bool(const pl_mmproj_loader *ld, const char *key);

const pl_gguf_tensor *pl_mmproj_find(const pl_mmproj_loader *ld, const char *name);

/* Rows of n_in of a tensor whose elements are n_in x n_out in all (the
 * matrices, and 4-D kernels seen as rows) bound as a view. */
pocketllm_status pl_mmproj_bind_rows(pl_mmproj_loader *ld, const pl_gguf_tensor *t, int64_t n_in, int64_t n_out,
                                     pl_weight *w);

/* Matrix `name` of shape [n_in, n_out]; n_out < 0: any. */
pocketllm_status pl_mmproj_matrix(pl_mmproj_loader *ld, const char *name, int64_t n_in, int64_t n_out, pl_weight *w);

/* The first n elements of t as f32: the mapping's if t is f32, else a
 * widened copy; t must be f32, f16 or bf16 (the caller checks). */
pocketllm_status pl_mmproj_f32_of(pl_mmproj_loader *ld, const pl_gguf_tensor *t, int64_t n, const float **out);

/* Vector `name` of n elements as f32; absent and optional: *out NULL. */
pocketllm_status pl_mmproj_vector(pl_mmproj_loader *ld, const char *name, int64_t n, bool optional, const float **out);

/* A layer norm's `base`.weight and `base`.bias (each optional, as in libmtmd). */
pocketllm_status pl_mmproj_norm(pl_mmproj_loader *ld, const char *base, int64_t n, const float **w, const float **b);

/* A linear layer `base`.weight / `base`.bias; the bias is optional unless
 * `bias_required`.  n_out < 0: any (the bias then follows the matrix). */
pocketllm_status pl_mmproj_linear(pl_mmproj_loader *ld, const char *base, int64_t n_in, int64_t n_out, bool bias_required,
                                  pl_weight *w, const float **b);

/* The tower's tensors and the copies made since the text model had
 * first_const of them, to the text model's device (as model.c uploads the
 * text weights); the mapping's pages are dropped after. */
pocketllm_status pl_mmproj_upload(pl_model *text, const pl_gguf *g, size_t first_const);

/* A compute instance for a tower, on the text model's device or the CPU. */
pocketllm_status pl_mmproj_compute_new(pl_model *text, pl_compute **out);

/* Free a tower's host copies, and its file: on a device the mapping is
 * kept, its pages dropped, since the device still has its addresses
 * registered (devices cannot forget a range yet) and unmapping would let a
 * later mapping alias them. */
void pl_mmproj_release(pl_model *text, pl_gguf *g, void **consts, size_t n_consts);

#endif
