/*
 * session.c -- sequences on an open model: the KV cache, the positions
 * filled, the activation scratch and the logits of the last evaluation.
 * An evaluation is split into passes of at most n_batch tokens; each pass
 * runs the architecture's graph on the session's compute instance.
 *
 * A session made with pocketllm_session_new_multi holds several sequences
 * in one KV cache, each in its own block of n_ctx rows, and evaluates
 * tokens of any of them together (continuous batching): every token is
 * computed exactly as it would be with its sequence alone -- the graph's
 * rows are independent and each sequence attends only to its own rows --
 * so batching never changes a result.
 *
 * Each sequence tracks two counts: the cache rows it fills (its n_past,
 * what the context holds) and the next rotary position.  They are equal
 * until an image: its tokens take one row each but share positions (see
 * runtime/media_prompt.c), so the text after it continues from the image's
 * last position.  Once a session has evaluated embeddings it remembers,
 * per row, the next position after it, so that truncating to any row
 * leaves the position the kept prefix implies.
 */
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/device.h"
#include "base/checked.h"
#include "base/error.h"
#include "model/forward.h"
#include "model/model.h"
#include "quant/types.h"
#include "quant/kv_types.h"
#include "runtime/kv_cache.h"
#include "runtime/session_hooks.h"

#define PL_DEFAULT_CTX_CAP 4096
#define PL_PASS_SCRATCH_BYTES (32ull << 20)
#define PL_DEFAULT_BATCH 512

struct pocketllm_session {
    pl_model *m;
    pl_compute *c;
    pl_kv_cache *kv;
    int64_t n_ctx, n_batch;
    bool flash_attn;
    float *scratch;
    int32_t *pos;          /* n_batch positions of the current pass */
    float *logits;         /* logits_cap rows of n_vocab (compute memory) */
    float *host_logits;    /* their host copy when that is device memory (only the rows asked for come back) */
    int64_t logits_cap;
    int64_t logits_rows;   /* rows kept by the last eval (0 = none) */
    /* several sequences (n_seq > 1); sequence k owns cache rows
     * [k n_ctx, (k + 1) n_ctx) */
    uint32_t n_seq;
    int64_t *seq_past;     /* n_seq: cache rows filled (sequence 0 is the single-sequence API's) */
    int64_t *seq_pos;      /* n_seq: the next rotary position */
    int32_t *row_next;     /* NULL until the first embedding pass; then per cache row, the next position after it */
    int32_t *rows;         /* n_batch: cache rows of a pass within their sequences */
    void **k_seq, **v_seq; /* n_layer each: one sequence's block of the caches (sequences > 0) */
    float *embd;           /* compute memory for a pass of embeddings (main, then the DeepStack sets); NULL until needed */
    float *embd_host;      /* its host staging */
    int64_t embd_width;    /* floats per token of embd */
    float *hidden;         /* compute memory for a pass's final-norm rows (embeddings): n_batch x n_embd; NULL until needed */
    int64_t *seq_add;      /* n_seq: tokens the current batch adds */
    int64_t *kv_base;      /* n_batch: per token of a pass, its sequence's first row */
    int32_t *pass_ids;     /* n_batch: the pass's ids, tokens with logits last */
    int32_t *order;        /* n_batch: for each slot of a pass, its token's index in the pass */
    int32_t *tmp_pos;      /* n_batch: positions of a pass in batch order */
    int64_t *batch_row;    /* per token of the last eval_batch: its logits row, or -1 */
    size_t batch_cap, batch_n;
    /* pocketllm_session_set_route_observer: the caller's function, the
     * layer of the pass's next router, and host copies of its choice */
    pocketllm_route_fn route_fn;
    void *route_user;
    int32_t route_layer;
    int32_t *route_ids;
    float *route_w;
};

static pocketllm_status device_room(const pl_model *m, uint32_t k_type, uint32_t v_type, int64_t kv_rows,
                                    int64_t n_batch);

/* One pass of the model's graph (the router observer counts its layers). */
static void run_pass(pocketllm_session *s, pl_forward *f) {
    s->route_layer = 0;
    s->m->arch->forward(s->m, f);
}

/* The compute instance's router observer: the choice brought to the host
 * and handed to the caller's function with its layer. */
static void route_seen(void *user, pl_compute *c, const int32_t *ids, const float *w, int64_t n_tok, int64_t n_used) {
    pocketllm_session *s = user;
    const size_t n = (size_t)n_tok * (size_t)n_used;
    c->ops->download(c, s->route_ids, ids, n * sizeof *s->route_ids);
    c->ops->download(c, s->route_w, w, n * sizeof *s->route_w);
    s->route_fn(s->route_user, s->route_layer++, (int32_t)n_tok, (int32_t)n_used, s->route_ids, s->route_w);
}

