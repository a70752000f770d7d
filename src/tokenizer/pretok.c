/*
 * pretok.c -- the BPE pre-tokenizers.
 *
 * llama.cpp splits text for BPE with a list of regular expressions per
 * pre-tokenizer name, applied one after the other: each expression cuts
 * every current piece into its matches and the gaps between them.  Four of
 * those expressions (GPT-2's, Llama 3's, Qwen2's, Qwen3.5's) it runs through
 * hand-written scanners; the rest through std::regex (ECMAScript,
 * leftmost-first) over a "collapsed" copy of the text (one byte per code
 * point: ASCII as is, other white space as \v, other code points as a byte
 * naming their category) or over the code points with non-ASCII white space
 * turned into \v.  Each stage below reproduces one of those expressions
 * exactly, quirks included, on code points and their flags.
 *
 * The regular expressions themselves come from the models' tokenizer.json
 * files by way of llama.cpp (llama-vocab.cpp, MIT); the character ranges of
 * DeepSeek's expressions are reproduced here as data.
 */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "tokenizer/pretok.h"
#include "tokenizer/unicode.h"

enum pl_pretok_stage {
    S_END = 0,
    S_GPT2,            /* 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S) */
    S_LLAMA3,          /* (?i:'s|...)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+ */
    S_QWEN2,           /* as S_LLAMA3 with \p{N} single */
    S_QWEN35,          /* as S_QWEN2 with [\p{L}\p{M}]+ letter runs */
    S_NL_EACH,         /* [\r\n] */
    S_DSLLM_LETTERS,   /* \s?[A-Za-zµÀ-Ö...]+ */
    S_DSLLM_PUNCT,     /* \s?[!-/:-~！-／：-～‘-‟　-。]+ */
    S_TRAIL_WS,        /* \s+$ */
    S_CJK_RUN,         /* [一-龥ࠀ-一가-퟿]+ */
    S_NUM_RUN,         /* \p{N}+ */
    S_NUM_EACH,        /* \p{N} */
    S_WS_LETTERS,      /* \s?\p{L}+ */
    S_WS_PUNCTS,       /* \s?\p{P}+ */
    S_FALCON_PUNCT,    /* [\p{P}\$\+<=>\^~\|`]+ */
    S_DEFAULT_PUNCT,   /* [\p{P}\$\+<=>\^~\|]+ */
    S_DIGIT3           /* [0-9][0-9][0-9] */
};

static const uint8_t P_DEFAULT[] = {S_DEFAULT_PUNCT, S_GPT2, S_NUM_RUN, S_DIGIT3, S_END};
static const uint8_t P_GPT2[] = {S_GPT2, S_END};
static const uint8_t P_LLAMA3[] = {S_LLAMA3, S_END};
static const uint8_t P_QWEN2[] = {S_QWEN2, S_END};
static const uint8_t P_QWEN35[] = {S_QWEN35, S_END};
static const uint8_t P_DSLLM[] = {S_NL_EACH, S_DSLLM_LETTERS, S_DSLLM_PUNCT, S_TRAIL_WS, S_CJK_RUN, S_NUM_RUN, S_END};
static const uint8_t P_DSCODER[] = {S_NL_EACH, S_WS_LETTERS, S_WS_PUNCTS, S_CJK_RUN, S_NUM_EACH, S_END};
static const uint8_t P_FALCON[] = {S_FALCON_PUNCT, S_GPT2, S_DIGIT3, S_END};
static const uint8_t P_STARCODER[] = {S_NUM_EACH, S_GPT2, S_END};

static const pl_pretok K_DEFAULT = {"default", P_DEFAULT};
static const pl_pretok K_GPT2 = {"gpt2", P_GPT2};
static const pl_pretok K_LLAMA3 = {"llama3", P_LLAMA3};
static const pl_pretok K_QWEN2 = {"qwen2", P_QWEN2};
static const pl_pretok K_QWEN35 = {"qwen35", P_QWEN35};
static const pl_pretok K_DSLLM = {"deepseek-llm", P_DSLLM};
static const pl_pretok K_DSCODER = {"deepseek-coder", P_DSCODER};
static const pl_pretok K_FALCON = {"falcon", P_FALCON};
static const pl_pretok K_STARCODER = {"starcoder", P_STARCODER};

/* tokenizer.ggml.pre names and the settings llama.cpp gives each (its
 * load(): clean_spaces is on for BPE unless a name turns it off). */
