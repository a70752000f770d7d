/*
 * cmd_bench.c -- `pocketllm bench`: prompt processing and generation speed
 * measured the way llama.cpp's llama-bench measures them, so the figures
 * compare (bench/compare runs both side by side); plus the decode
 * bandwidth bound and the peak resident memory.  With --device the model
 * runs on that device; the bound, which is the host's read bandwidth, is
 * then not measured (n/a).
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

#include "bench_grammar.h"
#include "bench_spec.h"
#include "bench_verify.h"
#include "cli.h"
#include "commands.h"

const char cmd_bench_usage[] =
    "usage: pocketllm bench (--model M | --synth SHAPE:TYPE) [-p N] [-n N] [-d DEPTH] [--pp-depth D]\n"
    "                       [-t N] [-r REPS] [--verify N]\n"
    "                       [--lookup N | --draft M [--draft-max N] [--draft-min N]]\n"
    "                       [--kv T] [-ctk T] [-ctv T] [--flash-attn on|off] [--batch N] [--device D]\n"
    "                       [--device-memory S] [--mmproj F (--image F | --image-size WxH |\n"
    "                       --audio F) [--image-max-tokens N]] [--json-schema F | --grammar F]\n"
    "                       [--json] [--quiet]\n\n"
    "Measure prompt processing (pp) and generation (tg) speed as llama.cpp's llama-bench does:\n"
    "pp = one prefill of N tokens into an empty cache (or, with --pp-depth D, appended to a cache\n"
    "already holding D tokens, as a continued chat's prefill); tg = N single-token decodes after\n"
    "a prefill of DEPTH tokens (the earlier prefills untimed).  Tokens are synthetic ids (the same sequence\n"
    "`pl_oracle bench` feeds llama.cpp), so tokenization is not timed.  After a warmup (a\n"
    "prefill of 32 tokens and 2 decodes) each repetition starts from an empty cache; the median\n"
    "of the repetitions is reported with their spread.\n\n"
    "Also reported: the read bandwidth of this host (measured by reading the model's weights\n"
    "with the same threads, right after each repetition), the bytes one decode step reads -- the\n"
    "weights (of a mixture of experts: those outside the experts and the expert_used_count\n"
    "experts a token is routed to, not all of them) and the KV cache it attends over (its mean\n"
    "over the tg steps, at depth DEPTH .. DEPTH+N) --, the decode speed that bandwidth allows and\n"
    "the fraction of it tg reaches (each repetition's tg against its own bandwidth, the median\n"
    "reported); and the peak resident memory of the process against the bound file + KV cache\n"
    "+ 64 MiB.\n\n"
    "With --device the model and its session run on that device, and the bandwidth, the decode\n"
    "bound and tg's fraction of it are n/a (null in --json): they are the host's read bandwidth,\n"
    "which says nothing of a GPU's memory (and reading the mapped file would only page back in\n"
    "what the upload let go).  Printed instead: the device and the bytes in use there.  The peak\n"
    "RSS is still the host's, but its bound is the CPU's and is not checked (rss_within_bound null).\n\n"
    "  --model M, -m M     the model\n"
    "  --synth SHAPE:TYPE  benchmark a random-weight model instead: a `pocketllm synth` shape\n"
    "                      (qwen3-0.6b, qwen3moe-30b-a3b, ...) and f32|f16|bf16 or a quantize TYPE\n"
    "                      (Q4_K_M, q8_0, ...), written directly as `pocketllm synth --type TYPE`\n"
    "                      writes it (no f16 file in between); to a temporary file ($TMPDIR or\n"
    "                      /tmp), removed once open\n"
    "  -p N                prompt tokens of pp (default 512; 0 skips pp)\n"
    "  -n N                generated tokens of tg (default 128; 0 skips tg)\n"
    "  -d DEPTH            tokens in the cache before tg (default 0)\n"
    "  --pp-depth D        tokens in the cache before pp (default 0)\n"
    "  -t N                threads (default: the physical cores)\n"
    "  -r REPS             repetitions (default 5)\n"
    "  --lookup N | --draft M  instead of pp/tg: greedy generation of -n tokens after a prompt of -p,\n"
    "                      step by step and with speculative decoding (prompt lookup of n-grams up\n"
    "                      to N, or the draft model M, as 'pocketllm run'), the same ids both ways\n"
    "                      (checked); prints both speeds, the speed-up, the drafts made and kept\n"
    "                      (the acceptance rate) and tokens per verifying pass\n"
    "  --draft-max N, --draft-min N  most / fewest drafted ids a pass verifies (default 8 / 1)\n"
    "  --verify N          also time speculative decoding's verification: a pass of 1 + j tokens\n"
    "                      (every row's logits kept, as run --draft/--lookup verify) at depth DEPTH,\n"
    "                      j = 1..N (1..64), each against one decode step there (the median of REPS\n"
    "                      passes each); and print the speedup prompt lookup would give at draft\n"
    "                      acceptance 0.3, 0.5, 0.7, 0.9 -- computed from those costs, not run\n"
    CLI_KV_HELP
    "  --flash-attn on|off llama.cpp's flash-attention arithmetic (default off; see 'pocketllm run')\n"
    "  --batch N           most tokens per forward pass (default 512, llama-bench's n_ubatch)\n"
    CLI_DEVICE_HELP
    "  --json              print one JSON object: pp_tokens_per_s, tg_tokens_per_s (medians),\n"
    "                      *_runs (every repetition), peak_rss_bytes, rss_bound_bytes,\n"
    "                      read_bandwidth_bytes_per_s, weight_bytes_per_token,\n"
    "                      kv_bytes_per_token, bytes_per_token (the two summed),\n"
    "                      read_bandwidth_runs, decode_bound_tokens_per_s,\n"
    "                      decode_bandwidth_fraction (+ _min, _max), kv and kv_v (the cache\n"
    "                      types), flash_attn, ...; on a device also\n"
    "                      device, device_memory_used_bytes, device_memory_budget_bytes\n"
    "  --mmproj F          also measure an image's encode through this vision tower: preprocessing\n"
    "                      and the tower, timed apart (as `pl_mtmd bench` times libmtmd), their\n"
    "                      medians in ms and the tower's merged tokens per second; -p 0 -n 0 measures\n"
    "                      only that\n"
    "  --image F           the image (JPEG, PNG, WebP)\n"
    "  --image-size WxH    a synthetic image of that size instead\n"
    "  --image-max-tokens N  the preprocessing's token limit (default 4096)\n"
    "  --audio F           with an audio tower (Qwen3-ASR's mmproj) instead: file -> embeddings,\n"
    "                      timed in three parts as `pl_mtmd audio-bench` times libmtmd -- the\n"
    "                      decode (mono, resampled to 16 kHz), the log-mel windows and the tower\n"
    "                      on every window; their medians in ms (JSON: an \"audio\" object with\n"
    "                      decode_ms, mel_ms, encode_ms, total_ms, *_runs_ms, n_tokens, windows,\n"
    "                      seconds)\n"
    "  --json-schema F     instead: the cost of constrained decoding -- -n sampled steps after a\n"
    "                      prompt of -p tokens, without and with the schema in F (the same seed),\n"
    "                      their tok/s and ratio, and the time of a full vocabulary mask per\n"
    "                      step (mean, median, p95, max in ms)\n"
    "  --grammar F         the same with a GBNF grammar\n"
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

/* --synth SHAPE:TYPE: write the shape into a temporary file; *path gets its
 * name.  A quantized TYPE is written directly (random blocks of the types
 * llama-quantize would choose), never through an f16 file: at a large
 * mixture of experts' shape that intermediate would be four times the rung
 * (61 GB for Qwen3-30B-A3B). */
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
    snprintf(path, cap, "%s/pocketllm-bench-%ld-q.gguf", tmp, (long)getpid());
    pocketllm_synth_params sp = pocketllm_synth_default_params();
    sp.shape = shape;
    sp.type = ftype;
    if (quant) sp.quant = type;
    if (!quiet) fprintf(stderr, "bench: writing a random-weight %s model (%s)\n", shape, type);
    pocketllm_status st = pocketllm_synth(&sp, path);
    if (st) return st == POCKETLLM_ERR_INVALID_ARGUMENT ? cli_usage(cmd, "%s", pocketllm_last_error()) : cli_lib_error(cmd, st);
    return CLI_OK;
}

