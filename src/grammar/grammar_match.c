/*
 * grammar_match.c -- the lazily built byte automaton of grammar_match.h.
 *
 * Stack nodes, node sets and automaton states are each interned in an
 * open-addressing table; a node's distance (the fewest bytes that finish
 * every frame of its stack) is computed once, when it is made, from its
 * parent's.  Expanding a stack whose top is a rule reference replaces the
 * reference by each alternative's first element, continuing below with the
 * element after the reference -- or directly with the parent when the
 * reference ends its sequence, so a right-recursive repetition (x*) runs in
 * constant stack depth.
 */
#include <stdlib.h>
#include <string.h>

#include "grammar/grammar_match.h"

#define INF_LEN (UINT32_MAX / 4)
#define NO_POS UINT32_MAX
/* Bounds on the work of one character and on the stacks kept: a grammar
 * past them (nested rules that can each match nothing multiply the parse
 * stacks: llama.cpp's matcher has no bound and runs for hours) is refused
 * with pl_gmatch_error's reason instead.  Grammars written for JSON,
 * schemas and tool calls reach a few dozen nodes per character (26 at
 * most in this project's grammar tests): the bound is thousands of times
 * that, and keeps one character's work under a few milliseconds. */
#define PL_GM_STEP_STACKS 65536
#define PL_GM_MAX_NODES 8388608
#define PL_GM_STR_(x) #x
#define PL_GM_STR(x) PL_GM_STR_(x)

typedef struct u64map {    /* key -> value, open addressing; key UINT64_MAX = empty */
    uint64_t *key;
    uint32_t *val;
    size_t cap, n;
} u64map;

struct pl_gmatch {
    const pl_gbnf *g;
    /* stack nodes: 0 is the empty stack */
    uint32_t *npos, *nparent, *ndist, *stamp;
    size_t n_nodes, cap_nodes;
    u64map node_map;
    uint32_t gen;
    /* node sets: ids into sdata */
    uint32_t *sdata;
    size_t n_sdata, cap_sdata;
    uint32_t *soff, *slen;
    uint64_t *shash;
    size_t n_sets, cap_sets;
    u64map set_map;        /* hash -> first set with it (chained through snext) */
    uint32_t *snext;
    /* automaton states */
    uint32_t *dset, *dval, *ddist;
    uint8_t *drem;
    uint32_t *trans;       /* 256 per state */
    size_t n_dfa, cap_dfa;
    u64map dfa_map;
    /* scratch */
    uint32_t *buf;
    size_t n_buf, cap_buf;
    uint32_t *work;        /* expand's list of nodes still to visit */
    size_t n_work, cap_work;
    size_t step_nodes;     /* nodes reached by this step's expansion */
    bool oom;
    const char *too_complex; /* why a step went past PL_GM_STEP_STACKS or PL_GM_MAX_NODES (oom set too) */
    bool canonical; /* partial characters kept by pattern (make_partial); off only in tests */
};

static bool grow(void **p, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return true;
    size_t c = *cap ? *cap * 2 : 64;
    while (c < need) c *= 2;
    void *q = realloc(*p, c * size);
    if (!q) return false;
    *p = q;
    *cap = c;
    return true;
}

static uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

static bool map_init(u64map *m, size_t cap) {
    m->key = malloc(cap * sizeof *m->key);
    m->val = malloc(cap * sizeof *m->val);
    if (!m->key || !m->val) return false;
    memset(m->key, 0xFF, cap * sizeof *m->key);
    m->cap = cap;
    m->n = 0;
    return true;
}

static void map_free(u64map *m) {
    free(m->key);
    free(m->val);
    memset(m, 0, sizeof *m);
}

/* The slot of key: its own, or the empty one where it would go. */
static size_t map_slot(const u64map *m, uint64_t key) {
    size_t i = (size_t)mix(key) & (m->cap - 1);
    while (m->key[i] != UINT64_MAX && m->key[i] != key) i = (i + 1) & (m->cap - 1);
    return i;
}

