/*
 * mmproj_load.c -- the binding helpers both mmproj towers' loaders share
 * (see mmproj_load.h).  Matrices are never copied; vectors stored in
 * f16/bf16 are widened to f32, as the text loader does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vision/mmproj_load.h"

#include "backend/backend.h"
#include "backend/device.h"
#include "base/error.h"
#include "base/half.h"
#include "base/pages.h"
#include "quant/types.h"

void *pl_mmproj_const_alloc(pl_mmproj_loader *ld, size_t bytes) {
    /* on a device the copies are uploaded and must outlive the tower's
     * handle as long as the device keeps their addresses: the text model
     * owns them then */
    if (ld->text->device) return pl_model_const_alloc(ld->text, bytes);
    void **grown = realloc(*ld->consts, (*ld->n_consts + 1) * sizeof *grown);
    if (!grown) {
        pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    *ld->consts = grown;
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for %zu bytes", bytes);
        return NULL;
    }
    grown[(*ld->n_consts)++] = p;
    return p;
}

pocketllm_status pl_mmproj_get_int(const pl_mmproj_loader *ld, const char *key, bool required, uint64_t def,
                                   uint64_t lo, uint64_t hi, int64_t *out) {
    const pl_gguf *g = ld->gguf;
    if (required && !pl_gguf_get(g, key)) return pl_fail(POCKETLLM_ERR_FORMAT, "missing hyperparameter %s", key);
    uint64_t u;
    pocketllm_status st = pl_gguf_get_u64(g, key, def, &u);
    if (st) return st;
    if (u < lo || u > hi)
        return pl_fail(POCKETLLM_ERR_FORMAT, "%s = %llu is outside %llu..%llu", key, (unsigned long long)u,
                       (unsigned long long)lo, (unsigned long long)hi);
    *out = (int64_t)u;
    return POCKETLLM_OK;
}

bool pl_mmproj_get_bool(const pl_mmproj_loader *ld, const char *key) {
    uint64_t u = 0;
    return pl_gguf_get(ld->gguf, key) && !pl_gguf_get_u64(ld->gguf, key, 0, &u) && u != 0;
}

const pl_gguf_tensor *pl_mmproj_find(const pl_mmproj_loader *ld, const char *name) {
    return pl_gguf_tensor_by_name(ld->gguf, name);
}

pocketllm_status pl_mmproj_bind_rows(pl_mmproj_loader *ld, const pl_gguf_tensor *t, int64_t n_in, int64_t n_out,
                                     pl_weight *w) {
    if (!pl_cpu_supports(PL_OP_MUL_MAT, t->type))
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "tensor %s is %s, which this build cannot compute with (see 'pocketllm ops')",
                       t->name, pocketllm_type_name(t->type));
    uint64_t row;
    if (!pl_type_row_bytes(t->type, (uint64_t)n_in, &row) || row * (uint64_t)n_out != t->n_bytes)
        return pl_fail(POCKETLLM_ERR_FORMAT, "tensor %s: rows of %lld do not fit %s blocks", t->name, (long long)n_in,
                       pocketllm_type_name(t->type));
    *w = (pl_weight){.name = t->name, .data = t->data, .type = t->type, .n_in = n_in, .n_out = n_out, .row_bytes = (size_t)row};
    if (n_in > *ld->max_in) *ld->max_in = n_in;
    return POCKETLLM_OK;
}

pocketllm_status pl_mmproj_matrix(pl_mmproj_loader *ld, const char *name, int64_t n_in, int64_t n_out, pl_weight *w) {
    memset(w, 0, sizeof *w);
    const pl_gguf_tensor *t = pl_mmproj_find(ld, name);
    if (!t) return pl_fail(POCKETLLM_ERR_FORMAT, "tensor %s is missing", name);
    if (t->n_dims != 2 || t->ne[0] != n_in || (n_out >= 0 && t->ne[1] != n_out))
        return pl_fail(POCKETLLM_ERR_FORMAT, "tensor %s has shape [%lld, %lld, %lld], expected [%lld, %lld]", name,
                       (long long)t->ne[0], (long long)t->ne[1], (long long)t->ne[2], (long long)n_in,
                       (long long)(n_out >= 0 ? n_out : t->ne[1]));
    return pl_mmproj_bind_rows(ld, t, n_in, t->ne[1], w);
}

