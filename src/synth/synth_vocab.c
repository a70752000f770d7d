/*
 * synth_vocab.c -- the tokenizer of a synthetic checkpoint: either the
 * tokenizer.* metadata copied from another GGUF (for example the qwen2
 * vocabulary file of the llama.cpp bundle), or a built-in byte-level BPE
 * vocabulary that both llama.cpp and PocketLLM can load: the 256 byte
 * tokens under GPT-2's byte-to-character mapping, no merges, and the three
 * Qwen control tokens.  Either is padded with unused "[PAD<i>]" tokens up to
 * the shape's vocabulary size, as Hugging Face conversions pad Qwen.
 *
 * A Qwen3-ASR checkpoint (asr) also needs the tokens its prompt uses, at
 * the ids Qwen3-ASR's tokenizer_config.json gives them: <|audio_start|>,
 * <|audio_end|> and <|audio_pad|> (special: control tokens) and
 * <asr_text> ("special": false, so llama.cpp's converter makes it a
 * user-defined token).  They go into padding slots, also of a copied
 * vocabulary (the bundle's qwen2 one has "[PAD<i>]" there).  And as
 * Qwen3ASRTextModel.set_vocab does: BOS = EOS = <|im_end|> and the chatml
 * template, unless --template gives another.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/file.h"
#include "synth/synth.h"

enum { TOKEN_NORMAL = 1, TOKEN_CONTROL = 3, TOKEN_USER_DEFINED = 4, TOKEN_UNUSED = 5 };

typedef struct added_token {
    uint32_t id;
    const char *text;
    int32_t type;
} added_token;

/* Qwen3-ASR's added tokens (its tokenizer_config.json added_tokens_decoder). */
static const added_token asr_tokens[] = {
    {151669, "<|audio_start|>", TOKEN_CONTROL},
    {151670, "<|audio_end|>", TOKEN_CONTROL},
    {151676, "<|audio_pad|>", TOKEN_CONTROL},
    {151704, "<asr_text>", TOKEN_USER_DEFINED},
};
#define N_ASR (sizeof asr_tokens / sizeof asr_tokens[0])

/* The chat template Qwen3ASRTextModel.set_vocab writes (plain chatml). */
static const char asr_template[] =
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + "
    "'\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

static const added_token *asr_token_at(bool asr, uint32_t id) {
    for (size_t i = 0; asr && i < N_ASR; i++)
        if (asr_tokens[i].id == id) return &asr_tokens[i];
    return NULL;
}

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

static pocketllm_status builtin(pocketllm_gguf_writer *w, uint32_t n_vocab, bool asr) {
    char **tokens = calloc(n_vocab, sizeof *tokens);
    int32_t *types = calloc(n_vocab, sizeof *types);
    pocketllm_status st = POCKETLLM_OK;
    if (!tokens || !types) {
        st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for the vocabulary");
        goto done;
    }
    for (uint32_t i = 0; i < n_vocab && !st; i++) {
        char buf[32];
        const added_token *a = asr_token_at(asr, i);
        if (i < 256) byte_char(i, buf), types[i] = TOKEN_NORMAL;
        else if (i < N_BUILTIN) snprintf(buf, sizeof buf, "%s", builtin_specials[i - 256]), types[i] = TOKEN_CONTROL;
        else if (a) snprintf(buf, sizeof buf, "%s", a->text), types[i] = a->type;
        else snprintf(buf, sizeof buf, "[PAD%u]", i), types[i] = TOKEN_UNUSED;
        if (!(tokens[i] = strdup(buf))) st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for the vocabulary");
    }
    /* Qwen3-ASR: BOS = EOS = <|im_end|> (258 here) */
    if (!st) st = pocketllm_gguf_writer_set_str(w, "tokenizer.ggml.model", "gpt2");
    if (!st) st = pocketllm_gguf_writer_set_str(w, "tokenizer.ggml.pre", "qwen2");
    if (!st) st = pocketllm_gguf_writer_set_str_array(w, "tokenizer.ggml.tokens", (const char *const *)tokens, n_vocab);
    if (!st) st = pocketllm_gguf_writer_set_array(w, "tokenizer.ggml.token_type", POCKETLLM_GGUF_INT32, types, n_vocab);
    if (!st) st = pocketllm_gguf_writer_set_str_array(w, "tokenizer.ggml.merges", NULL, 0);
    if (!st) st = pocketllm_gguf_writer_set_u32(w, "tokenizer.ggml.bos_token_id", asr ? 258 : 256);
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

/* String j of a copied vocabulary's array, NUL-terminated ("" if it
 * cannot be had: out of memory). */
static const char *elem_str(const pocketllm_gguf_value *a, uint64_t j) {
    const char *s = pocketllm_gguf_value_str(pocketllm_gguf_array_get(a, j), NULL);
    return s ? s : "";
}

/* Qwen3-ASR's tokens must land on free slots of a copied vocabulary: a
 * "[PAD<i>]" placeholder, past its end, or already the same token. */
static pocketllm_status check_asr_slots(const char *path, const pocketllm_gguf_value *tok, uint32_t n_vocab) {
    for (size_t i = 0; i < N_ASR; i++) {
        const added_token *a = &asr_tokens[i];
        if (a->id >= n_vocab)
            return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "synth: %s needs id %u, past the vocabulary of %u", a->text,
                           a->id, n_vocab);
        for (uint64_t j = 0; j < tok->n; j++) {
            const char *t = elem_str(tok, j);
            if (j == a->id && strcmp(t, a->text) && strncmp(t, "[PAD", 4))
                return pl_fail(POCKETLLM_ERR_FORMAT, "%s: id %u is '%s', where Qwen3-ASR has %s", path, a->id, t,
                               a->text);
            if (j != a->id && !strcmp(t, a->text))
                return pl_fail(POCKETLLM_ERR_FORMAT, "%s: has %s at id %llu, not at Qwen3-ASR's %u", path, a->text,
                               (unsigned long long)j, a->id);
        }
    }
    return POCKETLLM_OK;
}

