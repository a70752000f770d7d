/*
 * pl_tinymodel.c -- write a small random-weight llama / qwen2 / qwen3 /
 * qwen2moe / qwen3moe checkpoint (tests/common/tiny_model.h) for the shell tests, e.g. a qwen2
 * with Q/K/V biases, which `pocketllm synth` does not make:
 *
 *   pl_tinymodel OUT [--arch A] [--type f32|f16|bf16|q8_0] [--tied] [--qkv-bias]
 *                [--n-embd N] [--n-layer N] [--n-head N] [--n-head-kv N] [--head-dim N]
 *                [--n-ff N] [--n-rot N] [--n-vocab N] [--rope-freqs] [--seed S] [--vocab-from GGUF]
 *                [--n-expert N] [--n-expert-used N] [--n-ff-exp N] [--n-ff-shexp N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/tiny_model.h"

int main(int argc, char **argv) {
    tiny_model_spec s = tiny_model_default();
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int64_t *dim = NULL;
        if (!strcmp(a, "--tied")) s.tied = true;
        else if (!strcmp(a, "--qkv-bias")) s.qkv_bias = true;
        else if (!strcmp(a, "--rope-freqs")) s.rope_freqs = true;
        else if (a[0] != '-') out = a;
        else if (!v) {
            fprintf(stderr, "pl_tinymodel: %s needs a value\n", a);
            return 2;
        } else if (!strcmp(a, "--arch")) s.arch = v, i++;
        else if (!strcmp(a, "--vocab-from")) s.vocab_from = v, i++;
        else if (!strcmp(a, "--seed")) s.seed = strtoull(v, NULL, 10), i++;
        else if (!strcmp(a, "--type")) {
            int32_t t = pocketllm_type_from_name(v);
            if (t < 0) {
                fprintf(stderr, "pl_tinymodel: unknown type %s\n", v);
                return 2;
            }
            s.type = (uint32_t)t, i++;
        } else if (!strcmp(a, "--n-embd")) dim = &s.n_embd;
        else if (!strcmp(a, "--n-layer")) dim = &s.n_layer;
        else if (!strcmp(a, "--n-head")) dim = &s.n_head;
        else if (!strcmp(a, "--n-head-kv")) dim = &s.n_head_kv;
        else if (!strcmp(a, "--head-dim")) dim = &s.head_dim;
        else if (!strcmp(a, "--n-ff")) dim = &s.n_ff;
        else if (!strcmp(a, "--n-rot")) dim = &s.n_rot;
        else if (!strcmp(a, "--n-vocab")) dim = &s.n_vocab;
        else if (!strcmp(a, "--n-expert")) dim = &s.n_expert;
        else if (!strcmp(a, "--n-expert-used")) dim = &s.n_expert_used;
        else if (!strcmp(a, "--n-ff-exp")) dim = &s.n_ff_exp;
        else if (!strcmp(a, "--n-ff-shexp")) dim = &s.n_ff_shexp;
        else {
            fprintf(stderr, "pl_tinymodel: unknown option %s\n", a);
            return 2;
        }
        if (dim) {
            *dim = strtoll(v, NULL, 10);
            i++;
        }
    }
    if (!out) {
        fprintf(stderr, "usage: see the top of tests/tools/pl_tinymodel.c\n");
        return 2;
    }
    pocketllm_status st = tiny_model_write(&s, out);
    if (st) {
        fprintf(stderr, "pl_tinymodel: %s: %s\n", pocketllm_status_string(st), pocketllm_last_error());
        return 1;
    }
    return 0;
}
