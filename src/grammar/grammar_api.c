/*
 * grammar_api.c -- constrained decoding in the C ABI (pocketllm_grammar_*,
 * pocketllm_sampler_sample_grammar): a parsed grammar, the matcher's state
 * after the generated text, the set of tokens allowed next, and sampling
 * that first tries the unconstrained choice and masks the vocabulary only
 * when that choice is refused.
 *
 * A lazy grammar (triggers set) lets text through freely until one of the
 * trigger words appears in it; from the trigger's first byte on, the text
 * must match the grammar.  Tool calls under tool_choice "auto" use this.
 *
 * A length budget keeps a constrained reply from being cut off unfinished:
 * with `budget` tokens left, a token is allowed only if the fewest bytes
 * that then complete the grammar fit in the tokens after it (every byte is
 * a token of a byte-level vocabulary, so that many steps always suffice).
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "grammar/gbnf.h"
#include "grammar/grammar_loops.h"
#include "grammar/grammar_match.h"
#include "grammar/grammar_probe.h"
#include "grammar/grammar_vocab.h"
#include "pocketllm.h"

#define MAX_TRIGGERS 16
#define MAX_TRIGGER_LEN 256
#define MASK_CACHE 128                 /* remembered masks (one bitset each) */
#define MATCHER_BYTES (64u << 20)      /* past this the automaton is rebuilt */
#define MAX_WHOLE_CHARS 16             /* the longest texts a subtree taken whole may have */

typedef struct gshared {               /* what clones share, read-only */
    pl_gbnf g;
    int refs;
} gshared;

struct pocketllm_grammar {
    gshared *sh;
    const pl_gvocab *v;
    pl_gmatch *m;
    uint32_t state;
    /* lazy activation */
    char *trig[MAX_TRIGGERS];
    size_t n_trig, max_trig;
    bool active;
    char *tail;                        /* the last max_trig - 1 bytes of text while inactive */
    size_t n_tail;
    char *zone_open, *zone_close;      /* triggers inside such a zone do not count (a think block) */
    bool in_zone, in_zone0;            /* now, and at the start */
    size_t act_at;                     /* where in the log the grammar's text began */
    /* the text the grammar has taken (for clones) */
    char *log;
    size_t n_log, cap_log;
    /* masks */
    uint32_t *words;                   /* scratch bitset */
    int32_t *slot_of;                  /* automaton state -> cache slot, -1 none */
    size_t cap_slot_of;
    uint32_t *cache;                   /* MASK_CACHE bitsets */
    uint32_t cache_state[MASK_CACHE];
    size_t n_cache, next_evict;
    uint32_t *walk;                    /* the automaton state per trie depth */
    pl_gloops loops;                   /* each state's uniform successors (whole subtrees at once) */
    uint64_t n_whole, n_cut;           /* tests: subtrees taken at once */
    float *masked;                     /* the logits with refused tokens at -inf */
};

static size_t n_words(const pocketllm_grammar *g) { return ((size_t)g->v->n_vocab + 31) / 32; }

static void cache_clear(pocketllm_grammar *g) {
    for (size_t i = 0; i < g->cap_slot_of; i++) g->slot_of[i] = -1;
    g->n_cache = g->next_evict = 0;
    pl_gloops_clear(&g->loops);
}

/* The matcher's own failure (out of memory, or a grammar past its bounds),
 * which makes every step look dead: an error, never a token refused. */
static pocketllm_status matcher_failed(const pocketllm_grammar *g) {
    const char *why = pl_gmatch_error(g->m);
    if (!why) return POCKETLLM_OK;
    return pl_fail(pl_gmatch_out_of_memory(g->m) ? POCKETLLM_ERR_NO_MEMORY : POCKETLLM_ERR_INVALID_ARGUMENT, "%s", why);
}

