/*
 * pl_oracle.c -- llama.cpp as the reference, inside the test suite.
 *
 * Compiled by the test command against the prebuilt llama.cpp v0.4.0 that
 * the npm package node-llama-cpp@3.21.1 ships (scripts/install-oracle.sh),
 * never shipped with PocketLLM.  Each subcommand answers one question the
 * way llama.cpp answers it; the tests compare PocketLLM's answer with it.
 *
 * Every model comparison pins llama.cpp's attention path and KV cache type
 * (defaults: flash attention off, f16 K and V -- llama.cpp's own default KV
 * type) and prints the pinned settings on stderr so a log says which.
 *
 *   pl_oracle types
 *   pl_oracle tokenize MODEL [--no-special] [--parse-special] (--text T | --file F)
 *   pl_oracle tokenize-batch MODEL IN OUT [--no-special] [--no-parse-special] [--all-modes]
 *   pl_oracle pieces MODEL OUT
 *   pl_oracle detokenize-batch MODEL IN OUT [--remove-special] [--no-unparse-special] [--all-modes]
 *   pl_oracle vocab-info MODEL OUT
 *   pl_oracle tokenize-time MODEL FILE [--repeat N]
 *   pl_oracle greedy MODEL (--prompt T | --ids "1 2 3") [-n N] [common options]
 *   pl_oracle logits MODEL --ids "1 2 3" --out F [--router F] [common options]
 *     (--router: a mixture of experts' router at every position and layer,
 *     "POS LAYER MARGIN RANGE E1 .. Ek" a line: the experts chosen, llama.cpp's
 *     margin there and its router logits' range; see router_trace below)
 *   pl_oracle quantize IN OUT RECIPE [--pure] [--leave-output] [--allow-requantize] [--imatrix F] [-t N]
 *   pl_oracle quantize-batch JOBS     (one "IN OUT RECIPE [options]" a line; ok/failed a line)
 *   pl_oracle to-float TYPE IN OUT
 *   pl_oracle quantize-chunk TYPE IN OUT ROW_LENGTH [--imatrix-row F]
 *   pl_oracle half-check
 *   pl_oracle cpu-variant
 *   pl_oracle vec-dot TYPE W A N OUT [--variant V]
 *   pl_oracle act-quantize TYPE IN OUT N [--variant V]
 *   pl_oracle quant-batch FILE
 *   pl_oracle vec-dot-time TYPE W A N REPS [--variant V]
 *   pl_oracle perplexity MODEL --file F --ctx N [--chunks N] [--imatrix-out F [--process-output]]
 *   pl_oracle bench MODEL [-p N] [-n N] [-d N] [-r N] [common options]
 *   pl_oracle embed MODEL --file F --pooling none|mean|cls|last [--no-normalize] [common options]
 * common options: --fa on|off, --kv T (K and V), --ctk T, --ctv T (ggml type names), -t N,
 *   --ctx N, --batch N
 *
 * Batch files: IN of tokenize-batch holds records (u32 length, bytes);
 * OUT gets one line of ids per record.  pieces writes, per token id, a
 * record of llama_token_to_piece(special=true).  detokenize-batch reads
 * records (u32 count, i32 ids) and writes records (u32 length, bytes).
 * tokenize-batch --all-modes writes four lines per record, for
 * (add_special, parse_special) = (1,1), (1,0), (0,1), (0,0); detokenize-batch
 * --all-modes writes four records per sequence, for (remove_special,
 * unparse_special) = (0,1), (0,0), (1,1), (1,0).  vocab-info
 * writes "n_tokens bos eos add_bos add_eos", then "id attr is_eog" per
 * token (llama_vocab_get_attr, llama_vocab_is_eog).  tokenize-time prints
 * "tokens N best_ms T": the best of N llama_tokenize calls on FILE
 * (add_special and parse_special on), load time excluded.
 *
 * CPU-backend kernels (vec-dot, act-quantize) come from one of the
 * prebuilt libggml-cpu-<V>.so variants: V = "best" (default: the one
 * ggml loads on this host), or a name such as x64 (no SIMD: ggml's generic
 * scalar kernels), haswell (AVX2), zen4 (AVX-512).  cpu-variant prints the
 * path of the best one.  vec-dot: W holds R rows of TYPE with N elements
 * each, A holds R rows of TYPE's vec_dot_type; OUT gets R f32 results of
 * ggml's vec_dot.  act-quantize: IN holds rows of N f32; OUT gets them
 * through the backend's from_float of TYPE (how activations are quantized).
 * quant-batch runs many of to-float, quantize-chunk, vec-dot and
 * act-quantize in one process: FILE holds one subcommand with its
 * arguments per line (space-separated, no quoting), so a test pays for
 * loading llama.cpp once.  vec-dot-time runs vec-dot's work REPS times and
 * prints "ns_per_row X" (best of the repetitions; for the bench scripts).
 *
 * perplexity restates llama-perplexity's algorithm on llama_decode (the
 * tool itself is not in the prebuilt libraries): the file tokenized with
 * add_special and without parse_special, windows of --ctx tokens with BOS
 * in front when the vocabulary adds one, each from an empty cache, the
 * second half scored; prints "PPL SCORED".  With --imatrix-out it also
 * collects the importance matrix as llama-imatrix does -- a cb_eval
 * callback summing the squares of every MUL_MAT's f32 input of at least 16
 * rows for weights named blk.* (and output.weight with --process-output),
 * every position's output requested -- and writes llama-imatrix's GGUF
 * file with ggml's own gguf writer.
 *
 * bench measures llama.cpp the way `pocketllm bench` measures PocketLLM
 * (src/cli/cmd_bench.c; the two must stay in step), for bench/compare: a
 * context of max(p, d + n) positions, n_batch = n_ubatch = --batch (512);
 * the same synthetic ids (bench_ids below); a warmup (a prefill of
 * min(p, 32) ids and 2 decodes, as far as the context allows) then, per repetition, from an empty cache:
 * pp = one llama_decode of p ids (only the last logits out), timed; tg = a
 * prefill of d ids (the pp prefill itself when d == p, else a fresh one,
 * untimed), then n single-id llama_decode calls, timed.  Prints one JSON
 * object: {"engine":"llama.cpp","flash_attn":..,"threads":..,"pp_tokens_per_s":
 * [per rep],"tg_tokens_per_s":[per rep]}.  Defaults: -p 512 -n 128 -d 0 -r 3.
 *
 * embed is llama.cpp's embeddings mode as llama-embedding runs it: a
 * context with embeddings on and the pooling given, every line of F
 * tokenized (add_special, parse_special: the vocabulary's BOS/EOS) and
 * decoded from an empty cache in one ubatch (n_batch = n_ubatch = the
 * context, --ctx or the longest line's tokens: llama.cpp pools within one
 * ubatch), every token an output; the vector is llama_get_embeddings_seq
 * (none: llama_get_embeddings_ith of every token, a line each, an empty
 * line after the input), divided by its Euclidean norm as
 * common_embd_normalize(.., 2) does unless --no-normalize.  One line of
 * %.9g floats per vector, as `pocketllm embed` prints them.
 */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/half.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml.h"
#include "gguf.h"
#include "gguf/gguf.h"
#include "llama.h"

#define PL_ORACLE_PROG "pl_oracle"
#include "oracle_util.h"

static void init_backends(void) {
    llama_log_set(quiet_log, NULL);
    llama_backend_init();
    load_backends();
}

static void *read_all(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) die("cannot open %s: %s", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *p = malloc(sz > 0 ? (size_t)sz + 1 : 1);
    if (!p || (sz > 0 && fread(p, 1, (size_t)sz, f) != (size_t)sz)) die("cannot read %s", path);
    fclose(f);
    ((char *)p)[sz > 0 ? sz : 0] = '\0';
    *n = (size_t)(sz > 0 ? sz : 0);
    return p;
}

static FILE *open_out(const char *path) {
    FILE *f = fopen(path, "wb");
    if (!f) die("cannot create %s: %s", path, strerror(errno));
    return f;
}

typedef struct opts {
    bool flash;
    enum ggml_type kv, kv_v; /* the K and V caches' types */
    int threads, ctx, batch, n_predict;
    bool add_special, parse_special, all_modes;
    const char *prompt, *ids, *out, *text, *file;
    const char *router; /* logits: where to write the router margins (MoE models) */
    bool embeddings, normalize; /* embed: a context with embeddings on; L2-normalised vectors */
    enum llama_pooling_type pooling;
} opts;

/* A cache type by ggml's name (llama.cpp's --cache-type-k values). */
static enum ggml_type kv_type_named(const char *name) {
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        const char *n = ggml_type_name((enum ggml_type)t);
        if (n && !strcmp(n, name)) return (enum ggml_type)t;
    }
    die("--kv/--ctk/--ctv: unknown type %s", name);
    return GGML_TYPE_F16;
}