typedef struct bench_cfg {
    int64_t p, n, d, reps, batch;
    int64_t pd; /* --pp-depth: tokens already in the cache when pp's prefill starts */
    int threads;
    uint32_t kv, kv_v; /* --kv, -ctk, -ctv (cli_opt_kv) */
    int flash; /* --flash-attn: 1, 0, or -1 not given (cli_flash_auto) */
    /* the image encode (--mmproj) */
    const char *mmproj, *image;
    int64_t image_w, image_h, image_max_tokens;
    const char *audio; /* --audio: the audio encode instead */
    const char *schema, *grammar; /* --json-schema / --grammar: the constrained decode instead */
    int64_t verify; /* --verify N: the cost of verifying 1..N drafts (bench_verify.c), 0: not measured */
    int64_t lookup, draft_max, draft_min; /* --lookup / --draft: speculative decoding instead (bench_spec.c) */
    const char *draft;
} bench_cfg;

static const char *kv_name(uint32_t t) {
    const char *n = pocketllm_type_name(t);
    return n ? n : "?";
}

/* "f16", or "q8_0/f16" for K and V of two types */
static const char *kv_label(const bench_cfg *c) {
    static char buf[40];
    if (c->kv_v == POCKETLLM_KV_AS_K || c->kv_v == c->kv) return kv_name(c->kv);
    snprintf(buf, sizeof buf, "%s/%s", kv_name(c->kv), kv_name(c->kv_v));
    return buf;
}

/* The model's figures with the cache's bytes per position: K's half in
 * its type, V's in its own. */
static pocketllm_status kv_info(pocketllm_model *m, const bench_cfg *c, pocketllm_bench_info *info) {
    pocketllm_status st = pocketllm_bench_model_info(m, c->kv, info);
    if (st || c->kv_v == POCKETLLM_KV_AS_K || c->kv_v == c->kv) return st;
    pocketllm_bench_info v;
    if ((st = pocketllm_bench_model_info(m, c->kv_v, &v))) return st;
    info->kv_bytes_per_position = info->kv_bytes_per_position / 2 + v.kv_bytes_per_position / 2;
    return POCKETLLM_OK;
}