static pocketllm_status make(const pl_gvocab *v, gshared *sh, pocketllm_grammar **out) {
    pocketllm_grammar *g = calloc(1, sizeof *g);
    if (!g) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    g->sh = sh;
    sh->refs++;
    g->v = v;
    g->m = pl_gmatch_new(&sh->g);
    g->words = malloc(n_words(g) * sizeof *g->words);
    g->walk = malloc(((size_t)v->max_depth + 1) * sizeof *g->walk);
    g->masked = malloc((size_t)v->n_vocab * sizeof *g->masked);
    g->active = true;
    if (!g->m || !g->words || !g->walk || !g->masked || (g->state = pl_gmatch_start(g->m)) == PL_GM_DEAD) {
        pocketllm_status st = g->m ? matcher_failed(g) : POCKETLLM_OK;
        if (!st) st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for the grammar");
        g->sh = NULL; /* the caller's still: grammar_new frees it, a clone's source keeps it */
        sh->refs--;
        pocketllm_grammar_free(g);
        return st;
    }
    *out = g;
    return POCKETLLM_OK;
}

pocketllm_status pocketllm_grammar_new(const pocketllm_model *model, const char *gbnf, const char *root,
                                       pocketllm_grammar **out) {
    if (!out) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "grammar_new: no output pointer");
    *out = NULL;
    if (!model || !gbnf) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "grammar_new: no model or grammar text");
    const pl_gvocab *v = pl_gvocab_of((pocketllm_model *)model); /* the trie is a cache kept with the model */
    if (!v) return POCKETLLM_ERR_INVALID_ARGUMENT;
    gshared *sh = calloc(1, sizeof *sh);
    if (!sh) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    char err[320];
    if (!pl_gbnf_parse(gbnf, root, &sh->g, err, sizeof err)) {
        free(sh);
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "%s", err);
    }
    pocketllm_status st = make(v, sh, out);
    if (st) {
        pl_gbnf_free(&sh->g);
        free(sh);
    }
    return st;
}

void pocketllm_grammar_free(pocketllm_grammar *g) {
    if (!g) return;
    if (g->sh && --g->sh->refs == 0) {
        pl_gbnf_free(&g->sh->g);
        free(g->sh);
    }
    pl_gmatch_free(g->m);
    for (size_t i = 0; i < g->n_trig; i++) free(g->trig[i]);
    free(g->zone_open), free(g->zone_close);
    free(g->tail), free(g->log), free(g->words), free(g->slot_of), free(g->cache), free(g->walk), free(g->masked);
    pl_gloops_free(&g->loops);
    free(g);
}

pocketllm_status pocketllm_grammar_set_triggers(pocketllm_grammar *g, const char *const *words, size_t n) {
    if (!g || (n && !words)) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "grammar_set_triggers: bad argument");
    if (n > MAX_TRIGGERS) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "at most %d trigger words", MAX_TRIGGERS);
    for (size_t i = 0; i < n; i++)
        if (!words[i] || !*words[i] || strlen(words[i]) > MAX_TRIGGER_LEN)
            return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "a trigger word must have 1..%d bytes", MAX_TRIGGER_LEN);
    for (size_t i = 0; i < g->n_trig; i++) free(g->trig[i]);
    g->n_trig = g->max_trig = 0;
    for (size_t i = 0; i < n; i++) {
        g->trig[i] = strdup(words[i]);
        if (!g->trig[i]) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
        g->n_trig++;
        const size_t l = strlen(words[i]);
        g->max_trig = l > g->max_trig ? l : g->max_trig;
    }
    if (g->zone_open) { /* the zone's words may start in the tail too */
        if (strlen(g->zone_open) > g->max_trig) g->max_trig = strlen(g->zone_open);
        if (strlen(g->zone_close) > g->max_trig) g->max_trig = strlen(g->zone_close);
    }
    free(g->tail);
    g->tail = malloc(2 * MAX_TRIGGER_LEN + 1);
    if (!g->tail) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    g->n_tail = 0;
    g->active = n == 0;
    return POCKETLLM_OK;
}

