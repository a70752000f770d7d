/*
 * threadpool.h -- a fixed set of worker threads that run one parallel job
 * at a time: every thread (the caller is thread 0) calls fn(ctx, ith, nth)
 * and pl_pool_run returns when all have returned.
 *
 * Between jobs the workers spin briefly (a forward pass issues jobs back to
 * back, microseconds apart) and then sleep, so an idle pool costs nothing
 * and a pool larger than the machine does not starve other threads for long.
 */
#ifndef PL_THREADPOOL_H
#define PL_THREADPOOL_H

#include "pocketllm.h"

typedef struct pl_pool pl_pool;
typedef void (*pl_pool_fn)(void *ctx, int ith, int nth);

/* A pool of n_threads threads in all (n_threads - 1 workers plus the
 * caller); n_threads 1 runs jobs inline. */
pocketllm_status pl_pool_new(int n_threads, pl_pool **out);
void pl_pool_free(pl_pool *p);
int pl_pool_size(const pl_pool *p);

/* Run fn on every thread of the pool and wait for all.  Not reentrant: one
 * job at a time per pool, from one caller thread. */
void pl_pool_run(pl_pool *p, pl_pool_fn fn, void *ctx);

/* The part [*lo, *hi) of n items that thread ith of nth takes. */
static inline void pl_pool_split(long long n, int ith, int nth, long long *lo, long long *hi) {
    long long per = n / nth, extra = n % nth;
    *lo = ith * per + (ith < extra ? ith : extra);
    *hi = *lo + per + (ith < extra ? 1 : 0);
}

/* The thread count to use when the caller says 0: the physical cores. */
int pl_pool_default_threads(void);

#endif
