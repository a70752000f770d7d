/*
 * pl_tok_tool.c -- PocketLLM's side of the tokenizer comparisons with the
 * llama.cpp oracle: the same batch file formats as pl_oracle, through the
 * public C API.
 *
 *   pl_tok_tool batch MODEL IN OUT [--no-special] [--no-parse-special] [--all-modes]
 *   pl_tok_tool pieces MODEL OUT
 *   pl_tok_tool detok MODEL IN OUT [--remove-special] [--no-unparse-special] [--all-modes]
 *   pl_tok_tool stream MODEL IN [--seed N]
 *   pl_tok_tool vectors MODEL INP OUT
 *   pl_tok_tool info MODEL OUT
 *   pl_tok_tool time MODEL FILE [--repeat N]
 *   pl_tok_tool unicode OUT
 *   pl_tok_tool minivocab KIND OUT
 *
 * batch: IN holds records (u32 length, bytes); OUT gets one line of ids per
 * record (add_special and parse_special on unless told); --all-modes writes
 * four lines per record: (add, parse) = (1,1), (1,0), (0,1), (0,0).
 * pieces: per id, a record of the piece with special = 1.  detok: IN holds
 * records (u32 count, i32 ids), OUT gets records (u32 length, bytes);
 * --all-modes writes four per sequence, for (remove_special,
 * unparse_special) = (0,1), (0,0), (1,1), (1,0).
 * stream: for each id record of IN, the streaming decoder fed one id at a
 * time and with flushes, buffer retries and random splits must give exactly
 * the one-shot detokenization and never end a chunk inside a UTF-8
 * character; prints a summary, exit 1 on any failure.  vectors: llama.cpp's
 * test-tokenizer-0 files (.inp cases split by "\n__ggml_vocab_test__\n",
 * .out one line of ids each; add_special and parse_special off).  info:
 * "n bos eos add_bos add_eos" then "id attr eog" per token.  time: best
 * milliseconds over N tokenizations of FILE (add_special on, parse_special
 * on).  unicode: "cp flags lower" for every code point whose flags or
 * lowercase differ from "unassigned, itself".  minivocab: one of the small
 * vocabularies of tests/common/tok_minivocab.c ("spm" or a pre-tokenizer name).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/rng.h"
#include "model/model.h"
#include "pocketllm.h"
#include "../common/tok_minivocab.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "pl_tok_tool: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static void *read_all(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) die("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc(sz > 0 ? (size_t)sz + 1 : 1);
    if (!p || (sz > 0 && fread(p, 1, (size_t)sz, f) != (size_t)sz)) die("cannot read %s", path);
    fclose(f);
    p[sz > 0 ? sz : 0] = '\0';
    *n = sz > 0 ? (size_t)sz : 0;
    return p;
}

static FILE *open_out(const char *path) {
    FILE *f = fopen(path, "wb");
    if (!f) die("cannot create %s", path);
    return f;
}

static pocketllm_model *open_model(const char *path) {
    pocketllm_model_params p = pocketllm_model_default_params();
    p.vocab_only = 1;
    pocketllm_model *m;
    if (pocketllm_model_open(path, &p, &m)) die("%s", pocketllm_last_error());
    if (!m->vocab) die("%s has no tokenizer", path);
    return m;
}

static int32_t *tokenize(const pocketllm_model *m, const char *text, size_t len, bool add, bool parse, size_t *n) {
    size_t cap = len + 16;
    int32_t *ids = malloc(cap * sizeof *ids);
    if (pocketllm_tokenize(m, text, len, add, parse, ids, cap, n)) {
        if (*n <= cap) die("tokenize: %s", pocketllm_last_error());
        cap = *n;
        ids = realloc(ids, cap * sizeof *ids);
        if (pocketllm_tokenize(m, text, len, add, parse, ids, cap, n)) die("tokenize: %s", pocketllm_last_error());
    }
    return ids;
}

static void print_ids(FILE *f, const int32_t *ids, size_t n) {
    for (size_t i = 0; i < n; i++) fprintf(f, "%s%d", i ? " " : "", ids[i]);
    fputc('\n', f);
}

static bool has_flag(int argc, char **argv, int first, const char *flag) {
    for (int i = first; i < argc; i++)
        if (!strcmp(argv[i], flag)) return true;
    return false;
}

static int cmd_batch(int argc, char **argv) {
    if (argc < 5) die("batch MODEL IN OUT [--no-special] [--no-parse-special] [--all-modes]");
    bool add = !has_flag(argc, argv, 5, "--no-special"), parse = !has_flag(argc, argv, 5, "--no-parse-special");
    bool all = has_flag(argc, argv, 5, "--all-modes");
    pocketllm_model *m = open_model(argv[2]);
    size_t n;
    uint8_t *in = read_all(argv[3], &n);
    FILE *out = open_out(argv[4]);
    for (size_t off = 0; off + 4 <= n;) {
        uint32_t len;
        memcpy(&len, in + off, 4);
        off += 4;
        if (len > n - off) die("truncated batch file");
        for (int mode = 0; mode < (all ? 4 : 1); mode++) {
            bool a = all ? mode < 2 : add, p = all ? mode % 2 == 0 : parse;
            size_t k;
            int32_t *ids = tokenize(m, (const char *)in + off, len, a, p, &k);
            print_ids(out, ids, k);
            free(ids);
        }
        off += len;
    }
    fclose(out);
    free(in);
    pocketllm_model_close(m);
    return 0;
}

static int cmd_pieces(int argc, char **argv) {
    if (argc < 4) die("pieces MODEL OUT");
    pocketllm_model *m = open_model(argv[2]);
    FILE *out = open_out(argv[3]);
    char buf[65536];
    for (int32_t id = 0; id < pocketllm_model_n_vocab(m); id++) {
        size_t len;
        if (pocketllm_token_to_piece(m, id, 1, buf, sizeof buf, &len)) die("piece %d: %s", id, pocketllm_last_error());
        uint32_t l = (uint32_t)len;
        fwrite(&l, 4, 1, out);
        fwrite(buf, 1, len, out);
    }
    fclose(out);
    pocketllm_model_close(m);
    return 0;
}

static char *detok(const pocketllm_model *m, const int32_t *ids, size_t n, bool rm, bool unparse, size_t *len) {
    size_t cap = n * 8 + 16;
    char *text = malloc(cap);
    if (pocketllm_detokenize(m, ids, n, rm, unparse, text, cap, len)) {
        if (*len <= cap) die("detokenize: %s", pocketllm_last_error());
        cap = *len;
        text = realloc(text, cap);
        if (pocketllm_detokenize(m, ids, n, rm, unparse, text, cap, len)) die("detokenize: %s", pocketllm_last_error());
    }
    return text;
}

static int cmd_detok(int argc, char **argv) {
    if (argc < 5) die("detok MODEL IN OUT [--remove-special] [--no-unparse-special] [--all-modes]");
    bool rm = has_flag(argc, argv, 5, "--remove-special"), unparse = !has_flag(argc, argv, 5, "--no-unparse-special");
    bool all = has_flag(argc, argv, 5, "--all-modes");
    pocketllm_model *m = open_model(argv[2]);
    size_t n;
    uint8_t *in = read_all(argv[3], &n);
    FILE *out = open_out(argv[4]);
    for (size_t off = 0; off + 4 <= n;) {
        uint32_t cnt;
        memcpy(&cnt, in + off, 4);
        off += 4;
        if ((uint64_t)cnt * 4 > n - off) die("truncated batch file");
        int32_t *ids = malloc(cnt * sizeof *ids + 1);
        memcpy(ids, in + off, cnt * sizeof *ids);
        for (int mode = 0; mode < (all ? 4 : 1); mode++) {
            if (all) rm = mode >= 2, unparse = mode % 2 == 0;
            size_t len;
            char *text = detok(m, ids, cnt, rm, unparse, &len);
            uint32_t l = (uint32_t)len;
            fwrite(&l, 4, 1, out);
            fwrite(text, 1, len, out);
            free(text);
        }
        free(ids);
        off += (size_t)cnt * 4;
    }
    fclose(out);
    free(in);
    pocketllm_model_close(m);
    return 0;
}

/* Is position `at` of s[0..n) inside a well-formed multi-byte character? */
static bool inside_char(const uint8_t *s, size_t n, size_t at) {
    if (at == 0 || at >= n || (s[at] & 0xc0) != 0x80) return false;
    size_t lead = at;
    while (lead > 0 && at - lead < 3 && (s[lead] & 0xc0) == 0x80) lead--;
    uint8_t b = s[lead];
    size_t need = b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    if (!need || lead + need > n) return false;
    for (size_t i = lead + 1; i < lead + need; i++)
        if ((s[i] & 0xc0) != 0x80) return false;
    return at < lead + need;
}

