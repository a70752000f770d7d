/*
 * special.c -- find special tokens written in text, the way llama.cpp's
 * tokenizer_st_partition does: special tokens (control, user-defined and
 * unknown; only user-defined ones when parse_special is off) are taken one
 * at a time, longest text first, and each claims its occurrences, left to
 * right, in whatever plain text earlier tokens left; tokens marked
 * lstrip/rstrip also swallow the white space beside them.  The text
 * between claimed tokens is tokenized normally.
 */
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "tokenizer/vocab_impl.h"

typedef struct len_id {
    uint32_t len;
    int32_t id;
} len_id;

static int by_length_desc(const void *a, const void *b) {
    const len_id *x = a, *y = b;
    if (x->len != y->len) return x->len > y->len ? -1 : 1;
    return x->id < y->id ? -1 : 1;
}

/* The trie of all special texts (ranks = positions in the search order). */
static pocketllm_status build_trie(pl_vocab *v) {
    pl_specials *s = &v->specials;
    size_t cap = 64;
    s->trie = malloc(cap * sizeof *s->trie);
    if (!s->trie) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    s->trie[0] = (pl_trie_node){-1, -1, -1, 0};
    s->n_nodes = 1;
    for (size_t r = 0; r < s->n; r++) {
        const pl_token *t = &v->tokens[s->ids[r]];
        int32_t node = 0;
        for (uint32_t i = 0; i < t->len; i++) {
            uint8_t b = (uint8_t)t->text[i];
            int32_t c = s->trie[node].child;
            while (c >= 0 && s->trie[c].byte != b) c = s->trie[c].sibling;
            if (c < 0) {
                if (s->n_nodes == cap) {
                    pl_trie_node *bigger = realloc(s->trie, (cap *= 2) * sizeof *bigger);
                    if (!bigger) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
                    s->trie = bigger;
                }
                c = (int32_t)s->n_nodes++;
                s->trie[c] = (pl_trie_node){-1, s->trie[node].child, -1, b};
                s->trie[node].child = c;
            }
            node = c;
        }
        s->trie[node].rank = (int32_t)r; /* texts are distinct: one rank per node */
    }
    return POCKETLLM_OK;
}

pocketllm_status pl_specials_build(pl_vocab *v) {
    pl_specials *s = &v->specials;
    size_t n = 0;
    for (int32_t id = 0; id < v->n_tokens; id++)
        if (v->tokens[id].attr & (PL_ATTR_CONTROL | PL_ATTR_USER_DEFINED | PL_ATTR_UNKNOWN)) n++;
    s->ids = malloc((n ? n : 1) * sizeof *s->ids);
    len_id *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (!s->ids || !tmp) {
        free(tmp);
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    }
    s->n = 0;
    for (int32_t id = 0; id < v->n_tokens; id++)
        if (v->tokens[id].attr & (PL_ATTR_CONTROL | PL_ATTR_USER_DEFINED | PL_ATTR_UNKNOWN))
            tmp[s->n++] = (len_id){v->tokens[id].len, id};
    /* longest first; llama.cpp leaves the order of equal lengths to
     * std::sort, we take the lower id first */
    qsort(tmp, s->n, sizeof *tmp, by_length_desc);
    for (size_t i = 0; i < s->n; i++) s->ids[i] = tmp[i].id;
    free(tmp);
    memset(s->first_byte, 0, sizeof s->first_byte);
    for (size_t i = 0; i < s->n; i++) s->first_byte[(uint8_t)v->tokens[s->ids[i]].text[0]] = 1;
    return build_trie(v);
}

/* A linked list of fragments over the input, in text order. */
typedef struct frag {
    size_t off, len;
    int32_t token;
    int next;
} frag;

typedef struct frag_list {
    frag *f;
    size_t n, cap;
} frag_list;

static int frag_new(frag_list *l, size_t off, size_t len, int32_t token, int next) {
    if (l->n >= INT_MAX) return -1; /* (more fragments than an int counts: reported as out of memory) */
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        frag *f = realloc(l->f, cap * sizeof *f);
        if (!f) return -1;
        l->f = f;
        l->cap = cap;
    }
    l->f[l->n] = (frag){off, len, token, next};
    return (int)l->n++;
}

static bool is_space(char c) { return isspace((unsigned char)c) != 0; }