static const struct {
    const char *name;
    const pl_pretok *p;
    bool clean_spaces, ignore_merges, add_bos;
} NAMES[] = {
    {"default", &K_DEFAULT, true, false, false},
    {"llama3", &K_LLAMA3, true, true, true},
    {"llama-v3", &K_LLAMA3, true, true, true},
    {"llama-bpe", &K_LLAMA3, true, true, true},
    {"falcon3", &K_LLAMA3, true, true, true},
    {"falcon-h1", &K_LLAMA3, true, true, true},
    {"pixtral", &K_LLAMA3, true, true, true},
    {"midm-2.0", &K_LLAMA3, true, true, true},
    {"lfm2", &K_LLAMA3, true, true, true},
    {"jina-v5-nano", &K_LLAMA3, true, true, true},
    {"dbrx", &K_LLAMA3, true, false, false},
    {"smaug-bpe", &K_LLAMA3, true, false, false},
    {"deepseek-llm", &K_DSLLM, false, false, false},
    {"deepseek-coder", &K_DSCODER, false, false, false},
    {"falcon", &K_FALCON, true, false, false},
    {"mpt", &K_GPT2, true, false, false},
    {"starcoder", &K_STARCODER, true, false, false},
    {"gpt-2", &K_GPT2, true, false, false},
    {"phi-2", &K_GPT2, true, false, false},
    {"jina-es", &K_GPT2, true, false, false},
    {"jina-de", &K_GPT2, true, false, false},
    {"gigachat", &K_GPT2, true, false, false},
    {"jina-v2-es", &K_GPT2, true, false, false},
    {"jina-v2-de", &K_GPT2, true, false, false},
    {"a.x-4.0", &K_GPT2, true, false, false},
    {"mellum", &K_GPT2, true, false, false},
    {"modern-bert", &K_GPT2, true, false, false},
    {"jina-v1-en", &K_GPT2, true, false, false},
    {"jina-v2-code", &K_GPT2, true, false, false},
    {"roberta-bpe", &K_GPT2, true, false, false},
    {"refact", &K_STARCODER, true, false, false},
    {"command-r", &K_STARCODER, false, false, false},
    {"qwen2", &K_QWEN2, false, false, false},
    {"deepseek-r1-qwen", &K_QWEN2, false, false, false},
    {"kormo", &K_QWEN2, false, false, false},
    {"f2llmv2", &K_QWEN2, false, false, false},
    {"qwen35", &K_QWEN35, false, false, false},
    {"stablelm2", &K_QWEN2, true, false, false},
    {"olmo", &K_GPT2, true, false, false},
    {"smollm", &K_STARCODER, false, false, false},
    {"codeshell", &K_STARCODER, true, false, false},
    {"exaone", &K_STARCODER, true, false, false},
    {"exaone4", &K_GPT2, true, false, false},
    {"minerva-7b", &K_STARCODER, true, false, false},
    {"megrez", &K_QWEN2, true, false, false},
    {"jais", &K_GPT2, true, false, false},
    {"trillion", &K_GPT2, false, false, false},
    {"granite-docling", &K_GPT2, false, false, false},
    {"hunyuan", &K_QWEN2, false, false, false},
    {"solar-open", &K_QWEN2, false, false, false},
    {"grok-2", &K_QWEN2, false, false, false},
    {"mellum2", &K_STARCODER, true, false, false},
};

bool pl_pretok_find(const char *name, pl_pretok_info *out) {
    for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++) {
        if (strcmp(NAMES[i].name, name) != 0) continue;
        out->pretok = NAMES[i].p;
        out->clean_spaces = NAMES[i].clean_spaces;
        out->ignore_merges = NAMES[i].ignore_merges;
        out->add_bos = NAMES[i].add_bos;
        return true;
    }
    return false;
}

void pl_lens_free(pl_lens *l) {
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

static pocketllm_status lens_push(pl_lens *l, size_t len) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        uint32_t *v = realloc(l->v, cap * sizeof *v);
        if (!v) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory while pre-tokenizing");
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = (uint32_t)len;
    return POCKETLLM_OK;
}

/* ---- character classes of the std::regex stages ------------------------ */

/* DeepSeek LLM's letter and punctuation classes and the CJK class shared by
 * both DeepSeek pre-tokenizers: the bracket expressions of their
 * tokenizer.json (via llama.cpp), range by range, as code points -- written
 * out as numbers because several of them (U+212A KELVIN SIGN, U+2126 OHM
 * SIGN, ...) are canonically equivalent to other characters and would not
 * survive an editor's normalization. */
