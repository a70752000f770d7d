/*
 * sampler.c -- the next token from logits: repetition / presence /
 * frequency penalties over the recent ids, then greedy, or top-k, top-p,
 * min-p, temperature and a seeded draw -- the order of llama.cpp's default
 * sampler chain.  The draw uses the engine's own generator (base/rng.h),
 * so a seed gives the same ids on every machine.
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/rng.h"
#include "runtime/sampler_draw.h"
#include "pocketllm.h"

typedef struct cand {
    float logit;
    int32_t id;
} cand;

struct pocketllm_sampler {
    pocketllm_sampler_params p;
    pl_rng rng;
    int32_t *hist; /* every accepted id, oldest first */
    size_t n_hist, cap_hist;
    cand *c;       /* n_vocab candidates */
    int32_t *count;/* per id, occurrences in the penalty window (zero between calls) */
    pl_wcand *wc;  /* n_vocab weighted candidates for the draw without top-p */
    int32_t n_vocab;
};

pocketllm_sampler_params pocketllm_sampler_default_params(void) {
    pocketllm_sampler_params p = {
        .temperature = 0.0f,
        .top_k = 40,
        .top_p = 0.95f,
        .min_p = 0.05f,
        .repeat_penalty = 1.0f,
        .presence_penalty = 0.0f,
        .frequency_penalty = 0.0f,
        .penalty_last_n = 64,
        .seed = 0,
    };
    return p;
}

pocketllm_status pocketllm_sampler_new(const pocketllm_sampler_params *params, pocketllm_sampler **out) {
    if (!out) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "sampler_new: no output pointer");
    *out = NULL;
    pocketllm_sampler_params p = params ? *params : pocketllm_sampler_default_params();
    if (!isfinite(p.temperature)) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "temperature must be a finite number");
    if (!(p.top_p >= 0.0f && p.top_p <= 1.0f)) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "top-p %g is outside [0, 1]", (double)p.top_p);
    if (!(p.min_p >= 0.0f && p.min_p <= 1.0f)) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "min-p %g is outside [0, 1]", (double)p.min_p);
    if (!(p.repeat_penalty > 0.0f) || !isfinite(p.repeat_penalty))
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "repeat penalty %g must be a positive number", (double)p.repeat_penalty);
    if (!isfinite(p.presence_penalty) || !isfinite(p.frequency_penalty))
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "presence and frequency penalties must be finite numbers");
    if (p.penalty_last_n < -1) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "penalty window %d: use -1 (all) or >= 0", p.penalty_last_n);
    pocketllm_sampler *s = calloc(1, sizeof *s);
    if (!s) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    s->p = p;
    pl_rng_seed(&s->rng, p.seed);
    *out = s;
    return POCKETLLM_OK;
}

void pocketllm_sampler_free(pocketllm_sampler *s) {
    if (!s) return;
    free(s->hist);
    free(s->c);
    free(s->count);
    free(s->wc);
    free(s);
}

void pocketllm_sampler_reset(pocketllm_sampler *s) {
    if (!s) return;
    s->n_hist = 0;
    pl_rng_seed(&s->rng, s->p.seed);
}

void pocketllm_sampler_accept(pocketllm_sampler *s, int32_t id) {
    if (!s) return;
    if (s->n_hist == s->cap_hist) {
        size_t cap = s->cap_hist ? s->cap_hist * 2 : 256;
        int32_t *h = realloc(s->hist, cap * sizeof *h);
        if (!h) return; /* the penalties then see a shorter history */
        s->hist = h;
        s->cap_hist = cap;
    }
    s->hist[s->n_hist++] = id;
}

/* Descending logit, then ascending id: a total order, so equal logits
 * always come out the same way. */
