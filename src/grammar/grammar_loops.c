/*
 * grammar_loops.c -- the per-state uniform successors and chains of
 * grammar_loops.h.
 *
 * An ASCII class is uniform on q when each of its bytes steps q to the
 * same state.  The non-ASCII class is when reading any whole UTF-8
 * character from q ends in that state and no prefix of one dies: checked
 * by walking the product of the UTF-8 prefix automaton and ours from
 * (0, q), which partial-character canonicalisation keeps to a handful of
 * pairs (past MAX_PAIRS the class simply counts as not uniform, and
 * subtrees with such bytes are walked node by node, which is always
 * exact).  The first class found uniform fixes the state's successor; the
 * class of 'a' is tried first, the one a string's successor is made of.
 */
#include <stdlib.h>
#include <string.h>

#include "grammar/grammar_loops.h"
#include "grammar/grammar_vocab.h"

#define MAX_PAIRS 64
#define ALL_CLASSES ((1ull << PL_GV_N_CLASSES) - 1)

#define GROW(arr, cap)                                       \
    do {                                                     \
        void *p_ = realloc((arr), (cap) * sizeof *(arr));    \
        if (!p_) return false;                               \
        (arr) = p_;                                          \
    } while (0)

static void reset(pl_gloops *L, size_t from, size_t to) {
    for (size_t i = from; i < to; i++) {
        L->tested[i] = L->ok[i] = 0;
        L->succ[i] = PL_GM_UNKNOWN;
        L->high_dist[i] = 0;
        L->run_len[i] = 0, L->run_end[i] = L->run_dead[i] = 0, L->run_last[i] = PL_GM_UNKNOWN, L->run_far[i] = 0;
    }
}

static bool grow(pl_gloops *L, size_t need) {
    if (need <= L->cap) return true;
    size_t cap = L->cap ? L->cap : 256;
    while (cap < need) cap *= 2;
    GROW(L->tested, cap);
    GROW(L->ok, cap);
    GROW(L->succ, cap);
    GROW(L->high_dist, cap);
    GROW(L->run_len, cap);
    GROW(L->run_end, cap);
    GROW(L->run_dead, cap);
    GROW(L->run_last, cap);
    GROW(L->run_far, cap);
    reset(L, L->cap, cap);
    L->cap = cap;
    return true;
}

/* *to: the successor so far (PL_GM_UNKNOWN: none yet), set by the first
 * byte when unknown; the class must lead there too. */
static bool same_succ(uint32_t s, uint32_t *to) {
    if (s == PL_GM_DEAD) return false;
    if (*to == PL_GM_UNKNOWN) *to = s;
    return s == *to;
}

/* The ASCII bytes of class c (see pl_gvocab_byte_class), into out. */
static int class_bytes(int c, uint8_t out[40]) {
    static const uint8_t first[7] = {0, 0, '0', 'A', 'G', 'a', 'g'}, last[7] = {0x1f, 0, '9', 'F', 'Z', 'f', 'z'};
    if (c >= 7) { /* one punctuation mark (or space) each */
        out[0] = (uint8_t)(c < 23 ? ' ' + (c - 7) : c < 30 ? ':' + (c - 23) : c < 36 ? '[' + (c - 30) : '{' + (c - 36));
        return 1;
    }
    if (c == PL_GV_CLS_HIGH) return 0;
    int n = 0;
    for (unsigned b = first[c]; b <= last[c] && n < 39; b++) out[n++] = (uint8_t)b;
    if (c == PL_GV_CLS_CTRL) out[n++] = 0x7f;
    return n;
}

static bool ascii_uniform(pl_gmatch *m, uint32_t q, int cls, uint32_t *to) {
    uint8_t bytes[40];
    const int n = class_bytes(cls, bytes);
    for (int k = 0; k < n; k++)
        if (!same_succ(pl_gmatch_step(m, q, bytes[k]), to)) return false;
    return true;
}

static bool high_uniform(pl_gmatch *m, uint32_t q, uint32_t *to, uint32_t *max_dist) {
    int pu[MAX_PAIRS];
    uint32_t ps[MAX_PAIRS];
    size_t n = 1, done = 0;
    pu[0] = 0, ps[0] = q;
    uint32_t worst = 0;
    while (done < n) {
        const int u = pu[done];
        const uint32_t s = ps[done++];
        for (int b = 0x80; b < 0x100; b++) {
            const int u2 = pl_utf8_prefix_next(u, (uint8_t)b);
            if (u2 < 0) continue;
            const uint32_t s2 = pl_gmatch_step(m, s, (uint8_t)b);
            if (s2 == PL_GM_DEAD) return false;
            if (u2 == 0) {
                if (!same_succ(s2, to)) return false;
                continue;
            }
            size_t k = 0;
            while (k < n && !(pu[k] == u2 && ps[k] == s2)) k++;
            if (k < n) continue;
            if (n == MAX_PAIRS) return false;
            pu[n] = u2, ps[n++] = s2;
            const uint32_t d = pl_gmatch_distance(m, s2);
            worst = d > worst ? d : worst;
        }
    }
    *max_dist = worst;
    return true;
}

/* Tests the classes of `want` not tested yet; false at the first that is
 * not uniform when stop_early (before any test when one is known already),
 * else after testing them all. */
