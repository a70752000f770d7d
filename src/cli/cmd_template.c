/*
 * cmd_template.c -- `pocketllm template`: render a chat template (a
 * model's tokenizer.chat_template or a .jinja file) for a conversation
 * given as JSON and print the prompt; or only check that the template can
 * be rendered; or split a generated reply into reasoning and content.
 */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "commands.h"

#define CMD "template"


/* The text of string metadata, or NULL. */
static const char *gguf_str(const pocketllm_gguf *g, const char *key) {
    const pocketllm_gguf_value *v = pocketllm_gguf_find(g, key);
    return v ? pocketllm_gguf_value_str(v, NULL) : NULL;
}

/* The text of special token `key` (e.g. tokenizer.ggml.bos_token_id). */
static char *gguf_token_text(const pocketllm_gguf *g, const char *key) {
    const pocketllm_gguf_value *idv = pocketllm_gguf_find(g, key);
    const pocketllm_gguf_value *toks = pocketllm_gguf_find(g, "tokenizer.ggml.tokens");
    uint64_t id;
    if (!idv || !toks || pocketllm_gguf_value_u64(idv, &id) != POCKETLLM_OK) return NULL;
    if (pocketllm_gguf_array_type(toks) != POCKETLLM_GGUF_STRING || id >= pocketllm_gguf_array_len(toks)) return NULL;
    const char *s = pocketllm_gguf_value_str(pocketllm_gguf_array_get(toks, id), NULL);
    return s ? strdup(s) : NULL;
}

/* "2025-07-26T10:30:00" (local time) as seconds since the epoch. */
static bool parse_now(const char *s, int64_t *out) {
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    char tail;
    if (sscanf(s, "%d-%d-%dT%d:%d:%d%c", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec,
               &tail) != 6)
        return false;
    if (tm.tm_year < 1 || tm.tm_year > 9999 || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
        tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60 || tm.tm_hour < 0 || tm.tm_min < 0 || tm.tm_sec < 0)
        return false;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    tm.tm_isdst = -1;
    time_t t = mktime(&tm);
    if (t == (time_t)-1) return false;
    *out = (int64_t)t;
    return true;
}

static int print_split(const pocketllm_chat_template *t, const char *prompt, const char *path) {
    size_t len;
    char *text = cli_slurp(CMD, path, &len);
    if (!text) return CLI_FAIL;
    pocketllm_chat_split sp;
    pocketllm_status st = pocketllm_chat_split_reasoning(t, prompt, text, len, &sp);
    free(text);
    if (st != POCKETLLM_OK) return cli_lib_error(CMD, st);
    cJSON *o = cJSON_CreateObject();
    char *c = cli_utf8_clean(sp.content, sp.content_len);
    cJSON_AddStringToObject(o, "content", c ? c : "");
    free(c);
    if (sp.has_reasoning) {
        char *r = cli_utf8_clean(sp.reasoning, sp.reasoning_len);
        cJSON_AddStringToObject(o, "reasoning_content", r ? r : "");
        free(r);
    } else {
        cJSON_AddNullToObject(o, "reasoning_content");
    }
    char *js = cJSON_PrintUnformatted(o);
    if (js) printf("%s\n", js);
    free(js);
    cJSON_Delete(o);
    pocketllm_chat_split_free(&sp);
    return CLI_OK;
}

