/*
 * srv_metrics.c -- the counters of srv_metrics.h under one mutex (a few
 * additions per generated token: nothing next to a forward pass), and
 * their rendering in the Prometheus text exposition format 0.0.4: a
 * "# HELP" and a "# TYPE" line per family, names prefixed pocketllm_,
 * counters ending in _total, histograms as cumulative _bucket{le=...}
 * lines with _sum and _count.
 */
#include "srv_metrics.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "srv_text.h"

/* the endpoint label of a URL: a fixed set, so that a scan of random
 * paths cannot grow the page */
static const char *const ENDPOINTS[] = {"/health", "/metrics", "/v1/models", "/v1/chat/completions", "/v1/completions",
                                        "/v1/embeddings", "/v1/audio/transcriptions", "other"};
#define N_ENDPOINTS (sizeof ENDPOINTS / sizeof *ENDPOINTS)
#define MAX_STATUSES 32 /* distinct HTTP statuses kept apart (the server answers about 12) */

/* seconds: from a fast step of a small model to a long queue */
static const double LATENCY_LE[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300};
static const double TOKEN_LE[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10};
#define N_LATENCY (sizeof LATENCY_LE / sizeof *LATENCY_LE)
#define N_TOKEN (sizeof TOKEN_LE / sizeof *TOKEN_LE)

typedef struct hist {
    const double *le;
    size_t n;
    uint64_t bucket[N_LATENCY + 1]; /* per bound (not cumulative); the last is past every bound */
    uint64_t count;
    double sum;
} hist;

struct srv_metrics {
    pthread_mutex_t mu;
    unsigned status[MAX_STATUSES];
    size_t n_status;
    uint64_t requests[N_ENDPOINTS][MAX_STATUSES];
    uint64_t prompt_tokens, cache_hits, cache_misses, cache_tokens, generated;
    uint64_t embd_inputs, embd_tokens;
    hist ttft, tpot, duration;
};

srv_metrics *srv_metrics_new(void) {
    srv_metrics *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    pthread_mutex_init(&m->mu, NULL);
    m->ttft = (hist){.le = LATENCY_LE, .n = N_LATENCY};
    m->duration = (hist){.le = LATENCY_LE, .n = N_LATENCY};
    m->tpot = (hist){.le = TOKEN_LE, .n = N_TOKEN};
    return m;
}

void srv_metrics_free(srv_metrics *m) {
    if (!m) return;
    pthread_mutex_destroy(&m->mu);
    free(m);
}

double srv_metrics_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void observe(hist *h, double v) {
    size_t i = 0;
    while (i < h->n && v > h->le[i]) i++;
    h->bucket[i]++;
    h->count++;
    h->sum += v;
}

static size_t endpoint_of(const char *url) {
    for (size_t i = 0; i + 1 < N_ENDPOINTS; i++)
        if (strcmp(url, ENDPOINTS[i]) == 0) return i;
    if (strncmp(url, "/v1/models/", 11) == 0) return 2;
    return N_ENDPOINTS - 1;
}

void srv_metrics_request(srv_metrics *m, const char *url, unsigned status, double seconds) {
    if (!m || !status) return;
    const size_t ep = endpoint_of(url ? url : "");
    pthread_mutex_lock(&m->mu);
    size_t k = 0;
    while (k < m->n_status && m->status[k] != status) k++;
    if (k == m->n_status && k < MAX_STATUSES) m->status[m->n_status++] = status;
    if (k < m->n_status) m->requests[ep][k]++;
    observe(&m->duration, seconds);
    pthread_mutex_unlock(&m->mu);
}

void srv_metrics_prompt(srv_metrics *m, uint64_t tokens, uint64_t reused) {
    if (!m) return;
    pthread_mutex_lock(&m->mu);
    m->prompt_tokens += tokens;
    m->cache_tokens += reused;
    if (reused) m->cache_hits++;
    else m->cache_misses++;
    pthread_mutex_unlock(&m->mu);
}

void srv_metrics_token(srv_metrics *m, double seconds, bool first) {
    if (!m) return;
    pthread_mutex_lock(&m->mu);
    m->generated++;
    observe(first ? &m->ttft : &m->tpot, seconds);
    pthread_mutex_unlock(&m->mu);
}

void srv_metrics_embeddings(srv_metrics *m, uint64_t inputs, uint64_t tokens) {
    if (!m) return;
    pthread_mutex_lock(&m->mu);
    m->embd_inputs += inputs;
    m->embd_tokens += tokens;
    pthread_mutex_unlock(&m->mu);
}

/* ---- rendering ------------------------------------------------------------------ */

