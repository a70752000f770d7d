/*
 * vk_compute.c -- the Vulkan backend's compute instance: memory the graph
 * addresses (device buffers under key ranges), uploads and downloads, and
 * the small ops (norms, elementwise, GELU, softmax, argmax) and the audio
 * tower's (exact GELU, im2col, transpose).  The matrix ops and
 * attention are in vk_ops_matmul.c and vk_ops_attention.c.
 */
#include <stdlib.h>
#include <string.h>

#include "backend/vulkan/vk_compute.h"
#include "ops/ref.h"
#include "ops/ops.h"
#include "base/error.h"
#include "quant/types.h"

#define PL_VK_RING_BYTES ((size_t)16 << 20)
#define PL_VK_READBACK_MAX ((size_t)32 << 20)

/* ---- memory ------------------------------------------------------------- */

static void *vk_alloc(pl_compute *c, size_t bytes) {
    return pl_vk_alloc_keyed(pl_vkc(c)->d, bytes, "session memory (KV cache, activations, logits)");
}

static void vk_release(pl_compute *c, void *p) {
    pl_vk_compute *vc = pl_vkc(c);
    if (!p) return;
    /* commands recorded or running may still use it */
    pl_vk_sync(vc);
    pl_vk_free_keyed(vc->d, p);
}

static void vk_upload(pl_compute *c, void *dst, const void *src, size_t bytes) {
    pl_vk_compute *vc = pl_vkc(c);
    pl_vk_buffer *b;
    size_t off;
    if (c->status) return;
    if (!pl_vk_resolve(vc->d, dst, bytes, &b, &off)) {
        pl_vk_operand(vc, dst, bytes, "upload");
        return;
    }
    const size_t piece = vc->ring->bytes / 2;
    for (size_t done = 0; done < bytes && !c->status;) {
        const size_t n = bytes - done < piece ? bytes - done : piece;
        const VkDeviceAddress a = pl_vk_ring_put(vc, (const char *)src + done, n);
        if (!a) return;
        pl_vk_copy(vc, vc->ring->buf, (size_t)(a - vc->ring->addr), a, b->buf, off + done, b->addr + off + done, n);
        done += n;
    }
}

static void vk_download(pl_compute *c, void *dst, const void *src, size_t bytes) {
    pl_vk_compute *vc = pl_vkc(c);
    pl_vk_buffer *b;
    size_t off;
    if (c->status) return;
    if (!pl_vk_resolve(vc->d, src, bytes, &b, &off)) {
        pl_vk_operand(vc, src, bytes, "download");
        return;
    }
    if (!vc->readback || (vc->readback->bytes < bytes && vc->readback->bytes < PL_VK_READBACK_MAX)) {
        pl_vk_sync(vc);
        pl_vk_buffer_free(vc->d, vc->readback);
        vc->readback = NULL;
        pocketllm_status st = pl_vk_buffer_new(vc->d, bytes < PL_VK_READBACK_MAX ? bytes : PL_VK_READBACK_MAX,
                                               PL_VK_MEM_READBACK, "the readback buffer", &vc->readback);
        if (st) {
            pl_compute_fail(c, st);
            return;
        }
    }
    pl_vk_buffer *rb = vc->readback;
    for (size_t done = 0; done < bytes && !c->status;) {
        const size_t n = bytes - done < rb->bytes ? bytes - done : rb->bytes;
        pl_vk_copy(vc, b->buf, off + done, b->addr + off + done, rb->buf, 0, rb->addr, n);
        pl_vk_sync(vc);
        if (c->status) return;
        if (!rb->coherent) {
            VkMappedMemoryRange mr = {.sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE,
                                      .memory = rb->mem,
                                      .offset = 0,
                                      .size = VK_WHOLE_SIZE};
            vc->d->fn.vkInvalidateMappedMemoryRanges(vc->d->dev, 1, &mr);
        }
        memcpy((char *)dst + done, rb->mapped, n);
        done += n;
    }
}

