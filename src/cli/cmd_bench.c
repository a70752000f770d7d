/*
 * cmd_bench.c -- `pocketllm bench`: prompt processing and generation speed
 * measured the way llama.cpp's llama-bench measures them, so the figures
 * compare (bench/compare runs both side by side); plus the decode
 * bandwidth bound and the peak resident memory.
 *
 * The procedure is mirrored step for step by `pl_oracle bench`
 * (tests/oracle/pl_oracle.c), llama.cpp's side of the comparison: the same
 * context size, batch, synthetic ids, warmup and timed spans.  Change both
 * together.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"

const char cmd_bench_usage[] =
    "usage: pocketllm bench (--model M | --synth SHAPE:TYPE) [-p N] [-n N] [-d DEPTH] [-t N] [-r REPS]\n"
    "                       [--kv f16|f32] [--flash-attn on|off] [--batch N] [--json] [--quiet]\n\n"
    "Measure prompt processing (pp) and generation (tg) speed as llama.cpp's llama-bench does:\n"
    "pp = one prefill of N tokens into an empty cache; tg = N single-token decodes after a\n"
    "prefill of DEPTH tokens (untimed).  Tokens are synthetic ids (the same sequence\n"
    "`pl_oracle bench` feeds llama.cpp), so tokenization is not timed.  After a warmup (a\n"
    "prefill of 32 tokens and 2 decodes) each repetition starts from an empty cache; the median\n"
    "of the repetitions is reported with their spread.\n\n"
    "Also reported: the read bandwidth of this host (measured by reading the model's weights\n"
    "with the same threads, right after each repetition), the bytes of weights one decode step\n"
    "reads, the decode speed that bandwidth allows and the fraction of it tg reaches (each\n"
    "repetition's tg against its own bandwidth, the median reported); and the peak resident\n"
    "memory of the process against the bound file + KV cache + 64 MiB.\n\n"
    "  --model M, -m M     the model\n"
    "  --synth SHAPE:TYPE  benchmark a random-weight model instead: a `pocketllm synth` shape\n"
    "                      (qwen3-0.6b, ...) and f32|f16|bf16 or a quantize TYPE (Q4_K_M, q8_0,\n"
    "                      ...); written to a temporary file ($TMPDIR or /tmp), removed once open\n"
    "  -p N                prompt tokens of pp (default 512; 0 skips pp)\n"
    "  -n N                generated tokens of tg (default 128; 0 skips tg)\n"
    "  -d DEPTH            tokens in the cache before tg (default 0)\n"
    "  -t N                threads (default: the physical cores)\n"
    "  -r REPS             repetitions (default 5)\n"
    "  --kv f16|f32        KV cache type (default f16, as llama.cpp)\n"
    "  --flash-attn on|off llama.cpp's flash-attention arithmetic (default off; see 'pocketllm run')\n"
    "  --batch N           most tokens per forward pass (default 512, llama-bench's n_ubatch)\n"
    "  --json              print one JSON object: pp_tokens_per_s, tg_tokens_per_s (medians),\n"
    "                      *_runs (every repetition), peak_rss_bytes, rss_bound_bytes,\n"
    "                      read_bandwidth_bytes_per_s, weight_bytes_per_token,\n"
    "                      read_bandwidth_runs, decode_bound_tokens_per_s,\n"
    "                      decode_bandwidth_fraction (+ _min, _max), ...\n"
    "  --quiet             no progress on stderr\n";

#define MIB (1024.0 * 1024.0)

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The synthetic ids: a 64-bit LCG, identical in pl_oracle bench. */
static void bench_ids(int32_t *ids, int64_t n, int32_t n_vocab, uint64_t seed) {
    uint64_t x = seed * 2862933555777941757ull + 3037000493ull;
    for (int64_t i = 0; i < n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        ids[i] = (int32_t)((x >> 33) % (uint64_t)n_vocab);
    }
}

/* VmHWM of this process in bytes, 0 when /proc cannot tell. */
static uint64_t peak_rss(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return 0;
    char line[256];
    unsigned long long kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %llu kB", &kb) == 1) break;
    fclose(f);
    return (uint64_t)kb * 1024;
}

