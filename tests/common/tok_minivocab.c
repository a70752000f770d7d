/*
 * tok_minivocab.c -- small SentencePiece and byte-level BPE vocabularies
 * written with the public GGUF writer (see tok_minivocab.h).  The BPE
 * merges grow each listed word one byte at a time, so every merge makes a
 * token; the SentencePiece pieces get scores favouring longer pieces.
 */
#include "tok_minivocab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const tok_minivocab_kinds[] = {"spm",    "qwen2",     "llama-bpe", "gpt-2",   "deepseek-llm",
                                           "deepseek-coder", "falcon", "starcoder", "qwen35", "default", NULL};

/* raw words whose every prefix becomes a token */
static const char *const WORDS[] = {" the", "the", " a", "ing", " and", "er", "123", "    ", "\n\n", "'s", "\xc3\xa9t\xc3\xa9",
                                    "ll", "\xe4\xb8\x80\xe4\xba\x8c", "\xf0\x9f\x98\x80", "hello", " world", " ' ", "<|"};
static const char *const SPECIALS[] = {"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "<s>", "</s>"};
static const int SPECIAL_TYPES[] = {3, 3, 3, 4, 3, 3};

static int is_self(unsigned b) { return (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || b >= 0xae; }

/* GPT-2's character for a byte, as UTF-8, appended to out */
static size_t map_byte(unsigned b, char *out) {
    unsigned cp = b;
    if (!is_self(b)) {
        cp = 256;
        for (unsigned c = 0; c < b; c++) cp += !is_self(c);
    }
    if (cp < 0x80) return out[0] = (char)cp, 1;
    out[0] = (char)(0xc0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3f));
    return 2;
}

static char *map_bytes(const char *raw, size_t n) {
    char *s = malloc(2 * n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) k += map_byte((uint8_t)raw[i], s + k);
    s[k] = '\0';
    return s;
}

typedef struct list {
    char **v;
    size_t n;
} list;

static int has(const list *l, const char *s) {
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i], s) == 0) return 1;
    return 0;
}

static void add(list *l, char *s) {
    if (has(l, s)) {
        free(s);
        return;
    }
    l->v = realloc(l->v, (l->n + 1) * sizeof *l->v);
    l->v[l->n++] = s;
}

static void list_free(list *l) {
    for (size_t i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
}

static pocketllm_status write_bpe(const char *pre, const char *path) {
    list tok = {0}, merges = {0};
    for (unsigned b = 0; b < 256; b++) {
        char c = (char)b;
        add(&tok, map_bytes(&c, 1));
    }
    for (size_t w = 0; w < sizeof WORDS / sizeof WORDS[0]; w++) {
        size_t n = strlen(WORDS[w]);
        for (size_t k = 2; k <= n; k++) {
            char *left = map_bytes(WORDS[w], k - 1), *right = map_bytes(WORDS[w] + k - 1, 1);
            char *m = malloc(strlen(left) + strlen(right) + 2);
            sprintf(m, "%s %s", left, right);
            if (!has(&merges, m)) add(&merges, m);
            else free(m);
            free(left);
            free(right);
            add(&tok, map_bytes(WORDS[w], k));
        }
    }
    size_t n_normal = tok.n;
    for (size_t i = 0; i < sizeof SPECIALS / sizeof SPECIALS[0]; i++) add(&tok, strdup(SPECIALS[i]));
    int32_t *types = malloc(tok.n * sizeof *types);
    for (size_t i = 0; i < tok.n; i++) types[i] = i < n_normal ? 1 : SPECIAL_TYPES[i - n_normal];
    pocketllm_gguf_writer *w;
    pocketllm_status st = pocketllm_gguf_writer_new(&w);
    if (!st) {
        pocketllm_gguf_writer_set_str(w, "tokenizer.ggml.model", "gpt2");
        pocketllm_gguf_writer_set_str(w, "tokenizer.ggml.pre", pre);
        pocketllm_gguf_writer_set_str_array(w, "tokenizer.ggml.tokens", (const char *const *)tok.v, tok.n);
        pocketllm_gguf_writer_set_array(w, "tokenizer.ggml.token_type", POCKETLLM_GGUF_INT32, types, tok.n);
        pocketllm_gguf_writer_set_str_array(w, "tokenizer.ggml.merges", (const char *const *)merges.v, merges.n);
        pocketllm_gguf_writer_set_u32(w, "tokenizer.ggml.bos_token_id", (uint32_t)n_normal);
        pocketllm_gguf_writer_set_u32(w, "tokenizer.ggml.eos_token_id", (uint32_t)n_normal + 2);
        st = pocketllm_gguf_writer_write(w, path);
        pocketllm_gguf_writer_free(w);
    }
    free(types);
    list_free(&tok);
    list_free(&merges);
    return st;
}

static pocketllm_status write_spm(const char *path) {
    list tok = {0};
    add(&tok, strdup("<unk>"));
    add(&tok, strdup("<s>"));
    add(&tok, strdup("</s>"));
    for (unsigned b = 0; b < 256; b++) {
        char *s = malloc(8);
        snprintf(s, 8, "<0x%02X>", b);
        add(&tok, s);
    }
    size_t n_bytes_end = tok.n;
    for (size_t w = 0; w < sizeof WORDS / sizeof WORDS[0]; w++) {
        /* every substring of the word, spaces as U+2581 */
        size_t n = strlen(WORDS[w]);
        for (size_t a = 0; a < n; a++)
            for (size_t b = a + 1; b <= n; b++) {
                char *s = malloc(3 * (b - a) + 1);
                size_t k = 0;
                for (size_t i = a; i < b; i++) {
                    if (WORDS[w][i] == ' ') memcpy(s + k, "\xe2\x96\x81", 3), k += 3;
                    else s[k++] = WORDS[w][i];
                }
                s[k] = '\0';
                add(&tok, s);
            }
    }
    add(&tok, strdup("<tool_call>"));
    float *scores = calloc(tok.n, sizeof *scores);
    int32_t *types = malloc(tok.n * sizeof *types);
    for (size_t i = 0; i < tok.n; i++) {
        types[i] = i == 0 ? 2 : i < 3 ? 3 : i < n_bytes_end ? 6 : i + 1 == tok.n ? 4 : 1;
        if (types[i] == 1) scores[i] = (float)strlen(tok.v[i]) - (float)(i % 7) * 0.25f;
    }
    pocketllm_gguf_writer *w;
    pocketllm_status st = pocketllm_gguf_writer_new(&w);
    if (!st) {
        pocketllm_gguf_writer_set_str(w, "tokenizer.ggml.model", "llama");
        pocketllm_gguf_writer_set_str_array(w, "tokenizer.ggml.tokens", (const char *const *)tok.v, tok.n);
        pocketllm_gguf_writer_set_array(w, "tokenizer.ggml.scores", POCKETLLM_GGUF_FLOAT32, scores, tok.n);
        pocketllm_gguf_writer_set_array(w, "tokenizer.ggml.token_type", POCKETLLM_GGUF_INT32, types, tok.n);
        st = pocketllm_gguf_writer_write(w, path);
        pocketllm_gguf_writer_free(w);
    }
    free(scores);
    free(types);
    list_free(&tok);
    return st;
}

pocketllm_status tok_minivocab_write(const char *kind, const char *path) {
    return strcmp(kind, "spm") == 0 ? write_spm(path) : write_bpe(kind, path);
}
