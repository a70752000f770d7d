/*
 * pl_tok_gen.c -- test inputs for the tokenizer comparisons with llama.cpp,
 * generated from a seed so that a failure replays.
 *
 *   pl_tok_gen text MODEL N SEED OUT   N strings (records: u32 length, bytes)
 *   pl_tok_gen ids MODEL N SEED OUT    N id sequences (records: u32 count, i32 ids)
 *
 * Strings are built from segments: words in many scripts, emoji with skin
 * tones, flags and ZWJ sequences, combining marks, runs of white space and
 * new lines (ASCII and Unicode), digit runs in several number systems,
 * English contractions in all cases, punctuation and symbols, code, the
 * vocabulary's own special tokens (whole, cut short, next to spaces),
 * malformed UTF-8 (stray and truncated sequences, overlong forms,
 * surrogates, bytes F8..FF), NUL and other control bytes, and very long
 * runs.  One thing is left out on purpose: 4-byte sequences that decode
 * beyond U+10FFFF, on which llama.cpp aborts (see pl_utf8_decode).
 * Id sequences mix random ids with the ids of special tokens, byte tokens
 * and the tokens of generated text, so that detokenizing meets partial
 * UTF-8 characters, clean-up patterns and leading spaces.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "model/model.h"
#include "pocketllm.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "pl_tok_gen: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

typedef struct str {
    char *p;
    size_t n, cap;
} str;

static void put(str *s, const void *b, size_t n) {
    if (s->n + n + 1 > s->cap) {
        s->cap = 2 * (s->n + n + 1);
        s->p = realloc(s->p, s->cap);
        if (!s->p) die("out of memory");
    }
    memcpy(s->p + s->n, b, n);
    s->n += n;
}
static void puts_(str *s, const char *z) { put(s, z, strlen(z)); }
static void putc_(str *s, int c) {
    char ch = (char)c;
    put(s, &ch, 1);
}
static void put_cp(str *s, uint32_t cp) {
    uint8_t b[4];
    put(s, b, pl_utf8_encode(cp, b));
}

static pl_rng R;
static uint64_t below(uint64_t n) { return pl_rng_below(&R, n); }
static uint32_t in_range(uint32_t lo, uint32_t hi) { return lo + (uint32_t)below(hi - lo + 1); }
static int chance(int percent) { return (int)below(100) < percent; }

/* letter ranges of many scripts (first, last) */
static const uint32_t SCRIPTS[][2] = {
    {'a', 'z'},         {'A', 'Z'},         {0xc0, 0xff},       {0x100, 0x17f},     {0x180, 0x24f},
    {0x391, 0x3c9},     {0x410, 0x44f},     {0x531, 0x586},     {0x5d0, 0x5ea},     {0x621, 0x64a},
    {0x905, 0x939},     {0x985, 0x9b9},     {0xb85, 0xbb9},     {0xe01, 0xe30},     {0x10d0, 0x10fa},
    {0xac00, 0xd7a3},   {0x1100, 0x11ff},   {0x3041, 0x3096},   {0x30a1, 0x30fa},   {0x4e00, 0x9fff},
    {0x3400, 0x4dbf},   {0x20000, 0x2a6df}, {0x2ebf0, 0x2ee5d}, {0x1200, 0x135a},   {0x1820, 0x1877},
    {0xf40, 0xf6c},     {0x13a0, 0x13f5},   {0xff21, 0xff3a},   {0xff41, 0xff5a},   {0x1d400, 0x1d7cb},
    {0x10400, 0x1044f}, {0x1e900, 0x1e943}, {0x1400, 0x167f},   {0x1e00, 0x1eff},   {0x1f00, 0x1ffe},
    {0x2c00, 0x2c5f},   {0xa640, 0xa69f},   {0x10a0, 0x10c5},   {0x0800, 0x082d},   {0xa000, 0xa48c},
};
static const uint32_t MARKS[][2] = {{0x300, 0x36f}, {0x483, 0x489}, {0x591, 0x5bd}, {0x64b, 0x65f},
                                    {0x93c, 0x94d}, {0x9bc, 0x9cd}, {0xe31, 0xe3a}, {0x20d0, 0x20f0},
                                    {0x302a, 0x302f}, {0xfe20, 0xfe2f}, {0x1ab0, 0x1ace}};
static const uint32_t SPACES[] = {' ', ' ', ' ', ' ', '\t', '\n', '\n', '\r', '\v', '\f', 0xa0, 0x85, 0x1680, 0x2000,
                                  0x2001, 0x2002, 0x2003, 0x2006, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f,
                                  0x3000, 0x200b, 0x1c, 0x1d, 0x1e, 0x1f, 0xfeff, 0x180e};
