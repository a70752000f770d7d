/*
 * media_prompt.c -- the composition of a prompt with images (see
 * media_prompt.h): a plan first (the text pieces' ids, each image's grid,
 * the rows and positions they take), checked whole before anything runs,
 * then the plan evaluated in order -- text runs, and for each image its
 * tower output evaluated as embeddings at its span's positions.
 */
#include "runtime/media_prompt.h"

#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/error.h"
#include "model/model.h"
#include "runtime/session_hooks.h"
#include "tokenizer/tokenizer.h"

/* Qwen3-VL's image delimiters (libmtmd's img_beg / img_end for the
 * qwen3vl_merger projector) */
#define IMG_BEGIN "<|vision_start|>"
#define IMG_END "<|vision_end|>"

/* One step of the plan: a run of text ids [lo, hi), or image `image`. */
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

static pocketllm_status make_plan(const pocketllm_model *m, const pl_vision *v, const char *text, size_t len,
                                  const pl_image_rgb8 *const *images, size_t n_images, const pl_media_opts *o,
                                  plan *p) {
    memset(p, 0, sizeof *p);
    if (!m || (!text && len) || (!images && n_images))
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "media prompt: NULL argument");
    if (!m->vocab) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "media prompt: the model has no tokenizer");
    const pl_media_opts def = {0, 0, 1, 1};
    if (!o) o = &def;
    const size_t mlen = sizeof PL_MEDIA_MARKER - 1;
    size_t n_markers = 0;
    for (size_t at = next_marker(text, len, 0); at < len; at = next_marker(text, len, at + mlen)) n_markers++;
    if (n_markers != n_images)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "the prompt has %zu image marker%s (\"%s\") but %zu image%s %s given",
                       n_markers, n_markers == 1 ? "" : "s", PL_MEDIA_MARKER, n_images, n_images == 1 ? "" : "s",
                       n_images == 1 ? "was" : "were");
    if (n_images && !v)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "%zu image%s given but no vision tower (an mmproj file) is open",
                       n_images, n_images == 1 ? "" : "s");
    for (size_t k = 0; k < n_images; k++)
        if (!images[k] || !images[k]->rgb || !images[k]->width || !images[k]->height)
            return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "image %zu is empty", k + 1);
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
        uint32_t nx = 0, ny = 0;
        if ((st = push_text(p, vocab, IMG_BEGIN, sizeof IMG_BEGIN - 1, true)) ||
            (st = pl_media_image_grid(v, o->min_tokens, o->max_tokens, images[k]->width, images[k]->height, &nx, &ny)) ||
            (st = push_item(p, (item){(long)k, 0, 0, nx, ny})) ||
            (st = push_text(p, vocab, IMG_END, sizeof IMG_END - 1, true)))
            break;
        p->n_rows += (size_t)nx * ny;
        p->n_pos += nx > ny ? nx : ny;
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

pocketllm_status pl_media_prompt_count(const pocketllm_model *m, const pl_vision *v, const char *text, size_t len,
                                       const pl_image_rgb8 *const *images, size_t n_images, const pl_media_opts *o,
                                       int32_t **ids, size_t *n_rows, size_t *n_pos) {
    if (ids) *ids = NULL;
    plan p;
    pocketllm_status st = make_plan(m, v, text, len, images, n_images, o, &p);
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
                for (size_t j = 0; j < (size_t)it->nx * it->ny; j++) l[k++] = -1;
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

pocketllm_status pl_media_prompt_eval(pocketllm_session *s, uint32_t seq, pl_vision *v, const char *text, size_t len,
                                      const pl_image_rgb8 *const *images, size_t n_images, const pl_media_opts *o) {
    if (!s) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "media prompt: no session");
    if (seq >= pocketllm_session_n_seq(s)) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "session: no sequence %u", seq);
    const pl_media_opts def = {0, 0, 1, 1};
    if (!o) o = &def;
    plan p;
    pocketllm_status st = make_plan(pl_session_model(s), v, text, len, images, n_images, o, &p);
    if (st) return st;
    const uint32_t start = pocketllm_session_seq_n_past(s, seq), n_ctx = pocketllm_session_n_ctx(s);
    if (p.n_rows > (size_t)(n_ctx - start)) {
        st = pl_fail(POCKETLLM_ERR_CONTEXT_FULL,
                     "the prompt and its %zu image%s take %zu positions; the context has %u of %u left", n_images,
                     n_images == 1 ? "" : "s", p.n_rows, n_ctx - start, n_ctx);
        plan_free(&p);
        return st;
    }
    for (size_t i = 0; i < p.n_items && !st; i++) {
        const item *it = &p.items[i];
        st = it->image < 0 ? pl_session_eval_text(s, seq, p.ids + it->lo, it->hi - it->lo, 0)
                           : eval_image(s, seq, v, images[it->image], it, o);
    }
    plan_free(&p);
    /* truncating a valid sequence sets no message: the failure's stays */
    if (st) pocketllm_session_seq_truncate(s, seq, start);
    return st;
}
