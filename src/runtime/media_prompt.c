/*
 * media_prompt.c -- the composition of a prompt with images and audio
 * clips (see media_prompt.h): a plan first (the text pieces' ids, each
 * image's grid, each clip's token count, the rows and positions they take),
 * checked whole before anything runs, then the plan evaluated in order --
 * text runs, and for each image or clip its tower output evaluated as
 * embeddings at its span's positions.
 */
#include "runtime/media_prompt.h"

#include <stdlib.h>
#include <string.h>

#include "audio/audio_decode.h"
#include "audio/audio_mel.h"
#include "audio/audio_tower.h"
#include "base/checked.h"
#include "base/error.h"
#include "model/model.h"
#include "runtime/session_hooks.h"
#include "tokenizer/tokenizer.h"

/* Qwen3-VL's image delimiters (libmtmd's img_beg / img_end for the
 * qwen3vl_merger projector) */
#define IMG_BEGIN "<|vision_start|>"
#define IMG_END "<|vision_end|>"
/* Qwen3-ASR's audio delimiters (libmtmd's aud_beg / aud_end for qwen3a) */
#define AUD_BEGIN "<|audio_start|>"
#define AUD_END "<|audio_end|>"

/* One step of the plan: a run of text ids [lo, hi), or media item `image`
 * (an image with its nx x ny grid, or an audio clip of lo tokens). */
typedef struct item {
    long image; /* -1: text */
    size_t lo, hi;
    uint32_t nx, ny;
} item;

typedef struct plan {
    int32_t *ids;
    size_t n_ids, cap_ids;
    item *items;
    size_t n_items, cap_items;
    size_t n_rows, n_pos;
} plan;

static void plan_free(plan *p) {
    free(p->ids);
    free(p->items);
    memset(p, 0, sizeof *p);
}

static pocketllm_status push_item(plan *p, item it) {
    if (p->n_items == p->cap_items) {
        size_t cap = p->cap_items ? 2 * p->cap_items : 8;
        item *n = realloc(p->items, cap * sizeof *n);
        if (!n) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for the prompt's plan");
        p->items = n;
        p->cap_items = cap;
    }
    p->items[p->n_items++] = it;
    return POCKETLLM_OK;
}

/* Append ids to the plan, to the text run in progress (libmtmd joins
 * adjacent text into one chunk). */
static pocketllm_status push_ids(plan *p, const int32_t *ids, size_t n) {
    if (n == 0) return POCKETLLM_OK;
    if (p->n_ids + n > p->cap_ids) {
        size_t cap = p->cap_ids ? p->cap_ids : 64;
        while (cap < p->n_ids + n) cap *= 2;
        int32_t *g = realloc(p->ids, cap * sizeof *g);
        if (!g) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for %zu prompt ids", p->n_ids + n);
        p->ids = g;
        p->cap_ids = cap;
    }
    memcpy(p->ids + p->n_ids, ids, n * sizeof *ids);
    if (p->n_items && p->items[p->n_items - 1].image < 0) {
        p->items[p->n_items - 1].hi += n;
    } else {
        pocketllm_status st = push_item(p, (item){-1, p->n_ids, p->n_ids + n, 0, 0});
        if (st) return st;
    }
    p->n_ids += n;
    p->n_rows += n;
    p->n_pos += n;
    return POCKETLLM_OK;
}

static pocketllm_status push_text(plan *p, const pl_vocab *vocab, const char *text, size_t len, bool parse_special) {
    if (len == 0) return POCKETLLM_OK;
    int32_t *ids;
    size_t n;
    pocketllm_status st = pl_tokenize(vocab, text, len, false, parse_special, &ids, &n);
    if (st) return st;
    st = push_ids(p, ids, n);
    free(ids);
    return st;
}

/* Where the next marker starts in text[at, len), or len. */
static size_t next_marker(const char *text, size_t len, size_t at) {
    const size_t m = sizeof PL_MEDIA_MARKER - 1;
    for (size_t i = at; i + m <= len; i++)
        if (text[i] == '<' && !memcmp(text + i, PL_MEDIA_MARKER, m)) return i;
    return len;
}