static bool map_put(u64map *m, uint64_t key, uint32_t val) {
    if ((m->n + 1) * 2 > m->cap) {
        u64map bigger;
        if (!map_init(&bigger, m->cap * 2)) return false;
        for (size_t i = 0; i < m->cap; i++)
            if (m->key[i] != UINT64_MAX) {
                const size_t j = map_slot(&bigger, m->key[i]);
                bigger.key[j] = m->key[i];
                bigger.val[j] = m->val[i];
            }
        bigger.n = m->n;
        map_free(m);
        *m = bigger;
    }
    const size_t i = map_slot(m, key);
    if (m->key[i] == UINT64_MAX) m->n++;
    m->key[i] = key;
    m->val[i] = val;
    return true;
}

static bool map_get(const u64map *m, uint64_t key, uint32_t *val) {
    const size_t i = map_slot(m, key);
    if (m->key[i] == UINT64_MAX) return false;
    *val = m->val[i];
    return true;
}

static uint32_t sat_add(uint32_t a, uint32_t b) { return a + b >= INF_LEN ? INF_LEN : a + b; }

/* ---- nodes ----------------------------------------------------------- */

static uint32_t node_get(pl_gmatch *m, uint32_t pos, uint32_t parent) {
    const uint64_t key = ((uint64_t)pos << 32) | parent;
    uint32_t id;
    if (map_get(&m->node_map, key, &id)) return id;
    const size_t old_cap = m->cap_nodes;
    if (!grow((void **)&m->npos, &m->cap_nodes, m->n_nodes + 1, sizeof *m->npos)) goto oom;
    if (m->cap_nodes != old_cap) { /* the other per-node arrays follow npos's capacity (only when it grew:
                                    * a realloc per node would copy them each time under some allocators) */
        size_t cap = m->cap_nodes;
        uint32_t *a = realloc(m->nparent, cap * sizeof *a);
        if (!a) goto short_cap;
        m->nparent = a;
        a = realloc(m->ndist, cap * sizeof *a);
        if (!a) goto short_cap;
        m->ndist = a;
        a = realloc(m->stamp, cap * sizeof *a);
        if (!a) goto short_cap;
        m->stamp = a;
    }
    id = (uint32_t)m->n_nodes++;
    m->npos[id] = pos;
    m->nparent[id] = parent;
    m->ndist[id] = sat_add(m->g->rest_min[pos], m->ndist[parent]);
    m->stamp[id] = 0;
    if (!map_put(&m->node_map, key, id)) goto oom;
    return id;
short_cap:
    m->cap_nodes = old_cap; /* what every per-node array holds for sure */
oom:
    m->oom = true;
    return 0;
}

static void buf_push(pl_gmatch *m, uint32_t v) {
    if (!grow((void **)&m->buf, &m->cap_buf, m->n_buf + 1, sizeof *m->buf)) {
        m->oom = true;
        return;
    }
    m->buf[m->n_buf++] = v;
}

/* Push node onto the expansion's work list unless it was reached already
 * this generation; counts it against the step's budget. */
static void reach(pl_gmatch *m, uint32_t node) {
    if (m->oom || m->stamp[node] == m->gen) return;
    m->stamp[node] = m->gen;
    if (++m->step_nodes > PL_GM_STEP_STACKS) {
        m->too_complex = "the grammar is too ambiguous to match: one character leaves more than " PL_GM_STR(
            PL_GM_STEP_STACKS) " ways to parse it (rules that can match nothing, nested deeply, multiply them)";
        m->oom = true;
        return;
    }
    if (m->n_nodes > PL_GM_MAX_NODES) {
        m->too_complex = "the grammar's parse stacks outgrew the matcher's bound of " PL_GM_STR(PL_GM_MAX_NODES);
        m->oom = true;
        return;
    }
    if (!grow((void **)&m->work, &m->cap_work, m->n_work + 1, sizeof *m->work)) {
        m->oom = true;
        return;
    }
    m->work[m->n_work++] = node;
}

/* Every stack node reaches with a character class (or the empty stack) on
 * top, into m->buf, each once per generation.  A work list, not recursion:
 * rules that can match nothing chain completions as deep as the number of
 * stacks, which nested optional rules make exponential in the nesting. */
