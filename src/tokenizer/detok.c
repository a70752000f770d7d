/*
 * detok.c -- ids back to text, as llama.cpp renders them: each token's
 * piece (computed once at load), the SentencePiece leading space dropped,
 * and for vocabularies that ask for it (clean_spaces) llama.cpp's three
 * clean-up passes over the result.  The passes are written as small state
 * machines fed one byte at a time, so the same code serves one-shot
 * detokenization and the streaming decoder, which also holds back the
 * start of a UTF-8 character until its last byte has arrived.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "tokenizer/unicode.h"
#include "tokenizer/vocab_impl.h"

/* ---- pieces ---------------------------------------------------------------- */

typedef struct buf {
    char *p;
    size_t n, cap;
    bool oom;
} buf;

static void buf_put(buf *b, const void *src, size_t n) {
    if (b->oom || n == 0) return;
    if (n > b->cap - b->n) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap - b->n < n) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
}

static void buf_putc(buf *b, char c) { buf_put(b, &c, 1); }

/* A normal BPE token's bytes: each character of its text maps back to one
 * byte; a character outside the mapping is written as llama.cpp writes it. */
static void bpe_decode_text(const pl_token *t, buf *out) {
    size_t used;
    for (size_t i = 0; i < t->len; i += used) {
        uint32_t cp = pl_utf8_decode((const uint8_t *)t->text + i, t->len - i, &used);
        int b = pl_bpe_cp_to_byte(cp);
        if (b >= 0) {
            buf_putc(out, (char)b);
            continue;
        }
        uint8_t enc[4];
        size_t k = pl_utf8_encode(cp, enc);
        char hex[3];
        buf_put(out, "[UNK_BYTE_0x", 12);
        for (size_t j = 0; j < k; j++) {
            snprintf(hex, sizeof hex, "%02x", enc[j]);
            buf_put(out, hex, 2);
        }
        buf_put(out, t->text, t->len);
        buf_putc(out, ']');
    }
}

static int hexval(char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; }

pocketllm_status pl_pieces_build(pl_vocab *v) {
    buf b = {0};
    for (int32_t id = 0; id < v->n_tokens; id++) {
        pl_token *t = &v->tokens[id];
        if (t->attr & (PL_ATTR_UNKNOWN | PL_ATTR_CONTROL | PL_ATTR_USER_DEFINED)) {
            t->piece = t->text;
            t->piece_len = t->len;
            continue;
        }
        b.n = 0;
        if (t->attr & PL_ATTR_NORMAL) {
            if (v->type == PL_VOCAB_SPM) { /* U+2581 -> space */
                for (uint32_t i = 0; i < t->len; i++) {
                    if (i + 2 < t->len && memcmp(t->text + i, "\xe2\x96\x81", 3) == 0) buf_putc(&b, ' '), i += 2;
                    else buf_putc(&b, t->text[i]);
                }
            } else {
                bpe_decode_text(t, &b);
            }
        } else if (t->attr & PL_ATTR_BYTE) {
            buf_putc(&b, (char)(hexval(t->text[3]) * 16 + hexval(t->text[4])));
        }
        if (b.oom || b.n >= UINT32_MAX) {
            free(b.p);
            return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory building token pieces");
        }
        if (b.n == t->len && memcmp(b.p, t->text, b.n) == 0) {
            t->piece = t->text;
        } else {
            char *p = pl_arena_strndup(&v->arena, b.n ? b.p : "", b.n);
            if (!p) {
                free(b.p);
                return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory building token pieces");
            }
            t->piece = p;
        }
        t->piece_len = (uint32_t)b.n;
    }
    free(b.p);
    return POCKETLLM_OK;
}

static pocketllm_status check_id(const pl_vocab *v, int32_t id) {
    if (!v) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "the model has no tokenizer");
    if (id < 0 || id >= v->n_tokens)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "token id %d is outside the vocabulary (%d tokens)", id,
                       v->n_tokens);
    return POCKETLLM_OK;
}

pocketllm_status pl_token_piece(const pl_vocab *v, int32_t id, bool special, const char **piece, size_t *len) {
    pocketllm_status st = check_id(v, id);
    if (st) return st;
    const pl_token *t = &v->tokens[id];
    if (!special && (t->attr & (PL_ATTR_UNKNOWN | PL_ATTR_CONTROL))) {
        *piece = "";
        *len = 0;
    } else {
        *piece = t->piece;
        *len = t->piece_len;
    }
    return POCKETLLM_OK;
}