static void family(srv_buf *b, const char *name, const char *type, const char *help) {
    srv_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void scalar(srv_buf *b, const char *name, const char *type, const char *help, uint64_t v) {
    family(b, name, type, help);
    srv_buf_printf(b, "%s %llu\n", name, (unsigned long long)v);
}

static void histogram(srv_buf *b, const char *name, const char *help, const hist *h) {
    family(b, name, "histogram", help);
    uint64_t cum = 0;
    for (size_t i = 0; i < h->n; i++) {
        cum += h->bucket[i];
        srv_buf_printf(b, "%s_bucket{le=\"%g\"} %llu\n", name, h->le[i], (unsigned long long)cum);
    }
    srv_buf_printf(b, "%s_bucket{le=\"+Inf\"} %llu\n%s_sum %.9g\n%s_count %llu\n", name, (unsigned long long)h->count,
                   name, h->sum, name, (unsigned long long)h->count);
}

char *srv_metrics_render(srv_metrics *m, const srv_sched_stats *st) {
    if (!m) return NULL;
    srv_buf b = {0};
    pthread_mutex_lock(&m->mu);
    family(&b, "pocketllm_requests_total", "counter", "HTTP requests answered, by endpoint and status.");
    for (size_t e = 0; e < N_ENDPOINTS; e++)
        for (size_t k = 0; k < m->n_status; k++)
            if (m->requests[e][k])
                srv_buf_printf(&b, "pocketllm_requests_total{endpoint=\"%s\",status=\"%u\"} %llu\n", ENDPOINTS[e],
                               m->status[k], (unsigned long long)m->requests[e][k]);
    family(&b, "pocketllm_errors_total", "counter",
           "Requests answered with an HTTP error status (4xx, 5xx; 499: the client went away), by status.");
    for (size_t k = 0; k < m->n_status; k++) {
        if (m->status[k] < 400) continue;
        uint64_t n = 0;
        for (size_t e = 0; e < N_ENDPOINTS; e++) n += m->requests[e][k];
        srv_buf_printf(&b, "pocketllm_errors_total{status=\"%u\"} %llu\n", m->status[k], (unsigned long long)n);
    }
    scalar(&b, "pocketllm_prompt_tokens_total", "counter",
           "Prompt tokens of completions, per sequence (a request with n choices counts its prompt n times).",
           m->prompt_tokens);
    scalar(&b, "pocketllm_prompt_cache_hits_total", "counter",
           "Prompts whose start was found in a free sequence's cache and not evaluated again.", m->cache_hits);
    scalar(&b, "pocketllm_prompt_cache_misses_total", "counter", "Prompts evaluated from their first token.",
           m->cache_misses);
    scalar(&b, "pocketllm_prompt_cache_tokens_total", "counter", "Prompt tokens taken from the cache instead of evaluated.",
           m->cache_tokens);
    scalar(&b, "pocketllm_generated_tokens_total", "counter",
           "Tokens generated (each choice's end-of-generation token included, as usage counts it).", m->generated);
    scalar(&b, "pocketllm_embedding_inputs_total", "counter", "Inputs embedded by POST /v1/embeddings.", m->embd_inputs);
    scalar(&b, "pocketllm_embedding_tokens_total", "counter", "Tokens of the inputs embedded.", m->embd_tokens);
    histogram(&b, "pocketllm_time_to_first_token_seconds",
              "Seconds from a request's arrival (its queue wait included) to each choice's first token.", &m->ttft);
    histogram(&b, "pocketllm_time_per_output_token_seconds",
              "Seconds between consecutive generated tokens of one sequence.", &m->tpot);
    histogram(&b, "pocketllm_request_duration_seconds",
              "Seconds from a request's headers to the end of its answer (a stream: its last byte).", &m->duration);
    pthread_mutex_unlock(&m->mu);
    scalar(&b, "pocketllm_queue_depth", "gauge", "Requests waiting for a sequence.", st->queued);
    scalar(&b, "pocketllm_queue_capacity", "gauge", "Requests that may wait (--queue); past it the answer is 503.",
           st->queue_cap);
    scalar(&b, "pocketllm_slots_busy", "gauge", "Sequences serving a request now.", st->active);
    scalar(&b, "pocketllm_slots_total", "gauge", "Sequences decoded together (--parallel).", st->parallel);
    scalar(&b, "pocketllm_forward_passes_total", "counter", "Batched forward passes run.", st->passes);
    scalar(&b, "pocketllm_tokens_evaluated_total", "counter",
           "Tokens the forward passes evaluated (prompts, generated tokens, media, embeddings inputs).", st->tokens);
    scalar(&b, "pocketllm_speculative_drafted_total", "counter",
           "Ids drafted by prompt lookup (--lookup) or the draft model (--draft) and verified in the batch.", st->drafted);
    scalar(&b, "pocketllm_speculative_accepted_total", "counter",
           "Drafted ids kept: the token sampled at their row was the draft.", st->accepted);
    return b.oom ? (srv_buf_free(&b), NULL) : srv_buf_take(&b, NULL);
}
