/*
 * vocab_load.c -- build a vocabulary from GGUF tokenizer.ggml.* metadata:
 * validate every array and id, then derive what llama.cpp derives at load
 * (token attributes, default and auto-detected special tokens, the
 * end-of-generation set, per-model attribute fixes) so that tokenizing and
 * detokenizing agree with it.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/error.h"
#include "tokenizer/vocab_impl.h"

#define K_MODEL "tokenizer.ggml.model"
#define K_PRE "tokenizer.ggml.pre"
#define K_TOKENS "tokenizer.ggml.tokens"
#define K_SCORES "tokenizer.ggml.scores"
#define K_TYPES "tokenizer.ggml.token_type"
#define K_MERGES "tokenizer.ggml.merges"

/* llama.cpp's token types (GGUF tokenizer.ggml.token_type values) */
enum { TT_UNDEFINED = 0, TT_NORMAL = 1, TT_UNKNOWN = 2, TT_CONTROL = 3, TT_USER_DEFINED = 4, TT_UNUSED = 5, TT_BYTE = 6 };

int32_t pl_vocab_find(const pl_vocab *v, const char *text, size_t len) {
    uint64_t id;
    return pl_strmap_get(&v->text_to_id, text, len, &id) ? (int32_t)id : -1;
}

static int32_t find_str(const pl_vocab *v, const char *s) { return pl_vocab_find(v, s, strlen(s)); }

pocketllm_status pl_ids_push(pl_ids *ids, int32_t id) { return pl_ids_append(ids, &id, 1); }

pocketllm_status pl_ids_append(pl_ids *ids, const int32_t *src, size_t n) {
    if (n == 0) return POCKETLLM_OK;
    if (n > ids->cap - ids->n) {
        size_t cap = ids->cap ? ids->cap : 64;
        while (cap - ids->n < n) {
            if (cap > SIZE_MAX / 2 / sizeof(int32_t)) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "too many tokens");
            cap *= 2;
        }
        int32_t *p = realloc(ids->v, cap * sizeof *p);
        if (!p) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory while tokenizing");
        ids->v = p;
        ids->cap = cap;
    }
    memcpy(ids->v + ids->n, src, n * sizeof *src);
    ids->n += n;
    return POCKETLLM_OK;
}

void pl_vocab_free(pl_vocab *v) {
    if (!v) return;
    pl_strmap_free(&v->text_to_id);
    pl_bpe_free(&v->bpe);
    free(v->specials.ids);
    free(v->specials.trie);
    free(v->tokens);
    free(v->eog);
    pl_arena_free(&v->arena);
    free(v);
}

int32_t pl_vocab_n_tokens(const pl_vocab *v) { return v ? v->n_tokens : 0; }
int32_t pl_vocab_bos(const pl_vocab *v) { return v ? v->bos : -1; }
int32_t pl_vocab_eos(const pl_vocab *v) { return v ? v->eos : -1; }
bool pl_vocab_is_eog(const pl_vocab *v, int32_t id) { return v && id >= 0 && id < v->n_tokens && v->eog[id]; }

/* An array value of the given element type (and, when n > 0, length). */
static pocketllm_status get_array(const pl_gguf *g, const char *key, uint32_t elem_type, const char *what,
                                  const pocketllm_gguf_value **out) {
    const pocketllm_gguf_value *a = pl_gguf_get(g, key);
    *out = a;
    if (!a) return POCKETLLM_OK;
    if (a->type != POCKETLLM_GGUF_ARRAY || a->elem_type != elem_type)
        return pl_fail(POCKETLLM_ERR_FORMAT, "metadata '%s' is %s%s%s, not an array of %s", key,
                       a->type == POCKETLLM_GGUF_ARRAY ? "an array of " : "a ",
                       pl_gguf_type_name(a->type == POCKETLLM_GGUF_ARRAY ? a->elem_type : a->type),
                       a->type == POCKETLLM_GGUF_ARRAY ? "" : " value", what);
    return POCKETLLM_OK;
}