pocketllm_status pl_media_image_grid(const pl_vision *v, uint32_t min_tokens, uint32_t max_tokens, uint32_t width,
                                     uint32_t height, uint32_t *nx, uint32_t *ny) {
    if (!v || !nx || !ny) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "image grid: NULL argument");
    pl_qwen3vl_prep prep;
    pl_vision_prep_params(v, min_tokens, max_tokens, &prep);
    uint32_t w, h;
    pocketllm_status st = pl_qwen3vl_target_size(width, height, &prep, &w, &h);
    if (st) return st;
    const uint32_t side = prep.patch_size * prep.n_merge;
    *nx = w / side;
    *ny = h / side;
    return POCKETLLM_OK;
}

pocketllm_status pl_media_audio_tokens(const pl_audio_tower *a, size_t n_samples, size_t *n_tokens,
                                       size_t *n_windows) {
    if (!a || !n_tokens) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "audio tokens: NULL argument");
    const size_t nw = pl_mel_qwen3a_windows(n_samples, NULL);
    if (nw == 0)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "the audio clip (%zu samples) is too short to transcribe",
                       n_samples);
    int64_t *lens = malloc(nw * sizeof *lens);
    if (!lens) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    pl_mel_qwen3a_windows(n_samples, lens);
    size_t n = 0;
    for (size_t i = 0; i < nw; i++) n += (size_t)pl_audio_window_tokens(lens[i]);
    free(lens);
    *n_tokens = n;
    if (n_windows) *n_windows = nw;
    return POCKETLLM_OK;
}

static pocketllm_status make_plan(const pocketllm_model *m, const pl_vision *v, const pl_audio_tower *a,
                                  const char *text, size_t len, const pl_media_item *media, size_t n_images,
                                  const pl_media_opts *o, plan *p) {
    memset(p, 0, sizeof *p);
    if (!m || (!text && len) || (!media && n_images))
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "media prompt: NULL argument");
    if (!m->vocab) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "media prompt: the model has no tokenizer");
    const pl_media_opts def = {0, 0, 1, 1};
    if (!o) o = &def;
    const size_t mlen = sizeof PL_MEDIA_MARKER - 1;
    size_t n_markers = 0;
    for (size_t at = next_marker(text, len, 0); at < len; at = next_marker(text, len, at + mlen)) n_markers++;
    size_t n_img = 0, n_aud = 0;
    for (size_t k = 0; k < n_images; k++) {
        if (!media[k].image == !media[k].audio)
            return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "media item %zu must be exactly one of an image and an audio clip",
                           k + 1);
        if (media[k].image) n_img++;
        else n_aud++;
    }
    const char *what = n_aud == 0 ? "image" : n_img == 0 ? "audio" : "media";
    if (n_markers != n_images)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "the prompt has %zu %s marker%s (\"%s\") but %zu %s%s %s given",
                       n_markers, what, n_markers == 1 ? "" : "s", PL_MEDIA_MARKER, n_images,
                       n_aud == 0 ? "image" : n_img == 0 ? "audio clip" : "media item", n_images == 1 ? "" : "s",
                       n_images == 1 ? "was" : "were");
    if (n_img && !v)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "%zu image%s given but no vision tower (an mmproj file with one) is open",
                       n_img, n_img == 1 ? "" : "s");
    if (n_aud && !a)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT,
                       "%zu audio clip%s given but no audio tower is open (the mmproj has none)", n_aud,
                       n_aud == 1 ? "" : "s");
    for (size_t k = 0; k < n_images; k++) {
        const pl_image_rgb8 *im = media[k].image;
        const pl_audio_pcm *au = media[k].audio;
        if (im && (!im->rgb || !im->width || !im->height))
            return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "image %zu is empty", k + 1);
        if (au && (!au->samples || !au->n))
            return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "audio clip %zu is empty", k + 1);
        if (au && au->rate != 16000)
            return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "audio clip %zu is at %u Hz; the audio tower takes 16000 Hz",
                           k + 1, au->rate);
    }
    if (n_aud && m->dims.n_deepstack != 0)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED,
                       "audio input needs a text model without DeepStack inputs (this one has %lld sets)",
                       (long long)m->dims.n_deepstack);
    pocketllm_status st = POCKETLLM_OK;
    const pl_vocab *vocab = m->vocab;
    if (o->add_special && pl_vocab_add_bos(vocab) && pl_vocab_bos(vocab) >= 0) {
        const int32_t bos = pl_vocab_bos(vocab);
        st = push_ids(p, &bos, 1);
    }
    size_t at = 0, k = 0;
    while (!st) {
        const size_t mk = next_marker(text, len, at);
        if ((st = push_text(p, vocab, text + at, mk - at, o->parse_special != 0))) break;
        if (mk == len) break;
        if (media[k].audio) {
            size_t n_tok = 0;
            if ((st = push_text(p, vocab, AUD_BEGIN, sizeof AUD_BEGIN - 1, true)) ||
                (st = pl_media_audio_tokens(a, media[k].audio->n, &n_tok, NULL)) ||
                (st = push_item(p, (item){(long)k, n_tok, 0, 0, 0})) ||
                (st = push_text(p, vocab, AUD_END, sizeof AUD_END - 1, true)))
                break;
            p->n_rows += n_tok;
            p->n_pos += n_tok;
        } else {
            uint32_t nx = 0, ny = 0;
            const pl_image_rgb8 *im = media[k].image;
            if ((st = push_text(p, vocab, IMG_BEGIN, sizeof IMG_BEGIN - 1, true)) ||
                (st = pl_media_image_grid(v, o->min_tokens, o->max_tokens, im->width, im->height, &nx, &ny)) ||
                (st = push_item(p, (item){(long)k, 0, 0, nx, ny})) ||
                (st = push_text(p, vocab, IMG_END, sizeof IMG_END - 1, true)))
                break;
            p->n_rows += (size_t)nx * ny;
            p->n_pos += nx > ny ? nx : ny;
        }
        k++;
        at = mk + mlen;
    }
    if (!st && o->add_special && pl_vocab_add_eos(vocab) && pl_vocab_eos(vocab) >= 0) {
        const int32_t eos = pl_vocab_eos(vocab);
        st = push_ids(p, &eos, 1);
    }
    if (!st && p->n_rows == 0) st = pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "media prompt: nothing to evaluate");
    if (st) plan_free(p);
    return st;
}

