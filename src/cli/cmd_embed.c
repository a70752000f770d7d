/*
 * cmd_embed.c -- `pocketllm embed`: texts (or token ids) to embeddings
 * through pocketllm_embed -- the hidden states after the model's final
 * norm, pooled as the model's <arch>.pooling_type says or as --pooling
 * asks, L2-normalised unless --no-normalize -- printed one vector a line,
 * or as one JSON object.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

#define CMD "embed"

const char cmd_embed_usage[] =
    "usage: pocketllm embed --model M [--pooling none|mean|cls|last] [--no-normalize] [--dimensions N]\n"
    "                       [--json] [--ids] [-t N] [--ctx N] [--batch N] [--kv T]\n"
    "                       [--flash-attn on|off] [--device D] [--device-memory S] [TEXT...]\n\n"
    "Embed each TEXT (without any, each non-empty line of standard input) as llama.cpp does with\n"
    "embeddings on: the text is tokenized with the BOS/EOS its vocabulary asks for\n"
    "(tokenizer.ggml.add_bos_token, add_eos_token -- Qwen3-Embedding appends its end-of-text token)\n"
    "and special tokens recognised, evaluated from position 0, and the hidden states after the\n"
    "model's final norm (before the output projection) are pooled.  An input longer than --batch is\n"
    "evaluated in several passes, the pooling accumulated; one longer than --ctx is an error.\n"
    "Prints one line per input: the vector's floats, space-separated (exact float32 values).\n\n"
    "  --model M, -m M    the GGUF checkpoint (llama, qwen2, qwen3, ... see 'pocketllm architectures')\n"
    "  --pooling P        mean (over the tokens), cls (the first token's), last (the last token's),\n"
    "                     or none (one vector per token: a line each, an empty line after each\n"
    "                     input); default: the model's <arch>.pooling_type, and none when it has\n"
    "                     none (as llama.cpp; said on stderr)\n"
    "  --no-normalize     the vectors as they are (default: divided by their Euclidean norm, as\n"
    "                     llama.cpp's default --embd-normalize 2)\n"
    "  --dimensions N     keep the first N floats of each vector, before it is normalised (as\n"
    "                     OpenAI's `dimensions`)\n"
    "  --json             one JSON object: pooling, normalized, dimensions, data (index, tokens,\n"
    "                     embedding -- with pooling none an array of vectors) and usage\n"
    "  --ids              each TEXT (or line) is token ids, \"1 2 3\", used as given (no BOS/EOS added)\n"
    "  -t N, --threads N  threads (default: the physical cores)\n"
    "  --ctx N, -c N      context positions: the longest input (default: the model's, at most 4096)\n"
    "  --batch N, -b N    most tokens per forward pass (default 512)\n"
    CLI_KV_HELP
    "  --flash-attn on|off  llama.cpp's flash-attention arithmetic (default off)\n" CLI_DEVICE_HELP;

typedef struct em_opts {
    const char *model;
    int32_t pooling;
    bool normalize, json, ids;
    int64_t dims, n_threads, n_ctx, n_batch;
    uint32_t kv_type, kv_type_v;
    int flash; /* 1, 0, or -1 not given (cli_flash_auto) */
    cli_device device;
    char **inputs;
    size_t n_inputs;
} em_opts;