void pocketllm_session_set_route_observer(pocketllm_session *s, pocketllm_route_fn fn, void *user) {
    if (!s) return;
    const int64_t n_used = s->m->dims.n_expert_used;
    if (fn && n_used > 0 && !s->route_ids) {
        s->route_ids = malloc((size_t)(s->n_batch * n_used) * sizeof *s->route_ids);
        s->route_w = malloc((size_t)(s->n_batch * n_used) * sizeof *s->route_w);
    }
    const bool on = fn && n_used > 0 && s->route_ids && s->route_w;
    s->route_fn = on ? fn : NULL;
    s->route_user = user;
    s->c->observe_route = on ? route_seen : NULL;
    s->c->observe_route_user = s;
}

pocketllm_session_params pocketllm_session_default_params(void) {
    pocketllm_session_params p = {.n_ctx = 0, .n_batch = 0, .kv_type = PL_TYPE_F16, .n_threads = 0, .flash_attn = 0,
                                  .kv_type_v = POCKETLLM_KV_AS_K};
    return p;
}

uint32_t pocketllm_model_n_ctx_train(const pocketllm_model *m) {
    return m && m->arch ? (uint32_t)m->dims.n_ctx_train : 0;
}

void pocketllm_session_free(pocketllm_session *s) {
    if (!s) return;
    if (s->c) {
        pl_kv_cache_free(s->c, s->kv);
        s->c->ops->release(s->c, s->scratch);
        s->c->ops->release(s->c, s->logits);
        if (s->embd) s->c->ops->release(s->c, s->embd);
        if (s->hidden) s->c->ops->release(s->c, s->hidden);
        s->c->ops->free(s->c);
    }
    free(s->host_logits);
    free(s->embd_host);
    free(s->seq_pos);
    free(s->row_next);
    free(s->rows);
    free(s->k_seq);
    free(s->v_seq);
    free(s->pos);
    free(s->seq_past);
    free(s->seq_add);
    free(s->kv_base);
    free(s->pass_ids);
    free(s->order);
    free(s->tmp_pos);
    free(s->batch_row);
    free(s->route_ids);
    free(s->route_w);
    free(s);
}

pocketllm_status pocketllm_session_new(pocketllm_model *m, const pocketllm_session_params *params,
                                       pocketllm_session **out) {
    return pocketllm_session_new_multi(m, params, 1, out);
}

