/*
 * llama_graph.c -- the forward pass of the llama / qwen2 / qwen3 family,
 * one function per block, the tensors named as in the GGUF file:
 *
 *   x = token_embd[ids]          (or the embeddings given: an image's)
 *   for each layer:
 *     x += attn_output . attention(rope(q_norm(attn_q . rms_norm(x))),
 *                                  rope(k_norm(attn_k . rms_norm(x))),
 *                                  attn_v . rms_norm(x))
 *     x += ffn_down . (silu(ffn_gate . rms_norm(x)) * (ffn_up . rms_norm(x)))
 *       or, with a mixture of experts (qwen2moe, qwen3moe), per token:
 *     x += sum over the experts e the router picks from softmax(ffn_gate_inp
 *          . rms_norm(x)) of weight_e * expert_e(rms_norm(x))
 *          (+ sigmoid(ffn_gate_inp_shexp . rms_norm(x)) * shared(rms_norm(x)), qwen2moe)
 *     x += deepstack[layer]        (qwen3vl, image embeddings, first layers)
 *   logits = output . rms_norm(x)      (embeddings: rms_norm(x) itself)
 *
 * Every step is an op of the compute instance; this file never touches an
 * activation itself, so any backend runs it.
 */
#include "model/forward.h"
#include "model/llama.h"
#include "quant/types.h"

/* The activations of one pass, carved from the session's scratch. */
typedef struct acts {
    float *x;   /* [n][n_embd] the residual stream */
    float *xb;  /* [n][n_embd] a normalised copy / a block's output */
    float *q;   /* [n][n_head][head_dim] */
    float *k;   /* [n][n_head_kv][head_dim], over the rows of att (stored in the cache before att is written) */
    float *v;   /* [n][n_head_kv][head_dim], the same */
    float *att; /* [n][n_head][head_dim] attention output */
    float *hb;  /* [n][n_ff] gate, then silu(gate) * up */
    float *hb2; /* [n][n_ff] up, over the rows of q .. att */
    /* a mixture of experts, all over the rows of q .. att: the router's
     * logits, its choice and weights, the experts' weighted sum; hb and
     * hb2 then serve the shared expert (qwen2moe), whose gate is shg */
    float *router;   /* [n][n_expert] */
    int32_t *ids;    /* [n][n_used] */
    float *ew;       /* [n][n_used] */
    float *moe_out;  /* [n][n_embd] */
    float *sh;       /* [n][n_embd] the shared expert's output */
    float *shg;      /* [n] its gate's logit */
    float *work;     /* the rest of the attention's rows, dead during the FFN: */
    int64_t work_floats; /* the experts' intermediate products go there (pl_moe_ffn) */
} acts;

/* Floats per token of the attention's rows: q, then att with k and v over
 * it (they are in the KV cache before attention writes att). */
static int64_t attn_floats(const pl_llama_hparams *hp) {
    const int64_t q = hp->n_head * hp->head_dim, kv = hp->n_head_kv * hp->head_dim;
    return q + (q > 2 * kv ? q : 2 * kv);
}

/* The dense FFN's two n_ff-wide products (gate and up) are held for at
 * most this many bytes of tokens at once: a pass of more tokens runs the
 * FFN over them in chunks.  Every token's arithmetic is the same either
 * way (each row is normalised, converted and dotted on its own), so the
 * chunks change no bit; they cap the scratch of a wide model's prefill --
 * an 8B's 512-token pass needed 48 MiB for these two alone -- at the cost
 * of reading the FFN's weights once per chunk (a 0.6B's 512 tokens are
 * one chunk). */
#define PL_FFN_CHUNK_BYTES (16u << 20)

/* Tokens of one FFN chunk for a pass of n: n, or fewer for a wide FFN (a
 * multiple of 16, whole tiles of the matmul kernels). */
static int64_t ffn_chunk(const pl_llama_hparams *hp, int64_t n) {
    int64_t c = (int64_t)(PL_FFN_CHUNK_BYTES / (2 * sizeof(float) * (uint64_t)hp->n_ff));
    c = c < 16 ? 16 : c / 16 * 16;
    return n < c ? n : c;
}

/* Floats of the FFN's part of the scratch for a pass of n tokens: inside
 * the attention's rows (`shared`, dead by then) and after them (`own`). */
static void ffn_floats(const pl_llama_hparams *hp, int64_t n, uint64_t *shared, uint64_t *own) {
    if (hp->n_expert) {
        *shared = (uint64_t)n * (uint64_t)(hp->n_expert + 2 * hp->n_expert_used + 2 * hp->n_embd + 1 +
                                           2 * hp->n_ff_shexp);
        *own = 0;
    } else {
        *shared = *own = (uint64_t)ffn_chunk(hp, n) * (uint64_t)hp->n_ff;
    }
}