void pocketllm_grammar_reset(pocketllm_grammar *g) {
    if (!g) return;
    g->state = pl_gmatch_start(g->m);
    g->active = g->n_trig == 0;
    g->n_tail = 0;
    g->n_log = 0;
    g->act_at = 0;
    g->in_zone = g->in_zone0;
}

pocketllm_status pocketllm_grammar_set_trigger_zone(pocketllm_grammar *g, const char *open, const char *close,
                                                    int start_inside) {
    if (!g || !open || !close || !*open || !*close || strlen(open) > MAX_TRIGGER_LEN || strlen(close) > MAX_TRIGGER_LEN)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "grammar_set_trigger_zone: two words of 1..%d bytes", MAX_TRIGGER_LEN);
    free(g->zone_open), free(g->zone_close);
    g->zone_open = strdup(open), g->zone_close = strdup(close);
    if (!g->zone_open || !g->zone_close) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    const size_t lo = strlen(open), lc = strlen(close);
    if (lo > g->max_trig) g->max_trig = lo;
    if (lc > g->max_trig) g->max_trig = lc;
    g->in_zone = g->in_zone0 = start_inside != 0;
    return POCKETLLM_OK;
}

static bool log_add(pocketllm_grammar *g, const char *p, size_t n) {
    if (g->n_log + n > g->cap_log) {
        size_t cap = g->cap_log ? g->cap_log * 2 : 256;
        while (cap < g->n_log + n) cap *= 2;
        char *q = realloc(g->log, cap);
        if (!q) return false;
        g->log = q;
        g->cap_log = cap;
    }
    memcpy(g->log + g->n_log, p, n);
    g->n_log += n;
    return true;
}

static bool at_word(const char *text, size_t tot, size_t i, const char *w, size_t *len) {
    *len = strlen(w);
    return i + *len <= tot && !memcmp(text + i, w, *len);
}

/* Where the first trigger outside a zone begins in tail + piece, counted
 * from the start of the piece (negative: inside the tail); false when none
 * is complete.  *zone: whether the text after the piece is inside a zone.
 * Only words that end inside the piece count: those that ended in the tail
 * were seen when their own piece came. */
static bool find_trigger(const pocketllm_grammar *g, const char *piece, size_t n, long *at, bool *zone) {
    const size_t tot = g->n_tail + n;
    char buf[2 * MAX_TRIGGER_LEN + 64];
    const char *text = buf;
    char *heap = NULL;
    *zone = g->in_zone;
    if (tot <= sizeof buf) {
        memcpy(buf, g->tail, g->n_tail);
        memcpy(buf + g->n_tail, piece, n);
    } else {
        heap = malloc(tot);
        if (!heap) return false;
        memcpy(heap, g->tail, g->n_tail);
        memcpy(heap + g->n_tail, piece, n);
        text = heap;
    }
    bool z = g->in_zone, found = false;
    size_t l;
    for (size_t i = 0; i < tot && !found; i++) {
        if (g->zone_open && !z && at_word(text, tot, i, g->zone_open, &l) && i + l > g->n_tail) {
            z = true, i += l - 1;
            continue;
        }
        if (g->zone_close && z && at_word(text, tot, i, g->zone_close, &l) && i + l > g->n_tail) {
            z = false, i += l - 1;
            continue;
        }
        if (z) continue;
        for (size_t t = 0; t < g->n_trig; t++)
            if (at_word(text, tot, i, g->trig[t], &l) && i + l > g->n_tail) {
                *at = (long)i - (long)g->n_tail;
                found = true;
                break;
            }
    }
    free(heap);
    *zone = z;
    return found;
}

static void piece_of(const pocketllm_grammar *g, int32_t id, const uint8_t **p, size_t *n) {
    *p = g->v->bytes + g->v->piece_off[id];
    *n = g->v->piece_off[id + 1] - g->v->piece_off[id];
}

