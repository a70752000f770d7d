/*
 * plan.c -- decide everything about a quantization run before writing:
 * model facts, tensor order, each tensor's type (recipe.c), importance
 * weights, and the refusals llama.cpp makes (no imatrix for a type that
 * needs one, an imatrix of the wrong size, requantizing) plus ours (a type
 * this build cannot encode yet, an imatrix that matches nothing).
 */
#include "quantize/plan.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/error.h"
#include "quant/types.h"

/* An integer key that may also be a per-layer array (llama.cpp's
 * get_key_or_arr): the scalar, or the array's first element. */
static pocketllm_status key_u32(const pl_gguf *g, const char *key, uint32_t def, uint32_t *out) {
    const pocketllm_gguf_value *v = pl_gguf_get(g, key);
    *out = def;
    if (!v) return POCKETLLM_OK;
    uint64_t u = 0;
    if (v->type == POCKETLLM_GGUF_ARRAY) {
        if (v->n == 0 || !v->raw || pl_gguf_type_size(v->elem_type) == 0 ||
            pl_gguf_scalar_u64(v->elem_type, v->raw, &u))
            return pl_fail(POCKETLLM_ERR_FORMAT, "%s: %s is not an array of counts", g->path, key);
    } else if (pl_gguf_scalar_u64(v->type, v->raw, &u)) {
        return pl_fail(POCKETLLM_ERR_FORMAT, "%s: %s is not a count", g->path, key);
    }
    if (u > UINT32_MAX) return pl_fail(POCKETLLM_ERR_FORMAT, "%s: %s = %" PRIu64 " is out of range", g->path, key, u);
    *out = (uint32_t)u;
    return POCKETLLM_OK;
}

pocketllm_status pl_quant_model_facts(const pl_gguf *g, pl_recipe_model *m) {
    memset(m, 0, sizeof *m);
    const char *arch = pl_gguf_get_str(g, "general.architecture");
    if (!arch || !*arch)
        return pl_fail(POCKETLLM_ERR_FORMAT, "%s is not a model checkpoint: it has no general.architecture", g->path);
    if (g->n_tensors == 0)
        return pl_fail(POCKETLLM_ERR_FORMAT, "%s is not a model checkpoint: it holds no tensors (a vocabulary-only file?)",
                       g->path);
    char key[192];
    uint32_t n_layer, nextn, n_head, n_head_kv, n_split;
    pocketllm_status st;
    /* one file of a split model holds only some tensors */
    if ((st = key_u32(g, "split.count", 1, &n_split))) return st;
    if (n_split > 1)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "%s is one of %u files of a split model; merge them first "
                       "(llama-gguf-split --merge)", g->path, n_split);
    /* An mmproj (vision tower) file.  llama.cpp v0.4.0 quantizes these with
     * llama-quantize itself (its "clip" architecture is a quantize-only
     * stub, src/models/clip.cpp): the hyperparameters are not read
     * (llama_model_base::load_hparams returns early for LLM_ARCH_CLIP), so
     * the rule runs with zero layers, no experts and no GQA, and
     * tensor_allows_quantization keeps the patch embedding, the position
     * table, norms and biases.  The same facts here give the same file. */
    if (strcmp(arch, "clip") == 0) return POCKETLLM_OK;
    snprintf(key, sizeof key, "%s.block_count", arch);
    if (!pl_gguf_get(g, key))
        return pl_fail(POCKETLLM_ERR_FORMAT, "%s is not a model checkpoint: it has no %s", g->path, key);
    if ((st = key_u32(g, key, 0, &n_layer))) return st;
    if (n_layer < 1 || n_layer > 512) /* llama.cpp's LLAMA_MAX_LAYERS */
        return pl_fail(POCKETLLM_ERR_FORMAT, "%s: %s = %u is out of range (1..512)", g->path, key, n_layer);
    snprintf(key, sizeof key, "%s.nextn_predict_layers", arch);
    if ((st = key_u32(g, key, 0, &nextn))) return st;
    if (nextn > n_layer) return pl_fail(POCKETLLM_ERR_FORMAT, "%s: %s exceeds the block count", g->path, key);
    snprintf(key, sizeof key, "%s.attention.head_count", arch);
    if ((st = key_u32(g, key, 0, &n_head))) return st;
    snprintf(key, sizeof key, "%s.attention.head_count_kv", arch);
    if ((st = key_u32(g, key, n_head, &n_head_kv))) return st;
    snprintf(key, sizeof key, "%s.expert_count", arch);
    if ((st = key_u32(g, key, 0, &m->n_expert))) return st;
    if ((st = pl_quant_check_experts(g, arch, m))) return st;

    m->n_layer = n_layer;
    m->n_gqa = n_head_kv ? n_head / n_head_kv : 0;
    m->falcon = strcmp(arch, "falcon") == 0;
    m->bailingmoe3 = strcmp(arch, "bailingmoe3") == 0;
    /* llama.cpp's LLM_TYPE_70B (only it changes a choice): per
     * architecture, by the depth without next-token-prediction layers */
    uint32_t depth = n_layer - nextn;
    if (strcmp(arch, "llama") == 0) m->is_70b = m->n_expert != 8 && depth == 80 && n_head != n_head_kv;
    else if (!strcmp(arch, "qwen2") || !strcmp(arch, "deci") || !strcmp(arch, "olmo")) m->is_70b = depth == 80;
    else if (strcmp(arch, "jais2") == 0) m->is_70b = depth == 68;
    return POCKETLLM_OK;
}