static int by_logit_desc(const void *a, const void *b) {
    const cand *x = a, *y = b;
    if (x->logit != y->logit) return x->logit > y->logit ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* Move the k best candidates (in by_logit_desc order) to the front,
 * unordered: quickselect with a three-way partition. */
static void select_top(cand *c, size_t n, size_t k) {
    size_t lo = 0, hi = n; /* the boundary after the k-th best lies in [lo, hi] */
    while (hi - lo > 1) {
        const cand pivot = c[lo + (hi - lo) / 2];
        size_t lt = lo, i = lo, gt = hi;
        while (i < gt) {
            const int cmp = by_logit_desc(&c[i], &pivot);
            if (cmp < 0) {
                cand t = c[lt];
                c[lt++] = c[i];
                c[i++] = t;
            } else if (cmp > 0) {
                cand t = c[--gt];
                c[gt] = c[i];
                c[i] = t;
            } else {
                i++;
            }
        }
        /* [lo, lt) better than the pivot, [lt, gt) the pivot, [gt, hi) worse */
        if (k <= lt) hi = lt;
        else if (k >= gt) lo = gt;
        else return;
    }
}

static void apply_penalties(pocketllm_sampler *s) {
    const pocketllm_sampler_params *p = &s->p;
    if (p->repeat_penalty == 1.0f && p->presence_penalty == 0.0f && p->frequency_penalty == 0.0f) return;
    size_t win = p->penalty_last_n < 0 ? s->n_hist : (size_t)p->penalty_last_n;
    if (win > s->n_hist) win = s->n_hist;
    const int32_t *h = s->hist + (s->n_hist - win);
    for (size_t i = 0; i < win; i++)
        if (h[i] >= 0 && h[i] < s->n_vocab) s->count[h[i]]++;
    for (size_t i = 0; i < win; i++) {
        const int32_t id = h[i];
        if (id < 0 || id >= s->n_vocab || s->count[id] == 0) continue; /* out of range, or done */
        float *l = &s->c[id].logit;
        if (*l <= 0) *l *= p->repeat_penalty;
        else *l /= p->repeat_penalty;
        *l -= (float)s->count[id] * p->frequency_penalty + p->presence_penalty;
        s->count[id] = 0;
    }
}

/* The chain up to the draw: penalties, then greedy (*greedy set: the id
 * in *id) or top-k, min-p, top-p and temperature, leaving the n weighted
 * survivors in s->wc (in the sorted order when *sorted) and their sum. */
static pocketllm_status chain(pocketllm_sampler *s, const float *logits, int32_t n_vocab, bool *greedy, int32_t *id,
                              size_t *n_out, bool *sorted_out, double *sum_out) {
    if (!s || !logits || n_vocab < 1) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "sampler_sample: bad argument");
    if (n_vocab != s->n_vocab) {
        cand *c = realloc(s->c, (size_t)n_vocab * sizeof *c);
        if (c) s->c = c;
        pl_wcand *wc = c ? realloc(s->wc, (size_t)n_vocab * sizeof *wc) : NULL;
        if (wc) s->wc = wc;
        int32_t *cnt = wc ? calloc((size_t)n_vocab, sizeof *cnt) : NULL;
        if (!cnt) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for %d candidates", n_vocab);
        free(s->count);
        s->count = cnt;
        s->n_vocab = n_vocab;
    }
    cand *c = s->c;
    /* a NaN would break the ordering the selection relies on */
    for (int32_t i = 0; i < n_vocab; i++) c[i] = (cand){isnan(logits[i]) ? -INFINITY : logits[i], i};
    apply_penalties(s);
    size_t n = (size_t)n_vocab;

    const pocketllm_sampler_params *p = &s->p;
    float top = -INFINITY;
    for (size_t i = 0; i < n; i++) top = c[i].logit > top ? c[i].logit : top;
    if (isfinite(top)) {
        /* tokens at -inf (a grammar's mask) can never be drawn: leave them
         * out of the sorting below; the order of the rest is kept, so the
         * draw is the same as over all of them */
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (c[i].logit != -INFINITY) c[k++] = c[i];
        n = k;
    }
    if (p->temperature <= 0.0f || !isfinite(top)) { /* greedy (also when nothing has a finite logit) */
        size_t best = 0;
        for (size_t i = 1; i < n; i++)
            if (c[i].logit > c[best].logit) best = i;
        *id = c[best].id;
        *greedy = true;
        return POCKETLLM_OK;
    }
    *greedy = false;
    if (p->top_k > 0 && (size_t)p->top_k < n) {
        select_top(c, n, (size_t)p->top_k);
        n = (size_t)p->top_k;
    }
    /* probabilities over the survivors of top-k */
    float max = -INFINITY;
    for (size_t i = 0; i < n; i++) max = c[i].logit > max ? c[i].logit : max;
    double total = 0.0; /* top-p's normaliser (before min-p, as llama.cpp's chain has it) */
    if (p->top_p < 1.0f)
        for (size_t i = 0; i < n; i++) total += exp((double)c[i].logit - (double)max);
    /* min-p keeps p_i >= min_p * p_max, i.e. logit >= max + log(min_p);
     * applying it before sorting only shortens what top-p sorts: both
     * keep a prefix of the sorted order, and min-p's test does not depend
     * on the normalisation */
    if (p->min_p > 0.0f) {
        const double cut = (double)max + log((double)p->min_p);
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if ((double)c[i].logit >= cut) c[k++] = c[i];
        n = k;
    }
    const bool sorted = p->top_p < 1.0f;
    if (sorted) {
        /* top-p: the shortest prefix of the sorted order holding top_p */
        qsort(c, n, sizeof *c, by_logit_desc);
        double cum = 0.0;
        size_t k = 0;
        while (k < n) {
            cum += exp((double)c[k].logit - (double)max) / total;
            k++;
            if (cum >= (double)p->top_p) break;
        }
        n = k;
    }
    /* temperature, then the draw: along the sorted prefix, or (no prefix to
     * keep) in the sorted order without sorting */
    pl_wcand *wc = s->wc;
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        wc[i] = (pl_wcand){exp(((double)c[i].logit - (double)max) / (double)p->temperature), c[i].logit, c[i].id};
        sum += wc[i].w;
    }
    *n_out = n;
    *sorted_out = sorted;
    *sum_out = sum;
    return POCKETLLM_OK;
}

