/*
 * fit_measure.c -- what `fit` knows of a file it has: the memory the engine
 * allocates to run it (opened with a session of the fit's context and one
 * token run: the file's mapping plus the heap that took; on a device, what
 * the device holds), and how far its predictions stray from the quality
 * reference's on the evaluation text (KL divergence, top-1 agreement,
 * perplexity) -- or, for the reference itself, its log-probabilities saved
 * for the others and the importance matrix collected on the way.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "backend/device.h"
#include "base/error.h"
#include "base/heap.h"
#include "eval/fit_run.h"
#include "model/model.h"

#define PL_FIT_MIN_BUDGET (1ull << 20)

/* A session of the fit's context on m with one token evaluated: what a
 * rung allocates to run.  A refusal to make the session
 * (POCKETLLM_ERR_NO_MEMORY) is returned with m open, for the caller to
 * count as not fitting; on any other failure m is closed. */
static pocketllm_status session_one_token(pl_fit_run *F, pocketllm_model *m, pocketllm_session **s) {
    const pocketllm_fit_params *p = F->p;
    pocketllm_session_params sp = pocketllm_session_default_params();
    sp.n_ctx = p->n_ctx;
    sp.kv_type = F->kv_k;
    sp.kv_type_v = F->kv_v;
    sp.flash_attn = F->flash;
    sp.n_threads = p->n_threads;
    *s = NULL;
    pocketllm_status st = pocketllm_session_new(m, &sp, s);
    if (st == POCKETLLM_ERR_NO_MEMORY) return st;
    int32_t tok = pocketllm_token_bos(m);
    if (tok < 0) tok = 0;
    if (!st) st = pocketllm_session_eval(*s, &tok, 1, 0);
    if (st) {
        pocketllm_session_free(*s);
        *s = NULL;
        pocketllm_model_close(m);
    }
    return st;
}

/* On the host: the heap the model and its session took (tokenizer, KV
 * cache, scratch, logits) plus the mapping the weights are read from. */
static pocketllm_status measure_host(pl_fit_run *F, const char *path, pocketllm_fit_row *row, pocketllm_model **out) {
    const pocketllm_fit_params *p = F->p;
    *out = NULL;
    uint64_t h0 = 0, h1 = 0;
    bool heap_ok = pl_heap_in_use(&h0);
    pocketllm_model_params mp = pocketllm_model_default_params();
    mp.n_threads = p->n_threads;
    pocketllm_model *m = NULL;
    pocketllm_session *s = NULL;
    pocketllm_status st = pocketllm_model_open(path, &mp, &m);
    if (st) return st;
    st = session_one_token(F, m, &s);
    if (st == POCKETLLM_ERR_NO_MEMORY) {
        /* this host cannot even reserve it: it does not fit */
        row->note = "its session cannot be allocated on this host";
        *out = m;
        return POCKETLLM_OK;
    }
    if (st) return st;
    F->n_ctx = pocketllm_session_n_ctx(s);
    heap_ok = heap_ok && pl_heap_in_use(&h1);
    row->weights_bytes = row->file_bytes = pocketllm_gguf_file_size(m->gguf);
    row->session_bytes = pocketllm_session_memory(s);
    uint64_t heap = heap_ok && h1 > h0 ? h1 - h0 : 0;
    /* an allocator that cannot say, or memory given back meanwhile: never
     * report less than the session's own sum */
    if (heap < row->session_bytes) heap = row->session_bytes;
    row->heap_bytes = heap;
    row->total_bytes = row->weights_bytes + heap;
    row->measured = 1;
    row->fits = row->total_bytes <= F->budget;
    pocketllm_session_free(s);
    *out = m;
    return POCKETLLM_OK;
}

/* The same on the device: open the file there (the cap passed through, so
 * the device refuses exactly what a later open with that cap would), make
 * the session and run one token; what the device holds then is the need.
 * A refusal (POCKETLLM_ERR_NO_MEMORY) is a measured row that does not fit;
 * *out is the model when its weights went up (NULL when they did not). */
static pocketllm_status measure_device(pl_fit_run *F, const char *path, pocketllm_fit_row *row, pocketllm_model **out) {
    const pocketllm_fit_params *p = F->p;
    *out = NULL;
    struct stat sb;
    row->file_bytes = stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
    pocketllm_model_params mp = pocketllm_model_default_params();
    mp.n_threads = p->n_threads;
    mp.device = p->device;
    mp.device_memory = p->device_memory;
    pocketllm_model *m = NULL;
    pocketllm_session *s = NULL;
    pocketllm_status st = pocketllm_model_open(path, &mp, &m);
    if (st == POCKETLLM_ERR_NO_MEMORY) {
        row->measured = 1;
        row->note = "refused by the device: the weights alone need more than the budget";
        return POCKETLLM_OK;
    }
    if (st) return st;
    pocketllm_model_device(m, &row->weights_bytes, NULL);
    st = session_one_token(F, m, &s);
    if (st == POCKETLLM_ERR_NO_MEMORY) {
        row->measured = 1;
        row->note = "refused by the device: the session (KV cache, activations, logits) does not fit beside the weights";
        *out = m;
        return POCKETLLM_OK;
    }
    if (st) return st;
    F->n_ctx = pocketllm_session_n_ctx(s);
    uint64_t used = 0;
    pocketllm_model_device(m, &used, NULL);
    row->session_bytes = pocketllm_session_memory(s);
    row->heap_bytes = used > row->weights_bytes ? used - row->weights_bytes : 0;
    row->total_bytes = used;
    row->measured = 1;
    row->fits = used <= F->budget;
    pocketllm_session_free(s);
    *out = m;
    return POCKETLLM_OK;
}