/* One timed run (see the header comment); pp / tg in tokens per second. */
static pocketllm_status run_once(pocketllm_session *s, const int32_t *ids, const bench_cfg *c, double *pp, double *tg) {
    pocketllm_status st;
    int64_t filled = 0;
    pocketllm_session_reset(s);
    if (c->p > 0) {
        if (c->pd > 0 && (st = pocketllm_session_eval(s, ids, (size_t)c->pd, 0))) return st;
        const double t0 = now_s();
        if ((st = pocketllm_session_eval(s, ids + c->pd, (size_t)c->p, 0))) return st;
        *pp = (double)c->p / (now_s() - t0);
        filled = c->pd + c->p;
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

/* Everything a finished benchmark reports. */
typedef struct bench_out {
    const bench_cfg *c;
    const char *model;        /* as given (--model path or --synth spec) */
    int threads;
    const double *pp, *tg, *bws;
    stats pp_s, tg_s, bw_s, frac_s;
    double tok_bound;
    double kv_per_token; /* KV bytes one tg step reads, the mean over the steps */
    pocketllm_bench_info info;
    uint64_t rss, kv_bytes, bound;
    bool rss_reset;
    /* on a device: the host's read bandwidth bounds nothing there, so it
     * is neither measured nor held against tg (n/a; null in JSON) */
    const char *device;       /* NULL: the CPU */
    uint64_t dev_used, dev_budget;
    const pocketllm_bench_image *img; /* c->reps image runs, or NULL */
    const pocketllm_bench_audio *aud; /* c->reps audio runs, or NULL */
    const double *verify_ms;  /* --verify: c->verify + 1 medians, or NULL */
} bench_out;

/* The image runs' medians (and spread) of the tower and of the preprocessing. */
static void image_stats(const bench_out *b, stats *prep, stats *enc) {
    double pv[1000], ev[1000];
    const int n = (int)b->c->reps;
    for (int i = 0; i < n; i++) pv[i] = b->img[i].prep_ms, ev[i] = b->img[i].encode_ms;
    *prep = summarize(pv, n);
    *enc = summarize(ev, n);
}

static cJSON *image_json(const bench_out *b) {
    stats prep, enc;
    image_stats(b, &prep, &enc);
    const pocketllm_bench_image *r = &b->img[0];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "mmproj", b->c->mmproj);
    if (b->c->image) cJSON_AddStringToObject(o, "image", b->c->image);
    else cJSON_AddNullToObject(o, "image");
    cJSON_AddNumberToObject(o, "width", r->width);
    cJSON_AddNumberToObject(o, "height", r->height);
    cJSON_AddNumberToObject(o, "prep_width", r->prep_width);
    cJSON_AddNumberToObject(o, "prep_height", r->prep_height);
    cJSON_AddNumberToObject(o, "n_tokens", r->n_tokens);
    cJSON_AddNumberToObject(o, "prep_ms", prep.median);
    cJSON_AddNumberToObject(o, "encode_ms", enc.median);
    cJSON_AddNumberToObject(o, "encode_min_ms", enc.min);
    cJSON_AddNumberToObject(o, "encode_max_ms", enc.max);
    cJSON_AddNumberToObject(o, "total_ms", prep.median + enc.median);
    cJSON_AddNumberToObject(o, "tokens_per_s", enc.median > 0 ? r->n_tokens / (enc.median * 1e-3) : 0);
    cJSON *a = cJSON_AddArrayToObject(o, "encode_runs_ms");
    for (int i = 0; i < (int)b->c->reps; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber(b->img[i].encode_ms));
    return o;
}

static void print_image_text(const bench_out *b) {
    stats prep, enc;
    image_stats(b, &prep, &enc);
    const pocketllm_bench_image *r = &b->img[0];
    printf("image     %ux%u -> %ux%u, %u tokens: preprocess %.2f ms + tower %.2f ms = %.2f ms; %.1f tok/s "
           "(medians; tower %.2f .. %.2f)\n",
           r->width, r->height, r->prep_width, r->prep_height, r->n_tokens, prep.median, enc.median,
           prep.median + enc.median, enc.median > 0 ? r->n_tokens / (enc.median * 1e-3) : 0, enc.min, enc.max);
}

/* The audio runs' medians (and spread): decode, mel, tower, all three. */
static void audio_stats(const bench_out *b, stats s[4]) {
    double v[4][1000];
    const int n = (int)b->c->reps;
    for (int i = 0; i < n; i++) {
        const pocketllm_bench_audio *r = &b->aud[i];
        v[0][i] = r->decode_ms, v[1][i] = r->mel_ms, v[2][i] = r->encode_ms;
        v[3][i] = r->decode_ms + r->mel_ms + r->encode_ms;
    }
    for (int k = 0; k < 4; k++) s[k] = summarize(v[k], n);
}

static cJSON *audio_json(const bench_out *b) {
    stats s[4];
    audio_stats(b, s);
    const pocketllm_bench_audio *r = &b->aud[0];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "mmproj", b->c->mmproj);
    cJSON_AddStringToObject(o, "audio", b->c->audio);
    cJSON_AddNumberToObject(o, "seconds", r->seconds);
    cJSON_AddNumberToObject(o, "windows", r->windows);
    cJSON_AddNumberToObject(o, "n_tokens", r->n_tokens);
    cJSON_AddNumberToObject(o, "decode_ms", s[0].median);
    cJSON_AddNumberToObject(o, "mel_ms", s[1].median);
    cJSON_AddNumberToObject(o, "encode_ms", s[2].median);
    cJSON_AddNumberToObject(o, "encode_min_ms", s[2].min);
    cJSON_AddNumberToObject(o, "encode_max_ms", s[2].max);
    cJSON_AddNumberToObject(o, "total_ms", s[3].median);
    cJSON_AddNumberToObject(o, "tokens_per_s", s[2].median > 0 ? r->n_tokens / (s[2].median * 1e-3) : 0);
    const char *keys[4] = {"decode_runs_ms", "mel_runs_ms", "encode_runs_ms", "total_runs_ms"};
    for (int k = 0; k < 4; k++) {
        cJSON *a = cJSON_AddArrayToObject(o, keys[k]);
        for (int i = 0; i < (int)b->c->reps; i++) {
            const pocketllm_bench_audio *x = &b->aud[i];
            const double v[4] = {x->decode_ms, x->mel_ms, x->encode_ms, x->decode_ms + x->mel_ms + x->encode_ms};
            cJSON_AddItemToArray(a, cJSON_CreateNumber(v[k]));
        }
    }
    return o;
}