static const uint32_t DSLLM_LETTERS[][2] = {
    {0x41, 0x5a}, {0x61, 0x7a}, {0xb5, 0xb5}, {0xc0, 0xd6}, {0xd8, 0xf6}, {0xf8, 0x1ba}, {0x1bc, 0x1bf},
    {0x1c4, 0x293}, {0x295, 0x2af}, {0x370, 0x373}, {0x376, 0x376}, {0x377, 0x377}, {0x37b, 0x37d},
    {0x37f, 0x37f}, {0x386, 0x386}, {0x388, 0x38a}, {0x38c, 0x38c}, {0x38e, 0x3a1}, {0x3a3, 0x3f5},
    {0x3f7, 0x481}, {0x48a, 0x52f}, {0x531, 0x556}, {0x10a0, 0x10c5}, {0x13a0, 0x13f5}, {0x13f8, 0x13fd},
    {0x1c90, 0x1cba}, {0x1cbd, 0x1cbf}, {0x1d00, 0x1d2b}, {0x1d6b, 0x1d77}, {0x1d79, 0x1d9a}, {0x1e00, 0x1f15},
    {0x1f18, 0x1f1d}, {0x1f20, 0x1f45}, {0x1f48, 0x1f4d}, {0x1f50, 0x1f57}, {0x1f59, 0x1f59}, {0x1f5b, 0x1f5b},
    {0x1f5d, 0x1f5d}, {0x1f5f, 0x1f7d}, {0x1f80, 0x1fb4}, {0x1fb6, 0x1fbc}, {0x1fbe, 0x1fbe}, {0x1fc2, 0x1fc4},
    {0x1fc6, 0x1fcc}, {0x1fd0, 0x1fd3}, {0x1fd6, 0x1fdb}, {0x1fe0, 0x1fec}, {0x1ff2, 0x1ff4}, {0x1ff6, 0x1ffc},
    {0x2102, 0x2102}, {0x2107, 0x2107}, {0x210a, 0x2113}, {0x2115, 0x2115}, {0x2119, 0x211d}, {0x2124, 0x2124},
    {0x2126, 0x2126}, {0x2128, 0x2128}, {0x212a, 0x212d}, {0x212f, 0x2134}, {0x2139, 0x2139}, {0x213c, 0x213f},
    {0x2145, 0x2149}, {0x214e, 0x214e}, {0x2183, 0x2183}, {0x2184, 0x2184}, {0x2c00, 0x2c7b}, {0x2c7e, 0x2ce4},
    {0x2ceb, 0x2cee}, {0x2cf2, 0x2cf2}, {0x2cf3, 0x2cf3}, {0xa640, 0xa66d}, {0xa680, 0xa69b}, {0xa722, 0xa76f},
    {0xa771, 0xa787}, {0xa78b, 0xa78e}, {0xab70, 0xabbf}, {0xfb00, 0xfb06}, {0xfb13, 0xfb17}, {0xff21, 0xff3a},
    {0xff41, 0xff5a}, {0x10400, 0x1044f}, {0x104b0, 0x104d3}, {0x104d8, 0x104fb}, {0x10c80, 0x10cb2},
    {0x10cc0, 0x10cf2}, {0x118a0, 0x118df}, {0x1e900, 0x1e943},
};
static const uint32_t DSLLM_PUNCT[][2] = {
    {0x21, 0x2f}, {0x3a, 0x7e}, {0xff01, 0xff0f}, {0xff1a, 0xff5e}, {0x2018, 0x201f}, {0x3000, 0x3002},
};
static const uint32_t CJK[][2] = {
    {0x4e00, 0x9fa5}, {0x800, 0x4e00}, {0xac00, 0xd7ff},
};

typedef struct cp_ranges {
    const uint32_t (*r)[2];
    size_t n;
} cp_ranges;

#define RANGES(a) ((cp_ranges){a, sizeof a / sizeof a[0]})

static bool in_ranges(cp_ranges r, uint32_t cp) {
    for (size_t i = 0; i < r.n; i++)
        if (cp >= r.r[i][0] && cp <= r.r[i][1]) return true;
    return false;
}

