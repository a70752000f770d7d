/*
 * srv_logprobs.h -- log-probabilities of a generated token and its best
 * alternatives, from the logits it was sampled from (with logit_bias
 * applied; before temperature, top-k/top-p/min-p and the penalties, i.e.
 * the model's own distribution, as OpenAI reports it).
 */
#ifndef PL_SRV_LOGPROBS_H
#define PL_SRV_LOGPROBS_H

#include "srv_sched.h"

void srv_logprobs_compute(const float *logits, int32_t n_vocab, int32_t chosen, int k, srv_logprob *out);

#endif
