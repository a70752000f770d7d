/*
 * fit.c -- the width ladder walked for one device: quantize the source to
 * each rung (best first), measure what the engine allocates to run it at
 * the wanted context, measure how far it strays from the source (KL
 * divergence, top-1 agreement) on an evaluation text, and keep the first
 * rung that fits the budget.  Nothing is offloaded or split: when the last
 * rung does not fit, the answer is that the model does not fit.  On a
 * device (Vulkan) the rungs are opened there and what the device holds is
 * what counts; a rung the device refuses is one that does not fit.  With
 * an mmproj the vision tower's need (fit_vision.c) is added to every row,
 * the same for all: the tower is counted as its file is, not quantized.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/device.h"
#include "base/error.h"
#include "base/heap.h"
#include "eval/eval.h"
#include "eval/fit_vision.h"
#include "model/model.h"
#include "quant/types.h"

/* The rungs, best first.  Per width the llama.cpp recipe people reach for
 * (the _M mixtures keep attn_v/ffn_down a step wider, which buys most of
 * the quality back); two per IQ width because the step between the two is
 * as large as a whole K step; one ternary rung, TQ1_0, the smaller of the
 * two ternary formats (TQ2_0 is larger than IQ2_XXS, so it would not be a
 * step down). */
typedef struct rung_def {
    const char *recipe, *rung;
    bool needs_imatrix;
} rung_def;

static const rung_def ladder[] = {
    {"Q4_K_M", "Q4", false},  {"Q3_K_M", "Q3", false},  {"Q2_K", "Q2", false},   {"IQ2_XS", "IQ2", true},
    {"IQ2_XXS", "IQ2", true}, {"IQ1_M", "IQ1", true},   {"IQ1_S", "IQ1", true},  {"TQ1_0", "ternary", false},
};
#define N_RUNGS (sizeof ladder / sizeof ladder[0])

#define PL_FIT_MIN_BUDGET (1ull << 20)
#define PL_FIT_MAX_BUDGET (1ull << 50)

const char *pocketllm_fit_rung_recipe(uint32_t i, const char **rung) {
    if (i >= N_RUNGS) return NULL;
    if (rung) *rung = ladder[i].rung;
    return ladder[i].recipe;
}

pocketllm_fit_params pocketllm_fit_default_params(void) {
    pocketllm_fit_params p;
    memset(&p, 0, sizeof p);
    p.kv_type = PL_TYPE_F16;
    return p;
}

typedef struct fit_run {
    const pocketllm_fit_params *p;
    char dir[4096];        /* the work folder, made for this run */
    char imatrix[4200];    /* the importance matrix in use ("" = none) */
    char base[4200];       /* the source's saved log-probabilities */
    /* what the quantizer reports of the rung being made */
    char last_name[128];
    uint64_t type_hash;
    uint32_t type_count[64];
    int last_tenth;
    const char *recipe;
    uint32_t n_ctx;        /* positions the measured sessions hold (0 until one was made) */
    uint64_t budget;       /* the memory a rung may need */
    bool on_device;        /* p->device names a device: measure what it holds */
    uint64_t vision;       /* the tower's share of every row (0: no mmproj) */
} fit_run;