void pl_quant_plan_free(pl_quant_plan *plan) {
    free(plan->items);
    memset(plan, 0, sizeof *plan);
}

static int cmp_items(const void *a, const void *b) {
    return pl_recipe_order_cmp(((const pl_quant_item *)a)->t->name, ((const pl_quant_item *)b)->t->name);
}

static bool is_token_embd(const char *name) {
    return strcmp(name, "token_embd.weight") == 0 || strcmp(name, "per_layer_token_embd.weight") == 0;
}

/* Can this build turn `from` rows into `to` rows and check them? */
static pocketllm_status check_codec(const char *name, uint32_t from, uint32_t to, const pl_recipe *r) {
    const pl_type_traits *f = pl_type_get(from), *t = pl_type_get(to);
    if (!f->to_float)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "quantize: cannot convert %s from %s (no decoder for %s)", name,
                       f->name, f->name);
    if (!t->from_float || !t->to_float)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED,
                       "quantize: %s needs type %s for %s, which this build cannot encode yet", r->name, t->name,
                       name);
    return POCKETLLM_OK;
}

/* The importance weights of one tensor that is being quantized, applying
 * llama.cpp's rules; *found says whether the imatrix had an entry. */
static pocketllm_status imatrix_for(const pl_quant_options *o, const pl_quant_item *it, uint32_t ftype,
                                    const float **out, bool *found) {
    const pl_gguf_tensor *t = it->t;
    *out = NULL;
    *found = false;
    if (o->imatrix) {
        const pl_imatrix_entry *e = pl_imatrix_find(o->imatrix, t->name);
        if (e) {
            *found = true;
            uint64_t want = (uint64_t)t->ne[0] * (uint64_t)t->ne[2];
            if (e->n == want) *out = e->values;
            /* token_embd is never a matmul input; llama.cpp lets a stray
             * entry for it pass */
            else if (!is_token_embd(t->name))
                return pl_fail(POCKETLLM_ERR_FORMAT,
                               "%s: imatrix size %" PRIu64 " is different from tensor size %" PRIu64
                               " for %s (%s)",
                               o->imatrix_path, e->n, want, t->name,
                               t->ne[2] > 1 ? "expert rows of another model?" : "an imatrix of another model?");
            /* ours: rows that do not line up with the experts (llama.cpp
             * would weigh each expert with a mix of columns); one row for
             * every expert is llama.cpp's broadcast of an old file */
            if (*out && e->rows > 1 && e->rows != (uint64_t)t->ne[2])
                return pl_fail(POCKETLLM_ERR_FORMAT,
                               "%s: the importance data of %s has %" PRIu64 " rows of counts, the tensor %" PRId64
                               " expert%s",
                               o->imatrix_path, t->name, e->rows, t->ne[2], t->ne[2] == 1 ? "" : "s");
        }
        if (!*out && pl_recipe_requires_imatrix(t->name, it->to, ftype))
            return pl_fail(POCKETLLM_ERR_UNSUPPORTED,
                           "%s: no importance data for %s, which %s quantizes to %s (unusable without it)",
                           o->imatrix_path, t->name, o->recipe->name, pl_type_get(it->to)->name);
    }
    if (!*out && pl_type_get(it->to)->requires_imatrix)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED,
                       "quantize: %s would be %s, which cannot be made without importance data%s", t->name,
                       pl_type_get(it->to)->name, o->imatrix ? " and the imatrix has none for it" : " (give --imatrix)");
    return POCKETLLM_OK;
}

