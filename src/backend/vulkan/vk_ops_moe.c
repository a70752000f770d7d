/*
 * vk_ops_moe.c -- the mixture-of-experts ops on the Vulkan backend: the
 * router (moe_route.comp), the routed experts' SwiGLU FFNs and their
 * weighted sum (moe_ffn), and qwen2moe's shared-expert gate.
 *
 * moe_ffn reads only the chosen experts' weights, and never brings the
 * routing back to the host: the product shaders' expert mode (moe.glsl)
 * reads it on the device.  A few tokens (decode), or a few per expert: a
 * matrix-vector row per (token, slot) pair, its expert read from the ids.
 * More: the pairs grouped by expert on the device (moe_group.comp), then
 * the GEMM over (row tiles, tiles of one expert's pairs), so that an
 * expert's weights are decoded once per 64 of its pairs.  Either way one
 * pass of dispatches with no wait:
 *
 *   [moe_group]  quant_act(x)  gate, up  silu_mul  quant_act(h)  down  moe_sum
 *
 * (round_act instead of quant_act for f16/bf16 weights, nothing for f32; a
 * second conversion of x when gate and up take different activation
 * types).  Each expert product is the plain product's arithmetic on that
 * expert's matrix.
 */
#include <stdio.h>

#include "backend/vulkan/vk_compute.h"
#include "base/error.h"

#define TILE 64 /* pairs per GEMM tile: BN of gemm_q/gemm_f, TILE of moe_group.comp */
/* Pairs per expert, on average, below which the matrix-vector rows win:
 * with fewer, most of a 64-pair tile is empty, while the pairs' own rows
 * read each chosen expert about as often as the tiles would. */
#define GROUP_MIN_PER_EXPERT 4

bool pl_vk_moe_grouped(const pl_vk_compute *vc, int64_t n_tok, int64_t n_used, int64_t n_expert) {
    return pl_vk_use_gemm(vc, n_tok) && n_tok * n_used >= GROUP_MIN_PER_EXPERT * n_expert;
}

/* The most tiles moe_group.comp can make of `pairs` pairs: each expert
 * with pairs rounds up once. */
static int64_t max_tiles(int64_t pairs, int64_t n_expert) {
    return (pairs + TILE - 1) / TILE + (n_expert < pairs ? n_expert : pairs);
}

/* the table's words: the tile count, tiles of 4 words, then the pairs */
static int64_t table_words(int64_t pairs, int64_t n_expert) { return 4 + 4 * max_tiles(pairs, n_expert) + pairs; }

/* ---- scratch ---------------------------------------------------------------- */

void pl_vk_moe_release(pl_vk_compute *vc) {
    pl_vk_free_keyed(vc->d, vc->moe_gu);
    pl_vk_free_keyed(vc->d, vc->moe_d);
    pl_vk_free_keyed(vc->d, vc->moe_tab);
    vc->moe_gu = vc->moe_d = NULL;
    vc->moe_tab = NULL;
    vc->moe_pairs = 0;
}

static void *keyed(pl_vk_compute *vc, uint64_t bytes, const char *what, pocketllm_status *st) {
    if (*st) return NULL;
    void *p = pl_vk_alloc_keyed(vc->d, (size_t)bytes, what);
    if (!p) *st = POCKETLLM_ERR_NO_MEMORY; /* (the message is set) */
    else vc->base.reserved_bytes += bytes;
    return p;
}

