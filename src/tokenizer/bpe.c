/*
 * bpe.c -- byte-level BPE (tokenizer.ggml.model = "gpt2") as llama.cpp
 * does it: text is decoded to code points (malformed UTF-8 becoming U+FFFD),
 * cut into words by the pre-tokenizer, and each word, seen as bytes, is
 * merged by the rule of lowest rank (leftmost on ties) until no adjacent
 * pair has a merge rule.
 *
 * Unlike llama.cpp we never build the GPT-2 "byte-as-character" strings:
 * token texts and merge rules are mapped back to raw bytes once, at load,
 * and every distinct string is interned as a number (its "sid"), so the
 * merge loop compares and hashes integers.  Repeated words within one call
 * are tokenized once (a per-call cache).
 */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "tokenizer/unicode.h"
#include "tokenizer/vocab_impl.h"

#define NO_SID 0xffffffffu
#define EMPTY_KEY UINT64_MAX

/* ---- the GPT-2 byte <-> character mapping -------------------------------- */

static bool maps_to_itself(unsigned b) { return (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || b >= 0xae; }

uint32_t pl_bpe_byte_to_cp(uint8_t b) {
    if (maps_to_itself(b)) return b;
    /* the other 68 bytes, in order, become U+0100.. */
    if (b <= 0x20) return 0x100 + b;
    if (b >= 0x7f && b <= 0xa0) return 0x100 + 33 + (b - 0x7fu);
    return 0x100 + 67; /* 0xad */
}

int pl_bpe_cp_to_byte(uint32_t cp) {
    if (cp < 0x100) return maps_to_itself(cp) ? (int)cp : -1;
    if (cp >= 0x100 + 68) return -1;
    uint32_t n = cp - 0x100;
    if (n < 33) return (int)n;
    if (n < 67) return (int)(0x7f + n - 33);
    return 0xad;
}

/* Raw bytes of a string in the mapped form; false when it is not one (not
 * canonical UTF-8, or a character outside the 256). */
static bool unmap(const char *s, size_t n, uint8_t *out, size_t *out_n) {
    size_t k = 0, used;
    for (size_t i = 0; i < n; i += used) {
        uint32_t cp = pl_utf8_decode((const uint8_t *)s + i, n - i, &used);
        uint8_t enc[4];
        int b = pl_bpe_cp_to_byte(cp);
        if (b < 0 || pl_utf8_encode(cp, enc) != used || memcmp(enc, s + i, used) != 0) return false;
        out[k++] = (uint8_t)b;
    }
    *out_n = k;
    return true;
}

/* ---- interning and the merge table -------------------------------------- */

typedef struct sid_text {
    const uint8_t *p;
    uint32_t n;
} sid_text;

typedef struct builder {
    pl_vocab *v;
    sid_text *texts; /* per sid */
    size_t cap;
} builder;

static pocketllm_status add_sid(builder *b, const uint8_t *raw, size_t n, int32_t *sid) {
    pl_bpe *bpe = &b->v->bpe;
    uint64_t found;
    if (pl_strmap_get(&bpe->raw_to_sid, (const char *)raw, n, &found)) {
        *sid = (int32_t)found;
        return POCKETLLM_OK;
    }
    if ((size_t)bpe->n_sids == b->cap) {
        size_t cap = b->cap * 2;
        sid_text *t = realloc(b->texts, cap * sizeof *t);
        if (!t) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
        b->texts = t;
        b->cap = cap;
    }
    char *copy = pl_arena_strndup(&b->v->arena, (const char *)raw, n);
    if (!copy || pl_strmap_put(&bpe->raw_to_sid, copy, n, (uint64_t)bpe->n_sids, NULL) < 0)
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    b->texts[bpe->n_sids] = (sid_text){(const uint8_t *)copy, (uint32_t)n};
    *sid = bpe->n_sids++;
    return POCKETLLM_OK;
}

static inline uint64_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static inline uint64_t merge_lookup(const pl_bpe *b, uint32_t l, uint32_t r) {
    uint64_t key = (uint64_t)l << 32 | r;
    for (size_t i = mix64(key) & b->merge_mask;; i = (i + 1) & b->merge_mask) {
        if (b->merge_key[i] == key) return b->merge_val[i];
        if (b->merge_key[i] == EMPTY_KEY) return UINT64_MAX;
    }
}

void pl_bpe_free(pl_bpe *b) {
    pl_strmap_free(&b->raw_to_sid);
    free(b->merge_key);
    free(b->merge_val);
    memset(b, 0, sizeof *b);
}

pocketllm_status pl_bpe_build(pl_vocab *v, const pocketllm_gguf_value *merges) {
    pl_bpe *bpe = &v->bpe;
    pocketllm_status st = POCKETLLM_OK;
    size_t n_merges = (size_t)merges->n;
    if (merges->n >= INT32_MAX) return pl_fail(POCKETLLM_ERR_FORMAT, "too many merge rules");
    builder b = {v, NULL, (size_t)v->n_tokens + 64};
    uint32_t(*rules)[2] = malloc((n_merges ? n_merges : 1) * sizeof *rules);
    uint8_t *scratch = NULL;
    size_t longest = 1;
    for (int32_t i = 0; i < v->n_tokens; i++)
        if (v->tokens[i].len > longest) longest = v->tokens[i].len;
    for (size_t i = 0; i < n_merges; i++) {
        uint64_t len;
        pl_gguf_array_str(merges, i, &len);
        if (len > longest) longest = (size_t)len;
    }
    b.texts = malloc(b.cap * sizeof *b.texts);
    scratch = malloc(2 * longest + 2);
    if (!rules || !b.texts || !scratch || !pl_strmap_init(&bpe->raw_to_sid, (size_t)v->n_tokens + n_merges / 8)) {
        st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for %zu merge rules", n_merges);
        goto done;
    }
    /* every token whose text is in the mapped form: sid = id */
    bpe->n_sids = v->n_tokens;
    for (int32_t i = 0; i < v->n_tokens; i++) {
        size_t n;
        b.texts[i] = (sid_text){NULL, 0};
        if (!unmap(v->tokens[i].text, v->tokens[i].len, scratch, &n)) continue;
        char *copy = pl_arena_strndup(&v->arena, (const char *)scratch, n);
        if (!copy || pl_strmap_put(&bpe->raw_to_sid, copy, n, (uint64_t)i, NULL) < 0) {
            st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
            goto done;
        }
        b.texts[i] = (sid_text){(const uint8_t *)copy, (uint32_t)n};
    }
    /* the rules: "LEFT RIGHT", split at the first space after the first
     * byte; a rule whose sides are not in the mapped form can never apply */
    for (size_t i = 0; i < n_merges; i++) {
        uint64_t len;
        const char *m = pl_gguf_array_str(merges, i, &len);
        size_t n = (size_t)len, ln, rn;
        const char *sp = n > 1 ? memchr(m + 1, ' ', n - 1) : NULL;
        rules[i][0] = rules[i][1] = NO_SID;
        if (!sp) continue;
        size_t pos = (size_t)(sp - m);
        if (!unmap(m, pos, scratch, &ln) || !unmap(sp + 1, n - pos - 1, scratch + ln, &rn) || ln == 0 || rn == 0)
            continue;
        int32_t l, r;
        if ((st = add_sid(&b, scratch, ln, &l)) || (st = add_sid(&b, scratch + ln, rn, &r))) goto done;
        rules[i][0] = (uint32_t)l;
        rules[i][1] = (uint32_t)r;
    }
    size_t cap = 16; /* load factor at most 3/4 */
    while (cap / 4 * 3 < n_merges + 1) cap *= 2;
    bpe->merge_key = malloc(cap * sizeof *bpe->merge_key);
    bpe->merge_val = malloc(cap * sizeof *bpe->merge_val);
    if (!bpe->merge_key || !bpe->merge_val) {
        st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for %zu merge rules", n_merges);
        goto done;
    }
    memset(bpe->merge_key, 0xff, cap * sizeof *bpe->merge_key);
    bpe->merge_mask = cap - 1;
    for (size_t i = 0; i < n_merges; i++) {
        if (rules[i][0] == NO_SID) continue;
        uint64_t key = (uint64_t)rules[i][0] << 32 | rules[i][1];
        size_t slot = mix64(key) & bpe->merge_mask;
        while (bpe->merge_key[slot] != EMPTY_KEY && bpe->merge_key[slot] != key) slot = (slot + 1) & bpe->merge_mask;
        if (bpe->merge_key[slot] == key) continue; /* the first rule for a pair wins, as in llama.cpp */
        /* what the merged string is, if it is a token or a part of a rule */
        const sid_text *lt = &b.texts[rules[i][0]], *rt = &b.texts[rules[i][1]];
        memcpy(scratch, lt->p, lt->n);
        memcpy(scratch + lt->n, rt->p, rt->n);
        uint64_t result;
        if (!pl_strmap_get(&bpe->raw_to_sid, (const char *)scratch, lt->n + rt->n, &result)) result = NO_SID;
        bpe->merge_key[slot] = key;
        bpe->merge_val[slot] = (uint64_t)i << 32 | (uint32_t)result;
    }
    for (int c = 0; c < 256; c++) {
        uint8_t raw = (uint8_t)c, enc[4];
        uint64_t sid;
        bpe->byte_sid[c] = pl_strmap_get(&bpe->raw_to_sid, (const char *)&raw, 1, &sid) ? (int32_t)sid : -1;
        /* an unknown piece falls back, byte by byte of its mapped form, to
         * the tokens whose whole text is that one byte */
        size_t k = pl_utf8_encode(pl_bpe_byte_to_cp(raw), enc);
        bpe->byte_fallback[c][0] = bpe->byte_fallback[c][1] = -1;
        for (size_t j = 0; j < k; j++) bpe->byte_fallback[c][j] = pl_vocab_find(v, (const char *)&enc[j], 1);
    }
done:
    free(rules);
    free(b.texts);
    free(scratch);
    return st;
}

/* ---- merging one word ----------------------------------------------------- */

typedef struct sym {
    int prev, next;
    uint32_t off, len;
    uint32_t sid;
} sym;

typedef struct cand {
    uint32_t rank;
    int left, right;
    uint32_t size;
} cand;

/* per-call scratch */
typedef struct work {
    sym *s;
    uint64_t *rank; /* small words: (rank << 32 | result sid) of (i, next(i)) */
    cand *heap;
    size_t cap, heap_cap;
} work;

static pocketllm_status work_reserve(work *w, size_t n) {
    if (n <= w->cap) return POCKETLLM_OK;
    size_t cap = w->cap ? w->cap : 64;
    while (cap < n) cap *= 2;
    sym *s = realloc(w->s, cap * sizeof *s);
    if (s) w->s = s;
    uint64_t *r = realloc(w->rank, cap * sizeof *r);
    if (r) w->rank = r;
    if (!s || !r) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory while tokenizing");
    w->cap = cap;
    return POCKETLLM_OK;
}

static inline uint64_t pair_rank(const pl_bpe *b, const sym *s, int i) {
    int j = s[i].next;
    if (j < 0 || s[i].sid == NO_SID || s[j].sid == NO_SID) return UINT64_MAX;
    return merge_lookup(b, s[i].sid, s[j].sid);
}

static void merge_into(sym *s, int i, uint32_t result) {
    int j = s[i].next;
    s[i].len += s[j].len;
    s[i].sid = result;
    s[j].len = 0;
    s[i].next = s[j].next;
    if (s[j].next >= 0) s[s[j].next].prev = i;
}

/* Words of up to this many bytes scan for the best pair (fast when short);
 * longer ones use a priority queue. */
#define SCAN_MAX 48

static void merge_scan(const pl_bpe *b, sym *s, uint64_t *rank, int n) {
    for (int i = 0; i < n; i++) rank[i] = pair_rank(b, s, i);
    for (;;) {
        int best = -1;
        uint64_t best_rank = UINT64_MAX;
        for (int i = 0; i != -1; i = s[i].next)
            if (rank[i] < best_rank) best_rank = rank[i], best = i; /* strict: leftmost wins ties */
        if (best < 0) return;
        merge_into(s, best, (uint32_t)best_rank);
        rank[best] = pair_rank(b, s, best);
        if (s[best].prev >= 0) rank[s[best].prev] = pair_rank(b, s, s[best].prev);
    }
}

static bool cand_before(const cand *x, const cand *y) {
    return x->rank < y->rank || (x->rank == y->rank && x->left < y->left);
}

static pocketllm_status heap_push(work *w, size_t *n, cand c) {
    if (*n == w->heap_cap) {
        size_t cap = w->heap_cap ? w->heap_cap * 2 : 256;
        cand *h = realloc(w->heap, cap * sizeof *h);
        if (!h) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory while tokenizing");
        w->heap = h;
        w->heap_cap = cap;
    }
    size_t i = (*n)++;
    while (i > 0 && cand_before(&c, &w->heap[(i - 1) / 2])) {
        w->heap[i] = w->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    w->heap[i] = c;
    return POCKETLLM_OK;
}

static cand heap_pop(work *w, size_t *n) {
    cand top = w->heap[0], last = w->heap[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && cand_before(&w->heap[c + 1], &w->heap[c])) c++;
        if (!cand_before(&w->heap[c], &last)) break;
        w->heap[i] = w->heap[c];
        i = c;
    }
    if (*n) w->heap[i] = last;
    return top;
}

static pocketllm_status push_pair(const pl_bpe *b, work *w, size_t *n, int i) {
    if (i < 0) return POCKETLLM_OK;
    uint64_t r = pair_rank(b, w->s, i);
    if (r == UINT64_MAX) return POCKETLLM_OK;
    int j = w->s[i].next;
    return heap_push(w, n, (cand){(uint32_t)(r >> 32), i, j, w->s[i].len + w->s[j].len});
}

static pocketllm_status merge_heap(const pl_bpe *b, work *w, int n) {
    pocketllm_status st;
    size_t hn = 0;
    for (int i = 0; i + 1 < n; i++)
        if ((st = push_pair(b, w, &hn, i))) return st;
    sym *s = w->s;
    while (hn) {
        cand c = heap_pop(w, &hn);
        if (s[c.left].len == 0 || s[c.right].len == 0 || s[c.left].next != c.right ||
            s[c.left].len + s[c.right].len != c.size)
            continue; /* outdated */
        uint64_t r = merge_lookup(b, s[c.left].sid, s[c.right].sid);
        merge_into(s, c.left, (uint32_t)r);
        if ((st = push_pair(b, w, &hn, s[c.left].prev)) || (st = push_pair(b, w, &hn, c.left))) return st;
    }
    return POCKETLLM_OK;
}

/* Tokens for one unknown piece: its bytes through the fallback table. */
static pocketllm_status fallback(const pl_bpe *b, const uint8_t *p, size_t n, pl_ids *out) {
    pocketllm_status st;
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 2; k++)
            if (b->byte_fallback[p[i]][k] >= 0 && (st = pl_ids_push(out, b->byte_fallback[p[i]][k]))) return st;
    return POCKETLLM_OK;
}

