/*
 * srv_constrain.c -- what a request asks of the shape of the reply, turned
 * into the one grammar every choice samples under: OpenAI's
 * response_format (json_object, json_schema), llama.cpp's `grammar` (GBNF)
 * and `json_schema` fields, and tools with tool_choice (srv_tools.c builds
 * that grammar).  Each is checked here, so a schema keyword the compiler
 * cannot honour or a grammar that does not parse is a 400 naming the
 * field, before anything is queued.
 *
 * A template that writes think blocks (Qwen3) gets an optional
 * <think>...</think> before the constrained part: the reasoning stays
 * free, and what follows it -- the content -- is what must match.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "srv_request_internal.h"
#include "srv_text.h"

bool srv_field_response_format(pctx *c, const cJSON *v, const char *name) {
    const cJSON *t = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, "type") : NULL;
    if (!cJSON_IsString(t)) return srv_fail(c->e, 400, name, "'response_format' must be an object with a 'type'");
    const char *type = t->valuestring;
    if (strcmp(type, "text") && strcmp(type, "json_object") && strcmp(type, "json_schema"))
        return srv_fail(c->e, 400, name, "'response_format' type '%.40s' is not one of text, json_object, json_schema", type);
    for (const cJSON *k = v->child; k; k = k->next)
        if (strcmp(k->string, "type") && !(strcmp(type, "json_schema") == 0 && strcmp(k->string, "json_schema") == 0))
            return srv_fail(c->e, 400, name, "unknown field 'response_format.%.40s'", k->string);
    if (strcmp(type, "json_schema") == 0) {
        const cJSON *js = cJSON_GetObjectItemCaseSensitive(v, "json_schema");
        if (!cJSON_IsObject(js)) return srv_fail(c->e, 400, name, "'response_format.json_schema' must be an object");
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(js, "name");
        if (!cJSON_IsString(n) || !*n->valuestring)
            return srv_fail(c->e, 400, name, "'response_format.json_schema.name' must be a non-empty string");
        for (const cJSON *k = js->child; k; k = k->next) {
            if (!strcmp(k->string, "name") || !strcmp(k->string, "description")) continue;
            if (!strcmp(k->string, "schema")) {
                if (!cJSON_IsObject(k) && !cJSON_IsBool(k))
                    return srv_fail(c->e, 400, name, "'response_format.json_schema.schema' must be an object");
            } else if (!strcmp(k->string, "strict")) {
                /* strict or not, the reply is held to the schema: stricter
                 * than asked never breaks a client */
                if (!cJSON_IsBool(k) && !cJSON_IsNull(k))
                    return srv_fail(c->e, 400, name, "'response_format.json_schema.strict' must be a boolean");
            } else {
                return srv_fail(c->e, 400, name, "unknown field 'response_format.json_schema.%.40s'", k->string);
            }
        }
    }
    c->response_format = v;
    return true;
}

bool srv_field_grammar(pctx *c, const cJSON *v, const char *name) {
    const char *s;
    if (!srv_want_string(c, v, name, &s)) return false;
    if (!*s) return true; /* llama-server: an empty grammar is none */
    c->grammar = v;
    return true;
}

bool srv_field_json_schema(pctx *c, const cJSON *v, const char *name) {
    if (!cJSON_IsObject(v) && !cJSON_IsBool(v)) return srv_fail(c->e, 400, name, "'json_schema' must be an object");
    c->json_schema = v;
    return true;
}

bool srv_field_tools(pctx *c, const cJSON *v, const char *name) {
    if (!cJSON_IsArray(v)) return srv_fail(c->e, 400, name, "'tools' must be an array");
    if (!v->child) return true; /* no tools */
    c->tools = v;
    return true;
}

bool srv_field_tool_choice(pctx *c, const cJSON *v, const char *name) {
    if (cJSON_IsString(v)) {
        const char *s = v->valuestring;
        if (strcmp(s, "none") && strcmp(s, "auto") && strcmp(s, "required"))
            return srv_fail(c->e, 400, name, "'tool_choice' must be \"none\", \"auto\", \"required\" or "
                                             "{\"type\":\"function\",\"function\":{\"name\":...}}");
    } else {
        const cJSON *t = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, "type") : NULL;
        const cJSON *f = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, "function") : NULL;
        const cJSON *n = cJSON_IsObject(f) ? cJSON_GetObjectItemCaseSensitive(f, "name") : NULL;
        if (!cJSON_IsString(t) || strcmp(t->valuestring, "function") || !cJSON_IsString(n) || !*n->valuestring)
            return srv_fail(c->e, 400, name, "'tool_choice' must be \"none\", \"auto\", \"required\" or "
                                             "{\"type\":\"function\",\"function\":{\"name\":...}}");
    }
    c->tool_choice = v;
    return true;
}