/* Restart the peak-RSS count (so a synthetic model's writing does not
 * count); false when the kernel refuses. */
static bool reset_peak_rss(void) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f) return false;
    bool ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct stats {
    double median, min, max;
} stats;

static stats summarize(const double *v, int n) {
    double *s = malloc(sizeof *s * (size_t)n);
    stats r = {0, 0, 0};
    if (!s || n < 1) {
        free(s);
        return r;
    }
    memcpy(s, v, sizeof *s * (size_t)n);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    r.median = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    r.min = s[0];
    r.max = s[n - 1];
    free(s);
    return r;
}

/* --synth SHAPE:TYPE: write the shape (f16 unless TYPE is a float type),
 * quantize it when TYPE asks, into a temporary file; *path gets its name. */
static int make_synth(const char *cmd, const char *spec, bool quiet, char *path, size_t cap) {
    const char *colon = strchr(spec, ':');
    if (!colon || colon == spec || !colon[1]) return cli_usage(cmd, "--synth wants SHAPE:TYPE, not '%s'", spec);
    char shape[64];
    if ((size_t)(colon - spec) >= sizeof shape) return cli_usage(cmd, "--synth: shape name too long");
    memcpy(shape, spec, (size_t)(colon - spec));
    shape[colon - spec] = 0;
    const char *type = colon + 1;
    uint32_t ftype = 1;
    bool quant = true;
    if (!strcmp(type, "f32") || !strcmp(type, "F32")) ftype = 0, quant = false;
    else if (!strcmp(type, "f16") || !strcmp(type, "F16")) ftype = 1, quant = false;
    else if (!strcmp(type, "bf16") || !strcmp(type, "BF16")) ftype = 30, quant = false;
    else if (!pocketllm_quantize_type_known(type))
        return cli_usage(cmd, "--synth: '%s' is neither f32/f16/bf16 nor a quantize type (see 'pocketllm quantize --help')",
                         type);
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp) tmp = "/tmp";
    char base[4096];
    snprintf(base, sizeof base, "%s/pocketllm-bench-%ld-f.gguf", tmp, (long)getpid());
    snprintf(path, cap, "%s/pocketllm-bench-%ld-q.gguf", tmp, (long)getpid());
    pocketllm_synth_params sp = pocketllm_synth_default_params();
    sp.shape = shape;
    sp.type = ftype;
    if (!quiet) fprintf(stderr, "bench: writing a random-weight %s model (%s)%s\n", shape, type, quant ? ", then quantizing it" : "");
    pocketllm_status st = pocketllm_synth(&sp, quant ? base : path);
    if (st) return st == POCKETLLM_ERR_INVALID_ARGUMENT ? cli_usage(cmd, "%s", pocketllm_last_error()) : cli_lib_error(cmd, st);
    if (quant) {
        pocketllm_quantize_params qp = pocketllm_quantize_default_params();
        qp.type = type;
        st = pocketllm_quantize(base, path, &qp);
        unlink(base);
        if (st) return cli_lib_error(cmd, st);
    }
    return CLI_OK;
}

typedef struct bench_cfg {
    int64_t p, n, d, reps, batch;
    int threads;
    uint32_t kv;
    int flash; /* --flash-attn on */
} bench_cfg;

/* One timed run (see the header comment); pp / tg in tokens per second. */
static pocketllm_status run_once(pocketllm_session *s, const int32_t *ids, const bench_cfg *c, double *pp, double *tg) {
    pocketllm_status st;
    int64_t filled = 0;
    pocketllm_session_reset(s);
    if (c->p > 0) {
        const double t0 = now_s();
        if ((st = pocketllm_session_eval(s, ids, (size_t)c->p, 0))) return st;
        *pp = (double)c->p / (now_s() - t0);
        filled = c->p;
    }
    if (c->n > 0) {
        if (filled != c->d) {
            pocketllm_session_reset(s);
            if (c->d > 0 && (st = pocketllm_session_eval(s, ids, (size_t)c->d, 0))) return st;
        }
        const double t0 = now_s();
        for (int64_t k = 0; k < c->n; k++)
            if ((st = pocketllm_session_eval(s, ids + c->d + k, 1, 0))) return st;
        *tg = (double)c->n / (now_s() - t0);
    }
    return POCKETLLM_OK;
}

