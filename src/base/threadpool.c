/*
 * threadpool.c -- persistent workers that claim the chunks of the current
 * job from one atomic word: the job's generation (32 bits), its chunk count
 * and the next unclaimed chunk (16 bits each).  A claim is a compare-and-
 * swap that only succeeds within the generation the claimer saw, so a
 * worker that wakes late can never take a chunk of a job that has ended.
 * The caller publishes a job by storing a new word, takes part in claiming,
 * then waits for the chunks claimed by others to finish.
 *
 * Waiting for a job: spin (with a pause, yielding now and then) for a short
 * while, then sleep on a condition variable; the publisher wakes sleepers.
 */
#include "base/threadpool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/clock.h"
#include "base/error.h"

/* How long an idle worker spins before it sleeps: jobs of one forward pass
 * come microseconds apart; between requests the pool sleeps. */
#define PL_POOL_SPIN_NS 200000ull

/* Spinning yields the core once per this many pauses (a power of two):
 * often enough that an oversubscribed thread hands its core to the one
 * doing the work within microseconds, rarely enough that the system calls
 * do not cost the common case (one thread per core) several percent. */
#define PL_POOL_YIELD_EVERY 512u

struct pl_pool;

typedef struct pl_worker {
    struct pl_pool *pool;
    int ith;
    pthread_t thread;
} pl_worker;

struct pl_pool {
    int n_threads;
    pl_worker *workers;          /* n_threads - 1 */
    _Atomic uint64_t claim;      /* gen << 32 | n_chunks << 16 | next */
    _Atomic int done;            /* chunks of the current job finished */
    _Atomic int sleepers;
    _Atomic int quit;
    pl_pool_chunk_fn fn;         /* the current job, valid while it has unfinished chunks */
    void *ctx;
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

static inline uint32_t word_gen(uint64_t w) { return (uint32_t)(w >> 32); }
static inline int word_n(uint64_t w) { return (int)((w >> 16) & 0xffff); }
static inline int word_next(uint64_t w) { return (int)(w & 0xffff); }

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Claim and run chunks of generation `gen` until none are left. */
static void work_on(pl_pool *p, uint32_t gen, int thread) {
    uint64_t w = atomic_load_explicit(&p->claim, memory_order_acquire);
    for (;;) {
        if (word_gen(w) != gen || word_next(w) >= word_n(w)) return;
        if (!atomic_compare_exchange_weak_explicit(&p->claim, &w, w + 1, memory_order_acq_rel, memory_order_acquire))
            continue; /* w now holds the current word */
        /* the job cannot end before this chunk is done, so fn/ctx are its */
        p->fn(p->ctx, word_next(w), word_n(w), thread);
        atomic_fetch_add_explicit(&p->done, 1, memory_order_release);
        w = atomic_load_explicit(&p->claim, memory_order_acquire);
    }
}

/* Wait until the generation differs from `seen`: spin first, then sleep. */
static uint32_t wait_for_job(pl_pool *p, uint32_t seen) {
    uint64_t start = 0;
    for (unsigned i = 0;; i++) {
        uint32_t g = word_gen(atomic_load_explicit(&p->claim, memory_order_acquire));
        if (g != seen || atomic_load_explicit(&p->quit, memory_order_relaxed)) return g;
        cpu_relax();
        if ((i & (PL_POOL_YIELD_EVERY - 1)) == PL_POOL_YIELD_EVERY - 1) {
            uint64_t now = pl_now_ns();
            if (!start) start = now;
            else if (now - start > PL_POOL_SPIN_NS) break;
            sched_yield();
        }
    }
    pthread_mutex_lock(&p->mu);
    atomic_fetch_add(&p->sleepers, 1);
    uint32_t g;
    /* re-checked under the lock after announcing ourselves: a publisher
     * that missed our sleeper count has already changed the word */
    while ((g = word_gen(atomic_load(&p->claim))) == seen && !atomic_load(&p->quit)) pthread_cond_wait(&p->cv, &p->mu);
    atomic_fetch_sub(&p->sleepers, 1);
    pthread_mutex_unlock(&p->mu);
    return g;
}

static void *worker_main(void *arg) {
    pl_worker *w = arg;
    pl_pool *p = w->pool;
    uint32_t seen = 0;
    for (;;) {
        seen = wait_for_job(p, seen);
        if (atomic_load(&p->quit)) break;
        work_on(p, seen, w->ith);
    }
    return NULL;
}

static void wake_sleepers(pl_pool *p) {
    if (atomic_load(&p->sleepers) > 0) {
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
    }
}

pocketllm_status pl_pool_new(int n_threads, pl_pool **out) {
    *out = NULL;
    if (n_threads < 1 || n_threads > 1024)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "thread count %d is outside 1..1024", n_threads);
    pl_pool *p = calloc(1, sizeof *p);
    if (!p) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for the thread pool");
    p->n_threads = n_threads;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    if (n_threads > 1) {
        p->workers = calloc((size_t)n_threads - 1, sizeof *p->workers);
        if (!p->workers) {
            pl_pool_free(p);
            return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for the thread pool");
        }
        for (int i = 0; i < n_threads - 1; i++) {
            p->workers[i].pool = p;
            p->workers[i].ith = i + 1;
            if (pthread_create(&p->workers[i].thread, NULL, worker_main, &p->workers[i]) != 0) {
                p->n_threads = i + 1; /* only these were started */
                pl_pool_free(p);
                return pl_fail(POCKETLLM_ERR_NO_MEMORY, "cannot start worker thread %d of %d", i + 1, n_threads);
            }
        }
    }
    *out = p;
    return POCKETLLM_OK;
}