static int parse(int argc, char **argv, em_opts *o) {
    const char *v, *err = NULL;
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        int64_t n;
        if (cli_opt(argc, argv, &i, "--model", &v, &err) || cli_opt(argc, argv, &i, "-m", &v, &err)) {
            if (err) break;
            o->model = v;
        } else if (cli_opt(argc, argv, &i, "--pooling", &v, &err)) {
            if (err) break;
            if (!strcmp(v, "none")) o->pooling = POCKETLLM_POOLING_NONE;
            else if (!strcmp(v, "mean")) o->pooling = POCKETLLM_POOLING_MEAN;
            else if (!strcmp(v, "cls")) o->pooling = POCKETLLM_POOLING_CLS;
            else if (!strcmp(v, "last")) o->pooling = POCKETLLM_POOLING_LAST;
            else return cli_usage(CMD, "--pooling wants none, mean, cls or last, not '%s'", v);
        } else if (cli_opt(argc, argv, &i, "--dimensions", &v, &err)) {
            if (err) break;
            if (!cli_parse_i64(v, 1, 1 << 20, &n)) return cli_usage(CMD, "--dimensions wants a count 1.., not '%s'", v);
            o->dims = n;
        } else if (cli_opt(argc, argv, &i, "-t", &v, &err) || cli_opt(argc, argv, &i, "--threads", &v, &err)) {
            if (err) break;
            if (!cli_parse_i64(v, 1, 1024, &n)) return cli_usage(CMD, "-t wants a thread count 1..1024, not '%s'", v);
            o->n_threads = n;
        } else if (cli_opt(argc, argv, &i, "--ctx", &v, &err) || cli_opt(argc, argv, &i, "-c", &v, &err)) {
            if (err) break;
            if (!cli_parse_i64(v, 1, 1 << 24, &n)) return cli_usage(CMD, "--ctx wants 1..16777216 positions, not '%s'", v);
            o->n_ctx = n;
        } else if (cli_opt(argc, argv, &i, "--batch", &v, &err) || cli_opt(argc, argv, &i, "-b", &v, &err)) {
            if (err) break;
            if (!cli_parse_i64(v, 1, 65536, &n)) return cli_usage(CMD, "--batch wants 1..65536 tokens, not '%s'", v);
            o->n_batch = n;
        } else if (cli_opt_kv(argc, argv, &i, CMD, &o->kv_type, &o->kv_type_v, &rc)) {
            if (rc) return rc;
        } else if (cli_opt_flash(argc, argv, &i, CMD, &o->flash, &rc)) {
            if (rc) return rc;
        } else if (cli_opt_device(argc, argv, &i, CMD, &o->device, &rc)) {
            if (rc) return rc;
        } else if (!strcmp(argv[i], "--no-normalize")) {
            o->normalize = false;
        } else if (!strcmp(argv[i], "--json")) {
            o->json = true;
        } else if (!strcmp(argv[i], "--ids")) {
            o->ids = true;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_usage(CMD, "unknown option '%s'", argv[i]);
        } else {
            o->inputs[o->n_inputs++] = argv[i];
        }
    }
    if (err) return cli_usage(CMD, "an option %s", err);
    if (!o->model) return cli_usage(CMD, "needs --model M");
    return 0;
}

/* Each non-empty line of standard input as an input (owned strings). */
static int read_lines(em_opts *o, char ***owned) {
    char *line = NULL;
    size_t cap = 0, room = 0;
    ssize_t k;
    *owned = NULL;
    while ((k = getline(&line, &cap, stdin)) >= 0) {
        while (k > 0 && (line[k - 1] == '\n' || line[k - 1] == '\r')) line[--k] = '\0';
        if (!k) continue;
        if (o->n_inputs == room) {
            room = room ? room * 2 : 16;
            char **more = realloc(*owned, room * sizeof *more);
            if (!more) break;
            *owned = more;
        }
        if (!((*owned)[o->n_inputs] = strdup(line))) break;
        o->n_inputs++;
    }
    free(line);
    if (ferror(stdin) || !feof(stdin)) return cli_error(CMD, "cannot read the inputs from standard input");
    if (!o->n_inputs) return cli_usage(CMD, "no input: give TEXT arguments or lines on standard input");
    o->inputs = *owned;
    return 0;
}