static void expand(pl_gmatch *m, uint32_t node0) {
    const pl_gbnf *g = m->g;
    m->n_work = 0;
    reach(m, node0);
    while (m->n_work && !m->oom) {
        const uint32_t node = m->work[--m->n_work];
        if (node == 0) {
            buf_push(m, 0);
            continue;
        }
        const uint32_t pos = m->npos[node], parent = m->nparent[node];
        const pl_gelem *e = &g->el[pos];
        if (e->kind == PL_GE_CHARS) {
            buf_push(m, node);
            continue;
        }
        const uint32_t cont = g->el[pos + 1].kind == PL_GE_END ? parent : node_get(m, pos + 1, parent);
        const uint32_t a0 = g->rule_alt[e->arg], na = g->rule_nalt[e->arg];
        for (uint32_t a = 0; a < na && !m->oom; a++) {
            const uint32_t start = g->alt_start[a0 + a];
            reach(m, g->el[start].kind == PL_GE_END ? cont : node_get(m, start, cont));
        }
    }
}

static int cmp_u32(const void *a, const void *b) {
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* ---- sets ------------------------------------------------------------ */

/* Intern m->buf (sorted here) as a set; UINT32_MAX when empty. */
static uint32_t set_from_buf(pl_gmatch *m) {
    if (m->oom || m->n_buf == 0) return UINT32_MAX;
    qsort(m->buf, m->n_buf, sizeof *m->buf, cmp_u32);
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ m->n_buf;
    for (size_t i = 0; i < m->n_buf; i++) h = mix(h ^ m->buf[i]) + i;
    h &= ~(1ULL << 63); /* never the empty key */
    uint32_t id;
    if (map_get(&m->set_map, h, &id)) {
        for (uint32_t s = id; s != UINT32_MAX; s = m->snext[s])
            if (m->slen[s] == m->n_buf && !memcmp(m->sdata + m->soff[s], m->buf, m->n_buf * sizeof *m->buf)) return s;
    }
    if (!grow((void **)&m->sdata, &m->cap_sdata, m->n_sdata + m->n_buf, sizeof *m->sdata)) goto oom;
    if (m->n_sets + 1 > m->cap_sets) {
        size_t cap = m->cap_sets ? m->cap_sets * 2 : 64;
        uint32_t *a = realloc(m->soff, cap * sizeof *a), *b, *c;
        if (!a) goto oom;
        m->soff = a;
        b = realloc(m->slen, cap * sizeof *b);
        if (!b) goto oom;
        m->slen = b;
        c = realloc(m->snext, cap * sizeof *c);
        if (!c) goto oom;
        m->snext = c;
        m->cap_sets = cap;
    }
    const uint32_t s = (uint32_t)m->n_sets++;
    m->soff[s] = (uint32_t)m->n_sdata;
    m->slen[s] = (uint32_t)m->n_buf;
    memcpy(m->sdata + m->n_sdata, m->buf, m->n_buf * sizeof *m->buf);
    m->n_sdata += m->n_buf;
    uint32_t head;
    m->snext[s] = map_get(&m->set_map, h, &head) ? head : UINT32_MAX;
    if (!map_put(&m->set_map, h, s)) goto oom;
    return s;
oom:
    m->oom = true;
    return UINT32_MAX;
}

/* ---- automaton states ------------------------------------------------- */

static uint32_t set_distance(const pl_gmatch *m, uint32_t set) {
    uint32_t best = INF_LEN;
    const uint32_t *s = m->sdata + m->soff[set];
    for (uint32_t i = 0; i < m->slen[set]; i++) best = m->ndist[s[i]] < best ? m->ndist[s[i]] : best;
    return best;
}

/* A partial character is kept as (val, rem | seq_len << 4): the bits read,
 * the bytes still to come and the length of the whole sequence, whose
 * smallest code point rules out overlong forms (E0 80.., F0 80..). */
static const uint32_t SEQ_MIN[5] = {0, 0, 0x80, 0x800, 0x10000};
#define CANON 0x80 /* drem: a partial character kept by its membership pattern (see make_partial) */
static uint32_t range_lo(uint32_t val, uint8_t rem) {
    const uint32_t lo = val << (6 * (rem & 3)), min = SEQ_MIN[(rem >> 4) & 7];
    return lo > min ? lo : min;
}
static uint32_t range_hi(uint32_t val, uint8_t rem) { return (val << (6 * (rem & 3))) | ((1u << (6 * (rem & 3))) - 1); }

/* Fewest bytes after a partial character: rem to finish it, then the
 * cheapest stack that can take it. */
static uint32_t partial_distance(const pl_gmatch *m, uint32_t set, uint32_t val, uint8_t rem) {
    const pl_gbnf *g = m->g;
    const uint32_t lo = range_lo(val, rem), hi = range_hi(val, rem);
    uint32_t best = INF_LEN;
    const uint32_t *s = m->sdata + m->soff[set];
    for (uint32_t i = 0; i < m->slen[set]; i++) {
        if (s[i] == 0) continue;
        const uint32_t pos = m->npos[s[i]];
        if (!pl_gclass_hits(g, &g->cls[g->el[pos].arg], lo, hi)) continue;
        const uint32_t d = sat_add(g->rest_min[pos + 1], m->ndist[m->nparent[s[i]]]);
        best = d < best ? d : best;
    }
    return sat_add(best, rem & 3);
}

/* The state (set, partial character val / rem), interned under keyval:
 * val itself, or for a CANON state its membership pattern. */
static uint32_t dfa_get_key(pl_gmatch *m, uint32_t set, uint32_t keyval, uint32_t val, uint8_t rem) {
    const uint64_t key = ((uint64_t)set << 29) | ((uint64_t)rem << 21) | keyval;
    uint32_t id;
    if (map_get(&m->dfa_map, key, &id)) return id;
    if (m->n_dfa + 1 > m->cap_dfa) {
        size_t cap = m->cap_dfa ? m->cap_dfa * 2 : 64;
        uint32_t *a = realloc(m->dset, cap * sizeof *a);
        if (!a) goto oom;
        m->dset = a;
        a = realloc(m->dval, cap * sizeof *a);
        if (!a) goto oom;
        m->dval = a;
        a = realloc(m->ddist, cap * sizeof *a);
        if (!a) goto oom;
        m->ddist = a;
        uint8_t *r = realloc(m->drem, cap);
        if (!r) goto oom;
        m->drem = r;
        a = realloc(m->trans, cap * 256 * sizeof *a);
        if (!a) goto oom;
        m->trans = a;
        m->cap_dfa = cap;
    }
    id = (uint32_t)m->n_dfa++;
    m->dset[id] = set;
    m->dval[id] = val;
    m->drem[id] = rem;
    m->ddist[id] = rem ? partial_distance(m, set, val, rem) : set_distance(m, set);
    for (int b = 0; b < 256; b++) m->trans[(size_t)id * 256 + b] = PL_GM_UNKNOWN;
    if (!map_put(&m->dfa_map, key, id)) goto oom;
    return id;
oom:
    m->oom = true;
    return PL_GM_DEAD;
}

static uint32_t dfa_get(pl_gmatch *m, uint32_t set, uint32_t val, uint8_t rem) { return dfa_get_key(m, set, val, val, rem); }

/* Can some stack of the set take a character in [lo, hi]? */
static bool set_feasible(const pl_gmatch *m, uint32_t set, uint32_t lo, uint32_t hi) {
    const pl_gbnf *g = m->g;
    const uint32_t *s = m->sdata + m->soff[set];
    for (uint32_t i = 0; i < m->slen[set]; i++)
        if (s[i] != 0 && pl_gclass_hits(g, &g->cls[g->el[m->npos[s[i]]].arg], lo, hi)) return true;
    return false;
}

/* The set after one whole character. */
static uint32_t set_advance(pl_gmatch *m, uint32_t set, uint32_t cp) {
    const pl_gbnf *g = m->g;
    m->n_buf = 0;
    m->gen++;
    m->step_nodes = 0;
    /* nodes made during expansion need a stamp slot: node_get grows it */
    const uint32_t off = m->soff[set], len = m->slen[set];
    for (uint32_t i = 0; i < len && !m->oom; i++) {
        const uint32_t node = m->sdata[off + i];
        if (node == 0) continue;
        const uint32_t pos = m->npos[node];
        if (!pl_gclass_hits(g, &g->cls[g->el[pos].arg], cp, cp)) continue;
        const uint32_t parent = m->nparent[node];
        expand(m, g->el[pos + 1].kind == PL_GE_END ? parent : node_get(m, pos + 1, parent));
    }
    return set_from_buf(m);
}

/* Whether every class on top of the set's stacks holds all of [lo, hi]
 * or none of it, and which hold it (bit i: the set's i-th stack). */
static bool uniform_pattern(const pl_gmatch *m, uint32_t set, uint32_t lo, uint32_t hi, uint32_t *pat) {
    const pl_gbnf *g = m->g;
    const uint32_t *s = m->sdata + m->soff[set], n = m->slen[set];
    if (n > 21) return false; /* the pattern is kept in the key's 21 value bits */
    uint32_t bits = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (s[i] == 0) continue;
        const pl_gclass *c = &g->cls[g->el[m->npos[s[i]]].arg];
        if (!pl_gclass_hits(g, c, lo, hi)) continue;
        /* all of it: inside one range (classes are merged and never negated
         * after parsing, so the ranges that hold it are one) */
        bool all = false;
        for (uint32_t k = 0; k < c->n && !all; k++)
            all = g->ranges[2 * (c->first + k)] <= lo && g->ranges[2 * (c->first + k) + 1] >= hi;
        if (!all) return false;
        bits |= 1u << i;
    }
    *pat = bits;
    return true;
}