pocketllm_status pocketllm_session_new_multi(pocketllm_model *m, const pocketllm_session_params *params, uint32_t n_seq,
                                             pocketllm_session **out) {
    if (!out) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "session_new: no output pointer");
    *out = NULL;
    if (n_seq < 1 || n_seq > 4096)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "session_new: %u sequences (1..4096)", n_seq);
    if (!m) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "session_new: no model");
    if (!m->arch || !m->arch->forward)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "session_new: the model was opened without weights (vocabulary only)");
    pocketllm_session_params p = params ? *params : pocketllm_session_default_params();
    const pl_model_dims *d = &m->dims;
    int64_t n_ctx = p.n_ctx ? (int64_t)p.n_ctx : (d->n_ctx_train < PL_DEFAULT_CTX_CAP ? d->n_ctx_train : PL_DEFAULT_CTX_CAP);
    if (n_ctx > (1 << 24)) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "context of %lld positions is too large", (long long)n_ctx);
    int64_t n_batch = p.n_batch ? (int64_t)p.n_batch : PL_DEFAULT_BATCH;
    if (n_batch > 65536) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "batch of %lld tokens is too large", (long long)n_batch);
    if (n_batch > n_ctx) n_batch = n_ctx;
    /* a pass's activations are held to PL_PASS_SCRATCH_BYTES: a wide model's
     * batch runs as passes of half (a quarter ...) the tokens.  Every row
     * is computed as in one pass (a token's arithmetic does not depend on
     * its batch; its keys and values are in the cache before the next pass
     * reads them), the weights are read once more per pass -- little beside
     * a prefill's arithmetic -- and the memory bound of file + KV + 64 MiB
     * holds for an 8B (its 512-token pass took 40 MiB) */
    while (n_batch > 64 && m->arch->scratch_floats(m, n_batch) * sizeof(float) > PL_PASS_SCRATCH_BYTES)
        n_batch = (n_batch + 1) / 2;
    const uint32_t k_type = p.kv_type, v_type = pl_kv_v_type(p.kv_type, p.kv_type_v);
    pocketllm_status kst;
    if ((kst = pl_kv_type_check(k_type, d->head_dim, "K")) || (kst = pl_kv_type_check(v_type, d->head_dim, "V")))
        return kst;
    if (pl_type_get(v_type)->quantized && p.flash_attn != 1)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "a quantized V cache (%s) needs flash attention, as in llama.cpp",
                       pl_type_get(v_type)->name);
    if (p.n_threads < 0 || p.n_threads > 1024)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "thread count %d is outside 0..1024", p.n_threads);
    if (p.flash_attn != 0 && p.flash_attn != 1)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "flash_attn %d: 0 (off) or 1 (on)", p.flash_attn);
    int n_threads = p.n_threads ? p.n_threads : m->n_threads;

    pocketllm_session *s = calloc(1, sizeof *s);
    if (!s) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    s->m = m;
    s->n_ctx = n_ctx;
    s->n_batch = n_batch;
    s->flash_attn = p.flash_attn == 1;
    s->n_seq = n_seq;
    pocketllm_status st;
    uint64_t rows;
    if (!pl_mul_u64((uint64_t)n_ctx, n_seq, &rows) || rows > ((uint64_t)1 << 32)) {
        st = pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "%u sequences of %lld positions are too many", n_seq, (long long)n_ctx);
        goto fail;
    }
    if (m->device && (st = device_room(m, k_type, v_type, (int64_t)rows, n_batch))) goto fail;
    st = m->device ? m->device->ops->compute_new(m->device, n_threads, &s->c)
                   : pl_backend_find("cpu")->compute_new(n_threads, &s->c);
    if (st) goto fail;
    pl_compute_limits lim = {.n_batch = n_batch, .max_in = d->max_in, .n_ctx = n_ctx, .head_dim = d->head_dim,
                             .moe_n_used = d->n_expert_used, .moe_n_ff = d->n_ff_exp};
    if ((st = s->c->ops->reserve(s->c, &lim))) goto fail;
    if (!s->c->kv_packed && (k_type != v_type || (k_type != PL_TYPE_F16 && k_type != PL_TYPE_F32))) {
        st = pl_fail(POCKETLLM_ERR_UNSUPPORTED, "the %s backend keeps a KV cache in f16 or f32 (K and V alike) only; "
                     "K %s / V %s runs on the cpu", s->c->backend, pl_type_get(k_type)->name, pl_type_get(v_type)->name);
        goto fail;
    }
    if ((st = pl_kv_cache_new(s->c, k_type, v_type, d->n_layer, (int64_t)rows, d->kv_dim, &s->kv))) goto fail;
    uint64_t floats = m->arch->scratch_floats(m, n_batch);
    if (floats > SIZE_MAX / sizeof(float)) {
        st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "activation scratch too large");
        goto fail;
    }
    s->scratch = s->c->ops->alloc(s->c, (size_t)floats * sizeof(float));
    /* four positions per token for a multi-axis model's embedding passes */
    const size_t n_axes = d->n_pos_axes > 1 ? (size_t)d->n_pos_axes : 1;
    s->pos = malloc(n_axes * (size_t)n_batch * sizeof *s->pos);
    s->rows = malloc((size_t)n_batch * sizeof *s->rows);
    s->seq_pos = calloc(n_seq, sizeof *s->seq_pos);
    s->k_seq = calloc((size_t)d->n_layer, sizeof *s->k_seq);
    s->v_seq = calloc((size_t)d->n_layer, sizeof *s->v_seq);
    s->seq_past = calloc(n_seq, sizeof *s->seq_past);
    s->seq_add = calloc(n_seq, sizeof *s->seq_add);
    s->kv_base = malloc((size_t)n_batch * sizeof *s->kv_base);
    s->pass_ids = malloc((size_t)n_batch * sizeof *s->pass_ids);
    s->order = malloc((size_t)n_batch * sizeof *s->order);
    s->tmp_pos = malloc((size_t)n_batch * sizeof *s->tmp_pos);
    if (!s->scratch || !s->pos || !s->seq_past || !s->seq_add || !s->kv_base || !s->pass_ids || !s->order ||
        !s->tmp_pos || !s->rows || !s->seq_pos || !s->k_seq || !s->v_seq) {
        st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for the activations of %lld tokens", (long long)n_batch);
        goto fail;
    }
    *out = s;
    return POCKETLLM_OK;
fail:
    pocketllm_session_free(s);
    return st;
}

/* On a device, the whole of what the session will allocate there must fit
 * next to the weights: refused up front with one line saying how much. */
static pocketllm_status device_room(const pl_model *m, uint32_t k_type, uint32_t v_type, int64_t kv_rows,
                                    int64_t n_batch) {
    const pl_device *dev = m->device;
    const uint64_t kv = pl_kv_cache_bytes(k_type, v_type, m->dims.n_layer, kv_rows, m->dims.kv_dim);
    const uint64_t need = kv + m->arch->scratch_floats(m, n_batch) * sizeof(float) + (uint64_t)m->dims.n_vocab * 4;
    if (dev->memory_used + need > dev->memory)
        return pl_device_no_room(dev, need, "the KV cache, activations and logits of the session");
    return POCKETLLM_OK;
}

