/*
 * test_tok_edge.c -- the tokenizer's edges, through the public C API, on
 * small vocabularies written here (a SentencePiece one, a byte-level BPE
 * one) and on stories260K: empty text, only spaces, a very long word,
 * malformed UTF-8, NUL bytes, ids outside the vocabulary, buffer rules,
 * the streaming decoder's UTF-8 hold-back, llama.cpp's clean-up rules,
 * and malformed vocabulary metadata, each refused at load with a message
 * naming the problem.  Expected ids are worked out by hand from the
 * algorithms (llama.cpp's), never taken from our own output; agreement
 * with llama.cpp itself is tests/oracle/test_tok_*.sh.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pltest.h"
#include "pocketllm.h"

static char g_dir[] = "/tmp/pl_tok_edge.XXXXXX";
static int g_files;

/* ---- writing vocabularies ----------------------------------------------- */

typedef void (*tweak_fn)(pocketllm_gguf_writer *w);

/* GPT-2's byte -> character mapping, written out independently of the engine */
static unsigned byte_char(unsigned b) {
    if ((b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || b >= 0xae) return b;
    unsigned n = 0;
    for (unsigned c = 0; c < b; c++)
        if (!((c >= 0x21 && c <= 0x7e) || (c >= 0xa1 && c <= 0xac) || c >= 0xae)) n++;
    return 256 + n;
}

static char *utf8(unsigned cp) {
    char *s = calloc(5, 1);
    if (cp < 0x80) s[0] = (char)cp;
    else if (cp < 0x800) s[0] = (char)(0xc0 | (cp >> 6)), s[1] = (char)(0x80 | (cp & 0x3f));
    else s[0] = (char)(0xe0 | (cp >> 12)), s[1] = (char)(0x80 | ((cp >> 6) & 0x3f)), s[2] = (char)(0x80 | (cp & 0x3f));
    return s;
}

/* SPM: <unk> <s> </s>, 256 byte tokens, then these (with scores). */
static const char *const SPM_WORDS[] = {"\xe2\x96\x81", "h", "e", "l", "o", "\xe2\x96\x81h", "he", "ll", "lo",
                                        "hell", "hello", "\xe2\x96\x81hello", "'", "s"};
static const float SPM_SCORES[] = {-10, -20, -20, -20, -20, -5, -3, -2, -4, -1, -0.5f, -0.1f, -20, -20};
#define SPM_N (3 + 256 + (int)(sizeof SPM_WORDS / sizeof SPM_WORDS[0]))
#define SPM_ID(i) (3 + 256 + (i)) /* id of SPM_WORDS[i] */

static void spm_arrays(pocketllm_gguf_writer *w, int n_scores, int n_types) {
    const char *tok[SPM_N];
    float score[SPM_N + 1];
    int32_t type[SPM_N + 1];
    static char bytes[256][7];
    tok[0] = "<unk>", tok[1] = "<s>", tok[2] = "</s>";
    type[0] = 2, type[1] = 3, type[2] = 3;
    for (int b = 0; b < 256; b++) {
        snprintf(bytes[b], sizeof bytes[b], "<0x%02X>", b);
        tok[3 + b] = bytes[b];
        type[3 + b] = 6;
    }
    for (int i = 0; i < (int)(sizeof SPM_WORDS / sizeof SPM_WORDS[0]); i++) {
        tok[SPM_ID(i)] = SPM_WORDS[i];
        score[SPM_ID(i)] = SPM_SCORES[i];
        type[SPM_ID(i)] = 1;
    }
    for (int i = 0; i < 3 + 256; i++) score[i] = 0;
    score[SPM_N] = 0, type[SPM_N] = 1;
    pocketllm_gguf_writer_set_str_array(w, "tokenizer.ggml.tokens", tok, SPM_N);
    pocketllm_gguf_writer_set_array(w, "tokenizer.ggml.scores", POCKETLLM_GGUF_FLOAT32, score, (uint64_t)n_scores);
    pocketllm_gguf_writer_set_array(w, "tokenizer.ggml.token_type", POCKETLLM_GGUF_INT32, type, (uint64_t)n_types);
}

/* BPE: the 256 byte characters (id = byte), then Ġa ab Ġab <|endoftext|>,
 * merges "Ġ a", "a b", "Ġa b". */
#define BPE_GA 256
#define BPE_AB 257
#define BPE_GAB 258
#define BPE_EOT 259
#define BPE_N 260

static void bpe_arrays(pocketllm_gguf_writer *w) {
    const char *tok[BPE_N];
    int32_t type[BPE_N];
    char *owned[256];
    for (unsigned b = 0; b < 256; b++) tok[b] = owned[b] = utf8(byte_char(b)), type[b] = 1;
    tok[BPE_GA] = "\xc4\xa0" "a", tok[BPE_AB] = "ab", tok[BPE_GAB] = "\xc4\xa0" "ab", tok[BPE_EOT] = "<|endoftext|>";
    type[BPE_GA] = type[BPE_AB] = type[BPE_GAB] = 1, type[BPE_EOT] = 3;
    const char *merges[] = {"\304\240 a", "a b", "\304\240a b"}; /* U+0120 = Ġ */
    pocketllm_gguf_writer_set_str_array(w, "tokenizer.ggml.tokens", tok, BPE_N);
    pocketllm_gguf_writer_set_array(w, "tokenizer.ggml.token_type", POCKETLLM_GGUF_INT32, type, BPE_N);
    pocketllm_gguf_writer_set_str_array(w, "tokenizer.ggml.merges", merges, 3);
    pocketllm_gguf_writer_set_u32(w, "tokenizer.ggml.bos_token_id", BPE_EOT);
    pocketllm_gguf_writer_set_u32(w, "tokenizer.ggml.eos_token_id", BPE_EOT);
    for (unsigned b = 0; b < 256; b++) free(owned[b]);
}

/* Write a vocabulary ("spm" or "bpe"), changed by `tweak`; returns its path. */
static const char *write_vocab(const char *kind, tweak_fn tweak) {
    static char path[256];
    snprintf(path, sizeof path, "%s/v%d.gguf", g_dir, g_files++);
    pocketllm_gguf_writer *w;
    if (pocketllm_gguf_writer_new(&w)) return NULL;
    pocketllm_gguf_writer_set_str(w, "general.architecture", "llama");
    if (strcmp(kind, "spm") == 0) {
        pocketllm_gguf_writer_set_str(w, "tokenizer.ggml.model", "llama");
        spm_arrays(w, SPM_N, SPM_N);
    } else {
        pocketllm_gguf_writer_set_str(w, "tokenizer.ggml.model", "gpt2");
        pocketllm_gguf_writer_set_str(w, "tokenizer.ggml.pre", "gpt-2");
        bpe_arrays(w);
    }
    if (tweak) tweak(w);
    pocketllm_status st = pocketllm_gguf_writer_write(w, path);
    pocketllm_gguf_writer_free(w);
    return st ? NULL : path;
}

static pocketllm_model *open_vocab(const char *path) {
    pocketllm_model_params p = pocketllm_model_default_params();
    p.vocab_only = 1;
    pocketllm_model *m = NULL;
    if (!path || pocketllm_model_open(path, &p, &m)) {
        fprintf(stderr, "open %s: %s\n", path ? path : "(not written)", pocketllm_last_error());
        return NULL;
    }
    return m;
}

/* The load of a changed vocabulary fails with `status` and a message
 * containing `words`. */
static void expect_refused(const char *kind, tweak_fn tweak, pocketllm_status status, const char *words) {
    const char *path = write_vocab(kind, tweak);
    CHECK(path != NULL);
    pocketllm_model_params p = pocketllm_model_default_params();
    p.vocab_only = 1;
    pocketllm_model *m = NULL;
    pocketllm_status st = path ? pocketllm_model_open(path, &p, &m) : POCKETLLM_ERR_IO;
    CHECK_MSG(st == status, "expected status %d, got %d (%s)", status, st, pocketllm_last_error());
    CHECK_MSG(strstr(pocketllm_last_error(), words) != NULL, "'%s' lacks '%s'", pocketllm_last_error(), words);
    CHECK_MSG(strchr(pocketllm_last_error(), '\n') == NULL, "message is not one line");
    pocketllm_model_close(m);
}

/* ---- malformed metadata ------------------------------------------------- */

static void t_tokens_u32(pocketllm_gguf_writer *w) {
    uint32_t a[3] = {1, 2, 3};
    pocketllm_gguf_writer_set_array(w, "tokenizer.ggml.tokens", POCKETLLM_GGUF_UINT32, a, 3);
}
static void t_tokens_str(pocketllm_gguf_writer *w) { pocketllm_gguf_writer_set_str(w, "tokenizer.ggml.tokens", "abc"); }
static void t_tokens_empty(pocketllm_gguf_writer *w) {
    pocketllm_gguf_writer_set_str_array(w, "tokenizer.ggml.tokens", NULL, 0);
}
static void t_no_tokens(pocketllm_gguf_writer *w) { pocketllm_gguf_writer_remove(w, "tokenizer.ggml.tokens"); }
static void t_scores_short(pocketllm_gguf_writer *w) { spm_arrays(w, SPM_N - 1, SPM_N); }
static void t_scores_long(pocketllm_gguf_writer *w) { spm_arrays(w, SPM_N + 1, SPM_N); }
static void t_types_short(pocketllm_gguf_writer *w) { spm_arrays(w, SPM_N, 10); }
static void t_types_float(pocketllm_gguf_writer *w) {
    float f[SPM_N] = {0};
    pocketllm_gguf_writer_set_array(w, "tokenizer.ggml.token_type", POCKETLLM_GGUF_FLOAT32, f, SPM_N);
}
static void t_scores_str(pocketllm_gguf_writer *w) {
    const char *s[1] = {"x"};
    pocketllm_gguf_writer_set_str_array(w, "tokenizer.ggml.scores", s, 1);
}
static void t_bos_outside(pocketllm_gguf_writer *w) { pocketllm_gguf_writer_set_u32(w, "tokenizer.ggml.bos_token_id", 99999); }
static void t_eot_outside(pocketllm_gguf_writer *w) { pocketllm_gguf_writer_set_u32(w, "tokenizer.ggml.eot_token_id", SPM_N); }
static void t_bos_string(pocketllm_gguf_writer *w) { pocketllm_gguf_writer_set_str(w, "tokenizer.ggml.bos_token_id", "1"); }
static void t_bos_negative(pocketllm_gguf_writer *w) { pocketllm_gguf_writer_set_i32(w, "tokenizer.ggml.eos_token_id", -7); }
static void t_byte_bad(pocketllm_gguf_writer *w) {
    spm_arrays(w, SPM_N, SPM_N);
    /* rewrite token 3 ("<0x00>") as "<0x-1>", still of type byte */
    const char *tok[SPM_N];
    static char bytes[256][7];
    tok[0] = "<unk>", tok[1] = "<s>", tok[2] = "</s>";
    for (int b = 0; b < 256; b++) snprintf(bytes[b], sizeof bytes[b], "<0x%02X>", b), tok[3 + b] = bytes[b];
    tok[3] = "<0x-1>";
    for (int i = 0; i < (int)(sizeof SPM_WORDS / sizeof SPM_WORDS[0]); i++) tok[SPM_ID(i)] = SPM_WORDS[i];
    pocketllm_gguf_writer_set_str_array(w, "tokenizer.ggml.tokens", tok, SPM_N);
}
static void t_duplicate(pocketllm_gguf_writer *w) {
    const char *tok[4] = {"<unk>", "<s>", "</s>", "<s>"};
    pocketllm_gguf_writer_remove(w, "tokenizer.ggml.scores");
    pocketllm_gguf_writer_remove(w, "tokenizer.ggml.token_type");
    pocketllm_gguf_writer_set_str_array(w, "tokenizer.ggml.tokens", tok, 4);
}
static void t_nan_score(pocketllm_gguf_writer *w) {
    float s[SPM_N] = {0};
    s[5] = NAN;
    pocketllm_gguf_writer_set_array(w, "tokenizer.ggml.scores", POCKETLLM_GGUF_FLOAT32, s, SPM_N);
}
static void t_no_merges(pocketllm_gguf_writer *w) { pocketllm_gguf_writer_remove(w, "tokenizer.ggml.merges"); }
static void t_merges_u8(pocketllm_gguf_writer *w) {
    uint8_t a[2] = {1, 2};
    pocketllm_gguf_writer_set_array(w, "tokenizer.ggml.merges", POCKETLLM_GGUF_UINT8, a, 2);
}
static void t_pre_unknown(pocketllm_gguf_writer *w) { pocketllm_gguf_writer_set_str(w, "tokenizer.ggml.pre", "foo-bar"); }
static void t_pre_number(pocketllm_gguf_writer *w) { pocketllm_gguf_writer_set_u32(w, "tokenizer.ggml.pre", 3); }
static void t_model_unknown(pocketllm_gguf_writer *w) { pocketllm_gguf_writer_set_str(w, "tokenizer.ggml.model", "mystery"); }
static void t_model_bert(pocketllm_gguf_writer *w) { pocketllm_gguf_writer_set_str(w, "tokenizer.ggml.model", "bert"); }
static void t_model_number(pocketllm_gguf_writer *w) { pocketllm_gguf_writer_set_u32(w, "tokenizer.ggml.model", 1); }
static void t_add_bos_bad(pocketllm_gguf_writer *w) { pocketllm_gguf_writer_set_u32(w, "tokenizer.ggml.add_bos_token", 7); }

static void test_malformed(void) {
    expect_refused("spm", t_tokens_u32, POCKETLLM_ERR_FORMAT, "tokenizer.ggml.tokens");
    expect_refused("spm", t_tokens_str, POCKETLLM_ERR_FORMAT, "tokenizer.ggml.tokens");
    expect_refused("spm", t_tokens_empty, POCKETLLM_ERR_FORMAT, "is empty");
    expect_refused("spm", t_no_tokens, POCKETLLM_ERR_FORMAT, "is missing");
    expect_refused("spm", t_scores_short, POCKETLLM_ERR_FORMAT, "tokenizer.ggml.scores");
    expect_refused("spm", t_scores_long, POCKETLLM_ERR_FORMAT, "tokenizer.ggml.scores");
    expect_refused("spm", t_scores_str, POCKETLLM_ERR_FORMAT, "tokenizer.ggml.scores");
    expect_refused("spm", t_types_short, POCKETLLM_ERR_FORMAT, "tokenizer.ggml.token_type");
    expect_refused("spm", t_types_float, POCKETLLM_ERR_FORMAT, "tokenizer.ggml.token_type");
    expect_refused("spm", t_bos_outside, POCKETLLM_ERR_FORMAT, "bos_token_id");
    expect_refused("spm", t_eot_outside, POCKETLLM_ERR_FORMAT, "outside the vocabulary");
    expect_refused("spm", t_bos_string, POCKETLLM_ERR_FORMAT, "bos_token_id");
    expect_refused("spm", t_bos_negative, POCKETLLM_ERR_FORMAT, "eos_token_id");
    expect_refused("spm", t_byte_bad, POCKETLLM_ERR_FORMAT, "<0x-1>");
    expect_refused("spm", t_duplicate, POCKETLLM_ERR_FORMAT, "same text");
    expect_refused("spm", t_nan_score, POCKETLLM_ERR_FORMAT, "NaN");
    expect_refused("spm", t_model_unknown, POCKETLLM_ERR_UNSUPPORTED, "'mystery'");
    expect_refused("spm", t_model_bert, POCKETLLM_ERR_UNSUPPORTED, "'bert'");
    expect_refused("spm", t_model_number, POCKETLLM_ERR_FORMAT, "tokenizer.ggml.model");
    expect_refused("spm", t_add_bos_bad, POCKETLLM_ERR_FORMAT, "add_bos_token");
    expect_refused("bpe", t_no_merges, POCKETLLM_ERR_FORMAT, "tokenizer.ggml.merges");
    expect_refused("bpe", t_merges_u8, POCKETLLM_ERR_FORMAT, "tokenizer.ggml.merges");
    expect_refused("bpe", t_pre_unknown, POCKETLLM_ERR_UNSUPPORTED, "pre-tokenizer 'foo-bar'");
    expect_refused("bpe", t_pre_number, POCKETLLM_ERR_FORMAT, "tokenizer.ggml.pre");
}

/* ---- helpers ------------------------------------------------------------- */

static size_t tok(const pocketllm_model *m, const char *text, size_t len, int add, int parse, int32_t *ids, size_t cap) {
    size_t n = 0;
    pocketllm_status st = pocketllm_tokenize(m, text, len, add, parse, ids, cap, &n);
    CHECK_MSG(st == POCKETLLM_OK, "tokenize: %s", pocketllm_last_error());
    return st ? 0 : n;
}

static bool ids_are(const int32_t *got, size_t n, const int32_t *want, size_t nw) {
    if (n != nw) return false;
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i]) return false;
    return true;
}

