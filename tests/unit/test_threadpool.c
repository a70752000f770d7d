/*
 * test_threadpool.c -- the pool runs every chunk of a job exactly once,
 * for any chunk count, back to back and after its workers went to sleep,
 * for 1..8 threads (more than this machine's cores included); thread
 * indices stay within the pool; ranges split exactly.  Ranged jobs run
 * every item exactly once in calls of whole grains, and a thread that
 * stalls has its range stolen by the others.
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

typedef struct {
    int n_threads;
    int64_t n, grain;
    _Atomic long bad; /* calls not made of whole grains, or with a bad thread index */
    _Atomic long by_thread[8];
    _Atomic int stall; /* the first call of item 0's thread sleeps this many ms */
    _Atomic int owner0; /* the thread that ran item 0 */
    _Atomic unsigned char seen[20000];
} range_job_t;

static void range_work(void *ctx, int64_t lo, int64_t hi, int thread) {
    range_job_t *j = ctx;
    if (lo < 0 || hi > j->n || lo >= hi || lo % j->grain || (hi != j->n && (hi - lo) % j->grain) || thread < 0 ||
        thread >= j->n_threads)
        atomic_fetch_add(&j->bad, 1);
    if (lo == 0) atomic_store(&j->owner0, thread);
    if (lo == 0 && atomic_load(&j->stall)) {
        struct timespec ts = {0, (long)atomic_exchange(&j->stall, 0) * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    for (int64_t i = lo; i < hi && i < 20000; i++) atomic_fetch_add(&j->seen[i], 1);
    if (thread >= 0 && thread < 8) atomic_fetch_add(&j->by_thread[thread], hi - lo);
}

/* ranged jobs over nt threads: every item once, in whole grains */
static void test_ranges(pl_pool *p, int nt) {
    static const int64_t ns[] = {1, 7, 64, 1000, 4099, 20000};
    static const int64_t grains[] = {1, 3, 8, 100};
    static range_job_t j;
    for (size_t ni = 0; ni < sizeof ns / sizeof *ns; ni++)
        for (size_t gi = 0; gi < sizeof grains / sizeof *grains; gi++) {
            memset(&j, 0, sizeof j);
            j.n_threads = nt, j.n = ns[ni], j.grain = grains[gi];
            pl_pool_run_ranges(p, range_work, &j, j.n, j.grain);
            bool once = true;
            for (int64_t i = 0; i < 20000; i++) once = once && j.seen[i] == (i < j.n ? 1 : 0);
            CHECK_MSG(once && j.bad == 0, "ranges: %d threads, n %lld, grain %lld", nt, (long long)j.n, (long long)j.grain);
        }
    if (nt < 2) return;
    /* the thread that owns item 0 stalls for 50 ms at its first grain: the
     * rest of its range must be done by the others */
    memset(&j, 0, sizeof j);
    j.n_threads = nt, j.n = 20000, j.grain = 10;
    atomic_store(&j.stall, 50);
    pl_pool_run_ranges(p, range_work, &j, j.n, j.grain);
    bool once = true;
    for (int64_t i = 0; i < j.n; i++) once = once && j.seen[i] == 1;
    CHECK_MSG(once && j.bad == 0, "ranges with a stalled thread: %d threads", nt);
    /* without stealing it would have done its whole share, n / nt */
    const int o = atomic_load(&j.owner0);
    CHECK_MSG(o >= 0 && o < 8 && j.by_thread[o] < (long)(j.n / nt / 2),
              "ranges: the stalled thread still did %ld of %lld items (%d threads): nothing was stolen",
              o >= 0 && o < 8 ? (long)j.by_thread[o] : -1L, (long long)j.n, nt);
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
        test_ranges(p, nt);
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
