/*
 * synth_quant.c -- `synth --type Q4_K_M` (any recipe or type that
 * `pocketllm quantize` knows): a quantized rung written directly, with no
 * f16 intermediate, so that a 30B-A3B Q4_K_M file (17 GB) is made at disk
 * speed with a few MiB of memory.
 *
 * Types: every tensor gets what llama-quantize would give it when
 * quantizing the f16 file the converter writes for this shape.  The rule is
 * the quantizer's own (quantize/recipe.c, fed the model facts by
 * quantize/plan.c from the file's metadata), called in llama.cpp's tensor
 * order; nothing of it is restated here.
 *
 * Values: a quantizer makes blocks at a few MB/s at best (the IQ types far
 * less), so quantizing random rows would take hours for 30B weights.
 * Instead, per (type, scale), a pool of 1024 blocks is made once by the
 * reference encoders from uniform random values of that scale -- valid by
 * construction (the encoders' own scales, grids and signs), and checked
 * (every decoded value finite and within a few times the scale) -- and each
 * block of a tensor is a copy of a pool block picked by the tensor's
 * generator.  Blocks are self-contained (each carries its scales), so any
 * sequence of them is a valid row; a row of 2048 is 8..64 independent picks,
 * so no two rows of a model repeat in practice, and the decoded matrix has
 * the float fill's variance plus the type's own quantization noise.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "quant/types.h"
#include "quantize/plan.h"
#include "quantize/recipe.h"
#include "synth/synth.h"

/* ---- the types ------------------------------------------------------------- */

/* As pocketllm_quantize reads a type name: no lower-case letter is a recipe
 * (llama-quantize's spelling), one with them a tensor type (pure). */
static const pl_recipe *find_recipe(const char *name, bool *pure) {
    bool lower = false;
    for (const char *s = name; *s; s++) lower |= islower((unsigned char)*s) != 0;
    *pure = lower;
    if (!lower) return pl_recipe_find(name);
    int32_t t = pocketllm_type_from_name(name);
    return t < 0 ? NULL : pl_recipe_for_type((uint32_t)t);
}

typedef struct image {
    uint8_t b[1024];
    size_t n;
} image;

static void put(image *g, const void *p, size_t n) {
    if (g->n + n <= sizeof g->b) memcpy(g->b + g->n, p, n);
    g->n += n;
}
static void put_u32(image *g, uint32_t v) { put(g, &v, 4); }
static void put_u64(image *g, uint64_t v) { put(g, &v, 8); }
static void put_str(image *g, const char *s) {
    put_u64(g, strlen(s));
    put(g, s, strlen(s));
}
static void put_kv_u32(image *g, const char *arch, const char *key, uint32_t v) {
    char k[128];
    snprintf(k, sizeof k, "%s.%s", arch, key);
    put_str(g, k);
    put_u32(g, POCKETLLM_GGUF_UINT32);
    put_u32(g, v);
}

/* The recipe's model facts, read by the quantizer's own reader from a
 * GGUF image holding the keys the file will hold, so that the facts are
 * the ones llama-quantize would see in our file. */
static pocketllm_status model_facts(const pl_synth_facts *f, pl_recipe_model *m) {
    image g = {.n = 0};
    const uint32_t n_kv = f->n_expert ? 6 : 4;
    put(&g, "GGUF", 4);
    put_u32(&g, 3);
    put_u64(&g, 1); /* a model has tensors: one stand-in */
    put_u64(&g, n_kv);
    put_str(&g, "general.architecture");
    put_u32(&g, POCKETLLM_GGUF_STRING);
    put_str(&g, f->arch);
    put_kv_u32(&g, f->arch, "block_count", f->n_layer);
    put_kv_u32(&g, f->arch, "attention.head_count", f->n_head);
    put_kv_u32(&g, f->arch, "attention.head_count_kv", f->n_head_kv);
    if (f->n_expert) {
        put_kv_u32(&g, f->arch, "expert_count", f->n_expert);
        put_kv_u32(&g, f->arch, "expert_used_count", f->n_expert_used);
    }
    put_str(&g, "x");
    put_u32(&g, 1);
    put_u64(&g, 1);
    put_u32(&g, 0); /* f32 */
    put_u64(&g, 0);
    static const uint8_t zeros[64];
    put(&g, zeros, (32 - g.n % 32) % 32 + 32); /* alignment, then the data */
    if (g.n > sizeof g.b) return pl_fail(POCKETLLM_ERR_INTERNAL, "synth: model facts do not fit");
    pl_gguf *gg;
    pocketllm_status st = pl_gguf_open_memory(g.b, g.n, "synth", &gg);
    if (st) return st;
    st = pl_quant_model_facts(gg, m);
    pocketllm_gguf_close(gg);
    return st;
}

