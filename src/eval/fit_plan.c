/*
 * fit_plan.c -- a rung computed instead of made (`fit --plan`): its file's
 * bytes exactly as pocketllm_quantize would write them, from the
 * quantizer's own rule (quantize/recipe.c) run over the source's tensor
 * table: the header (the source's keys less those quantize drops or sets,
 * the keys it sets, one entry per tensor) and every tensor at its planned
 * type, each padded to the alignment.  No tensor data is read, so a 60 GB
 * source is planned in milliseconds.
 *
 * The table can also be the source's with its layers repeated to another
 * depth (plan_layers): a file cut to a few layers of a model answers for
 * the whole model, since the rule depends on the tensors' names, shapes
 * and the layer count, not on their values.  The heap of such a plan is
 * the source's measured heap plus what the added layers allocate: their
 * KV cache and session pointers (the engine's sizes) and their entries in
 * the tensor table (from the table's structures).  The allocator's own
 * rounding of those buffers is not modelled: for Qwen3-30B-A3B computed
 * from one layer that is 16 KiB a layer, 0.13% of the heap measured on
 * the 48-layer file (the files' bytes are equal to the byte).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/error.h"
#include "base/strmap.h"
#include "eval/fit_run.h"
#include "quant/kv_types.h"
#include "quant/types.h"
#include "runtime/kv_cache.h"
#include "quantize/plan.h"
#include "quantize/recipe.h"

/* llama-quantize keeps 127 bytes of a string it records. */
#define QUANTIZE_STR_MAX 127

/* One tensor of the planned table. */
typedef struct vtensor {
    char name[PL_GGUF_MAX_NAME + 16]; /* room for a deeper layer number */
    uint32_t type, n_dims;
    int64_t ne[PL_GGUF_MAX_DIMS];
    uint64_t n_elements;
} vtensor;

/* The layer of a "blk.N." tensor and where its suffix starts, or -1. */
static long layer_of(const char *name, const char **suffix) {
    if (strncmp(name, "blk.", 4) != 0) return -1;
    char *end;
    long l = strtol(name + 4, &end, 10);
    if (end == name + 4 || *end != '.' || l < 0) return -1;
    *suffix = end + 1;
    return l;
}

pocketllm_status pl_fit_plan_layers(pl_fit_run *F) {
    const pl_gguf *g = F->src;
    pl_recipe_model m;
    pocketllm_status st = pl_quant_model_facts(g, &m);
    if (st) return st;
    F->n_layer = m.n_layer;
    F->layers = F->p->plan_layers ? F->p->plan_layers : m.n_layer;
    if (F->layers <= F->n_layer) return POCKETLLM_OK;
    /* layers are repeated from blk.0: every other layer must hold what it
     * holds, at the same shapes (their types may differ: a recipe mixes
     * them by layer, and the rungs are planned from the shapes) */
    uint64_t *count = calloc(F->n_layer, sizeof *count);
    if (!count) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    for (uint64_t i = 0; i < g->n_tensors && !st; i++) {
        const pl_gguf_tensor *t = &g->tensors[i];
        const char *suffix;
        const long l = layer_of(t->name, &suffix);
        if (l < 0 || l >= (long)F->n_layer) continue;
        count[l]++;
        char name[128];
        snprintf(name, sizeof name, "blk.0.%s", suffix);
        const pl_gguf_tensor *t0 = pl_gguf_tensor_by_name(g, name);
        if (!t0 || memcmp(t0->ne, t->ne, sizeof t->ne) != 0)
            st = pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "fit: %s cannot stand for %u layers: its layers differ (%s "
                         "has no like in layer 0)", g->path, F->layers, t->name);
    }
    for (uint32_t l = 1; l < F->n_layer && !st; l++)
        if (count[l] != count[0])
            st = pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "fit: %s cannot stand for %u layers: its layers differ "
                         "(layer %u holds %llu tensors, layer 0 %llu)", g->path, F->layers, l,
                         (unsigned long long)count[l], (unsigned long long)count[0]);
    if (!st && !count[0])
        st = pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "fit: %s has no tensors named blk.0.*: its layers cannot be "
                     "repeated", g->path);
    free(count);
    return st;
}

/* The table at `layers` layers: the source's tensors of the layers kept,
 * and blk.0's again for each layer added. */