/* Run one id sequence through a fresh streaming decoder.  Strategy 0: one
 * id a push, a roomy buffer; 1: buffers too small first (retry rule);
 * 2: a flush in the middle is not allowed to change the result, so it is
 * only exercised at the end.  Returns the concatenated text. */
static char *stream_run(const pocketllm_model *m, const int32_t *ids, size_t n, bool unparse, int strategy, pl_rng *r,
                        size_t *out_len, size_t **cuts, size_t *n_cuts) {
    pocketllm_detokenizer *d;
    if (pocketllm_detokenizer_new(m, unparse, &d)) die("detokenizer_new: %s", pocketllm_last_error());
    size_t cap = 1024, len = 0;
    char *all = malloc(cap);
    *cuts = malloc((n + 2) * sizeof **cuts);
    *n_cuts = 0;
    char buf[65536];
    for (size_t i = 0; i <= n; i++) {
        size_t k = 0, room = sizeof buf;
        if (strategy == 1) room = (size_t)pl_rng_below(r, 4); /* usually too small: must fail and retry */
        pocketllm_status st = i < n ? pocketllm_detokenizer_push(d, ids[i], buf, room, &k)
                                    : pocketllm_detokenizer_flush(d, buf, room, &k);
        if (st) {
            if (k <= room) die("stream: %s", pocketllm_last_error());
            st = i < n ? pocketllm_detokenizer_push(d, ids[i], buf, k, &k) : pocketllm_detokenizer_flush(d, buf, k, &k);
            if (st) die("stream retry: %s", pocketllm_last_error());
        }
        if (len + k + 1 > cap) all = realloc(all, cap = 2 * (len + k + 1));
        memcpy(all + len, buf, k);
        len += k;
        (*cuts)[(*n_cuts)++] = len;
    }
    pocketllm_detokenizer_free(d);
    *out_len = len;
    return all;
}

