/*
 * test_threadpool.c -- the pool runs every chunk of a job exactly once,
 * for any chunk count, back to back and after its workers went to sleep,
 * for 1..8 threads (more than this machine's cores included); thread
 * indices stay within the pool; ranges split exactly.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "base/threadpool.h"
#include "pltest.h"

typedef struct {
    _Atomic long calls;
    _Atomic long bad_thread;
    int n_threads;
    long long n;
    _Atomic long long covered;
    _Atomic unsigned char seen[4096];
} job;

static void work(void *ctx, int chunk, int n_chunks, int thread) {
    job *j = ctx;
    atomic_fetch_add(&j->calls, 1);
    if (thread < 0 || thread >= j->n_threads) atomic_fetch_add(&j->bad_thread, 1);
    atomic_fetch_add(&j->seen[chunk], 1);
    long long lo, hi;
    pl_pool_split(j->n, chunk, n_chunks, &lo, &hi);
    atomic_fetch_add(&j->covered, hi - lo);
}

static void share(void *ctx, int ith, int nth) { work(ctx, ith, nth, 0); }

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
            static job j;
            memset(&j, 0, sizeof j);
            j.n_threads = nt;
            j.n = 1000 + rep;
            const int chunks = 1 + (rep * 7) % 40;
            pl_pool_run_chunks(p, work, &j, chunks);
            bool once = true;
            for (int c = 0; c < 4096; c++) once = once && j.seen[c] == (c < chunks ? 1 : 0);
            CHECK(j.calls == chunks && once && j.bad_thread == 0 && j.covered == j.n);
            if (rep % 200 == 199) {
                /* let the workers fall asleep, then wake them */
                struct timespec ts = {0, 2 * 1000 * 1000};
                nanosleep(&ts, NULL);
            }
        }
        /* the simple form: each share once */
        static job k;
        memset(&k, 0, sizeof k);
        k.n_threads = nt;
        k.n = 999;
        pl_pool_run(p, share, &k);
        bool once = true;
        for (int c = 0; c < 4096; c++) once = once && k.seen[c] == (c < nt ? 1 : 0);
        CHECK(k.calls == nt && once && k.covered == k.n);
        pl_pool_free(p);
    }
    pl_pool *p = NULL;
    CHECK(pl_pool_new(0, &p) != POCKETLLM_OK && p == NULL);
    CHECK(pl_pool_new(5000, &p) != POCKETLLM_OK && p == NULL);
    CHECK(pl_pool_default_threads() >= 1);
    pl_pool_free(NULL);
    TEST_DONE();
}
