/*
 * perplexity.c -- one scoring pass over a text's windows: perplexity as
 * llama-perplexity computes it, optionally saving the base log-probabilities
 * or comparing against saved ones (KL divergence, top-1 agreement), and
 * optionally collecting the importance matrix on the way.  The public
 * pocketllm_perplexity and pocketllm_imatrix are thin wrappers.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "eval/eval.h"
#include "eval/logits_file.h"
#include "eval/logprob.h"
#include "model/model.h"

/* Logits kept at most per piece of a window (64 MiB), at least 16 rows. */
#define PL_EVAL_PIECE_BYTES (64u << 20)

typedef struct pass {
    const pl_windows *w;
    int64_t n_vocab, first;
    double nll, nll2;
    int64_t count;
    pl_lp_writer *save;
    const pl_lp_file *base;
    float *lp;           /* the model's log-probabilities of one row */
    double kl, kl2, nll_base;
    int64_t same_top;
    float *kl_values;    /* every scored position's KL, for the percentiles */
} pass;

static pocketllm_status score_row(void *user, int64_t chunk, int64_t pos, const float *logits) {
    pass *p = user;
    for (int64_t i = 0; i < p->n_vocab; i++)
        if (!isfinite(logits[i]))
            return pl_fail(POCKETLLM_ERR_FORMAT, "window %lld position %lld: logit of token %lld is %g: the model's "
                           "weights are broken", (long long)chunk, (long long)pos, (long long)i, logits[i]);
    const int32_t tok = p->w->tokens[chunk * p->w->n_ctx + pos + 1];
    const double v = pl_nll(logits, p->n_vocab, tok);
    p->nll += v, p->nll2 += v * v;
    if (p->save) {
        pocketllm_status st = pl_lp_writer_row(p->save, logits);
        if (st) return st;
    }
    if (p->base) {
        const void *row = pl_lp_row(p->base, chunk, pos - p->first);
        if (!row) return POCKETLLM_ERR_FORMAT;
        pl_log_softmax(logits, p->n_vocab, p->lp);
        pl_kl_row r;
        if (p->base->type == POCKETLLM_LOGITS_F32) pl_kl_row_f32(row, p->lp, p->n_vocab, tok, &r);
        else pl_kl_row_u16(row, p->lp, p->n_vocab, tok, &r);
        p->kl += r.kl, p->kl2 += r.kl * r.kl;
        p->nll_base += r.nll_base;
        p->same_top += r.same_top;
        p->kl_values[p->count] = (float)r.kl;
    }
    p->count++;
    return POCKETLLM_OK;
}

/* The window size, vocabulary and tokens of the base file must be this run's. */
static pocketllm_status check_base(const pl_lp_file *b, const pl_windows *w, int64_t n_vocab, const char *path) {
    if (b->n_ctx != w->n_ctx)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "%s was saved with windows of %lld tokens, this run uses %lld",
                       path, (long long)b->n_ctx, (long long)w->n_ctx);
    if (b->n_vocab != n_vocab)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "%s has a vocabulary of %lld, this model %lld", path,
                       (long long)b->n_vocab, (long long)n_vocab);
    if (b->n_chunk != w->n_chunk)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "%s holds %lld windows, this text gives %lld: use the same text "
                       "and window count", path, (long long)b->n_chunk, (long long)w->n_chunk);
    for (int64_t i = 0; i < w->n_chunk * w->n_ctx; i++)
        if (b->tokens[i] != w->tokens[i])
            return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "the text differs from the one %s was saved from: token %lld "
                           "is %d here, %d there", path, (long long)i, w->tokens[i], b->tokens[i]);
    return POCKETLLM_OK;
}

