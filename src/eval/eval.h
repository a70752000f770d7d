/*
 * eval.h -- what the evaluation files share: a text cut into windows as
 * llama-perplexity and llama-imatrix cut it, one pass over those windows
 * that scores them (perplexity, saved log-probabilities, KL divergence
 * against a saved base) while an importance-matrix collector may watch
 * every matrix multiplication, and the collector itself.
 */
#ifndef PL_EVAL_H
#define PL_EVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pocketllm.h"

/* ---- windows (windows.c) --------------------------------------------------- */

typedef struct pl_windows {
    int32_t *tokens;   /* the whole text's ids (add_special) */
    size_t n_tokens;
    int64_t n_ctx, n_chunk;
    int32_t bos;       /* put in front of every window, or -1 (the vocabulary adds none) */
} pl_windows;

/* Tokenize and cut: at least two windows' worth of tokens is required (as
 * llama.cpp), at most max_chunks windows are kept (0 = all). */
pocketllm_status pl_windows_make(const pocketllm_model *m, const char *text, size_t len, int64_t n_ctx,
                                 int64_t max_chunks, bool parse_special, pl_windows *w);
void pl_windows_free(pl_windows *w);

/* Called for each position `pos` >= from of a window, up to n_ctx - 2 (the
 * last position predicts nothing inside the window), with its logits. */
typedef pocketllm_status (*pl_window_row_fn)(void *user, int64_t chunk, int64_t pos, const float *logits);

/* Evaluate window `chunk` on s from an empty cache.  Positions before
 * `from` are evaluated without keeping logits unless keep_all (every row
 * then goes through every layer, as the importance matrix needs); logits
 * are kept for pieces of at most `piece` positions at a time, so memory
 * stays bounded for large vocabularies. */
pocketllm_status pl_window_eval(pocketllm_session *s, const pl_windows *w, int64_t chunk, int64_t from,
                                bool keep_all, int64_t piece, pl_window_row_fn fn, void *user);

/* ---- the importance-matrix collector (imatrix.c) --------------------------- */

typedef struct pl_imat pl_imat;

pocketllm_status pl_imat_new(bool process_output, pl_imat **out);
void pl_imat_free(pl_imat *im);
/* Watch (or stop watching, with NULL) the matrix multiplications of s,
 * the expert products of a mixture-of-experts model included. */
void pl_imat_attach(pl_imat *im, pocketllm_session *s);
/* The same on a compute instance itself (what pl_imat_attach does to the
 * session's; a test drives the observers directly through it). */
struct pl_compute;
void pl_imat_attach_compute(pl_imat *im, struct pl_compute *c);
/* Number of matrices seen, and one of them (index order is first use). */
size_t pl_imat_count(const pl_imat *im);
const char *pl_imat_entry(const pl_imat *im, size_t i, const float **sum2, int64_t *n_in, int64_t *count);
/* Rows of entry i: 1 for a dense matrix (sum2 holds n_in sums, count its
 * tokens), n_expert for an expert tensor (sum2 [n_expert][n_in], *counts
 * the (token, slot) rows routed to each expert; count above is expert 0's). */
int64_t pl_imat_entry_rows(const pl_imat *im, size_t i, const int64_t **counts);
/* Write llama.cpp's GGUF imatrix file. */
pocketllm_status pl_imat_write(const pl_imat *im, const char *path, const char *dataset, int64_t chunk_size);

/* ---- one scoring pass (perplexity.c) --------------------------------------- */

typedef struct pl_eval_opts {
    int64_t n_ctx, max_chunks;
    bool parse_special;
    uint32_t kv_type, kv_type_v; /* as pocketllm_session_params */
    int flash_attn;
    int n_threads;
    const char *save_path;
    int save_type;          /* POCKETLLM_LOGITS_* */
    const char *kl_path;
    pl_imat *imat;          /* collect the importance matrix during the pass, or NULL */
    pocketllm_eval_progress_fn progress;
    void *progress_user;
} pl_eval_opts;

pocketllm_status pl_eval_run(pocketllm_model *m, const char *text, size_t len, const pl_eval_opts *o,
                             pocketllm_perplexity_result *r);

#endif
