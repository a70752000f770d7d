/*
 * run_common.c -- the options and setup shared by `pocketllm run` and
 * `pocketllm logits`.
 */
#include "run_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

double cli_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void run_common_defaults(run_common *c) {
    memset(c, 0, sizeof *c);
    c->kv_type = 1; /* f16, as llama.cpp */
    c->kv_type_v = POCKETLLM_KV_AS_K;
    c->flash_attn = -1; /* not given: cli_flash_auto */
}

int run_common_opt(int argc, char **argv, int *i, run_common *c, const char *cmd) {
    const char *v, *err = NULL;
    int64_t n;
    int rc = 0;
    if (cli_opt(argc, argv, i, "--model", &v, &err) || cli_opt(argc, argv, i, "-m", &v, &err)) {
        if (err) return cli_usage(cmd, "--model %s", err), -1;
        c->model = v;
    } else if (cli_opt(argc, argv, i, "--prompt", &v, &err) || cli_opt(argc, argv, i, "-p", &v, &err)) {
        if (err) return cli_usage(cmd, "--prompt %s", err), -1;
        c->prompt = v;
    } else if (cli_opt(argc, argv, i, "--ids", &v, &err)) {
        if (err) return cli_usage(cmd, "--ids %s", err), -1;
        c->ids = v;
    } else if (cli_opt(argc, argv, i, "-t", &v, &err) || cli_opt(argc, argv, i, "--threads", &v, &err)) {
        if (err) return cli_usage(cmd, "-t %s", err), -1;
        if (!cli_parse_i64(v, 1, 1024, &n)) return cli_usage(cmd, "-t wants a thread count 1..1024, not '%s'", v), -1;
        c->n_threads = n;
    } else if (cli_opt(argc, argv, i, "--ctx", &v, &err) || cli_opt(argc, argv, i, "-c", &v, &err)) {
        if (err) return cli_usage(cmd, "--ctx %s", err), -1;
        if (!cli_parse_i64(v, 1, 1 << 24, &n)) return cli_usage(cmd, "--ctx wants a position count 1..16777216, not '%s'", v), -1;
        c->n_ctx = n;
    } else if (cli_opt(argc, argv, i, "--batch", &v, &err) || cli_opt(argc, argv, i, "-b", &v, &err)) {
        if (err) return cli_usage(cmd, "--batch %s", err), -1;
        if (!cli_parse_i64(v, 1, 65536, &n)) return cli_usage(cmd, "--batch wants a token count 1..65536, not '%s'", v), -1;
        c->n_batch = n;
    } else if (cli_opt_flash(argc, argv, i, cmd, &c->flash_attn, &rc)) {
        if (rc) return -1;
    } else if (cli_opt_device(argc, argv, i, cmd, &c->device, &rc)) {
        if (rc) return -1;
    } else if (cli_opt_kv(argc, argv, i, cmd, &c->kv_type, &c->kv_type_v, &rc)) {
        if (rc) return -1;
    } else {
        return 0;
    }
    return 1;
}

int run_common_check(const run_common *c, const char *cmd) {
    if (!c->model) return cli_usage(cmd, "needs --model M");
    if (!c->prompt == !c->ids) return cli_usage(cmd, "needs exactly one of --prompt T and --ids \"1 2 3\"");
    return 0;
}

/* "1 2 3" or "1,2,3" into ids; false on anything else. */
static bool parse_ids(const char *s, int32_t **out, size_t *n) {
    size_t cap = 16, k = 0;
    int32_t *ids = malloc(cap * sizeof *ids);
    if (!ids) return false;
    for (;;) {
        while (*s == ' ' || *s == ',' || *s == '\t' || *s == '\n') s++;
        if (!*s) break;
        char *end;
        long long v = strtoll(s, &end, 10);
        if (end == s || v < INT32_MIN || v > INT32_MAX || (*end && *end != ' ' && *end != ',' && *end != '\t' && *end != '\n')) {
            free(ids);
            return false;
        }
        if (k == cap) {
            int32_t *g = cap < ((size_t)1 << 26) ? realloc(ids, (cap *= 2) * sizeof *ids) : NULL;
            if (!g) {
                free(ids);
                return false;
            }
            ids = g;
        }
        ids[k++] = (int32_t)v;
        s = end;
    }
    *out = ids;
    *n = k;
    return true;
}

