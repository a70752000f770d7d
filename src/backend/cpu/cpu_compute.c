/*
 * cpu_compute.c -- the CPU backend instance: memory, scratch, the thread
 * pool, and the drivers of the row-wise ops (norms, elementwise, GELU,
 * softmax, cache store), which split rows or elements over the threads and call the
 * chosen row-kernel table.
 */
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_compute.h"
#include "base/checked.h"
#include "base/error.h"
#include "base/half.h"
#include "base/pages.h"
#include "quant/kv_types.h"
#include "quant/types.h"

/* Work (elements touched, or multiply-adds) of one chunk at least: below
 * twice this an op runs on the calling thread alone, since waking the pool
 * would cost more than it saves.  Above, up to four chunks per thread, so
 * that threads that run can take the share of one that does not. */
#define PL_CPU_CHUNK_WORK 32768

void pl_cpu_parallel(pl_cpu_compute *cc, pl_pool_chunk_fn fn, void *ctx, int64_t work) {
    int64_t n = cc->n_threads == 1 ? 1 : work / PL_CPU_CHUNK_WORK;
    if (n > 4 * (int64_t)cc->n_threads) n = 4 * (int64_t)cc->n_threads;
    if (n < 1) n = 1;
    pl_pool_run_chunks(cc->pool, fn, ctx, (int)n);
}

void pl_cpu_parallel_ranges(pl_cpu_compute *cc, pl_pool_range_fn fn, void *ctx, int64_t n, int64_t work_per_item,
                            int64_t align) {
    /* a grain is about one chunk's work, a multiple of `align` items */
    int64_t grain = work_per_item > 0 ? PL_CPU_CHUNK_WORK / work_per_item : n;
    grain = (grain + align - 1) / align * align;
    if (grain < align) grain = align;
    if (cc->n_threads == 1 || n <= grain) {
        fn(ctx, 0, n, 0);
        return;
    }
    pl_pool_run_ranges(cc->pool, fn, ctx, n, grain);
}

/* 64-byte aligned for whole-cache-line vector access; with `prefault`,
 * a large buffer starts on a page and is faulted in now, not one page at
 * a time inside the decode loop */
static void *host_alloc(size_t bytes, bool prefault) {
    void *p = NULL;
    const bool large = prefault && bytes >= PL_PAGES_LARGE;
    if (posix_memalign(&p, large ? PL_PAGES_ALIGN : 64, bytes ? bytes : 64) != 0) {
        pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory allocating %zu bytes", bytes);
        return NULL;
    }
    if (large) pl_pages_prepare(p, bytes);
    return p;
}

/* what the session asks for (KV caches, the graph's activations): every
 * byte of it is used, so it is faulted in up front */
static void *cpu_alloc(pl_compute *c, size_t bytes) {
    (void)c;
    return host_alloc(bytes, true);
}

static void cpu_release(pl_compute *c, void *p) {
    (void)c;
    free(p);
}

static void cpu_copy(pl_compute *c, void *dst, const void *src, size_t bytes) {
    (void)c;
    memcpy(dst, src, bytes);
}

static pocketllm_status cpu_reserve(pl_compute *c, const pl_compute_limits *lim) {
    pl_cpu_compute *cc = pl_cpu(c);
    uint64_t act, attn, per;
    /* the widest vec_dot type is f32: 4 bytes an element, plus a block's
     * worth of slack for block types; attention's slice: see attn in
     * cpu_compute.h */
    if (!pl_mul_u64((uint64_t)lim->n_batch, (uint64_t)lim->max_in * 4 + 512, &act) ||
        !pl_add_u64((uint64_t)lim->n_ctx * 16, (uint64_t)lim->head_dim * 10 + 128, &per) ||
        !pl_mul_u64(per, (uint64_t)cc->n_threads, &attn) || act > SIZE_MAX / 2 || attn > SIZE_MAX / 2)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "scratch sizes overflow (batch %lld, ctx %lld)",
                       (long long)lim->n_batch, (long long)lim->n_ctx);
    per = (per + 63) & ~(uint64_t)63;
    attn = per * (uint64_t)cc->n_threads;
    /* sized for the widest case (f32 activations, the longest context)
     * and mostly used far less: left to fault in as used */
    void *a = host_alloc((size_t)act, false), *t = host_alloc((size_t)attn, false);
    if (!a || !t) {
        free(a);
        free(t);
        return POCKETLLM_ERR_NO_MEMORY;
    }
    free(cc->act);
    free(cc->attn);
    cc->act = a;
    cc->act_bytes = (size_t)act;
    cc->attn = t;
    cc->attn_stride = (size_t)per;
    cc->lim = *lim;
    c->reserved_bytes = act + attn;
    return pl_cpu_moe_reserve(cc, lim);
}