static int cmp_float(const void *a, const void *b) {
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* llama.cpp's interpolated percentile of sorted values. */
static double percentile(const float *v, int64_t n, double fraction) {
    if (fraction <= 0) return v[0];
    if (fraction >= 1) return v[n - 1];
    double p = fraction * (double)(n - 1);
    int64_t ip = (int64_t)p;
    p -= (double)ip;
    return (1 - p) * v[ip] + p * v[ip + 1 < n ? ip + 1 : n - 1];
}

static void finish(const pass *p, pocketllm_perplexity_result *r) {
    const double n = (double)p->count;
    const double mean = p->nll / n;
    r->n_scored = (uint64_t)p->count;
    r->ppl = exp(mean);
    double var = p->nll2 / n - mean * mean;
    r->ppl_err = var > 0 && p->count > 1 ? sqrt(var / (n - 1)) * r->ppl : 0;
    if (!p->base) return;
    r->has_kl = 1;
    r->ppl_base = exp(p->nll_base / n);
    r->kl_mean = p->kl / n;
    var = p->kl2 / n - r->kl_mean * r->kl_mean;
    r->kl_err = var > 0 && p->count > 10 ? sqrt(var / (n - 1)) : 0;
    float *v = p->kl_values;
    qsort(v, (size_t)p->count, sizeof *v, cmp_float);
    r->kl_median = p->count % 2 ? v[p->count / 2] : 0.5 * ((double)v[p->count / 2] + (double)v[p->count / 2 - 1]);
    r->kl_p90 = percentile(v, p->count, 0.90);
    r->kl_p99 = percentile(v, p->count, 0.99);
    r->kl_max = v[p->count - 1];
    r->top1 = (double)p->same_top / n;
    r->top1_err = p->count > 1 ? sqrt(r->top1 * (1 - r->top1) / (n - 1)) : 0;
}

pocketllm_status pl_eval_run(pocketllm_model *m, const char *text, size_t len, const pl_eval_opts *o,
                             pocketllm_perplexity_result *r) {
    memset(r, 0, sizeof *r);
    if (!m || !m->arch) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "the model was opened without weights");
    pl_windows w;
    pocketllm_status st = pl_windows_make(m, text, len, o->n_ctx, o->max_chunks, o->parse_special, &w);
    if (st) return st;
    const int64_t n_vocab = m->dims.n_vocab;
    pass p = {.w = &w, .n_vocab = n_vocab, .first = w.n_ctx / 2};
    pl_lp_writer save = {0};
    pl_lp_file base = {0};
    pocketllm_session *s = NULL;
    r->n_tokens = w.n_tokens;
    r->n_ctx = (uint32_t)w.n_ctx;
    r->n_chunks = (uint32_t)w.n_chunk;
    if (o->kl_path) {
        if ((st = pl_lp_open(o->kl_path, &base)) || (st = check_base(&base, &w, n_vocab, o->kl_path))) goto done;
        p.base = &base;
        p.lp = malloc((size_t)n_vocab * sizeof *p.lp);
        p.kl_values = malloc((size_t)(w.n_chunk * pl_lp_rows_per_chunk(w.n_ctx)) * sizeof *p.kl_values);
        if (!p.lp || !p.kl_values) {
            st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
            goto done;
        }
    }
    if (o->save_path) {
        int type = o->save_type ? o->save_type : n_vocab <= 65536 ? POCKETLLM_LOGITS_F32 : POCKETLLM_LOGITS_U16;
        if ((st = pl_lp_writer_open(&save, o->save_path, type, w.n_ctx, n_vocab, w.n_chunk, w.tokens))) goto done;
        p.save = &save;
    }
    pocketllm_session_params sp = pocketllm_session_default_params();
    sp.n_ctx = (uint32_t)w.n_ctx;
    sp.kv_type = o->kv_type;
    sp.kv_type_v = o->kv_type_v;
    sp.flash_attn = o->flash_attn;
    sp.n_threads = o->n_threads;
    if ((st = pocketllm_session_new(m, &sp, &s))) goto done;
    if (o->imat) pl_imat_attach(o->imat, s);
    int64_t piece = (int64_t)(PL_EVAL_PIECE_BYTES / ((uint64_t)n_vocab * sizeof(float)));
    if (piece < 16) piece = 16;
    for (int64_t c = 0; c < w.n_chunk; c++) {
        if ((st = pl_window_eval(s, &w, c, p.first, o->imat != NULL, piece, score_row, &p))) goto done;
        if (o->progress) o->progress(o->progress_user, (uint32_t)(c + 1), (uint32_t)w.n_chunk, exp(p.nll / (double)p.count));
    }
    if (p.save && (st = pl_lp_writer_finish(&save))) goto done;
    finish(&p, r);
done:
    if (s && o->imat) pl_imat_attach(NULL, s);
    pocketllm_session_free(s);
    pl_lp_writer_abort(&save);
    pl_lp_close(&base);
    free(p.lp);
    free(p.kl_values);
    pl_windows_free(&w);
    return st;
}

