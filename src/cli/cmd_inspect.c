/*
 * cmd_inspect.c -- `pocketllm inspect`: a summary of a GGUF file (format,
 * architecture, hyperparameters, tokenizer, tensor bytes by type), as text
 * or JSON, with an optional per-tensor listing; an mmproj's vision tower
 * gets its own section (inspect_mmproj.c), its audio tower too (inspect_audio.c),
 * a mixture of experts its experts (inspect_moe.c).
 */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "inspect_audio.h"
#include "inspect_mmproj.h"
#include "inspect_moe.h"

/* Arrays longer than this are summarised (type and length) rather than listed. */
#define INLINE_ARRAY_MAX 16

typedef struct type_total {
    uint64_t tensors, bytes;
} type_total;

static cJSON *json_string(const char *s, uint64_t n) {
    char *clean = cli_utf8_clean(s, (size_t)n);
    cJSON *j = cJSON_CreateString(clean ? clean : "");
    free(clean);
    return j;
}

/* A value as JSON; long arrays as {"type":"array","element_type":..,"length":..}. */
static cJSON *json_value(const pocketllm_gguf_value *v) {
    pocketllm_gguf_type t = pocketllm_gguf_value_type(v);
    if (t == POCKETLLM_GGUF_STRING) {
        uint64_t n;
        const char *s = pocketllm_gguf_value_str(v, &n);
        return json_string(s, n);
    }
    if (t == POCKETLLM_GGUF_BOOL) {
        uint64_t b = 0;
        pocketllm_gguf_value_u64(v, &b);
        return cJSON_CreateBool(b != 0);
    }
    if (t == POCKETLLM_GGUF_ARRAY) {
        uint64_t n = pocketllm_gguf_array_len(v);
        if (n > INLINE_ARRAY_MAX) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "type", "array");
            cJSON_AddStringToObject(o, "element_type", pocketllm_gguf_type_name(pocketllm_gguf_array_type(v)));
            cJSON_AddNumberToObject(o, "length", (double)n);
            return o;
        }
        cJSON *a = cJSON_CreateArray();
        for (uint64_t i = 0; i < n; i++) cJSON_AddItemToArray(a, json_value(pocketllm_gguf_array_get(v, i)));
        return a;
    }
    if (t == POCKETLLM_GGUF_FLOAT32 || t == POCKETLLM_GGUF_FLOAT64) {
        double d = 0;
        pocketllm_gguf_value_f64(v, &d);
        return cJSON_CreateNumber(d);
    }
    int64_t i;
    uint64_t u;
    if (pocketllm_gguf_value_i64(v, &i) == POCKETLLM_OK) return cJSON_CreateNumber((double)i);
    if (pocketllm_gguf_value_u64(v, &u) == POCKETLLM_OK) return cJSON_CreateNumber((double)u);
    return cJSON_CreateNull();
}

/* A value as text on one line. */
static void print_value(FILE *f, const pocketllm_gguf_value *v) {
    pocketllm_gguf_type t = pocketllm_gguf_value_type(v);
    if (t == POCKETLLM_GGUF_STRING) {
        uint64_t n;
        const char *s = pocketllm_gguf_value_str(v, &n);
        fputc('"', f);
        cli_print_escaped(f, s, (size_t)n, 120);
        fputc('"', f);
        return;
    }
    if (t == POCKETLLM_GGUF_ARRAY) {
        uint64_t n = pocketllm_gguf_array_len(v);
        if (n > INLINE_ARRAY_MAX) {
            fprintf(f, "[%" PRIu64 " %s elements]", n, pocketllm_gguf_type_name(pocketllm_gguf_array_type(v)));
            return;
        }
        fputc('[', f);
        for (uint64_t i = 0; i < n; i++) {
            if (i) fputs(", ", f);
            print_value(f, pocketllm_gguf_array_get(v, i));
        }
        fputc(']', f);
        return;
    }
    if (t == POCKETLLM_GGUF_BOOL) {
        uint64_t b = 0;
        pocketllm_gguf_value_u64(v, &b);
        fputs(b ? "true" : "false", f);
        return;
    }
    if (t == POCKETLLM_GGUF_FLOAT32 || t == POCKETLLM_GGUF_FLOAT64) {
        double d = 0;
        pocketllm_gguf_value_f64(v, &d);
        fprintf(f, "%g", d);
        return;
    }
    int64_t i;
    uint64_t u;
    if (pocketllm_gguf_value_i64(v, &i) == POCKETLLM_OK) fprintf(f, "%" PRId64, i);
    else if (pocketllm_gguf_value_u64(v, &u) == POCKETLLM_OK) fprintf(f, "%" PRIu64, u);
}

static const char *str_key(const pocketllm_gguf *g, const char *key) {
    return pocketllm_gguf_value_str(pocketllm_gguf_find(g, key), NULL);
}

/* Keys "<arch>.*" are the architecture's hyperparameters. */
static bool is_hparam(const char *key, const char *arch) {
    size_t n = arch ? strlen(arch) : 0;
    return n && strncmp(key, arch, n) == 0 && key[n] == '.';
}