static void parse_opts(int argc, char **argv, int first, opts *o) {
    o->flash = false;
    o->kv = GGML_TYPE_F16;
    o->kv_v = GGML_TYPE_F16;
    o->threads = 2;
    o->ctx = 0;
    o->batch = 512;
    o->n_predict = 16;
    o->add_special = true;
    o->parse_special = true;
    o->all_modes = false;
    o->router = NULL;
    o->embeddings = false;
    o->normalize = true;
    o->pooling = LLAMA_POOLING_TYPE_UNSPECIFIED;
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--no-special")) o->add_special = false;
        else if (!strcmp(a, "--parse-special")) o->parse_special = true;
        else if (!strcmp(a, "--no-parse-special")) o->parse_special = false;
        else if (!strcmp(a, "--all-modes")) o->all_modes = true;
        else if (!strcmp(a, "--no-normalize")) o->normalize = false;
        else if (!v) die("option %s needs a value", a);
        else if (!strcmp(a, "--pooling")) {
            o->pooling = !strcmp(v, "none") ? LLAMA_POOLING_TYPE_NONE : !strcmp(v, "mean") ? LLAMA_POOLING_TYPE_MEAN
                       : !strcmp(v, "cls") ? LLAMA_POOLING_TYPE_CLS : !strcmp(v, "last") ? LLAMA_POOLING_TYPE_LAST
                       : LLAMA_POOLING_TYPE_UNSPECIFIED;
            if (o->pooling == LLAMA_POOLING_TYPE_UNSPECIFIED) die("--pooling none|mean|cls|last");
            i++;
        }
        else if (!strcmp(a, "--fa")) o->flash = !strcmp(v, "on"), i++;
        else if (!strcmp(a, "--kv")) o->kv = o->kv_v = kv_type_named(v), i++;
        else if (!strcmp(a, "--ctk")) o->kv = kv_type_named(v), i++;
        else if (!strcmp(a, "--ctv")) o->kv_v = kv_type_named(v), i++; else if (!strcmp(a, "-t")) o->threads = atoi(v), i++;
        else if (!strcmp(a, "--ctx")) o->ctx = atoi(v), i++;
        else if (!strcmp(a, "--batch")) o->batch = atoi(v), i++;
        else if (!strcmp(a, "-n")) o->n_predict = atoi(v), i++;
        else if (!strcmp(a, "--prompt")) o->prompt = v, i++;
        else if (!strcmp(a, "--ids")) o->ids = v, i++;
        else if (!strcmp(a, "--out")) o->out = v, i++;
        else if (!strcmp(a, "--text")) o->text = v, i++;
        else if (!strcmp(a, "--file")) o->file = v, i++;
        else if (!strcmp(a, "--router")) o->router = v, i++;
        else die("unknown option %s", a);
    }
}

static struct llama_model *load_model(const char *path, bool vocab_only) {
    struct llama_model_params mp = llama_model_default_params();
    mp.vocab_only = vocab_only;
    mp.n_gpu_layers = 0;
    struct llama_model *m = llama_model_load_from_file(path, mp);
    if (!m) die("llama.cpp cannot load %s", path);
    return m;
}

/* The router of a mixture-of-experts model, per position and layer: the
 * experts llama.cpp chose (the top k of its own ffn_moe_probs) and its
 * margin there, log p_k - log p_(k+1).  A tiny margin is a position where
 * llama.cpp's choice of experts was itself undecided: a difference in the
 * last bits of the router's input picks another expert. */
typedef struct router_trace {
    int n_used, n_layer;
    int pos0; /* the position of the current batch's first token */
    int n_pos;
    float *margin; /* [n_pos][n_layer], NAN where no router was seen */
    float *range;  /* [n_pos][n_layer]: log p_max - log p_min, the router logits' range */
    int *ids;      /* [n_pos][n_layer][n_used] */
} router_trace;
static router_trace g_router;

static bool router_collect(struct ggml_tensor *t, bool ask, void *user) {
    router_trace *R = user;
    int il, len = 0;
    /* the softmax itself, not the views of it ("... (reshaped)") */
    if (strncmp(t->name, "ffn_moe_probs-", 14) != 0 || sscanf(t->name + 14, "%d%n", &il, &len) != 1 || t->name[14 + len])
        return ask ? false : true;
    if (ask) return true;
    if (t->type != GGML_TYPE_F32 || t->nb[0] != sizeof(float) || il < 0 || il >= R->n_layer)
        die("router: %s is not f32 rows of a layer", t->name);
    const int64_t ne = t->ne[0], n_tok = t->ne[1];
    float *p = malloc((size_t)ne * sizeof *p);
    for (int64_t j = 0; j < n_tok; j++) {
        const int pos = R->pos0 + (int)j;
        if (pos >= R->n_pos) break;
        ggml_backend_tensor_get(t, p, (size_t)(j * t->nb[1]), (size_t)ne * sizeof *p);
        /* the k + 1 largest by selection (ne is at most a few hundred);
         * probabilities are >= 0, so -1 marks the taken */
        int *ids = R->ids + ((size_t)pos * R->n_layer + (size_t)il) * (size_t)R->n_used;
        float kth = 0, next = 0, lo = INFINITY, hi = 0;
        for (int64_t e = 0; e < ne; e++) lo = p[e] < lo ? p[e] : lo, hi = p[e] > hi ? p[e] : hi;
        R->range[(size_t)pos * R->n_layer + (size_t)il] = logf(hi) - logf(lo);
        for (int r = 0; r <= R->n_used && r < ne; r++) {
            int best = -1;
            for (int64_t e = 0; e < ne; e++)
                if (p[e] >= 0 && (best < 0 || p[e] > p[best])) best = (int)e;
            if (r < R->n_used) ids[r] = best, kth = p[best];
            else next = p[best];
            p[best] = -1.0f;
        }
        R->margin[(size_t)pos * R->n_layer + (size_t)il] = R->n_used < ne ? logf(kth) - logf(next) : INFINITY;
    }
    free(p);
    return true;
}

/* Ready g_router for n positions of model m (experts per token from its
 * metadata; none: a dense model, nothing to trace). */
static void router_init(struct llama_model *m, int n) {
    char arch[64], key[128], val[32];
    g_router.n_used = 0;
    if (llama_model_meta_val_str(m, "general.architecture", arch, sizeof arch) > 0) {
        snprintf(key, sizeof key, "%s.expert_used_count", arch);
        if (llama_model_meta_val_str(m, key, val, sizeof val) > 0) g_router.n_used = atoi(val);
    }
    if (g_router.n_used < 0 || g_router.n_used > 64) die("router: %d experts a token", g_router.n_used);
    g_router.n_layer = llama_model_n_layer(m);
    g_router.n_pos = n;
    g_router.pos0 = 0;
    const size_t cells = (size_t)n * (size_t)g_router.n_layer;
    g_router.margin = malloc((cells ? cells : 1) * sizeof *g_router.margin);
    g_router.range = malloc((cells ? cells : 1) * sizeof *g_router.range);
    g_router.ids = calloc((cells ? cells : 1) * (size_t)(g_router.n_used ? g_router.n_used : 1), sizeof *g_router.ids);
    for (size_t i = 0; i < cells; i++) g_router.margin[i] = NAN;
}

/* One "POS LAYER MARGIN RANGE E..." line per position and layer the router
 * ran at (nothing for a dense model). */
static void router_write(const char *path) {
    FILE *f = open_out(path);
    for (int i = 0; i < g_router.n_pos && g_router.n_used; i++)
        for (int l = 0; l < g_router.n_layer; l++) {
            const float m = g_router.margin[(size_t)i * g_router.n_layer + (size_t)l];
            if (isnan(m)) continue;
            fprintf(f, "%d %d %.6g %.6g", i, l, m, g_router.range[(size_t)i * g_router.n_layer + (size_t)l]);
            for (int k = 0; k < g_router.n_used; k++)
                fprintf(f, " %d", g_router.ids[((size_t)i * g_router.n_layer + (size_t)l) * (size_t)g_router.n_used + (size_t)k]);
            fputc('\n', f);
        }
    fclose(f);
    free(g_router.margin);
    free(g_router.range);
    free(g_router.ids);
}

static struct llama_context *make_context(struct llama_model *m, const opts *o, int n_ctx) {
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = (uint32_t)n_ctx;
    cp.n_batch = (uint32_t)o->batch;
    cp.n_ubatch = (uint32_t)o->batch;
    cp.n_seq_max = 1;
    cp.n_threads = o->threads;
    cp.n_threads_batch = o->threads;
    cp.flash_attn_type = o->flash ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
    cp.type_k = o->kv;
    cp.type_v = o->kv_v;
    cp.no_perf = true;
    if (o->embeddings) {
        cp.embeddings = true;
        cp.pooling_type = o->pooling;
    }
    if (o->router && g_router.n_used > 0) {
        cp.cb_eval = router_collect;
        cp.cb_eval_user_data = &g_router;
    }
    struct llama_context *c = llama_init_from_model(m, cp);
    if (!c) die("llama.cpp cannot make a context (n_ctx %d)", n_ctx);
    fprintf(stderr, "pl_oracle: llama.cpp v0.4.0, flash_attn=%s, kv=%s/%s, threads=%d, n_ctx=%d, n_batch=%d\n",
            o->flash ? "on" : "off", ggml_type_name(o->kv), ggml_type_name(o->kv_v), o->threads, n_ctx, o->batch);
    return c;
}

