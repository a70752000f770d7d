/*
 * model.c -- open a checkpoint: map and validate the GGUF, load its
 * tokenizer, and (unless only the vocabulary is wanted) hand it to its
 * architecture to bind the weights.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

pocketllm_model_params pocketllm_model_default_params(void) {
    pocketllm_model_params p = {.device = NULL, .vocab_only = 0, .n_threads = 0};
    return p;
}

pocketllm_status pocketllm_model_open(const char *path, const pocketllm_model_params *params, pocketllm_model **out) {
    if (!path || !out) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "model_open: no path");
    *out = NULL;
    pocketllm_model_params p = params ? *params : pocketllm_model_default_params();
    if (p.device && strcmp(p.device, "cpu") != 0)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "device '%s' is not implemented in this build (see 'pocketllm backends')",
                       p.device);
    pl_model *m = calloc(1, sizeof *m);
    if (!m) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    m->n_threads = p.n_threads;
    pocketllm_status st = pocketllm_gguf_open(path, &m->gguf);
    if (st) goto fail;
    const char *arch = pl_gguf_get_str(m->gguf, "general.architecture");
    if (arch) snprintf(m->arch_name, sizeof m->arch_name, "%s", arch);
    if ((st = pl_vocab_load(m->gguf, &m->vocab))) {
        pl_error_prefix(path);
        goto fail;
    }
    bool has_weights = m->gguf->n_tensors > 0;
    if (!p.vocab_only && has_weights) {
        m->arch = pl_arch_find(m->arch_name);
        if (!m->arch) {
            st = pl_fail(POCKETLLM_ERR_UNSUPPORTED, "%s: architecture '%s' is not supported (see 'pocketllm architectures')",
                         path, m->arch_name[0] ? m->arch_name : "(none)");
            goto fail;
        }
        if ((st = m->arch->load(m))) {
            pl_error_prefix(path);
            goto fail;
        }
    }
    *out = m;
    return POCKETLLM_OK;
fail:
    pocketllm_model_close(m);
    return st;
}

void pocketllm_model_close(pocketllm_model *m) {
    if (!m) return;
    if (m->arch && m->arch->unload) m->arch->unload(m);
    pl_vocab_free(m->vocab);
    pocketllm_gguf_close(m->gguf);
    free(m);
}

const char *pocketllm_model_arch(const pocketllm_model *m) { return m ? m->arch_name : ""; }

int32_t pocketllm_model_n_vocab(const pocketllm_model *m) { return m && m->vocab ? pl_vocab_n_tokens(m->vocab) : 0; }
