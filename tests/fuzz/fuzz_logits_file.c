/*
 * fuzz_logits_file.c -- libFuzzer target for the saved log-probability
 * reader (pocketllm perplexity --kl-base): both layouts parsed from an
 * exact-size aligned copy, then every row read and, when it is accepted,
 * scored against a flat model row as a KL comparison would.  Seeds: a
 * tiny model's saved files in each layout (seeds/fuzz_logits_file.sh).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eval/logits_file.h"
#include "eval/logprob.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* malloc's alignment; exact size, so a read past the end is caught */
    uint8_t *copy = malloc(size ? size : 1);
    if (size) memcpy(copy, data, size);
    pl_lp_file f;
    if (pl_lp_parse(copy, size, "fuzz", &f) == POCKETLLM_OK) {
        float *lp = malloc((size_t)f.n_vocab * sizeof *lp);
        for (int64_t i = 0; i < f.n_vocab; i++) lp[i] = -1.0f;
        volatile double sink = 0;
        /* a bounded number of rows: a valid header may describe many */
        int64_t budget = 64;
        for (int64_t c = 0; c < f.n_chunk && budget > 0; c++)
            for (int64_t j = 0; j < f.rows_per_chunk && budget-- > 0; j++) {
                const void *row = pl_lp_row(&f, c, j);
                if (!row) continue;
                const int32_t tok = f.tokens[c * f.n_ctx + f.n_ctx / 2 + j + 1];
                pl_kl_row r;
                if (f.type == POCKETLLM_LOGITS_F32) pl_kl_row_f32(row, lp, f.n_vocab, tok, &r);
                else pl_kl_row_u16(row, lp, f.n_vocab, tok, &r);
                sink += r.kl + r.nll_base;
            }
        (void)sink;
        free(lp);
    }
    free(copy);
    return 0;
}