/* The ids of input i: tokenized text, or the ids written out (--ids). */
static int input_ids(const em_opts *o, const pocketllm_model *m, size_t i, int32_t **ids, size_t *n) {
    const char *s = o->inputs[i];
    const size_t len = strlen(s);
    size_t cap = len + 8;
    *ids = malloc(cap * sizeof **ids);
    if (!*ids) return cli_lib_error(CMD, POCKETLLM_ERR_NO_MEMORY);
    if (o->ids) {
        *n = 0;
        for (const char *p = s; *p;) {
            char *end;
            long long id = strtoll(p, &end, 10);
            if (end == p) return cli_error(CMD, "input %zu: '%s' is not a list of token ids", i, s);
            if (id < 0 || id >= pocketllm_model_n_vocab(m))
                return cli_error(CMD, "input %zu: token id %lld is outside the vocabulary 0..%d", i, id,
                                 pocketllm_model_n_vocab(m) - 1);
            (*ids)[(*n)++] = (int32_t)id;
            p = end;
            while (*p == ' ' || *p == '\t' || *p == ',') p++;
        }
        return *n ? 0 : cli_error(CMD, "input %zu has no token ids", i);
    }
    pocketllm_status st = pocketllm_tokenize(m, s, len, 1, 1, *ids, cap, n);
    if (st == POCKETLLM_ERR_INVALID_ARGUMENT && *n > cap) {
        int32_t *more = realloc(*ids, *n * sizeof *more);
        if (!more) return cli_lib_error(CMD, POCKETLLM_ERR_NO_MEMORY);
        *ids = more;
        cap = *n;
        st = pocketllm_tokenize(m, s, len, 1, 1, *ids, cap, n);
    }
    if (st) return cli_lib_error(CMD, st);
    return *n ? 0 : cli_error(CMD, "input %zu has no tokens", i);
}

static void print_vector(const float *v, size_t n, bool json) {
    if (json) putchar('[');
    /* %.9g: every float32 comes back exactly */
    for (size_t k = 0; k < n; k++) printf("%s%.9g", k ? (json ? "," : " ") : "", (double)v[k]);
    if (json) putchar(']');
    else putchar('\n');
}

static const char *pooling_name(int32_t p) {
    return p == POCKETLLM_POOLING_NONE ? "none" : p == POCKETLLM_POOLING_MEAN ? "mean" : p == POCKETLLM_POOLING_CLS ? "cls"
         : p == POCKETLLM_POOLING_LAST ? "last" : "unknown";
}

/* Embed and print input i (vec: room for the vectors of the longest input). */
static int embed_one(const em_opts *o, pocketllm_model *m, pocketllm_session *s, size_t i, int32_t pooling,
                     size_t n_embd, size_t dims, float **vec, size_t *vec_cap, uint64_t *tokens) {
    int32_t *ids = NULL;
    size_t n = 0;
    int rc = input_ids(o, m, i, &ids, &n);
    const size_t vectors = pooling == POCKETLLM_POOLING_NONE ? n : 1;
    if (!rc && vectors * n_embd > *vec_cap) {
        float *more = realloc(*vec, vectors * n_embd * sizeof *more);
        if (more) *vec = more, *vec_cap = vectors * n_embd;
        else rc = cli_lib_error(CMD, POCKETLLM_ERR_NO_MEMORY);
    }
    /* truncated vectors are normalised here, after the cut; whole ones by the engine */
    const bool cut = dims < n_embd;
    pocketllm_status st = rc ? POCKETLLM_OK : pocketllm_embed(s, 0, ids, n, pooling, o->normalize && !cut, *vec, *vec_cap);
    free(ids);
    if (rc) return rc;
    if (st == POCKETLLM_ERR_CONTEXT_FULL) return cli_error(CMD, "input %zu: %s (--ctx)", i, pocketllm_last_error());
    if (st) return cli_error(CMD, "input %zu: %s", i, pocketllm_last_error());
    *tokens += n;
    const bool per_token = pooling == POCKETLLM_POOLING_NONE;
    if (o->json) printf("%s{\"index\":%zu,\"tokens\":%zu,\"embedding\":%s", i ? "," : "", i, n, per_token ? "[" : "");
    for (size_t t = 0; t < vectors; t++) {
        float *v = *vec + t * n_embd;
        if (cut && o->normalize) {
            double sum = 0.0;
            for (size_t k = 0; k < dims; k++) sum += (double)v[k] * (double)v[k];
            const double norm = sum > 0.0 ? 1.0 / sqrt(sum) : 0.0;
            for (size_t k = 0; k < dims; k++) v[k] = (float)((double)v[k] * norm);
        }
        if (o->json && t) putchar(',');
        print_vector(v, dims, o->json);
    }
    if (o->json) printf("%s}", per_token ? "]" : "");
    else if (per_token) putchar('\n');
    return 0;
}