/* Room for `rows` rows of logits. */
static pocketllm_status logits_reserve(pocketllm_session *s, int64_t rows) {
    if (rows <= s->logits_cap) return POCKETLLM_OK;
    uint64_t bytes;
    if (!pl_mul_u64((uint64_t)rows, (uint64_t)s->m->dims.n_vocab * sizeof(float), &bytes) || bytes > SIZE_MAX / 2)
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "logits of %lld positions are too large", (long long)rows);
    float *l = s->c->ops->alloc(s->c, (size_t)bytes);
    if (!l) return POCKETLLM_ERR_NO_MEMORY;
    if (s->c->device_memory) {
        float *h = realloc(s->host_logits, (size_t)bytes);
        if (!h) {
            s->c->ops->release(s->c, l);
            return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for logits of %lld positions", (long long)rows);
        }
        s->host_logits = h;
    }
    s->c->ops->release(s->c, s->logits);
    s->logits = l;
    s->logits_cap = rows;
    return POCKETLLM_OK;
}

/* Bring rows [0, rows) of the logits to the host when they are device
 * memory: this is where a pass on a GPU is submitted and waited for. */
static pocketllm_status fetch_logits(pocketllm_session *s, int64_t rows) {
    if (!s->c->device_memory || rows == 0) return POCKETLLM_OK;
    s->c->status = POCKETLLM_OK;
    s->c->ops->download(s->c, s->host_logits, s->logits, (size_t)rows * (size_t)s->m->dims.n_vocab * sizeof(float));
    return s->c->status;
}

/* The logits as the host reads them. */
static const float *host_logits(const pocketllm_session *s) { return s->c->device_memory ? s->host_logits : s->logits; }

/* Sequence seq's block of the caches: its first row is row 0 of what the
 * one-sequence graph path sees. */
static void seq_caches(pocketllm_session *s, uint32_t seq, void ***k, void ***v) {
    if (seq == 0) {
        *k = s->kv->k;
        *v = s->kv->v;
        return;
    }
    const size_t rows = (size_t)seq * (size_t)s->n_ctx;
    for (int64_t il = 0; il < s->kv->n_layer; il++) {
        s->k_seq[il] = (char *)s->kv->k[il] + rows * s->kv->k_row;
        s->v_seq[il] = (char *)s->kv->v[il] + rows * s->kv->v_row;
    }
    *k = s->k_seq;
    *v = s->v_seq;
}

/* What every graph pass of the session shares: the device, the rotary
 * positions in s->pos, the caches and the scratch; the caller adds the
 * inputs (ids or embeddings), the cache rows and where the logits go. */
static pl_forward pass_base(const pocketllm_session *s, int n_pos_axes, int64_t n_tok, void **kc, void **vc) {
    return (pl_forward){
        .c = s->c,
        .pos = s->pos,
        .n_pos_axes = n_pos_axes,
        .n_tok = n_tok,
        .k_type = s->kv->k_type,
        .v_type = s->kv->v_type,
        .k_row = s->kv->k_row,
        .v_row = s->kv->v_row,
        .kv_cap = pl_kv_head_major(s->c) ? s->n_ctx : 0,
        .flash_attn = s->flash_attn,
        .k_cache = kc,
        .v_cache = vc,
        .scratch = s->scratch,
    };
}

/* Record the next position after each of n rows from `row` of sequence
 * seq (only once the session has met embeddings: before that it is
 * always the row count). */
static void note_rows(pocketllm_session *s, uint32_t seq, int64_t row, int64_t n, int32_t first_next, int32_t step) {
    if (!s->row_next) return;
    int32_t *r = s->row_next + (size_t)seq * (size_t)s->n_ctx + (size_t)row;
    for (int64_t i = 0; i < n; i++) r[i] = first_next + (int32_t)i * step;
}