static pocketllm_status get_bool(const pl_gguf *g, const char *key, bool *inout) {
    uint64_t u;
    if (!pl_gguf_get(g, key)) return POCKETLLM_OK;
    pocketllm_status st = pl_gguf_get_u64(g, key, 0, &u);
    if (st) return st;
    if (u > 1) return pl_fail(POCKETLLM_ERR_FORMAT, "metadata '%s' = %llu is not a boolean", key, (unsigned long long)u);
    *inout = u != 0;
    return POCKETLLM_OK;
}

static const char *get_string(const pl_gguf *g, const char *key, pocketllm_status *st) {
    const pocketllm_gguf_value *s = pl_gguf_get(g, key);
    *st = POCKETLLM_OK;
    if (!s) return NULL;
    if (s->type != POCKETLLM_GGUF_STRING) {
        *st = pl_fail(POCKETLLM_ERR_FORMAT, "metadata '%s' is a %s, not a string", key, pl_gguf_type_name(s->type));
        return NULL;
    }
    return s->str;
}

static bool is_hex(char c) { return isxdigit((unsigned char)c) != 0; }

/* Read the token list, scores and types into v->tokens. */
static pocketllm_status load_tokens(pl_vocab *v, const pl_gguf *g) {
    const pocketllm_gguf_value *toks, *scores, *types;
    pocketllm_status st;
    if ((st = get_array(g, K_TOKENS, POCKETLLM_GGUF_STRING, "strings", &toks))) return st;
    if (!toks) return pl_fail(POCKETLLM_ERR_FORMAT, "metadata '%s' (the vocabulary) is missing", K_TOKENS);
    if (toks->n == 0) return pl_fail(POCKETLLM_ERR_FORMAT, "metadata '%s' is empty", K_TOKENS);
    if (toks->n >= INT32_MAX) return pl_fail(POCKETLLM_ERR_FORMAT, "metadata '%s' holds too many tokens", K_TOKENS);
    const size_t n = (size_t)toks->n;

    scores = pl_gguf_get(g, K_SCORES);
    if (scores && (scores->type != POCKETLLM_GGUF_ARRAY ||
                   (scores->elem_type != POCKETLLM_GGUF_FLOAT32 && scores->elem_type != POCKETLLM_GGUF_INT32)))
        return pl_fail(POCKETLLM_ERR_FORMAT, "metadata '%s' is not an array of float32 or int32", K_SCORES);
    if ((st = get_array(g, K_TYPES, POCKETLLM_GGUF_INT32, "int32", &types))) return st;
    if (scores && scores->n != n)
        return pl_fail(POCKETLLM_ERR_FORMAT, "metadata '%s' has %llu entries for %zu tokens", K_SCORES,
                       (unsigned long long)scores->n, n);
    if (types && types->n != n)
        return pl_fail(POCKETLLM_ERR_FORMAT, "metadata '%s' has %llu entries for %zu tokens", K_TYPES,
                       (unsigned long long)types->n, n);

    v->n_tokens = (int32_t)n;
    v->tokens = calloc(n, sizeof *v->tokens);
    v->eog = calloc(n, 1);
    if (!v->tokens || !v->eog || !pl_strmap_init(&v->text_to_id, n))
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory for a vocabulary of %zu tokens", n);

    for (size_t i = 0; i < n; i++) {
        pl_token *t = &v->tokens[i];
        uint64_t len;
        const char *text = pl_gguf_array_str(toks, i, &len);
        if (len >= UINT32_MAX) return pl_fail(POCKETLLM_ERR_FORMAT, "token %zu is too long", i);
        /* a NUL-terminated copy of its own (the file's bytes are not) */
        if (!(t->text = pl_arena_strndup(&v->arena, text, (size_t)len)))
            return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
        t->len = (uint32_t)len;
        if (t->len == 0) { /* llama.cpp names empty tokens this way */
            char name[32];
            int k = snprintf(name, sizeof name, "[EMPTY_%zu]", i);
            t->text = pl_arena_strndup(&v->arena, name, (size_t)k);
            if (!t->text) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
            t->len = (uint32_t)k;
        }
        uint64_t prev;
        int r = pl_strmap_put(&v->text_to_id, t->text, t->len, i, &prev);
        if (r < 0) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
        if (r == 0)
            return pl_fail(POCKETLLM_ERR_FORMAT, "tokens %llu and %zu have the same text", (unsigned long long)prev, i);

        if (scores) {
            if (scores->elem_type == POCKETLLM_GGUF_FLOAT32) memcpy(&t->score, scores->raw + 4 * i, 4);
            else {
                int32_t si;
                memcpy(&si, scores->raw + 4 * i, 4);
                t->score = (float)si;
            }
            if (isnan(t->score)) return pl_fail(POCKETLLM_ERR_FORMAT, "token %zu has a NaN score", i);
        }
        t->attr = PL_ATTR_NORMAL;
        if (types) {
            int32_t tt;
            memcpy(&tt, types->raw + 4 * i, 4);
            switch (tt) {
            case TT_UNKNOWN: t->attr = PL_ATTR_UNKNOWN; break;
            case TT_UNUSED: t->attr = PL_ATTR_UNUSED; break;
            case TT_NORMAL: t->attr = PL_ATTR_NORMAL; break;
            case TT_CONTROL: t->attr = PL_ATTR_CONTROL; break;
            case TT_USER_DEFINED: t->attr = PL_ATTR_USER_DEFINED; break;
            case TT_BYTE: t->attr = PL_ATTR_BYTE; break;
            default: t->attr = PL_ATTR_UNDEFINED; break;
            }
        }
        /* a byte token's text names its byte; anything else (<0x-1>,
         * <0xZZ>) would render as a wrong byte */
        if (t->attr == PL_ATTR_BYTE &&
            !(t->len == 6 && memcmp(t->text, "<0x", 3) == 0 && is_hex(t->text[3]) && is_hex(t->text[4]) &&
              t->text[5] == '>'))
            return pl_fail(POCKETLLM_ERR_FORMAT, "token %zu is a byte token but its text '%.16s' is not <0xHH>", i,
                           t->text);
    }
    return POCKETLLM_OK;
}