/* detokenize(ids) as a malloc'd string */
static char *detok(const pocketllm_model *m, const int32_t *ids, size_t n, int rm, int unparse, size_t *len) {
    size_t need = 0;
    pocketllm_detokenize(m, ids, n, rm, unparse, NULL, 0, &need);
    char *buf = malloc(need + 1);
    CHECK(pocketllm_detokenize(m, ids, n, rm, unparse, buf, need, len) == POCKETLLM_OK);
    buf[*len] = '\0';
    return buf;
}

/* ---- SentencePiece ----------------------------------------------------- */

static void test_spm(void) {
    pocketllm_model *m = open_vocab(write_vocab("spm", NULL));
    CHECK(m != NULL);
    if (!m) return;
    int32_t ids[64];
    size_t n;
    /* "hello": "\u2581hello" merges ll, he, hell, hello, \u2581hello (scores set above) */
    n = tok(m, "hello", 5, 0, 0, ids, 64);
    CHECK(ids_are(ids, n, (int32_t[]){SPM_ID(11)}, 1));
    /* with BOS */
    n = tok(m, "hello", 5, 1, 0, ids, 64);
    CHECK(ids_are(ids, n, (int32_t[]){1, SPM_ID(11)}, 2));
    /* empty text: [BOS] with add_special, nothing without (as SentencePiece) */
    n = tok(m, "", 0, 1, 1, ids, 64);
    CHECK(ids_are(ids, n, (int32_t[]){1}, 1));
    n = tok(m, "", 0, 0, 1, ids, 64);
    CHECK(n == 0);
    /* byte fallback: 'z' is no token -> <0x7A>; the escaped space stays */
    n = tok(m, "z", 1, 0, 0, ids, 64);
    CHECK(ids_are(ids, n, (int32_t[]){SPM_ID(0), 3 + 'z'}, 2));
    /* only spaces: four U+2581, each a token of its own */
    n = tok(m, "   ", 3, 0, 0, ids, 64);
    CHECK(ids_are(ids, n, (int32_t[]){SPM_ID(0), SPM_ID(0), SPM_ID(0), SPM_ID(0)}, 4));
    /* NUL and invalid bytes fall back to byte tokens, and come back */
    const char raw[] = "he\0l\xff";
    n = tok(m, raw, 5, 0, 0, ids, 64);
    size_t len;
    char *back = detok(m, ids, n, 0, 1, &len);
    CHECK(len == 5 && memcmp(back, raw, 5) == 0);
    free(back);
    /* special tokens in text: parsed only with parse_special; the text after
     * a special token gets the leading space again */
    n = tok(m, "<s>he", 5, 0, 1, ids, 64);
    CHECK(ids_are(ids, n, (int32_t[]){1, SPM_ID(0), SPM_ID(6)}, 3));
    n = tok(m, "<s>", 3, 0, 0, ids, 64);
    CHECK(n > 1 && ids[0] != 1);
    /* BOS/EOS and end of generation */
    CHECK(pocketllm_token_bos(m) == 1 && pocketllm_token_eos(m) == 2);
    CHECK(pocketllm_token_is_eog(m, 2) && !pocketllm_token_is_eog(m, 1) && !pocketllm_token_is_eog(m, -1) &&
          !pocketllm_token_is_eog(m, SPM_N));
    /* detokenize drops the leading space of the first piece, keeps it after a removed BOS */
    int32_t hello_bos[2] = {1, SPM_ID(11)};
    back = detok(m, hello_bos + 1, 1, 0, 1, &len);
    CHECK_STR(back, "hello");
    free(back);
    back = detok(m, hello_bos, 2, 1, 1, &len);
    CHECK_STR(back, " hello");
    free(back);
    back = detok(m, hello_bos, 2, 0, 1, &len);
    CHECK_STR(back, "<s> hello");
    free(back);
    back = detok(m, hello_bos, 2, 0, 0, &len);
    CHECK_STR(back, " hello");
    free(back);
    pocketllm_model_close(m);
}