pocketllm_status pocketllm_sampler_sample(pocketllm_sampler *s, const float *logits, int32_t n_vocab, int32_t *id) {
    if (!id) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "sampler_sample: bad argument");
    bool greedy, sorted;
    size_t n;
    double sum;
    pocketllm_status st = chain(s, logits, n_vocab, &greedy, id, &n, &sorted, &sum);
    if (st || greedy) return st;
    pl_wcand *wc = s->wc;
    const double r = pl_rng_uniform_f64(&s->rng) * sum;
    *id = wc[sorted ? pl_draw_walk(wc, n, r) : pl_draw_select(wc, n, r)].id;
    return POCKETLLM_OK;
}

pocketllm_status pocketllm_sampler_probs(pocketllm_sampler *s, const float *logits, int32_t n_vocab, float *probs) {
    if (!probs) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "sampler_probs: bad argument");
    bool greedy, sorted;
    size_t n;
    double sum;
    int32_t id;
    pocketllm_status st = chain(s, logits, n_vocab, &greedy, &id, &n, &sorted, &sum);
    if (st) return st;
    memset(probs, 0, (size_t)n_vocab * sizeof *probs);
    if (greedy) {
        probs[id] = 1.0f;
        return POCKETLLM_OK;
    }
    for (size_t i = 0; i < n; i++) probs[s->wc[i].id] = (float)(s->wc[i].w / sum);
    return POCKETLLM_OK;
}

/* The residual draw of speculative sampling: from max(0, p - q),
 * normalised (q NULL: the point mass on the draft), walked in id order;
 * when nothing is left (p <= q everywhere, by rounding) from p itself. */
static double residual(const float *p, const float *q, int32_t i, int32_t draft) {
    return (double)p[i] - (q ? (double)q[i] : i == draft ? 1.0 : 0.0);
}

static int32_t draw_residual(pocketllm_sampler *s, const float *p, const float *q, int32_t n, int32_t draft) {
    double total = 0.0;
    for (int32_t i = 0; i < n; i++) {
        const double r = residual(p, q, i, draft);
        if (r > 0) total += r;
    }
    const bool plain = !(total > 0);
    if (plain)
        for (int32_t i = 0; i < n; i++) total += (double)p[i];
    const double u = pl_rng_uniform_f64(&s->rng) * total;
    double cum = 0.0;
    int32_t last = -1;
    for (int32_t i = 0; i < n; i++) {
        const double r = plain ? (double)p[i] : residual(p, q, i, draft);
        if (r <= 0) continue;
        last = i;
        cum += r;
        if (u < cum) return i;
    }
    return last >= 0 ? last : draft;
}

pocketllm_status pocketllm_sampler_spec_step(pocketllm_sampler *s, const float *p, const float *q, int32_t n_vocab,
                                             int32_t draft, int32_t *id) {
    if (!s || !p || !id || n_vocab < 1 || draft < 0 || draft >= n_vocab)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "sampler_spec_step: bad argument");
    const double pd = (double)p[draft], qd = q ? (double)q[draft] : 1.0;
    /* accept with probability min(1, p/q) */
    if (qd > 0 && (pd >= qd || pl_rng_uniform_f64(&s->rng) * qd < pd)) {
        *id = draft;
        return POCKETLLM_OK;
    }
    *id = draw_residual(s, p, q, n_vocab, draft);
    return POCKETLLM_OK;
}