/* ---- rms_norm --------------------------------------------------------- */

typedef struct {
    pl_cpu_compute *cc;
    const float *x, *w;
    float *y;
    int64_t rows, n;
    float eps;
    const float *b; /* layer_norm's bias */
} norm_job;

static void norm_rows(void *ctx, int chunk, int n_chunks, int thread) {
    norm_job *j = ctx;
    long long lo, hi;
    pl_pool_split(j->rows, chunk, n_chunks, &lo, &hi);
    for (int64_t r = lo; r < hi; r++) {
        const float *x = j->x + r * j->n;
        const float mean = (float)(j->cc->isa->sum_sq(x, j->n) / (double)j->n);
        const float scale = 1.0f / sqrtf(mean + j->eps);
        j->cc->isa->scale_mul(x, scale, j->w, j->y + r * j->n, j->n);
    }
}

static void cpu_rms_norm(pl_compute *c, const float *x, const float *w, float *y, int64_t rows, int64_t n, float eps) {
    norm_job j = {pl_cpu(c), x, w, y, rows, n, eps, NULL};
    pl_cpu_parallel(j.cc, norm_rows, &j, rows * n);
}

/* ---- layer_norm / gelu -------------------------------------------------- */

/* The reference's row arithmetic itself: its two sums are sequential
 * double sums (ggml's), which no reordering may change, and they are a
 * small part of the work next to the matmuls around them. */
static void layer_norm_rows(void *ctx, int chunk, int n_chunks, int thread) {
    (void)thread;
    norm_job *j = ctx;
    long long lo, hi;
    pl_pool_split(j->rows, chunk, n_chunks, &lo, &hi);
    if (hi > lo) pl_ref_layer_norm(j->x + lo * j->n, j->w, j->b, j->y + lo * j->n, hi - lo, j->n, j->eps);
}

static void cpu_layer_norm(pl_compute *c, const float *x, const float *w, const float *b, float *y, int64_t rows,
                           int64_t n, float eps) {
    norm_job j = {pl_cpu(c), x, w, y, rows, n, eps, b};
    pl_cpu_parallel(j.cc, layer_norm_rows, &j, rows * n);
}

/* pl_gelu_f16_table widened to f32 once, so that a lookup is one load */
static float gelu_f32[65536];
static pthread_once_t gelu_once = PTHREAD_ONCE_INIT;

static void gelu_widen(void) {
    const uint16_t *t = pl_gelu_f16_table();
    for (uint32_t h = 0; h < 65536; h++) gelu_f32[h] = pl_f16_to_f32(t[h]);
}

typedef struct {
    pl_cpu_compute *cc;
    const float *x;
    float *y;
    int64_t n;
} gelu_job;

static void gelu_run(void *ctx, int chunk, int n_chunks, int thread) {
    (void)thread;
    gelu_job *j = ctx;
    /* x to f16 by the tier's converter (round to nearest even, bit for bit
     * pl_f32_to_f16: the kv_store test), 256 at a time */
    const pl_act_from_float_fn to_f16 = pl_quant_kernels_tier(PL_TYPE_F16, j->cc->qtier)->act_from_float;
    uint16_t h[256];
    long long lo, hi;
    pl_pool_split(j->n, chunk, n_chunks, &lo, &hi);
    for (int64_t i0 = lo; i0 < hi; i0 += 256) {
        const int64_t m = hi - i0 < 256 ? hi - i0 : 256;
        const float *x = j->x + i0;
        float *y = j->y + i0;
        to_f16(x, h, m);
        for (int64_t i = 0; i < m; i++) y[i] = x[i] <= -10.0f ? 0.0f : x[i] >= 10.0f ? x[i] : gelu_f32[h[i]];
    }
}

static void cpu_gelu(pl_compute *c, const float *x, float *y, int64_t n) {
    pthread_once(&gelu_once, gelu_widen);
    gelu_job j = {pl_cpu(c), x, y, n};
    pl_cpu_parallel(j.cc, gelu_run, &j, n);
}