pocketllm_status pl_session_eval_text(pocketllm_session *s, uint32_t seq, const int32_t *ids, size_t n, int all_logits) {
    if (!s || (!ids && n)) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "session_eval: NULL argument");
    if (n == 0) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "session_eval: no tokens to evaluate");
    if (seq >= s->n_seq) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "session: no sequence %u", seq);
    const int64_t past = s->seq_past[seq], pos0 = s->seq_pos[seq];
    if (n > (size_t)(s->n_ctx - past))
        return pl_fail(POCKETLLM_ERR_CONTEXT_FULL, "%zu tokens do not fit the context: %lld of %lld positions are used",
                       n, (long long)past, (long long)s->n_ctx);
    const int64_t n_vocab = s->m->dims.n_vocab;
    for (size_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= n_vocab)
            return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "token id %d (at %zu) is outside the vocabulary 0..%lld", ids[i],
                           i, (long long)n_vocab - 1);
    pocketllm_status st = logits_reserve(s, all_logits ? (int64_t)n : 1);
    if (st) return st;
    s->logits_rows = 0;
    pl_compute *c = s->c;
    void **kc, **vc;
    seq_caches(s, seq, &kc, &vc);
    for (int64_t done = 0; done < (int64_t)n;) {
        const int64_t k = (int64_t)n - done < s->n_batch ? (int64_t)n - done : s->n_batch;
        /* text: every rotary axis at the token's position */
        for (int64_t i = 0; i < k; i++) s->pos[i] = (int32_t)(pos0 + done + i);
        pl_forward f = pass_base(s, 1, k, kc, vc);
        f.ids = ids + done;
        f.row0 = past + done;
        /* passes before the last keep logits only when all are wanted */
        f.logits = all_logits ? s->logits + done * n_vocab : s->logits;
        f.all_logits = all_logits != 0;
        /* a pass before the last one, without all_logits, computes one row
         * of logits that the next pass overwrites: a small price for a
         * graph that always ends the same way */
        c->status = POCKETLLM_OK;
        run_pass(s, &f);
        if (c->status) return c->status; /* the rows it wrote past the filled positions are never read */
        done += k;
    }
    if ((st = fetch_logits(s, all_logits ? (int64_t)n : 1))) return st;
    note_rows(s, seq, past, (int64_t)n, (int32_t)(pos0 + 1), 1);
    s->seq_past[seq] += (int64_t)n;
    s->seq_pos[seq] += (int64_t)n;
    s->logits_rows = all_logits ? (int64_t)n : 1;
    s->batch_n = 0;
    return POCKETLLM_OK;
}

pocketllm_status pocketllm_session_eval(pocketllm_session *s, const int32_t *ids, size_t n, int all_logits) {
    return pl_session_eval_text(s, 0, ids, n, all_logits);
}

pocketllm_status pl_session_eval_hidden(pocketllm_session *s, uint32_t seq, const int32_t *ids, size_t n, size_t n_out,
                                        float *out) {
    if (!s || !ids || !out) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "session_eval_hidden: NULL argument");
    if (n == 0 || (int64_t)n > s->n_batch || n_out == 0 || n_out > n)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "session_eval_hidden: %zu tokens, %zu kept (pass of at most %lld)", n,
                       n_out, (long long)s->n_batch);
    if (seq >= s->n_seq) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "session: no sequence %u", seq);
    const int64_t past = s->seq_past[seq], pos0 = s->seq_pos[seq], n_embd = s->m->dims.n_embd;
    if (n > (size_t)(s->n_ctx - past))
        return pl_fail(POCKETLLM_ERR_CONTEXT_FULL, "%zu tokens do not fit the context: %lld of %lld positions are used",
                       n, (long long)past, (long long)s->n_ctx);
    for (size_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= s->m->dims.n_vocab)
            return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "token id %d (at %zu) is outside the vocabulary 0..%lld", ids[i],
                           i, (long long)s->m->dims.n_vocab - 1);
    pl_compute *c = s->c;
    if (!s->hidden && !(s->hidden = c->ops->alloc(c, (size_t)(s->n_batch * n_embd) * sizeof(float))))
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for the hidden states of %lld tokens", (long long)s->n_batch);
    s->logits_rows = 0;
    s->batch_n = 0;
    void **kc, **vc;
    seq_caches(s, seq, &kc, &vc);
    for (size_t i = 0; i < n; i++) s->pos[i] = (int32_t)(pos0 + (int64_t)i);
    pl_forward f = pass_base(s, 1, (int64_t)n, kc, vc);
    f.ids = ids;
    f.row0 = past;
    f.n_out = (int64_t)n_out;
    f.hidden = s->hidden;
    c->status = POCKETLLM_OK;
    run_pass(s, &f);
    if (!c->status) c->ops->download(c, out, s->hidden, n_out * (size_t)n_embd * sizeof(float));
    if (c->status) return c->status;
    note_rows(s, seq, past, (int64_t)n, (int32_t)(pos0 + 1), 1);
    s->seq_past[seq] += (int64_t)n;
    s->seq_pos[seq] += (int64_t)n;
    return POCKETLLM_OK;
}

/* Room for a pass of embeddings `width` floats wide, and the per-row
 * position record (both made on the first image a session meets). */
