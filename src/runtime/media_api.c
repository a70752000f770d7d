/*
 * media_api.c -- the public handles for images in (pocketllm_mmproj,
 * pocketllm_image) over vision/vision.h and vision/image_decode.h, and
 * pocketllm_session_eval_media over the composition in media_prompt.c.
 */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "model/model.h"
#include "runtime/media_prompt.h"
#include "runtime/session_hooks.h"
#include "vision/image_decode.h"

struct pocketllm_mmproj {
    pl_vision *v;
    const pocketllm_model *model;
    uint32_t min_tokens, max_tokens;
};

struct pocketllm_image {
    pl_image_rgb8 img;
};

pocketllm_mmproj_params pocketllm_mmproj_default_params(void) {
    pocketllm_mmproj_params p = {0, 0};
    return p;
}

pocketllm_status pocketllm_mmproj_open(pocketllm_model *model, const char *path, const pocketllm_mmproj_params *params,
                                       pocketllm_mmproj **out) {
    if (!out) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "mmproj_open: no output pointer");
    *out = NULL;
    if (!model || !path) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "mmproj_open: NULL argument");
    const pocketllm_mmproj_params p = params ? *params : pocketllm_mmproj_default_params();
    pocketllm_mmproj *mm = calloc(1, sizeof *mm);
    if (!mm) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    pocketllm_status st = pl_vision_open(model, path, &mm->v);
    if (st) {
        free(mm);
        return st;
    }
    mm->model = model;
    mm->min_tokens = p.image_min_tokens;
    mm->max_tokens = p.image_max_tokens;
    /* limits the size rules cannot use are refused now, not at the first image */
    uint32_t nx, ny;
    if ((st = pl_media_image_grid(mm->v, mm->min_tokens, mm->max_tokens, 64, 64, &nx, &ny))) {
        pl_error_prefix("image token limits");
        pocketllm_mmproj_close(mm);
        return st;
    }
    *out = mm;
    return POCKETLLM_OK;
}

void pocketllm_mmproj_close(pocketllm_mmproj *mm) {
    if (!mm) return;
    pl_vision_close(mm->v);
    free(mm);
}

pocketllm_status pocketllm_mmproj_get_info(const pocketllm_mmproj *mm, pocketllm_mmproj_info *out) {
    if (!mm || !out) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "mmproj_get_info: NULL argument");
    const pl_vision_hparams *h = pl_vision_hparams_of(mm->v);
    pl_qwen3vl_prep prep;
    pl_vision_prep_params(mm->v, mm->min_tokens, mm->max_tokens, &prep);
    memset(out, 0, sizeof *out);
    memcpy(out->projector, h->projector, sizeof out->projector);
    out->projector[sizeof out->projector - 1] = '\0';
    out->n_embd = (uint32_t)h->n_embd;
    out->n_layer = (uint32_t)h->n_layer;
    out->n_head = (uint32_t)h->n_head;
    out->n_ff = (uint32_t)h->n_ff;
    out->patch_size = (uint32_t)h->patch_size;
    out->n_merge = (uint32_t)h->n_merge;
    out->image_size = (uint32_t)h->image_size;
    out->n_embd_text = (uint32_t)h->n_embd_text;
    out->n_deepstack = (uint32_t)h->n_deepstack;
    out->image_min_tokens = prep.min_tokens;
    out->image_max_tokens = prep.max_tokens;
    return POCKETLLM_OK;
}

static pocketllm_status new_image(pocketllm_image **out, pocketllm_image **img) {
    if (!out) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "image: no output pointer");
    *out = NULL;
    *img = calloc(1, sizeof **img);
    return *img ? POCKETLLM_OK : pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
}

pocketllm_status pocketllm_image_load(const char *path, pocketllm_image **out) {
    pocketllm_image *img;
    pocketllm_status st = new_image(out, &img);
    if (st) return st;
    if (!path) st = pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "image_load: no path");
    if (!st) st = pl_image_load(path, &img->img);
    if (st) {
        free(img);
        return st;
    }
    *out = img;
    return POCKETLLM_OK;
}

pocketllm_status pocketllm_image_decode(const void *data, size_t len, pocketllm_image **out) {
    pocketllm_image *img;
    pocketllm_status st = new_image(out, &img);
    if (st) return st;
    if (!data && len) st = pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "image_decode: no data");
    if (!st) st = pl_image_decode(data, len, &img->img);
    if (st) {
        free(img);
        return st;
    }
    *out = img;
    return POCKETLLM_OK;
}

pocketllm_status pocketllm_image_from_rgb(const uint8_t *rgb, uint32_t width, uint32_t height, pocketllm_image **out) {
    pocketllm_image *img;
    pocketllm_status st = new_image(out, &img);
    if (st) return st;
    if (!rgb) st = pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "image_from_rgb: no pixels");
    if (!st) st = pl_image_rgb8_alloc(&img->img, width, height);
    if (st) {
        free(img);
        return st;
    }
    memcpy(img->img.rgb, rgb, (size_t)width * height * 3);
    *out = img;
    return POCKETLLM_OK;
}