static pocketllm_status vk_reserve(pl_compute *c, const pl_compute_limits *lim) {
    pl_vk_compute *vc = pl_vkc(c);
    pl_vk_sync(vc);
    pl_vk_buffer_free(vc->d, vc->act);
    pl_vk_buffer_free(vc->d, vc->scores);
    pl_vk_moe_release(vc);
    vc->act = vc->scores = NULL;
    vc->act_src = NULL;
    c->reserved_bytes = 0;
    uint64_t elems = (uint64_t)lim->n_batch * (uint64_t)lim->max_in;
    /* the down products of moe_ffn take n_used rows of n_ff per token */
    const uint64_t moe_elems = (uint64_t)lim->n_batch * (uint64_t)lim->moe_n_used * (uint64_t)lim->moe_n_ff;
    if (moe_elems > elems) elems = moe_elems;
    vc->act_elems = elems;
    /* qs bytes, a float per 32 and per 16 elements (+ alignment) */
    vc->act_d_off = (size_t)((elems + 255) & ~(uint64_t)255);
    vc->act_s_off = vc->act_d_off + (size_t)((elems / 32 * 4 + 255) & ~(uint64_t)255);
    size_t act_bytes = vc->act_s_off + (size_t)(elems / 16 * 4) + 256;
    /* or the activations of an f16/bf16 product, rounded, as floats */
    if (act_bytes < elems * 4 + 256) act_bytes = (size_t)(elems * 4 + 256);
    uint64_t sc = (uint64_t)lim->n_ctx * 4 * 64;
    if (sc < ((uint64_t)1 << 20)) sc = (uint64_t)1 << 20;
    if (sc > ((uint64_t)64 << 20)) sc = (uint64_t)64 << 20;
    pocketllm_status st = pl_vk_buffer_new(vc->d, act_bytes, PL_VK_MEM_DEVICE, "the activation scratch", &vc->act);
    if (!st) st = pl_vk_buffer_new(vc->d, (size_t)sc, PL_VK_MEM_DEVICE, "the attention scratch", &vc->scores);
    if (!st) st = pl_vk_moe_reserve(vc, lim);
    if (st) return st;
    vc->lim = *lim;
    c->reserved_bytes += vc->act->bytes + vc->scores->bytes;
    return POCKETLLM_OK;
}

/* ---- small ops ------------------------------------------------------------ */

static void wg_spec(uint32_t *spec, uint32_t wg) { spec[0] = wg; }

static void elementwise(pl_vk_compute *vc, int op, const float *a, const float *b, float *y, int64_t n,
                        int64_t b_n, int64_t row_n, float s, const char *name) {
    pl_vk_elementwise_pc pc = {.n = (uint32_t)n, .row_n = (uint32_t)row_n, .op = (uint32_t)op, .s = s};
    const VkDeviceAddress aa = pl_vk_operand(vc, a, (size_t)n * 4, name);
    const VkDeviceAddress ba = b ? pl_vk_operand(vc, b, (size_t)b_n * 4, name) : aa;
    const VkDeviceAddress ya = pl_vk_operand(vc, y, (size_t)n * 4, name);
    if (vc->base.status || n == 0) return;
    pl_vk_put_addr(pc.a, aa);
    pl_vk_put_addr(pc.b, ba);
    pl_vk_put_addr(pc.y, ya);
    const pl_vk_range rd[2] = {{aa, aa + (size_t)n * 4}, {ba, ba + (size_t)(b ? b_n : 0) * 4}};
    const pl_vk_range wr = {ya, ya + (size_t)n * 4};
    uint32_t g[3], spec[1];
    wg_spec(spec, PL_VK_WG);
    pl_vk_grid(((uint64_t)n + PL_VK_WG - 1) / PL_VK_WG, g);
    pl_vk_dispatch(vc, "elementwise", spec, 1, &pc, sizeof pc, g, rd, 2, &wr, 1);
}

static void vk_add(pl_compute *c, const float *a, const float *b, float *y, int64_t rows, int64_t n, int64_t b_rows) {
    const bool bc = rows > 1 && b_rows == 1;
    elementwise(pl_vkc(c), 0, a, b, y, rows * n, bc ? n : rows * n, bc ? n : 0, 0.0f, "add");
}

static void vk_mul(pl_compute *c, const float *a, const float *b, float *y, int64_t rows, int64_t n, int64_t b_rows) {
    const bool bc = rows > 1 && b_rows == 1;
    elementwise(pl_vkc(c), 1, a, b, y, rows * n, bc ? n : rows * n, bc ? n : 0, 0.0f, "mul");
}

static void vk_scale(pl_compute *c, const float *x, float s, float *y, int64_t n) {
    elementwise(pl_vkc(c), 2, x, NULL, y, n, 0, 0, s, "scale");
}

static void vk_silu_mul(pl_compute *c, const float *g, const float *u, float *y, int64_t n) {
    elementwise(pl_vkc(c), 3, g, u, y, n, n, 0, 0.0f, "silu_mul");
}