static void print_audio_text(const bench_out *b) {
    stats s[4];
    audio_stats(b, s);
    const pocketllm_bench_audio *r = &b->aud[0];
    printf("audio     %.2f s, %u windows, %u tokens: decode %.2f ms + mel %.2f ms + tower %.2f ms = %.2f ms; "
           "%.1f tok/s (medians; tower %.2f .. %.2f)\n",
           r->seconds, r->windows, r->n_tokens, s[0].median, s[1].median, s[2].median, s[3].median,
           s[2].median > 0 ? r->n_tokens / (s[2].median * 1e-3) : 0, s[2].min, s[2].max);
}

/* A number, or null where it means nothing (on a device). */
static void json_num_or_null(cJSON *o, const char *key, bool have, double v) {
    if (have) cJSON_AddNumberToObject(o, key, v);
    else cJSON_AddNullToObject(o, key);
}

static void print_json(const bench_out *b) {
    const bench_cfg *c = b->c;
    const bool host = !b->device;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "engine", "pocketllm");
    cJSON_AddStringToObject(o, "model", b->model);
    cJSON_AddNumberToObject(o, "threads", b->threads);
    if (b->device) {
        cJSON_AddStringToObject(o, "device", b->device);
        cJSON_AddNumberToObject(o, "device_memory_used_bytes", (double)b->dev_used);
        cJSON_AddNumberToObject(o, "device_memory_budget_bytes", (double)b->dev_budget);
    }
    cJSON_AddNumberToObject(o, "p", (double)c->p);
    cJSON_AddNumberToObject(o, "n", (double)c->n);
    cJSON_AddNumberToObject(o, "d", (double)c->d);
    cJSON_AddNumberToObject(o, "pp_depth", (double)c->pd);
    cJSON_AddNumberToObject(o, "reps", (double)c->reps);
    cJSON_AddStringToObject(o, "kv", kv_name(c->kv));
    cJSON_AddStringToObject(o, "kv_v", kv_name(c->kv_v == POCKETLLM_KV_AS_K ? c->kv : c->kv_v));
    cJSON_AddBoolToObject(o, "flash_attn", c->flash != 0);
    if (c->p > 0) {
        cJSON_AddNumberToObject(o, "pp_tokens_per_s", b->pp_s.median);
        cJSON_AddNumberToObject(o, "pp_min", b->pp_s.min);
        cJSON_AddNumberToObject(o, "pp_max", b->pp_s.max);
        cJSON_AddItemToObject(o, "pp_runs", json_runs(b->pp, (int)c->reps));
    }
    if (c->n > 0) {
        cJSON_AddNumberToObject(o, "tg_tokens_per_s", b->tg_s.median);
        cJSON_AddNumberToObject(o, "tg_min", b->tg_s.min);
        cJSON_AddNumberToObject(o, "tg_max", b->tg_s.max);
        cJSON_AddItemToObject(o, "tg_runs", json_runs(b->tg, (int)c->reps));
    }
    json_num_or_null(o, "read_bandwidth_bytes_per_s", host, b->bw_s.median);
    cJSON_AddNumberToObject(o, "weight_bytes_per_token", (double)b->info.weight_bytes_per_token);
    cJSON_AddNumberToObject(o, "kv_bytes_per_token", b->kv_per_token);
    cJSON_AddNumberToObject(o, "bytes_per_token", (double)b->info.weight_bytes_per_token + b->kv_per_token);
    json_num_or_null(o, "decode_bound_tokens_per_s", host, b->tok_bound);
    if (c->n > 0) {
        json_num_or_null(o, "decode_bandwidth_fraction", host, b->frac_s.median);
        json_num_or_null(o, "decode_bandwidth_fraction_min", host, b->frac_s.min);
        json_num_or_null(o, "decode_bandwidth_fraction_max", host, b->frac_s.max);
    }
    if (host) cJSON_AddItemToObject(o, "read_bandwidth_runs", json_runs(b->bws, (int)c->reps));
    else cJSON_AddNullToObject(o, "read_bandwidth_runs");
    cJSON_AddNumberToObject(o, "peak_rss_bytes", (double)b->rss);
    cJSON_AddNumberToObject(o, "file_bytes", (double)b->info.file_bytes);
    cJSON_AddNumberToObject(o, "kv_bytes", (double)b->kv_bytes);
    cJSON_AddNumberToObject(o, "rss_bound_bytes", (double)b->bound);
    if (host) cJSON_AddBoolToObject(o, "rss_within_bound", b->rss > 0 && b->rss <= b->bound);
    else cJSON_AddNullToObject(o, "rss_within_bound");
    cJSON_AddBoolToObject(o, "rss_peak_reset", b->rss_reset);
    if (b->img) cJSON_AddItemToObject(o, "image", image_json(b));
    if (b->aud) cJSON_AddItemToObject(o, "audio", audio_json(b));
    if (b->verify_ms) cJSON_AddItemToObject(o, "verify", bench_verify_json(b->verify_ms, c->verify, c->d));
    char *text = cJSON_PrintUnformatted(o);
    if (text) puts(text);
    free(text);
    cJSON_Delete(o);
}