int cmd_template(int argc, char **argv) {
    const char *model = NULL, *file = NULL, *messages = NULL, *tools = NULL, *vars = NULL, *bos = NULL, *eos = NULL,
               *now = NULL, *thinking = NULL, *name = NULL, *split = NULL;
    int agp = 0;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL, *err = NULL;
        if (cli_opt(argc, argv, &i, "--model", &v, &err) || cli_opt(argc, argv, &i, "-m", &v, &err)) model = v;
        else if (cli_opt(argc, argv, &i, "--file", &v, &err)) file = v;
        else if (cli_opt(argc, argv, &i, "--messages", &v, &err)) messages = v;
        else if (cli_opt(argc, argv, &i, "--tools", &v, &err)) tools = v;
        else if (cli_opt(argc, argv, &i, "--vars", &v, &err)) vars = v;
        else if (cli_opt(argc, argv, &i, "--bos", &v, &err)) bos = v;
        else if (cli_opt(argc, argv, &i, "--eos", &v, &err)) eos = v;
        else if (cli_opt(argc, argv, &i, "--now", &v, &err)) now = v;
        else if (cli_opt(argc, argv, &i, "--enable-thinking", &v, &err)) thinking = v;
        else if (cli_opt(argc, argv, &i, "--name", &v, &err)) name = v;
        else if (cli_opt(argc, argv, &i, "--split-reasoning", &v, &err)) split = v;
        else if (strcmp(argv[i], "--add-generation-prompt") == 0) agp = 1;
        else return cli_usage(CMD, "unknown argument '%s'", argv[i]);
        if (err) return cli_usage(CMD, "%s", err);
    }
    if (!model == !file) return cli_usage(CMD, "give exactly one of --model and --file");
    if (name && !model) return cli_usage(CMD, "--name needs --model");
    if (split && messages && strcmp(split, "-") == 0 && strcmp(messages, "-") == 0)
        return cli_usage(CMD, "--messages and --split-reasoning cannot both read stdin");
    pocketllm_chat_options opt = pocketllm_chat_default_options();
    opt.add_generation_prompt = agp;
    if (thinking) {
        if (strcmp(thinking, "true") == 0) opt.enable_thinking = 1;
        else if (strcmp(thinking, "false") == 0) opt.enable_thinking = 0;
        else return cli_usage(CMD, "--enable-thinking takes true or false, not '%s'", thinking);
    }
    if (now && !parse_now(now, &opt.now)) return cli_usage(CMD, "--now takes a local time as YYYY-MM-DDTHH:MM:SS");

    /* the template */
    char *source = NULL, *model_bos = NULL, *model_eos = NULL;
    size_t source_len = 0;
    int rc = CLI_FAIL;
    pocketllm_chat_template *t = NULL;
    char *msg_json = NULL, *tools_json = NULL, *vars_json = NULL, *prompt = NULL;
    if (model) {
        pocketllm_gguf *g;
        pocketllm_status st = pocketllm_gguf_open(model, &g);
        if (st != POCKETLLM_OK) return cli_lib_error(CMD, st);
        char key[256];
        snprintf(key, sizeof key, name ? "tokenizer.chat_template.%s" : "tokenizer.chat_template", name);
        const char *s = gguf_str(g, key);
        if (s) {
            source = strdup(s);
            source_len = source ? strlen(source) : 0;
            model_bos = gguf_token_text(g, "tokenizer.ggml.bos_token_id");
            model_eos = gguf_token_text(g, "tokenizer.ggml.eos_token_id");
        }
        pocketllm_gguf_close(g);
        if (!s) {
            cli_error(CMD, "%s has no %s", model, key);
            goto done;
        }
        if (!source) {
            cli_error(CMD, "out of memory");
            goto done;
        }
    } else {
        source = cli_slurp(CMD, file, &source_len);
        if (!source) goto done;
    }
    opt.bos_token = bos ? bos : model_bos;
    opt.eos_token = eos ? eos : model_eos;
    pocketllm_status st = pocketllm_chat_template_new(source, source_len, &t);
    if (st != POCKETLLM_OK) {
        rc = cli_lib_error(CMD, st);
        goto done;
    }
    if (!messages && !split) {
        rc = CLI_OK; /* the template parses: it can be rendered */
        goto done;
    }
    if (messages) {
        if (!(msg_json = cli_slurp(CMD, messages, NULL))) goto done;
        if (tools && !(tools_json = cli_slurp(CMD, tools, NULL))) goto done;
        if (vars && !(vars_json = cli_slurp(CMD, vars, NULL))) goto done;
        opt.tools_json = tools_json;
        opt.extra_json = vars_json;
        size_t len;
        st = pocketllm_chat_render_json(t, msg_json, &opt, &prompt, &len);
        if (st != POCKETLLM_OK) {
            rc = cli_lib_error(CMD, st);
            goto done;
        }
        if (!split && fwrite(prompt, 1, len, stdout) != len) {
            cli_error(CMD, "writing the output failed");
            goto done;
        }
    }
    rc = split ? print_split(t, prompt, split) : CLI_OK;
done:
    pocketllm_chat_free(prompt);
    pocketllm_chat_template_free(t);
    free(source);
    free(model_bos);
    free(model_eos);
    free(msg_json);
    free(tools_json);
    free(vars_json);
    return rc;
}
