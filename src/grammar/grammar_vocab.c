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

void pl_gvocab_free(pl_gvocab *v) {
    if (!v) return;
    free(v->piece_off), free(v->bytes), free(v->eog);
    free(v->byte), free(v->depth), free(v->skip), free(v->tok_first), free(v->tok);
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
    size_t k = 0;
    for (int32_t t = 0; t < n; t++)
        if (v->piece_off[t + 1] > v->piece_off[t]) order[k++] = t;
    sort_ctx = v;
    qsort(order, k, sizeof *order, by_text);
    /* nodes: at most one per byte of text */
    v->byte = malloc(total ? total : 1);
    v->depth = malloc((total ? total : 1) * sizeof *v->depth);
    v->skip = malloc((total ? total : 1) * sizeof *v->skip);
    v->tok_first = malloc((total + 1) * sizeof *v->tok_first);
    v->tok = order;
    uint32_t *path = malloc(65536 * sizeof *path); /* the open node at each depth */
    uint32_t *cnt = calloc(total + 1, sizeof *cnt);  /* tokens ending at each node */
    if (!v->byte || !v->depth || !v->skip || !v->tok_first || !path || !cnt) {
        free(path), free(cnt);
        goto oom;
    }
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
            path[open++] = (uint32_t)nn++;
        }
        /* sorted order is pre-order, so tokens come in node order and a
         * node's tokens are consecutive in `order` */
        cnt[path[len - 1]]++;
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
    free(path);
    free(cnt);
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