bool srv_field_parallel_tool_calls(pctx *c, const cJSON *v, const char *name) {
    bool b = false;
    if (!srv_want_bool(c, v, name, &b)) return false;
    c->parallel_tool_calls = b;
    return true;
}

/* Rules that match any text up to and including `stop` (ASCII, at most 31
 * bytes), as the automaton of the prefixes of `stop` matched so far: rule
 * NAME-k reads on with k bytes of `stop` behind it.  Every alternative ends
 * in a reference, so the matcher's stack never grows with the text. */
static void gbnf_until(srv_buf *b, const char *name, const char *stop) {
    const size_t L = strlen(stop);
    char line[256];
    for (size_t k = 0; k < L; k++) {
        snprintf(line, sizeof line, "%s-%zu ::= ", name, k);
        srv_buf_str(b, line);
        /* where each byte goes from state k: the longest prefix of stop
         * that is a suffix of stop[0..k) + byte */
        char special[32];
        size_t n_special = 0;
        bool first = true;
        for (size_t j = 0; j < L; j++) { /* the candidate bytes: those of stop */
            const char ch = stop[j];
            if (memchr(special, ch, n_special)) continue;
            special[n_special++] = ch;
            size_t next = 0;
            for (size_t m = k + 1; m > 0; m--) {
                /* does stop[0..m) end stop[0..k) + ch ? */
                if (stop[m - 1] != ch) continue;
                if (m - 1 > k) continue;
                if (memcmp(stop, stop + k - (m - 1), m - 1) == 0) {
                    next = m;
                    break;
                }
            }
            snprintf(line, sizeof line, "%s\"\\x%02x\"", first ? "" : " | ", (unsigned char)ch);
            srv_buf_str(b, line);
            first = false;
            if (next < L) {
                snprintf(line, sizeof line, " %s-%zu", name, next);
                srv_buf_str(b, line);
            }
        }
        /* any other character starts over */
        srv_buf_str(b, " | [^");
        for (size_t j = 0; j < n_special; j++) {
            snprintf(line, sizeof line, "\\x%02x", (unsigned char)special[j]);
            srv_buf_str(b, line);
        }
        snprintf(line, sizeof line, "] %s-0\n", name);
        srv_buf_str(b, line);
    }
}

bool srv_finish_constraint(pctx *c) {
    if (!c->gbnf) return true;
    /* the body keeps its own start rule "root"; the wrapper starts at
     * pl-start and reaches the body through one alias rule */
    srv_buf b = {0};
    bool open_think = false;
    /* a prompt that ends in a closed think block (thinking turned off)
     * leaves none for the reply */
    bool closed = false;
    if (c->r->n_prompts && c->r->prompts[0].text) {
        const char *t = c->r->prompts[0].text;
        size_t n = c->r->prompts[0].text_len;
        while (n && (t[n - 1] == '\n' || t[n - 1] == ' ' || t[n - 1] == '\t' || t[n - 1] == '\r')) n--;
        closed = n >= 8 && !memcmp(t + n - 8, "</think>", 8);
    }
    if (c->kind == SRV_CHAT && c->m->caps.think_tags && c->r->n_prompts && !closed) {
        /* does the generation start inside a think block the prompt opened? */
        pocketllm_chat_split sp;
        if (pocketllm_chat_split_reasoning(c->m->tmpl, c->r->prompts[0].text, "x", 1, &sp) == POCKETLLM_OK) {
            open_think = sp.has_reasoning;
            pocketllm_chat_split_free(&sp);
        }
    }
    if (c->gbnf_think && c->m->caps.think_tags && c->r->n_prompts && !closed) {
        /* (the blank after the block is bounded: a model must not idle there) */
        if (open_think) srv_buf_str(&b, "pl-start ::= pl-think-0 [ \\t\\n]{0,4} pl-body\n");
        else srv_buf_str(&b, "pl-start ::= (\"<think>\" pl-think-0 [ \\t\\n]{0,4})? pl-body\n");
        gbnf_until(&b, "pl-think", "</think>");
    } else {
        srv_buf_str(&b, "pl-start ::= pl-body\n");
    }
    srv_buf_str(&b, "pl-body ::= root\n");
    srv_buf_str(&b, c->gbnf);
    srv_buf_add(&b, "\n", 2); /* and the NUL */
    if (b.oom) {
        srv_buf_free(&b);
        return srv_fail(c->e, 500, NULL, "out of memory");
    }
    const char *param = c->gbnf_param;
    pocketllm_status st = pocketllm_grammar_new(c->m->model, b.p, "pl-start", &c->r->grammar);
    srv_buf_free(&b);
    if (st) return srv_fail(c->e, 400, param, "'%s': %s", param, pocketllm_last_error());
    if (c->n_triggers && pocketllm_grammar_set_triggers(c->r->grammar, c->triggers, c->n_triggers))
        return srv_fail(c->e, 500, NULL, "%s", pocketllm_last_error());
    /* a call mentioned while the model reasons is not a call */
    if (c->n_triggers && c->m->caps.think_tags && c->kind == SRV_CHAT &&
        pocketllm_grammar_set_trigger_zone(c->r->grammar, "<think>", "</think>", open_think))
        return srv_fail(c->e, 500, NULL, "%s", pocketllm_last_error());
    return true;
}