/* What an inactive lazy grammar's scan of a token found: whether it
 * completes a trigger, where the trigger starts (find_trigger's `at`), and
 * whether the text after it is inside a trigger zone. */
typedef struct trig_scan {
    bool act, zone;
    long at;
} trig_scan;

/* The automaton state after token id from the current one (lazy grammars:
 * what activation would leave), PL_GM_DEAD when refused; *ts tells what the
 * trigger scan found, for accept to record without scanning again. */
static uint32_t after_token(pocketllm_grammar *g, int32_t id, trig_scan *ts) {
    *ts = (trig_scan){.zone = g->in_zone};
    const uint8_t *p;
    size_t n;
    piece_of(g, id, &p, &n);
    if (!g->active) {
        if (!(ts->act = find_trigger(g, (const char *)p, n, &ts->at, &ts->zone))) return g->state; /* still free text */
        const long at = ts->at;
        uint32_t s = pl_gmatch_start(g->m);
        if (at < 0) s = pl_gmatch_feed(g->m, s, (const uint8_t *)g->tail + g->n_tail + at, (size_t)-at);
        return pl_gmatch_feed(g->m, s, p + (at > 0 ? at : 0), n - (size_t)(at > 0 ? at : 0));
    }
    if (n == 0) return PL_GM_DEAD; /* a special token writes nothing the grammar could match */
    return pl_gmatch_feed(g->m, g->state, p, n);
}

static bool allowed(pocketllm_grammar *g, int32_t id, int32_t budget) {
    if (id < 0 || id >= g->v->n_vocab) return false;
    if (g->v->eog[id]) return !g->active || pl_gmatch_accepting(g->m, g->state);
    trig_scan ts;
    const uint32_t s = after_token(g, id, &ts);
    if (s == PL_GM_DEAD) return false;
    if (!g->active && !ts.act) return true;
    return budget < 0 || (int64_t)pl_gmatch_distance(g->m, s) <= (int64_t)budget - 1;
}

int pocketllm_grammar_allows(pocketllm_grammar *g, int32_t id) { return g && allowed(g, id, -1); }

int pocketllm_grammar_done(const pocketllm_grammar *g) {
    return g && g->active && pl_gmatch_accepting(g->m, g->state) && !pl_gmatch_can_continue(g->m, g->state);
}

int pocketllm_grammar_complete(const pocketllm_grammar *g) {
    return g && (!g->active || pl_gmatch_accepting(g->m, g->state));
}

pocketllm_status pocketllm_grammar_accept(pocketllm_grammar *g, int32_t id) {
    if (!g) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "grammar_accept: no grammar");
    if (id < 0 || id >= g->v->n_vocab) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "token %d is outside the vocabulary", id);
    if (g->v->eog[id]) {
        if (g->active && !pl_gmatch_accepting(g->m, g->state))
            return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "the grammar does not allow ending here");
        return POCKETLLM_OK;
    }
    trig_scan ts;
    const uint32_t s = after_token(g, id, &ts);
    if (s == PL_GM_DEAD) return matcher_failed(g) ? matcher_failed(g)
                                                  : pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "token %d is not allowed by the grammar here", id);
    const uint8_t *p;
    size_t n;
    piece_of(g, id, &p, &n);
    if (!log_add(g, (const char *)p, n)) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    /* the trigger starts `at` bytes into this piece (negative: in the tail,
     * the end of the text before it) */
    if (!g->active && ts.act) g->act_at = (size_t)((long)(g->n_log - n) + ts.at);
    if (!g->active && !ts.act) {
        g->in_zone = ts.zone;
        /* keep the last max_trig - 1 bytes: a trigger may start in them */
        const size_t keep = g->max_trig ? g->max_trig - 1 : 0;
        const size_t tot = g->n_tail + n;
        const size_t drop = tot > keep ? tot - keep : 0;
        char tmp[2 * MAX_TRIGGER_LEN];
        size_t k = 0;
        for (size_t i = drop; i < tot; i++) tmp[k++] = i < g->n_tail ? g->tail[i] : (char)p[i - g->n_tail];
        memcpy(g->tail, tmp, k);
        g->n_tail = k;
        return POCKETLLM_OK;
    }
    g->active = true;
    g->state = s;
    if (pl_gmatch_bytes(g->m) > MATCHER_BYTES) {
        if (!pl_gmatch_compact(g->m, &g->state)) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for the grammar");
        cache_clear(g);
    }
    return POCKETLLM_OK;
}