/* ---- byte-level BPE ------------------------------------------------------- */

static void test_bpe(void) {
    pocketllm_model *m = open_vocab(write_vocab("bpe", NULL));
    CHECK(m != NULL);
    if (!m) return;
    int32_t ids[64];
    size_t n;
    /* "ab ab": words "ab", " ab"; "a b" -> ab; " ab": "Ġ a" (rank 0) then "Ġa b" */
    n = tok(m, "ab ab", 5, 1, 1, ids, 64);
    CHECK(ids_are(ids, n, (int32_t[]){BPE_AB, BPE_GAB}, 2));
    /* gpt-2 adds no BOS; empty text gives nothing */
    n = tok(m, "", 0, 1, 1, ids, 64);
    CHECK(n == 0);
    /* special token in text, or its bytes */
    n = tok(m, "a<|endoftext|>", 14, 1, 1, ids, 64);
    CHECK(ids_are(ids, n, (int32_t[]){'a', BPE_EOT}, 2));
    n = tok(m, "<|endoftext|>", 13, 1, 0, ids, 64);
    CHECK(n > 1 && ids[0] == '<');
    /* malformed UTF-8 becomes U+FFFD (llama.cpp), three byte tokens each */
    n = tok(m, "\xff", 1, 0, 0, ids, 64);
    CHECK(ids_are(ids, n, (int32_t[]){0xef, 0xbf, 0xbd}, 3));
    /* NUL is a byte like any other */
    n = tok(m, "a\0b", 3, 0, 0, ids, 64);
    size_t len;
    char *back = detok(m, ids, n, 0, 1, &len);
    CHECK(len == 3 && memcmp(back, "a\0b", 3) == 0);
    free(back);
    /* only spaces: one word */
    n = tok(m, "    ", 4, 0, 0, ids, 64);
    CHECK(ids_are(ids, n, (int32_t[]){0x20, 0x20, 0x20, 0x20}, 4));
    /* a very long word: 300000 bytes, merged pairwise, and back */
    size_t big = 300000;
    char *text = malloc(big);
    for (size_t i = 0; i < big; i++) text[i] = i % 2 ? 'b' : 'a';
    int32_t *many = malloc(big * sizeof *many);
    n = tok(m, text, big, 0, 0, many, big);
    CHECK(n == big / 2 && many[0] == BPE_AB && many[n - 1] == BPE_AB);
    back = detok(m, many, n, 0, 1, &len);
    CHECK(len == big && memcmp(back, text, big) == 0);
    free(back);
    free(many);
    free(text);

    /* llama.cpp's clean-up of detokenized text (gpt-2 asks for it):
     * " ?" -> "?", " ' " -> "'", " 's" -> "'s" but " 't" stays */
    static const struct {
        const char *in, *out;
    } clean[] = {
        {"a ? b !", "a? b!"},   {"x , y .", "x, y."}, {"it 's", "it's"},  {"it 't", "it 't"},
        {"we 're", "we're"},    {"I 'll", "I 'll"},   {"a ' b", "a'b"},   {" ' ' ", "'' "},
        {"a 'm", "a'm"},        {" 's", "'s"},        {"'", "'"},         {"a '", "a '"},
    };
    for (size_t i = 0; i < sizeof clean / sizeof clean[0]; i++) {
        int32_t cid[64];
        size_t k = strlen(clean[i].in);
        for (size_t j = 0; j < k; j++) cid[j] = (uint8_t)clean[i].in[j]; /* byte tokens: id = byte */
        back = detok(m, cid, k, 0, 1, &len);
        CHECK_MSG(strcmp(back, clean[i].out) == 0, "clean '%s': '%s', want '%s'", clean[i].in, back, clean[i].out);
        free(back);
    }
    pocketllm_model_close(m);
}