pocketllm_status pl_mmproj_f32_of(pl_mmproj_loader *ld, const pl_gguf_tensor *t, int64_t n, const float **out) {
    if (t->type == PL_TYPE_F32) {
        *out = (const float *)t->data;
        return POCKETLLM_OK;
    }
    float *f = pl_mmproj_const_alloc(ld, (size_t)n * sizeof *f);
    if (!f) return POCKETLLM_ERR_NO_MEMORY;
    const uint16_t *h = (const uint16_t *)t->data;
    for (int64_t i = 0; i < n; i++) f[i] = t->type == PL_TYPE_F16 ? pl_f16_to_f32(h[i]) : pl_bf16_to_f32(h[i]);
    *out = f;
    return POCKETLLM_OK;
}

pocketllm_status pl_mmproj_vector(pl_mmproj_loader *ld, const char *name, int64_t n, bool optional, const float **out) {
    *out = NULL;
    const pl_gguf_tensor *t = pl_mmproj_find(ld, name);
    if (!t) return optional ? POCKETLLM_OK : pl_fail(POCKETLLM_ERR_FORMAT, "tensor %s is missing", name);
    if (ld->vector_any_shape) {
        if (t->n_elements != (uint64_t)n)
            return pl_fail(POCKETLLM_ERR_FORMAT, "tensor %s has %llu elements, expected %lld", name,
                           (unsigned long long)t->n_elements, (long long)n);
    } else if (t->n_elements != (uint64_t)n || t->ne[0] != n)
        return pl_fail(POCKETLLM_ERR_FORMAT, "tensor %s has %llu elements (first dimension %lld), expected [%lld]", name,
                       (unsigned long long)t->n_elements, (long long)t->ne[0], (long long)n);
    if (t->type != PL_TYPE_F32 && t->type != PL_TYPE_F16 && t->type != PL_TYPE_BF16)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "tensor %s is %s; vectors must be f32, f16 or bf16", name,
                       pocketllm_type_name(t->type));
    return pl_mmproj_f32_of(ld, t, n, out);
}

pocketllm_status pl_mmproj_norm(pl_mmproj_loader *ld, const char *base, int64_t n, const float **w, const float **b) {
    char name[96];
    snprintf(name, sizeof name, "%s.weight", base);
    pocketllm_status st = pl_mmproj_vector(ld, name, n, true, w);
    snprintf(name, sizeof name, "%s.bias", base);
    return st ? st : pl_mmproj_vector(ld, name, n, true, b);
}

pocketllm_status pl_mmproj_linear(pl_mmproj_loader *ld, const char *base, int64_t n_in, int64_t n_out, bool bias_required,
                                  pl_weight *w, const float **b) {
    char name[96];
    snprintf(name, sizeof name, "%s.weight", base);
    pocketllm_status st = pl_mmproj_matrix(ld, name, n_in, n_out, w);
    snprintf(name, sizeof name, "%s.bias", base);
    return st ? st : pl_mmproj_vector(ld, name, w->n_out, !bias_required, b);
}

static int range_cmp(const void *a, const void *b) {
    const uintptr_t x = (uintptr_t)((const pl_upload_range *)a)->host, y = (uintptr_t)((const pl_upload_range *)b)->host;
    return x < y ? -1 : x > y;
}

pocketllm_status pl_mmproj_upload(pl_model *m, const pl_gguf *g, size_t first_const) {
    const size_t n_c = m->n_consts - first_const, n = (size_t)g->n_tensors + n_c;
    pl_upload_range *r = calloc(n ? n : 1, sizeof *r);
    if (!r) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    size_t k = 0;
    for (uint64_t i = 0; i < g->n_tensors; i++) {
        const pl_gguf_tensor *t = &g->tensors[i];
        if (t->n_bytes) r[k++] = (pl_upload_range){t->data, (size_t)t->n_bytes, t->name};
    }
    for (size_t i = first_const; i < m->n_consts; i++) r[k++] = (pl_upload_range){m->consts[i].p, m->consts[i].bytes, "a vector"};
    qsort(r, k, sizeof *r, range_cmp);
    pocketllm_status st = m->device->ops->upload(m->device, r, k, NULL, NULL);
    free(r);
    if (!st && g->mapped) pl_pages_drop(g->base + g->data_offset, (size_t)(g->size - g->data_offset));
    return st;
}

pocketllm_status pl_mmproj_compute_new(pl_model *m, pl_compute **out) {
    return m->device ? m->device->ops->compute_new(m->device, m->n_threads, out)
                     : pl_backend_find("cpu")->compute_new(m->n_threads, out);
}

void pl_mmproj_release(pl_model *text, pl_gguf *g, void **consts, size_t n_consts) {
    for (size_t i = 0; i < n_consts; i++) free(consts[i]);
    free(consts);
    if (g && text->device && g->mapped) pl_pages_drop(g->base + g->data_offset, (size_t)(g->size - g->data_offset));
    else pocketllm_gguf_close(g);
}