void pocketllm_image_free(pocketllm_image *img) {
    if (!img) return;
    pl_image_rgb8_free(&img->img);
    free(img);
}

uint32_t pocketllm_image_width(const pocketllm_image *img) { return img ? img->img.width : 0; }
uint32_t pocketllm_image_height(const pocketllm_image *img) { return img ? img->img.height : 0; }

const char *pocketllm_media_marker(void) { return PL_MEDIA_MARKER; }

pocketllm_status pocketllm_mmproj_image_tokens(const pocketllm_mmproj *mm, const pocketllm_image *img, uint32_t *n_tokens,
                                               uint32_t *nx, uint32_t *ny) {
    if (!mm || !img) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "mmproj_image_tokens: NULL argument");
    uint32_t x, y;
    pocketllm_status st = pl_media_image_grid(mm->v, mm->min_tokens, mm->max_tokens, img->img.width, img->img.height, &x, &y);
    if (st) return st;
    if (n_tokens) *n_tokens = x * y;
    if (nx) *nx = x;
    if (ny) *ny = y;
    return POCKETLLM_OK;
}

/* The images' pixels as the composition takes them, in a list the caller
 * frees. */
static pocketllm_status image_list(const pocketllm_image *const *images, size_t n, const pl_image_rgb8 ***out) {
    *out = NULL;
    if (n == 0) return POCKETLLM_OK;
    if (!images) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "media prompt: %zu images but no image list", n);
    if (n > (1u << 20)) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "media prompt: %zu images are too many", n);
    const pl_image_rgb8 **l = malloc(n * sizeof *l);
    if (!l) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (!images[i]) {
            free(l);
            return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "media prompt: image %zu is NULL", i + 1);
        }
        l[i] = &images[i]->img;
    }
    *out = l;
    return POCKETLLM_OK;
}

static pl_media_opts opts(const pocketllm_mmproj *mm, int add_special, int parse_special) {
    pl_media_opts o = {mm ? mm->min_tokens : 0, mm ? mm->max_tokens : 0, add_special != 0, parse_special != 0};
    return o;
}

pocketllm_status pocketllm_media_prompt_tokens(const pocketllm_model *model, const pocketllm_mmproj *mm, const char *text,
                                               size_t len, const pocketllm_image *const *images, size_t n_images,
                                               int add_special, int parse_special, int32_t *ids, size_t cap,
                                               uint32_t *n_tokens) {
    if (!model || !n_tokens) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "media_prompt_tokens: NULL argument");
    if (mm && mm->model != model)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "the vision tower was opened for another model");
    const pl_image_rgb8 **l;
    pocketllm_status st = image_list(images, n_images, &l);
    if (st) return st;
    const pl_media_opts o = opts(mm, add_special, parse_special);
    size_t rows = 0;
    int32_t *all = NULL;
    st = pl_media_prompt_count(model, mm ? mm->v : NULL, text, len, l, n_images, &o, ids ? &all : NULL, &rows, NULL);
    free(l);
    if (st) return st;
    if (rows > UINT32_MAX) {
        free(all);
        return pl_fail(POCKETLLM_ERR_CONTEXT_FULL, "the prompt takes %zu positions", rows);
    }
    *n_tokens = (uint32_t)rows;
    if (ids) {
        if (rows > cap) st = pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "media_prompt_tokens: %zu ids do not fit %zu", rows, cap);
        else memcpy(ids, all, rows * sizeof *ids);
        free(all);
    }
    return st;
}

pocketllm_status pocketllm_session_eval_media(pocketllm_session *s, pocketllm_mmproj *mm, const char *text, size_t len,
                                              const pocketllm_image *const *images, size_t n_images, int add_special,
                                              int parse_special) {
    return pocketllm_session_eval_media_seq(s, 0, mm, text, len, images, n_images, add_special, parse_special);
}

/* The same on any sequence of a multi-sequence session (the server's). */
pocketllm_status pocketllm_session_eval_media_seq(pocketllm_session *s, uint32_t seq, pocketllm_mmproj *mm,
                                                  const char *text, size_t len, const pocketllm_image *const *images,
                                                  size_t n_images, int add_special, int parse_special) {
    if (!s) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "session_eval_media: no session");
    if (mm && mm->model != pl_session_model(s))
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "the vision tower was opened for another model than the session's");
    const pl_image_rgb8 **l;
    pocketllm_status st = image_list(images, n_images, &l);
    if (st) return st;
    const pl_media_opts o = opts(mm, add_special, parse_special);
    st = pl_media_prompt_eval(s, seq, mm ? mm->v : NULL, text, len, l, n_images, &o);
    free(l);
    return st;
}
