/*
 * grammar_vocab.c -- builds the vocabulary trie of grammar_vocab.h: the
 * token texts sorted bytewise, then one pass that opens a node for every
 * byte past the common prefix with the previous text.  Sorted order makes
 * the node order pre-order and puts the tokens that end at a node next to
 * each other.  A model builds it once, under a lock, on first use.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "grammar/grammar_vocab.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

static pthread_mutex_t build_lock = PTHREAD_MUTEX_INITIALIZER;

static const pl_gvocab *sort_ctx; /* qsort has no user pointer; the build holds build_lock */

static int by_text(const void *a, const void *b) {
    const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    const pl_gvocab *v = sort_ctx;
    const size_t lx = v->piece_off[x + 1] - v->piece_off[x], ly = v->piece_off[y + 1] - v->piece_off[y];
    const int c = memcmp(v->bytes + v->piece_off[x], v->bytes + v->piece_off[y], lx < ly ? lx : ly);
    if (c) return c;
    if (lx != ly) return lx < ly ? -1 : 1;
    return (x > y) - (x < y);
}

int pl_gvocab_byte_class(uint8_t b) {
    if (b >= 0x80) return PL_GV_CLS_HIGH;
    if (b < 0x20 || b == 0x7f) return PL_GV_CLS_CTRL;
    if (b >= '0' && b <= '9') return 2;
    if (b >= 'A' && b <= 'F') return 3;
    if (b >= 'G' && b <= 'Z') return 4;
    if (b >= 'a' && b <= 'f') return 5;
    if (b >= 'g' && b <= 'z') return 6;
    /* space and the 32 punctuation marks, one class each (7..39) */
    if (b <= '/') return 7 + (b - ' ');
    if (b <= '@') return 23 + (b - ':');
    if (b <= '`') return 30 + (b - '[');
    return 36 + (b - '{');
}

/* Where a UTF-8 prefix is after one more byte: 0 between characters, 1-3
 * continuation bytes still due (4-7: the second byte of E0, ED, F0, F4,
 * whose range is narrower), -1 when the text is not a UTF-8 prefix. */
int pl_utf8_prefix_next(int u, uint8_t b) {
    switch (u) {
    case 0:
        if (b < 0x80) return 0;
        if (b >= 0xc2 && b <= 0xdf) return 1;
        if (b == 0xe0) return 4;
        if (b == 0xed) return 5;
        if (b >= 0xe1 && b <= 0xef) return 2;
        if (b == 0xf0) return 6;
        if (b >= 0xf1 && b <= 0xf3) return 3;
        if (b == 0xf4) return 7;
        return -1;
    case 1: case 2: case 3: return b >= 0x80 && b <= 0xbf ? u - 1 : -1;
    case 4: return b >= 0xa0 && b <= 0xbf ? 1 : -1;
    case 5: return b >= 0x80 && b <= 0x9f ? 1 : -1;
    case 6: return b >= 0x90 && b <= 0xbf ? 2 : -1;
    case 7: return b >= 0x80 && b <= 0x8f ? 2 : -1;
    default: return -1;
    }
}

void pl_gvocab_free(pl_gvocab *v) {
    if (!v) return;
    free(v->piece_off), free(v->bytes), free(v->eog), free(v->in_trie);
    free(v->byte), free(v->depth), free(v->skip), free(v->tok_first), free(v->tok), free(v->sub_cls), free(v->sub_chars);
    free(v->chars_above), free(v->tok_chars);
    free(v);
}