static pocketllm_status tokenize(pocketllm_model *m, const char *text, int32_t **out, size_t *n) {
    size_t len = strlen(text), cap = len + 16, need = 0;
    int32_t *ids = malloc(cap * sizeof *ids);
    if (!ids) return POCKETLLM_ERR_NO_MEMORY;
    pocketllm_status st = pocketllm_tokenize(m, text, len, 1, 1, ids, cap, &need);
    if (st == POCKETLLM_ERR_INVALID_ARGUMENT && need > cap) {
        int32_t *g = realloc(ids, need * sizeof *ids);
        if (!g) {
            free(ids);
            return POCKETLLM_ERR_NO_MEMORY;
        }
        ids = g;
        st = pocketllm_tokenize(m, text, len, 1, 1, ids, need, &need);
    }
    if (st) {
        free(ids);
        return st;
    }
    *out = ids;
    *n = need;
    return POCKETLLM_OK;
}

pocketllm_session_params run_common_session_params(const run_common *c, uint32_t n_ctx) {
    pocketllm_session_params sp = pocketllm_session_default_params();
    sp.n_ctx = n_ctx;
    sp.n_batch = (uint32_t)c->n_batch;
    sp.kv_type = c->kv_type;
    sp.kv_type_v = c->kv_type_v;
    sp.flash_attn = cli_flash_auto(c->flash_attn, c->kv_type, c->kv_type_v);
    sp.n_threads = (int)c->n_threads;
    return sp;
}

int run_common_open(const run_common *c, run_state *s, const char *cmd) {
    memset(s, 0, sizeof *s);
    pocketllm_model_params mp = pocketllm_model_default_params();
    mp.n_threads = (int)c->n_threads;
    int rc = cli_device_params(cmd, &c->device, &mp);
    if (rc) return rc;
    pocketllm_status st = pocketllm_model_open(c->model, &mp, &s->model);
    if (st) return cli_lib_error(cmd, st);
    if (c->ids) {
        if (!parse_ids(c->ids, &s->prompt, &s->n_prompt)) {
            run_common_close(s);
            return cli_usage(cmd, "--ids wants whitespace- or comma-separated token ids, not '%.40s'", c->ids);
        }
    } else if ((st = tokenize(s->model, c->prompt, &s->prompt, &s->n_prompt))) {
        int rc = cli_lib_error(cmd, st);
        run_common_close(s);
        return rc;
    }
    if (s->n_prompt == 0) {
        run_common_close(s);
        return cli_error(cmd, "the prompt has no tokens");
    }
    pocketllm_session_params sp = run_common_session_params(c, (uint32_t)c->n_ctx);
    if ((st = pocketllm_session_new(s->model, &sp, &s->session))) {
        int rc = cli_lib_error(cmd, st);
        run_common_close(s);
        return rc;
    }
    uint32_t n_ctx = pocketllm_session_n_ctx(s->session);
    if (s->n_prompt > n_ctx) {
        int rc = cli_error(cmd, "the prompt is %zu tokens, longer than the context of %u (raise --ctx)", s->n_prompt, n_ctx);
        run_common_close(s);
        return rc;
    }
    s->n_vocab = pocketllm_session_n_vocab(s->session);
    return 0;
}

void run_common_close(run_state *s) {
    pocketllm_session_free(s->session);
    pocketllm_model_close(s->model);
    free(s->prompt);
    memset(s, 0, sizeof *s);
}