pocketllm_status pocketllm_grammar_clone(const pocketllm_grammar *src, pocketllm_grammar **out) {
    if (!src || !out) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "grammar_clone: bad argument");
    *out = NULL;
    pocketllm_grammar *g;
    pocketllm_status st = make(src->v, src->sh, &g);
    if (st) return st;
    const char *w[MAX_TRIGGERS];
    for (size_t i = 0; i < src->n_trig; i++) w[i] = src->trig[i];
    if (src->n_trig && (st = pocketllm_grammar_set_triggers(g, w, src->n_trig))) {
        pocketllm_grammar_free(g);
        return st;
    }
    /* the text taken so far, and the state it leads to (the automaton reads
     * bytes, however they were split into tokens) */
    if (src->n_log && !log_add(g, src->log, src->n_log)) {
        pocketllm_grammar_free(g);
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    }
    if (src->n_tail) memcpy(g->tail, src->tail, src->n_tail);
    g->n_tail = src->n_tail;
    g->active = src->active;
    if (src->n_trig && src->zone_open &&
        (st = pocketllm_grammar_set_trigger_zone(g, src->zone_open, src->zone_close, src->in_zone0))) {
        pocketllm_grammar_free(g);
        return st;
    }
    g->in_zone = src->in_zone;
    g->act_at = src->act_at;
    if (src->active && src->n_log) {
        /* a lazy grammar's text starts at its trigger, a plain one's at 0 */
        const size_t from = src->n_trig ? src->act_at : 0;
        g->state = pl_gmatch_feed(g->m, pl_gmatch_start(g->m), (const uint8_t *)src->log + from, src->n_log - from);
        if (g->state == PL_GM_DEAD) {
            pocketllm_status st = matcher_failed(g);
            if (!st) st = pl_fail(POCKETLLM_ERR_INTERNAL, "grammar clone: the replayed text does not match");
            pocketllm_grammar_free(g);
            return st;
        }
    }
    *out = g;
    return POCKETLLM_OK;
}

/* ---- masks ----------------------------------------------------------- */

/* A subtree of the trie below node i, entered from state q: taken whole
 * when q's chain of uniform successors (grammar_loops.h) covers every
 * class of byte in it for as many characters as its longest text has, or
 * cut at the chain's length when every longer text dies where it ends;
 * under a budget only when the farthest state its texts can end in still
 * fits.  Returns the most characters an allowed text of it may have
 * (UINT_MAX: all), or -1 to walk it. */
static long subtree_verdict(pocketllm_grammar *g, size_t i, uint32_t q, int32_t budget) {
    const pl_gvocab *v = g->v;
    const uint64_t sc = v->sub_cls[i];
    if (sc & (PL_GV_BAD | PL_GV_MIDCHAR)) return -1;
    /* a subtree of long texts taken whole would measure a long chain
     * ahead, costing more than its few long tokens do */
    const bool whole_ok = v->sub_chars[i] <= MAX_WHOLE_CHARS;
    /* the counts are exact only below 255 */
    const bool cut_ok = (unsigned)v->chars_above[i] + v->sub_chars[i] < 255;
    uint32_t far = 0;
    unsigned cut = 0;
    const pl_gl_verdict vd = pl_gloops_chain(&g->loops, g->m, q, sc, whole_ok ? v->sub_chars[i] : MAX_WHOLE_CHARS + 1,
                                             &far, &cut);
    if (vd == PL_GL_WALK || (vd == PL_GL_WHOLE && !whole_ok) || (vd == PL_GL_CUT && !cut_ok)) return -1;
    if (budget >= 0 && (int64_t)far > (int64_t)budget - 1) return -1;
    return vd == PL_GL_WHOLE ? (long)UINT_MAX : (long)cut;
}