void pl_pool_free(pl_pool *p) {
    if (!p) return;
    if (p->workers) {
        atomic_store(&p->quit, 1);
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
        for (int i = 0; i < p->n_threads - 1; i++) pthread_join(p->workers[i].thread, NULL);
        free(p->workers);
    }
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

int pl_pool_size(const pl_pool *p) { return p ? p->n_threads : 1; }

void pl_pool_run_chunks(pl_pool *p, pl_pool_chunk_fn fn, void *ctx, int n_chunks) {
    if (n_chunks < 1) return;
    if (n_chunks > PL_POOL_MAX_CHUNKS) n_chunks = PL_POOL_MAX_CHUNKS;
    if (!p || p->n_threads == 1 || n_chunks == 1) {
        for (int i = 0; i < n_chunks; i++) fn(ctx, i, n_chunks, 0);
        return;
    }
    p->fn = fn;
    p->ctx = ctx;
    atomic_store_explicit(&p->done, 0, memory_order_relaxed);
    const uint32_t gen = word_gen(atomic_load(&p->claim)) + 1;
    /* the release publishes fn, ctx and done with the new word */
    atomic_store_explicit(&p->claim, (uint64_t)gen << 32 | (uint64_t)n_chunks << 16, memory_order_seq_cst);
    wake_sleepers(p);
    work_on(p, gen, 0);
    /* only chunks already claimed by running workers remain */
    for (unsigned i = 0; atomic_load_explicit(&p->done, memory_order_acquire) != n_chunks; i++) {
        cpu_relax();
        if ((i & (PL_POOL_YIELD_EVERY - 1)) == PL_POOL_YIELD_EVERY - 1) sched_yield();
    }
}

typedef struct {
    pl_pool_fn fn;
    void *ctx;
} share_job;

static void run_share(void *ctx, int chunk, int n_chunks, int thread) {
    (void)thread;
    share_job *j = ctx;
    j->fn(j->ctx, chunk, n_chunks);
}

void pl_pool_run(pl_pool *p, pl_pool_fn fn, void *ctx) {
    share_job j = {fn, ctx};
    pl_pool_run_chunks(p, run_share, &j, pl_pool_size(p));
}

int pl_pool_default_threads(void) {
    pocketllm_cpu_info ci;
    if (pocketllm_cpu_info_get(&ci) != POCKETLLM_OK || ci.physical_cores < 1) return 1;
    return ci.physical_cores > 1024 ? 1024 : (int)ci.physical_cores;
}