static void shape_text(const pocketllm_tensor_info *t, char *buf, size_t len) {
    size_t o = 0;
    uint32_t nd = t->n_dims ? t->n_dims : 1;
    for (uint32_t d = 0; d < nd && o < len; d++)
        o += (size_t)snprintf(buf + o, len - o, "%s%" PRId64, d ? " x " : "", t->ne[d]);
}

static int inspect(const char *path, bool json, bool list_tensors) {
    pocketllm_gguf *g;
    pocketllm_status st = pocketllm_gguf_open(path, &g);
    if (st) return cli_lib_error("inspect", st);

    const char *arch = str_key(g, "general.architecture");
    const char *name = str_key(g, "general.name");
    const char *tok_model = str_key(g, "tokenizer.ggml.model");
    const char *tok_pre = str_key(g, "tokenizer.ggml.pre");
    const pocketllm_gguf_value *tokens = pocketllm_gguf_find(g, "tokenizer.ggml.tokens");
    uint64_t vocab = pocketllm_gguf_array_len(tokens);
    uint64_t n_t = pocketllm_gguf_tensor_count(g);
    uint32_t n_types = pocketllm_type_count();
    type_total *totals = calloc(n_types, sizeof *totals);
    if (!totals) {
        pocketllm_gguf_close(g);
        return cli_error("inspect", "out of memory");
    }
    uint64_t total = 0, params = 0;
    for (uint64_t i = 0; i < n_t; i++) {
        pocketllm_tensor_info t;
        pocketllm_gguf_tensor(g, i, &t);
        totals[t.type].tensors++;
        totals[t.type].bytes += t.n_bytes;
        total += t.n_bytes;
        params += (uint64_t)(t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3]);
    }
    uint64_t n_kv = pocketllm_gguf_kv_count(g);
    const bool moe = inspect_moe_present(g);

    if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToObject(o, "file", json_string(path, strlen(path)));
        cJSON_AddNumberToObject(o, "gguf_version", pocketllm_gguf_version(g));
        cJSON_AddNumberToObject(o, "file_bytes", (double)pocketllm_gguf_file_size(g));
        cJSON_AddNumberToObject(o, "alignment", pocketllm_gguf_alignment(g));
        cJSON_AddItemToObject(o, "architecture", arch ? json_string(arch, strlen(arch)) : cJSON_CreateNull());
        cJSON_AddItemToObject(o, "name", name ? json_string(name, strlen(name)) : cJSON_CreateNull());
        cJSON *hp = cJSON_AddObjectToObject(o, "hyperparameters");
        for (uint64_t i = 0; i < n_kv; i++) {
            const char *k = pocketllm_gguf_kv_key(g, i);
            if (is_hparam(k, arch)) cJSON_AddItemToObject(hp, k + strlen(arch) + 1, json_value(pocketllm_gguf_kv_value(g, i)));
        }
        cJSON *tk = cJSON_AddObjectToObject(o, "tokenizer");
        cJSON_AddItemToObject(tk, "model", tok_model ? json_string(tok_model, strlen(tok_model)) : cJSON_CreateNull());
        cJSON_AddItemToObject(tk, "pre", tok_pre ? json_string(tok_pre, strlen(tok_pre)) : cJSON_CreateNull());
        cJSON_AddNumberToObject(tk, "vocab_size", (double)vocab);
        /* an audio-only mmproj (Qwen3-ASR) gets no empty vision section */
        if (arch && strcmp(arch, "clip") == 0 && (inspect_has_vision(g) || !inspect_has_audio(g)))
            cJSON_AddItemToObject(o, "vision", inspect_mmproj_json(g));
        if (arch && strcmp(arch, "clip") == 0 && inspect_has_audio(g))
            cJSON_AddItemToObject(o, "audio", inspect_audio_json(g));
        if (moe) cJSON_AddItemToObject(o, "moe", inspect_moe_json(g, arch));
        cJSON_AddNumberToObject(o, "tensor_count", (double)n_t);
        cJSON_AddNumberToObject(o, "parameter_count", (double)params);
        cJSON *bt = cJSON_AddObjectToObject(o, "bytes_by_type");
        for (uint32_t t = 0; t < n_types; t++) {
            if (!totals[t].tensors) continue;
            cJSON *e = cJSON_AddObjectToObject(bt, pocketllm_type_name(t));
            cJSON_AddNumberToObject(e, "tensors", (double)totals[t].tensors);
            cJSON_AddNumberToObject(e, "bytes", (double)totals[t].bytes);
        }
        cJSON_AddNumberToObject(o, "total_bytes", (double)total);
        cJSON *md = cJSON_AddObjectToObject(o, "metadata");
        for (uint64_t i = 0; i < n_kv; i++) {
            const char *k = pocketllm_gguf_kv_key(g, i);
            cJSON_AddItemToObject(md, k, json_value(pocketllm_gguf_kv_value(g, i)));
        }
        if (list_tensors) {
            cJSON *ta = cJSON_AddArrayToObject(o, "tensors");
            for (uint64_t i = 0; i < n_t; i++) {
                pocketllm_tensor_info t;
                pocketllm_gguf_tensor(g, i, &t);
                cJSON *e = cJSON_CreateObject();
                cJSON_AddItemToObject(e, "name", json_string(t.name, strlen(t.name)));
                cJSON_AddStringToObject(e, "type", pocketllm_type_name(t.type));
                cJSON *shape = cJSON_AddArrayToObject(e, "shape");
                for (uint32_t d = 0; d < t.n_dims; d++) cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)t.ne[d]));
                cJSON_AddNumberToObject(e, "offset", (double)t.offset);
                cJSON_AddNumberToObject(e, "bytes", (double)t.n_bytes);
                if (inspect_moe_is_experts(&t)) {
                    cJSON_AddNumberToObject(e, "experts", (double)t.ne[2]);
                    cJSON_AddNumberToObject(e, "bytes_per_expert", (double)(t.n_bytes / (uint64_t)t.ne[2]));
                }
                cJSON_AddItemToArray(ta, e);
            }
        }
        char *text = cJSON_Print(o);
        if (text) puts(text);
        free(text);
        cJSON_Delete(o);
    } else {
        char b[32];
        printf("file:            %s\n", path);
        printf("gguf version:    %u (alignment %u, %s)\n", pocketllm_gguf_version(g), pocketllm_gguf_alignment(g),
               cli_fmt_bytes(pocketllm_gguf_file_size(g), b, sizeof b));
        printf("architecture:    %s", arch ? arch : "(none: vocabulary-only or not a model)");
        if (moe) inspect_moe_arch_text(g, arch, stdout);
        putchar('\n');
        if (name) printf("name:            %s\n", name);
        if (arch) {
            printf("hyperparameters:\n");
            for (uint64_t i = 0; i < n_kv; i++) {
                const char *k = pocketllm_gguf_kv_key(g, i);
                if (!is_hparam(k, arch)) continue;
                printf("  %-38s ", k + strlen(arch) + 1);
                print_value(stdout, pocketllm_gguf_kv_value(g, i));
                putchar('\n');
            }
        }
        if (arch && strcmp(arch, "clip") == 0 && (inspect_has_vision(g) || !inspect_has_audio(g)))
            inspect_mmproj_text(g, stdout);
        if (arch && strcmp(arch, "clip") == 0 && inspect_has_audio(g)) inspect_audio_text(g, stdout);
        if (moe) inspect_moe_text(g, arch, stdout);
        printf("tokenizer:       %s", tok_model ? tok_model : "(none)");
        if (tok_pre) printf(" (pre-tokenizer %s)", tok_pre);
        printf(", vocabulary %" PRIu64 "\n", vocab);
        printf("metadata keys:   %" PRIu64 "\n", n_kv);
        printf("tensors:         %" PRIu64 " (%" PRIu64 " parameters)\n", n_t, params);
        for (uint32_t t = 0; t < n_types; t++) {
            if (!totals[t].tensors) continue;
            printf("  %-8s %6" PRIu64 " tensors  %14" PRIu64 " bytes  (%s)\n", pocketllm_type_name(t),
                   totals[t].tensors, totals[t].bytes, cli_fmt_bytes(totals[t].bytes, b, sizeof b));
        }
        printf("total bytes:     %" PRIu64 " (%s)\n", total, cli_fmt_bytes(total, b, sizeof b));
        if (list_tensors) {
            printf("\n%-40s %-8s %-26s %14s %14s\n", "name", "type", "shape", "offset", "bytes");
            for (uint64_t i = 0; i < n_t; i++) {
                pocketllm_tensor_info t;
                char shape[96];
                pocketllm_gguf_tensor(g, i, &t);
                shape_text(&t, shape, sizeof shape);
                printf("%-40s %-8s %-26s %14" PRIu64 " %14" PRIu64, t.name, pocketllm_type_name(t.type), shape,
                       t.offset, t.n_bytes);
                if (inspect_moe_is_experts(&t))
                    printf("  (%" PRId64 " experts of %" PRIu64 " bytes)", t.ne[2], t.n_bytes / (uint64_t)t.ne[2]);
                putchar('\n');
            }
        }
    }
    free(totals);
    pocketllm_gguf_close(g);
    if (fflush(stdout) != 0) return cli_error("inspect", "cannot write the output");
    return CLI_OK;
}

int cmd_inspect(int argc, char **argv) {
    const char *path = NULL;
    bool json = false, tensors = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) json = true;
        else if (strcmp(argv[i], "--tensors") == 0) tensors = true;
        else if (argv[i][0] == '-' && argv[i][1]) return cli_usage("inspect", "unknown option '%s'", argv[i]);
        else if (path) return cli_usage("inspect", "takes one MODEL, got '%s' and '%s'", path, argv[i]);
        else path = argv[i];
    }
    if (!path) return cli_usage("inspect", "needs a MODEL.gguf");
    return inspect(path, json, tensors);
}
