/*
 * fit.c -- the width ladder walked for one device: quantize the source to
 * each rung (best first), measure what the engine allocates to run it at
 * the wanted context (fit_measure.c), score how far it strays from the
 * quality reference on an evaluation text, and keep the first rung that
 * fits the budget.  Nothing is offloaded or split: when the last rung does
 * not fit, the answer is that the model does not fit.  On a device
 * (Vulkan) the rungs are opened there and what the device holds is what
 * counts.  With an mmproj the vision tower's need (fit_vision.c) is added
 * to every row, the same for all.
 *
 * For a model too large to handle whole on the machine at hand (a 30B
 * mixture of experts: 61 GB at f16), three things change nothing of that
 * principle: the source may be quantized already (its rungs requantized);
 * the reference is the source only when it fits the machine's memory, else
 * the best rung that does; and --plan computes each rung's need from its
 * quantization plan (fit_plan.c) without writing it -- for the source's
 * depth or, from a file cut to a few layers, for the whole model -- every
 * such number marked computed.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "eval/fit_run.h"
#include "eval/fit_vision.h"
#include "model/model.h"
#include "quant/kv_types.h"
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
    p.kv_type_v = POCKETLLM_KV_AS_K;
    return p;
}

void pl_fit_say(pl_fit_run *F, const char *fmt, ...) {
    if (!F->p->progress) return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    F->p->progress(F->p->user, line);
}

static void quant_progress(void *user, const pocketllm_quantize_progress *q) {
    pl_fit_run *F = user;
    const int tenth = q->bytes_total ? (int)(q->bytes_done * 10 / q->bytes_total) : 10;
    if (tenth > F->last_tenth) {
        F->last_tenth = tenth;
        pl_fit_say(F, "quantizing to %s: %d%%", F->recipe, tenth * 10);
    }
}

static void types_string(const uint32_t count[64], char *out, size_t cap) {
    size_t n = 0;
    out[0] = 0;
    for (uint32_t t = 0; t < 64; t++) {
        if (!count[t]) continue;
        const char *name = pocketllm_type_name(t);
        int k = snprintf(out + n, cap - n, "%s%s:%u", n ? " " : "", name ? name : "?", count[t]);
        if (k < 0 || (size_t)k >= cap - n) break;
        n += (size_t)k;
    }
}

/* Whether the row could serve as the quality reference: a run of its text
 * model on this machine's CPU fits the machine's memory (on a device, the
 * host's fallback: the file and the session) -- with the asked cache,
 * the one the reference is scored with (asked: the row's need with it when
 * kv_auto narrowed the row's cache, else 0). */
static bool fits_machine(const pl_fit_run *F, const pocketllm_fit_row *r, uint64_t asked) {
    if (!r->measured) return false;
    uint64_t need = F->on_device ? r->file_bytes + r->session_bytes : r->total_bytes - r->vision_bytes;
    if (asked) need = asked - r->vision_bytes;
    return need && need <= F->machine;
}

/* The cache the caller asked for, for the next row (kv_auto may have
 * narrowed it for the last). */
static void asked_cache(pl_fit_run *F) {
    F->kv_k = F->p->kv_type;
    F->kv_v = pl_kv_v_type(F->p->kv_type, F->p->kv_type_v);
    F->flash = F->p->flash_attn;
}

/* kv_auto: a row that does not fit with the asked cache is measured again
 * with a q8_0 cache, then a q4_0 one (each only when narrower than the
 * asked), and counts with the first that fits; *m becomes the model of
 * that measure, so the row is scored with the cache it fits with.  q8_0
 * first: it is the narrowing that costs least (llama.cpp's users reach for
 * it first too), and a cache is cheaper to narrow than the weights, whose
 * next rung loses a whole bit a weight.  A model or device that cannot
 * hold the narrower cache (heads its block does not divide, a backend
 * without packed caches) keeps the asked one, with a note. */
