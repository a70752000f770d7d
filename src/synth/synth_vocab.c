/*
 * synth_vocab.c -- the tokenizer of a synthetic checkpoint: either the
 * tokenizer.* metadata copied from another GGUF (for example the qwen2
 * vocabulary file of the llama.cpp bundle), or a built-in byte-level BPE
 * vocabulary that both llama.cpp and PocketLLM can load: the 256 byte
 * tokens under GPT-2's byte-to-character mapping, no merges, and the three
 * Qwen control tokens.  Either is padded with unused "[PAD<i>]" tokens up to
 * the shape's vocabulary size, as Hugging Face conversions pad Qwen.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/file.h"
#include "synth/synth.h"

enum { TOKEN_NORMAL = 1, TOKEN_CONTROL = 3, TOKEN_UNUSED = 5 };

/* GPT-2's printable stand-in for byte b, as UTF-8 (at most 2 bytes). */
static void byte_char(unsigned b, char out[3]) {
    unsigned cp;
    if ((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255)) {
        cp = b;
    } else {
        /* the other bytes take code points 256.. in byte order */
        unsigned k = 0;
        for (unsigned x = 0; x < b; x++)
            if (!((x >= 33 && x <= 126) || (x >= 161 && x <= 172) || (x >= 174 && x <= 255))) k++;
        cp = 256 + k;
    }
    if (cp < 0x80) {
        out[0] = (char)cp;
        out[1] = '\0';
    } else {
        out[0] = (char)(0xc0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3f));
        out[2] = '\0';
    }
}

static const char *const builtin_specials[] = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};
#define N_BUILTIN (256 + 3)

/* Token count of the tokenizer that will be written (before padding). */
pocketllm_status pl_synth_vocab_count(const char *vocab_path, uint32_t *n) {
    if (!vocab_path) {
        *n = N_BUILTIN;
        return POCKETLLM_OK;
    }
    pl_gguf *g;
    pocketllm_status st = pocketllm_gguf_open(vocab_path, &g);
    if (st) return st;
    const pocketllm_gguf_value *t = pl_gguf_get(g, "tokenizer.ggml.tokens");
    if (!t || t->type != POCKETLLM_GGUF_ARRAY || t->elem_type != POCKETLLM_GGUF_STRING || t->n == 0 ||
        t->n > (1u << 24)) {
        pocketllm_gguf_close(g);
        return pl_fail(POCKETLLM_ERR_FORMAT, "%s: no usable tokenizer.ggml.tokens array", vocab_path);
    }
    *n = (uint32_t)t->n;
    pocketllm_gguf_close(g);
    return POCKETLLM_OK;
}

static pocketllm_status builtin(pocketllm_gguf_writer *w, uint32_t n_vocab) {
    char **tokens = calloc(n_vocab, sizeof *tokens);
    int32_t *types = calloc(n_vocab, sizeof *types);
    pocketllm_status st = POCKETLLM_OK;
    if (!tokens || !types) {
        st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for the vocabulary");
        goto done;
    }
    for (uint32_t i = 0; i < n_vocab && !st; i++) {
        char buf[32];
        if (i < 256) byte_char(i, buf), types[i] = TOKEN_NORMAL;
        else if (i < N_BUILTIN) snprintf(buf, sizeof buf, "%s", builtin_specials[i - 256]), types[i] = TOKEN_CONTROL;
        else snprintf(buf, sizeof buf, "[PAD%u]", i), types[i] = TOKEN_UNUSED;
        if (!(tokens[i] = strdup(buf))) st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for the vocabulary");
    }
    if (!st) st = pocketllm_gguf_writer_set_str(w, "tokenizer.ggml.model", "gpt2");
    if (!st) st = pocketllm_gguf_writer_set_str(w, "tokenizer.ggml.pre", "qwen2");
    if (!st) st = pocketllm_gguf_writer_set_str_array(w, "tokenizer.ggml.tokens", (const char *const *)tokens, n_vocab);
    if (!st) st = pocketllm_gguf_writer_set_array(w, "tokenizer.ggml.token_type", POCKETLLM_GGUF_INT32, types, n_vocab);
    if (!st) st = pocketllm_gguf_writer_set_str_array(w, "tokenizer.ggml.merges", NULL, 0);
    if (!st) st = pocketllm_gguf_writer_set_u32(w, "tokenizer.ggml.bos_token_id", 256);
    if (!st) st = pocketllm_gguf_writer_set_u32(w, "tokenizer.ggml.eos_token_id", 258);
    if (!st) st = pocketllm_gguf_writer_set_u32(w, "tokenizer.ggml.padding_token_id", 256);
    if (!st) st = pocketllm_gguf_writer_set_bool(w, "tokenizer.ggml.add_bos_token", 0);
done:
    if (tokens)
        for (uint32_t i = 0; i < n_vocab; i++) free(tokens[i]);
    free(tokens);
    free(types);
    return st;
}