static pocketllm_status embd_reserve(pocketllm_session *s, int64_t width) {
    if (!s->row_next) {
        const size_t rows = (size_t)s->n_seq * (size_t)s->n_ctx;
        s->row_next = malloc(rows * sizeof *s->row_next);
        if (!s->row_next) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for the positions of %zu rows", rows);
        /* what every row had so far: text, one position each */
        for (uint32_t q = 0; q < s->n_seq; q++)
            for (int64_t r = 0; r < s->n_ctx; r++) s->row_next[(size_t)q * (size_t)s->n_ctx + (size_t)r] = (int32_t)(r + 1);
    }
    if (s->embd && s->embd_width >= width) return POCKETLLM_OK;
    uint64_t floats;
    if (!pl_mul_u64((uint64_t)s->n_batch, (uint64_t)width, &floats) || floats > SIZE_MAX / 8)
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "embeddings of %lld floats per token are too wide", (long long)width);
    float *e = s->c->ops->alloc(s->c, (size_t)floats * sizeof(float));
    float *h = malloc((size_t)floats * sizeof(float));
    if (!e || !h) {
        if (e) s->c->ops->release(s->c, e);
        free(h);
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for a pass of %lld embeddings", (long long)s->n_batch);
    }
    if (s->embd) s->c->ops->release(s->c, s->embd);
    free(s->embd_host);
    s->embd = e;
    s->embd_host = h;
    s->embd_width = width;
    return POCKETLLM_OK;
}

pocketllm_status pl_session_eval_embd(pocketllm_session *s, uint32_t seq, const float *embd, size_t n, int64_t width,
                                      const int32_t *pos, int32_t next_pos) {
    if (!s || !embd || !pos) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "session_eval_embd: NULL argument");
    if (n == 0) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "session_eval_embd: no embeddings to evaluate");
    if (seq >= s->n_seq) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "session: no sequence %u", seq);
    const pl_model_dims *d = &s->m->dims;
    if (d->n_pos_axes != 4)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "the %s text model takes no image embeddings (qwen3vl does)",
                       s->m->arch_name);
    if (width != d->n_embd * (1 + d->n_deepstack))
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "embeddings of %lld floats per token; the model takes %lld x (1 + %lld)",
                       (long long)width, (long long)d->n_embd, (long long)d->n_deepstack);
    const int64_t past = s->seq_past[seq];
    if (n > (size_t)(s->n_ctx - past))
        return pl_fail(POCKETLLM_ERR_CONTEXT_FULL, "%zu image tokens do not fit the context: %lld of %lld positions are used",
                       n, (long long)past, (long long)s->n_ctx);
    pocketllm_status st;
    if ((st = embd_reserve(s, width)) || (st = logits_reserve(s, 1))) return st;
    s->logits_rows = 0;
    s->batch_n = 0;
    pl_compute *c = s->c;
    void **kc, **vc;
    seq_caches(s, seq, &kc, &vc);
    const int64_t n_embd = d->n_embd, n_sets = 1 + d->n_deepstack;
    for (int64_t done = 0; done < (int64_t)n;) {
        const int64_t k = (int64_t)n - done < s->n_batch ? (int64_t)n - done : s->n_batch;
        /* libmtmd's layout (per token: main, then each DeepStack set) split
         * into one plane per set, as the graph reads them */
        for (int64_t t = 0; t < k; t++)
            for (int64_t j = 0; j < n_sets; j++)
                memcpy(s->embd_host + (j * k + t) * n_embd, embd + (done + t) * width + j * n_embd,
                       (size_t)n_embd * sizeof(float));
        c->status = POCKETLLM_OK;
        c->ops->upload(c, s->embd, s->embd_host, (size_t)(k * width) * sizeof(float));
        for (int a = 0; a < 4; a++)
            memcpy(s->pos + a * k, pos + (size_t)a * n + (size_t)done, (size_t)k * sizeof *s->pos);
        pl_forward f = pass_base(s, 4, k, kc, vc);
        f.embd = s->embd;
        f.deepstack = d->n_deepstack ? s->embd + k * n_embd : NULL;
        f.n_deepstack = d->n_deepstack;
        f.row0 = past + done;
        f.logits = s->logits;
        if (!c->status) run_pass(s, &f);
        if (c->status) return c->status;
        done += k;
    }
    if ((st = fetch_logits(s, 1))) return st;
    note_rows(s, seq, past, (int64_t)n, next_pos, 0);
    s->seq_past[seq] += (int64_t)n;
    s->seq_pos[seq] = next_pos;
    s->logits_rows = 1;
    return POCKETLLM_OK;
}

int32_t pl_session_seq_pos(const pocketllm_session *s, uint32_t seq) {
    return s && seq < s->n_seq ? (int32_t)s->seq_pos[seq] : 0;
}

int64_t pl_session_n_batch(const pocketllm_session *s) { return s ? s->n_batch : 0; }

const pl_model *pl_session_model(const pocketllm_session *s) { return s ? s->m : NULL; }

const float *pocketllm_session_logits(const pocketllm_session *s, int32_t i) {
    if (!s || s->logits_rows == 0) return NULL;
    if (i == -1) i = (int32_t)s->logits_rows - 1;
    if (i < 0 || i >= s->logits_rows) return NULL;
    return host_logits(s) + (size_t)i * (size_t)s->m->dims.n_vocab;
}

