/*
 * vk_ops_matmul.c -- the ops with a weight operand on the Vulkan backend:
 * embedding rows and the matrix product, for every weight type the build
 * has shaders for, and the expert products of mixture-of-experts layers
 * (the same shaders in their expert mode, moe.glsl; vk_ops_moe.c drives
 * them).  Weights are read where they were uploaded, in their GGUF
 * blocks; the shaders decode them as they go.
 *
 * Quantized weights meet activations rounded to their vec_dot type's
 * 8-bit blocks (quant_act.comp, as the reference and llama.cpp's CPU do),
 * so the integer products are the reference's; float weights meet
 * activations rounded to their own type.
 */
#include <stdio.h>
#include <string.h>

#include "backend/vulkan/vk_compute.h"
#include "base/error.h"
#include "quant/types.h"

static bool is_float(uint32_t t) { return t == PL_TYPE_F32 || t == PL_TYPE_F16 || t == PL_TYPE_BF16; }

bool pl_vk_weight_type_ok(uint32_t type) {
    const pl_type_traits *t = pl_type_get(type);
    if (!t || !t->block) return false;
    char name[64];
    snprintf(name, sizeof name, "matvec_%s", t->name);
    if (!pl_vk_shader_exists(name)) return false;
    snprintf(name, sizeof name, "get_rows_%s", t->name);
    return pl_vk_shader_exists(name);
}

/* The weight's address split into a 4-aligned address and a byte offset;
 * bytes: what the shaders may read (every expert of a 3-D tensor). */
static bool weight_addr(pl_vk_compute *vc, const pl_weight *w, const char *op, VkDeviceAddress *a, uint32_t *off,
                        size_t *bytes) {
    *bytes = (size_t)w->n_out * w->row_bytes;
    if (w->n_expert > 0) *bytes += (size_t)(w->n_expert - 1) * w->expert_bytes;
    if (*bytes > UINT32_MAX - 64) {
        pl_compute_fail(&vc->base, pl_fail(POCKETLLM_ERR_UNSUPPORTED,
                                           "vulkan: %s: weight %s is %zu bytes; the shaders address at most 4 GiB a tensor",
                                           op, w->name, *bytes));
        return false;
    }
    const VkDeviceAddress full = pl_vk_operand(vc, w->data, *bytes, op);
    if (!full) return false;
    *a = full & ~(VkDeviceAddress)3;
    *off = (uint32_t)(full & 3);
    return true;
}

static bool type_ok(pl_vk_compute *vc, const pl_weight *w, const char *op) {
    if (pl_vk_weight_type_ok(w->type)) return true;
    pl_compute_fail(&vc->base, pl_fail(POCKETLLM_ERR_UNSUPPORTED, "vulkan: %s: no shader for %s weights (%s)", op,
                                       pocketllm_type_name(w->type), w->name));
    return false;
}

void pl_vk_get_rows(pl_compute *c, const pl_weight *w, const int32_t *ids, int64_t n, float *y) {
    pl_vk_compute *vc = pl_vkc(c);
    if (c->status || n <= 0 || !type_ok(vc, w, "get_rows")) return;
    VkDeviceAddress wa;
    uint32_t w_off;
    size_t wbytes;
    if (!weight_addr(vc, w, "get_rows", &wa, &w_off, &wbytes)) return;
    const size_t ybytes = (size_t)(n * w->n_in) * 4;
    const VkDeviceAddress ya = pl_vk_operand(vc, y, ybytes, "get_rows");
    const VkDeviceAddress ia = pl_vk_ring_put(vc, ids, (size_t)n * sizeof *ids);
    if (c->status) return;
    const pl_type_traits *t = pl_type_get(w->type);
    char name[64];
    snprintf(name, sizeof name, "get_rows_%s", t->name);
    const pl_vk_range rd[2] = {{wa, wa + w_off + wbytes}, {ia, ia + (size_t)n * 4}}, wr = {ya, ya + ybytes};
    uint32_t g[3], spec[1] = {PL_VK_WG};
    if (is_float(w->type)) {
        struct {
            uint32_t w[2], ids[2], y[2];
            uint32_t w_off, row_bytes, n_in, n;
        } pc = {.w_off = w_off, .row_bytes = (uint32_t)w->row_bytes, .n_in = (uint32_t)w->n_in, .n = (uint32_t)n};
        pl_vk_put_addr(pc.w, wa);
        pl_vk_put_addr(pc.ids, ia);
        pl_vk_put_addr(pc.y, ya);
        pl_vk_grid(((uint64_t)n * (uint64_t)w->n_in + PL_VK_WG - 1) / PL_VK_WG, g);
        pl_vk_dispatch(vc, name, spec, 1, &pc, sizeof pc, g, rd, 2, &wr, 1);
        return;
    }
    struct {
        uint32_t w[2], ids[2], y[2], tables[2];
        uint32_t w_off, row_bytes, n_in, n;
    } pc = {.w_off = w_off, .row_bytes = (uint32_t)w->row_bytes, .n_in = (uint32_t)w->n_in, .n = (uint32_t)n};
    pl_vk_put_addr(pc.w, wa);
    pl_vk_put_addr(pc.ids, ia);
    pl_vk_put_addr(pc.y, ya);
    pl_vk_put_addr(pc.tables, vc->d->tables->addr);
    pl_vk_grid(((uint64_t)n * (uint64_t)(w->n_in / 32) + PL_VK_WG - 1) / PL_VK_WG, g);
    pl_vk_dispatch(vc, name, spec, 1, &pc, sizeof pc, g, rd, 2, &wr, 1);
}

