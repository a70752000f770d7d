/*
 * srv_response.c -- building the response JSON of srv_response.h with
 * cJSON.  Text from the model may hold bytes that are not UTF-8 (a token
 * can be half a character); they become U+FFFD here, so clients always
 * get valid JSON.
 */
#include "srv_response.h"

#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "srv_text.h"

static _Atomic uint64_t reply_counter;

void srv_reply_init(srv_reply *rp, const srv_model *m, const srv_request *r) {
    memset(rp, 0, sizeof *rp);
    rp->m = m;
    rp->r = r;
    rp->created = (int64_t)time(NULL);
    uint64_t x = (uint64_t)rp->created * 0x9e3779b97f4a7c15ull + atomic_fetch_add(&reply_counter, 1) * 0xbf58476d1ce4e5b9ull;
    x ^= x >> 31;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 29;
    snprintf(rp->id, sizeof rp->id, "%s-%016llx%08x", r->kind == SRV_CHAT ? "chatcmpl" : "cmpl", (unsigned long long)x,
             (unsigned)atomic_load(&reply_counter));
}

/* A cJSON string of s[0..n) made valid UTF-8. */
static cJSON *text_item(const char *s, size_t n) {
    srv_buf b = {0};
    if (!srv_buf_add_utf8(&b, s ? s : "", n) || !srv_buf_add(&b, "", 0)) {
        srv_buf_free(&b);
        return NULL;
    }
    cJSON *item = cJSON_CreateString(b.p);
    srv_buf_free(&b);
    return item;
}

static char *print_and_free(cJSON *root) {
    char *s = root ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    return s;
}

/* cJSON_Add* that also reports an allocation failure through *ok. */
static void add(cJSON *obj, const char *key, cJSON *item, bool *ok) {
    if (!item || !obj || !cJSON_AddItemToObject(obj, key, item)) {
        cJSON_Delete(item);
        *ok = false;
    }
}

char *srv_json_error(const srv_error *e) {
    bool ok = true;
    cJSON *root = cJSON_CreateObject(), *err = cJSON_CreateObject();
    add(err, "message", text_item(e->message, strlen(e->message)), &ok);
    add(err, "type", cJSON_CreateString(e->type ? e->type : "invalid_request_error"), &ok);
    add(err, "param", e->param[0] ? cJSON_CreateString(e->param) : cJSON_CreateNull(), &ok);
    add(err, "code", cJSON_CreateNull(), &ok);
    add(root, "error", err, &ok);
    if (!ok) {
        cJSON_Delete(root);
        return NULL;
    }
    return print_and_free(root);
}

char *srv_json_models(const srv_model *m) {
    bool ok = true;
    cJSON *root = cJSON_CreateObject(), *data = cJSON_CreateArray(), *one = cJSON_CreateObject();
    add(one, "id", text_item(m->id, strlen(m->id)), &ok);
    add(one, "object", cJSON_CreateString("model"), &ok);
    add(one, "created", cJSON_CreateNumber((double)m->created), &ok);
    add(one, "owned_by", cJSON_CreateString("pocketllm"), &ok);
    /* as llama-server lists them: "multimodal" when images are taken (--mmproj) */
    cJSON *caps = cJSON_CreateArray();
    if (caps) {
        cJSON_AddItemToArray(caps, cJSON_CreateString("completion"));
        if (m->mm) cJSON_AddItemToArray(caps, cJSON_CreateString("multimodal"));
    }
    add(one, "capabilities", caps, &ok);
    if (one && data) cJSON_AddItemToArray(data, one);
    else cJSON_Delete(one), ok = false;
    add(root, "object", cJSON_CreateString("list"), &ok);
    add(root, "data", data, &ok);
    if (!ok) {
        cJSON_Delete(root);
        return NULL;
    }
    return print_and_free(root);
}

/* ---- log-probabilities ---------------------------------------------------------- */

/* The token's text as OpenAI writes it: itself when it is whole UTF-8,
 * otherwise "bytes:\xNN..."; and its bytes. */
static cJSON *token_item(const srv_model *m, int32_t id, cJSON **bytes) {
    char piece[256];
    size_t len = 0;
    if (pocketllm_token_to_piece(m->model, id, 1, piece, sizeof piece, &len) != POCKETLLM_OK) len = 0;
    if (bytes) {
        *bytes = cJSON_CreateArray();
        for (size_t i = 0; *bytes && i < len; i++) cJSON_AddItemToArray(*bytes, cJSON_CreateNumber((unsigned char)piece[i]));
    }
    if (srv_utf8_valid(piece, len)) return text_item(piece, len);
    char esc[256 * 4 + 8] = "bytes:";
    size_t k = 6;
    for (size_t i = 0; i < len; i++) k += (size_t)snprintf(esc + k, sizeof esc - k, "\\x%02x", (unsigned char)piece[i]);
    return cJSON_CreateString(esc);
}