static const uint32_t DIGITS[][2] = {{'0', '9'},       {0x660, 0x669},   {0x6f0, 0x6f9},   {0x966, 0x96f},
                                     {0xff10, 0xff19}, {0x1d7ce, 0x1d7ff}, {0x2070, 0x2079}, {0xb2, 0xb3},
                                     {0x2150, 0x215f}, {0x2160, 0x2188}, {0x2460, 0x2473}, {0xbc, 0xbe},
                                     {0xe50, 0xe59},   {0x1040, 0x1049}, {0x3007, 0x3007}, {0x10107, 0x10133}};
static const uint32_t PUNCT[][2] = {{'!', '/'},       {':', '@'},       {'[', '`'},       {'{', '~'},
                                    {0xa1, 0xbf},     {0x2010, 0x2027}, {0x2030, 0x205e}, {0x3001, 0x303f},
                                    {0xff01, 0xff0f}, {0x2200, 0x22ff}, {0x20a0, 0x20c0}, {0x2190, 0x21ff},
                                    {0x2500, 0x257f}, {0xfe30, 0xfe4f}, {0x2e00, 0x2e5d}, {0x2ff0, 0x2fff},
                                    {0x31c0, 0x31ef}};
static const uint32_t EMOJI[][2] = {{0x1f600, 0x1f64f}, {0x1f300, 0x1f5ff}, {0x1f900, 0x1f9ff}, {0x2600, 0x26ff},
                                    {0x1f680, 0x1f6ff}, {0x2700, 0x27bf}, {0x1fa70, 0x1faff}};
static const char *const WORDS[] = {"Hello", "world", "the", "The", "quick", "brown", "fox", "jumps", "over", "lazy",
                                    "dog", "Once", "upon", "a", "time", "there", "was", "little", "girl", "named",
                                    "Lily", "she", "loved", "to", "play", "outside", "in", "park", "tokenizer",
                                    "llama", "UNICODE", "naïve", "café", "straße", "Ελληνικά", "русский", "日本語",
                                    "中文", "한국어", "עברית", "العربية", "हिन्दी", "ไทย", "I", "you", "don",
                                    "won", "it", "they", "we", "'", "''", "\"", "...", "?!", ",", "."};
static const char *const CONTRACTIONS[] = {"'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T", "'RE", "'Ve",
                                           "'M", "'LL", "'lL", "'D", "n't", "'", "' ", " ' ", " 's", " 're", " 'll",
                                           "’s", "’re", "'x", "'\n"};
static const char *const CODE[] = {
    "int main(int argc, char **argv) {\n    return 0;\n}\n",
    "def f(x):\n\treturn [y**2 for y in range(x) if y % 3 == 0]\n",
    "{\"key\": [1, 2.5e-3, true, null], \"s\": \"a\\\"b\"}",
    "for (size_t i = 0; i < n; ++i) a[i] += b[i] * 0.5f;",
    "<div class=\"x\">&lt;tag&gt; &amp; &#x1F600;</div>",
    "SELECT * FROM t WHERE id >= 10 AND name LIKE '%a_b%';",
    "x := y << 3 | z >> 2; if x != 0 && !done { panic(\"no\") }",
    "    ",
    "\t\t",
    "#include <stdio.h>\r\n",
    "$ ls -la | grep '^d' > /dev/null 2>&1",
    "a=>b; c->d; e::f; g!=h; i<=j; k++; --l; m**n; o//p; q%=r",
    "```python\nprint('hi')\n```",
    "1,234,567.89 $100 50% 3/4 2^10 1e-9 0x1F 0b1010",
};

static const char *const *g_specials;
static const size_t *g_special_len;
static const int32_t *g_special_ids;
static size_t g_n_specials;

static void seg_word(str *s) {
    const uint32_t *r = SCRIPTS[below(sizeof SCRIPTS / sizeof SCRIPTS[0])];
    size_t n = 1 + below(chance(10) ? 40 : 8);
    for (size_t i = 0; i < n; i++) put_cp(s, in_range(r[0], r[1]));
}

static void seg_marks(str *s) {
    if (chance(70)) put_cp(s, in_range('a', 'z'));
    size_t n = 1 + below(3);
    for (size_t i = 0; i < n; i++) {
        const uint32_t *m = MARKS[below(sizeof MARKS / sizeof MARKS[0])];
        put_cp(s, in_range(m[0], m[1]));
    }
}

static void seg_spaces(str *s) {
    size_t n = 1 + below(chance(10) ? 40 : 6);
    for (size_t i = 0; i < n; i++) {
        if (chance(10)) puts_(s, "\r\n");
        else put_cp(s, SPACES[below(sizeof SPACES / sizeof SPACES[0])]);
    }
}

