/*
 * fit_vision.c -- the vision tower's share of `fit`'s need.  The weights
 * are measured as the text model's are: the mmproj's mapping (the tower
 * reads its matrices in place) plus the heap opening it takes (the
 * loader's f32 copies of small vectors, the compute instance with its
 * scratch, which pl_vision_open reserves for the default budget's largest
 * image).  The activations of one image are computed, not measured --
 * running the largest image (4096 merged tokens, 16384 patches through 24
 * blocks) would take minutes on a CPU: they are what pl_vision_encode
 * allocates (pl_vision_image_bytes, beside the allocations it counts).
 * Only the image's token count matters, not its shape.
 */
#include "eval/fit_vision.h"

#include <math.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/heap.h"
#include "model/model.h"
#include "vision/image_prep.h"
#include "vision/vision.h"

#define DEFAULT_MAX_TOKENS 4096

pocketllm_status pl_fit_vision(const char *model_path, const char *mmproj, uint32_t max_tokens, uint32_t n_ctx,
                               int n_threads, pl_fit_vision_need *out) {
    memset(out, 0, sizeof *out);
    if (!max_tokens) max_tokens = DEFAULT_MAX_TOKENS;
    if (n_ctx && n_ctx < 2 + 8)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "fit: a context of %u positions holds no image (it needs the "
                       "image's tokens and two markers)", n_ctx);
    uint32_t tokens = max_tokens;
    if (n_ctx && tokens > n_ctx - 2) tokens = n_ctx - 2;
    struct stat sb;
    if (stat(mmproj, &sb) != 0) return pl_fail(POCKETLLM_ERR_IO, "fit: cannot read %s", mmproj);
    pocketllm_model_params mp = pocketllm_model_default_params();
    mp.n_threads = n_threads;
    pocketllm_model *m = NULL;
    pocketllm_status st = pocketllm_model_open(model_path, &mp, &m);
    if (st) return st;
    uint64_t h0 = 0, h1 = 0;
    const bool heap_ok = pl_heap_in_use(&h0);
    pl_vision *v = NULL;
    st = pl_vision_open(m, mmproj, &v);
    if (!st) {
        const bool heap_ok1 = heap_ok && pl_heap_in_use(&h1);
        out->weights_bytes = (uint64_t)sb.st_size + (heap_ok1 && h1 > h0 ? h1 - h0 : 0);
        out->tokens = tokens;
        const pl_vision_hparams *hp = pl_vision_hparams_of(v);
        out->square_side = (uint32_t)(floor(sqrt((double)tokens)) * (double)(hp->patch_size * hp->n_merge));
        out->image_bytes = pl_vision_image_bytes(hp, tokens);
        pl_vision_close(v);
    }
    pocketllm_model_close(m);
    return st;
}