/* Special-token ids: defaults, then the GGUF keys (which must name a token
 * of the vocabulary). */
static pocketllm_status load_special_ids(pl_vocab *v, const pl_gguf *g) {
    const struct {
        const char *key;
        int32_t *id;
    } keys[] = {
        {"tokenizer.ggml.bos_token_id", &v->bos},         {"tokenizer.ggml.eos_token_id", &v->eos},
        {"tokenizer.ggml.eot_token_id", &v->eot},         {"tokenizer.ggml.eom_token_id", &v->eom},
        {"tokenizer.ggml.unknown_token_id", &v->unk},     {"tokenizer.ggml.seperator_token_id", &v->sep},
        {"tokenizer.ggml.padding_token_id", &v->pad},     {"tokenizer.ggml.mask_token_id", &v->mask},
        {"tokenizer.ggml.fim_pre_token_id", &v->fim_pre}, {"tokenizer.ggml.fim_suf_token_id", &v->fim_suf},
        {"tokenizer.ggml.fim_mid_token_id", &v->fim_mid}, {"tokenizer.ggml.fim_pad_token_id", &v->fim_pad},
        {"tokenizer.ggml.fim_rep_token_id", &v->fim_rep}, {"tokenizer.ggml.fim_sep_token_id", &v->fim_sep},
        /* deprecated names of the FIM ids */
        {"tokenizer.ggml.prefix_token_id", &v->fim_pre},  {"tokenizer.ggml.suffix_token_id", &v->fim_suf},
        {"tokenizer.ggml.middle_token_id", &v->fim_mid},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        int32_t *id = keys[i].id;
        if (*id >= v->n_tokens) *id = -1; /* a default the vocabulary is too small for */
        if (!pl_gguf_get(g, keys[i].key)) continue;
        const pocketllm_gguf_value *val = pl_gguf_get(g, keys[i].key);
        int64_t si;
        /* -1 (as int32, or 0xffffffff as uint32) is the converters' "none":
         * llama.cpp ignores it and keeps the default, and so do we */
        if (val->raw && pl_gguf_type_size(val->type) && !pl_gguf_scalar_i64(val->type, val->raw, &si) &&
            (si == -1 || si == 0xffffffff))
            continue;
        pl_error_clear();
        uint64_t u;
        pocketllm_status st = pl_gguf_get_u64(g, keys[i].key, 0, &u);
        if (st) return st;
        if (u >= (uint64_t)v->n_tokens)
            return pl_fail(POCKETLLM_ERR_FORMAT, "metadata '%s' = %llu is outside the vocabulary (%d tokens)",
                           keys[i].key, (unsigned long long)u, v->n_tokens);
        *id = (int32_t)u;
    }
    return POCKETLLM_OK;
}