/* Does code point cp (flags f) belong to the class a stage matches?  The
 * wide-regex classes see non-ASCII white space as \v, which none of them
 * contains; \s is White_Space either way (ASCII \t..\r and space as is,
 * the rest as \v).  For ASCII, the collapsed \p{..} sets coincide with the
 * category flags. */
static bool in_class(int stage, uint32_t cp, uint16_t f) {
    bool ws = (f & PL_UCP_WHITESPACE) != 0;
    switch (stage) {
    case S_NL_EACH: return cp == '\r' || cp == '\n';
    case S_DSLLM_LETTERS: return !(ws && cp > 0x7f) && in_ranges(RANGES(DSLLM_LETTERS), cp);
    case S_DSLLM_PUNCT: return !(ws && cp > 0x7f) && in_ranges(RANGES(DSLLM_PUNCT), cp);
    case S_CJK_RUN: return !(ws && cp > 0x7f) && in_ranges(RANGES(CJK), cp);
    case S_NUM_RUN:
    case S_NUM_EACH: return !ws && (f & PL_UCP_NUMBER);
    case S_WS_LETTERS: return !ws && (f & PL_UCP_LETTER);
    case S_WS_PUNCTS: return !ws && (f & PL_UCP_PUNCT);
    case S_FALCON_PUNCT:
        if (cp == '`') return true;
        /* fall through */
    case S_DEFAULT_PUNCT:
        if (cp == '$' || cp == '+' || cp == '<' || cp == '=' || cp == '>' || cp == '^' || cp == '~' || cp == '|')
            return true;
        return !ws && (f & PL_UCP_PUNCT);
    case S_DIGIT3: return cp >= '0' && cp <= '9';
    default: return false;
    }
}

/* Leftmost match of the stage's expression in [from, end), as std::regex
 * searching forward finds it.  Returns false when there is none. */
static bool regex_find(int stage, const uint32_t *cps, const uint16_t *fl, size_t from, size_t end, size_t *ms,
                       size_t *me) {
    switch (stage) {
    case S_NL_EACH:
    case S_NUM_EACH:
        for (size_t p = from; p < end; p++)
            if (in_class(stage, cps[p], fl[p])) return *ms = p, *me = p + 1, true;
        return false;
    case S_CJK_RUN:
    case S_NUM_RUN:
    case S_FALCON_PUNCT:
    case S_DEFAULT_PUNCT:
        for (size_t p = from; p < end; p++) {
            if (!in_class(stage, cps[p], fl[p])) continue;
            size_t q = p + 1;
            while (q < end && in_class(stage, cps[q], fl[q])) q++;
            return *ms = p, *me = q, true;
        }
        return false;
    case S_DSLLM_LETTERS:
    case S_DSLLM_PUNCT:
    case S_WS_LETTERS:
    case S_WS_PUNCTS:
        /* \s?X+ where X holds no white space: an optional white space is
         * taken when a member of X follows it */
        for (size_t p = from; p < end; p++) {
            size_t first;
            if ((fl[p] & PL_UCP_WHITESPACE) && p + 1 < end && in_class(stage, cps[p + 1], fl[p + 1])) first = p + 1;
            else if (in_class(stage, cps[p], fl[p])) first = p;
            else continue;
            size_t q = first + 1;
            while (q < end && in_class(stage, cps[q], fl[q])) q++;
            return *ms = p, *me = q, true;
        }
        return false;
    case S_TRAIL_WS: {
        size_t q = end;
        while (q > from && (fl[q - 1] & PL_UCP_WHITESPACE)) q--;
        if (q == end) return false;
        return *ms = q, *me = end, true;
    }
    case S_DIGIT3:
        for (size_t p = from; p + 3 <= end; p++)
            if (in_class(stage, cps[p], fl[p]) && in_class(stage, cps[p + 1], fl[p + 1]) &&
                in_class(stage, cps[p + 2], fl[p + 2]))
                return *ms = p, *me = p + 3, true;
        return false;
    default: return false;
    }
}

/* One regex stage over the piece [ini, end): matches and the gaps between
 * them become pieces. */
static pocketllm_status split_regex(int stage, const uint32_t *cps, const uint16_t *fl, size_t ini, size_t end,
                                    pl_lens *out) {
    pocketllm_status st;
    size_t at = ini, ms, me;
    while (at < end && regex_find(stage, cps, fl, at, end, &ms, &me)) {
        if (ms > at && (st = lens_push(out, ms - at))) return st;
        if ((st = lens_push(out, me - ms))) return st;
        at = me;
    }
    if (at < end && (st = lens_push(out, end - at))) return st;
    return POCKETLLM_OK;
}