/* ---- add / mul / scale / silu_mul --------------------------------------- */

typedef struct {
    pl_cpu_compute *cc;
    int op; /* 0 add, 1 mul, 2 scale, 3 silu_mul */
    const float *a, *b;
    float *y;
    float s;
    int64_t rows, n, b_rows;
} ew_job;

static void ew_run(void *ctx, int chunk, int n_chunks, int thread) {
    ew_job *j = ctx;
    const pl_cpu_isa *isa = j->cc->isa;
    if (j->op >= 2 || j->b_rows != 1) {
        /* no broadcast: split the flat elements */
        long long lo, hi;
        pl_pool_split(j->rows * j->n, chunk, n_chunks, &lo, &hi);
        if (hi <= lo) return;
        const float *a = j->a + lo, *b = j->b ? j->b + lo : NULL;
        float *y = j->y + lo;
        const int64_t k = hi - lo;
        switch (j->op) {
        case 0: isa->add(a, b, y, k); break;
        case 1: isa->mul(a, b, y, k); break;
        case 2: isa->scale_mul(a, j->s, NULL, y, k); break;
        default: isa->silu_mul(a, b, y, k); break;
        }
        return;
    }
    /* b is one row for every row of a */
    long long lo, hi;
    pl_pool_split(j->rows, chunk, n_chunks, &lo, &hi);
    for (int64_t r = lo; r < hi; r++) {
        if (j->op == 0) isa->add(j->a + r * j->n, j->b, j->y + r * j->n, j->n);
        else isa->mul(j->a + r * j->n, j->b, j->y + r * j->n, j->n);
    }
}

static void cpu_add(pl_compute *c, const float *a, const float *b, float *y, int64_t rows, int64_t n, int64_t b_rows) {
    ew_job j = {pl_cpu(c), 0, a, b, y, 0, rows, n, rows == 1 ? 0 : b_rows};
    pl_cpu_parallel(j.cc, ew_run, &j, rows * n);
}

static void cpu_mul(pl_compute *c, const float *a, const float *b, float *y, int64_t rows, int64_t n, int64_t b_rows) {
    ew_job j = {pl_cpu(c), 1, a, b, y, 0, rows, n, rows == 1 ? 0 : b_rows};
    pl_cpu_parallel(j.cc, ew_run, &j, rows * n);
}

static void cpu_scale(pl_compute *c, const float *x, float s, float *y, int64_t n) {
    ew_job j = {pl_cpu(c), 2, x, NULL, y, s, 1, n, 0};
    pl_cpu_parallel(j.cc, ew_run, &j, n);
}

static void cpu_silu_mul(pl_compute *c, const float *g, const float *u, float *y, int64_t n) {
    ew_job j = {pl_cpu(c), 3, g, u, y, 0, 1, n, 0};
    pl_cpu_parallel(j.cc, ew_run, &j, n);
}

/* ---- softmax ------------------------------------------------------------ */

typedef struct {
    pl_cpu_compute *cc;
    const float *x;
    float *y;
    int64_t rows, n;
} sm_job;

static void sm_rows(void *ctx, int chunk, int n_chunks, int thread) {
    sm_job *j = ctx;
    const pl_cpu_isa *isa = j->cc->isa;
    long long lo, hi;
    pl_pool_split(j->rows, chunk, n_chunks, &lo, &hi);
    for (int64_t r = lo; r < hi; r++) {
        const float *x = j->x + r * j->n;
        float *y = j->y + r * j->n;
        const double sum = isa->exp_sum(x, isa->max(x, j->n), y, j->n);
        isa->scale_mul(y, (float)(1.0 / sum), NULL, y, j->n);
    }
}

static void cpu_softmax(pl_compute *c, const float *x, float *y, int64_t rows, int64_t n) {
    sm_job j = {pl_cpu(c), x, y, rows, n};
    pl_cpu_parallel(j.cc, sm_rows, &j, rows * n);
}

/* ---- kv_store / argmax -------------------------------------------------- */

typedef struct {
    pl_cpu_compute *cc;
    uint32_t type;
    const float *x;
    void *dst;
    int64_t n;
    pl_kv_encode_fn enc; /* a type other than f16 and f32: its encoder */
    uint32_t block, bytes;
    /* kv_store_heads: tokens, the first one's position, KV heads, values a
     * head, positions a head holds; bytes a head's position takes */
    int64_t n_tok, pos, n_head_kv, head_dim, kv_cap;
    size_t head_bytes;
} kv_job;

