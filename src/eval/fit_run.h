/*
 * fit_run.h -- what the files of `fit` share: the state of one walk down
 * the ladder (fit.c), measuring and scoring a file (fit_measure.c), the
 * work folder the rungs are made in (fit_work.c), and a rung computed from
 * its quantization plan instead of made (fit_plan.c).
 */
#ifndef PL_EVAL_FIT_RUN_H
#define PL_EVAL_FIT_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "eval/eval.h"
#include "gguf/gguf.h"
#include "pocketllm.h"
#include "quantize/imatrix.h"

typedef struct pl_fit_run {
    const pocketllm_fit_params *p;
    const char *path;      /* the source */
    char dir[4096];        /* the work folder, made for this run */
    char imatrix[4200];    /* the importance matrix in use ("" = none) */
    char base[4200];       /* the reference's saved log-probabilities */
    const char *recipe;    /* what is being worked on, for progress lines */
    int last_tenth;
    uint32_t n_ctx;        /* positions the measured sessions hold (0 until one was made) */
    uint64_t budget;       /* the memory a rung may need */
    uint64_t machine;      /* the memory the quality reference must fit in */
    bool on_device;        /* p->device names a device: measure what it holds */
    uint64_t vision;       /* the tower's share of every row (0: no mmproj) */
    pl_gguf *src;          /* the source's header: every plan is made from it */
    uint32_t n_layer;      /* the source's layers */
    uint32_t layers;       /* the layers the plans compute (n_layer unless plan_layers) */
    int64_t kv_dim;        /* K (and V) elements per position per layer, from the source */
    pl_imatrix im;         /* the importance matrix in use, loaded (n_entries 0: none) */
    bool im_loaded;
    /* the cache the row at hand is measured and scored with: the asked one,
     * or with kv_auto a narrower one (fit.c's narrow_cache) */
    uint32_t kv_k, kv_v;
    int flash;
} pl_fit_run;

/* A line of progress (fit.c). */
void pl_fit_say(pl_fit_run *F, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- measuring and scoring (fit_measure.c) ---------------------------------- */

/* Open path, make a session of the fit's context, run one token, and fill
 * the row's memory from what that allocated (on a device: what the device
 * holds).  The model stays open in *out for scoring (NULL when a device
 * refused its weights). */
pocketllm_status pl_fit_measure(pl_fit_run *F, const char *path, pocketllm_fit_row *row, pocketllm_model **out);
/* Whether the row is one a device refused (nothing to score on it). */
bool pl_fit_refused(const pl_fit_run *F, const pocketllm_fit_row *row);
/* Score *m as the reference: save its log-probabilities (and, with im,
 * collect the importance matrix) -- on the CPU from path when a device
 * cannot hold it.  POCKETLLM_ERR_NO_MEMORY: it could not be run. */
pocketllm_status pl_fit_score_reference(pl_fit_run *F, const char *path, pocketllm_model **m, pl_imat **im,
                                        pocketllm_fit_row *row);
/* Score *m against the reference; a rung whose evaluation does not fit a
 * device is left unscored, with a note. */
pocketllm_status pl_fit_score(pl_fit_run *F, pocketllm_model *m, pocketllm_fit_row *row);
/* The device's budget (F->budget), held to what it offers. */
pocketllm_status pl_fit_device_budget(pl_fit_run *F);
/* F->n_ctx when the source made no session (a device refused it). */
pocketllm_status pl_fit_default_ctx(pl_fit_run *F, const char *path);

/* ---- the work folder (fit_work.c) ------------------------------------------- */

pocketllm_status pl_fit_make_dir(pl_fit_run *F);
void pl_fit_rung_path(const pl_fit_run *F, const char *recipe, char *out, size_t cap);
/* Refuse, in one line, a rung of `bytes` that the work folder has no room for. */
pocketllm_status pl_fit_room(const pl_fit_run *F, const char *recipe, uint64_t bytes);
/* Move the chosen file to its place (copying across file systems), or
 * copy it there (keep: the source itself was chosen). */
pocketllm_status pl_fit_place(const char *from, const char *to, bool keep);
/* Remove every file the run made, and the folder. */
void pl_fit_clean(pl_fit_run *F, const char *const *recipes, size_t n);

/* ---- a rung computed (fit_plan.c) ------------------------------------------- */

typedef struct pl_fit_plan {
    uint64_t file_bytes;       /* the file pocketllm_quantize would write */
    uint64_t tensor_bytes;     /* of which the tensors' data, unpadded */
    uint32_t type_count[64];   /* its tensors per type */
    uint64_t fingerprint;      /* of every tensor's name and type: equal plans, equal files */
    bool imatrix_assumed;      /* planned as made with an importance matrix none was given for */
} pl_fit_plan;

/* The rung `recipe` of the source at `layers` layers, as quantized with
 * F's importance matrix (none: as llama-quantize plans without one, an IQ
 * recipe as with one); recipe NULL: the source itself at that depth. */
pocketllm_status pl_fit_plan_rung(const pl_fit_run *F, const char *recipe, uint32_t layers, pl_fit_plan *out);
/* The layers of the source, checked to be alike when the plan repeats them. */
pocketllm_status pl_fit_plan_layers(pl_fit_run *F);
/* What the heap and session measured on the source at its own depth come
 * to at F->layers: the KV cache and the tables of the other layers added. */
void pl_fit_plan_heap(const pl_fit_run *F, uint64_t *heap, uint64_t *session);

#endif