/* Tokens per work group of the matrix-vector shaders: 1, 2, 4 or 8. */
static uint32_t tokens_per_group(int64_t n_tok) {
    return n_tok >= 8 ? 8 : n_tok >= 4 ? 4 : n_tok >= 2 ? 2 : 1;
}

/* invocations per work group of the matrix-vector shaders */
#define PL_VK_MV_WG 128
/* More tokens than this go through the tiled GEMM (64 x 64 tiles): below
 * it the matrix-vector shaders read each weight row once per 8 tokens. */
#define PL_VK_GEMM_MIN_TOKENS 16
/* shared memory the GEMM shaders take */
#define PL_VK_GEMM_SHARED 24576

bool pl_vk_use_gemm(const pl_vk_compute *vc, int64_t n_tok) {
    return n_tok > PL_VK_GEMM_MIN_TOKENS && vc->d->caps.max_shared >= PL_VK_GEMM_SHARED;
}

/* The grid and specialization of a matrix product of n_tok output rows:
 * the GEMM's 64 x 64 tiles (with experts: a grid row per tile the table
 * may hold), or the matrix-vector shader's ROWS x NT (with experts: a grid
 * row per pair).  Specialization constant 3 is the shaders' expert mode;
 * a plain product leaves it out, so its pipelines are the ones it always
 * had. */
static void mm_shape(const pl_vk_compute *vc, const pl_weight *w, int64_t n_tok, const pl_vk_moe_rows *moe,
                     uint32_t spec[4], uint32_t *n_spec, uint32_t g[3], const char **kind) {
    if (moe ? moe->grouped : pl_vk_use_gemm(vc, n_tok)) {
        spec[0] = 256, spec[1] = spec[2] = 0, spec[3] = 1;
        *n_spec = moe ? 4 : 1;
        g[0] = (uint32_t)((w->n_out + 63) / 64);
        g[1] = moe ? moe->n_tiles : (uint32_t)((n_tok + 63) / 64);
        *kind = "gemm";
    } else {
        /* a row per subgroup of the size the device reports (the shader
         * deals rows to whatever subgroups it gets) */
        const uint32_t nt = moe ? 1 : tokens_per_group(n_tok);
        const uint32_t sg = vc->d->caps.subgroup_size ? vc->d->caps.subgroup_size : 32;
        const uint32_t rows = PL_VK_MV_WG / sg >= 1 ? PL_VK_MV_WG / sg : 1;
        spec[0] = PL_VK_MV_WG, spec[1] = rows, spec[2] = nt, spec[3] = 1;
        *n_spec = moe ? 4 : 3;
        g[0] = (uint32_t)((w->n_out + rows - 1) / rows);
        g[1] = (uint32_t)((n_tok + nt - 1) / nt);
        *kind = "matvec";
    }
    g[2] = 1;
}

/* The expert-mode push constants every product shader ends with
 * (moe.glsl); zeros for a plain product. */
typedef struct moe_pc {
    uint32_t expert_bytes, x_div, n_expert;
} moe_pc;

static moe_pc moe_push(const pl_weight *w, const pl_vk_moe_rows *moe, uint32_t route[2], pl_vk_range *rd) {
    pl_vk_put_addr(route, moe ? moe->route : 0);
    *rd = moe ? (pl_vk_range){moe->route, moe->route + moe->route_bytes} : (pl_vk_range){0, 0};
    if (!moe) return (moe_pc){0, 0, 0};
    return (moe_pc){(uint32_t)w->expert_bytes, moe->x_div, (uint32_t)w->n_expert};
}

/* x rounded to f16 or bf16 (the weight's type) into the act scratch, as
 * the reference rounds it before its products; its address there. */