/* ---- llama.cpp's clean-up passes, one byte at a time ------------------------
 * 1: drop a space before ? ! . ,
 * 2: " ' " becomes "'" (and the byte after the match cannot start a match)
 * 3: drop a space before 's 'm 're 've
 * Each holds back only what a later byte may still change. */

typedef struct clean {
    uint8_t p1;  /* 1: a space is held */
    uint8_t p2;  /* 0, 1: " " held, 2: " '" held */
    uint8_t p3;  /* 0, 1: " ", 2: " '", 3: " 'r" or " 'v" held */
    char p3x;    /* the r or v of state 3 */
} clean;

static void p3_in(clean *c, buf *out, char x) {
    switch (c->p3) {
    case 0:
        if (x == ' ') c->p3 = 1;
        else buf_putc(out, x);
        return;
    case 1:
        if (x == '\'') c->p3 = 2;
        else if (x == ' ') buf_putc(out, ' ');
        else buf_putc(out, ' '), buf_putc(out, x), c->p3 = 0;
        return;
    case 2:
        c->p3 = 0;
        if (x == 's' || x == 'm') {
            buf_putc(out, '\''), buf_putc(out, x);
        } else if (x == 't' || x == 'd') {
            buf_put(out, " '", 2), buf_putc(out, x);
        } else if (x == 'r' || x == 'v') {
            c->p3 = 3;
            c->p3x = x;
        } else {
            buf_put(out, " '", 2);
            p3_in(c, out, x);
        }
        return;
    default:
        c->p3 = 0;
        if (x == 'e') {
            buf_putc(out, '\''), buf_putc(out, c->p3x), buf_putc(out, 'e');
        } else {
            buf_put(out, " '", 2), buf_putc(out, c->p3x);
            p3_in(c, out, x);
        }
        return;
    }
}

static void p2_in(clean *c, buf *out, char x) {
    switch (c->p2) {
    case 0:
        if (x == ' ') c->p2 = 1;
        else p3_in(c, out, x);
        return;
    case 1:
        if (x == '\'') {
            c->p2 = 2;
        } else if (x == ' ') {
            p3_in(c, out, ' ');
        } else {
            p3_in(c, out, ' ');
            p3_in(c, out, x);
            c->p2 = 0;
        }
        return;
    default:
        c->p2 = 0;
        if (x == ' ') { /* " ' " -> "'" */
            p3_in(c, out, '\'');
        } else {
            p3_in(c, out, ' ');
            p3_in(c, out, '\'');
            p3_in(c, out, x);
        }
        return;
    }
}

static void p1_in(clean *c, buf *out, char x) {
    if (c->p1) {
        c->p1 = 0;
        if (!(x == '?' || x == '!' || x == '.' || x == ',')) p2_in(c, out, ' ');
    }
    if (x == ' ') c->p1 = 1;
    else p2_in(c, out, x);
}

static void clean_flush(clean *c, buf *out) {
    if (c->p1) c->p1 = 0, p2_in(c, out, ' ');
    if (c->p2 == 1) p3_in(c, out, ' ');
    else if (c->p2 == 2) p3_in(c, out, ' '), p3_in(c, out, '\'');
    c->p2 = 0;
    if (c->p3 == 1) buf_putc(out, ' ');
    else if (c->p3 == 2) buf_put(out, " '", 2);
    else if (c->p3 == 3) buf_put(out, " '", 2), buf_putc(out, c->p3x);
    c->p3 = 0;
}

/* ---- detokenization ---------------------------------------------------------- */

typedef struct state {
    bool first;     /* no token pushed yet: the leading space may go */
    clean c;
    uint8_t hold[4]; /* the start of a UTF-8 character still incomplete */
    uint8_t n_hold;
} state;

/* One piece through the lstrip rule and the clean-up passes into out. */
static void feed(const pl_vocab *v, state *s, int32_t id, bool special, buf *out) {
    const char *p = "";
    size_t n = 0;
    pl_token_piece(v, id, special, &p, &n); /* id checked by the caller */
    if (s->first && v->add_space_prefix && n > 0 && p[0] == ' ') p++, n--;
    s->first = false;
    if (!v->clean_spaces) {
        buf_put(out, p, n);
        return;
    }
    for (size_t i = 0; i < n; i++) p1_in(&s->c, out, p[i]);
}