/* The old image-only lists as media lists (malloc'd; NULL for none). */
static pocketllm_status image_items(const pl_image_rgb8 *const *images, size_t n, pl_media_item **out) {
    *out = NULL;
    if (n == 0) return POCKETLLM_OK;
    if (!images) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "media prompt: NULL argument");
    pl_media_item *l = calloc(n, sizeof *l);
    if (!l) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (!images[i]) {
            free(l);
            return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "image %zu is empty", i + 1);
        }
        l[i].image = images[i];
    }
    *out = l;
    return POCKETLLM_OK;
}

pocketllm_status pl_media_prompt_count(const pocketllm_model *m, const pl_vision *v, const char *text, size_t len,
                                       const pl_image_rgb8 *const *images, size_t n_images, const pl_media_opts *o,
                                       int32_t **ids, size_t *n_rows, size_t *n_pos) {
    if (ids) *ids = NULL;
    pl_media_item *l;
    pocketllm_status st = image_items(images, n_images, &l);
    if (st) return st;
    st = pl_media_list_count(m, v, NULL, text, len, l, n_images, o, ids, n_rows, n_pos);
    free(l);
    return st;
}

pocketllm_status pl_media_list_count(const pocketllm_model *m, const pl_vision *v, const pl_audio_tower *a,
                                     const char *text, size_t len, const pl_media_item *media, size_t n_media,
                                     const pl_media_opts *o, int32_t **ids, size_t *n_rows, size_t *n_pos) {
    if (ids) *ids = NULL;
    plan p;
    pocketllm_status st = make_plan(m, v, a, text, len, media, n_media, o, &p);
    if (st) return st;
    if (ids) {
        int32_t *l = malloc(p.n_rows * sizeof *l);
        if (!l) {
            plan_free(&p);
            return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for %zu prompt ids", p.n_rows);
        }
        size_t k = 0;
        for (size_t i = 0; i < p.n_items; i++) {
            const item *it = &p.items[i];
            if (it->image < 0) {
                memcpy(l + k, p.ids + it->lo, (it->hi - it->lo) * sizeof *l);
                k += it->hi - it->lo;
            } else {
                const size_t n = media[it->image].audio ? it->lo : (size_t)it->nx * it->ny;
                for (size_t j = 0; j < n; j++) l[k++] = -1;
            }
        }
        *ids = l;
    }
    if (n_rows) *n_rows = p.n_rows;
    if (n_pos) *n_pos = p.n_pos;
    plan_free(&p);
    return POCKETLLM_OK;
}