/* The bandwidth and decode-bound lines: measured on the CPU, n/a on a
 * device (the host's read bandwidth is not what bounds a GPU's decode). */
static void print_bound(const bench_out *b) {
    const bench_cfg *c = b->c;
    char b1[32], b2[32], b3[32];
    if (b->device) {
        printf("device    %s: %s in use of %s\n", b->device, cli_fmt_bytes(b->dev_used, b1, sizeof b1),
               cli_fmt_bytes(b->dev_budget, b2, sizeof b2));
        printf("bandwidth        n/a (the host's read bandwidth bounds nothing on a device)\n");
        printf("decode    %s of weights + %s of KV per token%s\n",
               cli_fmt_bytes(b->info.weight_bytes_per_token, b3, sizeof b3),
               cli_fmt_bytes((uint64_t)b->kv_per_token, b2, sizeof b2),
               c->n > 0 ? "; tg's fraction of the bandwidth bound: n/a" : "");
        return;
    }
    printf("bandwidth %10.2f GB/s read (the weights, %d threads; median; spread %.2f .. %.2f)\n", b->bw_s.median * 1e-9,
           b->threads, b->bw_s.min * 1e-9, b->bw_s.max * 1e-9);
    printf("decode    %s of weights + %s of KV per token: at most %.2f tok/s at that bandwidth",
           cli_fmt_bytes(b->info.weight_bytes_per_token, b1, sizeof b1),
           cli_fmt_bytes((uint64_t)b->kv_per_token, b2, sizeof b2), b->tok_bound);
    if (c->n > 0)
        printf("; tg reaches %.2f of it (median of each rep against its own bandwidth; %.2f .. %.2f)", b->frac_s.median,
               b->frac_s.min, b->frac_s.max);
    printf("\n");
}

static void print_text(const bench_out *b) {
    const bench_cfg *c = b->c;
    char b1[32], b2[32], b3[32], b4[32];
    printf("model     %s (%s), %d threads, kv %s, %lld repetitions\n", b->model,
           cli_fmt_bytes(b->info.file_bytes, b1, sizeof b1), b->threads, kv_label(c), (long long)c->reps);
    if (c->p > 0)
        printf("pp%-7lld %10.2f tok/s  (median; spread %.2f .. %.2f) at depth %lld\n", (long long)c->p, b->pp_s.median,
               b->pp_s.min, b->pp_s.max, (long long)c->pd);
    if (c->n > 0)
        printf("tg%-7lld %10.2f tok/s  (median; spread %.2f .. %.2f) at depth %lld\n", (long long)c->n, b->tg_s.median,
               b->tg_s.min, b->tg_s.max, (long long)c->d);
    if (b->verify_ms) bench_verify_print(b->verify_ms, c->verify, c->d);
    print_bound(b);
    if (b->img) print_image_text(b);
    if (b->aud) print_audio_text(b);
    if (b->device) {
        /* the bound is what a CPU run holds; the driver's own host memory
         * (a shader compiler, staging buffers) is in this figure */
        printf("peak RSS  %s (the host's; the bound file + KV + 64 MiB is the CPU's, not checked on a device)\n",
               cli_fmt_bytes(b->rss, b1, sizeof b1));
        return;
    }
    printf("peak RSS  %s; bound file %s + KV %s + 64 MiB = %s: %s%s\n", cli_fmt_bytes(b->rss, b1, sizeof b1),
           cli_fmt_bytes(b->info.file_bytes, b2, sizeof b2), cli_fmt_bytes(b->kv_bytes, b3, sizeof b3),
           cli_fmt_bytes(b->bound, b4, sizeof b4), b->rss == 0 ? "unknown" : b->rss <= b->bound ? "within" : "EXCEEDED",
           b->rss_reset ? "" : " (peak not reset after writing the synthetic model)");
}

/* The positions the session needs: the deepest of pp's, tg's and the
 * verification passes' (at tg's depth). */
static int64_t bench_n_ctx(const bench_cfg *c) {
    int64_t n = c->pd + c->p > c->d + c->n ? c->pd + c->p : c->d + c->n;
    if (c->verify && c->d + c->verify + 1 > n) n = c->d + c->verify + 1;
    return n;
}

/* Parse the options into c (and the model source, the device); 0 or the
 * usage exit code. */