/* ---- bad ids, buffers, streaming ------------------------------------------- */

static void test_api_rules(void) {
    pocketllm_model *m = open_vocab(write_vocab("bpe", NULL));
    CHECK(m != NULL);
    if (!m) return;
    int32_t ids[8];
    size_t n = 0, len = 0;
    char buf[64];
    /* tokenize into a buffer too small: fails, says how many */
    CHECK(pocketllm_tokenize(m, "ab ab", 5, 0, 0, ids, 1, &n) == POCKETLLM_ERR_INVALID_ARGUMENT && n == 2);
    CHECK(pocketllm_tokenize(m, "ab ab", 5, 0, 0, NULL, 0, &n) == POCKETLLM_ERR_INVALID_ARGUMENT && n == 2);
    CHECK(pocketllm_tokenize(m, "ab ab", 5, 0, 0, ids, 2, &n) == POCKETLLM_OK && n == 2);
    CHECK(pocketllm_tokenize(NULL, "a", 1, 0, 0, ids, 8, &n) == POCKETLLM_ERR_INVALID_ARGUMENT);
    /* ids outside the vocabulary: an error, never a crash */
    int32_t bad[3] = {'a', BPE_N, 'b'};
    CHECK(pocketllm_detokenize(m, bad, 3, 0, 1, buf, sizeof buf, &len) == POCKETLLM_ERR_INVALID_ARGUMENT);
    CHECK(strstr(pocketllm_last_error(), "outside the vocabulary") != NULL);
    bad[1] = -1;
    CHECK(pocketllm_detokenize(m, bad, 3, 0, 1, buf, sizeof buf, &len) == POCKETLLM_ERR_INVALID_ARGUMENT);
    CHECK(pocketllm_token_to_piece(m, -5, 1, buf, sizeof buf, &len) == POCKETLLM_ERR_INVALID_ARGUMENT);
    CHECK(pocketllm_token_to_piece(m, BPE_N, 1, buf, sizeof buf, &len) == POCKETLLM_ERR_INVALID_ARGUMENT);
    CHECK(!pocketllm_token_is_eog(m, 1 << 30));
    /* pieces: control tokens only when asked */
    CHECK(pocketllm_token_to_piece(m, BPE_EOT, 1, buf, sizeof buf, &len) == POCKETLLM_OK && len == 13);
    CHECK(pocketllm_token_to_piece(m, BPE_EOT, 0, buf, sizeof buf, &len) == POCKETLLM_OK && len == 0);
    CHECK(pocketllm_token_to_piece(m, BPE_GAB, 1, buf, 2, &len) == POCKETLLM_ERR_INVALID_ARGUMENT && len == 3);
    CHECK(pocketllm_token_to_piece(m, BPE_GAB, 1, buf, 3, &len) == POCKETLLM_OK && memcmp(buf, " ab", 3) == 0);

    /* streaming: "é" arrives as two byte tokens; nothing comes out until the
     * character is whole */
    pocketllm_detokenizer *d = NULL;
    CHECK(pocketllm_detokenizer_new(m, 1, &d) == POCKETLLM_OK);
    CHECK(pocketllm_detokenizer_push(d, 0xc3, buf, sizeof buf, &len) == POCKETLLM_OK && len == 0);
    CHECK(pocketllm_detokenizer_push(d, BPE_N + 3, buf, sizeof buf, &len) == POCKETLLM_ERR_INVALID_ARGUMENT);
    CHECK(pocketllm_detokenizer_push(d, 0xa9, buf, 1, &len) == POCKETLLM_ERR_INVALID_ARGUMENT && len == 2);
    CHECK(pocketllm_detokenizer_push(d, 0xa9, buf, 2, &len) == POCKETLLM_OK && len == 2 && memcmp(buf, "\xc3\xa9", 2) == 0);
    /* a lone lead byte is held, then let go at the flush */
    CHECK(pocketllm_detokenizer_push(d, 0xe2, buf, sizeof buf, &len) == POCKETLLM_OK && len == 0);
    CHECK(pocketllm_detokenizer_flush(d, buf, sizeof buf, &len) == POCKETLLM_OK && len == 1 && (uint8_t)buf[0] == 0xe2);
    pocketllm_detokenizer_free(d);
    /* the clean-up holds a space back until it knows what follows */
    CHECK(pocketllm_detokenizer_new(m, 1, &d) == POCKETLLM_OK);
    CHECK(pocketllm_detokenizer_push(d, 'a', buf, sizeof buf, &len) == POCKETLLM_OK && len == 1);
    CHECK(pocketllm_detokenizer_push(d, ' ', buf, sizeof buf, &len) == POCKETLLM_OK && len == 0);
    CHECK(pocketllm_detokenizer_push(d, '?', buf, sizeof buf, &len) == POCKETLLM_OK && len == 1 && buf[0] == '?');
    CHECK(pocketllm_detokenizer_push(d, ' ', buf, sizeof buf, &len) == POCKETLLM_OK && len == 0);
    CHECK(pocketllm_detokenizer_flush(d, buf, sizeof buf, &len) == POCKETLLM_OK && len == 1 && buf[0] == ' ');
    pocketllm_detokenizer_free(d);
    pocketllm_detokenizer_free(NULL);
    pocketllm_model_close(m);

    /* a file without a tokenizer opens, and says so when asked to tokenize */
    char path[256];
    snprintf(path, sizeof path, "%s/plain.gguf", g_dir);
    pocketllm_gguf_writer *w;
    CHECK(pocketllm_gguf_writer_new(&w) == POCKETLLM_OK);
    pocketllm_gguf_writer_set_str(w, "general.name", "no tokenizer");
    CHECK(pocketllm_gguf_writer_write(w, path) == POCKETLLM_OK);
    pocketllm_gguf_writer_free(w);
    m = open_vocab(path);
    CHECK(m && pocketllm_model_n_vocab(m) == 0);
    CHECK(pocketllm_tokenize(m, "a", 1, 1, 1, ids, 8, &n) == POCKETLLM_ERR_UNSUPPORTED);
    CHECK(pocketllm_token_bos(m) == -1 && pocketllm_token_eos(m) == -1 && !pocketllm_token_is_eog(m, 0));
    CHECK(pocketllm_detokenizer_new(m, 1, &d) == POCKETLLM_ERR_UNSUPPORTED && d == NULL);
    pocketllm_model_close(m);
}