static pl_gvocab *build(const pl_vocab *voc) {
    pl_gvocab *v = calloc(1, sizeof *v);
    if (!v) return NULL;
    const int32_t n = pl_vocab_n_tokens(voc);
    v->n_vocab = n;
    v->piece_off = malloc(((size_t)n + 1) * sizeof *v->piece_off);
    v->eog = calloc((size_t)n, 1);
    size_t total = 0;
    if (!v->piece_off || !v->eog) goto oom;
    for (int32_t t = 0; t < n; t++) {
        const char *p;
        size_t len;
        if (pl_token_piece(voc, t, false, &p, &len)) len = 0;
        if (len > 65535) len = 0; /* no grammar step is that long: never allowed */
        total += len;
    }
    v->bytes = malloc(total ? total : 1);
    if (!v->bytes) goto oom;
    size_t off = 0;
    for (int32_t t = 0; t < n; t++) {
        const char *p;
        size_t len;
        if (pl_token_piece(voc, t, false, &p, &len) || len > 65535) len = 0;
        v->piece_off[t] = (uint32_t)off;
        memcpy(v->bytes + off, p, len);
        off += len;
        v->eog[t] = pl_vocab_is_eog(voc, t);
    }
    v->piece_off[n] = (uint32_t)off;

    /* the tokens with text, in byte order */
    int32_t *order = malloc(((size_t)n ? (size_t)n : 1) * sizeof *order);
    if (!order) goto oom;
    v->in_trie = calloc(((size_t)n + 31) / 32 + 1, sizeof *v->in_trie);
    if (!v->in_trie) {
        free(order);
        goto oom;
    }
    size_t k = 0;
    for (int32_t t = 0; t < n; t++)
        if (v->piece_off[t + 1] > v->piece_off[t]) {
            order[k++] = t;
            v->in_trie[(uint32_t)t >> 5] |= 1u << (t & 31);
        }
    sort_ctx = v;
    qsort(order, k, sizeof *order, by_text);
    /* nodes: at most one per byte of text */
    v->byte = malloc(total ? total : 1);
    v->depth = malloc((total ? total : 1) * sizeof *v->depth);
    v->skip = malloc((total ? total : 1) * sizeof *v->skip);
    v->tok_first = malloc((total + 1) * sizeof *v->tok_first);
    v->tok = order;
    v->sub_cls = malloc((total ? total : 1) * sizeof *v->sub_cls);
    v->sub_chars = calloc(total ? total : 1, 1);
    v->chars_above = malloc(total ? total : 1);
    v->tok_chars = malloc(k ? k : 1);
    uint32_t *path = malloc(65536 * sizeof *path); /* the open node at each depth */
    uint32_t *cnt = calloc(total + 1, sizeof *cnt);  /* tokens ending at each node */
    uint32_t *parent = malloc((total ? total : 1) * sizeof *parent);
    signed char *u8 = malloc(65537);                 /* the UTF-8 prefix state after each depth */
    unsigned *nch = malloc(65537 * sizeof *nch);     /* characters begun before each depth */
    if (!v->byte || !v->depth || !v->skip || !v->tok_first || !v->sub_cls || !v->sub_chars || !v->chars_above ||
        !v->tok_chars || !path || !cnt || !parent || !u8 || !nch) {
        free(path), free(cnt), free(parent), free(u8), free(nch);
        goto oom;
    }
    u8[0] = 0;
    nch[0] = 0;
    size_t nn = 0, open = 0;
    const uint8_t *prev = NULL;
    size_t prev_len = 0;
    for (size_t i = 0; i < k; i++) {
        const int32_t t = order[i];
        const uint8_t *p = v->bytes + v->piece_off[t];
        const size_t len = v->piece_off[t + 1] - v->piece_off[t];
        size_t lcp = 0;
        while (prev && lcp < len && lcp < prev_len && p[lcp] == prev[lcp]) lcp++;
        while (open > lcp) v->skip[path[--open]] = (uint32_t)nn; /* close the nodes past the common prefix */
        for (size_t d = lcp; d < len; d++) {
            v->byte[nn] = p[d];
            v->depth[nn] = (uint16_t)(d + 1);
            nch[d + 1] = nch[d] + ((p[d] & 0xc0) != 0x80);
            v->chars_above[nn] = (uint8_t)(nch[d] > 255 ? 255 : nch[d]);
            u8[d + 1] = (signed char)(u8[d] < 0 ? -1 : pl_utf8_prefix_next(u8[d], p[d]));
            parent[nn] = d ? path[d - 1] : UINT32_MAX;
            v->sub_cls[nn] = (1ull << pl_gvocab_byte_class(p[d])) | (u8[d + 1] < 0 ? PL_GV_BAD : 0) |
                             (u8[d] != 0 ? PL_GV_MIDCHAR : 0);
            path[open++] = (uint32_t)nn++;
        }
        /* sorted order is pre-order, so tokens come in node order and a
         * node's tokens are consecutive in `order` */
        cnt[path[len - 1]]++;
        v->tok_chars[i] = (uint8_t)(nch[len] > 255 ? 255 : nch[len]);
        if (len > v->max_depth) v->max_depth = (uint32_t)len;
        prev = p;
        prev_len = len;
    }
    while (open) v->skip[path[--open]] = (uint32_t)nn;
    v->n_nodes = nn;
    uint32_t acc = 0;
    for (size_t i = 0; i < nn; i++) {
        v->tok_first[i] = acc;
        acc += cnt[i];
    }
    v->tok_first[nn] = acc;
    /* children come after their parent: fold each subtree's classes up
     * (the mid-character mark is the node's own, not its ancestors') */
    for (size_t i = nn; i-- > 0;) {
        /* sub_chars[i] holds its children's most until it adds its own */
        const unsigned own = (v->byte[i] & 0xc0) != 0x80, c = v->sub_chars[i] + own;
        v->sub_chars[i] = (uint8_t)(c > 255 ? 255 : c);
        if (parent[i] == UINT32_MAX) continue;
        v->sub_cls[parent[i]] |= v->sub_cls[i] & ~PL_GV_MIDCHAR;
        if (v->sub_chars[i] > v->sub_chars[parent[i]]) v->sub_chars[parent[i]] = v->sub_chars[i];
    }
    free(path);
    free(cnt);
    free(parent);
    free(u8);
    free(nch);
    return v;
oom:
    pl_gvocab_free(v);
    return NULL;
}

const pl_gvocab *pl_gvocab_of(pocketllm_model *m) {
    if (!m || !m->vocab) {
        pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "constrained decoding needs the model's tokenizer");
        return NULL;
    }
    pthread_mutex_lock(&build_lock);
    if (!m->gvocab) m->gvocab = build(m->vocab);
    const pl_gvocab *v = m->gvocab;
    pthread_mutex_unlock(&build_lock);
    if (!v) pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for the vocabulary trie");
    return v;
}