/* Tokenize text with llama_tokenize; returns a malloc'd array. */
static llama_token *tokenize(const struct llama_vocab *v, const char *text, size_t len, bool add, bool parse,
                             int *n_out) {
    int cap = (int)len + 16;
    llama_token *t = malloc((size_t)cap * sizeof *t);
    int n = llama_tokenize(v, text, (int32_t)len, t, cap, add, parse);
    if (n < 0) {
        if (n == INT32_MIN) die("tokenization overflow");
        cap = -n;
        t = realloc(t, (size_t)cap * sizeof *t);
        n = llama_tokenize(v, text, (int32_t)len, t, cap, add, parse);
    }
    if (n < 0) die("llama_tokenize failed");
    *n_out = n;
    return t;
}

static llama_token *parse_ids(const char *s, int *n_out) {
    int cap = 16, n = 0;
    llama_token *t = malloc((size_t)cap * sizeof *t);
    char *end;
    for (;;) {
        while (*s == ' ' || *s == ',' || *s == '\n' || *s == '\t') s++;
        if (!*s) break;
        long v = strtol(s, &end, 10);
        if (end == s) die("bad id list near '%.20s'", s);
        if (n == cap) t = realloc(t, (size_t)(cap *= 2) * sizeof *t);
        t[n++] = (llama_token)v;
        s = end;
    }
    *n_out = n;
    return t;
}

static void print_ids(FILE *f, const llama_token *t, int n) {
    for (int i = 0; i < n; i++) fprintf(f, "%s%d", i ? " " : "", t[i]);
    fputc('\n', f);
}

static int cmd_types(void) {
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        const struct ggml_type_traits *tr = ggml_get_type_traits((enum ggml_type)t);
        printf("%d %s %ld %zu\n", t, tr->type_name, (long)tr->blck_size, tr->type_size);
    }
    return 0;
}

static int cmd_tokenize(int argc, char **argv) {
    if (argc < 3) die("tokenize MODEL ...");
    opts o;
    parse_opts(argc, argv, 3, &o);
    size_t len;
    char *text;
    if (o.text) text = strdup(o.text), len = strlen(o.text);
    else if (o.file) text = read_all(o.file, &len);
    else die("tokenize needs --text or --file");
    struct llama_model *m = load_model(argv[2], true);
    int n;
    llama_token *t = tokenize(llama_model_get_vocab(m), text, len, o.add_special, o.parse_special, &n);
    print_ids(stdout, t, n);
    free(t);
    free(text);
    llama_model_free(m);
    return 0;
}

static int cmd_tokenize_batch(int argc, char **argv) {
    if (argc < 5) die("tokenize-batch MODEL IN OUT");
    opts o;
    parse_opts(argc, argv, 5, &o);
    size_t n;
    uint8_t *in = read_all(argv[3], &n);
    FILE *out = open_out(argv[4]);
    struct llama_model *m = load_model(argv[2], true);
    const struct llama_vocab *v = llama_model_get_vocab(m);
    for (size_t off = 0; off + 4 <= n;) {
        uint32_t len;
        memcpy(&len, in + off, 4);
        off += 4;
        if (len > n - off) die("truncated batch file");
        for (int mode = 0; mode < (o.all_modes ? 4 : 1); mode++) {
            bool add = o.all_modes ? mode < 2 : o.add_special, parse = o.all_modes ? mode % 2 == 0 : o.parse_special;
            int k;
            llama_token *t = tokenize(v, (const char *)in + off, len, add, parse, &k);
            print_ids(out, t, k);
            free(t);
        }
        off += len;
    }
    fclose(out);
    free(in);
    llama_model_free(m);
    return 0;
}

static int cmd_pieces(int argc, char **argv) {
    if (argc < 4) die("pieces MODEL OUT");
    struct llama_model *m = load_model(argv[2], true);
    const struct llama_vocab *v = llama_model_get_vocab(m);
    FILE *out = open_out(argv[3]);
    int nv = llama_vocab_n_tokens(v);
    char buf[4096];
    for (int id = 0; id < nv; id++) {
        int k = llama_token_to_piece(v, id, buf, sizeof buf, 0, true);
        if (k < 0) die("piece of %d too long", id);
        uint32_t len = (uint32_t)k;
        fwrite(&len, 4, 1, out);
        fwrite(buf, 1, len, out);
    }
    fclose(out);
    llama_model_free(m);
    return 0;
}

static int cmd_detokenize_batch(int argc, char **argv) {
    if (argc < 5) die("detokenize-batch MODEL IN OUT");
    bool remove_special = false, unparse_special = true, all_modes = false;
    for (int i = 5; i < argc; i++) {
        if (!strcmp(argv[i], "--remove-special")) remove_special = true;
        else if (!strcmp(argv[i], "--no-unparse-special")) unparse_special = false;
        else if (!strcmp(argv[i], "--all-modes")) all_modes = true;
        else die("unknown option %s", argv[i]);
    }
    size_t n;
    uint8_t *in = read_all(argv[3], &n);
    FILE *out = open_out(argv[4]);
    struct llama_model *m = load_model(argv[2], true);
    const struct llama_vocab *v = llama_model_get_vocab(m);
    for (size_t off = 0; off + 4 <= n;) {
        uint32_t cnt;
        memcpy(&cnt, in + off, 4);
        off += 4;
        if ((uint64_t)cnt * 4 > n - off) die("truncated batch file");
        for (int mode = 0; mode < (all_modes ? 4 : 1); mode++) {
            if (all_modes) remove_special = mode >= 2, unparse_special = mode % 2 == 0;
            int cap = (int)cnt * 64 + 64;
            char *text = malloc((size_t)cap);
            int k = llama_detokenize(v, (const llama_token *)(in + off), (int32_t)cnt, text, cap, remove_special,
                                     unparse_special);
            if (k < 0) {
                cap = -k;
                text = realloc(text, (size_t)cap);
                k = llama_detokenize(v, (const llama_token *)(in + off), (int32_t)cnt, text, cap, remove_special,
                                     unparse_special);
            }
            if (k < 0) die("detokenize failed");
            uint32_t len = (uint32_t)k;
            fwrite(&len, 4, 1, out);
            fwrite(text, 1, len, out);
            free(text);
        }
        off += (size_t)cnt * 4;
    }
    fclose(out);
    free(in);
    llama_model_free(m);
    return 0;
}