pocketllm_status pl_vk_moe_reserve(pl_vk_compute *vc, const pl_compute_limits *lim) {
    pl_vk_moe_release(vc);
    if (lim->moe_n_used <= 0 || lim->moe_n_ff <= 0) return POCKETLLM_OK;
    const int64_t pairs = lim->n_batch * lim->moe_n_used;
    pocketllm_status st = POCKETLLM_OK;
    vc->moe_gu = keyed(vc, (uint64_t)pairs * (uint64_t)lim->moe_n_ff * 8, "the expert FFN scratch", &st);
    vc->moe_d = keyed(vc, (uint64_t)pairs * (uint64_t)lim->max_in * 4, "the expert output scratch", &st);
    vc->moe_tab = keyed(vc, (uint64_t)table_words(pairs, PL_MAX_EXPERTS) * 4, "the expert grouping table", &st);
    if (st) pl_vk_moe_release(vc);
    else vc->moe_pairs = pairs;
    return st;
}

/* ---- the router ----------------------------------------------------------- */

void pl_vk_moe_route(pl_compute *c, const pl_moe_route_params *p, const float *logits, int64_t n_tok, int32_t *ids,
                     float *w) {
    pl_vk_compute *vc = pl_vkc(c);
    if (c->status) return;
    if (p->n_expert < 1 || p->n_expert > PL_MAX_EXPERTS || p->n_used < 1 || p->n_used > p->n_expert) {
        pl_compute_fail(c, pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT,
                                   "vulkan: moe_route: %lld of %lld experts (at most %d)",
                                   (long long)p->n_used, (long long)p->n_expert, PL_MAX_EXPERTS));
        return;
    }
    if (n_tok <= 0) return;
    const size_t lbytes = (size_t)(n_tok * p->n_expert) * 4, obytes = (size_t)(n_tok * p->n_used) * 4;
    const VkDeviceAddress la = pl_vk_operand(vc, logits, lbytes, "moe_route");
    const VkDeviceAddress ia = pl_vk_operand(vc, ids, obytes, "moe_route");
    const VkDeviceAddress wa = pl_vk_operand(vc, w, obytes, "moe_route");
    if (c->status) return;
    struct {
        uint32_t logits[2], ids[2], w[2];
        uint32_t n_expert, n_used, n_tok, norm;
        float scale;
    } pc = {.n_expert = (uint32_t)p->n_expert, .n_used = (uint32_t)p->n_used, .n_tok = (uint32_t)n_tok,
            .norm = p->norm, .scale = p->scale};
    pl_vk_put_addr(pc.logits, la);
    pl_vk_put_addr(pc.ids, ia);
    pl_vk_put_addr(pc.w, wa);
    const pl_vk_range rd = {la, la + lbytes}, wr[2] = {{ia, ia + obytes}, {wa, wa + obytes}};
    uint32_t g[3], spec[1] = {p->n_expert <= 64 ? 64 : 128};
    pl_vk_grid((uint64_t)n_tok, g);
    pl_vk_dispatch(vc, "moe_route", spec, 1, &pc, sizeof pc, g, &rd, 1, wr, 2);
}

/* ---- elementwise: the gate and the weighted sum ------------------------------ */

void pl_vk_sigmoid_gate(pl_compute *c, const float *x, const float *g, float *y, int64_t rows, int64_t n) {
    pl_vk_compute *vc = pl_vkc(c);
    if (c->status || rows <= 0 || n <= 0) return;
    if (rows * n >= (int64_t)UINT32_MAX) {
        pl_compute_fail(c, pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT,
                                   "vulkan: sigmoid_gate of %lld x %lld values (at most 2^32)",
                                   (long long)rows, (long long)n));
        return;
    }
    const size_t bytes = (size_t)(rows * n) * 4;
    const VkDeviceAddress xa = pl_vk_operand(vc, x, bytes, "sigmoid_gate");
    const VkDeviceAddress ga = pl_vk_operand(vc, g, (size_t)rows * 4, "sigmoid_gate");
    const VkDeviceAddress ya = pl_vk_operand(vc, y, bytes, "sigmoid_gate");
    if (c->status) return;
    pl_vk_elementwise_pc pc = {.n = (uint32_t)(rows * n), .row_n = (uint32_t)n, .op = 4};
    pl_vk_put_addr(pc.a, xa);
    pl_vk_put_addr(pc.b, ga);
    pl_vk_put_addr(pc.y, ya);
    const pl_vk_range rd[2] = {{xa, xa + bytes}, {ga, ga + (size_t)rows * 4}}, wr = {ya, ya + bytes};
    uint32_t grid[3], spec[1] = {PL_VK_WG};
    pl_vk_grid(((uint64_t)(rows * n) + PL_VK_WG - 1) / PL_VK_WG, grid);
    pl_vk_dispatch(vc, "elementwise", spec, 1, &pc, sizeof pc, grid, rd, 2, &wr, 1);
}

