/*
 * srv_logprobs.c -- log-softmax of one row of logits, the chosen token's
 * value and the k largest (ties: the lower id first).
 */
#include "srv_logprobs.h"

#include <math.h>

void srv_logprobs_compute(const float *logits, int32_t n_vocab, int32_t chosen, int k, srv_logprob *out) {
    float max = -INFINITY;
    for (int32_t i = 0; i < n_vocab; i++)
        if (logits[i] > max) max = logits[i];
    double sum = 0.0;
    for (int32_t i = 0; i < n_vocab; i++) sum += exp((double)logits[i] - (double)max);
    const double lse = (double)max + log(sum);
    out->id = chosen;
    out->lp = (float)((double)logits[chosen] - lse);
    if (k > SRV_MAX_TOP_LOGPROBS) k = SRV_MAX_TOP_LOGPROBS;
    if (k > n_vocab) k = n_vocab;
    /* the k best, kept sorted best first; most logits lose against the
     * k-th and cost one comparison */
    int n = 0;
    for (int32_t i = 0; i < n_vocab && k > 0; i++) {
        const float v = logits[i];
        if (n == k && !(v > out->top_lp[n - 1])) continue;
        int at = n < k ? n : k - 1;
        while (at > 0 && v > out->top_lp[at - 1]) {
            out->top_lp[at] = out->top_lp[at - 1];
            out->top_id[at] = out->top_id[at - 1];
            at--;
        }
        out->top_lp[at] = v;
        out->top_id[at] = i;
        if (n < k) n++;
    }
    for (int i = 0; i < n; i++) out->top_lp[i] = (float)((double)out->top_lp[i] - lse);
    out->n_top = n;
}
