/*
 * media_prompt.h -- a prompt with images and audio clips, composed the way
 * llama.cpp's libmtmd composes it for Qwen3-VL and Qwen3-ASR (mtmd_tokenize,
 * then mtmd_helper_eval_chunks), in one place for every caller (the ABI's
 * pocketllm_session_eval_media[_list], `pocketllm run`, chat, transcribe,
 * the server):
 *
 *   text is split at each media marker ("<__media__>"); each text piece is
 *   tokenized on its own (special tokens parsed as the caller says, no
 *   BOS/EOS), the BOS the vocabulary asks for goes first when add_special;
 *   the i-th marker becomes "<|vision_start|>" (tokenized with special
 *   tokens parsed), the i-th image's merged tokens in raster order, then
 *   "<|vision_end|>".
 *   positions: a text token takes the next position; an image starting at
 *   position p0 with an nx x ny grid gives token i (row y = i / nx, column
 *   x = i % nx) the rotary positions (t, h, w, e) = (p0, p0 + y, p0 + x,
 *   0), and the text after it continues at p0 + max(nx, ny); every token
 *   takes one cache row.
 *   an audio clip (projector qwen3a): the marker becomes "<|audio_start|>"
 *   (special tokens parsed), then for each mel window of the clip (30 s
 *   windows, audio/audio_mel.h) that window's tokens as a chunk of its own,
 *   then "<|audio_end|>"; audio tokens take 1-D positions (all four axes
 *   p0 + i, libmtmd's set_position_mrope_1d), the text after continues at
 *   p0 + n_tokens.  Like libmtmd's, audio chunks are evaluated causally
 *   (mtmd_decode_use_non_causal is false for qwen3a), each in passes of at
 *   most n_batch.
 *
 * Each image is preprocessed (vision/image_prep.h with the tower's
 * parameters) and encoded (vision/vision.h) just before its span is
 * evaluated, so at most one image's embeddings are held at a time; a
 * clip's mel is computed whole (its normalisation spans the clip) just
 * before its span, and one window's embeddings are held at a time.
 */
#ifndef PL_MEDIA_PROMPT_H
#define PL_MEDIA_PROMPT_H

#include <stddef.h>
#include <stdint.h>

#include "pocketllm.h"
#include "vision/image_prep.h"
#include "vision/vision.h"

struct pl_audio_pcm;
struct pl_audio_tower;

#define PL_MEDIA_MARKER "<__media__>"

typedef struct pl_media_opts {
    uint32_t min_tokens, max_tokens; /* the image token budget (0: the defaults) */
    int add_special;                 /* the vocabulary's BOS first (as llama_tokenize's add_special) */
    int parse_special;               /* special tokens written in the text are recognised */
} pl_media_opts;

/* The merged-token grid an image of width x height pixels gets (nx
 * columns, ny rows; nx x ny tokens, max(nx, ny) positions), without
 * running the tower. */
pocketllm_status pl_media_image_grid(const pl_vision *v, uint32_t min_tokens, uint32_t max_tokens, uint32_t width,
                                     uint32_t height, uint32_t *nx, uint32_t *ny);

/* How many cache rows (tokens) the prompt takes, and how far the rotary
 * position advances, without running the tower; checks what
 * pl_media_prompt_eval checks before it evaluates anything (marker count,
 * an image without a tower).  With ids not NULL, *ids receives the
 * prompt's n_rows ids (malloc'd), each image token as -1. */
pocketllm_status pl_media_prompt_count(const pocketllm_model *m, const pl_vision *v, const char *text, size_t len,
                                       const pl_image_rgb8 *const *images, size_t n_images, const pl_media_opts *o,
                                       int32_t **ids, size_t *n_rows, size_t *n_pos);

/* Evaluate the prompt on sequence seq of s after what it holds, leaving the
 * last token's logits (pocketllm_session_logits(s, -1)).  Refused before
 * anything is evaluated: a marker count that differs from n_images, images
 * without a tower (v NULL), a prompt that does not fit the context left,
 * nothing to evaluate.  When a later step fails, the sequence is truncated
 * back to where it was. */
pocketllm_status pl_media_prompt_eval(pocketllm_session *s, uint32_t seq, pl_vision *v, const char *text, size_t len,
                                      const pl_image_rgb8 *const *images, size_t n_images, const pl_media_opts *o);

/* One media item of a prompt: exactly one of image and audio set (a mono
 * clip at the tower's sample rate, 16 kHz). */
typedef struct pl_media_item {
    const pl_image_rgb8 *image;
    const struct pl_audio_pcm *audio;
} pl_media_item;

/* The tokens (= cache rows = positions) an audio clip of n_samples takes
 * with the audio tower, without running it; *n_windows (may be NULL) the
 * mel windows it is cut into.  A clip too short for one frame fails. */
pocketllm_status pl_media_audio_tokens(const struct pl_audio_tower *a, size_t n_samples, size_t *n_tokens,
                                       size_t *n_windows);

/* pl_media_prompt_count / pl_media_prompt_eval for a list of images and
 * audio clips, media[i] at the i-th marker; a needs an audio tower (NULL:
 * audio refused), v a vision tower (NULL: images refused). */
pocketllm_status pl_media_list_count(const pocketllm_model *m, const pl_vision *v, const struct pl_audio_tower *a,
                                     const char *text, size_t len, const pl_media_item *media, size_t n_media,
                                     const pl_media_opts *o, int32_t **ids, size_t *n_rows, size_t *n_pos);
pocketllm_status pl_media_list_eval(pocketllm_session *s, uint32_t seq, pl_vision *v, struct pl_audio_tower *a,
                                    const char *text, size_t len, const pl_media_item *media, size_t n_media,
                                    const pl_media_opts *o);

#endif