/* Mark, in seen[rank], the special texts that occur in text at all: one
 * pass with the first-byte filter and the trie, so that the search in
 * llama.cpp's order below only visits tokens that are there.  Returns how
 * many distinct ones were seen. */
static size_t mark_occurring(const pl_vocab *v, const char *text, size_t len, uint8_t *seen) {
    const pl_specials *s = &v->specials;
    size_t found = 0;
    for (size_t i = 0; i < len; i++) {
        if (!s->first_byte[(uint8_t)text[i]]) continue;
        int32_t node = 0;
        for (size_t j = i; j < len; j++) {
            int32_t c = s->trie[node].child;
            while (c >= 0 && s->trie[c].byte != (uint8_t)text[j]) c = s->trie[c].sibling;
            if (c < 0) break;
            node = c;
            int32_t r = s->trie[node].rank;
            if (r >= 0 && !seen[r]) seen[r] = 1, found++;
        }
    }
    return found;
}

pocketllm_status pl_split_specials(const pl_vocab *v, const char *text, size_t len, bool parse_special,
                                   pl_fragment **frags, size_t *n_frags) {
    *frags = NULL;
    *n_frags = 0;
    if (len == 0) return POCKETLLM_OK;
    frag_list l = {0};
    if (frag_new(&l, 0, len, -1, -1) < 0) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    int head = 0;

    uint8_t *seen = v->specials.n ? calloc(v->specials.n, 1) : NULL;
    if (v->specials.n && !seen) goto oom;
    if (seen && mark_occurring(v, text, len, seen)) {
        for (size_t k = 0; k < v->specials.n; k++) {
            if (!seen[k]) continue;
            int32_t id = v->specials.ids[k];
            const pl_token *t = &v->tokens[id];
            if (!parse_special && (t->attr & (PL_ATTR_CONTROL | PL_ATTR_UNKNOWN))) continue;
            for (int prev = -1, cur = head; cur >= 0; prev = cur, cur = l.f[cur].next) {
                if (l.f[cur].token >= 0 || l.f[cur].len < t->len) continue;
                size_t base = l.f[cur].off, blen = l.f[cur].len;
                const char *hit = memmem(text + base, blen, t->text, t->len);
                if (!hit) continue;
                /* rebuild this fragment as: left text, token, (right text, searched on) */
                int next = l.f[cur].next;
                int first = -1, last = -1;
                while (hit) {
                    size_t m = (size_t)(hit - text);
                    size_t left_len = m - base;
                    if (t->attr & PL_ATTR_LSTRIP)
                        while (left_len > 0 && is_space(text[base + left_len - 1])) left_len--;
                    int a = -1, b;
                    if (left_len > 0 && (a = frag_new(&l, base, left_len, -1, -1)) < 0) goto oom;
                    if ((b = frag_new(&l, 0, 0, id, -1)) < 0) goto oom;
                    if (a >= 0) l.f[a].next = b;
                    if (first < 0) first = a >= 0 ? a : b;
                    if (last >= 0) l.f[last].next = a >= 0 ? a : b;
                    last = b;
                    size_t right = m + t->len, right_len = base + blen - right;
                    if (t->attr & PL_ATTR_RSTRIP)
                        while (right_len > 0 && is_space(text[right])) right++, right_len--;
                    base = right;
                    blen = right_len;
                    hit = blen >= t->len ? memmem(text + base, blen, t->text, t->len) : NULL;
                }
                if (blen > 0) {
                    int c = frag_new(&l, base, blen, -1, -1);
                    if (c < 0) goto oom;
                    l.f[last].next = c;
                    last = c;
                }
                l.f[last].next = next;
                if (prev < 0) head = first;
                else l.f[prev].next = first;
                cur = last;
            }
        }
    }
    free(seen);
    seen = NULL;
    size_t n = 0;
    for (int cur = head; cur >= 0; cur = l.f[cur].next) n++;
    pl_fragment *out = malloc((n ? n : 1) * sizeof *out);
    if (!out) goto oom;
    n = 0;
    for (int cur = head; cur >= 0; cur = l.f[cur].next)
        out[n++] = (pl_fragment){l.f[cur].off, l.f[cur].len, l.f[cur].token};
    free(l.f);
    *frags = out;
    *n_frags = n;
    return POCKETLLM_OK;
oom:
    free(seen);
    free(l.f);
    return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory while splitting special tokens");
}