static pocketllm_status bpe_word(const pl_vocab *v, work *w, const uint8_t *p, size_t n, pl_ids *out) {
    const pl_bpe *b = &v->bpe;
    pocketllm_status st;
    if (v->ignore_merges || n == 1) {
        uint64_t sid;
        bool found = n == 1 ? (sid = (uint64_t)(int64_t)b->byte_sid[p[0]], b->byte_sid[p[0]] >= 0)
                            : pl_strmap_get(&b->raw_to_sid, (const char *)p, n, &sid);
        if (found && sid < (uint64_t)v->n_tokens) return pl_ids_push(out, (int32_t)sid);
        if (n == 1) return fallback(b, p, n, out);
    }
    if ((st = work_reserve(w, n))) return st;
    sym *s = w->s;
    for (size_t i = 0; i < n; i++) {
        int32_t sid = b->byte_sid[p[i]];
        s[i] = (sym){(int)i - 1, i + 1 == n ? -1 : (int)i + 1, (uint32_t)i, 1, sid < 0 ? NO_SID : (uint32_t)sid};
    }
    if (n <= SCAN_MAX) merge_scan(b, s, w->rank, (int)n);
    else if ((st = merge_heap(b, w, (int)n))) return st;
    for (int i = 0; i != -1; i = s[i].next) {
        if (s[i].sid < (uint32_t)v->n_tokens) st = pl_ids_push(out, (int32_t)s[i].sid);
        else st = fallback(b, p + s[i].off, s[i].len, out);
        if (st) return st;
    }
    return POCKETLLM_OK;
}