/* ---- the real checkpoint ----------------------------------------------------- */

static void test_stories(void) {
    const char *shared = getenv("PL_SHARED");
    char path[512];
    snprintf(path, sizeof path, "%s/models/stories260K.gguf", shared ? shared : "../shared");
    pocketllm_model *m = open_vocab(path);
    CHECK_MSG(m != NULL, "stories260K.gguf must be readable at %s", path);
    if (!m) return;
    CHECK(pocketllm_model_n_vocab(m) == 512);
    /* llama.cpp v0.4.0 (pl_oracle tokenize): "Once upon a time" -> 1 403 407 261 378 */
    int32_t ids[64];
    size_t n = tok(m, "Once upon a time", 16, 1, 1, ids, 64);
    CHECK(ids_are(ids, n, (int32_t[]){1, 403, 407, 261, 378}, 5));
    /* separator and padding ids of -1 (0xffffffff) in the file mean "none" */
    CHECK(pocketllm_token_bos(m) == 1 && pocketllm_token_eos(m) == 2 && pocketllm_token_is_eog(m, 2));
    /* text without the characters SentencePiece changes comes back whole */
    const char *texts[] = {"Once upon a time, there was a little girl.", "  two  spaces ", "tab\tand\nnewline",
                           "naïve café 日本", ""};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        n = tok(m, texts[i], strlen(texts[i]), 0, 0, ids, 64);
        size_t len;
        char *back = detok(m, ids, n, 0, 1, &len);
        CHECK_MSG(strcmp(back, texts[i]) == 0, "'%s' came back as '%s'", texts[i], back);
        free(back);
    }
    pocketllm_model_close(m);
}

int main(void) {
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_malformed();
    test_spm();
    test_bpe();
    test_api_rules();
    test_stories();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
    TEST_DONE();
}
