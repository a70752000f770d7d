/*
 * experts.c -- the mixture-of-experts facts a quantization run checks
 * before it plans anything.  The expert counts of the metadata as llama.cpp's
 * load_hparams asserts them (llama-quantize aborts there; we refuse), and,
 * for the architectures whose tensor layout is known here, each tensor's
 * shape against them: an expert tensor ("*_exps.weight") holds
 * expert_count experts along its third extent, the router (ffn_gate_inp)
 * has one row per expert, and no other tensor is 3-D.  llama-quantize
 * reads no shapes and would quantize such a file slice by slice into one
 * nothing loads; a one-line refusal says what is wrong instead.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "quantize/plan.h"

/* llama.cpp's LLAMA_MAX_EXPERTS (Kimi K3 has the most). */
#define MAX_EXPERTS 1024

/* The largest of a count key that may be per layer (llama.cpp's
 * n_expert_used_max over get_key_or_arr), 0 when absent. */
static pocketllm_status key_max_u32(const pl_gguf *g, const char *key, uint32_t *out) {
    const pocketllm_gguf_value *v = pl_gguf_get(g, key);
    *out = 0;
    if (!v) return POCKETLLM_OK;
    const bool arr = v->type == POCKETLLM_GGUF_ARRAY;
    const uint32_t type = arr ? v->elem_type : v->type;
    const size_t size = pl_gguf_type_size(type);
    const uint64_t n = arr ? v->n : 1;
    if (size == 0 || !v->raw || (arr && n == 0))
        return pl_fail(POCKETLLM_ERR_FORMAT, "%s: %s is not a count", g->path, key);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t u;
        if (pl_gguf_scalar_u64(type, v->raw + i * size, &u) || u > UINT32_MAX)
            return pl_fail(POCKETLLM_ERR_FORMAT, "%s: %s is not a count in range", g->path, key);
        if (u > *out) *out = (uint32_t)u;
    }
    return POCKETLLM_OK;
}

/* Architectures whose expert layout is llama.cpp's llama / qwen family's:
 * experts only in *_exps tensors, routers [n_embd, n_expert]. */
static bool layout_known(const char *arch) {
    static const char *const known[] = {"llama", "qwen2", "qwen2moe", "qwen3", "qwen3moe", "qwen3vl"};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(arch, known[i]) == 0) return true;
    return false;
}

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* The expert tensors first (a wrong count there says the most), then
 * every other tensor. */
static pocketllm_status check_shapes(const pl_gguf *g, const char *arch, uint32_t n_expert) {
    for (int pass = 0; pass < 2; pass++)
        for (uint64_t i = 0; i < g->n_tensors; i++) {
            const pl_gguf_tensor *t = &g->tensors[i];
            const int64_t *ne = t->ne;
            const bool exps = ends_with(t->name, "_exps.weight");
            if (exps != (pass == 0)) continue;
            if (exps && n_expert == 0)
                return pl_fail(POCKETLLM_ERR_FORMAT, "%s: %s holds experts, but the model has no %s.expert_count",
                               g->path, t->name, arch);
            if (exps && (ne[2] != (int64_t)n_expert || ne[3] != 1))
                return pl_fail(POCKETLLM_ERR_FORMAT,
                               "%s: %s is [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "]: %" PRId64
                               " experts, but %s.expert_count is %u (a damaged checkpoint?)",
                               g->path, t->name, ne[0], ne[1], ne[2], ne[3], ne[2], arch, n_expert);
            if (!exps && (ne[2] != 1 || ne[3] != 1))
                return pl_fail(POCKETLLM_ERR_FORMAT,
                               "%s: %s is [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64
                               "], where %s has a matrix or a vector (only *_exps tensors are 3-D)",
                               g->path, t->name, ne[0], ne[1], ne[2], ne[3], arch);
            if (ends_with(t->name, "ffn_gate_inp.weight") && ne[1] != (int64_t)n_expert)
                return pl_fail(POCKETLLM_ERR_FORMAT,
                               "%s: the router %s has %" PRId64 " rows, but %s.expert_count is %u (a damaged "
                               "checkpoint?)",
                               g->path, t->name, ne[1], arch, n_expert);
        }
    return POCKETLLM_OK;
}

pocketllm_status pl_quant_check_experts(const pl_gguf *g, const char *arch, pl_recipe_model *m) {
    char key[192];
    uint32_t used;
    snprintf(key, sizeof key, "%s.expert_used_count", arch);
    pocketllm_status st = key_max_u32(g, key, &used);
    if (st) return st;
    /* llama.cpp reads a count of 0 or 1 as no experts for these two */
    if ((!strcmp(arch, "hunyuan_vl") || !strcmp(arch, "hunyuan-dense")) && m->n_expert <= 1) m->n_expert = used = 0;
    if (m->n_expert > MAX_EXPERTS)
        return pl_fail(POCKETLLM_ERR_FORMAT, "%s: %s.expert_count = %u is out of range (at most %d)", g->path, arch,
                       m->n_expert, MAX_EXPERTS);
    if (used > m->n_expert)
        return pl_fail(POCKETLLM_ERR_FORMAT, "%s: %s uses %u experts per token of %u (%s.expert_count)", g->path,
                       key, used, m->n_expert, arch);
    if (m->n_expert > 0 && used == 0)
        return pl_fail(POCKETLLM_ERR_FORMAT, "%s: %s.expert_count is %u, but %s is missing or 0", g->path, arch,
                       m->n_expert, key);
    return layout_known(arch) ? check_shapes(g, arch, m->n_expert) : POCKETLLM_OK;
}