static void say(fit_run *F, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(fit_run *F, const char *fmt, ...) {
    if (!F->p->progress) return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    F->p->progress(F->p->user, line);
}

static void quant_progress(void *user, const pocketllm_quantize_progress *q) {
    fit_run *F = user;
    if (q->name && strcmp(q->name, F->last_name) != 0) {
        /* a new tensor: its type joins the file's fingerprint */
        snprintf(F->last_name, sizeof F->last_name, "%s", q->name);
        for (const char *c = q->name; *c; c++) F->type_hash = (F->type_hash ^ (uint8_t)*c) * 1099511628211ull;
        F->type_hash = (F->type_hash ^ (q->to_type + 0x100u)) * 1099511628211ull;
        if (q->to_type < 64) F->type_count[q->to_type]++;
    }
    const int tenth = q->bytes_total ? (int)(q->bytes_done * 10 / q->bytes_total) : 10;
    if (tenth > F->last_tenth) {
        F->last_tenth = tenth;
        say(F, "quantizing to %s: %d%%", F->recipe, tenth * 10);
    }
}

static void types_string(const fit_run *F, char *out, size_t cap) {
    size_t n = 0;
    out[0] = 0;
    for (uint32_t t = 0; t < 64; t++) {
        if (!F->type_count[t]) continue;
        const char *name = pocketllm_type_name(t);
        int k = snprintf(out + n, cap - n, "%s%s:%u", n ? " " : "", name ? name : "?", F->type_count[t]);
        if (k < 0 || (size_t)k >= cap - n) break;
        n += (size_t)k;
    }
}

/* A session of the fit's context on m with one token evaluated: what a
 * rung allocates to run.  A refusal to make the session
 * (POCKETLLM_ERR_NO_MEMORY) is returned with m open, for the caller to
 * count as not fitting; on any other failure m is closed. */
static pocketllm_status session_one_token(fit_run *F, pocketllm_model *m, pocketllm_session **s) {
    const pocketllm_fit_params *p = F->p;
    pocketllm_session_params sp = pocketllm_session_default_params();
    sp.n_ctx = p->n_ctx;
    sp.kv_type = p->kv_type;
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

/* Open the file, make a session of n_ctx positions and run one token
 * through it; the heap that took (tokenizer, KV cache, scratch, logits)
 * plus the mapping the weights are read from is what the file needs.  The
 * model stays open in *out for the evaluation. */
static pocketllm_status measure(fit_run *F, const char *path, pocketllm_fit_row *row, pocketllm_model **out) {
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
static pocketllm_status measure_device(fit_run *F, const char *path, pocketllm_fit_row *row, pocketllm_model **out) {
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
static pocketllm_status measure_row(fit_run *F, const char *path, pocketllm_fit_row *row, pocketllm_model **out) {
    pocketllm_status st = F->on_device ? measure_device(F, path, row, out) : measure(F, path, row, out);
    if (!st && F->vision && row->measured && row->total_bytes) {
        row->vision_bytes = F->vision;
        row->total_bytes += F->vision;
        row->fits = row->total_bytes <= F->budget;
    }
    return st;
}

/* A row the device refused (nothing to evaluate on it). */
static bool refused(const fit_run *F, const pocketllm_fit_row *row) {
    return F->on_device && row->measured && !row->total_bytes;
}

static void eval_progress(void *user, uint32_t done, uint32_t total, double ppl) {
    fit_run *F = user;
    say(F, "evaluating %s: window %u of %u, perplexity %.4f", F->recipe, done, total, ppl);
}

/* Score an open model on the evaluation text: against the saved source
 * (kl) or saving the source (and collecting the importance matrix). */
static pocketllm_status evaluate(fit_run *F, pocketllm_model *m, bool source, pl_imat *im, pocketllm_fit_row *row) {
    const pocketllm_fit_params *p = F->p;
    pl_eval_opts o = {
        .n_ctx = p->eval_ctx ? p->eval_ctx : 512,
        .max_chunks = p->eval_chunks,
        .kv_type = p->kv_type,
        .n_threads = p->n_threads,
        .save_path = source ? F->base : NULL,
        .kl_path = source ? NULL : F->base,
        .imat = im,
        .progress = eval_progress,
        .progress_user = F,
    };
    pocketllm_perplexity_result r;
    pocketllm_status st = pl_eval_run(m, p->eval_text, p->eval_len, &o, &r);
    if (st) return st;
    row->evaluated = 1;
    row->ppl = r.ppl;
    row->kl_mean = source ? 0 : r.kl_mean;
    row->kl_p99 = source ? 0 : r.kl_p99;
    row->top1 = source ? 1 : r.top1;
    return POCKETLLM_OK;
}

/* The source's pass on the evaluation text -- the log-probabilities every
 * rung is scored against, and the importance matrix -- on the device when
 * the source runs there, else (refused, or its evaluation does not fit) on
 * the CPU: the reference does not have to fit, only the rungs do. */
static pocketllm_status evaluate_source(fit_run *F, const char *path, pocketllm_model **m, pl_imat **im,
                                        pocketllm_fit_row *row) {
    pocketllm_status st = POCKETLLM_ERR_NO_MEMORY;
    if (*m && !refused(F, row)) st = evaluate(F, *m, true, *im, row);
    if (st != POCKETLLM_ERR_NO_MEMORY || !F->on_device) return st;
    say(F, "the source (or its evaluation window) does not fit the device: evaluating it on the CPU");
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

/* A rung's score; on a device, none for a rung it refused, and a rung
 * whose evaluation window does not fit there is left unscored. */
static pocketllm_status evaluate_rung(fit_run *F, pocketllm_model *m, pocketllm_fit_row *row) {
    if (!m || refused(F, row)) return POCKETLLM_OK;
    pocketllm_status st = evaluate(F, m, false, NULL, row);
    if (st == POCKETLLM_ERR_NO_MEMORY && F->on_device) {
        if (!row->note) row->note = "not scored: the evaluation's session does not fit the device";
        return POCKETLLM_OK;
    }
    return st;
}

/* On a device: open it once, to fail early when it cannot be opened and to
 * learn its budget (device_memory, else all it reports); a budget given is
 * held to what the device offers. */
static pocketllm_status device_budget(fit_run *F) {
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
static pocketllm_status default_ctx(fit_run *F, const char *path) {
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

/* Move the chosen file to out_path (copying across file systems). */
static pocketllm_status place(const char *from, const char *to) {
    if (rename(from, to) == 0) return POCKETLLM_OK;
    if (errno != EXDEV) return pl_fail(POCKETLLM_ERR_IO, "cannot move %s to %s: %s", from, to, strerror(errno));
    char partial[4200];
    snprintf(partial, sizeof partial, "%s.partial", to);
    FILE *in = fopen(from, "rb"), *out = in ? fopen(partial, "wb") : NULL;
    pocketllm_status st = POCKETLLM_OK;
    if (!in || !out) st = pl_fail(POCKETLLM_ERR_IO, "cannot copy %s to %s: %s", from, partial, strerror(errno));
    char *buf = malloc(1 << 16);
    if (!st && !buf) st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    size_t n;
    while (!st && (n = fread(buf, 1, 1 << 16, in)) > 0)
        if (fwrite(buf, 1, n, out) != n) st = pl_fail(POCKETLLM_ERR_IO, "cannot write %s: %s", partial, strerror(errno));
    free(buf);
    if (in) fclose(in);
    if (out && fclose(out) != 0 && !st) st = pl_fail(POCKETLLM_ERR_IO, "cannot write %s: %s", partial, strerror(errno));
    if (!st && rename(partial, to) != 0) st = pl_fail(POCKETLLM_ERR_IO, "cannot rename %s: %s", partial, strerror(errno));
    if (st) remove(partial);
    else remove(from);
    return st;
}

/* The source must be unquantized: every rung is made from it. */
static pocketllm_status check_source(const char *path) {
    pocketllm_gguf *g;
    pocketllm_status st = pocketllm_gguf_open(path, &g);
    if (st) return st;
    for (uint64_t i = 0; i < pocketllm_gguf_tensor_count(g) && !st; i++) {
        pocketllm_tensor_info t;
        if ((st = pocketllm_gguf_tensor(g, i, &t))) break;
        if (t.type != PL_TYPE_F32 && t.type != PL_TYPE_F16 && t.type != PL_TYPE_BF16)
            st = pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "%s: tensor %s is already %s; fit quantizes from the "
                         "f32/f16/bf16 source", path, t.name, pocketllm_type_name(t.type));
    }
    pocketllm_gguf_close(g);
    return st;
}

static pocketllm_status make_dir(fit_run *F) {
    const pocketllm_fit_params *p = F->p;
    char parent[4096];
    if (p->work_dir) snprintf(parent, sizeof parent, "%s", p->work_dir);
    else if (p->out_path && strrchr(p->out_path, '/'))
        snprintf(parent, sizeof parent, "%.*s", (int)(strrchr(p->out_path, '/') - p->out_path), p->out_path);
    else if (p->out_path) snprintf(parent, sizeof parent, ".");
    else snprintf(parent, sizeof parent, "%s", getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!parent[0]) snprintf(parent, sizeof parent, "/");
    if ((size_t)snprintf(F->dir, sizeof F->dir, "%s/.pocketllm-fit-XXXXXX", parent) >= sizeof F->dir)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "fit: work folder path too long");
    if (!mkdtemp(F->dir)) {
        pocketllm_status st = pl_fail(POCKETLLM_ERR_IO, "fit: cannot make a work folder in %s: %s", parent, strerror(errno));
        F->dir[0] = 0;
        return st;
    }
    return POCKETLLM_OK;
}

static void rung_path(const fit_run *F, const char *recipe, char *out, size_t cap) {
    snprintf(out, cap, "%s/%s.gguf", F->dir, recipe);
}

pocketllm_status pocketllm_fit(const char *model_path, const pocketllm_fit_params *params, pocketllm_fit_result *out) {
    if (!model_path || !params || !out) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "fit: NULL argument");
    memset(out, 0, sizeof *out);
    out->chosen = -1;
    const pocketllm_fit_params *p = params;
    const bool on_device = p->device && strcmp(p->device, "cpu") != 0;
    /* on a device 0 means the device's own budget (checked once known) */
    if ((p->memory || !on_device) && (p->memory < PL_FIT_MIN_BUDGET || p->memory > PL_FIT_MAX_BUDGET))
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "fit: a budget of %llu bytes is outside 1 MiB .. 1 PiB",
                       (unsigned long long)p->memory);
    if (p->n_ctx > (1u << 20))
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "fit: context of %u positions is too large", p->n_ctx);
    if (p->kv_type != PL_TYPE_F16 && p->kv_type != PL_TYPE_F32)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "fit: KV cache type %u: use f16 (1) or f32 (0)", p->kv_type);
    if (p->eval_text == NULL && p->eval_len)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "fit: evaluation text length without text");
    if (p->out_path && !strcmp(p->out_path, model_path))
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "fit: the output would overwrite the source");
    pocketllm_status st = check_source(model_path);
    if (st) return st;

    fit_run *F = calloc(1, sizeof *F);
    if (!F) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    F->p = p;
    F->on_device = on_device;
    F->budget = p->memory;
    pl_imat *im = NULL;
    pocketllm_model *m = NULL;
    if (on_device && (st = device_budget(F))) goto done;
    out->budget = F->budget;
    if ((st = make_dir(F))) goto done;
    snprintf(F->base, sizeof F->base, "%s/source.logprobs", F->dir);
    if (p->imatrix) snprintf(F->imatrix, sizeof F->imatrix, "%s", p->imatrix);

    /* the source: its memory, and with a text its log-probabilities (and,
     * unless one was given, the importance matrix) from one pass */
    pocketllm_fit_row *src = &out->rows[out->n_rows++];
    src->recipe = "source";
    src->rung = "-";
    F->recipe = "source";
    say(F, "measuring the source");
    /* the tower's share needs the context, known once the source is
     * measured: it joins the source's row after (F->vision is 0 here) */
    if ((st = measure_row(F, model_path, src, &m))) goto done;
    if (!F->n_ctx && (st = default_ctx(F, model_path))) goto done;
    if (p->mmproj) {
        pl_fit_vision_need vn;
        say(F, "measuring the vision tower %s", p->mmproj);
        if ((st = pl_fit_vision(model_path, p->mmproj, p->image_max_tokens, F->n_ctx, p->n_threads, &vn))) goto done;
        F->vision = vn.weights_bytes + vn.image_bytes;
        out->vision_weights_bytes = vn.weights_bytes;
        out->vision_image_bytes = vn.image_bytes;
        out->vision_tokens = vn.tokens;
        out->vision_square_side = vn.square_side;
        if (src->measured && src->total_bytes) {
            src->vision_bytes = F->vision;
            src->total_bytes += F->vision;
            src->fits = src->total_bytes <= F->budget;
        }
    }
    {
        pocketllm_gguf *g;
        if (!pocketllm_gguf_open(model_path, &g)) {
            for (uint64_t i = 0; i < pocketllm_gguf_tensor_count(g); i++) {
                pocketllm_tensor_info t;
                if (!pocketllm_gguf_tensor(g, i, &t) && t.type < 64) F->type_count[t.type]++;
            }
            pocketllm_gguf_close(g);
            types_string(F, src->types, sizeof src->types);
        }
    }
    /* the tokenizer and the session alone, measured on the source, already
     * exceed the budget: no rung can fit, and none is tried (unless all) */
    const bool hopeless = src->measured && src->heap_bytes + F->vision >= F->budget;
    out->n_ctx = F->n_ctx;
    if (p->eval_text && (!hopeless || p->all)) {
        if (!p->imatrix) {
            if ((st = pl_imat_new(false, &im))) goto done;
            snprintf(F->imatrix, sizeof F->imatrix, "%s/imatrix.gguf", F->dir);
        }
        if ((st = evaluate_source(F, model_path, &m, &im, src))) goto done;
        if (im && (st = pl_imat_write(im, F->imatrix, "pocketllm fit evaluation text", p->eval_ctx ? p->eval_ctx : 512)))
            goto done;
    }
    pocketllm_model_close(m);
    m = NULL;
    src->budget = F->budget;
    if (p->on_row) p->on_row(p->user, src);

    uint64_t fingerprints[N_RUNGS];
    char chosen_path[4300] = "";
    for (size_t i = 0; i < N_RUNGS; i++) {
        if (out->chosen >= 0 && !p->all) break;
        pocketllm_fit_row *row = &out->rows[out->n_rows++];
        row->recipe = ladder[i].recipe;
        row->rung = ladder[i].rung;
        fingerprints[i] = 0;
        if (hopeless && !p->all) {
            row->note = "not tried: the session and tokenizer alone need more than the budget";
            row->budget = F->budget;
            if (p->on_row) p->on_row(p->user, row);
            continue;
        }
        if (ladder[i].needs_imatrix && !F->imatrix[0]) {
            row->note = "needs an importance matrix (--eval TEXT or --imatrix FILE)";
            row->budget = F->budget;
            if (p->on_row) p->on_row(p->user, row);
            continue;
        }
        char path[4300];
        rung_path(F, ladder[i].recipe, path, sizeof path);
        pocketllm_quantize_params qp = pocketllm_quantize_default_params();
        qp.type = ladder[i].recipe;
        qp.imatrix = F->imatrix[0] ? F->imatrix : NULL;
        qp.n_threads = p->n_threads;
        qp.progress = quant_progress;
        qp.progress_user = F;
        F->recipe = ladder[i].recipe;
        F->last_name[0] = 0;
        F->type_hash = 1469598103934665603ull;
        F->last_tenth = -1;
        memset(F->type_count, 0, sizeof F->type_count);
        if ((st = pocketllm_quantize(model_path, path, &qp))) {
            pl_error_prefix(ladder[i].recipe);
            goto done;
        }
        fingerprints[i] = F->type_hash;
        types_string(F, row->types, sizeof row->types);
        for (size_t j = 0; j < i; j++)
            if (fingerprints[j] == F->type_hash) {
                row->same_as = ladder[j].recipe;
                break;
            }
        say(F, "measuring %s at %u positions", ladder[i].recipe, F->n_ctx);
        if ((st = measure_row(F, path, row, &m))) goto done;
        if (p->eval_text && row->measured && (st = evaluate_rung(F, m, row))) goto done;
        pocketllm_model_close(m);
        m = NULL;
        if (row->fits && out->chosen < 0) {
            out->chosen = (int)(out->n_rows - 1);
            out->recipe = ladder[i].recipe;
            snprintf(chosen_path, sizeof chosen_path, "%s", path);
        } else {
            remove(path);
        }
        row->budget = F->budget;
        if (p->on_row) p->on_row(p->user, row);
    }
    if (out->chosen >= 0 && p->out_path) {
        say(F, "writing %s to %s", out->recipe, p->out_path);
        st = place(chosen_path, p->out_path);
    }
done:
    pocketllm_model_close(m);
    pl_imat_free(im);
    if (F->dir[0]) {
        char path[4300];
        for (size_t i = 0; i < N_RUNGS; i++) {
            rung_path(F, ladder[i].recipe, path, sizeof path);
            remove(path);
        }
        snprintf(path, sizeof path, "%s/imatrix.gguf", F->dir);
        remove(path);
        remove(F->base);
        rmdir(F->dir);
    }
    free(F);
    return st;
}