static int cmd_vocab_info(int argc, char **argv) {
    if (argc < 4) die("vocab-info MODEL OUT");
    struct llama_model *m = load_model(argv[2], true);
    const struct llama_vocab *v = llama_model_get_vocab(m);
    FILE *out = open_out(argv[3]);
    int nv = llama_vocab_n_tokens(v);
    fprintf(out, "%d %d %d %d %d\n", nv, llama_vocab_bos(v), llama_vocab_eos(v), llama_vocab_get_add_bos(v),
            llama_vocab_get_add_eos(v));
    for (int id = 0; id < nv; id++)
        fprintf(out, "%d %u %d\n", id, (unsigned)llama_vocab_get_attr(v, id), llama_vocab_is_eog(v, id));
    fclose(out);
    llama_model_free(m);
    return 0;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static int cmd_tokenize_time(int argc, char **argv) {
    if (argc < 4) die("tokenize-time MODEL FILE [--repeat N]");
    int repeat = 3;
    for (int i = 4; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--repeat")) repeat = atoi(argv[i + 1]);
    size_t len;
    char *text = read_all(argv[3], &len);
    struct llama_model *m = load_model(argv[2], true);
    const struct llama_vocab *v = llama_model_get_vocab(m);
    double best = 1e30;
    int k = 0;
    for (int r = 0; r < repeat; r++) {
        double t0 = now_ms();
        llama_token *t = tokenize(v, text, len, true, true, &k);
        double t1 = now_ms() - t0;
        free(t);
        if (t1 < best) best = t1;
    }
    printf("tokens %d best_ms %.3f\n", k, best);
    free(text);
    llama_model_free(m);
    return 0;
}

/* Prompt ids from --prompt (tokenized add_special=true, parse_special=true
 * unless told otherwise) or --ids. */
static llama_token *prompt_ids(struct llama_model *m, const opts *o, int *n) {
    if (o->ids) return parse_ids(o->ids, n);
    if (o->prompt)
        return tokenize(llama_model_get_vocab(m), o->prompt, strlen(o->prompt), o->add_special, o->parse_special, n);
    die("needs --prompt or --ids");
    return NULL;
}

static void decode_or_die(struct llama_context *c, llama_token *t, int n) {
    int rc = llama_decode(c, llama_batch_get_one(t, n));
    if (rc != 0) die("llama_decode failed (%d)", rc);
}

static int cmd_greedy(int argc, char **argv) {
    if (argc < 3) die("greedy MODEL ...");
    opts o;
    parse_opts(argc, argv, 3, &o);
    struct llama_model *m = load_model(argv[2], false);
    int n;
    llama_token *t = prompt_ids(m, &o, &n);
    if (n == 0) die("empty prompt");
    int n_ctx = o.ctx ? o.ctx : n + o.n_predict + 8;
    struct llama_context *c = make_context(m, &o, n_ctx);
    const struct llama_vocab *v = llama_model_get_vocab(m);
    int nv = llama_vocab_n_tokens(v);
    llama_token *out = malloc(sizeof *out * (size_t)(o.n_predict + 1));
    int n_out = 0;
    /* prefill in batches */
    for (int i = 0; i < n; i += o.batch) decode_or_die(c, t + i, n - i < o.batch ? n - i : o.batch);
    for (int k = 0; k < o.n_predict; k++) {
        const float *lg = llama_get_logits_ith(c, -1);
        int best = 0;
        for (int j = 1; j < nv; j++)
            if (lg[j] > lg[best]) best = j;
        out[n_out++] = best;
        if (llama_vocab_is_eog(v, best)) break;
        llama_token next = best;
        decode_or_die(c, &next, 1);
    }
    print_ids(stdout, out, n_out);
    free(out);
    free(t);
    llama_free(c);
    llama_model_free(m);
    return 0;
}

static int cmd_logits(int argc, char **argv) {
    if (argc < 3) die("logits MODEL ...");
    opts o;
    parse_opts(argc, argv, 3, &o);
    if (!o.out) die("logits needs --out");
    struct llama_model *m = load_model(argv[2], false);
    int n;
    llama_token *t = prompt_ids(m, &o, &n);
    if (n == 0) die("empty input");
    if (o.router) router_init(m, n);
    struct llama_context *c = make_context(m, &o, o.ctx ? o.ctx : n + 8);
    int nv = llama_vocab_n_tokens(llama_model_get_vocab(m));
    FILE *out = open_out(o.out);
    /* every position needs its logits: one batch with all outputs on */
    for (int i = 0; i < n; i += o.batch) {
        int k = n - i < o.batch ? n - i : o.batch;
        struct llama_batch b = llama_batch_init(k, 0, 1);
        for (int j = 0; j < k; j++) {
            b.token[j] = t[i + j];
            b.pos[j] = i + j;
            b.n_seq_id[j] = 1;
            b.seq_id[j][0] = 0;
            b.logits[j] = 1;
        }
        b.n_tokens = k;
        g_router.pos0 = i;
        if (llama_decode(c, b) != 0) die("llama_decode failed");
        for (int j = 0; j < k; j++) fwrite(llama_get_logits_ith(c, j), sizeof(float), (size_t)nv, out);
        llama_batch_free(b);
    }
    fclose(out);
    if (o.router) router_write(o.router);
    printf("%d %d\n", n, nv);
    free(t);
    llama_free(c);
    llama_model_free(m);
    return 0;
}

/* common_embd_normalize(.., 2): divided by the Euclidean norm summed in double. */
static void embd_print(FILE *f, const float *v, int n, bool normalize) {
    double sum = 0.0;
    for (int i = 0; i < n; i++) sum += (double)v[i] * (double)v[i];
    const double norm = !normalize ? 1.0 : sum > 0.0 ? 1.0 / sqrt(sum) : 0.0;
    for (int i = 0; i < n; i++) fprintf(f, "%s%.9g", i ? " " : "", (double)(float)(v[i] * norm));
    fputc('\n', f);
}

static int cmd_embed(int argc, char **argv) {
    if (argc < 3) die("embed MODEL --file F --pooling P ...");
    opts o;
    parse_opts(argc, argv, 3, &o);
    if (!o.file || o.pooling == LLAMA_POOLING_TYPE_UNSPECIFIED) die("embed needs --file and --pooling");
    struct llama_model *m = load_model(argv[2], false);
    const struct llama_vocab *v = llama_model_get_vocab(m);
    size_t len;
    char *text = read_all(o.file, &len);
    /* the inputs: the file's non-empty lines, tokenized */
    int n_in = 0, longest = 0;
    llama_token *ids[256];
    int n_ids[256];
    for (char *line = text, *next; line && line < text + len; line = next) {
        char *nl = memchr(line, '\n', (size_t)(text + len - line));
        next = nl ? nl + 1 : NULL;
        const size_t k = nl ? (size_t)(nl - line) : (size_t)(text + len - line);
        if (!k) continue;
        if (n_in == 256) die("embed: at most 256 inputs");
        ids[n_in] = tokenize(v, line, k, o.add_special, o.parse_special, &n_ids[n_in]);
        if (n_ids[n_in] > longest) longest = n_ids[n_in];
        n_in++;
    }
    if (!n_in || !longest) die("embed: no input in %s", o.file);
    o.embeddings = true;
    const int n_ctx = o.ctx ? o.ctx : longest;
    o.batch = n_ctx;
    struct llama_context *c = make_context(m, &o, n_ctx);
    const int n_embd = llama_model_n_embd_out(m);
    for (int i = 0; i < n_in; i++) {
        if (n_ids[i] > n_ctx) die("embed: input %d is %d tokens, over the context", i, n_ids[i]);
        llama_memory_clear(llama_get_memory(c), true);
        struct llama_batch b = llama_batch_init(n_ids[i], 0, 1);
        for (int j = 0; j < n_ids[i]; j++) {
            b.token[j] = ids[i][j];
            b.pos[j] = j;
            b.n_seq_id[j] = 1;
            b.seq_id[j][0] = 0;
            b.logits[j] = 1;
        }
        b.n_tokens = n_ids[i];
        if (llama_decode(c, b) != 0) die("llama_decode failed");
        if (o.pooling == LLAMA_POOLING_TYPE_NONE) {
            for (int j = 0; j < n_ids[i]; j++) embd_print(stdout, llama_get_embeddings_ith(c, j), n_embd, o.normalize);
            fputc('\n', stdout);
        } else {
            const float *e = llama_get_embeddings_seq(c, 0);
            if (!e) die("llama_get_embeddings_seq gave nothing");
            embd_print(stdout, e, n_embd, o.normalize);
        }
        llama_batch_free(b);
        free(ids[i]);
    }
    free(text);
    llama_free(c);
    llama_model_free(m);
    return 0;
}

static const struct {
    const char *name;
    enum llama_ftype ftype;
} recipes[] = {
    {"F32", LLAMA_FTYPE_ALL_F32},         {"F16", LLAMA_FTYPE_MOSTLY_F16},        {"BF16", LLAMA_FTYPE_MOSTLY_BF16},
    {"Q4_0", LLAMA_FTYPE_MOSTLY_Q4_0},    {"Q4_1", LLAMA_FTYPE_MOSTLY_Q4_1},      {"Q5_0", LLAMA_FTYPE_MOSTLY_Q5_0},
    {"Q5_1", LLAMA_FTYPE_MOSTLY_Q5_1},    {"Q8_0", LLAMA_FTYPE_MOSTLY_Q8_0},      {"Q2_K", LLAMA_FTYPE_MOSTLY_Q2_K},
    {"Q2_K_S", LLAMA_FTYPE_MOSTLY_Q2_K_S}, {"Q3_K_S", LLAMA_FTYPE_MOSTLY_Q3_K_S}, {"Q3_K_M", LLAMA_FTYPE_MOSTLY_Q3_K_M},
    {"Q3_K_L", LLAMA_FTYPE_MOSTLY_Q3_K_L}, {"Q4_K_S", LLAMA_FTYPE_MOSTLY_Q4_K_S}, {"Q4_K_M", LLAMA_FTYPE_MOSTLY_Q4_K_M},
    {"Q5_K_S", LLAMA_FTYPE_MOSTLY_Q5_K_S}, {"Q5_K_M", LLAMA_FTYPE_MOSTLY_Q5_K_M}, {"Q6_K", LLAMA_FTYPE_MOSTLY_Q6_K},
    {"IQ2_XXS", LLAMA_FTYPE_MOSTLY_IQ2_XXS}, {"IQ2_XS", LLAMA_FTYPE_MOSTLY_IQ2_XS}, {"IQ2_S", LLAMA_FTYPE_MOSTLY_IQ2_S},
    {"IQ2_M", LLAMA_FTYPE_MOSTLY_IQ2_M},  {"IQ3_XXS", LLAMA_FTYPE_MOSTLY_IQ3_XXS}, {"IQ3_XS", LLAMA_FTYPE_MOSTLY_IQ3_XS},
    {"IQ3_S", LLAMA_FTYPE_MOSTLY_IQ3_S},  {"IQ3_M", LLAMA_FTYPE_MOSTLY_IQ3_M},    {"IQ1_S", LLAMA_FTYPE_MOSTLY_IQ1_S},
    {"IQ1_M", LLAMA_FTYPE_MOSTLY_IQ1_M},  {"IQ4_NL", LLAMA_FTYPE_MOSTLY_IQ4_NL},  {"IQ4_XS", LLAMA_FTYPE_MOSTLY_IQ4_XS},
    {"TQ1_0", LLAMA_FTYPE_MOSTLY_TQ1_0},  {"TQ2_0", LLAMA_FTYPE_MOSTLY_TQ2_0},    {"MXFP4_MOE", LLAMA_FTYPE_MOSTLY_MXFP4_MOE},
};

/* An imatrix GGUF (llama.cpp's format: "<tensor>.in_sum2" and
 * "<tensor>.counts" f32 tensors) normalised as llama-quantize does. */
static struct llama_model_imatrix_data *load_imatrix(const char *path, float ***keep, int *n_out) {
    pocketllm_gguf *g;
    if (pocketllm_gguf_open(path, &g)) die("imatrix: %s", pocketllm_last_error());
    int cap = (int)pocketllm_gguf_tensor_count(g) + 1, n = 0;
    struct llama_model_imatrix_data *d = calloc((size_t)cap, sizeof *d);
    *keep = calloc((size_t)cap, sizeof **keep);
    for (uint64_t i = 0; i < pocketllm_gguf_tensor_count(g); i++) {
        pocketllm_tensor_info s, c;
        pocketllm_gguf_tensor(g, i, &s);
        size_t nl = strlen(s.name);
        if (nl < 8 || strcmp(s.name + nl - 8, ".in_sum2") != 0) continue;
        char cname[128];
        snprintf(cname, sizeof cname, "%.*s.counts", (int)(nl - 8), s.name);
        int64_t ci = pocketllm_gguf_find_tensor(g, cname);
        if (ci < 0) die("imatrix: %s has no counts", s.name);
        pocketllm_gguf_tensor(g, (uint64_t)ci, &c);
        if (s.type != 0 || c.type != 0) die("imatrix: tensors must be f32");
        int64_t nval = s.ne[0] * s.ne[1] * s.ne[2] * s.ne[3];
        int64_t ncnt = c.ne[0] * c.ne[1] * c.ne[2] * c.ne[3];
        if (ncnt <= 0 || nval % ncnt) die("imatrix: %s shape", s.name);
        int64_t ne0 = nval / ncnt;
        float *e = malloc(sizeof(float) * (size_t)nval);
        const float *sums = s.data, *counts = c.data;
        for (int64_t j = 0; j < ncnt; j++)
            for (int64_t k = 0; k < ne0; k++) e[j * ne0 + k] = counts[j] > 0 ? sums[j * ne0 + k] / counts[j] : 1.0f;
        char *name = malloc(nl - 7);
        memcpy(name, s.name, nl - 8);
        name[nl - 8] = '\0';
        d[n].name = name;
        d[n].data = e;
        d[n].size = (size_t)nval;
        (*keep)[n] = e;
        n++;
    }
    pocketllm_gguf_close(g);
    *n_out = n;
    return d; /* terminated by a zeroed entry */
}

/* One llama_model_quantize run from quantize's arguments; its status. */
static uint32_t run_quantize(int argc, char **argv) {
    if (argc < 5) die("quantize IN OUT RECIPE [--pure] [--leave-output] [--allow-requantize] [--imatrix F] [-t N]");
    struct llama_model_quantize_params p = llama_model_quantize_default_params();
    bool found = false;
    for (size_t i = 0; i < sizeof recipes / sizeof recipes[0]; i++)
        if (!strcasecmp(recipes[i].name, argv[4])) p.ftype = recipes[i].ftype, found = true;
    if (!found) die("unknown recipe %s", argv[4]);
    p.nthread = 2;
    float **keep = NULL;
    int n_im = 0;
    for (int i = 5; i < argc; i++) {
        if (!strcmp(argv[i], "--pure")) p.pure = true;
        else if (!strcmp(argv[i], "--leave-output")) p.quantize_output_tensor = false;
        else if (!strcmp(argv[i], "--allow-requantize")) p.allow_requantize = true;
        else if (!strcmp(argv[i], "--imatrix") && i + 1 < argc) p.imatrix = load_imatrix(argv[++i], &keep, &n_im);
        else if (!strcmp(argv[i], "-t") && i + 1 < argc) p.nthread = atoi(argv[++i]);
        else die("unknown option %s", argv[i]);
    }
    return llama_model_quantize(argv[2], argv[3], &p);
}

static int cmd_quantize(int argc, char **argv) {
    uint32_t rc = run_quantize(argc, argv);
    if (rc != 0) die("llama_model_quantize failed (%u)", rc);
    return 0;
}

/* quantize-batch JOBS: each line of JOBS holds quantize's arguments (IN
 * OUT RECIPE [options], separated by spaces); all run in this process, so
 * the tables ggml builds per type on first use (the IQ grids: seconds
 * each) are built once.  Prints "ok" or "failed" per job. */
static int cmd_quantize_batch(int argc, char **argv) {
    if (argc != 3) die("quantize-batch JOBS");
    size_t n;
    char *text = read_all(argv[2], &n), *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *av[64], *s2 = NULL;
        int ac = 2;
        av[0] = argv[0];
        av[1] = "quantize";
        for (char *w = strtok_r(line, " ", &s2); w && ac < 63; w = strtok_r(NULL, " ", &s2)) av[ac++] = w;
        av[ac] = NULL;
        if (ac == 2) continue;
        printf("%s\n", run_quantize(ac, av) == 0 ? "ok" : "failed");
        fflush(stdout);
    }
    free(text);
    return 0;
}

static enum ggml_type type_by_name(const char *name) {
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        const struct ggml_type_traits *tr = ggml_get_type_traits((enum ggml_type)t);
        if (tr->blck_size && !strcasecmp(tr->type_name, name)) return (enum ggml_type)t;
    }
    die("unknown type %s", name);
    return GGML_TYPE_COUNT;
}