/* ---- the public wrappers --------------------------------------------------- */

pocketllm_perplexity_params pocketllm_perplexity_default_params(void) {
    pocketllm_perplexity_params p = {0};
    p.n_ctx = 512;
    p.kv_type = 1;
    p.kv_type_v = POCKETLLM_KV_AS_K;
    return p;
}

pocketllm_status pocketllm_perplexity(pocketllm_model *model, const char *text, size_t len,
                                      const pocketllm_perplexity_params *params, pocketllm_perplexity_result *out) {
    if (!out) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "perplexity: no result pointer");
    memset(out, 0, sizeof *out);
    pocketllm_perplexity_params p = params ? *params : pocketllm_perplexity_default_params();
    if (p.save_logits && p.kl_base)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "perplexity: save the base logits or compare against them, not both");
    if (p.save_type > POCKETLLM_LOGITS_U16)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "perplexity: log-probability layout %u is not 0, 1 or 2", p.save_type);
    pl_eval_opts o = {
        .n_ctx = p.n_ctx ? p.n_ctx : 512,
        .max_chunks = p.max_chunks,
        .kv_type = p.kv_type,
        .kv_type_v = p.kv_type_v,
        .flash_attn = p.flash_attn,
        .n_threads = p.n_threads,
        .save_path = p.save_logits,
        .save_type = (int)p.save_type,
        .kl_path = p.kl_base,
        .progress = p.progress,
        .progress_user = p.progress_user,
    };
    return pl_eval_run(model, text, len, &o, out);
}

pocketllm_imatrix_params pocketllm_imatrix_default_params(void) {
    pocketllm_imatrix_params p = {0};
    p.n_ctx = 512;
    return p;
}

pocketllm_status pocketllm_imatrix(pocketllm_model *model, const char *text, size_t len,
                                   const pocketllm_imatrix_params *params, const char *out_path, double *ppl_out) {
    if (!out_path) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "imatrix: no output path");
    pocketllm_imatrix_params p = params ? *params : pocketllm_imatrix_default_params();
    const int64_t n_ctx = p.n_ctx ? p.n_ctx : 512;
    if (n_ctx < 16)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "imatrix: windows of %lld tokens: at least 16 (llama.cpp "
                       "collects nothing from smaller batches)", (long long)n_ctx);
    pl_imat *im;
    pocketllm_status st = pl_imat_new(p.process_output != 0, &im);
    if (st) return st;
    pl_eval_opts o = {
        .n_ctx = n_ctx,
        .max_chunks = p.max_chunks,
        .parse_special = p.parse_special != 0,
        .kv_type = 1,
        .kv_type_v = POCKETLLM_KV_AS_K,
        .n_threads = p.n_threads,
        .imat = im,
        .progress = p.progress,
        .progress_user = p.progress_user,
    };
    pocketllm_perplexity_result r;
    st = pl_eval_run(model, text, len, &o, &r);
    if (!st) st = pl_imat_write(im, out_path, p.dataset, n_ctx);
    if (!st && ppl_out) *ppl_out = r.ppl;
    pl_imat_free(im);
    return st;
}