/* Auto-detect a role from token texts when the file did not name it; the
 * chosen token is made a control token.  (llama.cpp takes the first match
 * in its hash map's order; we take the lowest id.) */
static void detect_role(pl_vocab *v, int32_t *role, const char *const *texts) {
    if (*role != -1) return;
    int32_t best = -1;
    for (; *texts; texts++) {
        int32_t id = find_str(v, *texts);
        if (id >= 0 && (best < 0 || id < best)) best = id;
    }
    if (best < 0) return;
    *role = best;
    v->tokens[best].attr |= PL_ATTR_CONTROL;
}

static const char *const EOT_TEXTS[] = {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
                                        "<|end_of_text|>", "<EOT>", "_<EOT>", "[EOT]",
                                        "<\xef\xbd\x9c" "end\xe2\x96\x81" "of\xe2\x96\x81" "sentence\xef\xbd\x9c>",
                                        "<end_of_utterance>", NULL};
static const char *const EOM_TEXTS[] = {"<|eom_id|>", NULL};
static const char *const FIM_PRE_TEXTS[] = {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>",
                                            "<\xef\xbd\x9c" "fim\xe2\x96\x81" "begin\xef\xbd\x9c>", "<PRE>",
                                            "\xe2\x96\x81<PRE>", "<|code_prefix|>", "<|prefix|>", NULL};
static const char *const FIM_SUF_TEXTS[] = {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>",
                                            "<\xef\xbd\x9c" "fim\xe2\x96\x81" "hole\xef\xbd\x9c>", "<SUF>",
                                            "\xe2\x96\x81<SUF>", "<|code_suffix|>", "<|suffix|>", NULL};
static const char *const FIM_MID_TEXTS[] = {"<|fim_middle|>", "<fim-middle>", "<fim_middle>",
                                            "<\xef\xbd\x9c" "fim\xe2\x96\x81" "end\xef\xbd\x9c>", "<MID>",
                                            "\xe2\x96\x81<MID>", "<|code_middle|>", "<|middle|>", NULL};
