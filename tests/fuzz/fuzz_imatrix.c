/*
 * fuzz_imatrix.c -- libFuzzer target for the importance-matrix reader
 * (both formats: GGUF and the legacy .dat), then every entry a quantizer
 * could reach looked up and read end to end.  Seeds: a small model's
 * imatrix in each format (tests/fuzz/seeds/fuzz_imatrix.sh).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "quantize/imatrix.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* an exact-size copy, so reading one byte past the end is caught */
    uint8_t *copy = malloc(size ? size : 1);
    if (size) memcpy(copy, data, size);
    pl_imatrix im;
    if (pl_imatrix_parse(copy, size, "fuzz", &im) == POCKETLLM_OK) {
        volatile float sink = 0;
        for (uint64_t i = 0; i < im.n_entries; i++) {
            const pl_imatrix_entry *e = pl_imatrix_find(&im, im.entries[i].name);
            if (e && e->n) sink += e->values[0] + e->values[e->n - 1];
        }
        (void)sink;
        pl_imatrix_free(&im);
    }
    free(copy);
    return 0;
}