/* n values of x into dst, in j->type */
static void kv_encode(const kv_job *j, const float *x, void *dst, int64_t n) {
    if (j->type == PL_TYPE_F16) pl_quant_kernels_tier(PL_TYPE_F16, j->cc->qtier)->act_from_float(x, dst, n);
    else if (j->type == PL_TYPE_F32) memcpy(dst, x, (size_t)n * sizeof(float));
    else j->enc(x, dst, n);
}

/* Whole blocks per chunk: every block is encoded on its own (the types of
 * quant/kv_types.h have no statistics wider than a block). */
static void kv_run(void *ctx, int chunk, int n_chunks, int thread) {
    (void)thread;
    kv_job *j = ctx;
    long long lo, hi;
    pl_pool_split(j->n / j->block, chunk, n_chunks, &lo, &hi);
    if (hi <= lo) return;
    kv_encode(j, j->x + lo * j->block, (uint8_t *)j->dst + (size_t)lo * j->bytes, (hi - lo) * j->block);
}

/* One (KV head, token) row of head_dim values per unit, KV head by KV
 * head: the values kv_run would encode (blocks never straddle heads), at
 * their place in the head-major layout (pl_attn_params.kv_cap). */
static void kv_heads_run(void *ctx, int chunk, int n_chunks, int thread) {
    (void)thread;
    kv_job *j = ctx;
    long long lo, hi;
    pl_pool_split(j->n_head_kv * j->n_tok, chunk, n_chunks, &lo, &hi);
    for (long long u = lo; u < hi; u++) {
        const int64_t h = u / j->n_tok, t = u % j->n_tok;
        uint8_t *dst = (uint8_t *)j->dst + ((size_t)h * (size_t)j->kv_cap + (size_t)(j->pos + t)) * j->head_bytes;
        kv_encode(j, j->x + (t * j->n_head_kv + h) * j->head_dim, dst, j->head_dim);
    }
}

/* A store of n values of type from x to dst (both layouts): enc NULL when
 * the type has no encoder */
static kv_job kv_job_for(pl_compute *c, uint32_t type, const float *x, void *dst, int64_t n) {
    const pl_type_traits *t = pl_type_get(type);
    kv_job j = {pl_cpu(c), type, x, dst, n, pl_kv_encoder(type), t ? t->block : 0, t ? t->bytes : 0, 0, 0, 0, 0, 0, 0};
    /* q8_0 and bf16 are stored with the activation conversion: this tier's */
    if (type == PL_TYPE_Q8_0 || type == PL_TYPE_BF16) j.enc = pl_quant_kernels_tier(type, j.cc->qtier)->act_from_float;
    return j;
}

static void cpu_kv_store(pl_compute *c, uint32_t type, const float *x, void *dst, int64_t n) {
    kv_job j = kv_job_for(c, type, x, dst, n);
    if (!j.enc || n % j.block) {
        pl_fail(POCKETLLM_ERR_INTERNAL, "kv_store: %lld values of type %u", (long long)n, type);
        pl_compute_fail(c, POCKETLLM_ERR_INTERNAL);
        return;
    }
    /* a block costs about block values' worth of the f16 conversion */
    pl_cpu_parallel(j.cc, kv_run, &j, type == PL_TYPE_F16 || type == PL_TYPE_F32 ? n : n * 8);
}

/* kv_store into a head-major cache block (pl_attn_params.kv_cap): x is
 * n_tok rows of n_head_kv heads of head_dim values, stored at positions
 * pos .. pos+n_tok-1 of each head's run of kv_cap positions. */