/* One image: preprocessed, through the tower, and evaluated as its span's
 * embeddings at their positions. */
static pocketllm_status eval_image(pocketllm_session *s, uint32_t seq, pl_vision *v, const pl_image_rgb8 *img,
                                   const item *it, const pl_media_opts *o) {
    pl_qwen3vl_prep prep;
    pl_vision_prep_params(v, o->min_tokens, o->max_tokens, &prep);
    pl_image_f32 f = {0};
    pocketllm_status st = pl_qwen3vl_preprocess(img, &prep, &f);
    if (st) return st;
    const uint32_t side = prep.patch_size * prep.n_merge;
    const size_t n = (size_t)it->nx * it->ny;
    const int64_t width = pl_vision_out_width(v);
    float *embd = NULL;
    int32_t *pos = NULL;
    uint64_t floats;
    if (f.width != it->nx * side || f.height != it->ny * side) {
        st = pl_fail(POCKETLLM_ERR_INTERNAL, "the preprocessed image is %ux%u, not the %ux%u its grid says", f.width,
                     f.height, it->nx * side, it->ny * side);
        goto done;
    }
    if (width <= 0 || !pl_mul_u64((uint64_t)n, (uint64_t)width, &floats) || floats > SIZE_MAX / sizeof(float)) {
        st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "the embeddings of %zu image tokens are too large", n);
        goto done;
    }
    embd = malloc((size_t)floats * sizeof *embd);
    pos = malloc(4 * n * sizeof *pos);
    if (!embd || !pos) {
        st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for the embeddings of %zu image tokens", n);
        goto done;
    }
    if ((st = pl_vision_encode(v, &f, embd))) goto done;
    pl_image_f32_free(&f);
    /* libmtmd's M-RoPE layout (mtmd_image_tokens_get_decoder_pos):
     * time p0, height p0 + row, width p0 + column, extra 0 */
    const int32_t p0 = pl_session_seq_pos(s, seq);
    for (size_t i = 0; i < n; i++) {
        pos[i] = p0;
        pos[n + i] = p0 + (int32_t)(i / it->nx);
        pos[2 * n + i] = p0 + (int32_t)(i % it->nx);
        pos[3 * n + i] = 0;
    }
    const int32_t next = p0 + (int32_t)(it->nx > it->ny ? it->nx : it->ny);
    st = pl_session_eval_embd(s, seq, embd, n, width, pos, next);
done:
    pl_image_f32_free(&f);
    free(embd);
    free(pos);
    return st;
}

/* One audio clip: its mel (whole: the normalisation spans the clip), then
 * window by window through the tower and evaluated at 1-D positions, as
 * libmtmd evaluates each window's chunk (mtmd_helper_decode_image_chunk
 * with set_position_mrope_1d; causal, passes of n_batch). */