uint64_t pl_llama_scratch_floats(const pl_model *m, int64_t n_batch) {
    const pl_llama_hparams *hp = &((const pl_llama *)m->weights)->hp;
    /* sizes were bounded at load: no overflow for any n_batch we allow */
    uint64_t shared, own;
    ffn_floats(hp, n_batch, &shared, &own);
    const uint64_t attn = (uint64_t)n_batch * (uint64_t)attn_floats(hp);
    return (uint64_t)n_batch * 2 * (uint64_t)hp->n_embd + (attn > shared ? attn : shared) + own;
}

static acts carve(const pl_llama_hparams *hp, float *s, int64_t n) {
    const int64_t q = hp->n_head * hp->head_dim, kv = hp->n_head_kv * hp->head_dim;
    acts a = {0};
    a.x = s, s += n * hp->n_embd;
    a.xb = s, s += n * hp->n_embd;
    a.q = s, s += n * q;
    a.att = s;
    a.k = s, s += n * kv;
    a.v = s;
    s = a.q;
    uint64_t shared, own;
    ffn_floats(hp, n, &shared, &own);
    const int64_t attn = n * attn_floats(hp), region = attn > (int64_t)shared ? attn : (int64_t)shared;
    if (hp->n_expert) {
        a.router = s, s += n * hp->n_expert;
        a.ids = (int32_t *)(void *)s, s += n * hp->n_expert_used;
        a.ew = s, s += n * hp->n_expert_used;
        a.moe_out = s, s += n * hp->n_embd;
        a.sh = s, s += n * hp->n_embd;
        a.shg = s, s += n;
        a.hb2 = s, s += n * hp->n_ff_shexp;
        a.hb = s, s += n * hp->n_ff_shexp;
        a.work = s;
        a.work_floats = region - (int64_t)shared;
        return a;
    }
    /* the FFN's up projection reuses the attention's rows (dead by then):
     * a 512-token pass of a 0.6B model needs 6 MB less */
    a.hb2 = s;
    s += region;
    a.hb = s;
    return a;
}

/* y = W x (+ b) for n rows */
static void linear(pl_compute *c, const pl_weight *w, const float *b, const float *x, int64_t n, float *y) {
    pl_mul_mat(c, w, x, n, y);
    if (b) pl_add(c, y, b, y, n, w->n_out, 1);
}

/* linear() for n_w weights over the same x (q, k, v; gate, up), in one
 * parallel job where the backend can */
static void linear_multi(pl_compute *c, int n_w, const pl_weight *const *w, const float *const *b, const float *x,
                         int64_t n, float *const *y) {
    pl_mul_mat_multi(c, n_w, w, x, n, y);
    for (int i = 0; i < n_w; i++)
        if (b[i]) pl_add(c, y[i], b[i], y[i], n, w[i]->n_out, 1);
}

/* Cache row `pos` of one layer's K or V cache. */
static void *cache_row(void *cache, size_t row_bytes, int64_t pos) { return (char *)cache + (size_t)pos * row_bytes; }

/* The K and V rows of n tokens (k, v: [n][kv_dim]) into the block of the
 * caches at row `base`, at its rows row .. row+n-1, in the cache's layout */
static void store_kv(const pl_forward *f, int64_t il, int64_t n_head_kv, int64_t head_dim, const float *k,
                     const float *v, int64_t base, int64_t row, int64_t n) {
    pl_compute *c = f->c;
    if (f->kv_cap > 0) {
        pl_kv_store_heads(c, f->k_type, k, cache_row(f->k_cache[il], f->k_row, base), n, row, n_head_kv, head_dim, f->kv_cap);
        pl_kv_store_heads(c, f->v_type, v, cache_row(f->v_cache[il], f->v_row, base), n, row, n_head_kv, head_dim, f->kv_cap);
        return;
    }
    pl_kv_store(c, f->k_type, k, cache_row(f->k_cache[il], f->k_row, base + row), n * n_head_kv * head_dim);
    pl_kv_store(c, f->v_type, v, cache_row(f->v_cache[il], f->v_row, base + row), n * n_head_kv * head_dim);
}

/* Tokens [i, j) are one run: the same sequence at consecutive cache rows. */
static int64_t run_end(const pl_forward *f, int64_t i, int64_t n) {
    int64_t j = i + 1;
    while (j < n && f->kv_base[j] == f->kv_base[i] && f->row[j] == f->row[j - 1] + 1) j++;
    return j;
}

/* Several sequences in one cache: K and V stored run by run at their
 * sequences' rows, then each run of the kept rows attends within its own
 * sequence -- the same op, on the same rows in the same order, as the
 * sequence alone would run, so every sequence's result is bit for bit the
 * one it would have without the others. */
