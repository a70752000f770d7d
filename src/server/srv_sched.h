/*
 * srv_sched.h -- continuous batching: requests become jobs (one per
 * choice), jobs take the sequences of one multi-sequence session up to
 * --parallel at a time, and every step evaluates one token of each
 * decoding job plus a chunk of each prefilling one in a single forward
 * pass.  Past --parallel, requests wait in a bounded queue (full: 503).
 * A cancelled request (its client went away) leaves the queue or frees its
 * sequence at the next step.
 *
 * Threads: the scheduler runs its own thread; connection threads submit a
 * request, then poll its task for output until it is done.
 */
#ifndef PL_SRV_SCHED_H
#define PL_SRV_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "srv_model.h"
#include "srv_request.h"
#include "srv_text.h"

typedef struct srv_sched srv_sched;
typedef struct srv_task srv_task;
struct srv_metrics;
struct srv_embd;

/* Most ids one sequence drafts a step (--draft-max). */
#define SRV_MAX_DRAFT 64

typedef struct srv_sched_params {
    uint32_t parallel;  /* sequences decoded together */
    uint32_t queue;     /* requests that may wait for a sequence */
    uint32_t n_batch;   /* most tokens in one forward pass */
    uint32_t kv_type, kv_type_v; /* as pocketllm_session_params */
    int flash_attn; /* llama.cpp's flash-attention arithmetic */
    int n_threads;
    struct srv_metrics *metrics; /* tokens, prompt-cache reuse, latencies (srv_metrics.h); NULL: none */
    /* speculative decoding by prompt lookup (0: off): each decoding
     * sequence drafts up to draft_max ids from n-grams (at most `lookup`
     * long) of what it holds, verified in the same batched pass */
    uint32_t lookup, draft_max, draft_min;
    /* speculative decoding with a draft model (NULL: none; the caller's,
     * open until srv_sched_free, its vocabulary checked to be the
     * model's): each decoding sequence has a sequence of its own in the
     * draft's session, which drafts up to draft_max ids greedily, all
     * sequences' drafts in batched passes of the draft */
    pocketllm_model *draft_model;
    const char *draft_name;  /* its name for /health (the caller's) */
} srv_sched_params;

/* One generated token's log-probability and the best alternatives. */
typedef struct srv_logprob {
    int32_t id;
    float lp;
    int n_top;
    int32_t top_id[SRV_MAX_TOP_LOGPROBS];
    float top_lp[SRV_MAX_TOP_LOGPROBS];
} srv_logprob;

/* What a poll hands over for one choice: the text and tokens produced
 * since the last poll. */
typedef struct srv_choice_update {
    srv_buf text;
    srv_logprob *lp;
    size_t n_lp, cap_lp;
    bool finished;           /* finished with this update */
    const char *finish;      /* "stop" or "length" once finished */
    uint32_t n_gen;          /* tokens generated so far */
} srv_choice_update;

typedef struct srv_update {
    size_t n_choices;
    srv_choice_update *c;
    bool done;               /* every choice has finished */
    bool failed;             /* the engine failed: message in error */
    bool started;            /* the request has left the queue */
    char error[256];
} srv_update;

pocketllm_status srv_sched_new(const srv_model *m, const srv_sched_params *p, srv_sched **out, char **err);
/* Stop the thread (running requests are cancelled) and free everything. */
void srv_sched_free(srv_sched *s);

/* Queue a request; the task takes over *req (left zeroed).  NULL with e
 * set (503) when the queue is full. */
srv_task *srv_sched_submit(srv_sched *s, srv_request *req, srv_error *e);
/* Queue an embeddings request (srv_embed.h) as one job: it takes a free
 * sequence and embeds one input per step there.  The task takes over em;
 * NULL with e set (503) when the queue is full, em still the caller's. */
srv_task *srv_sched_submit_embed(srv_sched *s, struct srv_embd *em, srv_error *e);
/* The embeddings request a task runs (its vectors are complete once the
 * task is done; valid until release). */
const struct srv_embd *srv_task_embd(const srv_task *t);
/* The request the task runs (read-only, valid until release). */
const srv_request *srv_task_request(const srv_task *t);
/* A finished transcription's result (the caller frees it; NULL before
 * the task is done, or when it failed). */
pocketllm_transcript *srv_task_take_transcript(srv_sched *s, srv_task *t);
/* Wait up to timeout_ms for news, then move what is new into u (appended
 * to what u holds).  Returns true when anything changed. */
bool srv_sched_poll(srv_sched *s, srv_task *t, int timeout_ms, srv_update *u);
/* The connection is done with the task: a task still running is
 * cancelled (its sequence freed at the next step). */
void srv_sched_release(srv_sched *s, srv_task *t);

void srv_update_init(srv_update *u, size_t n_choices);
void srv_update_free(srv_update *u);
/* Forget the text and tokens already used (keeps the state flags). */
void srv_update_clear(srv_update *u);

/* Counters for /health.  The cumulative ones show what batching did: a
 * forward pass evaluates tokens of up to `parallel` sequences at once. */
typedef struct srv_sched_stats {
    uint32_t active, queued, parallel, queue_cap;
    uint64_t passes;          /* forward passes run since start */
    uint64_t tokens;          /* tokens they evaluated (prompt and generated) */
    uint32_t most_sequences;  /* most sequences one pass has served */
    uint32_t lookup;          /* --lookup (0: none) */
    const char *draft_model;  /* --draft: its name; NULL: none (nor lookup: no speculative decoding) */
    uint64_t drafted, accepted; /* drafted ids verified, and how many of them were kept */
} srv_sched_stats;
void srv_sched_stats_get(srv_sched *s, srv_sched_stats *st);

#endif
