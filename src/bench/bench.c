/*
 * bench.c -- what `pocketllm bench` needs from inside the engine: the bytes
 * of weights one decode step reads, the KV cache bytes per position, and
 * the host's read bandwidth measured on the model's own weights (so the
 * figure reflects the same pages, page size and NUMA placement the decode
 * streams through, and costs no memory of its own).
 */
#include <stdint.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/threadpool.h"
#include "model/model.h"
#include "quant/kv_types.h"
#include "quant/types.h"

pocketllm_status pocketllm_bench_model_info(const pocketllm_model *m, uint32_t kv_type,
                                            pocketllm_bench_info *out) {
    if (!m || !out) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "bench_model_info: NULL argument");
    if (!m->arch) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "bench_model_info: the model has no weights loaded");
    if (!pl_kv_type_supported(kv_type) || m->dims.kv_dim % pl_type_get(kv_type)->block)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "bench_model_info: KV type %u is not one of " PL_KV_TYPE_NAMES
                       " that fits this model", kv_type);
    memset(out, 0, sizeof *out);
    const pl_gguf *g = m->gguf;
    out->file_bytes = g->size;
    /* Every tensor is read once per decode step, except a token embedding
     * table that is only looked up (one row); tied to the output it is read
     * whole as the output matrix.  Of a mixture of experts' 3-D expert
     * tensors a token reads only the n_used experts the router picks, each
     * expert one equal slice of the tensor. */
    const bool has_output = pl_gguf_tensor_by_name(g, "output.weight") != NULL;
    const uint64_t n_used = (uint64_t)m->dims.n_expert_used;
    for (uint64_t i = 0; i < g->n_tensors; i++) {
        const pl_gguf_tensor *t = &g->tensors[i];
        out->weight_bytes += t->n_bytes;
        if (has_output && !strcmp(t->name, "token_embd.weight")) continue;
        const size_t len = strlen(t->name);
        const bool experts = n_used && t->n_dims == 3 && t->ne[2] > 0 && len > 12 &&
                             !strcmp(t->name + len - 12, "_exps.weight");
        out->weight_bytes_per_token += experts ? t->n_bytes / (uint64_t)t->ne[2] * n_used : t->n_bytes;
    }
    out->kv_bytes_per_position = (uint64_t)m->dims.n_layer * 2 * pl_kv_row_bytes(kv_type, m->dims.kv_dim);
    return POCKETLLM_OK;
}

/* ---- read bandwidth ----------------------------------------------------- */

typedef struct {
    const uint8_t *p;
    uint64_t n;
    uint64_t sink[64]; /* one result per chunk, so no read is optimised away */
} bw_job;

#define BW_CHUNKS 64

#if defined(__x86_64__)
#include <immintrin.h>
__attribute__((target("avx2"))) static uint64_t read_avx2(const uint8_t *p, uint64_t n) {
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    uint64_t i = 0;
    for (; i + 128 <= n; i += 128) {
        a0 = _mm256_xor_si256(a0, _mm256_loadu_si256((const __m256i *)(p + i)));
        a1 = _mm256_xor_si256(a1, _mm256_loadu_si256((const __m256i *)(p + i + 32)));
        a2 = _mm256_xor_si256(a2, _mm256_loadu_si256((const __m256i *)(p + i + 64)));
        a3 = _mm256_xor_si256(a3, _mm256_loadu_si256((const __m256i *)(p + i + 96)));
    }
    a0 = _mm256_xor_si256(_mm256_xor_si256(a0, a1), _mm256_xor_si256(a2, a3));
    uint64_t r = (uint64_t)_mm256_extract_epi64(a0, 0) ^ (uint64_t)_mm256_extract_epi64(a0, 3);
    for (; i < n; i++) r += p[i];
    return r;
}
#endif

static uint64_t read_plain(const uint8_t *p, uint64_t n) {
    uint64_t r = 0, i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v;
        memcpy(&v, p + i, 8);
        r ^= v;
    }
    for (; i < n; i++) r += p[i];
    return r;
}

static void bw_chunk(void *ctx, int chunk, int n_chunks, int thread) {
    (void)thread;
    bw_job *j = ctx;
    long long lo, hi;
    pl_pool_split((long long)(j->n / 64), chunk, n_chunks, &lo, &hi);
    const uint8_t *p = j->p + (uint64_t)lo * 64;
    const uint64_t n = (uint64_t)(hi - lo) * 64;
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx2")) {
        j->sink[chunk] = read_avx2(p, n);
        return;
    }
#endif
    j->sink[chunk] = read_plain(p, n);
}

pocketllm_status pocketllm_bench_read_bandwidth(const pocketllm_model *m, int n_threads, double *bytes_per_s) {
    if (!m || !bytes_per_s) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "bench_read_bandwidth: NULL argument");
    *bytes_per_s = 0;
    const pl_gguf *g = m->gguf;
    if (!g || g->n_tensors == 0) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "bench_read_bandwidth: no tensors");
    if (n_threads < 0 || n_threads > 1024)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "thread count %d is outside 0..1024", n_threads);
    if (n_threads == 0) n_threads = m->n_threads ? m->n_threads : pl_pool_default_threads();
    /* the tensor data section: every weight, contiguous in the file */
    const uint8_t *lo = g->base + g->size, *hi = g->base;
    for (uint64_t i = 0; i < g->n_tensors; i++) {
        const pl_gguf_tensor *t = &g->tensors[i];
        if (t->data < lo) lo = t->data;
        if (t->data + t->n_bytes > hi) hi = t->data + t->n_bytes;
    }
    pl_pool *pool;
    pocketllm_status st = pl_pool_new(n_threads, &pool);
    if (st) return st;
    bw_job j = {.p = lo, .n = (uint64_t)(hi - lo)};
    /* the first pass pages everything in; the best of the rest counts */
    double best = 0;
    for (int pass = 0; pass < 4; pass++) {
        const uint64_t t0 = pl_now_ns();
        pl_pool_run_chunks(pool, bw_chunk, &j, BW_CHUNKS);
        const double s = (double)(pl_now_ns() - t0) * 1e-9;
        if (pass > 0 && s > 0 && (double)j.n / s > best) best = (double)j.n / s;
    }
    pl_pool_free(pool);
    *bytes_per_s = best;
    return POCKETLLM_OK;
}