static pocketllm_status eval_audio(pocketllm_session *s, uint32_t seq, pl_audio_tower *a, const pl_audio_pcm *pcm,
                                   const item *it) {
    const pl_audio_hparams *hp = pl_audio_hparams_of(a);
    const pl_mel_params mp = pl_mel_params_qwen3a((uint32_t)hp->n_mel);
    const pocketllm_model *m = pl_session_model(s);
    pl_mel *win = NULL;
    size_t n_win = 0, done = 0;
    pocketllm_status st = pl_mel_qwen3a(&mp, pcm->samples, pcm->n, m->n_threads > 0 ? m->n_threads : 1, &win, &n_win);
    if (st) return st;
    const int64_t width = hp->n_embd_text;
    float *embd = NULL;
    int32_t *pos = NULL;
    size_t cap = 0;
    for (size_t w = 0; w < n_win && !st; w++) {
        const size_t n = (size_t)pl_audio_window_tokens(win[w].n_len);
        if (n == 0) continue;
        if (n > cap) {
            uint64_t floats;
            if (!pl_mul_u64((uint64_t)n, (uint64_t)width, &floats) || floats > SIZE_MAX / sizeof(float)) {
                st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "the embeddings of %zu audio tokens are too large", n);
                break;
            }
            free(embd);
            free(pos);
            embd = malloc((size_t)floats * sizeof *embd);
            pos = malloc(4 * n * sizeof *pos);
            cap = n;
            if (!embd || !pos) {
                st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for the embeddings of %zu audio tokens", n);
                break;
            }
        }
        if ((st = pl_audio_encode(a, &win[w], embd))) break;
        const int32_t p0 = pl_session_seq_pos(s, seq);
        for (size_t i = 0; i < n; i++)
            for (int ax = 0; ax < 4; ax++) pos[(size_t)ax * n + i] = p0 + (int32_t)i;
        st = pl_session_eval_embd(s, seq, embd, n, width, pos, p0 + (int32_t)n);
        done += n;
    }
    if (!st && done != it->lo)
        st = pl_fail(POCKETLLM_ERR_INTERNAL, "the audio clip gave %zu tokens, not the %zu its plan says", done, it->lo);
    pl_mel_free(win, n_win);
    free(embd);
    free(pos);
    return st;
}

pocketllm_status pl_media_prompt_eval(pocketllm_session *s, uint32_t seq, pl_vision *v, const char *text, size_t len,
                                      const pl_image_rgb8 *const *images, size_t n_images, const pl_media_opts *o) {
    pl_media_item *l;
    pocketllm_status st = image_items(images, n_images, &l);
    if (st) return st;
    st = pl_media_list_eval(s, seq, v, NULL, text, len, l, n_images, o);
    free(l);
    return st;
}

pocketllm_status pl_media_list_eval(pocketllm_session *s, uint32_t seq, pl_vision *v, pl_audio_tower *a,
                                    const char *text, size_t len, const pl_media_item *media, size_t n_images,
                                    const pl_media_opts *o) {
    if (!s) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "media prompt: no session");
    if (seq >= pocketllm_session_n_seq(s)) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "session: no sequence %u", seq);
    const pl_media_opts def = {0, 0, 1, 1};
    if (!o) o = &def;
    plan p;
    pocketllm_status st = make_plan(pl_session_model(s), v, a, text, len, media, n_images, o, &p);
    if (st) return st;
    const uint32_t start = pocketllm_session_seq_n_past(s, seq), n_ctx = pocketllm_session_n_ctx(s);
    if (p.n_rows > (size_t)(n_ctx - start)) {
        st = pl_fail(POCKETLLM_ERR_CONTEXT_FULL,
                     "the prompt and its %zu media item%s take %zu positions; the context has %u of %u left", n_images,
                     n_images == 1 ? "" : "s", p.n_rows, n_ctx - start, n_ctx);
        plan_free(&p);
        return st;
    }
    for (size_t i = 0; i < p.n_items && !st; i++) {
        const item *it = &p.items[i];
        st = it->image < 0          ? pl_session_eval_text(s, seq, p.ids + it->lo, it->hi - it->lo, 0)
             : media[it->image].audio ? eval_audio(s, seq, a, media[it->image].audio, it)
                                      : eval_image(s, seq, v, media[it->image].image, it, o);
    }
    plan_free(&p);
    /* truncating a valid sequence sets no message: the failure's stays */
    if (st) pocketllm_session_seq_truncate(s, seq, start);
    return st;
}