static size_t piece_len(const srv_model *m, int32_t id) {
    char piece[256];
    size_t len = 0;
    return pocketllm_token_to_piece(m->model, id, 0, piece, sizeof piece, &len) == POCKETLLM_OK ? len : 0;
}

/* chat: {"content":[{token, logprob, bytes, top_logprobs:[...]}], "refusal":null} */
static cJSON *chat_logprobs(const srv_reply *rp, const srv_logprob *lp, size_t n) {
    bool ok = true;
    cJSON *root = cJSON_CreateObject(), *content = cJSON_CreateArray();
    for (size_t i = 0; ok && i < n; i++) {
        cJSON *e = cJSON_CreateObject(), *bytes = NULL, *tops = cJSON_CreateArray();
        add(e, "token", token_item(rp->m, lp[i].id, &bytes), &ok);
        add(e, "logprob", cJSON_CreateNumber(lp[i].lp), &ok);
        add(e, "bytes", bytes, &ok);
        for (int k = 0; ok && tops && k < lp[i].n_top; k++) {
            cJSON *t = cJSON_CreateObject(), *tb = NULL;
            add(t, "token", token_item(rp->m, lp[i].top_id[k], &tb), &ok);
            add(t, "logprob", cJSON_CreateNumber(lp[i].top_lp[k]), &ok);
            add(t, "bytes", tb, &ok);
            if (t) cJSON_AddItemToArray(tops, t);
        }
        add(e, "top_logprobs", tops, &ok);
        if (e && content) cJSON_AddItemToArray(content, e);
        else cJSON_Delete(e), ok = false;
    }
    add(root, "content", content, &ok);
    add(root, "refusal", cJSON_CreateNull(), &ok);
    if (!ok) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

/* completions: {"tokens", "token_logprobs", "top_logprobs", "text_offset"} */
static cJSON *text_logprobs(const srv_reply *rp, const srv_logprob *lp, size_t n, uint64_t offset) {
    bool ok = true;
    cJSON *root = cJSON_CreateObject(), *toks = cJSON_CreateArray(), *lps = cJSON_CreateArray(),
          *tops = cJSON_CreateArray(), *offs = cJSON_CreateArray();
    for (size_t i = 0; ok && i < n; i++) {
        cJSON *t = token_item(rp->m, lp[i].id, NULL), *top = cJSON_CreateObject();
        if (!t || !top || !toks || !lps || !tops || !offs) {
            cJSON_Delete(t);
            cJSON_Delete(top);
            ok = false;
            break;
        }
        cJSON_AddItemToArray(toks, t);
        cJSON_AddItemToArray(lps, cJSON_CreateNumber(lp[i].lp));
        for (int k = 0; k < lp[i].n_top; k++) {
            cJSON *name = token_item(rp->m, lp[i].top_id[k], NULL);
            if (name && cJSON_IsString(name)) cJSON_AddNumberToObject(top, name->valuestring, lp[i].top_lp[k]);
            cJSON_Delete(name);
        }
        cJSON_AddItemToArray(tops, top);
        cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)offset));
        offset += piece_len(rp->m, lp[i].id);
    }
    add(root, "tokens", toks, &ok);
    add(root, "token_logprobs", lps, &ok);
    add(root, "top_logprobs", tops, &ok);
    add(root, "text_offset", offs, &ok);
    if (!ok) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

/* ---- usage ------------------------------------------------------------------------- */

void srv_usage_counts(const srv_request *r, const srv_update *u, uint64_t *prompt, uint64_t *completion) {
    *prompt = 0;
    *completion = 0;
    for (size_t i = 0; i < r->n_prompts; i++) *prompt += r->prompts[i].n;
    for (size_t i = 0; i < u->n_choices; i++) *completion += u->c[i].n_gen;
}