static void seg_digits(str *s) {
    const uint32_t *d = DIGITS[chance(60) ? 0 : below(sizeof DIGITS / sizeof DIGITS[0])];
    size_t n = 1 + below(chance(10) ? 30 : 8);
    for (size_t i = 0; i < n; i++) put_cp(s, in_range(d[0], d[1]));
}

static void seg_emoji(str *s) {
    size_t parts = 1 + (chance(40) ? below(4) : 0);
    for (size_t k = 0; k < parts; k++) {
        if (k) put_cp(s, 0x200d); /* ZWJ */
        if (chance(10)) {         /* a flag: two regional indicators */
            put_cp(s, in_range(0x1f1e6, 0x1f1ff));
            put_cp(s, in_range(0x1f1e6, 0x1f1ff));
            continue;
        }
        if (chance(5)) { /* keycap */
            put_cp(s, in_range('0', '9'));
            put_cp(s, 0xfe0f);
            put_cp(s, 0x20e3);
            continue;
        }
        const uint32_t *e = EMOJI[below(sizeof EMOJI / sizeof EMOJI[0])];
        put_cp(s, in_range(e[0], e[1]));
        if (chance(30)) put_cp(s, in_range(0x1f3fb, 0x1f3ff)); /* skin tone */
        if (chance(30)) put_cp(s, 0xfe0f);
    }
}

static void seg_punct(str *s) {
    size_t n = 1 + below(6);
    for (size_t i = 0; i < n; i++) {
        const uint32_t *p = PUNCT[below(sizeof PUNCT / sizeof PUNCT[0])];
        put_cp(s, in_range(p[0], p[1]));
    }
}

static void seg_special(str *s) {
    if (!g_n_specials) {
        puts_(s, "<|im_start|>");
        return;
    }
    size_t i = below(g_n_specials);
    size_t n = g_special_len[i];
    if (chance(15) && n > 1) n = 1 + below(n - 1); /* cut short */
    if (chance(30)) put_cp(s, chance(50) ? ' ' : '\n');
    put(s, g_specials[i], n);
    if (chance(30)) put_cp(s, chance(50) ? ' ' : '\n');
}

static void seg_invalid(str *s) {
    static const char *const BAD[] = {"\x80", "\xbf", "\xc0\x80", "\xc1\xbf", "\xe0\x80\x80", "\xf0\x80\x80\x80",
                                      "\xed\xa0\x80", "\xed\xbf\xbf", "\xf8", "\xfe", "\xff", "\xc3", "\xe4\xb8",
                                      "\xf0\x9f\x98", "\xf4\x8f\xbf\xbf", "\xef\xbf\xbe", "\x80\x80\x80", "\xc2\x20",
                                      "\xe2\x82", "\xf0\x9f", "\xf4\x90", "\xf5", "\xf7\xbf"};
    if (chance(30)) {
        size_t n = 1 + below(6);
        for (size_t i = 0; i < n; i++) putc_(s, (int)in_range(0x80, 0xff));
    } else {
        puts_(s, BAD[below(sizeof BAD / sizeof BAD[0])]);
    }
}

static void seg_long(str *s) {
    size_t n = 50 + below(chance(20) ? 3000 : 300);
    int kind = (int)below(5);
    uint32_t cp = kind == 0 ? 'a' : kind == 1 ? 0x4e00 : kind == 2 ? '7' : kind == 3 ? ' ' : 0;
    for (size_t i = 0; i < n; i++) put_cp(s, cp ? cp : in_range('a', 'z'));
}

static void seg_control(str *s) {
    size_t n = 1 + below(4);
    for (size_t i = 0; i < n; i++) putc_(s, chance(30) ? 0 : chance(80) ? (int)in_range(1, 0x1f) : 0x7f);
}

static void seg_random_cp(str *s) {
    uint32_t cp;
    do cp = chance(70) ? in_range(0x80, 0xffff) : in_range(0x10000, 0x10ffff);
    while (cp >= 0xd800 && cp <= 0xdfff);
    put_cp(s, cp);
}

/* llama.cpp aborts on 4-byte sequences above U+10FFFF: spoil their lead byte */
static void defuse(str *s) {
    uint8_t *p = (uint8_t *)s->p;
    for (size_t i = 0; i + 3 < s->n; i++) {
        bool cont = (p[i + 1] & 0xc0) == 0x80 && (p[i + 2] & 0xc0) == 0x80 && (p[i + 3] & 0xc0) == 0x80;
        if (cont && ((p[i] >= 0xf5 && p[i] <= 0xf7) || (p[i] == 0xf4 && p[i + 1] >= 0x90))) p[i] = 0xff;
    }
}