/* A work group a row for these ops: 64 invocations for short rows (the
 * per-head norms of qwen3), 256 otherwise. */
static uint32_t row_wg(int64_t n) { return n <= 64 ? 64 : 256; }

static void vk_layer_norm(pl_compute *c, const float *x, const float *w, const float *b, float *y, int64_t rows,
                          int64_t n, float eps) {
    pl_vk_compute *vc = pl_vkc(c);
    struct {
        uint32_t x[2], w[2], b[2], y[2];
        uint32_t n, has_w, has_b;
        float eps;
    } pc = {.n = (uint32_t)n, .has_w = w != NULL, .has_b = b != NULL, .eps = eps};
    const size_t bytes = (size_t)(rows * n) * 4;
    const VkDeviceAddress xa = pl_vk_operand(vc, x, bytes, "layer_norm");
    const VkDeviceAddress wa = w ? pl_vk_operand(vc, w, (size_t)n * 4, "layer_norm") : xa;
    const VkDeviceAddress ba = b ? pl_vk_operand(vc, b, (size_t)n * 4, "layer_norm") : xa;
    const VkDeviceAddress ya = pl_vk_operand(vc, y, bytes, "layer_norm");
    if (c->status || rows == 0 || n == 0) return;
    pl_vk_put_addr(pc.x, xa);
    pl_vk_put_addr(pc.w, wa);
    pl_vk_put_addr(pc.b, ba);
    pl_vk_put_addr(pc.y, ya);
    const pl_vk_range rd[3] = {{xa, xa + bytes}, {wa, wa + (w ? (size_t)n * 4 : 0)}, {ba, ba + (b ? (size_t)n * 4 : 0)}};
    const pl_vk_range wr = {ya, ya + bytes};
    uint32_t g[3], spec[1] = {row_wg(n)};
    pl_vk_grid((uint64_t)rows, g);
    pl_vk_dispatch(vc, "layer_norm", spec, 1, &pc, sizeof pc, g, rd, 3, &wr, 1);
}

/* gelu's table, the reference's own (pl_gelu_f16_table: f16 bits by the
 * f16 bits of x), copied to the device on first use: the device then gives
 * the reference's values whatever its own tanh does. */
static VkDeviceAddress gelu_table(pl_vk_compute *vc) {
    if (vc->gelu_tab) return vc->gelu_tab->addr;
    const size_t bytes = 65536 * sizeof(uint16_t);
    pocketllm_status st = pl_vk_buffer_new(vc->d, bytes, PL_VK_MEM_DEVICE, "gelu's table", &vc->gelu_tab);
    if (st) {
        pl_compute_fail(&vc->base, st);
        return 0;
    }
    const VkDeviceAddress a = pl_vk_ring_put(vc, pl_gelu_f16_table(), bytes);
    if (!a) {
        pl_vk_buffer_free(vc->d, vc->gelu_tab);
        vc->gelu_tab = NULL;
        return 0;
    }
    pl_vk_copy(vc, vc->ring->buf, (size_t)(a - vc->ring->addr), a, vc->gelu_tab->buf, 0, vc->gelu_tab->addr, bytes);
    return vc->gelu_tab->addr;
}

static void vk_gelu(pl_compute *c, const float *x, float *y, int64_t n) {
    pl_vk_compute *vc = pl_vkc(c);
    struct {
        uint32_t x[2], y[2], table[2];
        uint32_t n;
    } pc = {.n = (uint32_t)n};
    const VkDeviceAddress xa = pl_vk_operand(vc, x, (size_t)n * 4, "gelu");
    const VkDeviceAddress ya = pl_vk_operand(vc, y, (size_t)n * 4, "gelu");
    const VkDeviceAddress ta = c->status || n <= 0 ? 0 : gelu_table(vc);
    if (c->status || n <= 0) return;
    pl_vk_put_addr(pc.x, xa);
    pl_vk_put_addr(pc.y, ya);
    pl_vk_put_addr(pc.table, ta);
    const pl_vk_range rd[2] = {{xa, xa + (size_t)n * 4}, {ta, ta + 65536 * 2}};
    const pl_vk_range wr = {ya, ya + (size_t)n * 4};
    uint32_t g[3], spec[1] = {PL_VK_WG};
    pl_vk_grid(((uint64_t)n + PL_VK_WG - 1) / PL_VK_WG, g);
    pl_vk_dispatch(vc, "gelu", spec, 1, &pc, sizeof pc, g, rd, 2, &wr, 1);
}