static cJSON *json_runs(const double *v, int n) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
    return a;
}

int cmd_bench(int argc, char **argv) {
    const char *cmd = "bench";
    const char *model_path = NULL, *synth = NULL, *v, *err = NULL;
    bool json = false, quiet = false;
    bench_cfg c = {.p = 512, .n = 128, .d = 0, .reps = 5, .batch = 512, .threads = 0, .kv = 1};
    for (int i = 1; i < argc; i++) {
        int64_t *num = NULL, lo = 0, hi = 1 << 20;
        int64_t threads = -1;
        int frc = 0;
        if (cli_opt(argc, argv, &i, "--model", &v, &err) || cli_opt(argc, argv, &i, "-m", &v, &err)) model_path = v;
        else if (cli_opt(argc, argv, &i, "--synth", &v, &err)) synth = v;
        else if (cli_opt(argc, argv, &i, "-p", &v, &err)) num = &c.p;
        else if (cli_opt(argc, argv, &i, "-n", &v, &err)) num = &c.n;
        else if (cli_opt(argc, argv, &i, "-d", &v, &err)) num = &c.d;
        else if (cli_opt(argc, argv, &i, "-r", &v, &err)) num = &c.reps, lo = 1, hi = 1000;
        else if (cli_opt(argc, argv, &i, "--batch", &v, &err)) num = &c.batch, lo = 1, hi = 65536;
        else if (cli_opt(argc, argv, &i, "-t", &v, &err) || cli_opt(argc, argv, &i, "--threads", &v, &err)) {
            if (!err && !cli_parse_i64(v, 1, 1024, &threads)) return cli_usage(cmd, "-t wants 1..1024, not '%s'", v);
            c.threads = (int)threads;
        } else if (cli_opt_flash(argc, argv, &i, cmd, &c.flash, &frc)) {
            if (frc) return frc;
        } else if (cli_opt(argc, argv, &i, "--kv", &v, &err)) {
            if (!err && strcmp(v, "f16") && strcmp(v, "f32")) return cli_usage(cmd, "--kv wants f16 or f32, not '%s'", v);
            if (!err) c.kv = strcmp(v, "f16") ? 0 : 1;
        } else if (!strcmp(argv[i], "--json")) json = true;
        else if (!strcmp(argv[i], "--quiet")) quiet = true;
        else return cli_usage(cmd, "unknown argument '%s'", argv[i]);
        if (err) return cli_usage(cmd, "%s %s", argv[i], err);
        if (num && !cli_parse_i64(v, lo, hi, num))
            return cli_usage(cmd, "%s wants a number %lld..%lld, not '%s'", argv[i - 1], (long long)lo, (long long)hi, v);
    }
    if (!model_path == !synth) return cli_usage(cmd, "needs exactly one of --model and --synth");
    if (c.p == 0 && c.n == 0) return cli_usage(cmd, "-p 0 and -n 0 leave nothing to measure");
    const int64_t n_ctx = c.p > c.d + c.n ? c.p : c.d + c.n;
    if (n_ctx > (1 << 20)) return cli_usage(cmd, "a context of %lld positions is too large", (long long)n_ctx);

    char tmp_path[4200] = "";
    if (synth) {
        int rc = make_synth(cmd, synth, quiet, tmp_path, sizeof tmp_path);
        if (rc) return rc;
        model_path = tmp_path;
    }
    /* what writing a synthetic model took is not the benchmark's */
    const bool rss_reset = reset_peak_rss();

    pocketllm_model_params mp = pocketllm_model_default_params();
    mp.n_threads = c.threads;
    pocketllm_model *m = NULL;
    pocketllm_status st = pocketllm_model_open(model_path, &mp, &m);
    if (*tmp_path) unlink(tmp_path); /* the mapping keeps it alive */
    if (st) return cli_lib_error(cmd, st);
    int rc = CLI_FAIL;
    pocketllm_session *s = NULL;
    int32_t *ids = NULL;
    double *pp = calloc((size_t)c.reps, sizeof *pp), *tg = calloc((size_t)c.reps, sizeof *tg);
    double *bws = calloc((size_t)c.reps, sizeof *bws), *fracs = calloc((size_t)c.reps, sizeof *fracs);
    pocketllm_bench_info info;
    if ((st = pocketllm_bench_model_info(m, c.kv, &info))) goto lib_fail;
    pocketllm_session_params sp = pocketllm_session_default_params();
    sp.n_ctx = (uint32_t)n_ctx;
    sp.n_batch = (uint32_t)c.batch;
    sp.kv_type = c.kv;
    sp.flash_attn = c.flash;
    sp.n_threads = c.threads;
    if ((st = pocketllm_session_new(m, &sp, &s))) goto lib_fail;
    const int32_t n_vocab = pocketllm_session_n_vocab(s);
    ids = malloc(sizeof *ids * (size_t)(n_ctx + 64));
    if (!pp || !tg || !bws || !fracs || !ids || n_vocab < 1) {
        rc = cli_error(cmd, "out of memory");
        goto done;
    }
    bench_ids(ids, n_ctx + 64, n_vocab, 1);

    /* warmup: weights paged in, threads started */
    const int64_t w = c.p < 32 ? (c.p ? c.p : 1) : 32, n_warm = n_ctx - w < 2 ? n_ctx - w : 2;
    if ((st = pocketllm_session_eval(s, ids, (size_t)w, 0))) goto lib_fail;
    for (int64_t k = 0; k < n_warm; k++)
        if ((st = pocketllm_session_eval(s, ids + w + k, 1, 0))) goto lib_fail;
    /* the read bandwidth is measured right after each repetition and each
     * tg is held against its own: on a shared host both move together,
     * and a bound taken at another moment would flatter or wrong the rate */
    for (int r = 0; r < c.reps; r++) {
        if ((st = run_once(s, ids, &c, &pp[r], &tg[r]))) goto lib_fail;
        if ((st = pocketllm_bench_read_bandwidth(m, c.threads, &bws[r]))) goto lib_fail;
        fracs[r] = info.weight_bytes_per_token && bws[r] > 0 ? tg[r] * (double)info.weight_bytes_per_token / bws[r] : 0;
        if (!quiet)
            fprintf(stderr, "bench: rep %d/%lld: pp %.2f tok/s, tg %.2f tok/s, read bandwidth %.2f GB/s\n", r + 1,
                    (long long)c.reps, pp[r], tg[r], bws[r] * 1e-9);
    }

    const stats sp_pp = summarize(pp, (int)c.reps), sp_tg = summarize(tg, (int)c.reps);
    const stats s_bw = summarize(bws, (int)c.reps), s_frac = summarize(fracs, (int)c.reps);
    const double bw = s_bw.median;
    const uint64_t rss = peak_rss();
    const uint64_t kv_bytes = info.kv_bytes_per_position * (uint64_t)n_ctx;
    const uint64_t bound = info.file_bytes + kv_bytes + (uint64_t)(64 * MIB);
    const double tok_bound = info.weight_bytes_per_token ? bw / (double)info.weight_bytes_per_token : 0;
    const double frac = c.n > 0 ? s_frac.median : 0;
    int threads = c.threads;
    if (!threads) {
        pocketllm_cpu_info ci;
        threads = pocketllm_cpu_info_get(&ci) == POCKETLLM_OK ? (int)ci.physical_cores : 0;
    }
    if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "engine", "pocketllm");
        cJSON_AddStringToObject(o, "model", synth ? synth : model_path);
        cJSON_AddNumberToObject(o, "threads", threads);
        cJSON_AddNumberToObject(o, "p", (double)c.p);
        cJSON_AddNumberToObject(o, "n", (double)c.n);
        cJSON_AddNumberToObject(o, "d", (double)c.d);
        cJSON_AddNumberToObject(o, "reps", (double)c.reps);
        cJSON_AddStringToObject(o, "kv", c.kv ? "f16" : "f32");
        cJSON_AddBoolToObject(o, "flash_attn", c.flash != 0);
        if (c.p > 0) {
            cJSON_AddNumberToObject(o, "pp_tokens_per_s", sp_pp.median);
            cJSON_AddNumberToObject(o, "pp_min", sp_pp.min);
            cJSON_AddNumberToObject(o, "pp_max", sp_pp.max);
            cJSON_AddItemToObject(o, "pp_runs", json_runs(pp, (int)c.reps));
        }
        if (c.n > 0) {
            cJSON_AddNumberToObject(o, "tg_tokens_per_s", sp_tg.median);
            cJSON_AddNumberToObject(o, "tg_min", sp_tg.min);
            cJSON_AddNumberToObject(o, "tg_max", sp_tg.max);
            cJSON_AddItemToObject(o, "tg_runs", json_runs(tg, (int)c.reps));
        }
        cJSON_AddNumberToObject(o, "read_bandwidth_bytes_per_s", bw);
        cJSON_AddNumberToObject(o, "weight_bytes_per_token", (double)info.weight_bytes_per_token);
        cJSON_AddNumberToObject(o, "decode_bound_tokens_per_s", tok_bound);
        if (c.n > 0) {
            cJSON_AddNumberToObject(o, "decode_bandwidth_fraction", frac);
            cJSON_AddNumberToObject(o, "decode_bandwidth_fraction_min", s_frac.min);
            cJSON_AddNumberToObject(o, "decode_bandwidth_fraction_max", s_frac.max);
        }
        cJSON_AddItemToObject(o, "read_bandwidth_runs", json_runs(bws, (int)c.reps));
        cJSON_AddNumberToObject(o, "peak_rss_bytes", (double)rss);
        cJSON_AddNumberToObject(o, "file_bytes", (double)info.file_bytes);
        cJSON_AddNumberToObject(o, "kv_bytes", (double)kv_bytes);
        cJSON_AddNumberToObject(o, "rss_bound_bytes", (double)bound);
        cJSON_AddBoolToObject(o, "rss_within_bound", rss > 0 && rss <= bound);
        cJSON_AddBoolToObject(o, "rss_peak_reset", rss_reset);
        char *text = cJSON_PrintUnformatted(o);
        if (text) puts(text);
        free(text);
        cJSON_Delete(o);
    } else {
        char b1[32], b2[32], b3[32], b4[32];
        printf("model     %s (%s), %d threads, kv %s, %lld repetitions\n", synth ? synth : model_path,
               cli_fmt_bytes(info.file_bytes, b1, sizeof b1), threads, c.kv ? "f16" : "f32", (long long)c.reps);
        if (c.p > 0)
            printf("pp%-7lld %10.2f tok/s  (median; spread %.2f .. %.2f)\n", (long long)c.p, sp_pp.median, sp_pp.min,
                   sp_pp.max);
        if (c.n > 0)
            printf("tg%-7lld %10.2f tok/s  (median; spread %.2f .. %.2f) at depth %lld\n", (long long)c.n, sp_tg.median,
                   sp_tg.min, sp_tg.max, (long long)c.d);
        printf("bandwidth %10.2f GB/s read (the weights, %d threads; median; spread %.2f .. %.2f)\n", bw * 1e-9, threads,
               s_bw.min * 1e-9, s_bw.max * 1e-9);
        printf("decode    %s of weights per token: at most %.2f tok/s at that bandwidth", cli_fmt_bytes(info.weight_bytes_per_token, b1, sizeof b1),
               tok_bound);
        if (c.n > 0) printf("; tg reaches %.2f of it (median of each rep against its own bandwidth; %.2f .. %.2f)", frac, s_frac.min, s_frac.max);
        printf("\n");
        printf("peak RSS  %s; bound file %s + KV %s + 64 MiB = %s: %s%s\n", cli_fmt_bytes(rss, b1, sizeof b1),
               cli_fmt_bytes(info.file_bytes, b2, sizeof b2), cli_fmt_bytes(kv_bytes, b3, sizeof b3),
               cli_fmt_bytes(bound, b4, sizeof b4), rss == 0 ? "unknown" : rss <= bound ? "within" : "EXCEEDED",
               rss_reset ? "" : " (peak not reset after writing the synthetic model)");
    }
    rc = CLI_OK;
    goto done;
lib_fail:
    rc = cli_lib_error(cmd, st);
done:
    free(pp);
    free(tg);
    free(bws);
    free(fracs);
    free(ids);
    pocketllm_session_free(s);
    pocketllm_model_close(m);
    return rc;
}
