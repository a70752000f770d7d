/*
 * logits_file.h -- a base model's log-probabilities saved for KL
 * divergence (pocketllm perplexity --save-logits / --kl-base): the f32
 * layout of our own, exact, and llama.cpp's 16-bit --kl-divergence-base
 * layout, byte for byte.  Both are described in pocketllm.h.  A file is
 * read through a read-only mapping and checked whole before use: header,
 * every token id, the exact size, and each row's scale when it is read.
 */
#ifndef PL_EVAL_LOGITS_FILE_H
#define PL_EVAL_LOGITS_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pocketllm.h"

#define PL_LP_MAGIC_F32 "PLLOGP32"
#define PL_LP_MAGIC_U16 "_logits_"
#define PL_LP_MAX_CTX (1 << 20)
#define PL_LP_MAX_VOCAB (1 << 24)

typedef struct pl_lp_file {
    int type;               /* POCKETLLM_LOGITS_F32 or POCKETLLM_LOGITS_U16 */
    int64_t n_ctx, n_vocab, n_chunk;
    int64_t rows_per_chunk; /* scored positions per window: n_ctx - 1 - n_ctx/2 */
    const int32_t *tokens;  /* n_chunk * n_ctx */
    const uint8_t *rows;
    size_t row_bytes;
    void *map;              /* the mapping, when opened from a file */
    size_t map_len;
} pl_lp_file;

/* Scored positions per window of n_ctx tokens (llama-perplexity's). */
static inline int64_t pl_lp_rows_per_chunk(int64_t n_ctx) { return n_ctx - 1 - n_ctx / 2; }

/* Check and view a file image (data must stay valid and be 4-byte
 * aligned); `name` prefixes messages. */
pocketllm_status pl_lp_parse(const void *data, size_t size, const char *name, pl_lp_file *f);
pocketllm_status pl_lp_open(const char *path, pl_lp_file *f);
void pl_lp_close(pl_lp_file *f);
/* Row j of window `chunk`: n_vocab floats (f32) or a u16 row; NULL (and a
 * message) when the row's values are not log-probabilities. */
const void *pl_lp_row(const pl_lp_file *f, int64_t chunk, int64_t j);

/* Writing: rows are given as logits and stored as the layout asks. */
typedef struct pl_lp_writer {
    FILE *f;
    char *path, *partial;
    int type;
    int64_t n_vocab;
    void *buf;              /* one encoded row */
    size_t row_bytes;
} pl_lp_writer;

pocketllm_status pl_lp_writer_open(pl_lp_writer *w, const char *path, int type, int64_t n_ctx, int64_t n_vocab,
                                   int64_t n_chunk, const int32_t *tokens);
pocketllm_status pl_lp_writer_row(pl_lp_writer *w, const float *logits);
/* Close and move into place; on failure nothing is left at the path. */
pocketllm_status pl_lp_writer_finish(pl_lp_writer *w);
/* Drop a partial file (safe after finish and on a zeroed writer). */
void pl_lp_writer_abort(pl_lp_writer *w);

#endif