/* ---- the audio tower's ops ----------------------------------------------- */

/* a flat index of one invocation per value: the shaders count in 32 bits */
static bool fits_u32(pl_vk_compute *vc, int64_t n, const char *op) {
    if (n >= 0 && n < (int64_t)UINT32_MAX) return true;
    pl_compute_fail(&vc->base, pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "vulkan: %s of %lld values (at most 2^32)", op,
                                       (long long)n));
    return false;
}

static void vk_gelu_erf(pl_compute *c, const float *x, float *y, int64_t n) {
    pl_vk_compute *vc = pl_vkc(c);
    struct {
        uint32_t x[2], y[2];
        uint32_t n;
    } pc = {.n = (uint32_t)n};
    if (!fits_u32(vc, n, "gelu_erf")) return;
    const VkDeviceAddress xa = pl_vk_operand(vc, x, (size_t)n * 4, "gelu_erf");
    const VkDeviceAddress ya = pl_vk_operand(vc, y, (size_t)n * 4, "gelu_erf");
    if (c->status || n <= 0) return;
    pl_vk_put_addr(pc.x, xa);
    pl_vk_put_addr(pc.y, ya);
    const pl_vk_range rd = {xa, xa + (size_t)n * 4}, wr = {ya, ya + (size_t)n * 4};
    uint32_t g[3], spec[1] = {PL_VK_WG};
    pl_vk_grid(((uint64_t)n + PL_VK_WG - 1) / PL_VK_WG, g);
    pl_vk_dispatch(vc, "gelu_erf", spec, 1, &pc, sizeof pc, g, &rd, 1, &wr, 1);
}

static void vk_im2col(pl_compute *c, const pl_im2col_params *p, const float *x, float *y) {
    pl_vk_compute *vc = pl_vkc(c);
    const int64_t oh = pl_im2col_out_h(p), ow = pl_im2col_out_w(p);
    const int64_t n_in = p->n * p->h * p->w * p->c_in, n_out = p->n * oh * ow * p->c_in * p->kh * p->kw;
    if (!fits_u32(vc, n_in, "im2col") || !fits_u32(vc, n_out, "im2col")) return;
    struct {
        uint32_t x[2], y[2];
        uint32_t c_in, h, w, oh, ow, kh, kw, sh, sw, ph, pw, round_f16, n_out;
    } pc = {.c_in = (uint32_t)p->c_in, .h = (uint32_t)p->h, .w = (uint32_t)p->w, .oh = (uint32_t)oh, .ow = (uint32_t)ow,
            .kh = (uint32_t)p->kh, .kw = (uint32_t)p->kw, .sh = (uint32_t)p->sh, .sw = (uint32_t)p->sw,
            .ph = (uint32_t)p->ph, .pw = (uint32_t)p->pw, .round_f16 = p->round_f16, .n_out = (uint32_t)n_out};
    const VkDeviceAddress xa = pl_vk_operand(vc, x, (size_t)n_in * 4, "im2col");
    const VkDeviceAddress ya = pl_vk_operand(vc, y, (size_t)n_out * 4, "im2col");
    if (c->status) return;
    pl_vk_put_addr(pc.x, xa);
    pl_vk_put_addr(pc.y, ya);
    const pl_vk_range rd = {xa, xa + (size_t)n_in * 4}, wr = {ya, ya + (size_t)n_out * 4};
    uint32_t g[3], spec[1] = {PL_VK_WG};
    pl_vk_grid(((uint64_t)n_out + PL_VK_WG - 1) / PL_VK_WG, g);
    pl_vk_dispatch(vc, "im2col", spec, 1, &pc, sizeof pc, g, &rd, 1, &wr, 1);
}