/* ---- a per-call cache of word -> ids -------------------------------------- */

typedef struct cache_slot {
    uint64_t hash;
    uint32_t off, len;    /* the word, in the normalized text */
    uint32_t ids, n_ids;  /* its ids, in the cache's id pool */
} cache_slot;

typedef struct cache {
    cache_slot *slot;
    size_t mask, count;
    pl_ids pool;
} cache;

#define CACHE_WORD_MAX 64
#define CACHE_MIN_TEXT 2048

static uint64_t hash_bytes(const uint8_t *p, size_t n) {
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    while (n >= 8) {
        uint64_t x;
        memcpy(&x, p, 8);
        h = mix64(h ^ x) * 0x9e3779b97f4a7c15ull;
        p += 8, n -= 8;
    }
    uint64_t x = 0;
    memcpy(&x, p, n);
    return mix64(h ^ x ^ (n << 56)) | 1; /* never 0: 0 marks a free slot */
}

static pocketllm_status cache_grow(cache *c) {
    size_t cap = c->slot ? (c->mask + 1) * 2 : 4096;
    cache_slot *s = calloc(cap, sizeof *s);
    if (!s) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory while tokenizing");
    for (size_t i = 0; c->slot && i <= c->mask; i++) {
        if (!c->slot[i].hash) continue;
        size_t j = c->slot[i].hash & (cap - 1);
        while (s[j].hash) j = (j + 1) & (cap - 1);
        s[j] = c->slot[i];
    }
    free(c->slot);
    c->slot = s;
    c->mask = cap - 1;
    return POCKETLLM_OK;
}