static pocketllm_status narrow_cache(pl_fit_run *F, pocketllm_fit_result *out, int index, const char *path,
                                     pocketllm_fit_row *row, pocketllm_model **m) {
    static const uint32_t narrower[] = {PL_TYPE_Q8_0, PL_TYPE_Q4_0};
    const uint64_t asked = pl_kv_row_bytes(F->kv_k, 256) + pl_kv_row_bytes(F->kv_v, 256); /* a position's bytes, per 256 values */
    for (size_t j = 0; j < sizeof narrower / sizeof narrower[0]; j++) {
        const uint32_t t = narrower[j];
        if (2 * pl_kv_row_bytes(t, 256) >= asked) continue;
        F->kv_k = F->kv_v = t;
        F->flash = 1; /* a quantized V needs it, in llama.cpp as here */
        pl_fit_say(F, "measuring %s at %u positions with a %s cache", F->recipe, F->n_ctx, pl_type_get(t)->name);
        pocketllm_fit_row narrowed = *row;
        pocketllm_model *m2 = NULL;
        pocketllm_status st = pl_fit_measure(F, path, &narrowed, &m2);
        if (st == POCKETLLM_ERR_INVALID_ARGUMENT || st == POCKETLLM_ERR_UNSUPPORTED) {
            pl_error_clear();
            if (!row->note) row->note = "no narrower cache: this model's heads or this device cannot hold one";
            break;
        }
        if (st) return st;
        if (narrowed.measured && narrowed.fits) {
            out->row_asked_bytes[index] = row->total_bytes;
            out->row_kv_k[index] = out->row_kv_v[index] = t;
            *row = narrowed;
            if (!row->note) row->note = "fits with a narrower cache than asked (kv_auto)";
            pocketllm_model_close(*m);
            *m = m2;
            return POCKETLLM_OK;
        }
        pocketllm_model_close(m2);
    }
    asked_cache(F); /* nothing narrower fits: the row stays as measured, and is scored so */
    return POCKETLLM_OK;
}

/* The row's cache as measured, and whether it may narrow. */
static pocketllm_status measured_cache(pl_fit_run *F, pocketllm_fit_result *out, int index, const char *path,
                                       pocketllm_fit_row *row, pocketllm_model **m) {
    out->row_kv_k[index] = F->kv_k;
    out->row_kv_v[index] = F->kv_v;
    if (!F->p->kv_auto || !row->measured || row->fits || pl_fit_refused(F, row) || !*m) return POCKETLLM_OK;
    return narrow_cache(F, out, index, path, row, m);
}

/* Score a row whose model is open in *m (its file at path): as the
 * reference when there is none yet and it fits the machine -- collecting
 * the importance matrix on the way unless one was given -- else against the
 * reference; rows above the reference are left unscored. */
static pocketllm_status score_row(pl_fit_run *F, pocketllm_fit_result *out, int index, const char *path,
                                  pocketllm_model **m, pocketllm_fit_row *row) {
    if (out->reference >= 0) return pl_fit_score(F, *m, row);
    if (!fits_machine(F, row, out->row_asked_bytes[index])) {
        if (!row->note)
            row->note = index ? "not scored: needs more than this machine's memory, and no rung above it fits"
                              : "not scored: needs more than this machine's memory; the reference is the best rung "
                                "that fits it";
        return POCKETLLM_OK;
    }
    pl_imat *im = NULL;
    pocketllm_status st = POCKETLLM_OK;
    asked_cache(F); /* the quality bar is the asked cache */
    if (!F->imatrix[0]) {
        if ((st = pl_imat_new(false, &im))) return st;
        snprintf(F->imatrix, sizeof F->imatrix, "%s/imatrix.gguf", F->dir);
    }
    st = pl_fit_score_reference(F, path, m, &im, row);
    if (!st) out->reference = index;
    if (im) {
        /* the matrix the next rungs are made with, and loaded for their plans */
        const uint32_t window = F->p->eval_ctx ? F->p->eval_ctx : 512;
        if (!st) st = pl_imat_write(im, F->imatrix, "pocketllm fit evaluation text", window);
        if (!st) st = pl_imatrix_load(F->imatrix, &F->im);
        F->im_loaded = !st;
        if (st) F->imatrix[0] = 0;
        pl_imat_free(im);
    }
    return st;
}

/* Quantize the source to rung i at path, after checking the work folder
 * has room for it (bytes at the source's depth). */
static pocketllm_status make_rung(pl_fit_run *F, size_t i, const char *path) {
    pl_fit_plan here;
    pocketllm_status st = pl_fit_plan_rung(F, ladder[i].recipe, F->n_layer, &here);
    if (st || (st = pl_fit_room(F, ladder[i].recipe, here.file_bytes))) return st;
    pocketllm_quantize_params qp = pocketllm_quantize_default_params();
    qp.type = ladder[i].recipe;
    qp.imatrix = F->imatrix[0] ? F->imatrix : NULL;
    qp.allow_requantize = 1; /* a quantized source; nothing changes for a float one */
    qp.n_threads = F->p->n_threads;
    qp.progress = quant_progress;
    qp.progress_user = F;
    F->last_tenth = -1;
    if ((st = pocketllm_quantize(F->path, path, &qp))) pl_error_prefix(ladder[i].recipe);
    return st;
}