static void vk_transpose(pl_compute *c, const float *x, float *y, int64_t batch, int64_t rows, int64_t cols) {
    pl_vk_compute *vc = pl_vkc(c);
    if (batch <= 0 || rows <= 0 || cols <= 0) return;
    const int64_t n = batch * rows * cols;
    if (!fits_u32(vc, n, "transpose")) return;
    struct {
        uint32_t x[2], y[2];
        uint32_t rows, cols, n;
    } pc = {.rows = (uint32_t)rows, .cols = (uint32_t)cols, .n = (uint32_t)n};
    const VkDeviceAddress xa = pl_vk_operand(vc, x, (size_t)n * 4, "transpose");
    const VkDeviceAddress ya = pl_vk_operand(vc, y, (size_t)n * 4, "transpose");
    if (c->status) return;
    pl_vk_put_addr(pc.x, xa);
    pl_vk_put_addr(pc.y, ya);
    const pl_vk_range rd = {xa, xa + (size_t)n * 4}, wr = {ya, ya + (size_t)n * 4};
    uint32_t g[3], spec[1] = {PL_VK_WG};
    pl_vk_grid(((uint64_t)n + PL_VK_WG - 1) / PL_VK_WG, g);
    pl_vk_dispatch(vc, "transpose", spec, 1, &pc, sizeof pc, g, &rd, 1, &wr, 1);
}

static void vk_rms_norm(pl_compute *c, const float *x, const float *w, float *y, int64_t rows, int64_t n, float eps) {
    pl_vk_compute *vc = pl_vkc(c);
    struct {
        uint32_t x[2], w[2], y[2];
        uint32_t n, has_w;
        float eps;
    } pc = {.n = (uint32_t)n, .has_w = w != NULL, .eps = eps};
    const size_t bytes = (size_t)(rows * n) * 4;
    const VkDeviceAddress xa = pl_vk_operand(vc, x, bytes, "rms_norm");
    const VkDeviceAddress wa = w ? pl_vk_operand(vc, w, (size_t)n * 4, "rms_norm") : xa;
    const VkDeviceAddress ya = pl_vk_operand(vc, y, bytes, "rms_norm");
    if (c->status || rows == 0) return;
    pl_vk_put_addr(pc.x, xa);
    pl_vk_put_addr(pc.w, wa);
    pl_vk_put_addr(pc.y, ya);
    const pl_vk_range rd[2] = {{xa, xa + bytes}, {wa, wa + (w ? (size_t)n * 4 : 0)}};
    const pl_vk_range wr = {ya, ya + bytes};
    uint32_t g[3], spec[1] = {row_wg(n)};
    pl_vk_grid((uint64_t)rows, g);
    pl_vk_dispatch(vc, "rms_norm", spec, 1, &pc, sizeof pc, g, rd, 2, &wr, 1);
}

static void softmax_rows(pl_vk_compute *vc, const float *x, float *y, int64_t rows, int64_t n) {
    struct {
        uint32_t x[2], y[2];
        uint32_t n;
    } pc = {.n = (uint32_t)n};
    const size_t bytes = (size_t)(rows * n) * 4;
    const VkDeviceAddress xa = pl_vk_operand(vc, x, bytes, "softmax");
    const VkDeviceAddress ya = pl_vk_operand(vc, y, bytes, "softmax");
    if (vc->base.status || rows == 0) return;
    pl_vk_put_addr(pc.x, xa);
    pl_vk_put_addr(pc.y, ya);
    const pl_vk_range rd = {xa, xa + bytes}, wr = {ya, ya + bytes};
    uint32_t g[3], spec[1] = {row_wg(n)};
    pl_vk_grid((uint64_t)rows, g);
    pl_vk_dispatch(vc, "softmax", spec, 1, &pc, sizeof pc, g, &rd, 1, &wr, 1);
}

static void vk_softmax(pl_compute *c, const float *x, float *y, int64_t rows, int64_t n) {
    softmax_rows(pl_vkc(c), x, y, rows, n);
}

/* The index of the largest value, computed on the device: only the index
 * comes back. */
static int64_t vk_argmax(pl_compute *c, const float *x, int64_t n) {
    pl_vk_compute *vc = pl_vkc(c);
    struct {
        uint32_t x[2], out[2];
        uint32_t n;
    } pc = {.n = (uint32_t)n};
    const VkDeviceAddress xa = pl_vk_operand(vc, x, (size_t)n * 4, "argmax");
    const int32_t zero = 0;
    const VkDeviceAddress oa = pl_vk_ring_put(vc, &zero, sizeof zero);
    if (c->status || n <= 0) return 0;
    pl_vk_put_addr(pc.x, xa);
    pl_vk_put_addr(pc.out, oa);
    const pl_vk_range rd = {xa, xa + (size_t)n * 4}, wr = {oa, oa + 4};
    uint32_t g[3] = {1, 1, 1}, spec[1] = {1024};
    pl_vk_dispatch(vc, "argmax", spec, 1, &pc, sizeof pc, g, &rd, 1, &wr, 1);
    pl_vk_sync(vc);
    if (c->status) return 0;
    int32_t r;
    memcpy(&r, (const char *)vc->ring->mapped + (oa - vc->ring->addr), sizeof r);
    return r;
}