static int parse(int argc, char **argv, bench_cfg *c, const char **model_path, const char **synth, cli_device *dev,
                 bool *json, bool *quiet) {
    const char *cmd = "bench", *v, *err = NULL;
    for (int i = 1; i < argc; i++) {
        int64_t *num = NULL, lo = 0, hi = 1 << 20;
        int64_t threads = -1;
        int frc = 0;
        if (cli_opt(argc, argv, &i, "--model", &v, &err) || cli_opt(argc, argv, &i, "-m", &v, &err)) *model_path = v;
        else if (cli_opt(argc, argv, &i, "--synth", &v, &err)) *synth = v;
        else if (cli_opt(argc, argv, &i, "-p", &v, &err)) num = &c->p;
        else if (cli_opt(argc, argv, &i, "-n", &v, &err)) num = &c->n;
        else if (cli_opt(argc, argv, &i, "-d", &v, &err)) num = &c->d;
        else if (cli_opt(argc, argv, &i, "--pp-depth", &v, &err)) num = &c->pd;
        else if (cli_opt(argc, argv, &i, "-r", &v, &err)) num = &c->reps, lo = 1, hi = 1000;
        else if (cli_opt(argc, argv, &i, "--verify", &v, &err)) num = &c->verify, lo = 1, hi = 64;
        else if (cli_opt(argc, argv, &i, "--lookup", &v, &err)) num = &c->lookup, lo = 1, hi = 8;
        else if (cli_opt(argc, argv, &i, "--draft-max", &v, &err)) num = &c->draft_max, lo = 1, hi = 64;
        else if (cli_opt(argc, argv, &i, "--draft-min", &v, &err)) num = &c->draft_min, lo = 1, hi = 64;
        else if (cli_opt(argc, argv, &i, "--draft", &v, &err) || cli_opt(argc, argv, &i, "-md", &v, &err)) c->draft = v;
        else if (cli_opt(argc, argv, &i, "--batch", &v, &err)) num = &c->batch, lo = 1, hi = 65536;
        else if (cli_opt(argc, argv, &i, "-t", &v, &err) || cli_opt(argc, argv, &i, "--threads", &v, &err)) {
            if (!err && !cli_parse_i64(v, 1, 1024, &threads)) return cli_usage(cmd, "-t wants 1..1024, not '%s'", v);
            c->threads = (int)threads;
        } else if (cli_opt_flash(argc, argv, &i, cmd, &c->flash, &frc)) {
            if (frc) return frc;
        } else if (cli_opt_device(argc, argv, &i, cmd, dev, &frc)) {
            if (frc) return frc;
        } else if (cli_opt_kv(argc, argv, &i, cmd, &c->kv, &c->kv_v, &frc)) {
            if (frc) return frc;
        } else if (cli_opt(argc, argv, &i, "--mmproj", &v, &err)) c->mmproj = v;
        else if (cli_opt(argc, argv, &i, "--image", &v, &err)) c->image = v;
        else if (cli_opt(argc, argv, &i, "--audio", &v, &err)) c->audio = v;
        else if (cli_opt(argc, argv, &i, "--json-schema", &v, &err)) c->schema = v;
        else if (cli_opt(argc, argv, &i, "--grammar", &v, &err)) c->grammar = v;
        else if (cli_opt(argc, argv, &i, "--image-max-tokens", &v, &err)) num = &c->image_max_tokens, lo = 8, hi = 16384;
        else if (cli_opt(argc, argv, &i, "--image-size", &v, &err)) {
            char tail;
            long long w, h;
            if (!err && (sscanf(v, "%lldx%lld%c", &w, &h, &tail) != 2 || w < 1 || h < 1 || w > 16384 || h > 16384))
                return cli_usage(cmd, "--image-size wants WxH (1..16384 each), not '%s'", v);
            if (!err) c->image_w = w, c->image_h = h;
        } else if (!strcmp(argv[i], "--json")) *json = true;
        else if (!strcmp(argv[i], "--quiet")) *quiet = true;
        else return cli_usage(cmd, "unknown argument '%s'", argv[i]);
        if (err) return cli_usage(cmd, "%s %s", argv[i], err);
        if (num && !cli_parse_i64(v, lo, hi, num))
            return cli_usage(cmd, "%s wants a number %lld..%lld, not '%s'", argv[i - 1], (long long)lo, (long long)hi, v);
    }
    if (!*model_path == !*synth) return cli_usage(cmd, "needs exactly one of --model and --synth");
    if (c->mmproj && (!!c->image + !!c->image_w + !!c->audio) != 1)
        return cli_usage(cmd, "--mmproj needs exactly one of --image and --image-size (or --audio)");
    if (!c->mmproj && (c->image || c->image_w || c->image_max_tokens || c->audio))
        return cli_usage(cmd, "--image, --image-size, --image-max-tokens and --audio go with --mmproj");
    if (c->audio && c->image_max_tokens) return cli_usage(cmd, "--image-max-tokens goes with an image, not --audio");
    if (c->p == 0 && c->n == 0 && !c->mmproj) return cli_usage(cmd, "-p 0 and -n 0 leave nothing to measure");
    if (c->schema && c->grammar) return cli_usage(cmd, "give one of --json-schema and --grammar");
    if ((c->schema || c->grammar) && (c->mmproj || c->n < 1 || c->p < 1))
        return cli_usage(cmd, "--json-schema / --grammar measure a decode: they need -p and -n of 1 or more, and no --mmproj");
    if (c->pd && (c->schema || c->grammar || c->p == 0))
        return cli_usage(cmd, "--pp-depth goes with a pp (-p of 1 or more), without --json-schema / --grammar");
    if (c->lookup && c->draft) return cli_usage(cmd, "--lookup and --draft are two ways to draft: give one");
    if ((c->lookup || c->draft) && (c->schema || c->grammar || c->mmproj || c->verify || c->n < 1 || c->p < 1))
        return cli_usage(cmd, "--lookup / --draft measure a greedy generation: -p and -n of 1 or more, without "
                         "--json-schema, --grammar, --mmproj or --verify");
    if (c->draft_min > c->draft_max) return cli_usage(cmd, "--draft-min is larger than --draft-max");
    if (c->verify && (c->schema || c->grammar || c->mmproj))
        return cli_usage(cmd, "--verify measures the target's passes: not with --json-schema / --grammar / --mmproj");
    const int64_t n_ctx = bench_n_ctx(c);
    if (n_ctx > (1 << 20)) return cli_usage(cmd, "a context of %lld positions is too large", (long long)n_ctx);
    return 0;
}