/* The parameters alone: refused before anything is opened. */
static pocketllm_status check_params(const char *model_path, const pocketllm_fit_params *p, bool on_device) {
    /* on a device 0 means the device's own budget (checked once known) */
    if ((p->memory || !on_device) && (p->memory < PL_FIT_MIN_BUDGET || p->memory > PL_FIT_MAX_BUDGET))
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "fit: a budget of %llu bytes is outside 1 MiB .. 1 PiB",
                       (unsigned long long)p->memory);
    if (p->n_ctx > (1u << 20))
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "fit: context of %u positions is too large", p->n_ctx);
    if (!pl_kv_type_supported(p->kv_type) || (p->kv_type_v != POCKETLLM_KV_AS_K && !pl_kv_type_supported(p->kv_type_v)))
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "fit: KV cache types %u/%u: use " PL_KV_TYPE_NAMES, p->kv_type,
                       p->kv_type_v);
    if (p->eval_text == NULL && p->eval_len)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "fit: evaluation text length without text");
    if (p->out_path && !strcmp(p->out_path, model_path))
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "fit: the output would overwrite the source");
    if (p->plan && on_device)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "fit: a plan computes what the host allocates; on a device "
                       "fit measures each rung there (leave out --plan)");
    if (p->plan && p->out_path)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "fit: a plan writes no rung (leave out --out, or leave out "
                       "--plan to make and write the rung)");
    if (p->plan_layers && !p->plan)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "fit: a layer count to compute for goes with a plan (--plan)");
    if (p->plan_layers > 512)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "fit: %u layers: at most 512", p->plan_layers);
    if (p->plan && p->kv_auto)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "fit: a narrower cache is chosen by measuring it, which a "
                       "plan does not do (leave out --plan, or name the cache with --kv T)");
    return POCKETLLM_OK;
}

/* The source's header (kept: every plan is made from it), whether it is
 * quantized, its layers and its own plan (types, tensor bytes); the
 * importance matrix given; the machine the reference must fit. */
static pocketllm_status open_source(pl_fit_run *F, pocketllm_fit_result *out, pl_fit_plan *sp) {
    const pocketllm_fit_params *p = F->p;
    pocketllm_status st = pocketllm_gguf_open(F->path, &F->src);
    if (st) return st;
    for (uint64_t i = 0; i < F->src->n_tensors; i++) {
        const pl_type_traits *tt = pl_type_get(F->src->tensors[i].type);
        if (tt && tt->quantized) out->source_quantized = 1;
    }
    if ((st = pl_fit_plan_layers(F)) || (st = pl_fit_plan_rung(F, NULL, F->layers, sp))) return st;
    if (p->imatrix) {
        snprintf(F->imatrix, sizeof F->imatrix, "%s", p->imatrix);
        if ((st = pl_imatrix_load(p->imatrix, &F->im))) return st;
        F->im_loaded = true;
    }
    F->machine = p->machine_memory;
    pocketllm_cpu_info ci;
    if (!F->machine && pocketllm_cpu_info_get(&ci) == POCKETLLM_OK) F->machine = ci.memory_bytes;
    if (!F->machine) F->machine = UINT64_MAX; /* a host that cannot say: the source is the reference, as ever */
    out->machine_memory = F->machine;
    out->n_layer = F->n_layer;
    out->plan_layers = p->plan ? F->layers : 0;
    return POCKETLLM_OK;
}

/* A row computed from its plan: the file the plan gives, the heap measured
 * on the source (at the plan's depth). */
static void computed_row(const pl_fit_run *F, uint64_t file, uint64_t heap, uint64_t session, pocketllm_fit_row *row) {
    row->measured = 1;
    row->computed = 1;
    row->file_bytes = row->weights_bytes = file;
    row->heap_bytes = heap;
    row->session_bytes = session;
    row->vision_bytes = F->vision;
    row->total_bytes = file + heap + F->vision;
    row->fits = row->total_bytes <= F->budget;
}

/* One rung of the walk, its row last in out->rows: planned, then made and
 * measured (or, in a plan, computed -- and made from the source as it is
 * only to be scored), scored, chosen or removed. */
