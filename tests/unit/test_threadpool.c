/*
 * test_threadpool.c -- the pool runs every thread's share exactly once per
 * job, back to back and after its workers went to sleep, for 1..8 threads
 * (more than this machine's cores included), and splits ranges exactly.
 */
#include <stdatomic.h>
#include <time.h>

#include "base/threadpool.h"
#include "pltest.h"

typedef struct {
    _Atomic long calls;
    _Atomic long mask;
    long long n;
    _Atomic long long covered;
} job;

static void work(void *ctx, int ith, int nth) {
    job *j = ctx;
    atomic_fetch_add(&j->calls, 1);
    atomic_fetch_or(&j->mask, 1L << ith);
    long long lo, hi;
    pl_pool_split(j->n, ith, nth, &lo, &hi);
    atomic_fetch_add(&j->covered, hi - lo);
}

int main(void) {
    /* splits cover [0, n) without gaps or overlap, balanced within one */
    for (long long n = 0; n < 50; n++)
        for (int nth = 1; nth <= 9; nth++) {
            long long prev = 0, mn = n, mx = 0;
            for (int i = 0; i < nth; i++) {
                long long lo, hi;
                pl_pool_split(n, i, nth, &lo, &hi);
                CHECK(lo == prev && hi >= lo);
                prev = hi;
                if (hi - lo < mn) mn = hi - lo;
                if (hi - lo > mx) mx = hi - lo;
            }
            CHECK(prev == n && mx - mn <= 1);
        }
    for (int nt = 1; nt <= 8; nt++) {
        pl_pool *p = NULL;
        CHECK(pl_pool_new(nt, &p) == POCKETLLM_OK);
        CHECK(pl_pool_size(p) == nt);
        for (int rep = 0; rep < 600; rep++) {
            job j = {0, 0, 1000 + rep, 0};
            pl_pool_run(p, work, &j);
            CHECK(j.calls == nt && j.mask == (1L << nt) - 1 && j.covered == j.n);
            if (rep % 200 == 199) {
                /* let the workers fall asleep, then wake them */
                struct timespec ts = {0, 2 * 1000 * 1000};
                nanosleep(&ts, NULL);
            }
        }
        pl_pool_free(p);
    }
    pl_pool *p = NULL;
    CHECK(pl_pool_new(0, &p) != POCKETLLM_OK && p == NULL);
    CHECK(pl_pool_new(5000, &p) != POCKETLLM_OK && p == NULL);
    CHECK(pl_pool_default_threads() >= 1);
    pl_pool_free(NULL);
    TEST_DONE();
}