static int cmd_to_float(int argc, char **argv) {
    if (argc != 5) die("to-float TYPE IN OUT");
    enum ggml_type t = type_by_name(argv[2]);
    const struct ggml_type_traits *tr = ggml_get_type_traits(t);
    if (!tr->to_float) die("%s has no to_float", argv[2]);
    size_t n;
    uint8_t *in = read_all(argv[3], &n);
    if (n % tr->type_size) die("input is not whole blocks");
    int64_t k = (int64_t)(n / tr->type_size) * tr->blck_size;
    float *out = malloc(sizeof(float) * (size_t)(k ? k : 1));
    tr->to_float(in, out, k);
    FILE *f = open_out(argv[4]);
    fwrite(out, sizeof(float), (size_t)k, f);
    fclose(f);
    free(in);
    free(out);
    return 0;
}

static int cmd_quantize_chunk(int argc, char **argv) {
    if (argc < 6) die("quantize-chunk TYPE IN OUT ROW_LENGTH [--imatrix-row F]");
    enum ggml_type t = type_by_name(argv[2]);
    size_t n;
    float *in = read_all(argv[3], &n);
    int64_t row = atoll(argv[5]);
    if (row <= 0 || n % (sizeof(float) * (size_t)row)) die("input is not whole rows of %lld", (long long)row);
    int64_t nrows = (int64_t)(n / sizeof(float)) / row;
    float *imatrix = NULL;
    if (argc >= 8 && !strcmp(argv[6], "--imatrix-row")) {
        size_t m;
        imatrix = read_all(argv[7], &m);
        if (m != sizeof(float) * (size_t)row) die("imatrix row has the wrong length");
    }
    size_t bytes = ggml_row_size(t, row) * (size_t)nrows;
    void *out = malloc(bytes ? bytes : 1);
    ggml_quantize_init(t);
    size_t w = ggml_quantize_chunk(t, in, out, 0, nrows, row, imatrix);
    if (w != bytes) die("quantize_chunk wrote %zu of %zu bytes", w, bytes);
    FILE *f = open_out(argv[4]);
    fwrite(out, 1, bytes, f);
    fclose(f);
    free(in);
    free(out);
    free(imatrix);
    return 0;
}

/* PocketLLM's f16/bf16 conversions against ggml's, bit for bit, on every
 * 16-bit pattern and on a stride through all 2^32 float patterns. */