pocketllm_status pl_detokenize(const pl_vocab *v, const int32_t *ids, size_t n, bool remove_special,
                               bool unparse_special, char **text, size_t *len) {
    *text = NULL;
    *len = 0;
    if (!v) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "detokenize: the model has no tokenizer");
    if (n && !ids) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "detokenize: no ids");
    for (size_t i = 0; i < n; i++) {
        pocketllm_status st = check_id(v, ids[i]);
        if (st) return st;
    }
    state s = {.first = true};
    if (remove_special && v->add_bos && n > 0 && ids[0] == v->bos) {
        s.first = false; /* llama.cpp keeps the space after a removed BOS */
        ids++, n--;
    }
    if (remove_special && v->add_eos && n > 0 && ids[n - 1] == v->eos) n--;
    buf out = {0};
    for (size_t i = 0; i < n; i++) feed(v, &s, ids[i], unparse_special, &out);
    clean_flush(&s.c, &out);
    buf_putc(&out, '\0');
    if (out.oom) {
        free(out.p);
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory while detokenizing");
    }
    *text = out.p;
    *len = out.n - 1;
    return POCKETLLM_OK;
}

/* ---- streaming ---------------------------------------------------------------- */

struct pl_detok_stream {
    const pl_vocab *v;
    bool special;
    state s, saved;
    buf out;
};

pocketllm_status pl_detok_stream_new(const pl_vocab *v, bool unparse_special, pl_detok_stream **out) {
    *out = NULL;
    if (!v) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "detokenizer: the model has no tokenizer");
    pl_detok_stream *d = calloc(1, sizeof *d);
    if (!d) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    d->v = v;
    d->special = unparse_special;
    d->s.first = true;
    *out = d;
    return POCKETLLM_OK;
}

void pl_detok_stream_free(pl_detok_stream *d) {
    if (!d) return;
    free(d->out.p);
    free(d);
}

/* Bytes at the end of p[0..n) that begin a UTF-8 character still missing
 * bytes (0 when the text ends on a character boundary). */
static size_t incomplete_tail(const uint8_t *p, size_t n) {
    for (size_t k = 1; k <= 3 && k <= n; k++) {
        uint8_t b = p[n - k];
        if ((b & 0xc0) == 0x80) continue;          /* a continuation byte: look further back */
        size_t need = b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 1;
        return need > k ? k : 0;
    }
    return 0;
}

/* Move held bytes and new output together, hold back an incomplete end. */
static pocketllm_status settle(pl_detok_stream *d, buf *fresh, bool final, const char **text, size_t *len) {
    d->out.n = 0;
    buf_put(&d->out, d->s.hold, d->s.n_hold);
    buf_put(&d->out, fresh->p, fresh->n);
    free(fresh->p);
    if (d->out.oom || fresh->oom) {
        d->out.oom = false;
        d->s = d->saved;
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory while detokenizing");
    }
    size_t keep = final ? 0 : incomplete_tail((const uint8_t *)d->out.p, d->out.n);
    d->out.n -= keep;
    if (keep) memcpy(d->s.hold, d->out.p + d->out.n, keep);
    d->s.n_hold = (uint8_t)keep;
    *text = d->out.n ? d->out.p : "";
    *len = d->out.n;
    return POCKETLLM_OK;
}

pocketllm_status pl_detok_stream_push(pl_detok_stream *d, int32_t id, const char **text, size_t *len) {
    *text = "";
    *len = 0;
    pocketllm_status st = check_id(d ? d->v : NULL, id);
    if (st) return st;
    d->saved = d->s;
    buf fresh = {0};
    feed(d->v, &d->s, id, d->special, &fresh);
    return settle(d, &fresh, false, text, len);
}

pocketllm_status pl_detok_stream_flush(pl_detok_stream *d, const char **text, size_t *len) {
    *text = "";
    *len = 0;
    if (!d) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "detokenizer: none");
    d->saved = d->s;
    buf fresh = {0};
    clean_flush(&d->s.c, &fresh);
    return settle(d, &fresh, true, text, len);
}

void pl_detok_stream_undo(pl_detok_stream *d) {
    if (d) d->s = d->saved;
}

/* ---- small accessors ------------------------------------------------------------ */

const char *pl_vocab_model(const pl_vocab *v) { return v ? v->model_name : ""; }
const char *pl_vocab_pre(const pl_vocab *v) { return v ? v->pre_name : ""; }

const char *pl_vocab_text(const pl_vocab *v, int32_t id, size_t *len) {
    if (!v || id < 0 || id >= v->n_tokens) {
        if (len) *len = 0;
        return NULL;
    }
    if (len) *len = v->tokens[id].len;
    return v->tokens[id].text;
}

uint32_t pl_vocab_attr(const pl_vocab *v, int32_t id) {
    return v && id >= 0 && id < v->n_tokens ? v->tokens[id].attr : 0;
}

bool pl_vocab_add_bos(const pl_vocab *v) { return v && v->add_bos; }
bool pl_vocab_add_eos(const pl_vocab *v) { return v && v->add_eos; }