static void gen_string(str *s) {
    s->n = 0;
    size_t segs = below(100) < 3 ? 0 : 1 + below(12);
    for (size_t k = 0; k < segs; k++) {
        if (chance(40)) putc_(s, ' ');
        switch (below(20)) {
        case 0: case 1: case 2: puts_(s, WORDS[below(sizeof WORDS / sizeof WORDS[0])]); break;
        case 3: case 4: seg_word(s); break;
        case 5: seg_marks(s); break;
        case 6: case 7: seg_spaces(s); break;
        case 8: seg_digits(s); break;
        case 9: seg_emoji(s); break;
        case 10: seg_punct(s); break;
        case 11: puts_(s, CODE[below(sizeof CODE / sizeof CODE[0])]); break;
        case 12: case 13: seg_special(s); break;
        case 14: seg_invalid(s); break;
        case 15: if (chance(15)) seg_long(s); else seg_word(s); break;
        case 16: seg_control(s); break;
        case 17: seg_random_cp(s); break;
        default:
            if (chance(50)) puts_(s, WORDS[below(sizeof WORDS / sizeof WORDS[0])]);
            puts_(s, CONTRACTIONS[below(sizeof CONTRACTIONS / sizeof CONTRACTIONS[0])]);
            break;
        }
    }
    if (chance(3)) { /* bytes at random */
        size_t n = below(40);
        for (size_t i = 0; i < n; i++) putc_(s, (int)below(256));
    }
    defuse(s);
}

static pocketllm_model *open_model(const char *path) {
    pocketllm_model_params p = pocketllm_model_default_params();
    p.vocab_only = 1;
    pocketllm_model *m;
    if (pocketllm_model_open(path, &p, &m)) die("%s", pocketllm_last_error());
    if (!m->vocab) die("%s has no tokenizer", path);
    return m;
}

/* The vocabulary's special tokens (control, user-defined, unknown). */
static void collect_specials(const pocketllm_model *m) {
    int32_t n = pocketllm_model_n_vocab(m);
    const char **t = malloc(sizeof *t * (size_t)n);
    size_t *l = malloc(sizeof *l * (size_t)n);
    int32_t *ids = malloc(sizeof *ids * (size_t)n);
    size_t k = 0;
    for (int32_t id = 0; id < n; id++) {
        if (!(pl_vocab_attr(m->vocab, id) & (8 | 16 | 1))) continue; /* control, user-defined, unknown */
        t[k] = pl_vocab_text(m->vocab, id, &l[k]);
        ids[k++] = id;
    }
    g_special_ids = ids;
    g_specials = t;
    g_special_len = l;
    g_n_specials = k;
}

int main(int argc, char **argv) {
    if (argc < 6) die("usage: pl_tok_gen text|ids MODEL N SEED OUT");
    const char *kind = argv[1];
    long n = atol(argv[3]);
    unsigned long long seed = strtoull(argv[4], NULL, 0);
    pl_rng_seed(&R, seed);
    pocketllm_model *m = open_model(argv[2]);
    collect_specials(m);
    FILE *out = fopen(argv[5], "wb");
    if (!out) die("cannot create %s", argv[5]);
    str s = {0};
    if (!strcmp(kind, "text")) {
        for (long i = 0; i < n; i++) {
            gen_string(&s);
            uint32_t len = (uint32_t)s.n;
            fwrite(&len, 4, 1, out);
            fwrite(s.p, 1, s.n, out);
        }
    } else if (!strcmp(kind, "ids")) {
        int32_t nv = pocketllm_model_n_vocab(m);
        int32_t *ids = NULL;
        size_t cap = 0;
        for (long i = 0; i < n; i++) {
            size_t k = 0, want = below(100) < 3 ? 0 : 1 + below(chance(10) ? 200 : 24);
            while (k < want) {
                int32_t add[4096];
                size_t na = 0;
                int what = (int)below(10);
                if (what < 4) {
                    add[na++] = (int32_t)below((uint64_t)nv);
                } else if (what < 6 && g_n_specials) {
                    add[na++] = g_special_ids[below(g_n_specials)];
                } else {
                    gen_string(&s);
                    size_t got = 0;
                    if (pocketllm_tokenize(m, s.p, s.n, chance(50), chance(50), add, 4096, &got)) got = 0;
                    na = got;
                }
                if (k + na > cap) ids = realloc(ids, (cap = 2 * (k + na) + 16) * sizeof *ids);
                memcpy(ids + k, add, na * sizeof *add);
                k += na;
            }
            uint32_t cnt = (uint32_t)k;
            fwrite(&cnt, 4, 1, out);
            fwrite(ids, sizeof *ids, k, out);
        }
        free(ids);
    } else {
        die("unknown kind %s", kind);
    }
    fclose(out);
    free(s.p);
    pocketllm_model_close(m);
    return 0;
}
