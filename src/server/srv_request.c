/*
 * srv_request.c -- from the raw body of a /v1/chat/completions or
 * /v1/completions request to an srv_request: every top-level field goes
 * through the table below (an unknown or refused field is a 400 that names
 * it), then the cross-field rules, the chat template, the tokenizer and the
 * context check.  Nothing here touches the network, so the fuzz target
 * runs exactly this code on arbitrary bytes.
 */
#include "srv_request_internal.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "srv_text.h"

bool srv_fail(srv_error *e, int http, const char *param, const char *fmt, ...) {
    e->http = http;
    e->type = http == 401 ? "authentication_error"
              : http == 503 ? "server_busy"
              : http >= 500 ? "server_error"
              : http == 404 ? "not_found_error"
                            : "invalid_request_error";
    snprintf(e->param, sizeof e->param, "%s", param ? param : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    va_end(ap);
    return false;
}

/* ---- typed reads ---------------------------------------------------------- */

bool srv_want_bool(pctx *c, const cJSON *v, const char *name, bool *out) {
    if (!cJSON_IsBool(v)) return srv_fail(c->e, 400, name, "'%s' must be true or false", name);
    *out = cJSON_IsTrue(v);
    return true;
}

bool srv_want_number(pctx *c, const cJSON *v, const char *name, double lo, double hi, double *out) {
    if (!cJSON_IsNumber(v)) return srv_fail(c->e, 400, name, "'%s' must be a number", name);
    double d = v->valuedouble;
    if (!isfinite(d) || d < lo || d > hi)
        return srv_fail(c->e, 400, name, "'%s' is %g; it must be between %g and %g", name, d, lo, hi);
    *out = d;
    return true;
}

bool srv_want_int(pctx *c, const cJSON *v, const char *name, int64_t lo, int64_t hi, int64_t *out) {
    if (!cJSON_IsNumber(v)) return srv_fail(c->e, 400, name, "'%s' must be an integer", name);
    double d = v->valuedouble;
    if (!isfinite(d) || d != floor(d)) return srv_fail(c->e, 400, name, "'%s' must be an integer, not %g", name, d);
    if (d < (double)lo || d > (double)hi)
        return srv_fail(c->e, 400, name, "'%s' is %.0f; it must be between %lld and %lld", name, d, (long long)lo,
                        (long long)hi);
    *out = (int64_t)d;
    return true;
}

/* A string that is valid UTF-8 (JSON escapes decoded). */
bool srv_want_string(pctx *c, const cJSON *v, const char *name, const char **out) {
    if (!cJSON_IsString(v) || !v->valuestring) return srv_fail(c->e, 400, name, "'%s' must be a string", name);
    if (!srv_utf8_valid(v->valuestring, strlen(v->valuestring)))
        return srv_fail(c->e, 400, name, "'%s' is not valid UTF-8", name);
    *out = v->valuestring;
    return true;
}

/* ---- the fields ----------------------------------------------------------- */

typedef bool (*field_fn)(pctx *c, const cJSON *v, const char *name);

static bool f_accept_string(pctx *c, const cJSON *v, const char *name) {
    const char *s = NULL;
    return srv_want_string(c, v, name, &s);
}

static bool f_messages(pctx *c, const cJSON *v, const char *name) {
    if (!cJSON_IsArray(v) || !v->child) return srv_fail(c->e, 400, name, "'messages' must be a non-empty array");
    c->messages = v;
    return true;
}

static bool f_prompt(pctx *c, const cJSON *v, const char *name) {
    c->prompt = v;
    return true;
}

static bool f_stream(pctx *c, const cJSON *v, const char *name) { return srv_want_bool(c, v, name, &c->r->stream); }

static bool f_stream_options(pctx *c, const cJSON *v, const char *name) {
    if (!cJSON_IsObject(v)) return srv_fail(c->e, 400, name, "'stream_options' must be an object");
    c->stream_options_given = true;
    for (const cJSON *k = v->child; k; k = k->next) {
        if (cJSON_IsNull(k)) continue;
        if (strcmp(k->string, "include_usage") == 0) {
            if (!srv_want_bool(c, k, "stream_options.include_usage", &c->r->include_usage)) return false;
        } else if (strcmp(k->string, "include_obfuscation") == 0) {
            bool b = false;
            if (!srv_want_bool(c, k, "stream_options.include_obfuscation", &b)) return false;
            if (b)
                return srv_fail(c->e, 400, "stream_options.include_obfuscation",
                                "'stream_options.include_obfuscation' is not supported: chunks are never padded");
        } else {
            return srv_fail(c->e, 400, "stream_options", "unknown field 'stream_options.%.40s'", k->string);
        }
    }
    return true;
}

static bool f_max_tokens(pctx *c, const cJSON *v, const char *name) {
    return srv_want_int(c, v, name, 1, 1 << 24, &c->max_tokens);
}

static bool f_max_completion_tokens(pctx *c, const cJSON *v, const char *name) {
    return srv_want_int(c, v, name, 1, 1 << 24, &c->max_completion_tokens);
}

static bool f_temperature(pctx *c, const cJSON *v, const char *name) {
    double d = 0;
    if (!srv_want_number(c, v, name, 0, 2, &d)) return false;
    c->r->sp.temperature = (float)d;
    return true;
}

static bool f_top_p(pctx *c, const cJSON *v, const char *name) {
    double d = 0;
    if (!srv_want_number(c, v, name, 0, 1, &d)) return false;
    c->r->sp.top_p = (float)d;
    return true;
}

static bool f_top_k(pctx *c, const cJSON *v, const char *name) {
    int64_t k = 0;
    if (!srv_want_int(c, v, name, 0, 1 << 30, &k)) return false;
    c->r->sp.top_k = (int32_t)k;
    return true;
}

static bool f_min_p(pctx *c, const cJSON *v, const char *name) {
    double d = 0;
    if (!srv_want_number(c, v, name, 0, 1, &d)) return false;
    c->r->sp.min_p = (float)d;
    return true;
}

static bool f_repeat_penalty(pctx *c, const cJSON *v, const char *name) {
    double d = 0;
    if (!srv_want_number(c, v, name, 0.01, 100, &d)) return false;
    c->r->sp.repeat_penalty = (float)d;
    return true;
}

static bool f_presence_penalty(pctx *c, const cJSON *v, const char *name) {
    double d = 0;
    if (!srv_want_number(c, v, name, -2, 2, &d)) return false;
    c->r->sp.presence_penalty = (float)d;
    return true;
}

static bool f_frequency_penalty(pctx *c, const cJSON *v, const char *name) {
    double d = 0;
    if (!srv_want_number(c, v, name, -2, 2, &d)) return false;
    c->r->sp.frequency_penalty = (float)d;
    return true;
}

static bool f_seed(pctx *c, const cJSON *v, const char *name) {
    int64_t s = 0;
    /* doubles hold every integer up to 2^53 exactly; past that a seed
     * would silently change */
    if (!srv_want_int(c, v, name, -(INT64_C(1) << 53), INT64_C(1) << 53, &s)) return false;
    c->r->sp.seed = (uint64_t)s;
    c->r->seed_given = true;
    return true;
}

static bool add_stop(pctx *c, const cJSON *v, const char *name) {
    const char *s = NULL;
    if (!srv_want_string(c, v, name, &s)) return false;
    size_t n = strlen(s);
    if (n == 0) return srv_fail(c->e, 400, "stop", "a stop string may not be empty");
    if (n > SRV_MAX_STOP_LEN) return srv_fail(c->e, 400, "stop", "a stop string may be at most %d bytes", SRV_MAX_STOP_LEN);
    if (c->r->n_stop == SRV_MAX_STOPS) return srv_fail(c->e, 400, "stop", "at most %d stop strings", SRV_MAX_STOPS);
    char *d = strdup(s);
    if (!d) return srv_fail(c->e, 500, NULL, "out of memory");
    c->r->stop[c->r->n_stop++] = d;
    return true;
}

static bool f_stop(pctx *c, const cJSON *v, const char *name) {
    if (!c->r->stop && !(c->r->stop = calloc(SRV_MAX_STOPS, sizeof *c->r->stop)))
        return srv_fail(c->e, 500, NULL, "out of memory");
    if (cJSON_IsString(v)) return add_stop(c, v, name);
    if (!cJSON_IsArray(v)) return srv_fail(c->e, 400, name, "'stop' must be a string or an array of strings");
    for (const cJSON *s = v->child; s; s = s->next)
        if (!add_stop(c, s, "stop")) return false;
    return true;
}

static bool f_n(pctx *c, const cJSON *v, const char *name) {
    int64_t n = 0;
    if (!srv_want_int(c, v, name, 1, SRV_MAX_CHOICES, &n)) return false;
    c->r->n = (uint32_t)n;
    return true;
}

static bool f_logprobs(pctx *c, const cJSON *v, const char *name) {
    if (c->kind == SRV_CHAT) return srv_want_bool(c, v, name, &c->logprobs_flag);
    return srv_want_int(c, v, name, 0, SRV_MAX_TOP_LOGPROBS, &c->logprobs_n);
}

static bool f_top_logprobs(pctx *c, const cJSON *v, const char *name) {
    return srv_want_int(c, v, name, 0, SRV_MAX_TOP_LOGPROBS, &c->top_logprobs);
}

static bool f_logit_bias(pctx *c, const cJSON *v, const char *name) {
    if (!cJSON_IsObject(v)) return srv_fail(c->e, 400, name, "'logit_bias' must be an object of token id -> bias");
    size_t n = 0;
    for (const cJSON *k = v->child; k; k = k->next) n++;
    if (n > SRV_MAX_LOGIT_BIAS) return srv_fail(c->e, 400, name, "'logit_bias' may hold at most %d tokens", SRV_MAX_LOGIT_BIAS);
    srv_request *r = c->r;
    free(r->bias_id);
    free(r->bias);
    r->n_bias = 0;
    r->bias_id = malloc((n ? n : 1) * sizeof *r->bias_id);
    r->bias = malloc((n ? n : 1) * sizeof *r->bias);
    if (!r->bias_id || !r->bias) return srv_fail(c->e, 500, NULL, "out of memory");
    for (const cJSON *k = v->child; k; k = k->next) {
        char *end;
        const char *key = k->string ? k->string : "";
        long long id = strtoll(key, &end, 10);
        if (end == key || *end || key[0] == ' ' || key[0] == '+' || id < 0 || id >= c->m->n_vocab)
            return srv_fail(c->e, 400, name, "'logit_bias' key '%.32s' is not a token id of this model (0..%d)", key,
                            c->m->n_vocab - 1);
        double b = 0;
        if (!srv_want_number(c, k, "logit_bias", -100, 100, &b)) return false;
        r->bias_id[r->n_bias] = (int32_t)id;
        r->bias[r->n_bias++] = (float)b;
    }
    return true;
}

static bool f_echo(pctx *c, const cJSON *v, const char *name) { return srv_want_bool(c, v, name, &c->r->echo); }

static bool f_best_of(pctx *c, const cJSON *v, const char *name) {
    return srv_want_int(c, v, name, 1, SRV_MAX_CHOICES, &c->best_of);
}

static bool f_suffix(pctx *c, const cJSON *v, const char *name) {
    if (cJSON_IsString(v) && v->valuestring && !v->valuestring[0]) return true;
    return srv_fail(c->e, 400, name, "'suffix' is not supported (insertion needs a fill-in-the-middle model)");
}

static bool f_store(pctx *c, const cJSON *v, const char *name) {
    bool b = false;
    if (!srv_want_bool(c, v, name, &b)) return false;
    if (b) return srv_fail(c->e, 400, name, "'store' is not supported: this server keeps no completions");
    return true;
}

static bool f_service_tier(pctx *c, const cJSON *v, const char *name) {
    if (cJSON_IsString(v) && (strcmp(v->valuestring, "auto") == 0 || strcmp(v->valuestring, "default") == 0)) return true;
    return srv_fail(c->e, 400, name, "'service_tier' may only be \"auto\" or \"default\"");
}

static bool f_modalities(pctx *c, const cJSON *v, const char *name) {
    if (cJSON_IsArray(v) && cJSON_GetArraySize(v) == 1 && cJSON_IsString(v->child) &&
        strcmp(v->child->valuestring, "text") == 0)
        return true;
    return srv_fail(c->e, 400, name, "'modalities' may only be [\"text\"]");
}

static bool f_chat_template_kwargs(pctx *c, const cJSON *v, const char *name) {
    if (!cJSON_IsObject(v)) return srv_fail(c->e, 400, name, "'chat_template_kwargs' must be an object");
    cJSON *copy = cJSON_Duplicate(v, 1);
    if (!copy) return srv_fail(c->e, 500, NULL, "out of memory");
    cJSON *et = cJSON_DetachItemFromObjectCaseSensitive(copy, "enable_thinking");
    if (et && !cJSON_IsNull(et)) {
        bool b = false;
        if (!srv_want_bool(c, et, "chat_template_kwargs.enable_thinking", &b)) {
            cJSON_Delete(et);
            cJSON_Delete(copy);
            return false;
        }
        c->enable_thinking = b;
    }
    cJSON_Delete(et);
    /* the template sees these as variables; the names it is given by the
     * server itself may not be replaced */
    static const char *const reserved[] = {"messages", "add_generation_prompt", "bos_token", "eos_token", "tools"};
    for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
        if (cJSON_GetObjectItemCaseSensitive(copy, reserved[i])) {
            cJSON_Delete(copy);
            return srv_fail(c->e, 400, name, "'chat_template_kwargs.%s' is set by the server", reserved[i]);
        }
    cJSON_Delete(c->template_vars);
    c->template_vars = copy;
    return true;
}

static bool f_refused(pctx *c, const cJSON *v, const char *name) {
    return srv_fail(c->e, 400, name, "'%s' is not supported by this server", name);
}

enum { CHAT = 1, COMPL = 2, BOTH = 3 };

static const struct field {
    const char *name;
    unsigned where;
    field_fn fn;
} FIELDS[] = {
    {"model", BOTH, f_accept_string},
    {"messages", CHAT, f_messages},
    {"prompt", COMPL, f_prompt},
    {"stream", BOTH, f_stream},
    {"stream_options", BOTH, f_stream_options},
    {"max_tokens", BOTH, f_max_tokens},
    {"max_completion_tokens", CHAT, f_max_completion_tokens},
    {"temperature", BOTH, f_temperature},
    {"top_p", BOTH, f_top_p},
    {"top_k", BOTH, f_top_k},
    {"min_p", BOTH, f_min_p},
    {"repeat_penalty", BOTH, f_repeat_penalty},
    {"presence_penalty", BOTH, f_presence_penalty},
    {"frequency_penalty", BOTH, f_frequency_penalty},
    {"seed", BOTH, f_seed},
    {"stop", BOTH, f_stop},
    {"n", BOTH, f_n},
    {"logprobs", BOTH, f_logprobs},
    {"top_logprobs", CHAT, f_top_logprobs},
    {"logit_bias", BOTH, f_logit_bias},
    {"user", BOTH, f_accept_string},
    {"echo", COMPL, f_echo},
    {"best_of", COMPL, f_best_of},
    {"suffix", COMPL, f_suffix},
    {"store", CHAT, f_store},
    {"response_format", CHAT, srv_field_response_format},
    {"grammar", BOTH, srv_field_grammar},
    {"json_schema", BOTH, srv_field_json_schema},
    {"tools", CHAT, srv_field_tools},
    {"functions", CHAT, f_refused},
    {"tool_choice", CHAT, srv_field_tool_choice},
    {"function_call", CHAT, f_refused},
    {"parallel_tool_calls", CHAT, srv_field_parallel_tool_calls},
    {"service_tier", BOTH, f_service_tier},
    {"modalities", CHAT, f_modalities},
    {"chat_template_kwargs", CHAT, f_chat_template_kwargs},
    {"metadata", CHAT, f_refused},
    {"reasoning_effort", CHAT, f_refused},
    {"audio", CHAT, f_refused},
    {"prediction", CHAT, f_refused},
    {"web_search_options", CHAT, f_refused},
    {"verbosity", CHAT, f_refused},
    {"prompt_cache_key", CHAT, f_refused},
    {"safety_identifier", CHAT, f_refused},
};

/* ---- assembly ------------------------------------------------------------- */

void srv_request_free(srv_request *r) {
    if (!r) return;
    for (size_t i = 0; i < r->n_stop; i++) free(r->stop[i]);
    free(r->stop);
    free(r->bias_id);
    free(r->bias);
    for (size_t i = 0; i < r->n_prompts; i++) {
        free(r->prompts[i].ids);
        free(r->prompts[i].text);
        for (size_t k = 0; k < r->prompts[i].n_images; k++) pocketllm_image_free(r->prompts[i].images[k]);
        free(r->prompts[i].images);
        for (size_t k = 0; k < r->prompts[i].n_audios; k++) pocketllm_audio_free(r->prompts[i].audios[k]);
        free(r->prompts[i].audios);
        free(r->prompts[i].media);
    }
    free(r->prompts);
    pocketllm_grammar_free(r->grammar);
    free(r->tools_json);
    if (r->asr) {
        pocketllm_audio_free(r->asr->audio);
        free(r->asr->context);
        free(r->asr);
    }
    memset(r, 0, sizeof *r);
}

static bool cross_checks(pctx *c) {
    srv_request *r = c->r;
    if (c->max_completion_tokens >= 0 && c->max_tokens >= 0 && c->max_completion_tokens != c->max_tokens)
        return srv_fail(c->e, 400, "max_tokens", "'max_tokens' and 'max_completion_tokens' disagree");
    r->max_tokens = c->max_completion_tokens >= 0 ? c->max_completion_tokens : c->max_tokens;
    if (c->stream_options_given && !r->stream)
        return srv_fail(c->e, 400, "stream_options", "'stream_options' is only allowed with \"stream\": true");
    if (c->kind == SRV_CHAT) {
        if (!c->messages) return srv_fail(c->e, 400, "messages", "'messages' is required");
        if (c->top_logprobs >= 0 && !c->logprobs_flag)
            return srv_fail(c->e, 400, "top_logprobs", "'top_logprobs' needs \"logprobs\": true");
        r->logprobs = c->logprobs_flag;
        r->top_logprobs = c->top_logprobs > 0 ? (int)c->top_logprobs : 0;
    } else {
        if (!c->prompt) return srv_fail(c->e, 400, "prompt", "'prompt' is required");
        r->logprobs = c->logprobs_n >= 0;
        r->top_logprobs = c->logprobs_n > 0 ? (int)c->logprobs_n : 0;
        if (c->best_of >= 0 && c->best_of != (int64_t)r->n)
            return srv_fail(c->e, 400, "best_of", "'best_of' other than n is not supported: every choice is returned");
        if (r->echo && r->logprobs)
            return srv_fail(c->e, 400, "echo", "'echo' with 'logprobs' is not supported: no prompt log-probabilities");
    }
    return true;
}

/* Whether [p, end) holds only JSON whitespace. */
static bool only_space(const char *p, const char *end) {
    for (; p && p < end; p++)
        if (*p != ' ' && *p != '\t' && *p != '\r' && *p != '\n') return false;
    return true;
}

bool srv_request_parse(const srv_model *m, srv_kind kind, const char *body, size_t len, srv_request *r, srv_error *e) {
    memset(r, 0, sizeof *r);
    memset(e, 0, sizeof *e);
    r->kind = kind;
    r->n = 1;
    r->max_tokens = -1;
    /* OpenAI's defaults: temperature 1, top_p 1, no top-k or min-p; the
     * penalties count the completion's own tokens */
    r->sp = pocketllm_sampler_default_params();
    r->sp.temperature = 1.0f;
    r->sp.top_p = 1.0f;
    r->sp.top_k = 0;
    r->sp.min_p = 0.0f;
    r->sp.penalty_last_n = -1;
    pctx c = {.m = m, .kind = kind, .r = r, .e = e, .max_tokens = -1, .max_completion_tokens = -1,
              .logprobs_n = -1, .top_logprobs = -1, .best_of = -1, .enable_thinking = -1, .parallel_tool_calls = -1};

    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(body, len, &end, 0);
    bool ok;
    if (!root) {
        size_t at = end && end >= body && end <= body + len ? (size_t)(end - body) : 0;
        ok = srv_fail(e, 400, NULL, "the body is not valid JSON (at byte %zu)", at);
    } else if (!only_space(end, body + len)) {
        ok = srv_fail(e, 400, NULL, "the body has bytes after its JSON value");
    } else if (!cJSON_IsObject(root)) {
        ok = srv_fail(e, 400, NULL, "the body must be a JSON object");
    } else {
        ok = true;
        const unsigned here = kind == SRV_CHAT ? CHAT : COMPL;
        uint64_t seen[(sizeof FIELDS / sizeof *FIELDS + 63) / 64] = {0};
        for (const cJSON *v = root->child; ok && v; v = v->next) {
            size_t i = 0;
            while (i < sizeof FIELDS / sizeof *FIELDS && strcmp(FIELDS[i].name, v->string) != 0) i++;
            if (i == sizeof FIELDS / sizeof *FIELDS || !(FIELDS[i].where & here)) {
                ok = srv_fail(e, 400, v->string, "unknown field '%.60s' (see 'pocketllm serve --help')", v->string);
            } else if (seen[i / 64] & (UINT64_C(1) << (i % 64))) {
                ok = srv_fail(e, 400, v->string, "field '%s' is given twice", v->string);
            } else {
                seen[i / 64] |= UINT64_C(1) << (i % 64);
                if (!cJSON_IsNull(v)) ok = FIELDS[i].fn(&c, v, FIELDS[i].name);
            }
        }
        ok = ok && cross_checks(&c);
        ok = ok && srv_build_constraint(&c);
        ok = ok && (kind == SRV_CHAT ? srv_build_chat_prompt(&c) : srv_build_completion_prompts(&c));
        ok = ok && srv_context_checks(&c);
        ok = ok && srv_finish_constraint(&c);
    }
    free(c.gbnf);
    cJSON_Delete(c.template_vars);
    for (size_t k = 0; k < c.n_images; k++) pocketllm_image_free(c.images[k]);
    for (size_t k = 0; k < c.n_audios; k++) pocketllm_audio_free(c.audios[k]);
    cJSON_Delete(root);
    if (!ok) srv_request_free(r);
    return ok;
}