/* Copy tokenizer.* from the file, padding the token list (and the
 * per-token arrays beside it) to n_vocab; for asr, with Qwen3-ASR's tokens
 * in their slots and BOS = EOS = <|im_end|>. */
static pocketllm_status copied(pocketllm_gguf_writer *w, const char *path, uint32_t n_vocab, bool asr) {
    pl_gguf *g;
    pocketllm_status st = pocketllm_gguf_open(path, &g);
    if (st) return st;
    const pocketllm_gguf_value *tok = pl_gguf_get(g, "tokenizer.ggml.tokens");
    uint64_t have = tok ? tok->n : 0;
    int64_t im_end = -1;
    for (uint64_t j = 0; j < have; j++)
        if (!strcmp(elem_str(tok, j), "<|im_end|>")) im_end = (int64_t)j;
    if (asr && im_end < 0) st = pl_fail(POCKETLLM_ERR_FORMAT, "%s: no <|im_end|> token (Qwen3-ASR's BOS and EOS)", path);
    if (asr && !st) st = check_asr_slots(path, tok, n_vocab);
    for (uint64_t i = 0; i < g->n_kv && !st; i++) {
        const char *k = g->kv[i].key;
        const pocketllm_gguf_value *v = &g->kv[i].value;
        if (strncmp(k, "tokenizer.", 10) != 0) continue;
        bool per_token = v->type == POCKETLLM_GGUF_ARRAY && v->n == have &&
                         (!strcmp(k, "tokenizer.ggml.tokens") || !strcmp(k, "tokenizer.ggml.token_type") ||
                          !strcmp(k, "tokenizer.ggml.scores"));
        if (!per_token || (have == n_vocab && !asr)) {
            st = pocketllm_gguf_writer_set_value(w, k, v);
            continue;
        }
        /* padded copy of a per-token array, Qwen3-ASR's tokens placed */
        if (v->elem_type == POCKETLLM_GGUF_STRING) {
            char **s = calloc(n_vocab, sizeof *s);
            if (!s) {
                st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
                break;
            }
            for (uint32_t j = 0; j < n_vocab && !st; j++) {
                char buf[32];
                const added_token *a = asr_token_at(asr, j);
                snprintf(buf, sizeof buf, "[PAD%u]", j);
                s[j] = a ? strdup(a->text) : j < have ? strdup(elem_str(v, j)) : strdup(buf);
                if (!s[j]) st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
            }
            if (!st) st = pocketllm_gguf_writer_set_str_array(w, k, (const char *const *)s, n_vocab);
            for (uint32_t j = 0; j < n_vocab; j++) free(s[j]);
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
            bool types = !strcmp(k, "tokenizer.ggml.token_type");
            for (uint32_t j = 0; j < n_vocab; j++) {
                const added_token *t = asr_token_at(asr, j);
                if (types && (t || j >= have)) {
                    int32_t u = t ? t->type : TOKEN_UNUSED;
                    memcpy(a + (size_t)j * es, &u, es < 4 ? es : 4);
                } else if (j >= have && v->elem_type == POCKETLLM_GGUF_FLOAT32) {
                    float f = -1000.0f; /* never chosen by a score-driven tokenizer */
                    memcpy(a + (size_t)j * es, &f, 4);
                }
            }
            st = pocketllm_gguf_writer_set_array(w, k, v->elem_type, a, n_vocab);
            free(a);
        }
    }
    if (asr && !st) st = pocketllm_gguf_writer_set_u32(w, "tokenizer.ggml.bos_token_id", (uint32_t)im_end);
    if (asr && !st) st = pocketllm_gguf_writer_set_u32(w, "tokenizer.ggml.eos_token_id", (uint32_t)im_end);
    pocketllm_gguf_close(g);
    return st;
}

pocketllm_status pl_synth_vocab_write(pocketllm_gguf_writer *w, const char *vocab_path, const char *template_path,
                                      uint32_t n_vocab, bool asr) {
    pocketllm_status st = vocab_path ? copied(w, vocab_path, n_vocab, asr) : builtin(w, n_vocab, asr);
    if (st) return st;
    /* the converter replaces a copied template with its chatml one */
    if (!template_path) return asr ? pocketllm_gguf_writer_set_str(w, "tokenizer.chat_template", asr_template) : st;
    char *text;
    size_t len;
    if ((st = pl_read_file(template_path, 1u << 20, &text, &len))) return st;
    if (strlen(text) != len) st = pl_fail(POCKETLLM_ERR_FORMAT, "%s: the template contains a NUL byte", template_path);
    else st = pocketllm_gguf_writer_set_str(w, "tokenizer.chat_template", text);
    free(text);
    return st;
}
