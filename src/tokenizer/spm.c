/*
 * spm.c -- SentencePiece-style tokenization (tokenizer.ggml.model =
 * "llama"), as llama.cpp does it: spaces become U+2581, the text starts as
 * one symbol per UTF-8 character, and the adjacent pair whose concatenation
 * is the vocabulary token with the highest score (leftmost on ties) is
 * merged until no pair forms a token.  Symbols that are not tokens fall back
 * to byte tokens <0xNN>.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "tokenizer/unicode.h"
#include "tokenizer/vocab_impl.h"

typedef struct sym {
    int prev, next;
    size_t off, n;   /* bytes of the escaped text */
    int32_t token;   /* the token this symbol is, -1 if unknown yet */
} sym;

typedef struct bigram {
    float score;
    int left, right;
    size_t size;
    int32_t token;
} bigram;

typedef struct heap {
    bigram *b;
    size_t n, cap;
} heap;

/* Pops the highest score first, the leftmost on equal scores. */
static bool before(const bigram *x, const bigram *y) {
    return x->score > y->score || (x->score == y->score && x->left < y->left);
}

static pocketllm_status heap_push(heap *h, bigram e) {
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 64;
        bigram *b = realloc(h->b, cap * sizeof *b);
        if (!b) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory while tokenizing");
        h->b = b;
        h->cap = cap;
    }
    size_t i = h->n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!before(&e, &h->b[p])) break;
        h->b[i] = h->b[p];
        i = p;
    }
    h->b[i] = e;
    return POCKETLLM_OK;
}

static bigram heap_pop(heap *h) {
    bigram top = h->b[0], last = h->b[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && before(&h->b[c + 1], &h->b[c])) c++;
        if (!before(&h->b[c], &last)) break;
        h->b[i] = h->b[c];
        i = c;
    }
    if (h->n) h->b[i] = last;
    return top;
}

typedef struct spm {
    const pl_vocab *v;
    const char *text;
    sym *s;
    heap q;
} spm;

static pocketllm_status try_pair(spm *t, int left, int right) {
    if (left < 0 || right < 0) return POCKETLLM_OK;
    size_t size = t->s[left].n + t->s[right].n;
    int32_t id = pl_vocab_find(t->v, t->text + t->s[left].off, size);
    if (id < 0) return POCKETLLM_OK;
    return heap_push(&t->q, (bigram){t->v->tokens[id].score, left, right, size, id});
}

pocketllm_status pl_spm_tokenize(const pl_vocab *v, const char *text, size_t len, bool prefix_space, pl_ids *out) {
    /* escape: ' ' -> U+2581 (3 bytes) */
    size_t spaces = prefix_space;
    for (size_t i = 0; i < len; i++) spaces += text[i] == ' ';
    if (len > (SIZE_MAX - 3) / 3) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "text too long");
    size_t n = len + 2 * spaces + (prefix_space ? 1 : 0);
    if (n >= INT_MAX) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "text too long");
    char *buf = malloc(n ? n : 1);
    sym *s = malloc((n ? n : 1) * sizeof *s);
    pocketllm_status st = POCKETLLM_OK;
    if (!buf || !s) {
        st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory while tokenizing");
        goto done;
    }
    size_t k = 0;
    if (prefix_space) memcpy(buf + k, "\xe2\x96\x81", 3), k += 3;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == ' ') memcpy(buf + k, "\xe2\x96\x81", 3), k += 3;
        else buf[k++] = text[i];
    }

    int ns = 0;
    for (size_t off = 0; off < n;) {
        size_t cl = pl_utf8_lead_len((uint8_t)buf[off]);
        if (cl > n - off) cl = n - off;
        s[ns] = (sym){ns - 1, off + cl == n ? -1 : ns + 1, off, cl, -1};
        off += cl;
        ns++;
    }

    spm t = {v, buf, s, {0}};
    for (int i = 1; i < ns && !st; i++) st = try_pair(&t, i - 1, i);
    while (!st && t.q.n) {
        bigram b = heap_pop(&t.q);
        sym *l = &s[b.left], *r = &s[b.right];
        if (l->n == 0 || r->n == 0 || l->n + r->n != b.size) continue; /* outdated */
        l->n += r->n;
        l->token = b.token;
        r->n = 0;
        l->next = r->next;
        if (r->next >= 0) s[r->next].prev = b.left;
        if ((st = try_pair(&t, l->prev, b.left))) break;
        st = try_pair(&t, b.left, l->next);
    }
    for (int i = 0; ns > 0 && i != -1 && !st; i = s[i].next) {
        int32_t id = s[i].token >= 0 ? s[i].token : pl_vocab_find(v, buf + s[i].off, s[i].n);
        if (id >= 0) {
            st = pl_ids_push(out, id);
            continue;
        }
        for (size_t j = 0; j < s[i].n && !st; j++) {
            uint8_t byte = (uint8_t)buf[s[i].off + j];
            if (v->spm_byte_token[byte] < 0)
                st = pl_fail(POCKETLLM_ERR_UNSUPPORTED, "the vocabulary has no token for byte 0x%02X", byte);
            else st = pl_ids_push(out, v->spm_byte_token[byte]);
        }
    }
    free(t.q.b);
done:
    free(buf);
    free(s);
    return st;
}