static pocketllm_status table(const pl_fit_run *F, uint32_t layers, vtensor **out, uint64_t *n_out) {
    const pl_gguf *g = F->src;
    const uint32_t added = layers > F->n_layer ? layers - F->n_layer : 0;
    uint64_t n = 0;
    for (uint64_t i = 0; i < g->n_tensors; i++) {
        const char *suffix;
        const long l = layer_of(g->tensors[i].name, &suffix);
        if (l < (long)layers) n += 1 + (l == 0 ? added : 0);
    }
    vtensor *v = calloc(n ? n : 1, sizeof *v);
    if (!v) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    uint64_t k = 0;
    for (uint64_t i = 0; i < g->n_tensors; i++) {
        const pl_gguf_tensor *t = &g->tensors[i];
        const char *suffix;
        const long l = layer_of(t->name, &suffix);
        if (l >= (long)layers) continue;
        for (uint32_t rep = 0; rep <= (l == 0 ? added : 0); rep++) {
            vtensor *x = &v[k++];
            if (rep == 0) snprintf(x->name, sizeof x->name, "%s", t->name);
            else snprintf(x->name, sizeof x->name, "blk.%u.%s", F->n_layer + rep - 1, suffix);
            x->type = t->type;
            x->n_dims = t->n_dims;
            memcpy(x->ne, t->ne, sizeof x->ne);
            x->n_elements = t->n_elements;
        }
    }
    *out = v;
    *n_out = k;
    return POCKETLLM_OK;
}

static int by_llama_order(const void *a, const void *b) {
    return pl_recipe_order_cmp(((const vtensor *)a)->name, ((const vtensor *)b)->name);
}

/* Give every tensor its type under recipe r, in llama.cpp's order (the
 * rule counts attn_v and ffn_down tensors as it meets them). */
static pocketllm_status choose(const pl_fit_run *F, const pl_recipe *r, uint32_t layers, bool has_imatrix, vtensor *v,
                               uint64_t n, bool *needs_imatrix) {
    pl_recipe_model m;
    pocketllm_status st = pl_quant_model_facts(F->src, &m);
    if (st) return st;
    /* only the depth differs from the source's facts (the 70B flag of a few
     * dense architectures also reads it: it stays the source's) */
    m.n_layer = layers;
    const char **names = calloc(n ? n : 1, sizeof *names);
    if (!names) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    for (uint64_t i = 0; i < n; i++) names[i] = v[i].name;
    pl_recipe_state rs;
    pl_recipe_begin(&rs, &m, r, false, true, has_imatrix, names, n);
    free(names);
    *needs_imatrix = false;
    for (uint64_t i = 0; i < n && !st; i++) {
        vtensor *x = &v[i];
        uint32_t to;
        if ((st = pl_recipe_choose(&rs, x->name, x->type, x->ne, &to))) break;
        *needs_imatrix |= pl_recipe_allows_quantization(&rs, x->name, x->ne) &&
                          (pl_recipe_requires_imatrix(x->name, to, r->ftype) || pl_type_get(to)->requires_imatrix);
        /* the writer's dimension count, as the quantizer's plan gives it */
        x->n_dims = pl_recipe_n_dims(x->ne);
        for (uint32_t d = x->n_dims; d < PL_GGUF_MAX_DIMS; d++)
            if (x->ne[d] == 0) x->n_dims = d + 1;
        x->type = to;
    }
    return st;
}

/* Bytes of an encoded metadata value (nested arrays included). */
static uint64_t value_bytes(const pocketllm_gguf_value *v) {
    const uint32_t size = pl_gguf_type_size(v->type);
    if (size) return size;
    if (v->type == POCKETLLM_GGUF_STRING) return 8 + v->n;
    const uint32_t esize = pl_gguf_type_size(v->elem_type);
    if (esize) return 12 + v->n * esize;
    uint64_t n = 12;
    for (uint64_t i = 0; i < v->n; i++) {
        uint64_t len = 0;
        if (v->elem_type == POCKETLLM_GGUF_STRING) pl_gguf_array_str(v, i, &len);
        n += v->elem_type == POCKETLLM_GGUF_STRING ? 8 + len : value_bytes(&v->elems[i]);
    }
    return n;
}

static uint64_t kv_bytes(const char *key, uint64_t value) { return 8 + strlen(key) + 4 + value; }

static uint64_t str_bytes(const char *s) {
    const size_t n = strlen(s);
    return 8 + (n > QUANTIZE_STR_MAX ? QUANTIZE_STR_MAX : n);
}

/* The keys pocketllm_quantize writes (quantize.c: write_metadata): the
 * source's less the split keys, then the ones it sets, which replace the
 * source's of the same name. */
static uint64_t header_keys(const pl_fit_run *F, bool quantized) {
    const pl_imatrix *im = F->im_loaded ? &F->im : NULL;
    const char *set[] = {"general.quantization_version", "general.file_type", "quantize.imatrix.file",
                         im && im->dataset ? "quantize.imatrix.dataset" : NULL, "quantize.imatrix.entries_count",
                         im && im->chunk_count > 0 ? "quantize.imatrix.chunks_count" : NULL};
    const size_t n_set = quantized ? (im ? 6 : 2) : 0;
    uint64_t n = 0;
    for (uint64_t i = 0; i < F->src->n_kv; i++) {
        const char *k = F->src->kv[i].key;
        bool drop = quantized && (!strcmp(k, "split.no") || !strcmp(k, "split.count") ||
                                  !strcmp(k, "split.tensors.count"));
        for (size_t j = 0; j < n_set && !drop; j++) drop = set[j] && !strcmp(k, set[j]);
        if (!drop) n += kv_bytes(k, value_bytes(&F->src->kv[i].value));
    }
    if (!quantized) return n;
    n += kv_bytes(set[0], 4) + kv_bytes(set[1], 4);
    if (im) {
        n += kv_bytes(set[2], str_bytes(F->imatrix)) + kv_bytes(set[4], 4);
        if (set[3]) n += kv_bytes(set[3], str_bytes(im->dataset));
        if (set[5]) n += kv_bytes(set[5], 4);
    }
    return n;
}

