/*
 * media_api.c -- the public handles for media in (pocketllm_mmproj with its
 * vision and/or audio tower, pocketllm_image) over vision/vision.h,
 * audio/audio_tower.h and vision/image_decode.h, and
 * pocketllm_session_eval_media[_list] over the composition in
 * media_prompt.c.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audio/audio_api_internal.h"
#include "audio/audio_tower.h"
#include "base/error.h"
#include "model/model.h"
#include "runtime/media_prompt.h"
#include "runtime/session_hooks.h"
#include "vision/image_decode.h"

struct pocketllm_mmproj {
    pl_vision *v;       /* NULL: the file has no vision tower */
    pl_audio_tower *a;  /* NULL: the file has no audio tower */
    const pocketllm_model *model;
    uint32_t min_tokens, max_tokens;
};

struct pocketllm_image {
    pl_image_rgb8 img;
};

/* Which towers the file holds, as libmtmd's clip.cpp reads it:
 * clip.has_vision_encoder / clip.has_audio_encoder (a file with neither key
 * is a vision tower, as mmproj files before audio were). */
static pocketllm_status which_towers(const char *path, bool *vision, bool *audio) {
    pocketllm_gguf *g;
    pocketllm_status st = pocketllm_gguf_open(path, &g);
    if (st) return st;
    const pocketllm_gguf_value *hv = pocketllm_gguf_find(g, "clip.has_vision_encoder");
    const pocketllm_gguf_value *ha = pocketllm_gguf_find(g, "clip.has_audio_encoder");
    uint64_t u;
    *audio = ha && !pocketllm_gguf_value_u64(ha, &u) && u != 0;
    *vision = hv ? !pocketllm_gguf_value_u64(hv, &u) && u != 0 : !*audio;
    pocketllm_gguf_close(g);
    if (!*vision && !*audio)
        return pl_fail(POCKETLLM_ERR_FORMAT, "%s: the mmproj holds neither a vision nor an audio tower", path);
    return POCKETLLM_OK;
}

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
    bool vision, audio;
    pocketllm_status st = which_towers(path, &vision, &audio);
    if (st) return st;
    pocketllm_mmproj *mm = calloc(1, sizeof *mm);
    if (!mm) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    mm->model = model;
    mm->min_tokens = p.image_min_tokens;
    mm->max_tokens = p.image_max_tokens;
    if ((vision && (st = pl_vision_open(model, path, &mm->v))) || (audio && (st = pl_audio_open(model, path, &mm->a)))) {
        pocketllm_mmproj_close(mm);
        return st;
    }
    /* limits the size rules cannot use are refused now, not at the first image */
    uint32_t nx, ny;
    if (mm->v && (st = pl_media_image_grid(mm->v, mm->min_tokens, mm->max_tokens, 64, 64, &nx, &ny))) {
        pl_error_prefix("image token limits");
        pocketllm_mmproj_close(mm);
        return st;
    }
    *out = mm;
    return POCKETLLM_OK;
}

void pocketllm_mmproj_close(pocketllm_mmproj *mm) {
    if (!mm) return;
    if (mm->v) pl_vision_close(mm->v);
    if (mm->a) pl_audio_close(mm->a);
    free(mm);
}

pocketllm_status pocketllm_mmproj_get_info(const pocketllm_mmproj *mm, pocketllm_mmproj_info *out) {
    if (!mm || !out) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "mmproj_get_info: NULL argument");
    memset(out, 0, sizeof *out);
    if (mm->a) {
        const pl_audio_hparams *ah = pl_audio_hparams_of(mm->a);
        out->has_audio = 1;
        snprintf(out->audio_projector, sizeof out->audio_projector, "%s", ah->projector);
        out->audio_n_embd = (uint32_t)ah->n_embd;
        out->audio_n_layer = (uint32_t)ah->n_layer;
        out->audio_n_head = (uint32_t)ah->n_head;
        out->audio_n_ff = (uint32_t)ah->n_ff;
        out->audio_n_mel = (uint32_t)ah->n_mel;
        out->audio_n_embd_text = (uint32_t)ah->n_embd_text;
        if (!mm->v) {
            memcpy(out->projector, out->audio_projector, sizeof out->projector);
            out->n_embd_text = out->audio_n_embd_text;
            return POCKETLLM_OK;
        }
    }
    out->has_vision = 1;
    const pl_vision_hparams *h = pl_vision_hparams_of(mm->v);
    pl_qwen3vl_prep prep;
    pl_vision_prep_params(mm->v, mm->min_tokens, mm->max_tokens, &prep);
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
    if (!mm->v) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "the mmproj has no vision tower");
    uint32_t x, y;
    pocketllm_status st = pl_media_image_grid(mm->v, mm->min_tokens, mm->max_tokens, img->img.width, img->img.height, &x, &y);
    if (st) return st;
    if (n_tokens) *n_tokens = x * y;
    if (nx) *nx = x;
    if (ny) *ny = y;
    return POCKETLLM_OK;
}