/* A JSON schema (NULL: any object) as GBNF text; false with e set. */
static bool schema_gbnf(pctx *c, const cJSON *schema, const char *param, char **out) {
    char *text = NULL;
    if (schema) {
        text = cJSON_PrintUnformatted(schema);
        if (!text) return srv_fail(c->e, 500, NULL, "out of memory");
    }
    pocketllm_status st = pocketllm_json_schema_to_gbnf(text, text ? strlen(text) : 0, out);
    free(text);
    if (st) return srv_fail(c->e, 400, param, "'%s': %s", param, pocketllm_last_error());
    return true;
}

/* tool_choice given as this string */
static bool choice_is(const pctx *c, const char *s) {
    return cJSON_IsString(c->tool_choice) && !strcmp(c->tool_choice->valuestring, s);
}

bool srv_build_constraint(pctx *c) {
    const cJSON *schema = NULL;
    const char *param = NULL;
    bool any_object = false;
    int n = 0;
    if (c->response_format) {
        const char *type = cJSON_GetObjectItemCaseSensitive(c->response_format, "type")->valuestring;
        if (!strcmp(type, "json_object")) {
            any_object = true, param = "response_format", n++;
        } else if (!strcmp(type, "json_schema")) {
            const cJSON *js = cJSON_GetObjectItemCaseSensitive(c->response_format, "json_schema");
            schema = cJSON_GetObjectItemCaseSensitive(js, "schema");
            if (!schema) any_object = true; /* a schema-less json_schema: any object */
            param = "response_format", n++;
        }
    }
    if (c->json_schema) schema = c->json_schema, param = "json_schema", n++;
    if (c->grammar) param = "grammar", n++;
    const bool tools = c->tools && !choice_is(c, "none");
    if (n > 1) return srv_fail(c->e, 400, param, "give one of response_format (json), grammar and json_schema");
    if (n && tools)
        return srv_fail(c->e, 400, param, "'%s' together with tools is not supported: the reply is either a call or "
                                          "constrained text", param);
    if (c->tool_choice && !c->tools && !choice_is(c, "none") && !choice_is(c, "auto"))
        return srv_fail(c->e, 400, "tool_choice", "'tool_choice' asks for a call but no tools are given");
    c->r->parse_replies = c->kind == SRV_CHAT && c->m->caps.trigger && !*c->m->caps.trigger;
    if (c->tools || c->tool_choice) return srv_tools_build(c);
    if (!n) return true;
    c->gbnf_param = param;
    c->gbnf_think = c->kind == SRV_CHAT; /* a raw completion has no think block of the template's */
    if (c->grammar) {
        if (!(c->gbnf = strdup(c->grammar->valuestring))) return srv_fail(c->e, 500, NULL, "out of memory");
        /* parsed now on its own, so a bad grammar is refused before the
         * prompt is made and the error's line numbers are the client's
         * (srv_finish_constraint parses it again inside the wrapper) */
        pocketllm_grammar *g = NULL;
        if (pocketllm_grammar_new(c->m->model, c->gbnf, "root", &g))
            return srv_fail(c->e, 400, param, "'%s': %s", param, pocketllm_last_error());
        pocketllm_grammar_free(g);
        return true;
    }
    return schema_gbnf(c, any_object ? NULL : schema, param, &c->gbnf);
}