static void multi_seq_attention(pl_forward *f, int64_t il, int64_t kv_dim, int64_t q_dim, int64_t skip,
                                const pl_attn_params *ap, acts *a) {
    pl_compute *c = f->c;
    const int64_t n = f->n_tok;
    for (int64_t i = 0; i < n;) {
        const int64_t j = run_end(f, i, n);
        store_kv(f, il, ap->n_head_kv, ap->head_dim, a->k + i * kv_dim, a->v + i * kv_dim, f->kv_base[i], f->row[i], j - i);
        i = j;
    }
    for (int64_t i = skip; i < n;) {
        const int64_t j = run_end(f, i, n), base = f->kv_base[i];
        pl_attention(c, ap, a->q + i * q_dim, cache_row(f->k_cache[il], f->k_row, base),
                     cache_row(f->v_cache[il], f->v_row, base), j - i, f->row[i], a->att + (i - skip) * q_dim);
        i = j;
    }
}

/* x += attn_output . attention(...) over the n tokens of the pass; writes
 * this layer's K and V for them into the cache first.  Only the last
 * `n_out` rows of the output go back into x (the others are not needed
 * after the last layer). */
static void attention_block(const pl_llama *L, const pl_llama_layer *ly, int64_t il, pl_forward *f, acts *a,
                            int64_t n_out) {
    pl_compute *c = f->c;
    const pl_llama_hparams *hp = &L->hp;
    const int64_t n = f->n_tok, kv_dim = hp->n_head_kv * hp->head_dim;

    pl_rms_norm(c, a->x, ly->attn_norm, a->xb, n, hp->n_embd, hp->rms_eps);
    {
        const pl_weight *w[3] = {&ly->attn_q, &ly->attn_k, &ly->attn_v};
        float *const y[3] = {a->q, a->k, a->v};
        const float *const b[3] = {ly->attn_q_bias, ly->attn_k_bias, ly->attn_v_bias};
        linear_multi(c, 3, w, b, a->xb, n, y);
    }
    if (ly->attn_q_norm) pl_rms_norm(c, a->q, ly->attn_q_norm, a->q, n * hp->n_head, hp->head_dim, hp->rms_eps);
    if (ly->attn_k_norm) pl_rms_norm(c, a->k, ly->attn_k_norm, a->k, n * hp->n_head_kv, hp->head_dim, hp->rms_eps);
    const pl_rope_params *rp = f->n_pos_axes == 4 ? &L->rope_multi : &L->rope;
    pl_rope(c, rp, a->q, a->q, n, hp->n_head, hp->head_dim, f->pos);
    pl_rope(c, rp, a->k, a->k, n, hp->n_head_kv, hp->head_dim, f->pos);

    const pl_attn_params ap = {hp->n_head,  hp->n_head_kv, hp->head_dim, hp->attn_scale, f->k_type,
                               f->v_type,   f->flash_attn, 0,           f->kv_cap};
    const int64_t skip = n - n_out, q_dim = hp->n_head * hp->head_dim;
    if (!f->kv_base) {
        store_kv(f, il, hp->n_head_kv, hp->head_dim, a->k, a->v, 0, f->row0, n);
        /* the queries of dropped rows are not needed either; causal by cache
         * row is llama.cpp's M-RoPE mask too: an image's tokens share their
         * time position and it orders them by (y, x), which is the raster
         * order they are stored in */
        pl_attention(c, &ap, a->q + skip * q_dim, f->k_cache[il], f->v_cache[il], n_out, f->row0 + skip, a->att);
    } else {
        multi_seq_attention(f, il, kv_dim, q_dim, skip, &ap, a);
    }

    float *x = a->x + skip * hp->n_embd;
    linear(c, &ly->attn_output, ly->attn_output_bias, a->att, n_out, a->xb);
    pl_add(c, x, a->xb, x, n_out, hp->n_embd, n_out);
}

/* x += ffn_down . (silu(ffn_gate . rms_norm(x)) * (ffn_up . rms_norm(x))) */
static void ffn_block(const pl_llama *L, const pl_llama_layer *ly, pl_compute *c, float *x, int64_t n, acts *a) {
    const pl_llama_hparams *hp = &L->hp;
    const int64_t chunk = ffn_chunk(hp, n);
    for (int64_t t = 0; t < n; t += chunk) {
        const int64_t m = n - t < chunk ? n - t : chunk;
        float *xt = x + t * hp->n_embd, *xb = a->xb + t * hp->n_embd;
        pl_rms_norm(c, xt, ly->ffn_norm, xb, m, hp->n_embd, hp->rms_eps);
        {
            const pl_weight *w[2] = {&ly->ffn_gate, &ly->ffn_up};
            float *const y[2] = {a->hb, a->hb2};
            const float *const b[2] = {ly->ffn_gate_bias, ly->ffn_up_bias};
            linear_multi(c, 2, w, b, xb, m, y);
        }
        pl_silu_mul(c, a->hb, a->hb2, a->hb, m * hp->n_ff);
        linear(c, &ly->ffn_down, ly->ffn_down_bias, a->hb, m, xb);
        pl_add(c, xt, xb, xt, m, hp->n_embd, m);
    }
}