static pocketllm_status walk_rung(pl_fit_run *F, pocketllm_fit_result *out, size_t i, const pl_fit_plan *sp,
                                  uint64_t heap, uint64_t session, bool hopeless, uint64_t *fingerprints,
                                  char *chosen, size_t cap) {
    const pocketllm_fit_params *p = F->p;
    const int index = (int)out->n_rows - 1;
    pocketllm_fit_row *row = &out->rows[index];
    if (hopeless && !p->all && !p->plan) {
        row->note = "not tried: the session and tokenizer alone need more than the budget";
        return POCKETLLM_OK;
    }
    if (ladder[i].needs_imatrix && !F->imatrix[0] && !p->plan) {
        row->note = "needs an importance matrix (--eval TEXT or --imatrix FILE)";
        return POCKETLLM_OK;
    }
    F->recipe = ladder[i].recipe;
    pl_fit_plan pl;
    pocketllm_status st = pl_fit_plan_rung(F, ladder[i].recipe, F->layers, &pl);
    if (st) {
        pl_error_prefix(ladder[i].recipe);
        return st;
    }
    fingerprints[i] = pl.fingerprint;
    types_string(pl.type_count, row->types, sizeof row->types);
    if (pl.fingerprint == sp->fingerprint) row->same_as = "source";
    for (size_t j = 0; j < i && !row->same_as; j++)
        if (fingerprints[j] == pl.fingerprint) row->same_as = ladder[j].recipe;
    if (pl.tensor_bytes > sp->tensor_bytes) {
        row->note = "not made: larger than the source (requantizing to more bits gains nothing)";
        return POCKETLLM_OK;
    }
    const bool score = p->eval_text && (!hopeless || p->all);
    char path[4300];
    pl_fit_rung_path(F, ladder[i].recipe, path, sizeof path);
    pocketllm_model *m = NULL;
    if (p->plan) {
        if (!out->rows[0].measured) {
            row->note = "not computed: the source's session could not be measured";
            return POCKETLLM_OK;
        }
        computed_row(F, pl.file_bytes, heap, session, row);
        if (pl.imatrix_assumed) row->note = "planned as made with an importance matrix (its metadata not counted)";
        if (row->fits && out->chosen < 0) {
            out->chosen = index;
            out->recipe = ladder[i].recipe;
        }
        if (!score) return POCKETLLM_OK;
        if (ladder[i].needs_imatrix && !F->imatrix[0]) {
            row->note = "not scored: needs an importance matrix (--imatrix, or a reference that fits the machine)";
            return POCKETLLM_OK;
        }
        pl_fit_say(F, "making %s of %s (%u layers) to score it", ladder[i].recipe, F->path, F->n_layer);
        if (!(st = make_rung(F, i, path))) {
            pocketllm_model_params mp = pocketllm_model_default_params();
            mp.n_threads = p->n_threads;
            st = pocketllm_model_open(path, &mp, &m);
        }
        if (!st) st = score_row(F, out, index, path, &m, row);
        pocketllm_model_close(m);
        remove(path);
        return st;
    }
    if ((st = make_rung(F, i, path))) return st;
    pl_fit_say(F, "measuring %s at %u positions", ladder[i].recipe, F->n_ctx);
    if ((st = pl_fit_measure(F, path, row, &m))) return st;
    if ((st = measured_cache(F, out, index, path, row, &m))) {
        pocketllm_model_close(m);
        return st;
    }
    if (score && row->measured) st = score_row(F, out, index, path, &m, row);
    asked_cache(F);
    pocketllm_model_close(m);
    if (st) return st;
    if (row->fits && out->chosen < 0) {
        out->chosen = index;
        out->recipe = ladder[i].recipe;
        snprintf(chosen, cap, "%s", path);
    } else {
        remove(path);
    }
    return POCKETLLM_OK;
}

/* The tower's share of every row, once the context is known. */
static pocketllm_status vision_share(pl_fit_run *F, pocketllm_fit_result *out, pocketllm_fit_row *src) {
    const pocketllm_fit_params *p = F->p;
    pl_fit_vision_need vn;
    pl_fit_say(F, "measuring the vision tower %s", p->mmproj);
    pocketllm_status st = pl_fit_vision(F->path, p->mmproj, p->image_max_tokens, F->n_ctx, p->n_threads, &vn);
    if (st) return st;
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
    return POCKETLLM_OK;
}