static int cmd_half_check(void) {
    uint64_t bad = 0, checked = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float a = pl_f16_to_f32((uint16_t)h), b = ggml_fp16_to_fp32((ggml_fp16_t)h);
        float c = pl_bf16_to_f32((uint16_t)h);
        ggml_bf16_t bh = {(uint16_t)h};
        float d = ggml_bf16_to_fp32(bh);
        checked += 2;
        if (memcmp(&a, &b, 4) && !(isnan(a) && isnan(b))) bad++;
        if (memcmp(&c, &d, 4)) bad++;
    }
    for (uint64_t u = 0; u < (1ull << 32); u += 4093) {
        float f = pl_bits_f32((uint32_t)u);
        uint16_t a = pl_f32_to_f16(f), b = ggml_fp32_to_fp16(f);
        uint16_t c = pl_f32_to_bf16(f), d = ggml_fp32_to_bf16(f).bits;
        checked += 2;
        /* NaN payloads may differ; both must still be NaN */
        bool a_nan = (a & 0x7c00) == 0x7c00 && (a & 0x3ff), b_nan = (b & 0x7c00) == 0x7c00 && (b & 0x3ff);
        if (a != b && !(a_nan && b_nan)) {
            if (bad < 5) fprintf(stderr, "f32->f16 %08x: ours %04x ggml %04x\n", (unsigned)u, a, b);
            bad++;
        }
        if (c != d) {
            if (bad < 5) fprintf(stderr, "f32->bf16 %08x: ours %04x ggml %04x\n", (unsigned)u, c, d);
            bad++;
        }
    }
    printf("half-check: %llu conversions, %llu differ\n", (unsigned long long)checked, (unsigned long long)bad);
    return bad ? 1 : 0;
}

/* Path of the CPU backend library ggml chose for this host. */
static const char *best_cpu_library(void) {
    ggml_backend_reg_t reg = ggml_backend_reg_by_name("CPU");
    if (!reg) die("no CPU backend loaded");
    void *fn = ggml_backend_reg_get_proc_address(reg, "ggml_backend_set_n_threads");
    Dl_info info;
    if (!fn || !dladdr(fn, &info) || !info.dli_fname) die("cannot locate the CPU backend library");
    return info.dli_fname;
}

typedef const struct ggml_type_traits_cpu *(*cpu_traits_fn)(enum ggml_type);

/* type_traits_cpu of the named variant, after that library's ggml_cpu_init. */
static cpu_traits_fn cpu_variant(const char *variant) {
    char path[4096];
    if (!variant || !strcmp(variant, "best")) {
        snprintf(path, sizeof path, "%s", best_cpu_library());
    } else {
        const char *dir = getenv("PL_ORACLE_LIBDIR");
#ifdef PL_ORACLE_LIBDIR_DEFAULT
        if (!dir) dir = PL_ORACLE_LIBDIR_DEFAULT;
#endif
        if (!dir) die("PL_ORACLE_LIBDIR is not set");
        snprintf(path, sizeof path, "%s/libggml-cpu-%s.so", dir, variant);
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) die("cannot load %s: %s", path, dlerror());
    void (*init)(void) = (void (*)(void))dlsym(h, "ggml_cpu_init");
    cpu_traits_fn traits = (cpu_traits_fn)dlsym(h, "ggml_get_type_traits_cpu");
    if (!init || !traits) die("%s lacks ggml_cpu_init / ggml_get_type_traits_cpu", path);
    init();
    return traits;
}

static const char *variant_opt(int argc, char **argv, int first) {
    for (int i = first; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--variant")) return argv[i + 1];
    return "best";
}

static int cmd_cpu_variant(void) {
    printf("%s\n", best_cpu_library());
    return 0;
}

static int cmd_vec_dot(int argc, char **argv) {
    if (argc < 7) die("vec-dot TYPE W A N OUT [--variant V]");
    enum ggml_type t = type_by_name(argv[2]);
    const struct ggml_type_traits_cpu *tr = cpu_variant(variant_opt(argc, argv, 7))(t);
    if (!tr->vec_dot) die("%s has no vec_dot", argv[2]);
    int64_t n = atoll(argv[5]);
    if (n <= 0 || n % ggml_blck_size(t) || n % ggml_blck_size(tr->vec_dot_type)) die("bad row length");
    size_t wn, an, wrow = ggml_row_size(t, n), arow = ggml_row_size(tr->vec_dot_type, n);
    uint8_t *w = read_all(argv[3], &wn), *a = read_all(argv[4], &an);
    if (wn % wrow || an % arow || wn / wrow != an / arow) die("W and A must hold the same number of whole rows");
    size_t rows = wn / wrow;
    FILE *f = open_out(argv[6]);
    for (size_t r = 0; r < rows; r++) {
        float s = 0.0f;
        tr->vec_dot((int)n, &s, 0, w + r * wrow, 0, a + r * arow, 0, 1);
        fwrite(&s, sizeof s, 1, f);
    }
    fclose(f);
    free(w);
    free(a);
    return 0;
}

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmd_vec_dot_time(int argc, char **argv) {
    if (argc < 7) die("vec-dot-time TYPE W A N REPS [--variant V]");
    enum ggml_type t = type_by_name(argv[2]);
    const struct ggml_type_traits_cpu *tr = cpu_variant(variant_opt(argc, argv, 7))(t);
    if (!tr->vec_dot) die("%s has no vec_dot", argv[2]);
    int64_t n = atoll(argv[5]);
    int reps = atoi(argv[6]);
    size_t wn, an, wrow = ggml_row_size(t, n), arow = ggml_row_size(tr->vec_dot_type, n);
    uint8_t *w = read_all(argv[3], &wn), *a = read_all(argv[4], &an);
    if (n <= 0 || reps <= 0 || wn % wrow || an % arow || wn / wrow != an / arow) die("bad rows");
    size_t rows = wn / wrow;
    double best = 1e30;
    volatile float sink = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = now_ns();
        for (size_t i = 0; i < rows; i++) {
            float s = 0.0f;
            tr->vec_dot((int)n, &s, 0, w + i * wrow, 0, a + i * arow, 0, 1);
            sink += s;
        }
        double dt = (now_ns() - t0) / (double)rows;
        if (dt < best) best = dt;
    }
    (void)sink;
    printf("ns_per_row %.1f\n", best);
    free(w);
    free(a);
    return 0;
}

static int cmd_act_quantize(int argc, char **argv) {
    if (argc < 6) die("act-quantize TYPE IN OUT N [--variant V]");
    enum ggml_type t = type_by_name(argv[2]);
    const struct ggml_type_traits_cpu *tr = cpu_variant(variant_opt(argc, argv, 6))(t);
    if (!tr->from_float) die("%s has no from_float in the CPU backend", argv[2]);
    int64_t n = atoll(argv[5]);
    size_t bytes;
    float *in = read_all(argv[3], &bytes);
    if (n <= 0 || n % ggml_blck_size(t) || bytes % (sizeof(float) * (size_t)n)) die("input is not whole rows of N");
    size_t rows = bytes / (sizeof(float) * (size_t)n), orow = ggml_row_size(t, n);
    /* zeroed so that bytes a quantizer leaves untouched compare equal */
    uint8_t *out = calloc(rows ? rows : 1, orow);
    for (size_t r = 0; r < rows; r++) tr->from_float(in + r * (size_t)n, out + r * orow, n);
    FILE *f = open_out(argv[4]);
    fwrite(out, orow, rows, f);
    fclose(f);
    free(in);
    free(out);
    return 0;
}

static int cmd_quant_batch(int argc, char **argv) {
    if (argc != 3) die("quant-batch FILE");
    FILE *f = fopen(argv[2], "r");
    if (!f) die("cannot open %s: %s", argv[2], strerror(errno));
    char line[8192];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        char *av[32];
        int ac = 0;
        av[ac++] = "pl_oracle";
        for (char *tok = strtok(line, " \t\r\n"); tok && ac < 31; tok = strtok(NULL, " \t\r\n")) av[ac++] = tok;
        av[ac] = NULL;
        if (ac < 2) continue;
        int rc;
        if (!strcmp(av[1], "to-float")) rc = cmd_to_float(ac, av);
        else if (!strcmp(av[1], "quantize-chunk")) rc = cmd_quantize_chunk(ac, av);
        else if (!strcmp(av[1], "vec-dot")) rc = cmd_vec_dot(ac, av);
        else if (!strcmp(av[1], "act-quantize")) rc = cmd_act_quantize(ac, av);
        else die("quant-batch: unsupported subcommand %s", av[1]);
        if (rc) die("quant-batch: line %d failed", n + 1);
        n++;
    }
    fclose(f);
    printf("quant-batch: %d commands\n", n);
    return 0;
}

/* ---- perplexity and the importance matrix, as llama.cpp's tools compute them ---- */

typedef struct im_stat {
    char name[128];
    int64_t n_in, n_mat; /* n_mat: 1, or the experts of a MUL_MAT_ID weight */
    float *sum2;         /* [n_mat][n_in] */
    int64_t *counts;     /* [n_mat] */
} im_stat;

typedef struct im_collector {
    im_stat *e;
    int n, cap;
    bool process_output;
    void *buf, *ids; /* host copies of src1 and the expert ids */
    size_t buf_n, ids_n;
} im_collector;