pocketllm_status pl_quant_plan_make(const pl_gguf *g, const pl_quant_options *o, pl_quant_plan *plan) {
    memset(plan, 0, sizeof *plan);
    pl_recipe_model m;
    pocketllm_status st = pl_quant_model_facts(g, &m);
    if (st) return st;
    const pl_recipe *r = o->recipe;
    plan->recipe = r;
    plan->n_items = g->n_tensors;
    const char **names = NULL;
    if (!(plan->items = calloc((size_t)g->n_tensors, sizeof *plan->items)) ||
        !(names = calloc((size_t)g->n_tensors, sizeof *names))) {
        free(names);
        pl_quant_plan_free(plan);
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "quantize: out of memory");
    }
    for (uint64_t i = 0; i < g->n_tensors; i++) plan->items[i].t = &g->tensors[i];
    qsort(plan->items, (size_t)plan->n_items, sizeof *plan->items, cmp_items);
    for (uint64_t i = 0; i < plan->n_items; i++) names[i] = plan->items[i].t->name;
    pl_recipe_begin(&plan->rs, &m, r, o->pure, !o->leave_output, o->imatrix != NULL, names, plan->n_items);
    free(names);

    bool any_found = false, any_quantized = false;
    for (uint64_t i = 0; i < plan->n_items && !st; i++) {
        pl_quant_item *it = &plan->items[i];
        const pl_gguf_tensor *t = it->t;
        /* written as ggml counts them (llama.cpp drops trailing extents of
         * 1), but an extent of 0 is kept: without it the header would
         * promise data the tensor does not have */
        it->n_dims = pl_recipe_n_dims(t->ne);
        for (uint32_t d = it->n_dims; d < 4; d++)
            if (t->ne[d] == 0) it->n_dims = d + 1;
        if ((st = pl_recipe_choose(&plan->rs, t->name, t->type, t->ne, &it->to))) break;
        bool allowed = pl_recipe_allows_quantization(&plan->rs, t->name, t->ne);
        /* without any imatrix llama.cpp refuses up front, whatever the
         * tensor's current type */
        if (!o->imatrix && allowed && pl_recipe_requires_imatrix(t->name, it->to, r->ftype)) {
            st = pl_fail(POCKETLLM_ERR_UNSUPPORTED,
                         "quantize: %s needs an importance matrix (--imatrix): %s would be %s, which is unusable "
                         "without one",
                         r->name, t->name, pl_type_get(it->to)->name);
            break;
        }
        uint64_t out_bytes;
        if (!pl_type_row_bytes(it->to, t->n_elements, &out_bytes)) {
            st = pl_fail(POCKETLLM_ERR_INTERNAL, "quantize: %s: %s rows do not fit", t->name, pl_type_get(it->to)->name);
            break;
        }
        if (!pl_add_u64(plan->bytes_out, out_bytes, &plan->bytes_out) ||
            !pl_add_u64(plan->bytes_in, t->n_bytes, &plan->bytes_in)) {
            st = pl_fail(POCKETLLM_ERR_FORMAT, "quantize: tensor sizes overflow");
            break;
        }
        if (it->to == t->type) continue; /* copied as it is */
        if (pl_type_get(t->type)->quantized && !o->allow_requantize) {
            st = pl_fail(POCKETLLM_ERR_UNSUPPORTED,
                         "quantize: %s is already %s; requantizing it to %s loses quality and is refused without "
                         "--allow-requantize (as llama-quantize does)",
                         t->name, pl_type_get(t->type)->name, pl_type_get(it->to)->name);
            break;
        }
        if (t->ne[3] > 1) { /* llama.cpp converts only ne[1] * ne[2] rows of these */
            st = pl_fail(POCKETLLM_ERR_UNSUPPORTED, "quantize: %s is 4-D; only matrices and stacks of them are "
                         "quantized", t->name);
            break;
        }
        /* llama.cpp's refusals first: they do not depend on this build */
        bool found;
        if ((st = imatrix_for(o, it, r->ftype, &it->imatrix, &found))) break;
        if (!o->dry_run && (st = check_codec(t->name, t->type, it->to, r))) break;
        any_found |= found;
        any_quantized = true;
    }
    if (!st && o->imatrix && any_quantized && !any_found)
        st = pl_fail(POCKETLLM_ERR_FORMAT, "%s: the imatrix has no entry for any tensor of this model (another model's?)",
                     o->imatrix_path);
    if (st) pl_quant_plan_free(plan);
    return st;
}
