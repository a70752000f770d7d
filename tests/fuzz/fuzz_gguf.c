/*
 * fuzz_gguf.c -- libFuzzer target for the GGUF reader: parse arbitrary
 * bytes, then walk every key, value (nested arrays included) and tensor a
 * caller could reach.  Seeds: the files tests/tools/pl_mkbad writes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gguf/gguf.h"

static void walk(const pocketllm_gguf_value *v, volatile uint64_t *sink) {
    uint64_t u;
    double d;
    if (pocketllm_gguf_value_u64(v, &u) == POCKETLLM_OK) *sink += u;
    if (pocketllm_gguf_value_f64(v, &d) == POCKETLLM_OK) *sink += (uint64_t)(d == d);
    uint64_t len = 0;
    const char *s = pocketllm_gguf_value_str(v, &len);
    if (s && len) *sink += (uint8_t)s[len - 1];
    uint64_t n = pocketllm_gguf_array_len(v);
    for (uint64_t i = 0; i < n; i++) walk(pocketllm_gguf_array_get(v, i), sink);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* an exact-size copy, so reading one byte past the end is caught */
    uint8_t *copy = malloc(size ? size : 1);
    if (size) memcpy(copy, data, size);
    pl_gguf *g = NULL;
    if (pl_gguf_open_memory(size ? copy : NULL, size, "fuzz", &g) == POCKETLLM_OK) {
        volatile uint64_t sink = 0;
        for (uint64_t i = 0; i < pocketllm_gguf_kv_count(g); i++) {
            sink += strlen(pocketllm_gguf_kv_key(g, i));
            walk(pocketllm_gguf_kv_value(g, i), &sink);
            (void)pl_gguf_get(g, pocketllm_gguf_kv_key(g, i));
        }
        for (uint64_t i = 0; i < pocketllm_gguf_tensor_count(g); i++) {
            pocketllm_tensor_info t;
            pocketllm_gguf_tensor(g, i, &t);
            if (t.n_bytes) sink += ((const uint8_t *)t.data)[0] + ((const uint8_t *)t.data)[t.n_bytes - 1];
            (void)pocketllm_gguf_find_tensor(g, t.name);
        }
        pocketllm_gguf_close(g);
    }
    free(copy);
    return 0;
}