/* Whichever of the two the run measures with; the tower's share joins a
 * row that was measured (not one a device refused: its need is unknown). */
pocketllm_status pl_fit_measure(pl_fit_run *F, const char *path, pocketllm_fit_row *row, pocketllm_model **out) {
    pocketllm_status st = F->on_device ? measure_device(F, path, row, out) : measure_host(F, path, row, out);
    if (!st && F->vision && row->measured && row->total_bytes) {
        row->vision_bytes = F->vision;
        row->total_bytes += F->vision;
        row->fits = row->total_bytes <= F->budget;
    }
    return st;
}

bool pl_fit_refused(const pl_fit_run *F, const pocketllm_fit_row *row) {
    return F->on_device && row->measured && !row->total_bytes;
}

static void eval_progress(void *user, uint32_t done, uint32_t total, double ppl) {
    pl_fit_run *F = user;
    pl_fit_say(F, "evaluating %s: window %u of %u, perplexity %.4f", F->recipe, done, total, ppl);
}

/* Score an open model on the evaluation text: against the saved reference
 * (kl) or saving the reference (and collecting the importance matrix). */
static pocketllm_status evaluate(pl_fit_run *F, pocketllm_model *m, bool reference, pl_imat *im,
                                 pocketllm_fit_row *row) {
    const pocketllm_fit_params *p = F->p;
    pl_eval_opts o = {
        .n_ctx = p->eval_ctx ? p->eval_ctx : 512,
        .max_chunks = p->eval_chunks,
        .kv_type = F->kv_k,
        .kv_type_v = F->kv_v,
        .flash_attn = F->flash,
        .n_threads = p->n_threads,
        .save_path = reference ? F->base : NULL,
        .kl_path = reference ? NULL : F->base,
        .imat = im,
        .progress = eval_progress,
        .progress_user = F,
    };
    pocketllm_perplexity_result r;
    pocketllm_status st = pl_eval_run(m, p->eval_text, p->eval_len, &o, &r);
    if (st) return st;
    row->evaluated = 1;
    row->ppl = r.ppl;
    row->kl_mean = reference ? 0 : r.kl_mean;
    row->kl_p99 = reference ? 0 : r.kl_p99;
    row->top1 = reference ? 1 : r.top1;
    row->reference = reference;
    return POCKETLLM_OK;
}

/* On the device when it runs there, else (refused, or its evaluation does
 * not fit) on the CPU: the reference only has to fit the machine. */
pocketllm_status pl_fit_score_reference(pl_fit_run *F, const char *path, pocketllm_model **m, pl_imat **im,
                                        pocketllm_fit_row *row) {
    pocketllm_status st = POCKETLLM_ERR_NO_MEMORY;
    if (*m && !pl_fit_refused(F, row)) st = evaluate(F, *m, true, *im, row);
    if (st != POCKETLLM_ERR_NO_MEMORY || !F->on_device) return st;
    pl_fit_say(F, "%s (or its evaluation window) does not fit the device: evaluating it on the CPU", F->recipe);
    pocketllm_model_close(*m);
    *m = NULL;
    if (*im) {
        /* a fresh matrix: nothing of a failed pass may count */
        pl_imat_free(*im);
        *im = NULL;
        if ((st = pl_imat_new(false, im))) return st;
    }
    pocketllm_model_params mp = pocketllm_model_default_params();
    mp.n_threads = F->p->n_threads;
    if ((st = pocketllm_model_open(path, &mp, m))) return st;
    return evaluate(F, *m, true, *im, row);
}

pocketllm_status pl_fit_score(pl_fit_run *F, pocketllm_model *m, pocketllm_fit_row *row) {
    if (!m || pl_fit_refused(F, row)) return POCKETLLM_OK;
    pocketllm_status st = evaluate(F, m, false, NULL, row);
    if (st == POCKETLLM_ERR_NO_MEMORY && F->on_device) {
        if (!row->note) row->note = "not scored: the evaluation's session does not fit the device";
        return POCKETLLM_OK;
    }
    return st;
}

/* Open the device once, to fail early when it cannot be opened and to
 * learn its budget (device_memory, else all it reports); a budget given is
 * held to what the device offers. */
pocketllm_status pl_fit_device_budget(pl_fit_run *F) {
    pl_device *d = NULL;
    pocketllm_status st = pl_device_open(F->p->device, F->p->device_memory, &d);
    if (st) return st;
    const uint64_t offered = d->memory;
    d->ops->close(d);
    if (!F->budget || F->budget > offered) F->budget = offered;
    if (F->budget < PL_FIT_MIN_BUDGET)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "fit: the device's budget of %llu bytes is below 1 MiB",
                       (unsigned long long)F->budget);
    return POCKETLLM_OK;
}

/* The positions the sessions get when the source made none (the device
 * refused it): as pocketllm_session_new chooses, from the source. */
pocketllm_status pl_fit_default_ctx(pl_fit_run *F, const char *path) {
    if (F->p->n_ctx) {
        F->n_ctx = F->p->n_ctx;
        return POCKETLLM_OK;
    }
    pocketllm_model_params mp = pocketllm_model_default_params();
    pocketllm_model *m = NULL;
    pocketllm_status st = pocketllm_model_open(path, &mp, &m);
    if (st) return st;
    const uint32_t train = pocketllm_model_n_ctx_train(m);
    F->n_ctx = train && train < 4096 ? train : 4096;
    pocketllm_model_close(m);
    return POCKETLLM_OK;
}