uint32_t pocketllm_session_n_past(const pocketllm_session *s) { return s ? (uint32_t)s->seq_past[0] : 0; }

uint32_t pocketllm_session_n_ctx(const pocketllm_session *s) { return s ? (uint32_t)s->n_ctx : 0; }

void pocketllm_session_reset(pocketllm_session *s) {
    if (!s) return;
    for (uint32_t k = 0; k < s->n_seq; k++) s->seq_past[k] = s->seq_pos[k] = 0;
    s->logits_rows = 0;
    s->batch_n = 0;
}

int32_t pocketllm_session_n_vocab(const pocketllm_session *s) { return s ? (int32_t)s->m->dims.n_vocab : 0; }

pl_compute *pl_session_compute(pocketllm_session *s) { return s ? s->c : NULL; }

/* The sum of what the session asked its compute instance (and the heap)
 * for, at the sizes it asked: nothing is estimated. */
uint64_t pocketllm_session_memory(const pocketllm_session *s) {
    if (!s) return 0;
    const pl_kv_cache *kv = s->kv;
    const uint64_t kv_bytes = pl_kv_cache_bytes(kv->k_type, kv->v_type, kv->n_layer, kv->n_ctx, kv->kv_dim);
    const uint64_t scratch = s->m->arch->scratch_floats(s->m, s->n_batch) * sizeof(float);
    const uint64_t logits = (uint64_t)s->logits_cap * (uint64_t)s->m->dims.n_vocab * sizeof(float);
    const uint64_t batching = (uint64_t)s->n_batch * (sizeof *s->kv_base + sizeof *s->pass_ids + sizeof *s->order +
                                                       sizeof *s->tmp_pos) +
                              (uint64_t)s->n_seq * (sizeof *s->seq_past + sizeof *s->seq_add) +
                              (uint64_t)s->batch_cap * sizeof *s->batch_row;
    const uint64_t n_axes = s->m->dims.n_pos_axes > 1 ? (uint64_t)s->m->dims.n_pos_axes : 1;
    const uint64_t positions = (uint64_t)s->n_batch * ((n_axes - 1) * sizeof *s->pos + sizeof *s->rows) +
                               (uint64_t)s->n_seq * sizeof *s->seq_pos + 2 * (uint64_t)s->kv->n_layer * sizeof(void *) +
                               (s->row_next ? (uint64_t)s->n_seq * (uint64_t)s->n_ctx * sizeof *s->row_next : 0) +
                               (s->embd ? 2 * (uint64_t)s->n_batch * (uint64_t)s->embd_width * sizeof(float) : 0) +
                               (s->hidden ? (uint64_t)s->n_batch * (uint64_t)s->m->dims.n_embd * sizeof(float) : 0);
    return s->c->reserved_bytes + kv_bytes + scratch + logits + (uint64_t)s->n_batch * sizeof *s->pos + batching +
           positions + sizeof *s;
}

/* ---- several sequences: continuous batching ---------------------------------- */

uint32_t pocketllm_session_n_seq(const pocketllm_session *s) { return s ? s->n_seq : 0; }

uint32_t pocketllm_session_seq_n_past(const pocketllm_session *s, uint32_t seq) {
    return s && seq < s->n_seq ? (uint32_t)s->seq_past[seq] : 0;
}

pocketllm_status pocketllm_session_seq_truncate(pocketllm_session *s, uint32_t seq, uint32_t n_past) {
    if (!s || seq >= s->n_seq)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "session: no sequence %u", s ? seq : 0);
    /* the rows past n_past are simply overwritten later; the next position
     * is the one the kept rows end at */
    if ((int64_t)n_past < s->seq_past[seq]) {
        s->seq_past[seq] = n_past;
        s->seq_pos[seq] = n_past == 0 ? 0
                          : s->row_next ? (int64_t)s->row_next[(size_t)seq * (size_t)s->n_ctx + n_past - 1]
                                        : (int64_t)n_past;
    }
    s->logits_rows = 0;
    s->batch_n = 0;
    return POCKETLLM_OK;
}

/* One pass over toks[lo, hi): each token at its sequence's next position
 * (in batch order), then the tokens laid out without logits first and with
 * logits last, because the graph finishes only the last rows.  Their rows
 * of logits go to s->logits from *row on. */