/* ---- llama.cpp's hand-written splitters --------------------------------- */

#define OUT_OF_RANGE 0xffffffffu

typedef struct scan {
    const uint32_t *cps;
    const uint16_t *fl;
    size_t end, prev;
    pl_lens *out;
    pocketllm_status st;
} scan;

static inline uint32_t cpt_at(const scan *s, size_t pos) { return pos < s->end ? s->cps[pos] : OUT_OF_RANGE; }
static inline uint16_t flags_at(const scan *s, size_t pos) { return pos < s->end ? s->fl[pos] : 0; }

/* Close the word that ends at `end`; returns its length. */
static size_t emit(scan *s, size_t end) {
    size_t len = end - s->prev;
    if (len > 0 && !s->st) s->st = lens_push(s->out, len);
    s->prev = end;
    return len;
}

#define NOT_WLN(f) (!((f) & (PL_UCP_WHITESPACE | PL_UCP_LETTER | PL_UCP_NUMBER)))

static void split_gpt2(scan *s, size_t pos) {
    while (pos < s->end) {
        uint32_t cpt = s->cps[pos];
        uint16_t f = s->fl[pos];
        /* 's|'t|'re|'ve|'m|'ll|'d */
        if (cpt == '\'' && pos + 1 < s->end) {
            uint32_t n1 = s->cps[pos + 1];
            if (n1 == 's' || n1 == 't' || n1 == 'm' || n1 == 'd') {
                pos += emit(s, pos + 2);
                continue;
            }
            if (pos + 2 < s->end) {
                uint32_t n2 = s->cps[pos + 2];
                if ((n1 == 'r' && n2 == 'e') || (n1 == 'v' && n2 == 'e') || (n1 == 'l' && n2 == 'l')) {
                    pos += emit(s, pos + 3);
                    continue;
                }
            }
        }
        uint16_t f2 = cpt == ' ' ? flags_at(s, pos + 1) : f;
        if (f2 & PL_UCP_LETTER) { /*  ?\p{L}+ */
            pos += cpt == ' ';
            while (f2 & PL_UCP_LETTER) f2 = flags_at(s, ++pos);
            emit(s, pos);
            continue;
        }
        if (f2 & PL_UCP_NUMBER) { /*  ?\p{N}+ */
            pos += cpt == ' ';
            while (f2 & PL_UCP_NUMBER) f2 = flags_at(s, ++pos);
            emit(s, pos);
            continue;
        }
        if (NOT_WLN(f2) && f2) { /*  ?[^\s\p{L}\p{N}]+ */
            pos += cpt == ' ';
            while (NOT_WLN(f2) && f2) f2 = flags_at(s, ++pos);
            emit(s, pos);
            continue;
        }
        size_t nws = 0;
        while (flags_at(s, pos + nws) & PL_UCP_WHITESPACE) nws++;
        if (nws > 1 && cpt_at(s, pos + nws) != OUT_OF_RANGE) { /* \s+(?!\S) */
            pos += nws - 1;
            emit(s, pos);
            continue;
        }
        if (nws > 0) { /* \s+ */
            pos += nws;
            emit(s, pos);
            continue;
        }
        emit(s, ++pos);
    }
}

/* Llama 3, Qwen2 and Qwen3.5 share one scanner: `max_digits` is 3 for
 * Llama 3 (\p{N}{1,3}) and 1 for the Qwens; `marks` lets letter runs take
 * combining marks (Qwen3.5's [\p{L}\p{M}]+). */