/* ---- a fragment ------------------------------------------------------------ */

pocketllm_status pl_bpe_tokenize(const pl_vocab *v, const char *text, size_t len, pl_ids *out) {
    if (len == 0) return POCKETLLM_OK;
    /* offsets are 32-bit, and malformed bytes grow threefold (U+FFFD) */
    if (len >= UINT32_MAX / 4) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "text of %zu bytes is too long", len);
    pocketllm_status st = POCKETLLM_OK;
    const uint8_t *src = (const uint8_t *)text;
    /* code points, their flags and offsets; the text re-encoded where
     * llama.cpp's decoding changes it (U+FFFD for malformed bytes) */
    uint32_t *cps = malloc(len * sizeof *cps), *offs = malloc((len + 1) * sizeof *offs);
    uint16_t *fl = malloc(len * sizeof *fl);
    uint8_t *norm = NULL;
    pl_lens words = {0}, tmp = {0};
    work w = {0};
    cache c = {0};
    if (!cps || !offs || !fl) {
        st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory while tokenizing %zu bytes", len);
        goto done;
    }
    size_t n = 0, nb = 0, used;
    bool same = true;
    for (size_t i = 0; i < len; i += used) {
        uint32_t cp = src[i] < 0x80 ? (used = 1, src[i]) : pl_utf8_decode(src + i, len - i, &used);
        if (same && src[i] >= 0x80) {
            uint8_t enc[4];
            size_t k = pl_utf8_encode(cp, enc);
            if (k != used || memcmp(enc, src + i, k) != 0) same = false;
        }
        cps[n] = cp;
        fl[n++] = pl_ucp_flags(cp);
    }
    if (same) {
        for (size_t i = 0, off = 0; i < n; i++) {
            offs[i] = (uint32_t)off;
            off += cps[i] < 0x80 ? 1 : cps[i] < 0x800 ? 2 : cps[i] < 0x10000 ? 3 : 4;
        }
        offs[n] = (uint32_t)len;
        norm = (uint8_t *)src;
    } else {
        norm = malloc(4 * n); /* U+FFFD takes 3 bytes for each malformed byte */
        if (!norm) {
            st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory while tokenizing");
            goto done;
        }
        for (size_t i = 0; i < n; i++) {
            offs[i] = (uint32_t)nb;
            nb += pl_utf8_encode(cps[i], norm + nb);
        }
        offs[n] = (uint32_t)nb;
    }
    if ((st = pl_pretok_split(v->pretok, cps, fl, n, &words, &tmp))) goto done;

    bool use_cache = len >= CACHE_MIN_TEXT;
    size_t at = 0;
    for (size_t i = 0; i < words.n && !st; i++) {
        size_t off = offs[at], wlen = offs[at + words.v[i]] - off;
        at += words.v[i];
        const uint8_t *p = norm + off;
        if (!use_cache || wlen > CACHE_WORD_MAX) {
            st = bpe_word(v, &w, p, wlen, out);
            continue;
        }
        if ((c.count + 1) * 2 > (c.slot ? c.mask + 1 : 0) && (st = cache_grow(&c))) break;
        uint64_t h = hash_bytes(p, wlen);
        size_t j = h & c.mask;
        while (c.slot[j].hash &&
               !(c.slot[j].hash == h && c.slot[j].len == wlen && memcmp(norm + c.slot[j].off, p, wlen) == 0))
            j = (j + 1) & c.mask;
        if (c.slot[j].hash) {
            if (c.slot[j].n_ids) st = pl_ids_append(out, c.pool.v + c.slot[j].ids, c.slot[j].n_ids);
            continue;
        }
        size_t first = out->n;
        if ((st = bpe_word(v, &w, p, wlen, out))) break;
        size_t k = out->n - first;
        if (c.pool.n + k >= UINT32_MAX) continue;
        c.slot[j] = (cache_slot){h, (uint32_t)off, (uint32_t)wlen, (uint32_t)c.pool.n, (uint32_t)k};
        c.count++;
        if (k) st = pl_ids_append(&c.pool, out->v + first, k);
    }
done:
    if (norm != src) free(norm);
    free(cps);
    free(offs);
    free(fl);
    pl_lens_free(&words);
    pl_lens_free(&tmp);
    free(w.s);
    free(w.rank);
    free(w.heap);
    free(c.slot);
    free(c.pool.v);
    return st;
}