pocketllm_status pocketllm_fit(const char *model_path, const pocketllm_fit_params *params, pocketllm_fit_result *out) {
    if (!model_path || !params || !out) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "fit: NULL argument");
    memset(out, 0, sizeof *out);
    out->chosen = -1;
    out->reference = -1;
    const pocketllm_fit_params *p = params;
    const bool on_device = p->device && strcmp(p->device, "cpu") != 0;
    pocketllm_status st = check_params(model_path, p, on_device);
    if (st) return st;

    pl_fit_run *F = calloc(1, sizeof *F);
    if (!F) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    F->p = p;
    F->path = model_path;
    F->on_device = on_device;
    F->budget = p->memory;
    asked_cache(F);
    pocketllm_model *m = NULL;
    pl_fit_plan sp;
    pocketllm_fit_row *src = &out->rows[out->n_rows++];
    src->recipe = "source";
    src->rung = "-";
    if ((st = open_source(F, out, &sp))) goto done;
    types_string(sp.type_count, src->types, sizeof src->types);
    if (on_device && (st = pl_fit_device_budget(F))) goto done;
    out->budget = F->budget;
    if ((st = pl_fit_make_dir(F))) goto done;
    snprintf(F->base, sizeof F->base, "%s/reference.logprobs", F->dir);

    /* the source: its memory, and with a text -- when it fits the machine
     * -- the reference's log-probabilities and the importance matrix */
    F->recipe = "source";
    pl_fit_say(F, "measuring the source");
    if ((st = pl_fit_measure(F, model_path, src, &m))) goto done;
    if (m) F->kv_dim = m->dims.kv_dim;
    /* only a quantized source can be the answer: only its cache narrows */
    if (out->source_quantized) {
        if ((st = measured_cache(F, out, 0, model_path, src, &m))) goto done;
    } else {
        out->row_kv_k[0] = F->kv_k;
        out->row_kv_v[0] = F->kv_v;
    }
    if (!F->n_ctx && (st = pl_fit_default_ctx(F, model_path))) goto done;
    if (p->mmproj && (st = vision_share(F, out, src))) goto done;
    uint64_t heap = src->heap_bytes, session = src->session_bytes;
    if (p->plan && src->measured) {
        pl_fit_plan_heap(F, &heap, &session);
        if (F->layers != F->n_layer) computed_row(F, sp.file_bytes, heap, session, src);
        /* a file quantized at its cut depth gave its few layers the types
         * the recipe gives the first and last layers of a model */
        if (F->layers != F->n_layer && out->source_quantized)
            src->note = "this file's layers repeated: a model quantized whole mixes its layers' types otherwise";
    }
    /* the tokenizer and the session alone, measured on the source, already
     * exceed the budget: no rung can fit, and none is tried (unless all)
     * (with kv_auto a narrower cache might fit: every rung is tried) */
    const bool hopeless = src->measured && heap + F->vision >= F->budget && !p->kv_auto;
    out->n_ctx = F->n_ctx;
    if (p->eval_text && (!hopeless || p->all) && (st = score_row(F, out, 0, model_path, &m, src))) goto done;
    /* a quantized source that fits is the answer as it is: a rung of it is
     * smaller but no better */
    if (out->source_quantized && src->fits) {
        out->chosen = 0;
        out->recipe = src->recipe;
    }
    pocketllm_model_close(m);
    m = NULL;
    asked_cache(F);
    src->budget = F->budget;
    if (p->on_row) p->on_row(p->user, src);

    uint64_t fingerprints[N_RUNGS];
    char chosen_path[4300] = "";
    for (size_t i = 0; i < N_RUNGS; i++) {
        if (out->chosen >= 0 && !p->all && !p->plan) break;
        pocketllm_fit_row *row = &out->rows[out->n_rows++];
        row->recipe = ladder[i].recipe;
        row->rung = ladder[i].rung;
        row->budget = F->budget;
        fingerprints[i] = 0;
        if ((st = walk_rung(F, out, i, &sp, heap, session, hopeless, fingerprints, chosen_path, sizeof chosen_path)))
            goto done;
        if (p->on_row) p->on_row(p->user, row);
    }
    if (out->chosen >= 0 && p->out_path) {
        pl_fit_say(F, "writing %s to %s", out->recipe, p->out_path);
        st = pl_fit_place(out->chosen ? chosen_path : model_path, p->out_path, out->chosen == 0);
    }
done:
    pocketllm_model_close(m);
    const char *names[N_RUNGS];
    for (size_t i = 0; i < N_RUNGS; i++) names[i] = ladder[i].recipe;
    pl_fit_clean(F, names, N_RUNGS);
    if (F->im_loaded) pl_imatrix_free(&F->im);
    if (F->src) pocketllm_gguf_close(F->src);
    free(F);
    return st;
}
