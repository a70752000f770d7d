/*
 * threadpool.c -- persistent workers woken by a generation counter.  A job
 * is published by bumping `gen`; workers that are spinning see it at once,
 * workers that went to sleep are woken through the condition variable.  The
 * caller takes part as thread 0 and then waits for `pending` to reach zero.
 */
#include "base/threadpool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "base/clock.h"
#include "base/error.h"

/* How long a worker spins for the next job before it sleeps.  Jobs of one
 * forward pass come microseconds apart; between requests the pool sleeps. */
#define PL_POOL_SPIN_NS 300000ull

struct pl_pool;

typedef struct pl_worker {
    struct pl_pool *pool;
    int ith;
    pthread_t thread;
} pl_worker;

struct pl_pool {
    int n_threads;
    pl_worker *workers; /* n_threads - 1 */
    _Atomic unsigned gen;
    _Atomic int pending;
    _Atomic int sleepers;
    _Atomic int quit;
    pl_pool_fn fn;
    void *ctx;
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Wait until gen differs from `seen`: spin first, then sleep. */
static unsigned wait_for_job(pl_pool *p, unsigned seen) {
    uint64_t start = 0;
    for (unsigned i = 0;; i++) {
        unsigned g = atomic_load_explicit(&p->gen, memory_order_acquire);
        if (g != seen) return g;
        cpu_relax();
        if ((i & 63) == 63) {
            uint64_t now = pl_now_ns();
            if (!start) start = now;
            else if (now - start > PL_POOL_SPIN_NS) break;
            sched_yield();
        }
    }
    pthread_mutex_lock(&p->mu);
    atomic_fetch_add(&p->sleepers, 1);
    unsigned g;
    /* re-checked under the lock after announcing ourselves: a publisher that
     * missed our sleeper count has already changed gen */
    while ((g = atomic_load(&p->gen)) == seen) pthread_cond_wait(&p->cv, &p->mu);
    atomic_fetch_sub(&p->sleepers, 1);
    pthread_mutex_unlock(&p->mu);
    return g;
}

static void *worker_main(void *arg) {
    pl_worker *w = arg;
    pl_pool *p = w->pool;
    unsigned seen = 0;
    for (;;) {
        seen = wait_for_job(p, seen);
        if (atomic_load(&p->quit)) break;
        p->fn(p->ctx, w->ith, p->n_threads);
        atomic_fetch_sub_explicit(&p->pending, 1, memory_order_acq_rel);
    }
    return NULL;
}

static void publish(pl_pool *p) {
    atomic_fetch_add(&p->gen, 1);
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
        publish(p);
        for (int i = 0; i < p->n_threads - 1; i++) pthread_join(p->workers[i].thread, NULL);
        free(p->workers);
    }
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

int pl_pool_size(const pl_pool *p) { return p ? p->n_threads : 1; }

void pl_pool_run(pl_pool *p, pl_pool_fn fn, void *ctx) {
    if (!p || p->n_threads == 1) {
        fn(ctx, 0, 1);
        return;
    }
    p->fn = fn;
    p->ctx = ctx;
    atomic_store_explicit(&p->pending, p->n_threads - 1, memory_order_release);
    publish(p);
    fn(ctx, 0, p->n_threads);
    for (unsigned i = 0; atomic_load_explicit(&p->pending, memory_order_acquire) != 0; i++) {
        cpu_relax();
        if ((i & 63) == 63) sched_yield();
    }
}

int pl_pool_default_threads(void) {
    pocketllm_cpu_info ci;
    if (pocketllm_cpu_info_get(&ci) != POCKETLLM_OK || ci.physical_cores < 1) return 1;
    return ci.physical_cores > 1024 ? 1024 : (int)ci.physical_cores;
}
