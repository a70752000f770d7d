/*
 * vk_ops_attention.c -- rotary embedding (one-axis and multi-axis), the
 * KV-cache store and attention (causal, or over all n_kv rows: a vision
 * tower's) on the Vulkan backend.
 */
#include <stdlib.h>
#include <string.h>

#include "backend/vulkan/vk_compute.h"
#include "base/error.h"
#include "quant/kv_types.h"
#include "quant/types.h"

/* The cos/sin table of the positions, made on the host by the
 * reference's own pl_rope_angles (pl_rope_angles_multi for the multi-axis
 * modes, from the token's four positions pos[a * n_tok + t]) and put in
 * the ring; the last one is reused while positions and parameters are
 * unchanged (every layer's q and k of a pass). */
static VkDeviceAddress rope_table(pl_vk_compute *vc, const pl_rope_params *rp, int64_t n_tok, const int32_t *pos) {
    const bool multi = pl_rope_is_multi(rp->mode);
    const int64_t n_pos = multi ? 4 * n_tok : n_tok;
    if (vc->rope_n == n_tok && vc->rope_addr && memcmp(&vc->rope_rp, rp, sizeof *rp) == 0 &&
        memcmp(vc->rope_pos, pos, (size_t)n_pos * sizeof *pos) == 0)
        return vc->rope_addr;
    const size_t bytes = (size_t)(n_tok * rp->n_rot) * sizeof(float);
    float *tab = malloc(bytes ? bytes : 4);
    if (n_pos > vc->rope_cap) {
        int32_t *p = realloc(vc->rope_pos, (size_t)n_pos * sizeof *p);
        if (p) vc->rope_pos = p, vc->rope_cap = n_pos;
    }
    if (!tab || n_pos > vc->rope_cap) {
        free(tab);
        pl_compute_fail(&vc->base, pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory"));
        return 0;
    }
    for (int64_t t = 0; t < n_tok; t++) {
        if (multi) {
            const int32_t p4[4] = {pos[t], pos[n_tok + t], pos[2 * n_tok + t], pos[3 * n_tok + t]};
            pl_rope_angles_multi(rp, p4, tab + t * rp->n_rot);
        } else {
            pl_rope_angles(rp, pos[t], tab + t * rp->n_rot);
        }
    }
    vc->rope_n = 0;
    const VkDeviceAddress a = pl_vk_ring_put(vc, tab, bytes);
    free(tab);
    if (!a) return 0;
    vc->rope_addr = a;
    vc->rope_rp = *rp;
    memcpy(vc->rope_pos, pos, (size_t)n_pos * sizeof *pos);
    vc->rope_n = n_tok;
    return a;
}

/* rope of n_tok tokens whose table fits the ring at once */
static void rope_run(pl_vk_compute *vc, const pl_rope_params *rp, const float *x, float *y, int64_t n_tok,
                     int64_t n_head, int64_t head_dim, const int32_t *pos) {
    const size_t bytes = (size_t)(n_tok * n_head * head_dim) * 4;
    const VkDeviceAddress xa = pl_vk_operand(vc, x, bytes, "rope");
    const VkDeviceAddress ya = pl_vk_operand(vc, y, bytes, "rope");
    const VkDeviceAddress ta = vc->base.status ? 0 : rope_table(vc, rp, n_tok, pos);
    if (vc->base.status) return;
    struct {
        uint32_t x[2], y[2], table[2];
        uint32_t n_tok, n_head, head_dim, n_rot, neox;
    } pc = {.n_tok = (uint32_t)n_tok,
            .n_head = (uint32_t)n_head,
            .head_dim = (uint32_t)head_dim,
            .n_rot = (uint32_t)rp->n_rot,
            .neox = pl_rope_is_multi(rp->mode) || rp->mode == PL_ROPE_NEOX};
    pl_vk_put_addr(pc.x, xa);
    pl_vk_put_addr(pc.y, ya);
    pl_vk_put_addr(pc.table, ta);
    const uint64_t per_head = (uint64_t)(rp->n_rot / 2 + (head_dim - rp->n_rot));
    const pl_vk_range rd[2] = {{xa, xa + bytes}, {ta, ta + (size_t)(n_tok * rp->n_rot) * 4}}, wr = {ya, ya + bytes};
    uint32_t g[3], spec[1] = {PL_VK_WG};
    pl_vk_grid(((uint64_t)(n_tok * n_head) * per_head + PL_VK_WG - 1) / PL_VK_WG, g);
    pl_vk_dispatch(vc, "rope", spec, 1, &pc, sizeof pc, g, rd, 2, &wr, 1);
}

void pl_vk_rope(pl_compute *c, const pl_rope_params *rp, const float *x, float *y, int64_t n_tok, int64_t n_head,
                int64_t head_dim, const int32_t *pos) {
    pl_vk_compute *vc = pl_vkc(c);
    if (c->status || n_tok <= 0) return;
    const bool multi = pl_rope_is_multi(rp->mode);
    if (multi && (rp->sections[0] + rp->sections[1] + rp->sections[2] + rp->sections[3] < 1 ||
                  (rp->mode == PL_ROPE_VISION && rp->n_rot != head_dim))) {
        pl_compute_fail(c, pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT,
                                   "vulkan: rope: multi-axis mode %d needs sections (and n_rot == head_dim for vision)",
                                   rp->mode));
        return;
    }
    /* a table of at most a quarter of the ring at a time (a large image's
     * tower has tens of thousands of tokens) */
    const int64_t chunk = (int64_t)(vc->ring->bytes / 4) / (rp->n_rot * 4 > 0 ? rp->n_rot * 4 : 4);
    if (n_tok <= chunk) {
        rope_run(vc, rp, x, y, n_tok, n_head, head_dim, pos);
        return;
    }
    int32_t *cp = malloc((size_t)(multi ? 4 : 1) * (size_t)chunk * sizeof *cp);
    if (!cp) {
        pl_compute_fail(c, pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory"));
        return;
    }
    const int64_t stride = n_head * head_dim;
    for (int64_t t0 = 0; t0 < n_tok && !c->status; t0 += chunk) {
        const int64_t n = n_tok - t0 < chunk ? n_tok - t0 : chunk;
        for (int a = 0; a < (multi ? 4 : 1); a++) memcpy(cp + a * n, pos + a * n_tok + t0, (size_t)n * sizeof *cp);
        rope_run(vc, rp, x + t0 * stride, y + t0 * stride, n, n_head, head_dim, cp);
    }
    free(cp);
}

/* f16 and f32 go through kv_store.comp (a word an invocation, any
 * element offset); the block types and bf16 through kv_store_q.comp (a
 * block of 32 an invocation, whole blocks). */
void pl_vk_kv_store(pl_compute *c, uint32_t type, const float *x, void *dst, int64_t n) {
    pl_vk_compute *vc = pl_vkc(c);
    if (c->status || n <= 0) return;
    const pl_type_traits *tt = pl_type_get(type);
    if (!pl_kv_type_supported(type) || n % tt->block) {
        pl_compute_fail(c, pl_fail(POCKETLLM_ERR_UNSUPPORTED, "kv_store: %s is not a KV cache type, or %lld values are not "
                                   "whole blocks of it", tt ? tt->name : "(unknown)", (long long)n));
        return;
    }
    const size_t dbytes = (size_t)pl_kv_row_bytes(type, n);
    const VkDeviceAddress xa = pl_vk_operand(vc, x, (size_t)n * 4, "kv_store");
    const VkDeviceAddress da = pl_vk_operand(vc, dst, dbytes, "kv_store");
    if (c->status) return;
    const VkDeviceAddress base = da & ~(VkDeviceAddress)3;
    /* whole words are written: the hazard covers them */
    const pl_vk_range rd = {xa, xa + (size_t)n * 4}, wr = {base, (da + dbytes + 3) & ~(VkDeviceAddress)3};
    uint32_t g[3], spec[1] = {PL_VK_WG};
    if (type != PL_TYPE_F16 && type != PL_TYPE_F32) {
        struct {
            uint32_t x[2], dst[2];
            uint32_t n, dst_off, type;
        } pc = {.n = (uint32_t)n, .dst_off = (uint32_t)(da & 3), .type = type};
        pl_vk_put_addr(pc.x, xa);
        pl_vk_put_addr(pc.dst, base);
        const uint32_t qspec[1] = {64};
        pl_vk_grid(((uint64_t)n / 32 + 63) / 64, g);
        pl_vk_dispatch(vc, "kv_store_q", qspec, 1, &pc, sizeof pc, g, &rd, 1, &wr, 1);
        return;
    }
    const bool f16 = type == PL_TYPE_F16;
    struct {
        uint32_t x[2], dst[2];
        uint32_t n, dst_half, f16;
    } pc = {.n = (uint32_t)n, .dst_half = (uint32_t)(da & 3) / 2, .f16 = f16};
    pl_vk_put_addr(pc.x, xa);
    pl_vk_put_addr(pc.dst, base);
    const uint64_t inv = f16 ? ((uint64_t)pc.dst_half + (uint64_t)n + 1) / 2 : (uint64_t)n;
    pl_vk_grid((inv + PL_VK_WG - 1) / PL_VK_WG, g);
    pl_vk_dispatch(vc, "kv_store", spec, 1, &pc, sizeof pc, g, &rd, 1, &wr, 1);
}

/* Scores held in shared memory up to this many positions; longer contexts
 * go through the scratch. */
#define PL_VK_SH_SCORES 2048
#define PL_VK_ATT_WG 128

/* Non-causal attention with heads of at most this size goes through
 * attention_tile.comp (BQ queries of a head per work group sharing the K
 * and V tiles); larger heads through attention.comp. */
#define PL_VK_TILE_MAX_HD 128
#define PL_VK_TILE_WG 256

/* attention_tile.comp's shared memory for head size hd: q rows, the K and
 * V tiles (rows padded by one float), scores, ms, and the per-query M, 1/S. */
static void tile_shape(int64_t hd, uint32_t *bq, uint32_t *bk, size_t *shared) {
    int64_t q = 4 * PL_VK_TILE_WG / hd;
    *bq = (uint32_t)(q > 16 ? 16 : q < 1 ? 1 : q);
    *bk = hd <= 64 ? 32 : 16;
    *shared = 4 * ((size_t)*bq * (size_t)hd + 2 * (size_t)*bk * (size_t)(hd + 1) + 2 * (size_t)*bq * *bk + 2 * *bq);
}

static void attention_tiled(pl_vk_compute *vc, const pl_attn_params *ap, VkDeviceAddress qa, VkDeviceAddress ka,
                            VkDeviceAddress va, VkDeviceAddress oa, int64_t n_tok, const pl_vk_range rd[3],
                            const pl_vk_range *wr) {
    uint32_t bq, bk;
    size_t shared;
    tile_shape(ap->head_dim, &bq, &bk, &shared);
    struct {
        uint32_t q[2], k[2], v[2], out[2];
        uint32_t k_half, v_half, n_head, n_head_kv, kv_dim, n_tok, n_kv, t0;
        float scale;
        uint32_t flags;
    } pc = {.k_half = (uint32_t)(ka & 3) / 2,
            .v_half = (uint32_t)(va & 3) / 2,
            .n_head = (uint32_t)ap->n_head,
            .n_head_kv = (uint32_t)ap->n_head_kv,
            .kv_dim = (uint32_t)(ap->n_head_kv * ap->head_dim),
            .n_tok = (uint32_t)n_tok,
            .n_kv = (uint32_t)ap->n_kv,
            .scale = ap->scale,
            .flags = (ap->k_type == PL_TYPE_F16 ? 1u : 0u) | (ap->flash ? 2u : 0u)};
    pl_vk_put_addr(pc.q, qa);
    pl_vk_put_addr(pc.k, ka & ~(VkDeviceAddress)3);
    pl_vk_put_addr(pc.v, va & ~(VkDeviceAddress)3);
    pl_vk_put_addr(pc.out, oa);
    const uint32_t spec[4] = {PL_VK_TILE_WG, bq, bk, (uint32_t)ap->head_dim};
    /* work groups in y: at most 65535 a dispatch */
    const int64_t rows_per = (int64_t)65535 * bq;
    for (int64_t t0 = 0; t0 < n_tok && !vc->base.status; t0 += rows_per) {
        const int64_t rows = n_tok - t0 < rows_per ? n_tok - t0 : rows_per;
        pc.t0 = (uint32_t)t0;
        const uint32_t g[3] = {(uint32_t)ap->n_head, (uint32_t)((rows + bq - 1) / bq), 1};
        pl_vk_dispatch(vc, "attention_tile", spec, 4, &pc, sizeof pc, g, rd, 3, wr, 1);
    }
}

void pl_vk_attention(pl_compute *c, const pl_attn_params *ap, const float *q, const void *k_cache,
                     const void *v_cache, int64_t n_tok, int64_t pos0, float *out) {
    pl_vk_compute *vc = pl_vkc(c);
    if (c->status || n_tok <= 0) return;
    if (ap->head_dim > 1024) {
        pl_compute_fail(c, pl_fail(POCKETLLM_ERR_UNSUPPORTED, "vulkan: attention: head_dim %lld > 1024",
                                   (long long)ap->head_dim));
        return;
    }
    /* this backend keeps rows of all heads (it has no kv_store_heads) */
    if (ap->kv_cap != 0) {
        pl_compute_fail(c, pl_fail(POCKETLLM_ERR_INTERNAL, "vulkan: attention: a head-major cache"));
        return;
    }
    const pl_type_traits *tk = pl_type_get(ap->k_type), *tv = pl_type_get(ap->v_type);
    if (!pl_kv_type_supported(ap->k_type) || !pl_kv_type_supported(ap->v_type) || ap->head_dim % tk->block ||
        ap->head_dim % tv->block || (!ap->flash && tv->quantized)) {
        pl_compute_fail(c, pl_fail(POCKETLLM_ERR_UNSUPPORTED, "vulkan: attention: K %s / V %s caches are not supported%s",
                                   tk ? tk->name : "?", tv ? tv->name : "?",
                                   !ap->flash && tv && tv->quantized ? " (a quantized V needs flash attention)" : ""));
        return;
    }
    const bool causal = ap->n_kv <= 0;
    if (!causal) pos0 = 0;
    const int64_t kv_dim = ap->n_head_kv * ap->head_dim, n_kv = causal ? pos0 + n_tok : ap->n_kv;
    const size_t k_row = (size_t)pl_kv_row_bytes(ap->k_type, kv_dim), v_row = (size_t)pl_kv_row_bytes(ap->v_type, kv_dim);
    const size_t qbytes = (size_t)(n_tok * ap->n_head * ap->head_dim) * 4;
    const size_t kbytes = (size_t)n_kv * k_row, vbytes = (size_t)n_kv * v_row;
    const VkDeviceAddress qa = pl_vk_operand(vc, q, qbytes, "attention");
    const VkDeviceAddress ka = pl_vk_operand(vc, k_cache, kbytes, "attention");
    const VkDeviceAddress va = pl_vk_operand(vc, v_cache, vbytes, "attention");
    const VkDeviceAddress oa = pl_vk_operand(vc, out, qbytes, "attention");
    if (c->status) return;
    const pl_vk_range rd[3] = {{qa, qa + qbytes}, {ka, ka + kbytes}, {va, va + vbytes}};
    pl_vk_range wr[2] = {{oa, oa + qbytes}, {vc->scores->addr, vc->scores->addr + vc->scores->bytes}};
    const bool plain = ap->k_type == ap->v_type && (ap->k_type == PL_TYPE_F16 || ap->k_type == PL_TYPE_F32);
    if (!causal && plain && ap->head_dim <= PL_VK_TILE_MAX_HD) {
        uint32_t bq, bk;
        size_t shared;
        tile_shape(ap->head_dim, &bq, &bk, &shared);
        if (shared <= vc->d->caps.max_shared) {
            attention_tiled(vc, ap, qa, ka, va, oa, n_tok, rd, wr);
            return;
        }
    }
    struct {
        uint32_t q[2], k[2], v[2], out[2], scores[2];
        uint32_t k_off, v_off, k_row, v_row, k_type, v_type, n_head, n_head_kv, head_dim, pos0, t0, h0, score_stride;
        float scale;
        uint32_t flags, n_kv_all;
    } pc = {.k_off = (uint32_t)(ka & 3),
            .v_off = (uint32_t)(va & 3),
            .k_row = (uint32_t)k_row,
            .v_row = (uint32_t)v_row,
            .k_type = ap->k_type,
            .v_type = ap->v_type,
            .n_head = (uint32_t)ap->n_head,
            .n_head_kv = (uint32_t)ap->n_head_kv,
            .head_dim = (uint32_t)ap->head_dim,
            .pos0 = (uint32_t)pos0,
            .score_stride = (uint32_t)n_kv,
            .scale = ap->scale,
            .flags = ap->flash ? 2u : 0u,
            .n_kv_all = causal ? 0u : (uint32_t)n_kv};
    pl_vk_put_addr(pc.q, qa);
    pl_vk_put_addr(pc.k, ka & ~(VkDeviceAddress)3);
    pl_vk_put_addr(pc.v, va & ~(VkDeviceAddress)3);
    pl_vk_put_addr(pc.out, oa);
    pl_vk_put_addr(pc.scores, vc->scores->addr);
    const uint32_t spec[2] = {PL_VK_ATT_WG, PL_VK_SH_SCORES};
    /* how many (row, head) work groups the scratch holds at once */
    int64_t tok_chunk = n_tok, head_chunk = ap->n_head;
    const bool scratch = n_kv > PL_VK_SH_SCORES;
    if (scratch) {
        const int64_t fit = (int64_t)(vc->scores->bytes / ((size_t)n_kv * 4));
        if (fit >= ap->n_head) tok_chunk = fit / ap->n_head < n_tok ? fit / ap->n_head : n_tok;
        else tok_chunk = 1, head_chunk = fit > 0 ? fit : 1;
    }
    if (tok_chunk > 65535) tok_chunk = 65535;
    for (int64_t t0 = 0; t0 < n_tok && !c->status; t0 += tok_chunk)
        for (int64_t h0 = 0; h0 < ap->n_head && !c->status; h0 += head_chunk) {
            pc.t0 = (uint32_t)t0;
            pc.h0 = (uint32_t)h0;
            const uint32_t g[3] = {(uint32_t)(h0 + head_chunk <= ap->n_head ? head_chunk : ap->n_head - h0),
                                   (uint32_t)(t0 + tok_chunk <= n_tok ? tok_chunk : n_tok - t0), 1};
            pl_vk_dispatch(vc, "attention", spec, 2, &pc, sizeof pc, g, rd, 3, wr, scratch ? 2 : 1);
        }
}