/* Marks (or, in the complement, clears) tokens tok[a .. b) in words. */
static void set_toks(uint32_t *words, const int32_t *tok, uint32_t a, uint32_t b) {
    for (uint32_t k = a; k < b; k++) words[(uint32_t)tok[k] >> 5] |= 1u << (tok[k] & 31);
}
static void clear_toks(uint32_t *words, const int32_t *tok, uint32_t a, uint32_t b) {
    for (uint32_t k = a; k < b; k++) words[(uint32_t)tok[k] >> 5] &= ~(1u << (tok[k] & 31));
}

/* The tokens allowed in state `st` into g->words (active grammars only).
 * The hot loop: one transition lookup per trie node, straight from the
 * automaton's table (re-read after a step that computes a new transition,
 * which may move it), except where a whole subtree is allowed at once.
 * Where most tokens will be allowed (st goes on uniformly over letters:
 * inside a string) the walk starts from every token and clears the
 * refused ones instead, so a subtree allowed whole costs nothing.  mode
 * -1: the walk chooses; 0 marking, 1 clearing (the tests force each). */
static bool walk_mask(pocketllm_grammar *g, uint32_t st, int32_t budget, int mode) {
    const pl_gvocab *v = g->v;
    const bool comp = mode >= 0 ? mode == 1
                                : pl_gloops_succ(&g->loops, g->m, st, 1ull << pl_gvocab_byte_class('a')) != PL_GM_DEAD;
    uint32_t *words = g->words;
    if (comp) memcpy(words, v->in_trie, n_words(g) * sizeof *words);
    else memset(words, 0, n_words(g) * sizeof *words);
    uint32_t *w = g->walk;
    w[0] = st;
    const uint8_t *byte = v->byte;
    const uint16_t *depth = v->depth;
    const uint32_t *skip = v->skip, *tf = v->tok_first;
    const int32_t *tok = v->tok;
    const uint32_t *trans = pl_gmatch_row(g->m, 0);
    const size_t n = v->n_nodes;
    for (size_t i = 0; i < n;) {
        const uint32_t q = w[depth[i] - 1];
        const uint32_t next = skip[i];
        long most = -1;
        if (next - i >= 2) {
            most = subtree_verdict(g, i, q, budget);
            trans = pl_gmatch_row(g->m, 0); /* the verdict may have added states, moving the table */
        }
        if (most >= 0) {
            if (most == (long)UINT_MAX) {
                g->n_whole++;
                if (!comp) set_toks(words, tok, tf[i], tf[next]);
            } else {
                g->n_cut++; /* the texts of at most `most` characters from here */
                const unsigned lim = v->chars_above[i] + (unsigned)most;
                for (uint32_t k = tf[i], e = tf[next]; k < e; k++)
                    if ((v->tok_chars[k] <= lim) != comp)
                        words[(uint32_t)tok[k] >> 5] ^= 1u << (tok[k] & 31);
            }
            i = next;
            continue;
        }
        uint32_t s = trans[(size_t)q * 256 + byte[i]];
        if (s == PL_GM_UNKNOWN) {
            s = pl_gmatch_step(g->m, q, byte[i]);
            trans = pl_gmatch_row(g->m, 0);
        }
        if (s == PL_GM_DEAD) {
            if (comp) clear_toks(words, tok, tf[i], tf[next]);
            i = next;
            continue;
        }
        w[depth[i]] = s;
        const uint32_t a = tf[i], b = tf[i + 1];
        if (a < b) {
            const bool fits = budget < 0 || (int64_t)pl_gmatch_distance(g->m, s) <= (int64_t)budget - 1;
            if (fits && !comp) set_toks(words, tok, a, b);
            if (!fits && comp) clear_toks(words, tok, a, b);
        }
        i++;
    }
    if (pl_gmatch_accepting(g->m, st))
        for (int32_t t = 0; t < v->n_vocab; t++)
            if (v->eog[t]) words[(uint32_t)t >> 5] |= 1u << (t & 31);
    return true;
}