/* llama-imatrix's filter_tensor_name: "CUDA0#blk.0.attn_k.weight#0" -> the middle */
static void im_weight_name(const char *name, char *out, size_t cap) {
    const char *p = strchr(name, '#');
    if (!p) {
        snprintf(out, cap, "%s", name);
        return;
    }
    p++;
    const char *q = strchr(p, '#');
    snprintf(out, cap, "%.*s", q ? (int)(q - p) : (int)strlen(p), p);
}

static im_stat *im_entry(im_collector *C, const char *w, int64_t n_in, int64_t n_mat) {
    for (int i = 0; i < C->n; i++)
        if (!strcmp(C->e[i].name, w)) {
            if (C->e[i].n_in != n_in || C->e[i].n_mat != n_mat)
                die("imatrix: %s seen as %lld x %lld and %lld x %lld", w, (long long)C->e[i].n_mat,
                    (long long)C->e[i].n_in, (long long)n_mat, (long long)n_in);
            return &C->e[i];
        }
    if (C->n == C->cap) C->e = realloc(C->e, (size_t)(C->cap = C->cap ? 2 * C->cap : 64) * sizeof *C->e);
    im_stat *e = &C->e[C->n++];
    snprintf(e->name, sizeof e->name, "%s", w);
    e->n_in = n_in;
    e->n_mat = n_mat;
    e->sum2 = calloc((size_t)(n_in * n_mat), sizeof(float));
    e->counts = calloc((size_t)n_mat, sizeof(int64_t));
    return e;
}

/* src1 (and ids) on the host */
static const char *im_host(const struct ggml_tensor *t, void **buf, size_t *cap) {
    if (ggml_backend_buffer_is_host(t->buffer)) return t->data;
    const size_t bytes = ggml_nbytes(t);
    if (bytes > *cap) *buf = realloc(*buf, bytes), *cap = bytes;
    ggml_backend_tensor_get(t, *buf, 0, bytes);
    return *buf;
}

/* llama-imatrix's collect_imatrix: every MUL_MAT_ID (per expert: each
 * routed row added to its expert's sums, slot by slot, token by token), and
 * the MUL_MAT of blk.* weights (and output.weight on request) over at least
 * 16 rows */
static bool im_collect(struct ggml_tensor *t, bool ask, void *user) {
    im_collector *C = user;
    const struct ggml_tensor *src0 = t->src[0], *src1 = t->src[1];
    if (t->op != GGML_OP_MUL_MAT && t->op != GGML_OP_MUL_MAT_ID) return ask ? false : true;
    char w[128];
    im_weight_name(src0->name, w, sizeof w);
    if (ask) {
        if (t->op == GGML_OP_MUL_MAT_ID) return true;
        if (src1->ne[1] < 16 || src1->type != GGML_TYPE_F32) return false;
        return !strncmp(w, "blk.", 4) || (C->process_output && !strcmp(w, "output.weight"));
    }
    if (src1->nb[0] != sizeof(float)) die("imatrix: %s: input rows are not f32", w);
    const char *data = im_host(src1, &C->buf, &C->buf_n);
    if (t->op == GGML_OP_MUL_MAT_ID) {
        const struct ggml_tensor *ids = t->src[2];
        const int64_t n_as = src0->ne[2], n_ids = ids->ne[0], n_tok = src1->ne[2];
        if (ids->ne[1] != n_tok || ggml_nrows(src1) != src1->ne[1] * src1->ne[2]) die("imatrix: %s: shapes", w);
        const char *id = im_host(ids, &C->ids, &C->ids_n);
        im_stat *e = im_entry(C, w, src1->ne[0], n_as);
        for (int64_t idx = 0; idx < n_ids; idx++)
            for (int64_t row = 0; row < n_tok; row++) {
                const int32_t ex = *(const int32_t *)(id + row * ids->nb[1] + idx * ids->nb[0]);
                if (ex < 0 || ex >= n_as) die("imatrix: %s: expert %d", w, ex);
                const float *x = (const float *)(data + (idx % src1->ne[1]) * src1->nb[1] + row * src1->nb[2]);
                float *acc = e->sum2 + ex * e->n_in;
                e->counts[ex]++;
                for (int64_t j = 0; j < e->n_in; j++) acc[j] += x[j] * x[j];
            }
        return true;
    }
    if (src0->ne[2] * src0->ne[3] != 1) die("imatrix: %s is not a 2-D product", w);
    im_stat *e = im_entry(C, w, src1->ne[0], 1);
    for (int64_t i3 = 0; i3 < src1->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < src1->ne[2]; i2++)
            for (int64_t r = 0; r < src1->ne[1]; r++) {
                const float *x = (const float *)(data + r * src1->nb[1] + i2 * src1->nb[2] + i3 * src1->nb[3]);
                for (int64_t j = 0; j < e->n_in; j++) e->sum2[j] += x[j] * x[j];
            }
    e->counts[0] += ggml_nrows(src1);
    return true;
}

static int im_cmp(const void *a, const void *b) { return strcmp(((const im_stat *)a)->name, ((const im_stat *)b)->name); }

static void im_write(im_collector *C, const char *path, const char *dataset, int chunk_size) {
    qsort(C->e, (size_t)C->n, sizeof *C->e, im_cmp);
    int64_t max_count = 0;
    size_t mem = 0;
    for (int i = 0; i < C->n; i++) {
        for (int64_t k = 0; k < C->e[i].n_mat; k++)
            if (C->e[i].counts[k] > max_count) max_count = C->e[i].counts[k];
        mem += 2 * ggml_tensor_overhead() + (size_t)((C->e[i].n_in + 1) * C->e[i].n_mat) * sizeof(float) + 64;
    }
    struct ggml_init_params ip = {mem + 1024, NULL, false};
    struct ggml_context *ctx = ggml_init(ip);
    struct gguf_context *g = gguf_init_empty();
    gguf_set_val_str(g, "general.type", "imatrix");
    const char *ds[1] = {dataset};
    gguf_set_arr_str(g, "imatrix.datasets", ds, 1);
    gguf_set_val_u32(g, "imatrix.chunk_count", (uint32_t)(max_count / chunk_size));
    gguf_set_val_u32(g, "imatrix.chunk_size", (uint32_t)chunk_size);
    for (int i = 0; i < C->n; i++) {
        const im_stat *e = &C->e[i];
        struct ggml_tensor *s = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, e->n_in, e->n_mat);
        struct ggml_tensor *c = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 1, e->n_mat);
        ggml_format_name(s, "%s.in_sum2", e->name);
        ggml_format_name(c, "%s.counts", e->name);
        memcpy(s->data, e->sum2, (size_t)(e->n_in * e->n_mat) * sizeof(float));
        for (int64_t k = 0; k < e->n_mat; k++) ((float *)c->data)[k] = (float)e->counts[k];
        gguf_add_tensor(g, s);
        gguf_add_tensor(g, c);
    }
    if (!gguf_write_to_file(g, path, false)) die("cannot write %s", path);
    gguf_free(g);
    ggml_free(ctx);
}