static bool test(pl_gloops *L, pl_gmatch *m, uint32_t q, uint64_t want, bool stop_early) {
    if (stop_early && (want & L->tested[q] & ~L->ok[q])) return false;
    const int first = pl_gvocab_byte_class('a');
    uint64_t todo = want & ~L->tested[q];
    bool all = true;
    while (todo) {
        const int c = (todo >> first) & 1 ? first : __builtin_ctzll(todo);
        todo &= ~(1ull << c);
        /* a failed test may have set the successor from its first bytes:
         * test on a copy and keep it only when the class passes */
        uint32_t to = L->succ[q];
        const bool ok = c == PL_GV_CLS_HIGH ? high_uniform(m, q, &to, &L->high_dist[q]) : ascii_uniform(m, q, c, &to);
        L->tested[q] |= 1ull << c;
        if (ok) {
            L->succ[q] = to;
            L->ok[q] |= 1ull << c;
        } else {
            all = false;
            if (stop_early) return false;
        }
    }
    return all && (want & ~L->ok[q]) == 0;
}

uint32_t pl_gloops_succ(pl_gloops *L, pl_gmatch *m, uint32_t q, uint64_t need) {
    if (q >= L->cap && !grow(L, (size_t)q + 1)) return PL_GM_DEAD;
    return test(L, m, q, need, true) ? L->succ[q] : PL_GM_DEAD;
}

/* No byte of class c (for the non-ASCII class: no lead byte) goes on from s. */
static bool class_dead(pl_gmatch *m, uint32_t s, int c) {
    if (c == PL_GV_CLS_HIGH) {
        for (int b = 0xc2; b <= 0xf4; b++)
            if (pl_gmatch_step(m, s, (uint8_t)b) != PL_GM_DEAD) return false;
        return true;
    }
    uint8_t bytes[40];
    const int n = class_bytes(c, bytes);
    for (int k = 0; k < n; k++)
        if (pl_gmatch_step(m, s, bytes[k]) != PL_GM_DEAD) return false;
    return true;
}

static bool all_dead(pl_gmatch *m, uint32_t s, uint64_t cls) {
    for (uint64_t t = cls; t; t &= t - 1)
        if (!class_dead(m, s, __builtin_ctzll(t))) return false;
    return true;
}

static uint32_t max3(uint32_t a, uint32_t b, uint32_t c) {
    const uint32_t x = a > b ? a : b;
    return x > c ? x : c;
}

/* Measures q's chain over all of ok[q] to at least n_chars characters, or
 * as far as it goes. */
static void measure(pl_gloops *L, pl_gmatch *m, uint32_t q, unsigned n_chars) {
    const uint64_t cls = L->ok[q];
    const bool high = cls & (1ull << PL_GV_CLS_HIGH);
    unsigned len = L->run_len[q];
    uint32_t s = len ? L->run_last[q] : q, far = L->run_far[q];
    bool end = false, dead = false;
    while (len < n_chars) {
        const uint32_t r = L->succ[s];
        far = max3(far, pl_gmatch_distance(m, r), high ? L->high_dist[s] : 0);
        if (r == s) {
            len = PL_GL_FOREVER;
            break;
        }
        len++;
        /* going on from r needs every class of q uniform there too */
        if (r >= L->cap && !grow(L, (size_t)r + 1)) {
            end = true;
            break;
        }
        test(L, m, r, ALL_CLASSES, false);
        if (cls & ~L->ok[r]) {
            end = true;
            dead = all_dead(m, r, cls);
            break;
        }
        s = r;
        if (L->run_len[r]) { /* r's chain (over a superset of cls) is ours from here */
            far = max3(far, L->run_far[r], 0);
            end = L->run_end[r];
            dead = L->run_dead[r]; /* dead for r's classes, so for ours */
            if (L->run_len[r] == PL_GL_FOREVER) len = PL_GL_FOREVER;
            else len = len + L->run_len[r] < PL_GL_FOREVER ? len + L->run_len[r] : PL_GL_FOREVER - 1;
            s = L->run_last[r];
            if (end || len >= n_chars) break;
        }
    }
    L->run_len[q] = (uint16_t)len;
    L->run_last[q] = s;
    L->run_far[q] = far;
    L->run_end[q] = end;
    L->run_dead[q] = dead;
}

pl_gl_verdict pl_gloops_chain(pl_gloops *L, pl_gmatch *m, uint32_t q, uint64_t need, unsigned n_chars, uint32_t *far,
                              unsigned *cut) {
    if (q >= L->cap && !grow(L, (size_t)q + 1)) return PL_GL_WALK;
    need &= ALL_CLASSES;
    if (!(L->run_len[q] >= n_chars && (need & ~L->ok[q]) == 0)) {
        /* cheap refusals first: a class already known not uniform, or the
         * first of the needed ones that is not */
        if (!test(L, m, q, need, true)) return PL_GL_WALK;
        test(L, m, q, ALL_CLASSES, false);
        if (L->run_len[q] < n_chars && !L->run_end[q]) measure(L, m, q, n_chars);
        if (L->run_len[q] < n_chars) {
            if (!L->run_end[q] || !L->run_dead[q]) return PL_GL_WALK;
            *far = L->run_far[q];
            *cut = L->run_len[q];
            return PL_GL_CUT;
        }
    }
    *far = L->run_far[q];
    return PL_GL_WHOLE;
}

void pl_gloops_clear(pl_gloops *L) { reset(L, 0, L->cap); }

void pl_gloops_free(pl_gloops *L) {
    free(L->tested), free(L->ok), free(L->succ), free(L->high_dist);
    free(L->run_len), free(L->run_end), free(L->run_dead), free(L->run_last), free(L->run_far);
    *L = (pl_gloops){0};
}