static void cpu_kv_store_heads(pl_compute *c, uint32_t type, const float *x, void *dst, int64_t n_tok, int64_t pos,
                               int64_t n_head_kv, int64_t head_dim, int64_t kv_cap) {
    kv_job j = kv_job_for(c, type, x, dst, n_tok * n_head_kv * head_dim);
    j.n_tok = n_tok, j.pos = pos, j.n_head_kv = n_head_kv, j.head_dim = head_dim, j.kv_cap = kv_cap;
    j.head_bytes = (size_t)pl_kv_row_bytes(type, head_dim);
    if (!j.enc || head_dim % j.block || n_tok < 0 || pos < 0 || pos + n_tok > kv_cap) {
        pl_fail(POCKETLLM_ERR_INTERNAL, "kv_store: %lld rows at %lld of a head-major cache of %lld (type %u)",
                (long long)n_tok, (long long)pos, (long long)kv_cap, type);
        pl_compute_fail(c, POCKETLLM_ERR_INTERNAL);
        return;
    }
    pl_cpu_parallel(j.cc, kv_heads_run, &j, type == PL_TYPE_F16 || type == PL_TYPE_F32 ? j.n : j.n * 8);
}

static int64_t cpu_argmax(pl_compute *c, const float *x, int64_t n) {
    (void)c;
    int64_t best = 0;
    for (int64_t i = 1; i < n; i++)
        if (x[i] > x[best]) best = i;
    return best;
}

/* ---- the instance ------------------------------------------------------- */

static void cpu_free(pl_compute *c) {
    if (!c) return;
    pl_cpu_compute *cc = pl_cpu(c);
    pl_pool_free(cc->pool);
    free(cc->act);
    free(cc->attn);
    pl_cpu_moe_free(cc);
    free(cc);
}

static const pl_compute_ops cpu_ops = {
    .free = cpu_free,
    .reserve = cpu_reserve,
    .alloc = cpu_alloc,
    .release = cpu_release,
    .upload = cpu_copy,
    .download = cpu_copy,
    .get_rows = pl_cpu_get_rows,
    .mul_mat = pl_cpu_mul_mat,
    .mul_mat_multi = pl_cpu_mul_mat_multi,
    .rms_norm = cpu_rms_norm,
    .add = cpu_add,
    .mul = cpu_mul,
    .scale = cpu_scale,
    .silu_mul = cpu_silu_mul,
    .layer_norm = cpu_layer_norm,
    .gelu = cpu_gelu,
    .softmax = cpu_softmax,
    .rope = pl_cpu_rope,
    .kv_store = cpu_kv_store,
    .kv_store_heads = cpu_kv_store_heads,
    .attention = pl_cpu_attention,
    .argmax = cpu_argmax,
    .gelu_erf = pl_cpu_gelu_erf,
    .im2col = pl_cpu_im2col,
    .transpose = pl_cpu_transpose,
    .moe_route = pl_cpu_moe_route,
    .moe_ffn = pl_cpu_moe_ffn,
    .sigmoid_gate = pl_cpu_sigmoid_gate,
};

pocketllm_status pl_cpu_compute_new(int n_threads, const pl_cpu_isa *isa, pl_compute **out) {
    *out = NULL;
    if (n_threads == 0) n_threads = pl_pool_default_threads();
    if (!isa) isa = pl_cpu_isa_best();
    if (!pl_cpu_isa_usable(isa)) return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "this CPU cannot run the %s kernels", isa->name);
    pl_cpu_compute *cc = calloc(1, sizeof *cc);
    if (!cc) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    cc->base.ops = &cpu_ops;
    cc->base.backend = "cpu";
    cc->base.kv_packed = true;
    cc->isa = isa;
    /* the quant kernels of the same tier (theirs needs VNNI for AVX-512);
     * the NEON table goes with the best AArch64 quant tier within the cap */
    if (isa == pl_cpu_isa_neon())
        cc->qtier = pl_quant_best_tier() >= PL_TIER_NEON ? pl_quant_best_tier() : PL_TIER_NEON;
    else
        cc->qtier = isa == pl_cpu_isa_generic() ? PL_TIER_SCALAR : isa == pl_cpu_isa_avx2() ? PL_TIER_AVX2 : PL_TIER_AVX512;
    while (cc->qtier > PL_TIER_SCALAR && !pl_quant_tier_supported(cc->qtier))
        cc->qtier = (pl_quant_tier)pl_quant_tier_parent(cc->qtier);
    cc->n_threads = n_threads;
    pocketllm_status st = pl_pool_new(n_threads, &cc->pool);
    if (st) {
        free(cc);
        return st;
    }
    *out = &cc->base;
    return POCKETLLM_OK;
}

pocketllm_status pl_cpu_compute_default(int n_threads, pl_compute **out) {
    return pl_cpu_compute_new(n_threads, NULL, out);
}