/* The mixture of experts in place of the FFN (llama.cpp's build_moe_ffn
 * with softmax gating and SwiGLU experts, then qwen2moe's shared expert):
 * x += moe(rms_norm(x)) (+ sigmoid gate * shared(rms_norm(x))). */
static void moe_block(const pl_llama *L, const pl_llama_layer *ly, pl_compute *c, float *x, int64_t n, acts *a) {
    const pl_llama_hparams *hp = &L->hp;
    pl_rms_norm(c, x, ly->ffn_norm, a->xb, n, hp->n_embd, hp->rms_eps);
    pl_mul_mat(c, &ly->ffn_gate_inp, a->xb, n, a->router);
    pl_moe_route(c, &L->route, a->router, n, a->ids, a->ew);
    const pl_moe_ffn_weights e = {&ly->ffn_gate_exps, &ly->ffn_up_exps, &ly->ffn_down_exps};
    pl_moe_ffn(c, &e, a->xb, a->ids, a->ew, hp->n_expert_used, n, a->moe_out, a->work,
               (size_t)a->work_floats * sizeof(float));
    if (ly->ffn_gate_shexp.data) {
        const pl_weight *w[2] = {&ly->ffn_gate_shexp, &ly->ffn_up_shexp};
        float *const y[2] = {a->hb, a->hb2};
        pl_mul_mat_multi(c, 2, w, a->xb, n, y);
        pl_silu_mul(c, a->hb, a->hb2, a->hb, n * hp->n_ff_shexp);
        pl_mul_mat(c, &ly->ffn_down_shexp, a->hb, n, a->sh);
        pl_mul_mat(c, &ly->ffn_gate_inp_shexp, a->xb, n, a->shg);
        pl_sigmoid_gate(c, a->sh, a->shg, a->sh, n, hp->n_embd);
        pl_add(c, a->moe_out, a->sh, a->moe_out, n, hp->n_embd, n);
    }
    pl_add(c, x, a->moe_out, x, n, hp->n_embd, n);
}

/* logits = output . rms_norm(x) (+ output.bias); or, for embeddings, only
 * rms_norm(x) into `hidden` */
static void output_block(const pl_llama *L, pl_compute *c, const float *x, int64_t n, acts *a, float *logits,
                         float *hidden) {
    const pl_llama_hparams *hp = &L->hp;
    if (hidden) {
        pl_rms_norm(c, x, L->output_norm, hidden, n, hp->n_embd, hp->rms_eps);
        return;
    }
    pl_rms_norm(c, x, L->output_norm, a->xb, n, hp->n_embd, hp->rms_eps);
    linear(c, &L->output, L->output_bias, a->xb, n, logits);
}

void pl_llama_forward(const pl_model *m, pl_forward *f) {
    const pl_llama *L = m->weights;
    const pl_llama_hparams *hp = &L->hp;
    acts a = carve(hp, f->scratch, f->n_tok);
    /* like llama.cpp, the last layer finishes only the rows whose logits
     * are wanted */
    const int64_t n_out = f->n_out > 0 && f->n_out <= f->n_tok ? f->n_out : f->all_logits ? f->n_tok : 1;

    if (f->embd) pl_scale(f->c, f->embd, 1.0f, a.x, f->n_tok * hp->n_embd);
    else pl_get_rows(f->c, &L->token_embd, f->ids, f->n_tok, a.x);
    /* llama.cpp pads a token's input with zeros for the DeepStack sets:
     * adding them changes nothing, so text passes skip it */
    const int64_t n_ds = f->embd && f->deepstack ? (f->n_deepstack < hp->n_deepstack ? f->n_deepstack : hp->n_deepstack) : 0;
    for (int64_t il = 0; il < hp->n_layer; il++) {
        const int64_t rows = il == hp->n_layer - 1 ? n_out : f->n_tok;
        float *x = a.x + (f->n_tok - rows) * hp->n_embd;
        attention_block(L, &L->layers[il], il, f, &a, rows);
        if (hp->n_expert) moe_block(L, &L->layers[il], f->c, x, rows, &a);
        else ffn_block(L, &L->layers[il], f->c, x, rows, &a);
        if (il < n_ds) {
            const float *ds = f->deepstack + (il * f->n_tok + (f->n_tok - rows)) * hp->n_embd;
            pl_add(f->c, x, ds, x, rows, hp->n_embd, rows);
        }
    }
    output_block(L, f->c, a.x + (f->n_tok - n_out) * hp->n_embd, n_out, &a, f->logits, f->hidden);
}
