/*
 * fuzz_model.c -- libFuzzer target for model loading: arbitrary bytes are
 * opened as a checkpoint (hyperparameters, tensor shapes and types checked
 * by the architecture's loader), and a model that loads evaluates a few
 * tokens.  Opening goes through a file because that is the only way the
 * public API opens a model.  Seeds: tiny llama / qwen2 / qwen3 / qwen3moe / qwen2moe files
 * written by tests/tools/pl_tinymodel (tests/fuzz/seeds/fuzz_model.sh).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "pocketllm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static char path[64];
    if (!path[0]) snprintf(path, sizeof path, "/tmp/pl_fuzz_model.%d.gguf", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    if (size) fwrite(data, 1, size, f);
    fclose(f);
    pocketllm_model_params mp = pocketllm_model_default_params();
    mp.n_threads = 1;
    pocketllm_model *m = NULL;
    if (pocketllm_model_open(path, &mp, &m) == POCKETLLM_OK) {
        pocketllm_session_params sp = pocketllm_session_default_params();
        sp.n_ctx = 8;
        sp.kv_type = size % 2; /* f32 or f16 */
        pocketllm_session *s = NULL;
        if (pocketllm_session_new(m, &sp, &s) == POCKETLLM_OK) {
            const int32_t nv = pocketllm_session_n_vocab(s);
            int32_t ids[3] = {0, (int32_t)(size % (size_t)nv), nv - 1};
            if (pocketllm_session_eval(s, ids, 3, 1) == POCKETLLM_OK) {
                volatile float sink = pocketllm_session_logits(s, 2)[nv - 1];
                (void)sink;
            }
            pocketllm_session_free(s);
        }
        pocketllm_model_close(m);
    }
    remove(path);
    return 0;
}