static int cmd_perplexity(int argc, char **argv) {
    if (argc < 3) die("perplexity MODEL --file F --ctx N ...");
    const char *im_out = NULL;
    bool process_output = false;
    int chunks = 0;
    /* this subcommand's own options, then the common ones */
    char **rest = malloc(sizeof(char *) * (size_t)argc);
    int nrest = 0;
    for (int i = 0; i < argc; i++) {
        if (i >= 3 && !strcmp(argv[i], "--imatrix-out") && i + 1 < argc) im_out = argv[++i];
        else if (i >= 3 && !strcmp(argv[i], "--process-output")) process_output = true;
        else if (i >= 3 && !strcmp(argv[i], "--chunks") && i + 1 < argc) chunks = atoi(argv[++i]);
        else rest[nrest++] = argv[i];
    }
    opts o;
    parse_opts(nrest, rest, 3, &o);
    if (!o.file || o.ctx < 4) die("perplexity needs --file and --ctx N (N >= 4)");
    const int n_ctx = o.ctx;
    o.batch = n_ctx;
    struct llama_model *m = load_model(argv[2], false);
    const struct llama_vocab *v = llama_model_get_vocab(m);
    size_t len;
    char *text = read_all(o.file, &len);
    int n;
    llama_token *t = tokenize(v, text, len, true, false, &n);
    if (n < 2 * n_ctx) die("the text has %d tokens, %d needed", n, 2 * n_ctx);
    int n_chunk = n / n_ctx;
    if (chunks > 0 && chunks < n_chunk) n_chunk = chunks;
    im_collector C = {0};
    C.process_output = process_output;
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = (uint32_t)n_ctx;
    cp.n_batch = cp.n_ubatch = (uint32_t)n_ctx;
    cp.n_seq_max = 1;
    cp.n_threads = cp.n_threads_batch = o.threads;
    cp.flash_attn_type = o.flash ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
    cp.type_k = cp.type_v = o.kv;
    cp.no_perf = true;
    if (im_out) {
        cp.cb_eval = im_collect;
        cp.cb_eval_user_data = &C;
    }
    struct llama_context *c = llama_init_from_model(m, cp);
    if (!c) die("llama.cpp cannot make a context of %d", n_ctx);
    fprintf(stderr, "pl_oracle: llama.cpp v0.4.0, flash_attn=%s, kv=%s, threads=%d, window %d, %d windows\n",
            o.flash ? "on" : "off", ggml_type_name(o.kv), o.threads, n_ctx, n_chunk);
    const int nv = llama_vocab_n_tokens(v), first = n_ctx / 2;
    const bool add_bos = llama_vocab_get_add_bos(v);
    struct llama_batch b = llama_batch_init(n_ctx, 0, 1);
    double nll = 0;
    long count = 0;
    for (int ch = 0; ch < n_chunk; ch++) {
        llama_memory_clear(llama_get_memory(c), true);
        for (int k = 0; k < n_ctx; k++) {
            b.token[k] = k == 0 && add_bos ? llama_vocab_bos(v) : t[ch * n_ctx + k];
            b.pos[k] = k;
            b.n_seq_id[k] = 1;
            b.seq_id[k][0] = 0;
            /* llama-perplexity asks only for the scored half; llama-imatrix for every position */
            b.logits[k] = im_out || k >= first;
        }
        b.n_tokens = n_ctx;
        if (llama_decode(c, b) != 0) die("llama_decode failed");
        for (int k = first; k < n_ctx - 1; k++) {
            const float *lg = llama_get_logits_ith(c, k);
            float max = lg[0];
            for (int i = 1; i < nv; i++)
                if (lg[i] > max) max = lg[i];
            double sum = 0;
            for (int i = 0; i < nv; i++) sum += expf(lg[i] - max);
            nll -= lg[t[ch * n_ctx + k + 1]] - max - log(sum);
            count++;
        }
    }
    printf("%.10f %ld\n", exp(nll / (double)count), count);
    if (im_out) im_write(&C, im_out, o.file, n_ctx);
    llama_batch_free(b);
    llama_free(c);
    llama_model_free(m);
    free(t);
    free(text);
    free(rest);
    return 0;
}

/* The synthetic ids both benches feed: a 64-bit LCG (Knuth's MMIX
 * constants) so that both engines see exactly the same tokens. */
static void bench_ids(int32_t *ids, int n, int n_vocab, uint64_t seed) {
    uint64_t x = seed * 2862933555777941757ull + 3037000493ull;
    for (int i = 0; i < n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        ids[i] = (int32_t)((x >> 33) % (uint64_t)n_vocab);
    }
}

static void bench_decode(struct llama_context *c, llama_token *t, int n) {
    decode_or_die(c, t, n);
    llama_synchronize(c);
}

static int cmd_bench(int argc, char **argv) {
    if (argc < 3) die("bench MODEL [-p N] [-n N] [-d N] [--pp-depth N] [-r N] [common options]");
    int p = 512, n = 128, d = 0, pd = 0, reps = 3;
    /* pull out the bench's own options, hand the rest to parse_opts */
    char **rest = malloc(sizeof *rest * (size_t)argc);
    int nrest = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (i >= 3 && i + 1 < argc && (!strcmp(a, "-p") || !strcmp(a, "-d") || !strcmp(a, "-r") || !strcmp(a, "-n") ||
                                        !strcmp(a, "--pp-depth"))) {
            int v = atoi(argv[++i]);
            if (v < 0 || v > 1 << 20) die("bench: %s %d is out of range", a, v);
            if (!strcmp(a, "-p")) p = v;
            else if (!strcmp(a, "-d")) d = v;
            else if (!strcmp(a, "--pp-depth")) pd = v;
            else if (!strcmp(a, "-r")) reps = v;
            else n = v;
        } else rest[nrest++] = argv[i];
    }
    if (reps < 1 || (p == 0 && n == 0)) die("bench: nothing to measure");
    opts o;
    parse_opts(nrest, rest, 3, &o);
    free(rest);
    struct llama_model *m = load_model(argv[2], false);
    const int nv = llama_vocab_n_tokens(llama_model_get_vocab(m));
    const int n_ctx = pd + p > d + n ? pd + p : d + n;
    struct llama_context *c = make_context(m, &o, n_ctx);
    llama_memory_t mem = llama_get_memory(c);
    const int n_ids = n_ctx + 64;
    llama_token *ids = malloc(sizeof *ids * (size_t)n_ids);
    bench_ids(ids, n_ids, nv, 1);
    /* warmup: weights paged in, threads started */
    const int w = p < 32 ? (p ? p : 1) : 32, n_warm = n_ctx - w < 2 ? n_ctx - w : 2;
    bench_decode(c, ids, w);
    for (int k = 0; k < n_warm; k++) bench_decode(c, ids + w + k, 1);
    double *pp = calloc((size_t)reps, sizeof *pp), *tg = calloc((size_t)reps, sizeof *tg);
    for (int r = 0; r < reps; r++) {
        llama_memory_clear(mem, true);
        int filled = 0;
        if (p > 0) {
            /* (--pp-depth: a cache already holding pd tokens, filled untimed) */
            for (int i = 0; i < pd; i += o.batch) bench_decode(c, ids + i, pd - i < o.batch ? pd - i : o.batch);
            /* in passes of --batch ids, as llama-bench does */
            double t0 = now_ns();
            for (int i = 0; i < p; i += o.batch) bench_decode(c, ids + pd + i, p - i < o.batch ? p - i : o.batch);
            pp[r] = p / ((now_ns() - t0) * 1e-9);
            filled = pd + p;
        }
        if (n > 0) {
            if (filled != d) {
                llama_memory_clear(mem, true);
                for (int i = 0; i < d; i += o.batch) bench_decode(c, ids + i, d - i < o.batch ? d - i : o.batch);
            }
            double t0 = now_ns();
            for (int k = 0; k < n; k++) bench_decode(c, ids + d + k, 1);
            tg[r] = n / ((now_ns() - t0) * 1e-9);
        }
    }
    printf("{\"engine\":\"llama.cpp\",\"cpu_backend\":\"%s\",\"flash_attn\":%s,\"threads\":%d,\"p\":%d,\"n\":%d,\"d\":%d,"
           "\"pp_depth\":%d,\"pp_tokens_per_s\":[",
           best_cpu_library(), o.flash ? "true" : "false", o.threads, p, n, d, pd);
    for (int r = 0; r < reps; r++) printf("%s%.3f", r ? "," : "", pp[r]);
    printf("],\"tg_tokens_per_s\":[");
    for (int r = 0; r < reps; r++) printf("%s%.3f", r ? "," : "", tg[r]);
    printf("]}\n");
    free(pp);
    free(tg);
    free(ids);
    llama_free(c);
    llama_model_free(m);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) die("usage: see the comment at the top of tests/oracle/pl_oracle.c");
    const char *c = argv[1];
    init_backends();
    if (!strcmp(c, "types")) return cmd_types();
    if (!strcmp(c, "tokenize")) return cmd_tokenize(argc, argv);
    if (!strcmp(c, "tokenize-batch")) return cmd_tokenize_batch(argc, argv);
    if (!strcmp(c, "pieces")) return cmd_pieces(argc, argv);
    if (!strcmp(c, "detokenize-batch")) return cmd_detokenize_batch(argc, argv);
    if (!strcmp(c, "vocab-info")) return cmd_vocab_info(argc, argv);
    if (!strcmp(c, "tokenize-time")) return cmd_tokenize_time(argc, argv);
    if (!strcmp(c, "greedy")) return cmd_greedy(argc, argv);
    if (!strcmp(c, "logits")) return cmd_logits(argc, argv);
    if (!strcmp(c, "quantize")) return cmd_quantize(argc, argv);
    if (!strcmp(c, "quantize-batch")) return cmd_quantize_batch(argc, argv);
    if (!strcmp(c, "to-float")) return cmd_to_float(argc, argv);
    if (!strcmp(c, "quantize-chunk")) return cmd_quantize_chunk(argc, argv);
    if (!strcmp(c, "half-check")) return cmd_half_check();
    if (!strcmp(c, "cpu-variant")) return cmd_cpu_variant();
    if (!strcmp(c, "vec-dot")) return cmd_vec_dot(argc, argv);
    if (!strcmp(c, "act-quantize")) return cmd_act_quantize(argc, argv);
    if (!strcmp(c, "quant-batch")) return cmd_quant_batch(argc, argv);
    if (!strcmp(c, "vec-dot-time")) return cmd_vec_dot_time(argc, argv);
    if (!strcmp(c, "perplexity")) return cmd_perplexity(argc, argv);
    if (!strcmp(c, "bench")) return cmd_bench(argc, argv);
    if (!strcmp(c, "embed")) return cmd_embed(argc, argv);
    die("unknown subcommand %s", c);
    return 2;
}
