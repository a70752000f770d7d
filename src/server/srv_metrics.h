/*
 * srv_metrics.h -- the server's counters for GET /metrics (`pocketllm
 * serve --metrics`), in the Prometheus text exposition format: requests by
 * endpoint and status, prompt and generated tokens, prompt-cache reuse,
 * embeddings, time to first token and between tokens, request durations;
 * the scheduler's gauges (queue depth, busy sequences) are read when the
 * page is rendered.  Every function may be called from any thread and
 * takes NULL for "no metrics".
 */
#ifndef PL_SRV_METRICS_H
#define PL_SRV_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "srv_sched.h"

typedef struct srv_metrics srv_metrics;

srv_metrics *srv_metrics_new(void);
void srv_metrics_free(srv_metrics *m);

/* Seconds on the monotonic clock (for the intervals given below). */
double srv_metrics_now(void);

/* A request answered: its URL (mapped to a fixed set of endpoint labels),
 * HTTP status, and seconds from its headers to its answer's end. */
void srv_metrics_request(srv_metrics *m, const char *url, unsigned status, double seconds);
/* A sequence took a prompt of `tokens`, `reused` of them found in the
 * sequence's cache (not evaluated again). */
void srv_metrics_prompt(srv_metrics *m, uint64_t tokens, uint64_t reused);
/* A token was generated `seconds` after the request was submitted (the
 * first token of a sequence) or after the sequence's previous token. */
void srv_metrics_token(srv_metrics *m, double seconds, bool first);
/* An embeddings request served: its inputs and their tokens. */
void srv_metrics_embeddings(srv_metrics *m, uint64_t inputs, uint64_t tokens);

/* The exposition text (caller frees; NULL when out of memory). */
char *srv_metrics_render(srv_metrics *m, const srv_sched_stats *st);

#endif
