/*
 * threadpool.h -- a fixed set of worker threads that run one parallel job
 * at a time.  A job is cut into chunks; the caller and the workers claim
 * chunks one by one from a shared counter until none are left, and
 * pl_pool_run returns when every chunk is done.
 *
 * Claiming rather than assigning is what keeps the pool from losing to
 * oversubscription: a worker the OS has not scheduled simply claims
 * nothing, and the threads that do run take its share, instead of everyone
 * waiting for it.  Between jobs the workers spin briefly (a forward pass
 * issues jobs microseconds apart) and then sleep.
 *
 * Every chunk is computed whole by whichever thread claims it, so results
 * never depend on the thread count or on who ran what.
 */
#ifndef PL_THREADPOOL_H
#define PL_THREADPOOL_H

#include <stdint.h>

#include "pocketllm.h"

typedef struct pl_pool pl_pool;
/* Compute chunk `chunk` of n_chunks; `thread` (0 .. pool size - 1) names
 * the thread doing it, for per-thread scratch memory. */
typedef void (*pl_pool_chunk_fn)(void *ctx, int chunk, int n_chunks, int thread);
/* The simple form: share ith of nth. */
typedef void (*pl_pool_fn)(void *ctx, int ith, int nth);

/* Most chunks one job may have. */
#define PL_POOL_MAX_CHUNKS 65535

/* A pool of n_threads threads in all (n_threads - 1 workers plus the
 * caller); n_threads 1 runs jobs inline. */
pocketllm_status pl_pool_new(int n_threads, pl_pool **out);
void pl_pool_free(pl_pool *p);
int pl_pool_size(const pl_pool *p);

/* Run the n_chunks chunks of a job (1 .. PL_POOL_MAX_CHUNKS) over the pool
 * and wait for all.  Not reentrant: one job at a time per pool, from one
 * caller thread. */
void pl_pool_run_chunks(pl_pool *p, pl_pool_chunk_fn fn, void *ctx, int n_chunks);

/* fn(ctx, ith, nth) once for every ith of nth = the pool size (each share
 * a chunk, run by whichever thread claims it), then wait for all. */
void pl_pool_run(pl_pool *p, pl_pool_fn fn, void *ctx);

/* Items [lo, hi) of a ranged job, run by `thread`. */
typedef void (*pl_pool_range_fn)(void *ctx, int64_t lo, int64_t hi, int thread);

/* Run fn over items 0 .. n-1, in calls of `grain` items (the last may be
 * shorter; grain boundaries fall at multiples of grain), and wait for all.
 * Each thread walks one contiguous range of grains front to back and, when
 * done, steals the back half of the fullest other range
 * (threadpool_ranges.c): one memory stream per thread, balanced at the
 * end.  Every item is run exactly once, by a call that covers whole
 * grains, so the results never depend on who ran what. */
void pl_pool_run_ranges(pl_pool *p, pl_pool_range_fn fn, void *ctx, int64_t n, int64_t grain);

/* The part [*lo, *hi) of n items that chunk i of n_chunks covers. */
static inline void pl_pool_split(long long n, int i, int n_chunks, long long *lo, long long *hi) {
    long long per = n / n_chunks, extra = n % n_chunks;
    *lo = i * per + (i < extra ? i : extra);
    *hi = *lo + per + (i < extra ? 1 : 0);
}

/* The thread count to use when the caller says 0: the physical cores. */
int pl_pool_default_threads(void);

#endif