static VkDeviceAddress round_act(pl_vk_compute *vc, uint32_t type, VkDeviceAddress xa, int64_t n) {
    const VkDeviceAddress ya = vc->act->addr;
    struct {
        uint32_t x[2], y[2];
        uint32_t n;
    } pc = {.n = (uint32_t)n};
    pl_vk_put_addr(pc.x, xa);
    pl_vk_put_addr(pc.y, ya);
    const pl_vk_range rd = {xa, xa + (size_t)n * 4}, wr = {ya, ya + vc->act->bytes};
    uint32_t g[3], spec[1] = {PL_VK_WG};
    pl_vk_grid(((uint64_t)n + PL_VK_WG - 1) / PL_VK_WG, g);
    pl_vk_dispatch(vc, type == PL_TYPE_F16 ? "round_act_f16" : "round_act_bf16", spec, 1, &pc, sizeof pc, g, &rd, 1, &wr,
                   1);
    return ya;
}

/* y (n_y rows) = w x (n_x rows: n_y, or fewer read by several experts'
 * rows) for a float weight. */
static void matvec_float(pl_vk_compute *vc, const pl_weight *w, VkDeviceAddress wa, uint32_t w_off, size_t wbytes,
                         const float *x, int64_t n_x, float *y, int64_t n_y, bool rounded, const pl_vk_moe_rows *moe) {
    const size_t xbytes = (size_t)(n_x * w->n_in) * 4, ybytes = (size_t)(n_y * w->n_out) * 4;
    VkDeviceAddress xa = pl_vk_operand(vc, x, xbytes, "mul_mat");
    const VkDeviceAddress ya = pl_vk_operand(vc, y, ybytes, "mul_mat");
    if (vc->base.status) return;
    if (w->type != PL_TYPE_F32) {
        if ((uint64_t)xbytes > vc->act->bytes) {
            pl_compute_fail(&vc->base, pl_fail(POCKETLLM_ERR_INTERNAL, "vulkan: mul_mat of %lld x %lld exceeds the reserved scratch",
                                               (long long)n_x, (long long)w->n_in));
            return;
        }
        xa = rounded ? vc->act->addr : round_act(vc, w->type, xa, n_x * w->n_in);
    }
    struct {
        uint32_t w[2], x[2], y[2], route[2];
        uint32_t w_off, row_bytes, n_in, n_out, n_tok, wide;
        moe_pc moe;
    } pc = {.w_off = w_off,
            .row_bytes = (uint32_t)w->row_bytes,
            .n_in = (uint32_t)w->n_in,
            .n_out = (uint32_t)w->n_out,
            .n_tok = (uint32_t)n_y,
            .wide = w_off % 4 == 0 && w->row_bytes % 4 == 0 && w->n_in % 4 == 0};
    pl_vk_range rd[3] = {{wa, wa + w_off + wbytes}, {xa, xa + xbytes}}, wr = {ya, ya + ybytes};
    pc.moe = moe_push(w, moe, pc.route, &rd[2]);
    pl_vk_put_addr(pc.w, wa);
    pl_vk_put_addr(pc.x, xa);
    pl_vk_put_addr(pc.y, ya);
    uint32_t spec[4], n_spec, g[3];
    const char *kind;
    mm_shape(vc, w, n_y, moe, spec, &n_spec, g, &kind);
    char name[64];
    snprintf(name, sizeof name, "%s_%s", kind, pl_type_get(w->type)->name);
    pl_vk_dispatch(vc, name, spec, n_spec, &pc, sizeof pc, g, rd, 3, &wr, 1);
}

/* Round x (n_tok rows of n_in) to the 8-bit blocks of activation type at
 * into the act scratch. */
static void quantize_act(pl_vk_compute *vc, uint32_t at, const float *x, int64_t n_in, int64_t n_tok) {
    const size_t xbytes = (size_t)(n_tok * n_in) * 4;
    const VkDeviceAddress xa = pl_vk_operand(vc, x, xbytes, "mul_mat");
    if (vc->base.status) return;
    if ((uint64_t)(n_in * n_tok) > vc->act_elems) {
        pl_compute_fail(&vc->base, pl_fail(POCKETLLM_ERR_INTERNAL, "vulkan: mul_mat of %lld x %lld exceeds the reserved scratch",
                                           (long long)n_tok, (long long)n_in));
        return;
    }
    struct {
        uint32_t x[2], qs[2], d[2], sums[2];
        uint32_t n_in, n_tok;
    } pc = {.n_in = (uint32_t)n_in, .n_tok = (uint32_t)n_tok};
    const VkDeviceAddress base = vc->act->addr;
    pl_vk_put_addr(pc.x, xa);
    pl_vk_put_addr(pc.qs, base);
    pl_vk_put_addr(pc.d, base + vc->act_d_off);
    pl_vk_put_addr(pc.sums, base + vc->act_s_off);
    const pl_vk_range rd = {xa, xa + xbytes}, wr = {base, base + vc->act->bytes};
    /* a work group per 256 elements */
    uint32_t g[3];
    pl_vk_grid(((uint64_t)n_in * (uint64_t)n_tok + 255) / 256, g);
    char name[32];
    snprintf(name, sizeof name, "quant_act_%s", pl_type_get(at)->name);
    pl_vk_dispatch(vc, name, NULL, 0, &pc, sizeof pc, g, &rd, 1, &wr, 1);
}