static const char *const FIM_PAD_TEXTS[] = {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]", NULL};
static const char *const FIM_REP_TEXTS[] = {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>", NULL};
static const char *const FIM_SEP_TEXTS[] = {"<|file_sep|>", NULL};
/* texts that end generation (llama.cpp's list) */
static const char *const EOG_TEXTS[] = {"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>",
                                        "<|calls|>", "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>",
                                        "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>", "<end_of_utterance>", "<eos>",
                                        "<turn|>", "<|tool_response>",
                                        "<\xef\xbd\x9c" "end\xe2\x96\x81" "of\xe2\x96\x81" "sentence\xef\xbd\x9c>",
                                        "[e~[", NULL};

/* The id of an end-of-generation token with this text, or -1. */
static int32_t eog_find_text(const pl_vocab *v, const char *s) {
    int32_t id = find_str(v, s);
    return id >= 0 && v->eog[id] ? id : -1;
}

/* Roles found by text, unused control tokens, the end-of-generation set. */
static void derive_roles(pl_vocab *v) {
    detect_role(v, &v->eot, EOT_TEXTS);
    detect_role(v, &v->eom, EOM_TEXTS);
    detect_role(v, &v->fim_pre, FIM_PRE_TEXTS);
    detect_role(v, &v->fim_suf, FIM_SUF_TEXTS);
    detect_role(v, &v->fim_mid, FIM_MID_TEXTS);
    detect_role(v, &v->fim_pad, FIM_PAD_TEXTS);
    detect_role(v, &v->fim_rep, FIM_REP_TEXTS);
    detect_role(v, &v->fim_sep, FIM_SEP_TEXTS);

    for (int32_t id = 0; id < v->n_tokens; id++) {
        pl_token *t = &v->tokens[id];
        if ((t->attr & PL_ATTR_CONTROL) && memmem(t->text, t->len, "unused", 6)) t->attr |= PL_ATTR_UNUSED;
    }

    if (v->fim_pad >= 0) v->eog[v->fim_pad] = 1;
    if (v->fim_rep >= 0) v->eog[v->fim_rep] = 1;
    if (v->fim_sep >= 0) v->eog[v->fim_sep] = 1;
    int32_t id;
    for (const char *const *t = EOG_TEXTS; *t; t++) {
        if ((id = find_str(v, *t)) < 0) continue;
        v->eog[id] = 1;
        v->tokens[id].attr |= PL_ATTR_CONTROL;
    }
    /* gpt-oss: these always render */
    static const char *const ALWAYS_SHOWN[] = {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>", NULL};
    for (const char *const *t = ALWAYS_SHOWN; *t; t++)
        if ((id = find_str(v, *t)) >= 0) v->tokens[id].attr = PL_ATTR_USER_DEFINED;
    if (v->eos >= 0) v->eog[v->eos] = 1;
    if (v->eot >= 0) v->eog[v->eot] = 1;
    if (v->eom >= 0) v->eog[v->eom] = 1;

    /* o200k_harmony and solar-open: <|end|> does not end generation when
     * <|return|> and <|call|> (or <|calls|> and <|flush|>) exist */
    int32_t end = eog_find_text(v, "<|end|>");
    bool has_return = eog_find_text(v, "<|return|>") >= 0, has_flush = eog_find_text(v, "<|flush|>") >= 0;
    bool has_call = eog_find_text(v, "<|call|>") >= 0 || eog_find_text(v, "<|calls|>") >= 0;
    if (end >= 0 && has_call && (has_return || has_flush)) {
        v->eog[end] = 0;
        v->tokens[end].attr = PL_ATTR_USER_DEFINED;
    }
    /* gemma4 and paddleocr: </s> is not an end of generation there */
    int32_t s = eog_find_text(v, "</s>");
    if (s >= 0 && eog_find_text(v, "<|tool_response>") >= 0) {
        v->eog[s] = 0;
        v->tokens[s].attr = PL_ATTR_NORMAL;
    }
}

static bool contains(const char *hay, const char *needle) { return hay && strstr(hay, needle) != NULL; }

/* Attribute fixes llama.cpp applies by model name, pre-tokenizer or
 * architecture (after the piece cache, so they only change how special
 * tokens swallow neighbouring white space). */
static void fix_attributes(pl_vocab *v, const pl_gguf *g) {
    const char *name = pl_gguf_get_str(g, "general.name");
    const char *pre = pl_gguf_get_str(g, K_PRE);
    const char *arch = pl_gguf_get_str(g, "general.architecture");
    char lname[256] = "";
    if (name) {
        size_t k = 0;
        for (; name[k] && k + 1 < sizeof lname; k++) lname[k] = (char)tolower((unsigned char)name[k]);
        lname[k] = '\0';
    }
    int32_t id;
    if (contains(pre, "jina-v2-de") || contains(pre, "jina-v2-es") || contains(pre, "jina-v2-code") ||
        contains(arch, "nomic-bert-moe") || contains(arch, "jina-bert-v3")) {
        if ((id = find_str(v, "<mask>")) >= 0) v->tokens[id].attr |= PL_ATTR_LSTRIP;
    } else if (contains(lname, "phi-3") || contains(lname, "phi3")) {
        for (size_t i = 0; i < v->specials.n; i++) v->tokens[v->specials.ids[i]].attr |= PL_ATTR_RSTRIP;
        if ((id = find_str(v, "</s>")) >= 0) v->tokens[id].attr |= PL_ATTR_RSTRIP;
        static const char *const KEEP[] = {"<unk>", "<s>", "<|endoftext|>"};
        for (size_t i = 0; i < 3; i++)
            if ((id = find_str(v, KEEP[i])) >= 0) v->tokens[id].attr &= ~(uint32_t)PL_ATTR_RSTRIP;
    } else if (contains(lname, "modern-bert")) {
        if ((id = find_str(v, "[MASK]")) >= 0) v->tokens[id].attr |= PL_ATTR_LSTRIP;
    }
}

static void byte_tokens_spm(pl_vocab *v) {
    static const char hex[] = "0123456789ABCDEF";
    for (int b = 0; b < 256; b++) {
        char buf[7] = {'<', '0', 'x', hex[b >> 4], hex[b & 15], '>', 0};
        int32_t id = pl_vocab_find(v, buf, 6);
        if (id < 0) {
            char c = (char)b;
            id = pl_vocab_find(v, &c, 1);
        }
        v->spm_byte_token[b] = id;
    }
}

static pocketllm_status load(pl_vocab *v, const pl_gguf *g, const char *model) {
    pocketllm_status st;
    const char *pre = get_string(g, K_PRE, &st);
    if (st) return st;
    snprintf(v->model_name, sizeof v->model_name, "%s", model);
    snprintf(v->pre_name, sizeof v->pre_name, "%s", pre ? pre : "");
    v->bos = v->eos = v->eot = v->eom = v->unk = v->sep = v->pad = v->mask = -1;
    v->fim_pre = v->fim_suf = v->fim_mid = v->fim_pad = v->fim_rep = v->fim_sep = -1;

    if (strcmp(model, "llama") == 0) {
        v->type = PL_VOCAB_SPM;
        v->bos = 1, v->eos = 2, v->unk = 0;
        v->add_space_prefix = true;
        v->add_bos = true;
    } else if (strcmp(model, "gpt2") == 0) {
        v->type = PL_VOCAB_BPE;
        v->bos = 11, v->eos = 11; /* llama.cpp's defaults for BPE */
        pl_pretok_info info;
        const char *name = pre && pre[0] ? pre : "default"; /* llama.cpp: a missing name means "default" */
        if (!pl_pretok_find(name, &info))
            return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "pre-tokenizer '%s' (%s) is not supported", name, K_PRE);
        v->pretok = info.pretok;
        v->clean_spaces = info.clean_spaces;
        v->ignore_merges = info.ignore_merges;
        v->add_bos = info.add_bos;
    } else {
        static const char *const KNOWN[] = {"bert", "t5", "rwkv", "plamo2", "gemma4", "hybriddna", "whitespace", NULL};
        for (const char *const *k = KNOWN; *k; k++)
            if (strcmp(*k, model) == 0)
                return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "tokenizer model '%s' is not supported (gpt2 and llama are)",
                               model);
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "unknown tokenizer model '%s'", model);
    }
    if ((st = get_bool(g, "tokenizer.ggml.add_space_prefix", &v->add_space_prefix))) return st;
    bool remove_extra_ws = false; /* read (and checked) like llama.cpp; SPM and BPE ignore it */
    if ((st = get_bool(g, "tokenizer.ggml.remove_extra_whitespaces", &remove_extra_ws))) return st;

    if ((st = load_tokens(v, g))) return st;
    if (v->type == PL_VOCAB_BPE) {
        const pocketllm_gguf_value *merges;
        if ((st = get_array(g, K_MERGES, POCKETLLM_GGUF_STRING, "strings", &merges))) return st;
        if (!merges) return pl_fail(POCKETLLM_ERR_FORMAT, "metadata '%s' is missing (a gpt2 tokenizer needs it)", K_MERGES);
        if ((st = pl_bpe_build(v, merges))) return st;
    } else {
        byte_tokens_spm(v);
    }
    if ((st = load_special_ids(v, g))) return st;
    if ((st = get_bool(g, "tokenizer.ggml.add_bos_token", &v->add_bos))) return st;
    if ((st = get_bool(g, "tokenizer.ggml.add_eos_token", &v->add_eos))) return st;
    bool add_sep = false;
    if ((st = get_bool(g, "tokenizer.ggml.add_sep_token", &add_sep))) return st;

    derive_roles(v);
    if ((st = pl_specials_build(v))) return st;
    if ((st = pl_pieces_build(v))) return st;
    fix_attributes(v, g);
    return POCKETLLM_OK;
}

pocketllm_status pl_vocab_load(const pl_gguf *g, pl_vocab **out) {
    *out = NULL;
    pocketllm_status st;
    const char *model = get_string(g, K_MODEL, &st);
    if (st) return st;
    if (!model || strcmp(model, "no_vocab") == 0 || strcmp(model, "none") == 0) return POCKETLLM_OK;
    pl_vocab *v = calloc(1, sizeof *v);
    if (!v) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    if ((st = load(v, g, model))) {
        pl_vocab_free(v);
        return st;
    }
    *out = v;
    return POCKETLLM_OK;
}