/* y[t] = the sum over slots j, in order, of w[t][j] d[t][j] */
static void moe_sum(pl_vk_compute *vc, VkDeviceAddress da, VkDeviceAddress wa, VkDeviceAddress ya, int64_t n_tok,
                    int64_t n_used, int64_t n_out) {
    pl_vk_elementwise_pc pc = {
        .n = (uint32_t)(n_tok * n_out), .row_n = (uint32_t)n_out, .op = 5, .k = (uint32_t)n_used};
    pl_vk_put_addr(pc.a, da);
    pl_vk_put_addr(pc.b, wa);
    pl_vk_put_addr(pc.y, ya);
    const size_t dbytes = (size_t)(n_tok * n_used * n_out) * 4, wbytes = (size_t)(n_tok * n_used) * 4;
    const pl_vk_range rd[2] = {{da, da + dbytes}, {wa, wa + wbytes}}, wr = {ya, ya + (size_t)(n_tok * n_out) * 4};
    uint32_t g[3], spec[1] = {PL_VK_WG};
    pl_vk_grid(((uint64_t)(n_tok * n_out) + PL_VK_WG - 1) / PL_VK_WG, g);
    pl_vk_dispatch(vc, "elementwise", spec, 1, &pc, sizeof pc, g, rd, 2, &wr, 1);
}

/* ---- the experts -------------------------------------------------------------- */

/* The pairs grouped by expert into the table (moe_group.comp). */
static void group_pairs(pl_vk_compute *vc, VkDeviceAddress ia, int64_t pairs, int64_t n_expert, VkDeviceAddress ta,
                        size_t tbytes) {
    struct {
        uint32_t ids[2], table[2];
        uint32_t n_pairs, n_expert, list;
    } pc = {.n_pairs = (uint32_t)pairs, .n_expert = (uint32_t)n_expert,
            .list = (uint32_t)(4 + 4 * max_tiles(pairs, n_expert))};
    pl_vk_put_addr(pc.ids, ia);
    pl_vk_put_addr(pc.table, ta);
    const pl_vk_range rd = {ia, ia + (size_t)pairs * 4}, wr = {ta, ta + tbytes};
    const uint32_t g[3] = {1, 1, 1};
    pl_vk_dispatch(vc, "moe_group", NULL, 0, &pc, sizeof pc, g, &rd, 1, &wr, 1);
}

static bool fits(pl_vk_compute *vc, const pl_moe_ffn_weights *e, int64_t n_used, int64_t n_tok) {
    const int64_t pairs = n_tok * n_used, n_ff = e->gate->n_out;
    const char *why = NULL;
    if (!vc->moe_gu) why = "the instance was reserved for a dense model (moe_n_used 0)";
    else if (pairs > vc->moe_pairs || n_ff > vc->lim.moe_n_ff || e->down->n_out > vc->lim.max_in ||
             e->gate->n_in > vc->lim.max_in)
        why = "it exceeds the reserved scratch";
    else if (e->gate->n_expert > PL_MAX_EXPERTS) why = "more experts than the grouping holds";
    else if (pl_vk_moe_grouped(vc, n_tok, n_used, e->gate->n_expert) ? max_tiles(pairs, e->gate->n_expert) > 65535
                                                                       : pairs > 65535)
        why = "too many pairs for one grid";
    if (!why) return true;
    pl_compute_fail(&vc->base, pl_fail(POCKETLLM_ERR_INTERNAL,
                                       "vulkan: moe_ffn of %lld tokens x %lld experts of %lld x %lld (%lld experts, "
                                       "ff %lld): %s",
                                       (long long)n_tok, (long long)n_used, (long long)e->gate->n_in,
                                       (long long)e->down->n_out, (long long)e->gate->n_expert, (long long)n_ff, why));
    return false;
}