static cJSON *usage_item(const srv_request *r, const srv_update *u) {
    uint64_t p, c;
    srv_usage_counts(r, u, &p, &c);
    bool ok = true;
    cJSON *o = cJSON_CreateObject();
    add(o, "prompt_tokens", cJSON_CreateNumber((double)p), &ok);
    add(o, "completion_tokens", cJSON_CreateNumber((double)c), &ok);
    add(o, "total_tokens", cJSON_CreateNumber((double)(p + c)), &ok);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* ---- whole responses and chunks ------------------------------------------------------ */

static cJSON *envelope(const srv_reply *rp, const char *object, bool *ok) {
    cJSON *root = cJSON_CreateObject();
    add(root, "id", cJSON_CreateString(rp->id), ok);
    add(root, "object", cJSON_CreateString(object), ok);
    add(root, "created", cJSON_CreateNumber((double)rp->created), ok);
    add(root, "model", text_item(rp->m->id, strlen(rp->m->id)), ok);
    return root;
}

uint64_t srv_reply_call_seed(const srv_reply *rp, size_t i) {
    uint64_t h = 1469598103934665603ull;
    for (const char *p = rp->id; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
    return h ^ (i * 0x9e3779b97f4a7c15ull);
}

/* The tool calls in the content, when tools were offered: message gets
 * tool_calls (content null when nothing else was said) and *finish
 * "tool_calls"; a botched call leaves the whole content as text and
 * finish_reason "stop".  False when there were no calls: the caller
 * writes the content as it is. */
static bool chat_tool_calls(const srv_reply *rp, size_t i, const char *content, size_t len, cJSON *msg,
                            const char **finish, bool *ok) {
    const srv_request *r = rp->r;
    const char *tools = srv_reply_tools(r);
    if (!tools) return false;
    pocketllm_tool_parser *tp = NULL;
    if (pocketllm_tool_parser_new(rp->m->tmpl, tools, strlen(tools), srv_reply_call_seed(rp, i), &tp)) {
        *ok = false;
        return false;
    }
    pocketllm_tool_parser_feed(tp, content, len, NULL, NULL);
    const bool parsed = pocketllm_tool_parser_finish(tp, NULL, NULL);
    const int n = pocketllm_tool_parser_n_calls(tp);
    if (parsed && n == 0 && r->parse_replies) {
        /* a text reply behind its "all\n" marker: the text without it */
        const char *rest = pocketllm_tool_parser_content(tp);
        add(msg, "content", text_item(rest ? rest : "", rest ? strlen(rest) : 0), ok);
        pocketllm_tool_parser_free(tp);
        return true;
    }
    if (!parsed || n == 0) {
        if (!parsed && *finish && !strcmp(*finish, "tool_calls")) *finish = "stop";
        pocketllm_tool_parser_free(tp);
        return false;
    }
    const char *rest = pocketllm_tool_parser_content(tp);
    add(msg, "content", rest ? text_item(rest, strlen(rest)) : cJSON_CreateNull(), ok);
    cJSON *calls = cJSON_CreateArray();
    for (int k = 0; calls && k < n; k++) {
        const char *name, *id, *args;
        pocketllm_tool_parser_call(tp, k, &name, &id, &args);
        cJSON *c = cJSON_CreateObject(), *fn = cJSON_CreateObject();
        add(c, "id", cJSON_CreateString(id), ok);
        add(c, "type", cJSON_CreateString("function"), ok);
        add(fn, "name", cJSON_CreateString(name), ok);
        add(fn, "arguments", text_item(args, strlen(args)), ok);
        add(c, "function", fn, ok);
        if (c) cJSON_AddItemToArray(calls, c);
    }
    add(msg, "tool_calls", calls, ok);
    pocketllm_tool_parser_free(tp);
    if (!*finish || strcmp(*finish, "length")) *finish = "tool_calls";
    return true;
}

/* The assistant message of a chat choice: content, and reasoning_content
 * when the template's split finds a think block; tool calls when tools
 * were offered and the model made some. */
static cJSON *chat_message(const srv_reply *rp, size_t i, const srv_prompt *prompt, const srv_buf *text,
                           const char **finish, bool *ok) {
    cJSON *msg = cJSON_CreateObject();
    add(msg, "role", cJSON_CreateString("assistant"), ok);
    pocketllm_chat_split sp;
    if (pocketllm_chat_split_reasoning(rp->m->tmpl, prompt->text, text->p ? text->p : "", text->n, &sp) != POCKETLLM_OK) {
        *ok = false;
        return msg;
    }
    if (!chat_tool_calls(rp, i, sp.content, sp.content_len, msg, finish, ok))
        add(msg, "content", text_item(sp.content, sp.content_len), ok);
    if (sp.has_reasoning) add(msg, "reasoning_content", text_item(sp.reasoning, sp.reasoning_len), ok);
    pocketllm_chat_split_free(&sp);
    return msg;
}

char *srv_json_final(const srv_reply *rp, const srv_update *u) {
    const srv_request *r = rp->r;
    bool ok = true;
    const bool chat = r->kind == SRV_CHAT;
    cJSON *root = envelope(rp, chat ? "chat.completion" : "text_completion", &ok);
    cJSON *choices = cJSON_CreateArray();
    for (size_t i = 0; ok && choices && i < u->n_choices; i++) {
        const srv_choice_update *c = &u->c[i];
        const srv_prompt *prompt = &r->prompts[i / r->n];
        cJSON *ch = cJSON_CreateObject();
        const char *finish = c->finish ? c->finish : "stop";
        add(ch, "index", cJSON_CreateNumber((double)i), &ok);
        if (chat) {
            add(ch, "message", chat_message(rp, i, prompt, &c->text, &finish, &ok), &ok);
        } else if (r->echo) {
            srv_buf b = {0};
            srv_buf_add(&b, prompt->text, prompt->text_len);
            srv_buf_add(&b, c->text.p, c->text.n);
            add(ch, "text", b.oom ? NULL : text_item(b.p, b.n), &ok);
            srv_buf_free(&b);
        } else {
            add(ch, "text", text_item(c->text.p, c->text.n), &ok);
        }
        if (r->logprobs)
            add(ch, "logprobs", chat ? chat_logprobs(rp, c->lp, c->n_lp) : text_logprobs(rp, c->lp, c->n_lp, 0), &ok);
        else
            add(ch, "logprobs", cJSON_CreateNull(), &ok);
        add(ch, "finish_reason", cJSON_CreateString(finish), &ok);
        if (ch) cJSON_AddItemToArray(choices, ch);
        else ok = false;
    }
    add(root, "choices", choices, &ok);
    add(root, "usage", usage_item(r, u), &ok);
    if (!ok) {
        cJSON_Delete(root);
        return NULL;
    }
    return print_and_free(root);
}

char *srv_json_chunk(const srv_reply *rp, const srv_chunk *c) {
    const srv_request *r = rp->r;
    bool ok = true;
    const bool chat = r->kind == SRV_CHAT;
    cJSON *root = envelope(rp, chat ? "chat.completion.chunk" : "text_completion", &ok);
    cJSON *choices = cJSON_CreateArray(), *ch = cJSON_CreateObject();
    add(ch, "index", cJSON_CreateNumber((double)c->index), &ok);
    if (chat) {
        cJSON *delta = cJSON_CreateObject();
        if (c->role) add(delta, "role", cJSON_CreateString("assistant"), &ok);
        if (c->role || c->content_len) add(delta, "content", text_item(c->content, c->content_len), &ok);
        if (c->reasoning_len) add(delta, "reasoning_content", text_item(c->reasoning, c->reasoning_len), &ok);
        if (c->call >= 0 && (c->call_name || c->args_len)) {
            cJSON *calls = cJSON_CreateArray(), *tc = cJSON_CreateObject(), *fn = cJSON_CreateObject();
            add(tc, "index", cJSON_CreateNumber(c->call), &ok);
            if (c->call_name) {
                add(tc, "id", cJSON_CreateString(c->call_id ? c->call_id : ""), &ok);
                add(tc, "type", cJSON_CreateString("function"), &ok);
                add(fn, "name", cJSON_CreateString(c->call_name), &ok);
            }
            add(fn, "arguments", text_item(c->args, c->args_len), &ok);
            add(tc, "function", fn, &ok);
            if (calls && tc) cJSON_AddItemToArray(calls, tc);
            else cJSON_Delete(tc), ok = false;
            add(delta, "tool_calls", calls, &ok);
        }
        add(ch, "delta", delta, &ok);
    } else {
        add(ch, "text", text_item(c->content, c->content_len), &ok);
    }
    if (r->logprobs && c->n_lp)
        add(ch, "logprobs", chat ? chat_logprobs(rp, c->lp, c->n_lp) : text_logprobs(rp, c->lp, c->n_lp, c->text_offset), &ok);
    else
        add(ch, "logprobs", cJSON_CreateNull(), &ok);
    add(ch, "finish_reason", c->finish ? cJSON_CreateString(c->finish) : cJSON_CreateNull(), &ok);
    if (ch && choices) cJSON_AddItemToArray(choices, ch);
    else cJSON_Delete(ch), ok = false;
    add(root, "choices", choices, &ok);
    if (!ok) {
        cJSON_Delete(root);
        return NULL;
    }
    return print_and_free(root);
}

char *srv_json_usage_chunk(const srv_reply *rp, const srv_update *u) {
    bool ok = true;
    cJSON *root = envelope(rp, rp->r->kind == SRV_CHAT ? "chat.completion.chunk" : "text_completion", &ok);
    add(root, "choices", cJSON_CreateArray(), &ok);
    add(root, "usage", usage_item(rp->r, u), &ok);
    if (!ok) {
        cJSON_Delete(root);
        return NULL;
    }
    return print_and_free(root);
}