static void split_llama3_family(scan *s, size_t pos, size_t max_digits, bool marks) {
    const uint16_t word = PL_UCP_LETTER | (marks ? PL_UCP_MARK : 0);
    const uint16_t notpunct = PL_UCP_WHITESPACE | PL_UCP_LETTER | PL_UCP_NUMBER | (marks ? PL_UCP_MARK : 0);
    while (pos < s->end) {
        uint32_t cpt = s->cps[pos];
        uint16_t f = s->fl[pos];
        /* (?i:'s|'t|'re|'ve|'m|'ll|'d) */
        if (cpt == '\'' && pos + 1 < s->end) {
            uint32_t n1 = pl_ucp_tolower(s->cps[pos + 1]);
            if (n1 == 's' || n1 == 't' || n1 == 'm' || n1 == 'd') {
                pos += emit(s, pos + 2);
                continue;
            }
            if (pos + 2 < s->end) {
                uint32_t n2 = pl_ucp_tolower(s->cps[pos + 2]);
                if ((n1 == 'r' && n2 == 'e') || (n1 == 'v' && n2 == 'e') || (n1 == 'l' && n2 == 'l')) {
                    pos += emit(s, pos + 3);
                    continue;
                }
            }
        }
        /* [^\r\n\p{L}\p{N}]?\p{L}+  (Qwen3.5: ...?[\p{L}\p{M}]+) */
        if (!(cpt == '\r' || cpt == '\n' || (f & PL_UCP_NUMBER))) {
            if ((f & word) || (flags_at(s, pos + 1) & word)) {
                pos++;
                while (flags_at(s, pos) & word) pos++;
                emit(s, pos);
                continue;
            }
        }
        /* \p{N}{1,3} or \p{N} */
        if (f & PL_UCP_NUMBER) {
            size_t ini = pos;
            while (flags_at(s, pos) & PL_UCP_NUMBER) {
                if (++pos - ini >= max_digits) {
                    emit(s, pos);
                    ini = pos;
                }
            }
            emit(s, pos);
            continue;
        }
        /*  ?[^\s\p{L}\p{N}]+[\r\n]*  -- llama.cpp tests this code point's
         * flags (not the next one's) for being defined */
        uint16_t f2 = cpt == ' ' ? flags_at(s, pos + 1) : f;
        if (!(f2 & notpunct) && f) {
            pos += cpt == ' ';
            while (!(f2 & notpunct) && f2) f2 = flags_at(s, ++pos);
            uint32_t c2 = cpt_at(s, pos);
            while (c2 == '\r' || c2 == '\n') c2 = cpt_at(s, ++pos);
            emit(s, pos);
            continue;
        }
        size_t nws = 0, last_rn = 0;
        while (flags_at(s, pos + nws) & PL_UCP_WHITESPACE) {
            uint32_t c2 = cpt_at(s, pos + nws);
            if (c2 == '\r' || c2 == '\n') last_rn = pos + nws + 1;
            nws++;
        }
        if (last_rn > 0) { /* \s*[\r\n]+ */
            pos = last_rn;
            emit(s, pos);
            continue;
        }
        if (nws > 1 && cpt_at(s, pos + nws) != OUT_OF_RANGE) { /* \s+(?!\S) */
            pos += nws - 1;
            emit(s, pos);
            continue;
        }
        if (nws > 0) { /* \s+ */
            pos += nws;
            emit(s, pos);
            continue;
        }
        emit(s, ++pos);
    }
}

static pocketllm_status split_custom(int stage, const uint32_t *cps, const uint16_t *fl, size_t ini, size_t end,
                                     pl_lens *out) {
    scan s = {cps, fl, end, ini, out, POCKETLLM_OK};
    switch (stage) {
    case S_GPT2: split_gpt2(&s, ini); break;
    case S_LLAMA3: split_llama3_family(&s, ini, 3, false); break;
    case S_QWEN2: split_llama3_family(&s, ini, 1, false); break;
    case S_QWEN35: split_llama3_family(&s, ini, 1, true); break;
    default: return pl_fail(POCKETLLM_ERR_INTERNAL, "pre-tokenizer stage %d is not a scanner", stage);
    }
    return s.st;
}

pocketllm_status pl_pretok_split(const pl_pretok *p, const uint32_t *cps, const uint16_t *fl, size_t n,
                                 pl_lens *out, pl_lens *tmp) {
    pocketllm_status st;
    out->n = 0;
    if (n == 0) return POCKETLLM_OK;
    if ((st = lens_push(out, n))) return st;
    for (const uint8_t *stage = p->stages; *stage != S_END; stage++) {
        pl_lens t = *tmp;
        *tmp = *out;
        *out = t;
        out->n = 0;
        size_t at = 0;
        for (size_t i = 0; i < tmp->n; i++) {
            size_t len = tmp->v[i];
            bool custom = *stage == S_GPT2 || *stage == S_LLAMA3 || *stage == S_QWEN2 || *stage == S_QWEN35;
            st = custom ? split_custom(*stage, cps, fl, at, at + len, out) : split_regex(*stage, cps, fl, at, at + len, out);
            if (st) return st;
            at += len;
        }
    }
    return POCKETLLM_OK;
}