int cmd_embed(int argc, char **argv) {
    em_opts o = {.pooling = POCKETLLM_POOLING_MODEL, .normalize = true, .kv_type = 1, .kv_type_v = POCKETLLM_KV_AS_K,
                 .flash = -1};
    o.inputs = calloc((size_t)argc, sizeof *o.inputs);
    char **owned = NULL;
    if (!o.inputs) return cli_lib_error(CMD, POCKETLLM_ERR_NO_MEMORY);
    int rc = parse(argc, argv, &o);
    if (!rc && !o.n_inputs) {
        free(o.inputs);
        o.inputs = NULL;
        rc = read_lines(&o, &owned);
    }
    pocketllm_model *m = NULL;
    pocketllm_session *s = NULL;
    float *vec = NULL;
    size_t vec_cap = 0;
    pocketllm_status st = POCKETLLM_OK;
    if (rc) goto done;
    pocketllm_model_params mp = pocketllm_model_default_params();
    mp.n_threads = (int)o.n_threads;
    if ((rc = cli_device_params(CMD, &o.device, &mp))) goto done;
    if ((st = pocketllm_model_open(o.model, &mp, &m))) goto fail;
    if (!pocketllm_model_n_vocab(m) && !o.ids) {
        rc = cli_error(CMD, "%s has no tokenizer: give token ids (--ids)", o.model);
        goto done;
    }
    int32_t pooling = o.pooling;
    if (pooling == POCKETLLM_POOLING_MODEL) {
        pooling = pocketllm_model_pooling(m);
        if (pooling == POCKETLLM_POOLING_NONE)
            fprintf(stderr, "pocketllm embed: the model declares no pooling (%s.pooling_type): one vector per token "
                            "(--pooling mean|cls|last pools them)\n", pocketllm_model_arch(m));
    }
    const size_t n_embd = (size_t)pocketllm_model_n_embd(m);
    if (o.dims > (int64_t)n_embd) {
        rc = cli_usage(CMD, "--dimensions %lld is more than the model's %zu", (long long)o.dims, n_embd);
        goto done;
    }
    const size_t dims = o.dims ? (size_t)o.dims : n_embd;
    pocketllm_session_params sp = pocketllm_session_default_params();
    sp.n_ctx = (uint32_t)o.n_ctx;
    sp.n_batch = (uint32_t)o.n_batch;
    sp.kv_type = o.kv_type;
    sp.kv_type_v = o.kv_type_v;
    sp.n_threads = (int)o.n_threads;
    sp.flash_attn = cli_flash_auto(o.flash, o.kv_type, o.kv_type_v);
    if ((st = pocketllm_session_new(m, &sp, &s))) goto fail;
    if (o.json)
        printf("{\"pooling\":\"%s\",\"normalized\":%s,\"dimensions\":%zu,\"data\":[", pooling_name(pooling),
               o.normalize ? "true" : "false", dims);
    uint64_t tokens = 0;
    for (size_t i = 0; i < o.n_inputs && !rc; i++)
        rc = embed_one(&o, m, s, i, pooling, n_embd, dims, &vec, &vec_cap, &tokens);
    if (o.json && !rc) printf("],\"usage\":{\"prompt_tokens\":%llu,\"total_tokens\":%llu}}\n", (unsigned long long)tokens,
                              (unsigned long long)tokens);
    goto done;
fail:
    rc = cli_lib_error(CMD, st);
done:
    free(vec);
    pocketllm_session_free(s);
    pocketllm_model_close(m);
    for (size_t i = 0; owned && i < o.n_inputs; i++) free(owned[i]);
    free(owned);
    if (!owned) free(o.inputs);
    return rc;
}