/* Copy tokenizer.* from the file, padding the token list (and the
 * per-token arrays beside it) to n_vocab. */
static pocketllm_status copied(pocketllm_gguf_writer *w, const char *path, uint32_t n_vocab) {
    pl_gguf *g;
    pocketllm_status st = pocketllm_gguf_open(path, &g);
    if (st) return st;
    const pocketllm_gguf_value *tok = pl_gguf_get(g, "tokenizer.ggml.tokens");
    uint64_t have = tok ? tok->n : 0;
    for (uint64_t i = 0; i < g->n_kv && !st; i++) {
        const char *k = g->kv[i].key;
        const pocketllm_gguf_value *v = &g->kv[i].value;
        if (strncmp(k, "tokenizer.", 10) != 0) continue;
        bool per_token = v->type == POCKETLLM_GGUF_ARRAY && v->n == have &&
                         (!strcmp(k, "tokenizer.ggml.tokens") || !strcmp(k, "tokenizer.ggml.token_type") ||
                          !strcmp(k, "tokenizer.ggml.scores"));
        if (!per_token || have == n_vocab) {
            st = pocketllm_gguf_writer_set_value(w, k, v);
            continue;
        }
        /* padded copy of a per-token array */
        if (v->elem_type == POCKETLLM_GGUF_STRING) {
            char **s = calloc(n_vocab, sizeof *s);
            if (!s) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
            for (uint32_t j = 0; j < n_vocab && !st; j++) {
                char buf[32];
                snprintf(buf, sizeof buf, "[PAD%u]", j);
                s[j] = j < have ? (char *)v->elems[j].str : strdup(buf);
                if (!s[j]) st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
            }
            if (!st) st = pocketllm_gguf_writer_set_str_array(w, k, (const char *const *)s, n_vocab);
            for (uint32_t j = (uint32_t)have; j < n_vocab; j++) free(s[j]);
            free(s);
        } else {
            uint32_t es = pl_gguf_type_size(v->elem_type);
            uint8_t *a = calloc(n_vocab, es ? es : 1);
            if (!a || !es) {
                free(a);
                st = pl_fail(POCKETLLM_ERR_FORMAT, "%s: %s is not an array of numbers", path, k);
                break;
            }
            memcpy(a, v->raw, (size_t)have * es);
            for (uint32_t j = (uint32_t)have; j < n_vocab; j++) {
                if (!strcmp(k, "tokenizer.ggml.token_type")) {
                    int32_t u = TOKEN_UNUSED;
                    memcpy(a + (size_t)j * es, &u, es < 4 ? es : 4);
                } else if (v->elem_type == POCKETLLM_GGUF_FLOAT32) {
                    float f = -1000.0f; /* never chosen by a score-driven tokenizer */
                    memcpy(a + (size_t)j * es, &f, 4);
                }
            }
            st = pocketllm_gguf_writer_set_array(w, k, v->elem_type, a, n_vocab);
            free(a);
        }
    }
    pocketllm_gguf_close(g);
    return st;
}

pocketllm_status pl_synth_vocab_write(pocketllm_gguf_writer *w, const char *vocab_path, const char *template_path,
                                      uint32_t n_vocab) {
    pocketllm_status st = vocab_path ? copied(w, vocab_path, n_vocab) : builtin(w, n_vocab);
    if (st || !template_path) return st;
    char *text;
    size_t len;
    if ((st = pl_read_file(template_path, 1u << 20, &text, &len))) return st;
    if (strlen(text) != len) st = pl_fail(POCKETLLM_ERR_FORMAT, "%s: the template contains a NUL byte", template_path);
    else st = pocketllm_gguf_writer_set_str(w, "tokenizer.chat_template", text);
    free(text);
    return st;
}