/* The state for a partial character (val, rem) of the set.  When every
 * stack takes all or none of the characters it can still become, which of
 * them it is changes nothing that follows: such states are kept by their
 * pattern, so the thousands of two-byte prefixes a vocabulary's CJK tokens
 * start with are one state inside a string, not one each (the mask walk
 * is bound by how many states it touches).  Not right after E0, ED, F0 and
 * F4, whose second bytes are restricted (overlong forms, surrogates). */
static uint32_t make_partial(pl_gmatch *m, uint32_t set, uint32_t v, uint8_t r, bool canon_ok) {
    /* only what can still become a character: not past U+10FFFF, not a
     * surrogate, not overlong (range_lo) */
    uint32_t lo = range_lo(v, r), hi = range_hi(v, r);
    if (hi > 0x10FFFF) hi = 0x10FFFF;
    if (lo > hi || (lo >= 0xD800 && hi <= 0xDFFF) || !set_feasible(m, set, lo, hi)) return PL_GM_DEAD;
    uint32_t pat;
    if (canon_ok && m->canonical && uniform_pattern(m, set, lo, hi, &pat))
        return dfa_get_key(m, set, pat, v, (uint8_t)(r | CANON));
    return dfa_get(m, set, v, (uint8_t)(r & ~CANON));
}

