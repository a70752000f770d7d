/*
 * vision_internal.h -- the loaded Qwen3-VL vision tower as the loader
 * (vision_load.c) binds it and the graph (vision_graph.c) and the host-side
 * inputs (vision_input.c) read it.  Not part of the engine's interface:
 * vision.h is.
 */
#ifndef PL_VISION_INTERNAL_H
#define PL_VISION_INTERNAL_H

#include "backend/compute.h"
#include "gguf/gguf.h"
#include "vision/vision.h"

/* Most merged tokens one image may have: four times the default budget
 * (4096), which an extreme aspect ratio under a raised --image-max-tokens
 * can reach; beyond it the activations (5 x 4 x n_embd floats a merged
 * token: 320 MiB at 4096 tokens of width 1024) would be unreasonable. */
#define PL_VISION_MAX_TOKENS 16384

/* Rows of one matrix multiplication: bounds the compute instance's
 * activation scratch (rows x the longest weight row) and the FFN's
 * intermediate buffer, whatever the image size. */
#define PL_VISION_CHUNK 256

/* One pre-norm ViT block.  Vectors are f32 (in the mapping, or the
 * loader's copies of f16/bf16 ones). */
typedef struct pl_vision_layer {
    const float *ln1_w, *ln1_b, *ln2_w, *ln2_b;
    pl_weight q, k, v;            /* the fused attn_qkv's three row blocks */
    const float *q_b, *k_b, *v_b; /* attn_qkv.bias in thirds */
    pl_weight out, up, down;
    const float *out_b, *up_b, *down_b;
    int deepstack;                /* index of its DeepStack merger, -1: none */
} pl_vision_layer;

/* A merger: layer norm over `norm_n` (one patch for the main merger, whose
 * norm is v.post_ln; the four merged patches for DeepStack), then
 * fc2(gelu(fc1(x))) over the merged 4 x n_embd. */
typedef struct pl_vision_merger {
    const float *norm_w, *norm_b;
    int64_t norm_n;
    pl_weight fc1, fc2;
    const float *fc1_b, *fc2_b;
} pl_vision_merger;

struct pl_vision {
    pl_model *text;
    pl_gguf *gguf;
    pl_vision_hparams hp;
    pl_weight patch[2];           /* the two temporal kernels, rows of 3 x P x P (kx, ky, channel) */
    const float *patch_b;
    bool patch_f16_input;         /* the pixels are rounded to f16 first (ggml's im2col does, unless bf16) */
    const pl_gguf_tensor *pos_embd; /* [n_embd][side x side], read on the host per image */
    int64_t pos_side;
    pl_vision_layer *layers;
    pl_vision_merger merger;
    pl_vision_merger ds[PL_VISION_MAX_DEEPSTACK];
    pl_compute *c;                /* the tower's own instance on text's device */
    int64_t reserved_patches;     /* attention rows its scratch is reserved for */
    int64_t max_in;               /* longest weight row */
    void **consts;                /* host memory the loader made (f32 vectors, f16 kernels) */
    size_t n_consts;
};

/* Reserve the instance's scratch for images of up to n_patches (grows
 * only). */
pocketllm_status pl_vision_reserve(pl_vision *v, int64_t n_patches);

/* Host-side inputs of one image (vision_input.c). */

/* The image's patches as rows of 3 x P x P floats (kx fastest, then ky,
 * then the channel), in the merger's token order: merged token by merged
 * token (row-major over the merged grid), each as its 2 x 2 patches
 * (top-left, top-right, bottom-left, bottom-right); rounded to f16 when
 * the kernels are (ggml's im2col). */
void pl_vision_patchify(const pl_vision *v, const pl_image_f32 *img, float *rows);

/* The learned position table resampled to the image's patch grid
 * (bilinear with aligned corners, as ggml_interpolate computes it), in the
 * same token order: n_patches rows of n_embd.  `tmp` holds 4 x n_embd
 * floats (a table stored in f16 or bf16 is decoded a row at a time). */
pocketllm_status pl_vision_pos_embd(const pl_vision *v, int64_t px, int64_t py, float *out, float *tmp);

/* The four rotary position arrays of the tower (pos[a * n + t]: y, x, y, x
 * of each patch, in the token order above). */
void pl_vision_positions(int64_t px, int64_t py, int32_t *pos);

#endif