typedef struct named {
    const char *name;
    size_t index;
} named;

static int by_llama_order(const void *a, const void *b) {
    return pl_recipe_order_cmp(((const named *)a)->name, ((const named *)b)->name);
}

pocketllm_status pl_synth_quant_types(const char *name, const pl_synth_facts *f, pl_synth_tensor *t, size_t n,
                                      uint32_t *ftype) {
    bool pure;
    const pl_recipe *r = name && *name ? find_recipe(name, &pure) : NULL;
    if (!r)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "synth: '%s' is neither a quantization recipe nor a tensor "
                       "type (see pocketllm quantize --help)", name ? name : "");
    pl_recipe_model m;
    pocketllm_status st = model_facts(f, &m);
    if (st) return st;
    /* the rule counts attn_v and ffn_down tensors as it meets them: call it
     * in llama.cpp's order */
    named *order = calloc(n, sizeof *order);
    const char **names = calloc(n, sizeof *names);
    uint32_t *to = calloc(n, sizeof *to);
    if (!order || !names || !to) {
        free(order), free(names), free(to);
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    }
    for (size_t i = 0; i < n; i++) order[i] = (named){t[i].name, i};
    qsort(order, n, sizeof *order, by_llama_order);
    for (size_t i = 0; i < n; i++) names[i] = order[i].name;
    /* Recipes that llama-quantize refuses without an importance matrix are
     * planned as made with one (the file a user would have); the others as
     * made without -- the two plans differ in a few choices. */
    for (int imatrix = 0; imatrix < 2 && !st; imatrix++) {
        pl_recipe_state rs;
        pl_recipe_begin(&rs, &m, r, pure, true, imatrix, names, n);
        bool needs = false;
        for (size_t k = 0; k < n && !st; k++) {
            const size_t j = order[k].index;
            const pl_synth_tensor *x = &t[j];
            const int64_t ne[4] = {x->ne[0], x->ne[1], x->ne[2], 1};
            st = pl_recipe_choose(&rs, x->name, x->type, ne, &to[j]);
            needs |= pl_recipe_allows_quantization(&rs, x->name, ne) &&
                     (pl_recipe_requires_imatrix(x->name, to[j], r->ftype) || pl_type_get(to[j])->requires_imatrix);
        }
        if (!needs) break;
    }
    for (size_t i = 0; i < n && !st; i++) {
        const pl_type_traits *tt = pl_type_get(to[i]);
        if (tt->quantized && (!tt->from_float || !tt->to_float))
            st = pl_fail(POCKETLLM_ERR_UNSUPPORTED, "synth: %s needs type %s for %s, which this build cannot encode "
                         "yet", r->name, tt->name, t[i].name);
        else if (!tt->quantized && to[i] != PL_TYPE_F32 && to[i] != PL_TYPE_F16 && to[i] != PL_TYPE_BF16)
            st = pl_fail(POCKETLLM_ERR_UNSUPPORTED, "synth: %s needs type %s for %s", r->name, tt->name, t[i].name);
    }
    for (size_t i = 0; i < n && !st; i++) t[i].type = to[i];
    if (!st) *ftype = r->ftype;
    free(order), free(names), free(to);
    return st;
}

/* ---- the blocks ------------------------------------------------------------ */