static uint32_t compute_step(pl_gmatch *m, uint32_t state, uint8_t b) {
    const uint32_t set = m->dset[state], val = m->dval[state];
    const uint8_t rem = m->drem[state];
    uint32_t cp;
    if (rem == 0) {
        if (b < 0x80) {
            cp = b;
        } else {
            int n = (b >> 5) == 6 ? 1 : (b >> 4) == 14 ? 2 : (b >> 3) == 30 ? 3 : 0;
            if (!n || b == 0xC0 || b == 0xC1 || b > 0xF4) return PL_GM_DEAD;
            const uint32_t v = n == 1 ? (b & 31u) : n == 2 ? (b & 15u) : (b & 7u);
            const uint8_t r = (uint8_t)(n | ((n + 1) << 4));
            return make_partial(m, set, v, r, b != 0xE0 && b != 0xED && b != 0xF0 && b != 0xF4);
        }
    } else {
        if ((b & 0xC0) != 0x80) return PL_GM_DEAD;
        const uint32_t v = (val << 6) | (b & 63u);
        const uint8_t r = (uint8_t)((rem & ~CANON) - 1); /* the sequence length stays in the high bits */
        if (r & 3) return make_partial(m, set, v, r, true);
        cp = v;
        if (cp < SEQ_MIN[(r >> 4) & 7] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return PL_GM_DEAD;
    }
    const uint32_t next = set_advance(m, set, cp);
    if (next == UINT32_MAX) return PL_GM_DEAD;
    return dfa_get(m, next, 0, 0);
}

uint32_t pl_gmatch_step(pl_gmatch *m, uint32_t state, uint8_t b) {
    if (state == PL_GM_DEAD) return PL_GM_DEAD;
    uint32_t t = m->trans[(size_t)state * 256 + b];
    if (t != PL_GM_UNKNOWN) return t;
    t = compute_step(m, state, b);
    if (m->oom) return PL_GM_DEAD; /* not remembered: memory may come back */
    m->trans[(size_t)state * 256 + b] = t;
    return t;
}

uint32_t pl_gmatch_feed(pl_gmatch *m, uint32_t state, const uint8_t *bytes, size_t n) {
    for (size_t i = 0; i < n && state != PL_GM_DEAD; i++) state = pl_gmatch_step(m, state, bytes[i]);
    return state;
}

bool pl_gmatch_accepting(const pl_gmatch *m, uint32_t state) {
    if (state == PL_GM_DEAD || m->drem[state]) return false;
    const uint32_t set = m->dset[state];
    return m->slen[set] && m->sdata[m->soff[set]] == 0; /* sorted: the empty stack first */
}

bool pl_gmatch_can_continue(const pl_gmatch *m, uint32_t state) {
    if (state == PL_GM_DEAD) return false;
    if (m->drem[state]) return true;
    const uint32_t set = m->dset[state];
    return m->slen[set] > 1 || (m->slen[set] == 1 && m->sdata[m->soff[set]] != 0);
}

uint32_t pl_gmatch_distance(const pl_gmatch *m, uint32_t state) {
    return state == PL_GM_DEAD ? INF_LEN : m->ddist[state];
}

const uint32_t *pl_gmatch_row(const pl_gmatch *m, uint32_t state) { return m->trans + (size_t)state * 256; }

size_t pl_gmatch_n_states(const pl_gmatch *m) { return m->n_dfa; }

const char *pl_gmatch_error(const pl_gmatch *m) {
    if (m->too_complex) return m->too_complex;
    return m->oom ? "out of memory in the grammar matcher" : NULL;
}

bool pl_gmatch_out_of_memory(const pl_gmatch *m) { return m->oom && !m->too_complex; }

void pl_gmatch_set_canonical(pl_gmatch *m, bool on) { m->canonical = on; }

size_t pl_gmatch_bytes(const pl_gmatch *m) {
    return m->cap_nodes * 16 + m->node_map.cap * 12 + m->cap_sdata * 4 + m->cap_sets * 12 + m->set_map.cap * 12 +
           m->cap_dfa * (13 + 1024) + m->dfa_map.cap * 12;
}

static bool tables_init(pl_gmatch *m) {
    if (!map_init(&m->node_map, 1024) || !map_init(&m->set_map, 256) || !map_init(&m->dfa_map, 256)) return false;
    /* node 0: the empty stack */
    if (!grow((void **)&m->npos, &m->cap_nodes, 1, sizeof *m->npos)) return false;
    m->nparent = malloc(m->cap_nodes * sizeof *m->nparent);
    m->ndist = malloc(m->cap_nodes * sizeof *m->ndist);
    m->stamp = malloc(m->cap_nodes * sizeof *m->stamp);
    if (!m->nparent || !m->ndist || !m->stamp) return false;
    m->npos[0] = NO_POS;
    m->nparent[0] = 0;
    m->ndist[0] = 0;
    m->stamp[0] = 0;
    m->n_nodes = 1;
    m->gen = 1;
    return true;
}

static void tables_free(pl_gmatch *m) {
    free(m->npos), free(m->nparent), free(m->ndist), free(m->stamp);
    free(m->sdata), free(m->soff), free(m->slen), free(m->snext), free(m->shash);
    free(m->dset), free(m->dval), free(m->ddist), free(m->drem), free(m->trans);
    map_free(&m->node_map), map_free(&m->set_map), map_free(&m->dfa_map);
    const pl_gbnf *g = m->g;
    uint32_t *buf = m->buf, *work = m->work;
    size_t cap_buf = m->cap_buf, cap_work = m->cap_work;
    const bool canonical = m->canonical;
    memset(m, 0, sizeof *m);
    m->g = g;
    m->canonical = canonical;
    m->buf = buf;
    m->cap_buf = cap_buf;
    m->work = work;
    m->cap_work = cap_work;
}

pl_gmatch *pl_gmatch_new(const pl_gbnf *g) {
    pl_gmatch *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->g = g;
    m->canonical = true;
    if (!tables_init(m)) {
        pl_gmatch_free(m);
        return NULL;
    }
    return m;
}

void pl_gmatch_free(pl_gmatch *m) {
    if (!m) return;
    tables_free(m);
    free(m->buf);
    free(m->work);
    free(m);
}

uint32_t pl_gmatch_start(pl_gmatch *m) {
    /* a stack holding just a reference to the start rule, expanded */
    const pl_gbnf *g = m->g;
    m->n_buf = 0;
    m->gen++;
    m->step_nodes = 0;
    const uint32_t a0 = g->rule_alt[g->root], na = g->rule_nalt[g->root];
    for (uint32_t a = 0; a < na && !m->oom; a++) {
        const uint32_t start = g->alt_start[a0 + a];
        expand(m, g->el[start].kind == PL_GE_END ? 0 : node_get(m, start, 0));
    }
    const uint32_t set = set_from_buf(m);
    if (set == UINT32_MAX) return PL_GM_DEAD;
    const uint32_t s = dfa_get(m, set, 0, 0);
    return m->oom ? PL_GM_DEAD : s;
}

/* Rebuild the tables with only `*state`: its stacks are re-made frame by
 * frame (positions from the bottom up), then its set and state. */
bool pl_gmatch_compact(pl_gmatch *m, uint32_t *state) {
    if (*state == PL_GM_DEAD) return false;
    const uint32_t set = m->dset[*state], val = m->dval[*state];
    const uint8_t rem = m->drem[*state];
    /* every stack as its positions, top first, 0-terminated lists */
    size_t total = 0;
    for (uint32_t i = 0; i < m->slen[set]; i++)
        for (uint32_t n = m->sdata[m->soff[set] + i]; n; n = m->nparent[n]) total++;
    total += m->slen[set];
    uint32_t *flat = malloc((total ? total : 1) * sizeof *flat);
    if (!flat) return false;
    size_t k = 0;
    for (uint32_t i = 0; i < m->slen[set]; i++) {
        for (uint32_t n = m->sdata[m->soff[set] + i]; n; n = m->nparent[n]) flat[k++] = m->npos[n];
        flat[k++] = NO_POS;
    }
    tables_free(m);
    bool ok = tables_init(m);
    m->n_buf = 0;
    for (size_t i = 0; ok && i < k;) {
        size_t j = i;
        while (flat[j] != NO_POS) j++;
        uint32_t node = 0; /* build from the bottom frame up */
        for (size_t q = j; q-- > i;) node = node_get(m, flat[q], node);
        buf_push(m, node);
        i = j + 1;
    }
    free(flat);
    if (!ok || m->oom) return false;
    const uint32_t s = set_from_buf(m);
    if (s == UINT32_MAX) return false;
    /* a CANON state's pattern is re-taken against the rebuilt set, whose
     * stacks may sort in another order */
    *state = rem ? make_partial(m, s, val, (uint8_t)(rem & ~CANON), (rem & CANON) != 0) : dfa_get(m, s, 0, 0);
    return *state != PL_GM_DEAD && !m->oom;
}