void pl_vk_moe_ffn(pl_compute *c, const pl_moe_ffn_weights *e, const float *x, const int32_t *ids, const float *w,
                   int64_t n_used, int64_t n_tok, float *y, void *work, size_t work_bytes) {
    (void)work, (void)work_bytes; /* the device keeps its products in its own scratch */
    pl_vk_compute *vc = pl_vkc(c);
    if (c->status || n_tok <= 0) return;
    pocketllm_status st = pl_moe_ffn_check(e, n_used);
    if (st) {
        pl_compute_fail(c, st);
        return;
    }
    if (!fits(vc, e, n_used, n_tok)) return;
    const int64_t pairs = n_tok * n_used, n_ff = e->gate->n_out, n_out = e->down->n_out;
    const VkDeviceAddress ia = pl_vk_operand(vc, ids, (size_t)pairs * 4, "moe_ffn");
    const VkDeviceAddress wa = pl_vk_operand(vc, w, (size_t)pairs * 4, "moe_ffn");
    const VkDeviceAddress ya = pl_vk_operand(vc, y, (size_t)(n_tok * n_out) * 4, "moe_ffn");
    float *g = vc->moe_gu, *u = vc->moe_gu + vc->moe_pairs * vc->lim.moe_n_ff, *d = vc->moe_d;
    const VkDeviceAddress da = pl_vk_operand(vc, d, (size_t)(pairs * n_out) * 4, "moe_ffn");
    if (c->status) return;

    pl_vk_moe_rows rows = {.route = ia, .route_bytes = (size_t)pairs * 4, .n_pairs = pairs,
                           .x_div = (uint32_t)n_used,
                           .grouped = pl_vk_moe_grouped(vc, n_tok, n_used, e->gate->n_expert)};
    if (rows.grouped) {
        const size_t tbytes = (size_t)table_words(pairs, e->gate->n_expert) * 4;
        const VkDeviceAddress ta = pl_vk_operand(vc, vc->moe_tab, tbytes, "moe_ffn");
        if (c->status) return;
        group_pairs(vc, ia, pairs, e->gate->n_expert, ta, tbytes);
        rows.route = ta, rows.route_bytes = tbytes;
        rows.n_tiles = (uint32_t)max_tiles(pairs, e->gate->n_expert);
    }

    if (c->observe_mul_mat_id) {
        c->observe_mul_mat_id(c->observe_user, c, e->gate, x, 1, ids, n_used, n_tok);
        if (!c->status) c->observe_mul_mat_id(c->observe_user, c, e->up, x, 1, ids, n_used, n_tok);
        if (c->status) return;
    }
    const pl_weight *gu[2] = {e->gate, e->up};
    float *const gu_y[2] = {g, u};
    pl_vk_mul_mat_rows(c, 2, gu, x, n_tok, gu_y, &rows);
    /* h = silu(g) u, over g: the down products' input rows */
    c->ops->silu_mul(c, g, u, g, pairs * n_ff);
    if (c->observe_mul_mat_id && !c->status) {
        c->observe_mul_mat_id(c->observe_user, c, e->down, g, n_used, ids, n_used, n_tok);
        if (c->status) return;
    }
    rows.x_div = 1;
    pl_vk_mul_mat_rows(c, 1, &e->down, g, pairs, &d, &rows);
    if (!c->status) moe_sum(vc, da, wa, ya, n_tok, n_used, n_out);
}