/* ---- the instance ------------------------------------------------------------ */

static void vk_free(pl_compute *c) {
    pl_vk_compute *vc = pl_vkc(c);
    if (!vc) return;
    pl_vk_device *d = vc->d;
    if (vc->recording || vc->in_flight) pl_vk_sync(vc);
    if (vc->profile) pl_vk_profile_print(vc);
    pl_vk_buffer_free(d, vc->ring);
    pl_vk_buffer_free(d, vc->readback);
    pl_vk_buffer_free(d, vc->act);
    pl_vk_buffer_free(d, vc->scores);
    pl_vk_buffer_free(d, vc->gelu_tab);
    pl_vk_moe_release(vc);
    if (vc->fence) d->fn.vkDestroyFence(d->dev, vc->fence, NULL);
    if (vc->pool) d->fn.vkDestroyCommandPool(d->dev, vc->pool, NULL);
    free(vc->rope_pos);
    free(vc);
}

static const pl_compute_ops vk_ops = {
    .free = vk_free,
    .reserve = vk_reserve,
    .alloc = vk_alloc,
    .release = vk_release,
    .upload = vk_upload,
    .download = vk_download,
    .get_rows = pl_vk_get_rows,
    .mul_mat = pl_vk_mul_mat,
    .mul_mat_multi = pl_vk_mul_mat_multi,
    .rms_norm = vk_rms_norm,
    .add = vk_add,
    .mul = vk_mul,
    .scale = vk_scale,
    .silu_mul = vk_silu_mul,
    .layer_norm = vk_layer_norm,
    .gelu = vk_gelu,
    .softmax = vk_softmax,
    .rope = pl_vk_rope,
    .kv_store = pl_vk_kv_store,
    .attention = pl_vk_attention,
    .argmax = vk_argmax,
    .gelu_erf = vk_gelu_erf,
    .im2col = vk_im2col,
    .transpose = vk_transpose,
    .moe_route = pl_vk_moe_route,
    .moe_ffn = pl_vk_moe_ffn,
    .sigmoid_gate = pl_vk_sigmoid_gate,
};

pocketllm_status pl_vk_compute_new(pl_device *dev, int n_threads, pl_compute **out) {
    (void)n_threads;
    *out = NULL;
    pl_vk_device *d = (pl_vk_device *)dev;
    pl_vk_compute *vc = calloc(1, sizeof *vc);
    if (!vc) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    vc->base.ops = &vk_ops;
    vc->base.backend = "vulkan";
    vc->base.device_memory = true;
    vc->base.kv_packed = true; /* kv_store_q.comp and attention.comp read every KV type */
    vc->d = d;
    const char *prof = getenv("POCKETLLM_VK_PROFILE");
    vc->profile = prof && strcmp(prof, "1") == 0;
    const pl_vk_fns *fn = &d->fn;
    VkCommandPoolCreateInfo pi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                  .flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT,
                                  .queueFamilyIndex = d->caps.compute_queue_family};
    VkResult r = fn->vkCreateCommandPool(d->dev, &pi, NULL, &vc->pool);
    pocketllm_status st = POCKETLLM_OK;
    if (r != VK_SUCCESS) {
        st = pl_vk_fail(r, "vkCreateCommandPool");
        goto fail;
    }
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = vc->pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
    if ((r = fn->vkAllocateCommandBuffers(d->dev, &ai, &vc->cmd)) != VK_SUCCESS) {
        st = pl_vk_fail(r, "vkAllocateCommandBuffers");
        goto fail;
    }
    VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if ((r = fn->vkCreateFence(d->dev, &fi, NULL, &vc->fence)) != VK_SUCCESS) {
        st = pl_vk_fail(r, "vkCreateFence");
        goto fail;
    }
    if ((st = pl_vk_buffer_new(d, PL_VK_RING_BYTES, PL_VK_MEM_UPLOAD, "the input ring", &vc->ring))) goto fail;
    *out = &vc->base;
    return POCKETLLM_OK;
fail:
    vk_free(&vc->base);
    return st;
}

bool pl_vk_supports(pl_op op, uint32_t type) {
    const pl_op_desc *o = pl_op_get(op);
    if (!o) return false;
    return o->has_weight ? pl_vk_weight_type_ok(type) : true;
}
