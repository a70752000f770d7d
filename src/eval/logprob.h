/*
 * logprob.h -- the arithmetic of one row of logits for perplexity and KL
 * divergence: negative log-likelihood as llama-perplexity computes it, the
 * log-softmax we save for a base model, llama.cpp's 16-bit encoding of it,
 * and the KL divergence of a model's row against a saved base row.
 */
#ifndef PL_EVAL_LOGPROB_H
#define PL_EVAL_LOGPROB_H

#include <stdbool.h>
#include <stdint.h>

/* -log softmax(logits)[tok], as llama-perplexity: the largest logit in
 * float, the sum of expf(l - max) in double. */
double pl_nll(const float *logits, int64_t n, int32_t tok);

/* lp[i] = log softmax(logits)[i], with the same max and sum as pl_nll. */
void pl_log_softmax(const float *logits, int64_t n, float *lp);

/* u16 values of one row in llama.cpp's --kl-divergence-base layout: n_vocab
 * rounded up to even, plus 4 for the two f32 in front (scale, minimum). */
int64_t pl_logprob_u16_row_len(int64_t n_vocab);
/* Encode a row of logits as llama.cpp does: log-probabilities in 65535
 * steps from max-16 nats (or the smallest logit, if higher) to the top. */
void pl_logprob_u16_encode(const float *logits, int64_t n, uint16_t *row);
/* The log-probability of token i in an encoded row. */
float pl_logprob_u16_get(const uint16_t *row, int64_t i);

/* One scored position of a model against its base. */
typedef struct pl_kl_row {
    double kl;        /* KL(base || model), nats */
    double nll_base;  /* -log p_base(tok) */
    bool same_top;    /* both put the same token first (the lowest id on ties) */
} pl_kl_row;

/* lp: the model's log-probabilities (pl_log_softmax).  Against an exact
 * f32 base every term is taken (a row against itself gives exactly 0);
 * against a u16 base, as llama.cpp: only tokens above -16 nats in the base. */
void pl_kl_row_f32(const float *base_lp, const float *lp, int64_t n, int32_t tok, pl_kl_row *r);
void pl_kl_row_u16(const uint16_t *base_row, const float *lp, int64_t n, int32_t tok, pl_kl_row *r);

#endif