static int cmd_stream(int argc, char **argv) {
    if (argc < 4) die("stream MODEL IN [--seed N]");
    pocketllm_model *m = open_model(argv[2]);
    size_t n;
    uint8_t *in = read_all(argv[3], &n);
    pl_rng r;
    pl_rng_seed(&r, 7);
    size_t records = 0, bad = 0, chunks = 0;
    for (size_t off = 0; off + 4 <= n;) {
        uint32_t cnt;
        memcpy(&cnt, in + off, 4);
        off += 4;
        if ((uint64_t)cnt * 4 > n - off) die("truncated batch file");
        int32_t *ids = malloc(cnt * sizeof *ids + 1);
        memcpy(ids, in + off, cnt * sizeof *ids);
        off += (size_t)cnt * 4;
        records++;
        for (int unparse = 0; unparse < 2; unparse++) {
            size_t want_len;
            char *want = detok(m, ids, cnt, false, unparse, &want_len);
            for (int strategy = 0; strategy < 2; strategy++) {
                size_t got_len, *cuts, n_cuts;
                char *got = stream_run(m, ids, cnt, unparse, strategy, &r, &got_len, &cuts, &n_cuts);
                if (got_len != want_len || memcmp(got, want, want_len) != 0) {
                    if (bad++ < 5)
                        fprintf(stderr, "stream: record %zu (unparse %d, strategy %d): %zu bytes streamed, %zu expected\n",
                                records - 1, unparse, strategy, got_len, want_len);
                } else {
                    for (size_t c = 0; c < n_cuts; c++) {
                        chunks++;
                        if (inside_char((const uint8_t *)got, got_len, cuts[c])) {
                            if (bad++ < 5)
                                fprintf(stderr, "stream: record %zu: a chunk ends inside a UTF-8 character at byte %zu\n",
                                        records - 1, cuts[c]);
                            break;
                        }
                    }
                }
                free(got);
                free(cuts);
            }
            free(want);
        }
        free(ids);
    }
    printf("stream: %zu sequences, %zu chunk boundaries checked, %zu failures\n", records, chunks, bad);
    free(in);
    pocketllm_model_close(m);
    return bad ? 1 : 0;
}

