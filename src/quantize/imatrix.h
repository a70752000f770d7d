/*
 * imatrix.h -- importance matrices as llama.cpp's quantizer reads them: per
 * weight matrix, the mean square of each input column's activations, which
 * the low-bit quantizers use to spend their precision where it counts.
 *
 * Two file formats, both read as llama.cpp v0.4.0 reads them
 * (common/imatrix-loader.cpp, tools/quantize/quantize.cpp load_imatrix):
 *  - GGUF: for each matrix "<name>.in_sum2" (sums of squares, f32, one row
 *    per expert) and "<name>.counts" (f32, the number of activations summed
 *    per expert), plus the keys imatrix.datasets, imatrix.chunk_count and
 *    imatrix.chunk_size.  Values are sum / round(count), or 1 where the
 *    count is 0.
 *  - the legacy binary ".dat" format (anything that is not GGUF): i32 entry
 *    count; per entry i32 name length, name, i32 call count, i32 value
 *    count, f32 values; optionally i32 chunk count, i32 length, dataset
 *    name.  Values are value / calls (as stored when calls <= 0).
 * Every length and count is checked against the data.
 */
#ifndef PL_QUANTIZE_IMATRIX_H
#define PL_QUANTIZE_IMATRIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/strmap.h"
#include "pocketllm.h"

typedef struct pl_imatrix_entry {
    const char *name;  /* the weight's tensor name */
    float *values;     /* n importance weights: ne0 per expert, experts one after another */
    uint64_t n;
    uint64_t rows;     /* GGUF: the rows of counts (1, or one per expert); legacy: 0 (not recorded) */
} pl_imatrix_entry;

typedef struct pl_imatrix {
    pl_imatrix_entry *entries;
    uint64_t n_entries;
    const char *dataset;   /* the first dataset named in the file, or NULL */
    int64_t chunk_count;   /* chunks the statistics were collected over (0: unknown) */
    bool legacy;
    pl_strmap index;       /* name -> entry */
    pl_arena arena;
} pl_imatrix;

/* Parse an imatrix held in memory; `name` prefixes error messages.  On
 * success *out owns its data (pl_imatrix_free); the input can go. */
pocketllm_status pl_imatrix_parse(const void *data, size_t size, const char *name, pl_imatrix *out);
/* Read and parse a file. */
pocketllm_status pl_imatrix_load(const char *path, pl_imatrix *out);
void pl_imatrix_free(pl_imatrix *im);

/* The entry for a tensor, or NULL. */
const pl_imatrix_entry *pl_imatrix_find(const pl_imatrix *im, const char *tensor);

#endif
