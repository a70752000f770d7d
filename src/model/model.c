/*
 * model.c -- open a checkpoint: map and validate the GGUF, load its
 * tokenizer, and (unless only the vocabulary is wanted) hand it to its
 * architecture to bind the weights; on a device, upload them there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/device.h"
#include "base/error.h"
#include "base/pages.h"
#include "grammar/grammar_vocab.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

pocketllm_model_params pocketllm_model_default_params(void) {
    pocketllm_model_params p = {.device = NULL, .vocab_only = 0, .n_threads = 0};
    return p;
}

void *pl_model_const_alloc(pl_model *m, size_t bytes) {
    pl_model_const *grown = realloc(m->consts, (m->n_consts + 1) * sizeof *grown);
    if (!grown) {
        pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    m->consts = grown;
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    m->consts[m->n_consts++] = (pl_model_const){p, bytes};
    return p;
}

static int range_cmp(const void *a, const void *b) {
    const uintptr_t x = (uintptr_t)((const pl_upload_range *)a)->host, y = (uintptr_t)((const pl_upload_range *)b)->host;
    return x < y ? -1 : x > y;
}

/* Every tensor's data and every const, to the device, in address order. */
static pocketllm_status upload_weights(pl_model *m, const pocketllm_model_params *p) {
    const size_t n = (size_t)m->gguf->n_tensors + m->n_consts;
    pl_upload_range *r = calloc(n ? n : 1, sizeof *r);
    if (!r) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    size_t k = 0;
    for (uint64_t i = 0; i < m->gguf->n_tensors; i++) {
        const pl_gguf_tensor *t = &m->gguf->tensors[i];
        if (t->n_bytes) r[k++] = (pl_upload_range){t->data, (size_t)t->n_bytes, t->name};
    }
    for (size_t i = 0; i < m->n_consts; i++) r[k++] = (pl_upload_range){m->consts[i].p, m->consts[i].bytes, "a vector"};
    qsort(r, k, sizeof *r, range_cmp);
    pocketllm_status st = m->device->ops->upload(m->device, r, k, p->progress, p->progress_user);
    free(r);
    /* the host copy of the tensors is not needed any more (a host read,
     * e.g. rope's frequency factors, pages it back in from the file) */
    if (!st && m->gguf->mapped)
        pl_pages_drop(m->gguf->base + m->gguf->data_offset, (size_t)(m->gguf->size - m->gguf->data_offset));
    return st;
}

pocketllm_status pocketllm_model_open(const char *path, const pocketllm_model_params *params, pocketllm_model **out) {
    if (!path || !out) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "model_open: no path");
    *out = NULL;
    pocketllm_model_params p = params ? *params : pocketllm_model_default_params();
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
        if (p.device && strcmp(p.device, "cpu") != 0) {
            if ((st = pl_device_open(p.device, p.device_memory, &m->device))) goto fail;
            if ((st = upload_weights(m, &p))) {
                pl_error_prefix(path);
                goto fail;
            }
        }
    } else if (p.device && strcmp(p.device, "cpu") != 0 && strncmp(p.device, "vulkan", 6) != 0) {
        st = pl_fail(POCKETLLM_ERR_UNSUPPORTED, "device '%s' is not implemented in this build (see 'pocketllm backends')",
                     p.device);
        goto fail;
    }
    *out = m;
    return POCKETLLM_OK;
fail:
    pocketllm_model_close(m);
    return st;
}

void pocketllm_model_close(pocketllm_model *m) {
    if (!m) return;
    if (m->device) m->device->ops->close(m->device);
    if (m->arch && m->arch->unload) m->arch->unload(m);
    for (size_t i = 0; i < m->n_consts; i++) free(m->consts[i].p);
    free(m->consts);
    pl_gvocab_free(m->gvocab);
    pl_vocab_free(m->vocab);
    pocketllm_gguf_close(m->gguf);
    free(m);
}

const char *pocketllm_model_device(const pocketllm_model *m, uint64_t *used, uint64_t *budget) {
    if (used) *used = m && m->device ? m->device->memory_used : 0;
    if (budget) *budget = m && m->device ? m->device->memory : 0;
    return m && m->device ? m->device->name : "cpu";
}

const char *pocketllm_model_arch(const pocketllm_model *m) { return m ? m->arch_name : ""; }

int32_t pocketllm_model_n_vocab(const pocketllm_model *m) { return m && m->vocab ? pl_vocab_n_tokens(m->vocab) : 0; }
