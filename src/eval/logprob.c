/*
 * logprob.c -- per-row log-softmax, negative log-likelihood and KL
 * divergence.  The formulas follow llama.cpp's tools/perplexity so that the
 * numbers are comparable (max in float, the exponential sum in double).
 */
#include "eval/logprob.h"

#include <math.h>
#include <string.h>

/* Largest logit (the first one on ties) and log(sum exp(l - max)). */
static float row_max(const float *l, int64_t n, int64_t *imax) {
    float m = l[0];
    int64_t im = 0;
    for (int64_t i = 1; i < n; i++)
        if (l[i] > m) m = l[i], im = i;
    if (imax) *imax = im;
    return m;
}

static double log_sum_exp(const float *l, int64_t n, float max) {
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += expf(l[i] - max);
    return log(s);
}

double pl_nll(const float *logits, int64_t n, int32_t tok) {
    const float max = row_max(logits, n, NULL);
    return (double)max + log_sum_exp(logits, n, max) - (double)logits[tok];
}

void pl_log_softmax(const float *logits, int64_t n, float *lp) {
    const float max = row_max(logits, n, NULL);
    const double lse = log_sum_exp(logits, n, max);
    for (int64_t i = 0; i < n; i++) lp[i] = (float)((double)(logits[i] - max) - lse);
}

int64_t pl_logprob_u16_row_len(int64_t n_vocab) { return 2 * ((n_vocab + 1) / 2) + 4; }

void pl_logprob_u16_encode(const float *logits, int64_t n, uint16_t *row) {
    const float max = row_max(logits, n, NULL);
    float min = logits[0];
    for (int64_t i = 1; i < n; i++)
        if (logits[i] < min) min = logits[i];
    if (min < max - 16) min = max - 16;
    const float lse = (float)log_sum_exp(logits, n, max);
    const float min_lp = min - max - lse;
    const float scale = (max - min) / 65535.f;
    memcpy(row, &scale, 4);
    memcpy(row + 2, &min_lp, 4);
    uint16_t *q = row + 4;
    const int64_t len = pl_logprob_u16_row_len(n) - 4;
    memset(q, 0, (size_t)len * sizeof *q);
    if (scale == 0) return;
    const float inv = 1 / scale;
    /* round to nearest, ties to even: what llama.cpp's nearest_int does */
    for (int64_t i = 0; i < n; i++) q[i] = logits[i] > min ? (uint16_t)lrintf(inv * (logits[i] - min)) : 0;
}

float pl_logprob_u16_get(const uint16_t *row, int64_t i) {
    float scale, min_lp;
    memcpy(&scale, row, 4);
    memcpy(&min_lp, row + 2, 4);
    return scale * row[4 + i] + min_lp;
}

/* The first largest of lp. */
static int64_t argmax(const float *lp, int64_t n) {
    int64_t im;
    row_max(lp, n, &im);
    return im;
}

void pl_kl_row_f32(const float *base_lp, const float *lp, int64_t n, int32_t tok, pl_kl_row *r) {
    double kl = 0;
    for (int64_t i = 0; i < n; i++) {
        const double p = exp((double)base_lp[i]);
        if (p > 0) kl += p * ((double)base_lp[i] - (double)lp[i]);
    }
    r->kl = kl;
    r->nll_base = -(double)base_lp[tok];
    r->same_top = argmax(base_lp, n) == argmax(lp, n);
}

void pl_kl_row_u16(const uint16_t *base_row, const float *lp, int64_t n, int32_t tok, pl_kl_row *r) {
    float scale, min_lp;
    memcpy(&scale, base_row, 4);
    memcpy(&min_lp, base_row + 2, 4);
    const uint16_t *q = base_row + 4;
    double kl = 0;
    int64_t ibase = 0;
    float best = 0;
    for (int64_t i = 0; i < n; i++) {
        const float lb = scale * q[i] + min_lp;
        if (i == 0 || lb > best) best = lb, ibase = i;
        if (lb > -16.f) kl += (double)expf(lb) * ((double)lb - (double)lp[i]);
    }
    r->kl = kl;
    r->nll_base = -(double)(scale * q[tok] + min_lp);
    r->same_top = ibase == argmax(lp, n);
}
