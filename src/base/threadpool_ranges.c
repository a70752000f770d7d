/*
 * threadpool_ranges.c -- a job over n items as contiguous ranges, one per
 * thread, balanced by stealing.
 *
 * Chunks claimed one by one from a shared counter (threadpool.c) hand a
 * thread rows scattered over the matrix: every claim starts a new memory
 * stream, and the hardware prefetchers must find it again.  Here each
 * thread walks its own range front to back in grains (one stream), and a
 * thread whose range is done steals the back half of the fullest other
 * range, which then becomes its own range (so it can be stolen from in
 * turn).  An oversubscribed thread that never runs still loses its range
 * to the others, as with chunks.
 *
 * A range is one 64-bit word, front in the low half and end in the high
 * half (in grains), changed only by compare-and-swap: the owner advances
 * the front, a thief lowers the end, and no grain is taken twice.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/threadpool.h"

/* Ranges (threads taking part) of one job at most: more threads than this
 * share the ranges through stealing. */
#define PL_RANGE_SLOTS 64

typedef struct {
    _Alignas(64) _Atomic uint64_t w; /* front | end << 32, in grains */
} range_slot;

typedef struct {
    pl_pool_range_fn fn;
    void *ctx;
    int64_t n, grain;
    int n_slots;
    range_slot *slots;
} range_job;

static inline uint32_t front_of(uint64_t w) { return (uint32_t)w; }
static inline uint32_t end_of(uint64_t w) { return (uint32_t)(w >> 32); }
static inline uint64_t word(uint32_t front, uint32_t end) { return (uint64_t)front | (uint64_t)end << 32; }

/* The next grain from the front of s; false when s is empty. */
static bool take_front(range_slot *s, uint32_t *g) {
    uint64_t w = atomic_load_explicit(&s->w, memory_order_acquire);
    while (front_of(w) < end_of(w))
        if (atomic_compare_exchange_weak_explicit(&s->w, &w, word(front_of(w) + 1, end_of(w)), memory_order_acq_rel,
                                                  memory_order_acquire)) {
            *g = front_of(w);
            return true;
        }
    return false;
}

/* The back half (rounded up) of the fullest range into [*lo, *hi); false
 * when every range is empty. */
static bool steal(range_job *j, uint32_t *lo, uint32_t *hi) {
    for (;;) {
        int best = -1;
        uint32_t most = 0;
        uint64_t bw = 0;
        for (int s = 0; s < j->n_slots; s++) {
            const uint64_t w = atomic_load_explicit(&j->slots[s].w, memory_order_acquire);
            if (front_of(w) < end_of(w) && end_of(w) - front_of(w) > most) best = s, most = end_of(w) - front_of(w), bw = w;
        }
        if (best < 0) return false;
        const uint32_t take = (most + 1) / 2, cut = end_of(bw) - take;
        if (atomic_compare_exchange_strong_explicit(&j->slots[best].w, &bw, word(front_of(bw), cut), memory_order_acq_rel,
                                                    memory_order_acquire)) {
            *lo = cut;
            *hi = end_of(bw);
            return true;
        }
        /* the range changed under us: look again */
    }
}

static void run_range(const range_job *j, uint32_t g, int thread) {
    const int64_t lo = (int64_t)g * j->grain, hi = lo + j->grain < j->n ? lo + j->grain : j->n;
    j->fn(j->ctx, lo, hi, thread);
}

static void run_slot(void *ctx, int chunk, int n_chunks, int thread) {
    (void)n_chunks;
    range_job *j = ctx;
    range_slot *mine = &j->slots[chunk];
    for (;;) {
        uint32_t g, lo, hi;
        while (take_front(mine, &g)) run_range(j, g, thread);
        if (!steal(j, &lo, &hi)) return;
        /* the stolen grains become this thread's range, open to thieves */
        atomic_store_explicit(&mine->w, word(lo, hi), memory_order_release);
    }
}

void pl_pool_run_ranges(pl_pool *p, pl_pool_range_fn fn, void *ctx, int64_t n, int64_t grain) {
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    const int64_t n_grains = (n + grain - 1) / grain;
    int n_slots = pl_pool_size(p);
    if (n_slots > PL_RANGE_SLOTS) n_slots = PL_RANGE_SLOTS;
    if (n_slots > n_grains) n_slots = (int)n_grains;
    if (n_slots <= 1 || n_grains > (int64_t)UINT32_MAX) { /* one range, or too many grains for a word */
        fn(ctx, 0, n, 0);
        return;
    }
    range_slot slots[PL_RANGE_SLOTS];
    for (int s = 0; s < n_slots; s++) {
        long long lo, hi;
        pl_pool_split(n_grains, s, n_slots, &lo, &hi);
        atomic_init(&slots[s].w, word((uint32_t)lo, (uint32_t)hi));
    }
    range_job j = {fn, ctx, n, grain, n_slots, slots};
    pl_pool_run_chunks(p, run_slot, &j, n_slots);
}