/* y (n_y rows) = w x from activations already in the act scratch. */
static void matvec_quant(pl_vk_compute *vc, const pl_weight *w, VkDeviceAddress wa, uint32_t w_off, size_t wbytes,
                         float *y, int64_t n_y, const pl_vk_moe_rows *moe) {
    const size_t ybytes = (size_t)(n_y * w->n_out) * 4;
    const VkDeviceAddress ya = pl_vk_operand(vc, y, ybytes, "mul_mat");
    if (vc->base.status) return;
    struct {
        uint32_t w[2], qs[2], d[2], sums[2], y[2], tables[2], route[2];
        uint32_t w_off, row_bytes, n_in, n_out, n_tok;
        moe_pc moe;
    } pc = {.w_off = w_off,
            .row_bytes = (uint32_t)w->row_bytes,
            .n_in = (uint32_t)w->n_in,
            .n_out = (uint32_t)w->n_out,
            .n_tok = (uint32_t)n_y};
    const VkDeviceAddress base = vc->act->addr;
    pl_vk_put_addr(pc.w, wa);
    pl_vk_put_addr(pc.qs, base);
    pl_vk_put_addr(pc.d, base + vc->act_d_off);
    pl_vk_put_addr(pc.sums, base + vc->act_s_off);
    pl_vk_put_addr(pc.y, ya);
    pl_vk_put_addr(pc.tables, vc->d->tables->addr);
    pl_vk_range rd[3] = {{wa, wa + w_off + wbytes}, {base, base + vc->act->bytes}}, wr = {ya, ya + ybytes};
    pc.moe = moe_push(w, moe, pc.route, &rd[2]);
    uint32_t spec[4], n_spec, g[3];
    const char *kind;
    mm_shape(vc, w, n_y, moe, spec, &n_spec, g, &kind);
    char name[64];
    snprintf(name, sizeof name, "%s_%s%s", kind, pl_type_get(w->type)->name, vc->d->no_int_dot ? "_nodot" : "");
    pl_vk_dispatch(vc, name, spec, n_spec, &pc, sizeof pc, g, rd, 3, &wr, 1);
}

static bool check_shape(pl_vk_compute *vc, const pl_weight *w) {
    const pl_type_traits *t = pl_type_get(w->type);
    if (!is_float(w->type) && (w->n_in % 32 || w->n_in % t->block)) {
        pl_compute_fail(&vc->base, pl_fail(POCKETLLM_ERR_UNSUPPORTED, "vulkan: mul_mat: %s rows of %lld are not whole blocks",
                                           w->name, (long long)w->n_in));
        return false;
    }
    return true;
}

void pl_vk_mul_mat_rows(pl_compute *c, int n_w, const pl_weight *const *w, const float *x, int64_t n_tok,
                        float *const *y, const pl_vk_moe_rows *moe) {
    pl_vk_compute *vc = pl_vkc(c);
    if (c->status || n_tok <= 0) return;
    const int64_t n_y = moe ? moe->n_pairs : n_tok;
    uint32_t act_type = UINT32_MAX;
    for (int i = 0; i < n_w; i++) {
        if (!type_ok(vc, w[i], "mul_mat") || !check_shape(vc, w[i])) return;
        VkDeviceAddress wa;
        uint32_t off;
        size_t wbytes;
        if (!weight_addr(vc, w[i], "mul_mat", &wa, &off, &wbytes)) return;
        if (is_float(w[i]->type)) {
            /* x is rounded once for the weights of the same float type */
            matvec_float(vc, w[i], wa, off, wbytes, x, n_tok, y[i], n_y, act_type == w[i]->type, moe);
            act_type = w[i]->type;
            continue;
        }
        /* one conversion of x for every weight of the same activation type */
        const uint32_t at = pl_type_get(w[i]->type)->vec_dot_type;
        if (at != act_type) quantize_act(vc, at, x, w[i]->n_in, n_tok);
        act_type = at;
        matvec_quant(vc, w[i], wa, off, wbytes, y[i], n_y, moe);
    }
}

void pl_vk_mul_mat_multi(pl_compute *c, int n_w, const pl_weight *const *w, const float *x, int64_t n_tok,
                         float *const *y) {
    pl_vk_mul_mat_rows(c, n_w, w, x, n_tok, y, NULL);
}

void pl_vk_mul_mat(pl_compute *c, const pl_weight *w, const float *x, int64_t n_tok, float *y) {
    pl_vk_mul_mat_multi(c, 1, &w, x, n_tok, &y);
}