/* g->words = the allowed tokens now (cached per state when no budget is
 * given: a budget's mask depends on it, and is made afresh). */
static pocketllm_status fill_mask(pocketllm_grammar *g, int32_t budget) {
    const size_t nw = n_words(g);
    if (!g->active) { /* lazy and not yet triggered: every token but those that trigger into a dead end */
        memset(g->words, 0, nw * sizeof *g->words);
        for (int32_t t = 0; t < g->v->n_vocab; t++)
            if (allowed(g, t, budget)) g->words[(uint32_t)t >> 5] |= 1u << (t & 31);
        return POCKETLLM_OK;
    }
    const bool binds = budget >= 0;
    if (!binds && g->state < g->cap_slot_of && g->slot_of[g->state] >= 0) {
        memcpy(g->words, g->cache + (size_t)g->slot_of[g->state] * nw, nw * sizeof *g->words);
        return POCKETLLM_OK;
    }
    walk_mask(g, g->state, budget, -1);
    pocketllm_status st = matcher_failed(g);
    if (st || binds) return st;
    /* remember it */
    if (!g->cache) {
        g->cache = malloc((size_t)MASK_CACHE * nw * sizeof *g->cache);
        if (!g->cache) return POCKETLLM_OK; /* no cache, still a mask */
    }
    const size_t need = pl_gmatch_n_states(g->m);
    if (need > g->cap_slot_of) {
        size_t cap = g->cap_slot_of ? g->cap_slot_of : 256;
        while (cap < need) cap *= 2;
        int32_t *q = realloc(g->slot_of, cap * sizeof *q);
        if (!q) return POCKETLLM_OK;
        for (size_t i = g->cap_slot_of; i < cap; i++) q[i] = -1;
        g->slot_of = q;
        g->cap_slot_of = cap;
    }
    size_t slot;
    if (g->n_cache < MASK_CACHE) {
        slot = g->n_cache++;
    } else {
        slot = g->next_evict;
        g->next_evict = (g->next_evict + 1) % MASK_CACHE;
        g->slot_of[g->cache_state[slot]] = -1;
    }
    memcpy(g->cache + slot * nw, g->words, nw * sizeof *g->words);
    g->cache_state[slot] = g->state;
    g->slot_of[g->state] = (int32_t)slot;
    return POCKETLLM_OK;
}

/* g->words into one byte per token, eight at a time: the product puts
 * bit 7-k of b at the bottom of byte k (nine-bit-spaced copies of b never
 * overlap), the byte swap turns that into bit k (little-endian stores, as
 * on every target) */
static void words_to_bytes(const uint32_t *words, uint8_t *allow, int32_t n_vocab) {
    int32_t t = 0;
    for (; t + 8 <= n_vocab; t += 8) {
        const uint64_t b = (words[(uint32_t)t >> 5] >> (t & 31)) & 0xff;
        const uint64_t y = __builtin_bswap64(((b * 0x8040201008040201ull) >> 7) & 0x0101010101010101ull);
        memcpy(allow + t, &y, 8);
    }
    for (; t < n_vocab; t++) allow[t] = (words[(uint32_t)t >> 5] >> (t & 31)) & 1;
}