/* FNV-1a over every tensor's name and type, in the file's order. */
static uint64_t fingerprint(const vtensor *v, uint64_t n) {
    uint64_t h = 1469598103934665603ull;
    for (uint64_t i = 0; i < n; i++) {
        for (const char *c = v[i].name; *c; c++) h = (h ^ (uint8_t)*c) * 1099511628211ull;
        h = (h ^ (v[i].type + 0x100u)) * 1099511628211ull;
    }
    return h;
}

pocketllm_status pl_fit_plan_rung(const pl_fit_run *F, const char *recipe, uint32_t layers, pl_fit_plan *out) {
    memset(out, 0, sizeof *out);
    const pl_recipe *r = recipe ? pl_recipe_find(recipe) : NULL;
    if (recipe && !r) return pl_fail(POCKETLLM_ERR_INTERNAL, "fit: no recipe %s", recipe);
    vtensor *v;
    uint64_t n;
    pocketllm_status st = table(F, layers, &v, &n);
    if (st) return st;
    qsort(v, (size_t)n, sizeof *v, by_llama_order);
    if (r) {
        /* as quantize plans it: with the matrix in use, else without one --
         * unless the recipe cannot be made without (then as with one) */
        bool needs = false;
        st = choose(F, r, layers, F->im_loaded, v, n, &needs);
        if (!st && needs && !F->im_loaded) {
            /* the types were overwritten: plan again from a fresh table */
            free(v);
            v = NULL;
            if (!(st = table(F, layers, &v, &n))) {
                qsort(v, (size_t)n, sizeof *v, by_llama_order);
                st = choose(F, r, layers, true, v, n, &needs);
                out->imatrix_assumed = true;
            }
        }
    }
    const uint64_t align = F->src->alignment;
    uint64_t header = 24 + header_keys(F, r != NULL), data = 0;
    for (uint64_t i = 0; i < n && !st; i++) {
        uint64_t bytes;
        if (!pl_type_row_bytes(v[i].type, v[i].n_elements, &bytes) ||
            !pl_add_u64(out->tensor_bytes, bytes, &out->tensor_bytes) || !pl_align_up_u64(bytes, align, &bytes) ||
            !pl_add_u64(data, bytes, &data)) {
            st = pl_fail(POCKETLLM_ERR_FORMAT, "fit: the tensor sizes of the plan overflow");
            break;
        }
        header += 8 + strlen(v[i].name) + 4 + 8 * (uint64_t)v[i].n_dims + 4 + 8;
        if (v[i].type < 64) out->type_count[v[i].type]++;
    }
    if (!st && (!pl_align_up_u64(header, align, &header) || !pl_add_u64(header, data, &out->file_bytes)))
        st = pl_fail(POCKETLLM_ERR_FORMAT, "fit: the file of the plan overflows");
    if (!st) out->fingerprint = fingerprint(v, n);
    free(v);
    return st;
}

void pl_fit_plan_heap(const pl_fit_run *F, uint64_t *heap, uint64_t *session) {
    if (F->layers == F->n_layer) return;
    const pl_gguf *g = F->src;
    /* the session: K and V rows of every position, and a K and a V
     * pointer, per layer (runtime/session.c's sizes) */
    const uint64_t kv = pl_kv_cache_bytes(F->kv_k, F->kv_v, 1,
                                          (int64_t)F->n_ctx, F->kv_dim) +
                        2 * sizeof(void *);
    /* the tensor table: an entry, its name and a slot of the name index
     * (held at most 3/4 full) per tensor of a layer */
    uint64_t table = 0;
    for (uint64_t i = 0; i < g->n_tensors; i++) {
        const char *suffix;
        if (layer_of(g->tensors[i].name, &suffix) == 0)
            table += sizeof(pl_gguf_tensor) + strlen(g->tensors[i].name) + 2 + 2 * sizeof(pl_strmap_slot);
    }
    const int64_t added = (int64_t)F->layers - (int64_t)F->n_layer;
    *session = (uint64_t)((int64_t)*session + added * (int64_t)kv);
    *heap = (uint64_t)((int64_t)*heap + added * (int64_t)(kv + table));
}
