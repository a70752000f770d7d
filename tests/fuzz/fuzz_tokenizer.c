/*
 * fuzz_tokenizer.c -- libFuzzer target for the tokenizer.
 *
 * First byte < 0xf0: text mode.  The byte picks one of the small
 * vocabularies of tests/common/tok_minivocab.c (SentencePiece, and BPE
 * under each implemented pre-tokenizer) and the rest is text, tokenized in
 * all four add_special/parse_special modes; the ids are detokenized in all
 * four remove/unparse modes and streamed, and the stream must equal the
 * one-shot text.  For the Qwen2 vocabulary (no clean-up, every byte a
 * token) detokenizing must also give back the text itself, with malformed
 * UTF-8 replaced as llama.cpp replaces it.
 * First byte >= 0xf0: loader mode.  The rest is a GGUF image whose
 * tokenizer metadata is loaded; a vocabulary that loads is then used on a
 * fixed text.  Seeds: tests/fuzz/seeds/fuzz_tokenizer.sh.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gguf/gguf.h"
#include "model/model.h"
#include "../common/tok_minivocab.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

#define MAX_VOCABS 16
static pocketllm_model *g_models[MAX_VOCABS];
static const char *g_kinds[MAX_VOCABS];
static int g_n;

static void init(void) {
    if (g_n) return;
    char dir[] = "/tmp/pl_fuzz_tok.XXXXXX";
    if (!mkdtemp(dir)) abort();
    for (int i = 0; tok_minivocab_kinds[i] && g_n < MAX_VOCABS; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s/%d.gguf", dir, i);
        pocketllm_model_params p = pocketllm_model_default_params();
        p.vocab_only = 1;
        if (tok_minivocab_write(tok_minivocab_kinds[i], path) ||
            pocketllm_model_open(path, &p, &g_models[g_n])) {
            fprintf(stderr, "fuzz_tokenizer: vocabulary %s: %s\n", tok_minivocab_kinds[i], pocketllm_last_error());
            abort();
        }
        g_kinds[g_n++] = tok_minivocab_kinds[i];
        unlink(path);
    }
    rmdir(dir);
}

/* Detokenize in four modes and stream; the stream must equal one-shot. */
static void exercise_ids(const pl_vocab *v, const int32_t *ids, size_t n) {
    char *one = NULL;
    size_t one_len = 0;
    for (int mode = 0; mode < 4; mode++) {
        char *t;
        size_t tl;
        if (pl_detokenize(v, ids, n, mode >= 2, mode % 2 == 0, &t, &tl)) abort(); /* ids came from tokenize */
        if (mode == 1) one = t, one_len = tl;
        else free(t);
    }
    pl_detok_stream *d;
    if (pl_detok_stream_new(v, false, &d)) abort();
    char *all = malloc(one_len + 1);
    size_t got = 0;
    for (size_t i = 0; i <= n; i++) {
        const char *p;
        size_t k;
        if ((i < n ? pl_detok_stream_push(d, ids[i], &p, &k) : pl_detok_stream_flush(d, &p, &k)) != POCKETLLM_OK) abort();
        if (got + k > one_len) abort(); /* more bytes than the one-shot text */
        memcpy(all + got, p, k);
        got += k;
    }
    if (got != one_len || memcmp(all, one, got) != 0) abort();
    pl_detok_stream_free(d);
    free(all);
    free(one);
}

/* The text as llama.cpp's BPE sees it: malformed UTF-8 -> U+FFFD. */
static char *normalized(const uint8_t *s, size_t n, size_t *out_n) {
    char *o = malloc(3 * n + 1);
    size_t k = 0, used;
    for (size_t i = 0; i < n; i += used) k += pl_utf8_encode(pl_utf8_decode(s + i, n - i, &used), (uint8_t *)o + k);
    *out_n = k;
    return o;
}

static void text_mode(int which, const uint8_t *data, size_t size) {
    const pocketllm_model *m = g_models[which % g_n];
    const pl_vocab *v = m->vocab;
    for (int mode = 0; mode < 4; mode++) {
        int32_t *ids;
        size_t n;
        if (pl_tokenize(v, (const char *)data, size, mode < 2, mode % 2 == 0, &ids, &n)) abort();
        for (size_t i = 0; i < n; i++)
            if (ids[i] < 0 || ids[i] >= pl_vocab_n_tokens(v)) abort();
        exercise_ids(v, ids, n);
        if (mode == 3 && strcmp(g_kinds[which % g_n], "qwen2") == 0) {
            char *t;
            size_t tl, nl;
            char *want = normalized(data, size, &nl);
            if (pl_detokenize(v, ids, n, false, true, &t, &tl) || tl != nl || memcmp(t, want, nl) != 0) abort();
            free(t);
            free(want);
        }
        free(ids);
    }
}

static void loader_mode(const uint8_t *data, size_t size) {
    uint8_t *copy = malloc(size ? size : 1); /* exact size: an over-read is caught */
    if (size) memcpy(copy, data, size);
    pl_gguf *g = NULL;
    if (pl_gguf_open_memory(size ? copy : NULL, size, "fuzz", &g) == POCKETLLM_OK) {
        pl_vocab *v = NULL;
        if (pl_vocab_load(g, &v) == POCKETLLM_OK && v) {
            static const char text[] = "Hello <s> w\xc3\xb6rld 123 <|im_end|>\n\n  'll \xff\x80 \xe4\xb8\x80";
            for (int mode = 0; mode < 4; mode++) {
                int32_t *ids;
                size_t n;
                if (pl_tokenize(v, text, sizeof text - 1, mode < 2, mode % 2 == 0, &ids, &n) == POCKETLLM_OK) {
                    for (size_t i = 0; i < n; i++)
                        if (ids[i] < 0 || ids[i] >= pl_vocab_n_tokens(v)) abort();
                    exercise_ids(v, ids, n);
                    free(ids);
                }
            }
            for (int32_t id = 0; id < pl_vocab_n_tokens(v) && id < 4096; id++) {
                const char *p;
                size_t k;
                if (pl_token_piece(v, id, true, &p, &k)) abort();
                (void)pl_vocab_is_eog(v, id);
            }
            pl_vocab_free(v);
        }
        pocketllm_gguf_close(g);
    }
    free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    init();
    if (size == 0) return 0;
    if (data[0] >= 0xf0) loader_mode(data + 1, size - 1);
    else text_mode(data[0], data + 1, size - 1);
    return 0;
}