static int cmd_vectors(int argc, char **argv) {
    if (argc < 5) die("vectors MODEL INP OUT");
    pocketllm_model *m = open_model(argv[2]);
    size_t ni, no;
    char *inp = read_all(argv[3], &ni), *outp = read_all(argv[4], &no);
    static const char sep[] = "\n__ggml_vocab_test__\n";
    size_t cases = 0, bad = 0, pos = 0, opos = 0;
    while (pos < ni) {
        char *next = memmem(inp + pos, ni - pos, sep, sizeof sep - 1);
        size_t end = next ? (size_t)(next - inp) : ni;
        /* the expected line */
        if (opos >= no) die("%s has fewer lines than %s has cases", argv[4], argv[3]);
        char *eol = memchr(outp + opos, '\n', no - opos);
        size_t lend = eol ? (size_t)(eol - outp) : no;
        int32_t want[4096];
        size_t nw = 0;
        char *p = outp + opos;
        while (p < outp + lend) {
            char *e;
            long v = strtol(p, &e, 10);
            if (e == p) {
                p++;
                continue;
            }
            if (nw < 4096) want[nw++] = (int32_t)v;
            p = e;
        }
        opos = lend + 1;
        size_t k;
        int32_t *got = tokenize(m, inp + pos, end - pos, false, false, &k);
        cases++;
        if (k != nw || memcmp(got, want, k * sizeof *got) != 0) {
            bad++;
            fprintf(stderr, "vectors: case %zu ('%.*s'): got", cases - 1, (int)(end - pos > 60 ? 60 : end - pos), inp + pos);
            for (size_t i = 0; i < k && i < 30; i++) fprintf(stderr, " %d", got[i]);
            fprintf(stderr, "; want");
            for (size_t i = 0; i < nw && i < 30; i++) fprintf(stderr, " %d", want[i]);
            fputc('\n', stderr);
        }
        free(got);
        if (!next) break;
        pos = end + sizeof sep - 1;
    }
    if (cases == 0) die("no test cases in %s", argv[3]);
    printf("vectors: %s: %zu cases, %zu differ\n", argv[3], cases, bad);
    free(inp);
    free(outp);
    pocketllm_model_close(m);
    return bad ? 1 : 0;
}

static int cmd_info(int argc, char **argv) {
    if (argc < 4) die("info MODEL OUT");
    pocketllm_model *m = open_model(argv[2]);
    FILE *out = open_out(argv[3]);
    const pl_vocab *v = m->vocab;
    fprintf(out, "%d %d %d %d %d\n", pl_vocab_n_tokens(v), pl_vocab_bos(v), pl_vocab_eos(v), pl_vocab_add_bos(v),
            pl_vocab_add_eos(v));
    for (int32_t id = 0; id < pl_vocab_n_tokens(v); id++)
        fprintf(out, "%d %u %d\n", id, pl_vocab_attr(v, id), pocketllm_token_is_eog(m, id));
    fclose(out);
    pocketllm_model_close(m);
    return 0;
}

static int cmd_time(int argc, char **argv) {
    if (argc < 4) die("time MODEL FILE [--repeat N]");
    int repeat = 3;
    for (int i = 4; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--repeat")) repeat = atoi(argv[i + 1]);
    pocketllm_model *m = open_model(argv[2]);
    size_t n;
    char *text = read_all(argv[3], &n);
    double best = 1e30;
    size_t k = 0;
    for (int r = 0; r < repeat; r++) {
        double t0 = pl_now_s();
        int32_t *ids = tokenize(m, text, n, true, true, &k);
        double t = pl_now_s() - t0;
        free(ids);
        if (t < best) best = t;
    }
    printf("tokens %zu best_ms %.3f\n", k, best * 1e3);
    free(text);
    pocketllm_model_close(m);
    return 0;
}

static int cmd_unicode(int argc, char **argv) {
    if (argc < 3) die("unicode OUT");
    FILE *out = open_out(argv[2]);
    fprintf(out, "# %s\n", pl_ucd_version);
    for (uint32_t cp = 0; cp < PL_UCP_MAX; cp++) {
        uint16_t f = pl_ucp_flags(cp);
        uint32_t lo = pl_ucp_tolower(cp);
        if (f != PL_UCP_UNDEFINED || lo != cp) fprintf(out, "%x %x %x\n", cp, f, lo);
    }
    fclose(out);
    return 0;
}

static int cmd_minivocab(int argc, char **argv) {
    if (argc < 4) die("minivocab KIND OUT");
    if (tok_minivocab_write(argv[2], argv[3])) die("%s", pocketllm_last_error());
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) die("usage: see the comment at the top of tests/tools/pl_tok_tool.c");
    const char *c = argv[1];
    if (!strcmp(c, "batch")) return cmd_batch(argc, argv);
    if (!strcmp(c, "pieces")) return cmd_pieces(argc, argv);
    if (!strcmp(c, "detok")) return cmd_detok(argc, argv);
    if (!strcmp(c, "stream")) return cmd_stream(argc, argv);
    if (!strcmp(c, "vectors")) return cmd_vectors(argc, argv);
    if (!strcmp(c, "info")) return cmd_info(argc, argv);
    if (!strcmp(c, "time")) return cmd_time(argc, argv);
    if (!strcmp(c, "unicode")) return cmd_unicode(argc, argv);
    if (!strcmp(c, "minivocab")) return cmd_minivocab(argc, argv);
    die("unknown subcommand %s", c);
    return 2;
}