/* The old image lists as media lists, in a list the caller frees. */
static pocketllm_status image_media(const pocketllm_image *const *images, size_t n, pocketllm_media **out) {
    *out = NULL;
    if (n == 0) return POCKETLLM_OK;
    if (!images) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "media prompt: %zu images but no image list", n);
    if (n > (1u << 20)) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "media prompt: %zu images are too many", n);
    pocketllm_media *l = calloc(n, sizeof *l);
    if (!l) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (!images[i]) {
            free(l);
            return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "media prompt: image %zu is NULL", i + 1);
        }
        l[i].image = images[i];
    }
    *out = l;
    return POCKETLLM_OK;
}

/* The public media list as the composition takes it, in a list the caller
 * frees. */
static pocketllm_status media_items(const pocketllm_media *media, size_t n, pl_media_item **out) {
    *out = NULL;
    if (n == 0) return POCKETLLM_OK;
    if (!media) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "media prompt: %zu media items but no list", n);
    if (n > (1u << 20)) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "media prompt: %zu media items are too many", n);
    pl_media_item *l = calloc(n, sizeof *l);
    if (!l) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (!media[i].image == !media[i].audio) {
            free(l);
            return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT,
                           "media prompt: item %zu must be exactly one of an image and an audio clip", i + 1);
        }
        if (media[i].image) l[i].image = &media[i].image->img;
        else l[i].audio = pl_audio_of(media[i].audio);
    }
    *out = l;
    return POCKETLLM_OK;
}

static pl_media_opts opts(const pocketllm_mmproj *mm, int add_special, int parse_special) {
    pl_media_opts o = {mm ? mm->min_tokens : 0, mm ? mm->max_tokens : 0, add_special != 0, parse_special != 0};
    return o;
}

pocketllm_status pocketllm_mmproj_audio_tokens(const pocketllm_mmproj *mm, const pocketllm_audio *a, uint32_t *n_tokens) {
    if (!mm || !a || !n_tokens) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "mmproj_audio_tokens: NULL argument");
    if (!mm->a) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "the mmproj has no audio tower");
    size_t n;
    pocketllm_status st = pl_media_audio_tokens(mm->a, pl_audio_of(a)->n, &n, NULL);
    if (st) return st;
    if (n > UINT32_MAX) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "the audio clip takes %zu tokens", n);
    *n_tokens = (uint32_t)n;
    return POCKETLLM_OK;
}

pocketllm_status pocketllm_media_list_tokens(const pocketllm_model *model, const pocketllm_mmproj *mm, const char *text,
                                             size_t len, const pocketllm_media *media, size_t n_media, int add_special,
                                             int parse_special, int32_t *ids, size_t cap, uint32_t *n_tokens) {
    if (!model || !n_tokens) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "media_list_tokens: NULL argument");
    if (mm && mm->model != model)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "the mmproj was opened for another model");
    pl_media_item *l;
    pocketllm_status st = media_items(media, n_media, &l);
    if (st) return st;
    const pl_media_opts o = opts(mm, add_special, parse_special);
    size_t rows = 0;
    int32_t *all = NULL;
    st = pl_media_list_count(model, mm ? mm->v : NULL, mm ? mm->a : NULL, text, len, l, n_media, &o, ids ? &all : NULL,
                             &rows, NULL);
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

pocketllm_status pocketllm_media_prompt_tokens(const pocketllm_model *model, const pocketllm_mmproj *mm, const char *text,
                                               size_t len, const pocketllm_image *const *images, size_t n_images,
                                               int add_special, int parse_special, int32_t *ids, size_t cap,
                                               uint32_t *n_tokens) {
    if (!model || !n_tokens) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "media_prompt_tokens: NULL argument");
    pocketllm_media *l;
    pocketllm_status st = image_media(images, n_images, &l);
    if (st) return st;
    st = pocketllm_media_list_tokens(model, mm, text, len, l, n_images, add_special, parse_special, ids, cap, n_tokens);
    free(l);
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
    pocketllm_media *l;
    pocketllm_status st = image_media(images, n_images, &l);
    if (st) return st;
    st = pocketllm_session_eval_media_list(s, seq, mm, text, len, l, n_images, add_special, parse_special);
    free(l);
    return st;
}

pocketllm_status pocketllm_session_eval_media_list(pocketllm_session *s, uint32_t seq, pocketllm_mmproj *mm,
                                                   const char *text, size_t len, const pocketllm_media *media,
                                                   size_t n_media, int add_special, int parse_special) {
    if (!s) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "session_eval_media: no session");
    if (mm && mm->model != pl_session_model(s))
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "the mmproj was opened for another model than the session's");
    pl_media_item *l;
    pocketllm_status st = media_items(media, n_media, &l);
    if (st) return st;
    const pl_media_opts o = opts(mm, add_special, parse_special);
    st = pl_media_list_eval(s, seq, mm ? mm->v : NULL, mm ? mm->a : NULL, text, len, l, n_media, &o);
    free(l);
    return st;
}