int cmd_bench(int argc, char **argv) {
    const char *cmd = "bench";
    const char *model_path = NULL, *synth = NULL;
    bool json = false, quiet = false;
    bench_cfg c = {.p = 512, .n = 128, .d = 0, .reps = 5, .batch = 512, .threads = 0, .kv = 1, .kv_v = POCKETLLM_KV_AS_K,
                   .flash = -1, .draft_max = 8, .draft_min = 1};
    cli_device dev = {NULL, 0};
    int rc = parse(argc, argv, &c, &model_path, &synth, &dev, &json, &quiet);
    if (rc) return rc;
    c.flash = cli_flash_auto(c.flash, c.kv, c.kv_v);
    const int64_t n_ctx = c.schema || c.grammar || c.lookup || c.draft ? c.p + c.n : bench_n_ctx(&c);
    pocketllm_model_params mp = pocketllm_model_default_params();
    mp.n_threads = c.threads;
    if ((rc = cli_device_params(cmd, &dev, &mp))) return rc;

    char tmp_path[4200] = "";
    if (synth) {
        rc = make_synth(cmd, synth, quiet, tmp_path, sizeof tmp_path);
        if (rc) return rc;
        model_path = tmp_path;
    }
    /* what writing a synthetic model took is not the benchmark's */
    const bool rss_reset = reset_peak_rss();

    pocketllm_model *m = NULL;
    pocketllm_status st = pocketllm_model_open(model_path, &mp, &m);
    if (*tmp_path) unlink(tmp_path); /* the mapping keeps it alive */
    if (st) return cli_lib_error(cmd, st);
    const char *device = pocketllm_model_device(m, NULL, NULL);
    const bool on_device = strcmp(device, "cpu") != 0;
    rc = CLI_FAIL;
    pocketllm_session *s = NULL;
    int32_t *ids = NULL;
    double *pp = calloc((size_t)c.reps, sizeof *pp), *tg = calloc((size_t)c.reps, sizeof *tg);
    double *bws = calloc((size_t)c.reps, sizeof *bws), *fracs = calloc((size_t)c.reps, sizeof *fracs);
    double *verify_ms = c.verify ? calloc((size_t)c.verify + 1, sizeof *verify_ms) : NULL;
    pocketllm_bench_info info;
    pocketllm_bench_image *img = NULL;
    pocketllm_bench_audio *aud = NULL;
    if ((st = kv_info(m, &c, &info))) goto lib_fail;
    if (c.audio) {
        if (!(aud = calloc((size_t)c.reps, sizeof *aud))) {
            rc = cli_error(cmd, "out of memory");
            goto done;
        }
        if (!quiet) fprintf(stderr, "bench: encoding the audio %lld + 1 times\n", (long long)c.reps);
        if ((st = pocketllm_bench_audio_encode(m, c.mmproj, c.audio, (int)c.reps, aud))) goto lib_fail;
    } else if (c.mmproj) {
        if (!(img = calloc((size_t)c.reps, sizeof *img))) {
            rc = cli_error(cmd, "out of memory");
            goto done;
        }
        if (!quiet) fprintf(stderr, "bench: encoding the image %lld + 1 times\n", (long long)c.reps);
        if ((st = pocketllm_bench_image_encode(m, c.mmproj, c.image, (uint32_t)c.image_w, (uint32_t)c.image_h,
                                               (uint32_t)c.image_max_tokens, (int)c.reps, img)))
            goto lib_fail;
    }
    if (c.p == 0 && c.n == 0) { /* the image (or the audio) alone */
        bench_out b = {.c = &c, .model = synth ? synth : model_path, .threads = c.threads, .img = img, .aud = aud};
        if (!b.threads) {
            pocketllm_cpu_info ci;
            b.threads = pocketllm_cpu_info_get(&ci) == POCKETLLM_OK ? (int)ci.physical_cores : 0;
        }
        if (json) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "engine", "pocketllm");
            cJSON_AddStringToObject(o, "model", b.model);
            cJSON_AddNumberToObject(o, "threads", b.threads);
            if (img) cJSON_AddItemToObject(o, "image", image_json(&b));
            if (aud) cJSON_AddItemToObject(o, "audio", audio_json(&b));
            char *text = cJSON_PrintUnformatted(o);
            if (text) puts(text);
            free(text);
            cJSON_Delete(o);
        } else {
            printf("model     %s, %d threads, %lld repetitions\n", b.model, b.threads, (long long)c.reps);
            if (img) print_image_text(&b);
            if (aud) print_audio_text(&b);
        }
        rc = CLI_OK;
        goto done;
    }
    pocketllm_session_params sp = pocketllm_session_default_params();
    sp.n_ctx = (uint32_t)n_ctx;
    sp.n_batch = (uint32_t)c.batch;
    sp.kv_type = c.kv;
    sp.kv_type_v = c.kv_v;
    sp.flash_attn = c.flash;
    sp.n_threads = c.threads;
    if ((st = pocketllm_session_new(m, &sp, &s))) goto lib_fail;
    const int32_t n_vocab = pocketllm_session_n_vocab(s);
    ids = malloc(sizeof *ids * (size_t)(n_ctx + 64));
    if (!pp || !tg || !bws || !fracs || !ids || n_vocab < 1 || (c.verify && !verify_ms)) {
        rc = cli_error(cmd, "out of memory");
        goto done;
    }
    bench_ids(ids, n_ctx + 64, n_vocab, 1);
    if (c.schema || c.grammar) {
        rc = bench_grammar(cmd, m, s, c.schema, c.grammar, c.p, c.n, c.reps, json);
        goto done;
    }
    if (c.lookup || c.draft) {
        spec_draft dm;
        memset(&dm, 0, sizeof dm);
        if (c.draft) {
            /* the draft's session as the target's: device, threads, cache */
            run_common rcd;
            run_common_defaults(&rcd);
            rcd.n_threads = c.threads;
            rcd.n_batch = c.batch;
            rcd.kv_type = c.kv;
            rcd.kv_type_v = c.kv_v;
            rcd.flash_attn = c.flash;
            rcd.device = dev;
            if ((rc = spec_draft_open(c.draft, &rcd, m, (uint32_t)n_ctx, NULL, &dm, cmd))) goto done;
        }
        const bench_spec_cfg bc = {c.p, c.n, c.reps, (int)c.lookup, c.draft ? &dm : NULL, c.draft, c.draft_max,
                                   c.draft_min};
        rc = bench_spec(cmd, s, ids, &bc, json);
        spec_draft_close(&dm);
        goto done;
    }

    /* what one tg step reads: the weights, and the KV cache of the positions
     * it attends over -- d + k + 1 at step k, d + (n + 1) / 2 on average */
    const double kv_per_token = c.n > 0 ? (double)info.kv_bytes_per_position * ((double)c.d + (double)(c.n + 1) / 2) : 0;
    const double step_bytes = (double)info.weight_bytes_per_token + kv_per_token;
    /* warmup: weights paged in, threads started */
    const int64_t w = c.p < 32 ? (c.p ? c.p : 1) : 32, n_warm = n_ctx - w < 2 ? n_ctx - w : 2;
    if ((st = pocketllm_session_eval(s, ids, (size_t)w, 0))) goto lib_fail;
    for (int64_t k = 0; k < n_warm; k++)
        if ((st = pocketllm_session_eval(s, ids + w + k, 1, 0))) goto lib_fail;
    /* the read bandwidth is measured right after each repetition and each
     * tg is held against its own: on a shared host both move together,
     * and a bound taken at another moment would flatter or wrong the rate.
     * Not on a device: there the weights are not read from host memory
     * (reading the mapping would only page the dropped file back in). */
    for (int r = 0; r < c.reps; r++) {
        if ((st = run_once(s, ids, &c, &pp[r], &tg[r]))) goto lib_fail;
        if (on_device) {
            if (!quiet)
                fprintf(stderr, "bench: rep %d/%lld: pp %.2f tok/s, tg %.2f tok/s\n", r + 1, (long long)c.reps, pp[r],
                        tg[r]);
            continue;
        }
        if ((st = pocketllm_bench_read_bandwidth(m, c.threads, &bws[r]))) goto lib_fail;
        fracs[r] = step_bytes > 0 && bws[r] > 0 ? tg[r] * step_bytes / bws[r] : 0;
        if (!quiet)
            fprintf(stderr, "bench: rep %d/%lld: pp %.2f tok/s, tg %.2f tok/s, read bandwidth %.2f GB/s\n", r + 1,
                    (long long)c.reps, pp[r], tg[r], bws[r] * 1e-9);
    }

    if (c.verify) {
        if (!quiet) fprintf(stderr, "bench: verification passes of 1 .. %lld tokens at depth %lld\n",
                            (long long)c.verify + 1, (long long)c.d);
        if ((st = bench_verify_measure(s, ids, c.d, c.verify, (int)c.reps, verify_ms))) goto lib_fail;
    }
    bench_out b = {.c = &c, .model = synth ? synth : model_path, .threads = c.threads, .pp = pp, .tg = tg, .bws = bws,
                   .info = info, .rss_reset = rss_reset, .device = on_device ? device : NULL, .img = img,
                   .aud = aud, .verify_ms = verify_ms};
    b.pp_s = summarize(pp, (int)c.reps), b.tg_s = summarize(tg, (int)c.reps);
    b.bw_s = summarize(bws, (int)c.reps), b.frac_s = summarize(fracs, (int)c.reps);
    if (c.n <= 0) b.frac_s.median = 0;
    b.rss = peak_rss();
    b.kv_bytes = info.kv_bytes_per_position * (uint64_t)n_ctx;
    b.bound = info.file_bytes + b.kv_bytes + (uint64_t)(64 * MIB);
    b.kv_per_token = kv_per_token;
    b.tok_bound = step_bytes > 0 ? b.bw_s.median / step_bytes : 0;
    pocketllm_model_device(m, &b.dev_used, &b.dev_budget);
    if (!b.threads) {
        pocketllm_cpu_info ci;
        b.threads = pocketllm_cpu_info_get(&ci) == POCKETLLM_OK ? (int)ci.physical_cores : 0;
    }
    if (json) print_json(&b);
    else print_text(&b);
    rc = CLI_OK;
    goto done;
lib_fail:
    rc = cli_lib_error(cmd, st);
done:
    free(img);
    free(aud);
    free(pp);
    free(tg);
    free(bws);
    free(fracs);
    free(verify_ms);
    free(ids);
    pocketllm_session_free(s);
    pocketllm_model_close(m);
    return rc;
}