enum { POOL_BITS = 10, POOL_BLOCKS = 1 << POOL_BITS, POOL_ROW = 4096 };

typedef struct pool {
    uint32_t type;
    float scale;
    uint8_t *blocks; /* POOL_BLOCKS blocks of type */
} pool;

struct pl_synth_pools {
    uint64_t seed;
    pool *p;
    size_t n;
};

pocketllm_status pl_synth_pools_new(uint64_t seed, pl_synth_pools **out) {
    *out = calloc(1, sizeof **out);
    if (!*out) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    (*out)->seed = seed;
    return POCKETLLM_OK;
}

void pl_synth_pools_free(pl_synth_pools *p) {
    if (!p) return;
    for (size_t i = 0; i < p->n; i++) free(p->p[i].blocks);
    free(p->p);
    free(p);
}

/* Encode the pool of (type, scale); rows of POOL_ROW values, a multiple of
 * every block size (32..256), so the row-wide quantizers see long rows. */
static pocketllm_status make_pool(const pl_synth_pools *ps, pool *pl) {
    const pl_type_traits *tt = pl_type_get(pl->type);
    const uint64_t n = (uint64_t)POOL_BLOCKS * tt->block;
    const int64_t rows = (int64_t)(n / POOL_ROW);
    float *v = malloc(n * sizeof *v), *w = NULL;
    pl->blocks = malloc((size_t)POOL_BLOCKS * tt->bytes);
    pocketllm_status st = POCKETLLM_OK;
    if (!v || !pl->blocks) st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    /* the types that need importance weights get flat ones */
    if (!st && tt->requires_imatrix && !(w = malloc(POOL_ROW * sizeof *w)))
        st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    for (int i = 0; w && i < POOL_ROW; i++) w[i] = 1.0f;
    if (!st) {
        uint32_t sbits;
        memcpy(&sbits, &pl->scale, 4);
        pl_rng r;
        pl_rng_seed(&r, ps->seed ^ 0x706f6f6c00000000ull ^ ((uint64_t)pl->type << 32) ^ sbits);
        for (uint64_t i = 0; i < n; i++) v[i] = (2.0f * pl_rng_uniform(&r) - 1.0f) * pl->scale;
        st = pl_quant_from_float(pl->type, v, pl->blocks, rows, POOL_ROW, w);
    }
    /* decode it back: a pool block that is not finite or not of the scale
     * would poison every tensor drawn from it */
    if (!st) {
        tt->to_float(pl->blocks, v, (int64_t)n);
        for (uint64_t i = 0; i < n && !st; i++)
            if (!isfinite(v[i]) || fabsf(v[i]) > 4.0f * pl->scale)
                st = pl_fail(POCKETLLM_ERR_INTERNAL, "synth: a %s block of scale %g decodes to %g", tt->name,
                             (double)pl->scale, (double)v[i]);
    }
    free(v);
    free(w);
    if (st) {
        free(pl->blocks);
        pl->blocks = NULL;
    }
    return st;
}

pocketllm_status pl_synth_quant_fill(pl_synth_pools *ps, uint32_t type, float scale, pl_rng *r, uint64_t n_blocks,
                                     void *out) {
    pool *pl = NULL;
    for (size_t i = 0; i < ps->n && !pl; i++)
        if (ps->p[i].type == type && ps->p[i].scale == scale) pl = &ps->p[i];
    if (!pl) {
        pool *np = realloc(ps->p, (ps->n + 1) * sizeof *np);
        if (!np) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
        ps->p = np;
        pl = &ps->p[ps->n];
        *pl = (pool){.type = type, .scale = scale, .blocks = NULL};
        pocketllm_status st = make_pool(ps, pl);
        if (st) return st;
        ps->n++;
    }
    const size_t bytes = pl_type_get(type)->bytes;
    uint8_t *o = out;
    for (uint64_t i = 0; i < n_blocks; i++, o += bytes)
        memcpy(o, pl->blocks + (pl_rng_next(r) >> (64 - POOL_BITS)) * bytes, bytes);
    return POCKETLLM_OK;
}