pocketllm_status pocketllm_grammar_mask(pocketllm_grammar *g, uint8_t *allow, int32_t n_vocab) {
    if (!g || !allow || n_vocab != g->v->n_vocab)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "grammar_mask: bad argument (n_vocab must be the model's)");
    /* computed afresh (never the sampler's cached mask): this is also the
     * timing `bench --json-schema` reports for a step that needs the mask */
    if (g->active) walk_mask(g, g->state, -1, -1);
    else fill_mask(g, -1);
    pocketllm_status st = matcher_failed(g);
    if (st) return st;
    words_to_bytes(g->words, allow, n_vocab);
    return POCKETLLM_OK;
}

pocketllm_status pl_grammar_probe_mask(pocketllm_grammar *g, int32_t budget, int mode, uint8_t *allow, int32_t n_vocab) {
    if (!g || !allow || n_vocab != g->v->n_vocab || !g->active)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "grammar probe: bad argument");
    walk_mask(g, g->state, budget, mode);
    words_to_bytes(g->words, allow, n_vocab);
    return POCKETLLM_OK;
}

int pl_grammar_probe_allows(pocketllm_grammar *g, int32_t id, int32_t budget) { return g && allowed(g, id, budget); }

void pl_grammar_probe_counts(const pocketllm_grammar *g, uint64_t *whole, uint64_t *cut) {
    *whole = g->n_whole;
    *cut = g->n_cut;
}

pocketllm_status pocketllm_sampler_sample_grammar(pocketllm_sampler *s, pocketllm_grammar *g, const float *logits,
                                                  int32_t n_vocab, int32_t budget, int32_t *id) {
    if (!g) return pocketllm_sampler_sample(s, logits, n_vocab, id);
    if (!logits || !id || n_vocab < 1) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "sampler_sample: bad argument");
    if (n_vocab < g->v->n_vocab)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "%d logits for a vocabulary of %d tokens", n_vocab, g->v->n_vocab);
    /* the unconstrained choice first: usually the model already obeys */
    pocketllm_status st = pocketllm_sampler_sample(s, logits, n_vocab, id);
    if (st) return st;
    if (allowed(g, *id, budget)) return POCKETLLM_OK;
    if ((st = fill_mask(g, budget))) return st;
    size_t n_ok = 0;
    for (size_t w = 0; w < n_words(g); w++) n_ok += (size_t)__builtin_popcount(g->words[w]);
    if (n_ok == 0 && budget >= 0) { /* the budget cannot be met: finish what can be finished */
        if ((st = fill_mask(g, -1))) return st;
        for (size_t w = 0; w < n_words(g); w++) n_ok += (size_t)__builtin_popcount(g->words[w]);
    }
    if (n_ok == 0) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "the grammar allows no token here");
    /* rows past the vocabulary's tokens (padding) are never allowed */
    for (int32_t t = 0; t < g->v->n_vocab; t++)
        g->masked[t] = ((g->words[(uint32_t)t >> 5] >> (t & 31)) & 1) ? logits[t] : -INFINITY;
    if (n_vocab > g->v->n_vocab) {
        /* the sampler wants n_vocab entries: a padded buffer */
        float *tmp = malloc((size_t)n_vocab * sizeof *tmp);
        if (!tmp) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
        memcpy(tmp, g->masked, (size_t)g->v->n_vocab * sizeof *tmp);
        for (int32_t t = g->v->n_vocab; t < n_vocab; t++) tmp[t] = -INFINITY;
        st = pocketllm_sampler_sample(s, tmp, n_vocab, id);
        free(tmp);
    } else {
        st = pocketllm_sampler_sample(s, g->masked, n_vocab, id);
    }
    if (st) return st;
    if (*id < 0 || *id >= g->v->n_vocab || !((g->words[(uint32_t)*id >> 5] >> (*id & 31)) & 1)) {
        /* only when every allowed logit is -inf: take the first allowed token */
        for (int32_t t = 0; t < g->v->n_vocab; t++)
            if ((g->words[(uint32_t)t >> 5] >> (t & 31)) & 1) {
                *id = t;
                break;
            }
    }
    return POCKETLLM_OK;
}