static pocketllm_status batch_pass(pocketllm_session *s, const pocketllm_batch_token *toks, size_t lo, size_t hi,
                                   int64_t *row, int64_t spare_row) {
    const int64_t k = (int64_t)(hi - lo);
    /* tmp_pos: each token's offset in its sequence's part of the batch */
    for (size_t i = lo; i < hi; i++) s->tmp_pos[i - lo] = (int32_t)s->seq_add[toks[i].seq]++;
    int64_t n_out = 0, at = 0;
    for (int want = 0; want < 2; want++)
        for (size_t i = lo; i < hi; i++)
            if ((toks[i].logits != 0) == (want == 1)) s->order[at++] = (int32_t)(i - lo);
    for (int64_t t = 0; t < k; t++) {
        const size_t i = lo + (size_t)s->order[t];
        const uint32_t q = toks[i].seq;
        const int32_t off = s->tmp_pos[s->order[t]];
        s->pass_ids[t] = toks[i].id;
        s->rows[t] = (int32_t)s->seq_past[q] + off;
        s->pos[t] = (int32_t)s->seq_pos[q] + off;
        s->kv_base[t] = (int64_t)q * s->n_ctx;
        n_out += toks[i].logits != 0;
    }
    pl_forward f = pass_base(s, 1, k, s->kv->k, s->kv->v);
    f.ids = s->pass_ids;
    f.kv_base = s->kv_base;
    f.row = s->rows;
    /* a pass without logits still finishes its last row (the graph
     * always ends the same way): into the spare row */
    f.logits = s->logits + (n_out ? *row : spare_row) * s->m->dims.n_vocab;
    f.n_out = n_out ? n_out : 1;
    s->c->status = POCKETLLM_OK;
    run_pass(s, &f);
    if (s->c->status) return s->c->status;
    for (int64_t t = k - n_out; t < k; t++) s->batch_row[lo + (size_t)s->order[t]] = (*row)++;
    return POCKETLLM_OK;
}

pocketllm_status pocketllm_session_eval_batch(pocketllm_session *s, const pocketllm_batch_token *toks, size_t n) {
    if (!s || (!toks && n)) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "session_eval_batch: NULL argument");
    if (n == 0) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "session_eval_batch: no tokens to evaluate");
    const int64_t n_vocab = s->m->dims.n_vocab;
    for (uint32_t q = 0; q < s->n_seq; q++) s->seq_add[q] = 0;
    int64_t n_logits = 0;
    pocketllm_status st = POCKETLLM_OK;
    for (size_t i = 0; i < n && !st; i++) {
        if (toks[i].seq >= s->n_seq)
            st = pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "token %zu names sequence %u; the session has %u", i, toks[i].seq,
                         s->n_seq);
        else if (toks[i].id < 0 || toks[i].id >= n_vocab)
            st = pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "token id %d (at %zu) is outside the vocabulary 0..%lld",
                         toks[i].id, i, (long long)n_vocab - 1);
        else if (s->seq_past[toks[i].seq] + ++s->seq_add[toks[i].seq] > s->n_ctx)
            st = pl_fail(POCKETLLM_ERR_CONTEXT_FULL, "sequence %u: the batch does not fit its context of %lld positions "
                         "(%lld used)", toks[i].seq, (long long)s->n_ctx, (long long)s->seq_past[toks[i].seq]);
        n_logits += toks[i].logits != 0;
    }
    for (uint32_t q = 0; q < s->n_seq; q++) s->seq_add[q] = 0;
    if (st) return st;
    /* one spare row for passes that keep no logits */
    if ((st = logits_reserve(s, n_logits + 1))) return st;
    if (n > s->batch_cap) {
        int64_t *r = realloc(s->batch_row, n * sizeof *r);
        if (!r) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for a batch of %zu tokens", n);
        s->batch_row = r;
        s->batch_cap = n;
    }
    for (size_t i = 0; i < n; i++) s->batch_row[i] = -1;
    s->logits_rows = 0;
    s->batch_n = 0;
    int64_t row = 0;
    for (size_t lo = 0; lo < n; lo += (size_t)s->n_batch) {
        const size_t hi = n - lo < (size_t)s->n_batch ? n : lo + (size_t)s->n_batch;
        if ((st = batch_pass(s, toks, lo, hi, &row, n_logits))) {
            /* no sequence advances; the rows written past them are never read */
            for (uint32_t q = 0; q < s->n_seq; q++) s->seq_add[q] = 0;
            return st;
        }
    }
    if ((st = fetch_logits(s, row))) {
        for (uint32_t q = 0; q < s->n_seq; q++) s->seq_add[q] = 0;
        return st;
    }
    for (uint32_t q = 0; q < s->n_seq; q++) {
        note_rows(s, q, s->seq_past[q], s->seq_add[q], (int32_t)s->seq_pos[q] + 1, 1);
        s->seq_past[q] += s->seq_add[q];
        s->seq_pos[q] += s->seq_add[q];
        s->seq_add[q] = 0;
    }
    s->batch_n = n;
    return POCKETLLM_OK;
}

const float *pocketllm_session_batch_logits(const pocketllm_session *s, size_t i) {
    if (!s || i >= s->batch_n || s->batch_row[i] < 0) return NULL;
    return host_logits(s) + (size_t)s->batch_row[i] * (size_t)s->m->dims.n_vocab;
}
