/*
 * srv_prompt.c -- the prompt side of the request handler: chat messages
 * normalised (roles checked, text parts joined, history fields kept) and
 * rendered with the model's chat template, completion prompts (text or
 * token ids) checked, everything tokenized as llama.cpp's server does, and
 * the context check (a prompt must leave room for the completion).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "srv_audio.h"
#include "srv_image.h"
#include "srv_request_internal.h"
#include "srv_text.h"

/* ---- messages: normalised for the template -------------------------------- */

/* An image part: {"type":"image_url","image_url":{"url":U[,"detail":D]}},
 * decoded now; its place in the text is the media marker. */
static bool image_part(pctx *c, const cJSON *part, const char *field, size_t j) {
    char name[96];
    snprintf(name, sizeof name, "%s[%zu].image_url", field, j);
    if (!c->m->mm)
        return srv_fail(c->e, 400, name, "%s: this server takes no images (start it with --mmproj FILE, the model's "
                        "vision tower)", name);
    if (!c->m->has_vision)
        return srv_fail(c->e, 400, name, "%s: this server's --mmproj has no vision tower (an audio one only): it takes "
                        "no images", name);
    for (const cJSON *k = part->child; k; k = k->next)
        if (strcmp(k->string, "type") != 0 && strcmp(k->string, "image_url") != 0)
            return srv_fail(c->e, 400, name, "unknown field '%s[%zu].%.40s'", field, j, k->string);
    const cJSON *iu = cJSON_GetObjectItemCaseSensitive(part, "image_url");
    if (!cJSON_IsObject(iu)) return srv_fail(c->e, 400, name, "%s must be an object with a 'url'", name);
    const cJSON *url = NULL;
    for (const cJSON *k = iu->child; k; k = k->next) {
        if (strcmp(k->string, "url") == 0) {
            url = k;
        } else if (strcmp(k->string, "detail") == 0) {
            /* accepted and ignored: the token budget is the server's
             * --image-min-tokens / --image-max-tokens, as llama-server */
            if (!cJSON_IsString(k) || (strcmp(k->valuestring, "auto") && strcmp(k->valuestring, "low") &&
                                       strcmp(k->valuestring, "high")))
                return srv_fail(c->e, 400, name, "%s.detail must be \"auto\", \"low\" or \"high\"", name);
        } else {
            return srv_fail(c->e, 400, name, "unknown field '%s.%.40s'", name, k->string);
        }
    }
    if (!cJSON_IsString(url) || !url->valuestring) return srv_fail(c->e, 400, name, "%s.url must be a string", name);
    if (c->n_images == SRV_MAX_IMAGES)
        return srv_fail(c->e, 400, name, "%s: a request may hold at most %d images", name, SRV_MAX_IMAGES);
    pocketllm_image *img = NULL;
    if (!srv_image_from_url(c->m, url->valuestring, name, &img, c->e)) return false;
    c->images[c->n_images++] = img;
    c->media[c->n_media++] = (pocketllm_media){.image = img, .audio = NULL};
    c->image_pixels += (uint64_t)pocketllm_image_width(img) * pocketllm_image_height(img);
    if (c->image_pixels > SRV_MAX_IMAGE_PIXELS)
        return srv_fail(c->e, 400, name, "%s: the request's images hold more than %llu megapixels together", name,
                        (unsigned long long)(SRV_MAX_IMAGE_PIXELS >> 20));
    return true;
}

/* An audio part: {"type":"input_audio","input_audio":{"data":B64,"format":F}},
 * decoded now; its place in the text is the media marker, as an image's. */
static bool audio_part(pctx *c, const cJSON *part, const char *field, size_t j) {
    char name[96];
    snprintf(name, sizeof name, "%s[%zu].input_audio", field, j);
    for (const cJSON *k = part->child; k; k = k->next)
        if (strcmp(k->string, "type") != 0 && strcmp(k->string, "input_audio") != 0)
            return srv_fail(c->e, 400, name, "unknown field '%s[%zu].%.40s'", field, j, k->string);
    if (c->n_audios == SRV_MAX_AUDIO)
        return srv_fail(c->e, 400, name, "%s: a request may hold at most %d audio clips", name, SRV_MAX_AUDIO);
    pocketllm_audio *a = NULL;
    if (!srv_audio_from_part(c->m, cJSON_GetObjectItemCaseSensitive(part, "input_audio"), name,
                             SRV_MAX_AUDIO_SECONDS - c->audio_seconds, &a, c->e))
        return false;
    c->audios[c->n_audios++] = a;
    c->media[c->n_media++] = (pocketllm_media){.image = NULL, .audio = a};
    c->audio_seconds += pocketllm_audio_seconds(a);
    return true;
}

/* content: a string, null, or an array of text and image parts, joined as
 * llama-server joins them (common_chat_msg::to_json_oaicompat): a newline
 * between two text parts when there is text before, none before or after
 * an image's marker. */
static bool message_content(pctx *c, const cJSON *v, size_t i, cJSON *out) {
    char field[64];
    snprintf(field, sizeof field, "messages[%zu].content", i);
    if (!v || cJSON_IsNull(v)) return cJSON_AddNullToObject(out, "content") ? true : srv_fail(c->e, 500, NULL, "out of memory");
    const char *s = NULL;
    if (cJSON_IsString(v)) {
        if (!srv_want_string(c, v, field, &s)) return false;
        return cJSON_AddStringToObject(out, "content", s) ? true : srv_fail(c->e, 500, NULL, "out of memory");
    }
    if (!cJSON_IsArray(v)) return srv_fail(c->e, 400, field, "'%s' must be a string, null or an array of content parts", field);
    srv_buf b = {0};
    srv_buf_add(&b, "", 0);
    size_t j = 0;
    bool after_marker = false;
    for (const cJSON *part = v->child; part; part = part->next, j++) {
        const cJSON *t = cJSON_IsObject(part) ? cJSON_GetObjectItemCaseSensitive(part, "type") : NULL;
        if (!cJSON_IsString(t)) {
            srv_buf_free(&b);
            return srv_fail(c->e, 400, field, "'%s[%zu]' must be an object with a 'type'", field, j);
        }
        if (strcmp(t->valuestring, "image_url") == 0) {
            if (!image_part(c, part, field, j)) {
                srv_buf_free(&b);
                return false;
            }
            srv_buf_str(&b, pocketllm_media_marker());
            after_marker = true;
            continue;
        }
        if (strcmp(t->valuestring, "input_audio") == 0) {
            if (!audio_part(c, part, field, j)) {
                srv_buf_free(&b);
                return false;
            }
            srv_buf_str(&b, pocketllm_media_marker());
            after_marker = true;
            continue;
        }
        if (strcmp(t->valuestring, "text") != 0) {
            srv_buf_free(&b);
            return srv_fail(c->e, 400, field, "'%s[%zu].type' '%.40s' is not supported (text, image_url and input_audio "
                            "parts are)", field, j, t->valuestring);
        }
        const cJSON *text = cJSON_GetObjectItemCaseSensitive(part, "text");
        if (!cJSON_IsString(text) || !srv_utf8_valid(text->valuestring, strlen(text->valuestring))) {
            srv_buf_free(&b);
            return srv_fail(c->e, 400, field, "'%s[%zu].text' must be a UTF-8 string", field, j);
        }
        for (const cJSON *k = part->child; k; k = k->next)
            if (strcmp(k->string, "type") != 0 && strcmp(k->string, "text") != 0) {
                srv_buf_free(&b);
                return srv_fail(c->e, 400, field, "unknown field '%s[%zu].%.40s'", field, j, k->string);
            }
        if (!after_marker && b.n) srv_buf_add(&b, "\n", 1);
        after_marker = false;
        srv_buf_str(&b, text->valuestring);
    }
    if (b.oom) {
        srv_buf_free(&b);
        return srv_fail(c->e, 500, NULL, "out of memory");
    }
    bool ok = cJSON_AddStringToObject(out, "content", b.p) != NULL;
    srv_buf_free(&b);
    return ok ? true : srv_fail(c->e, 500, NULL, "out of memory");
}

static bool normalise_message(pctx *c, const cJSON *msg, size_t i, cJSON *arr) {
    char field[64];
    snprintf(field, sizeof field, "messages[%zu]", i);
    if (!cJSON_IsObject(msg)) return srv_fail(c->e, 400, field, "'%s' must be an object", field);
    cJSON *out = cJSON_CreateObject();
    if (!out) return srv_fail(c->e, 500, NULL, "out of memory");
    cJSON_AddItemToArray(arr, out);
    const cJSON *role = cJSON_GetObjectItemCaseSensitive(msg, "role");
    if (!cJSON_IsString(role)) return srv_fail(c->e, 400, field, "'%s.role' must be a string", field);
    const char *r = role->valuestring;
    /* "developer" is OpenAI's newer name for the system role; templates
     * know only "system" */
    if (strcmp(r, "developer") == 0) r = "system";
    if (strcmp(r, "system") && strcmp(r, "user") && strcmp(r, "assistant") && strcmp(r, "tool"))
        return srv_fail(c->e, 400, field, "'%s.role' '%.40s' is not one of system, developer, user, assistant, tool",
                        field, role->valuestring);
    cJSON_AddStringToObject(out, "role", r);
    if (!message_content(c, cJSON_GetObjectItemCaseSensitive(msg, "content"), i, out)) return false;
    for (const cJSON *k = msg->child; k; k = k->next) {
        const char *key = k->string;
        char sub[128];
        snprintf(sub, sizeof sub, "%s.%.40s", field, key);
        if (!strcmp(key, "role") || !strcmp(key, "content") || cJSON_IsNull(k)) continue;
        if (!strcmp(key, "name") || !strcmp(key, "tool_call_id") || !strcmp(key, "reasoning_content")) {
            const char *s = NULL;
            if (!srv_want_string(c, k, sub, &s)) return false;
            if (cJSON_GetObjectItemCaseSensitive(out, key)) return srv_fail(c->e, 400, sub, "'%s' is given twice", sub);
            cJSON_AddStringToObject(out, key, s);
        } else if (!strcmp(key, "tool_calls")) {
            /* earlier calls in the history are rendered by the template */
            if (!cJSON_IsArray(k)) return srv_fail(c->e, 400, sub, "'%s' must be an array", sub);
            cJSON *d = cJSON_Duplicate(k, 1);
            if (!d) return srv_fail(c->e, 500, NULL, "out of memory");
            /* OpenAI sends function.arguments as JSON text; the templates
             * write it with `| tojson` (or test `is string`), so they get
             * the object, as llama-server gives it to them -- except those
             * that write it as it is, which keep the text */
            const bool as_text = pocketllm_chat_template_arguments_as_text(c->m->tmpl) != 0;
            for (cJSON *call = as_text ? NULL : d->child; call; call = call->next) {
                cJSON *fn = cJSON_GetObjectItemCaseSensitive(call, "function");
                cJSON *args = cJSON_GetObjectItemCaseSensitive(fn, "arguments");
                if (!cJSON_IsString(args)) continue;
                cJSON *obj = cJSON_Parse(args->valuestring);
                if (cJSON_IsObject(obj)) cJSON_ReplaceItemInObjectCaseSensitive(fn, "arguments", obj);
                else cJSON_Delete(obj);
            }
            cJSON_AddItemToObject(out, "tool_calls", d);
            /* a call's message has content null; the templates test it
             * with `in` and `+`, which need a string (llama-server: "") */
            cJSON *content = cJSON_GetObjectItemCaseSensitive(out, "content");
            if (cJSON_IsNull(content)) cJSON_ReplaceItemInObjectCaseSensitive(out, "content", cJSON_CreateString(""));
        } else if (!strcmp(key, "refusal")) {
            return srv_fail(c->e, 400, sub, "'%s' must be null", sub);
        } else {
            return srv_fail(c->e, 400, sub, "unknown field '%s'", sub);
        }
    }
    return true;
}

/* ---- prompts --------------------------------------------------------------- */

static bool tokenize(pctx *c, const char *text, size_t len, bool add_special, srv_prompt *p, const char *param) {
    /* room for one more id than the context holds: a longer prompt is
     * refused from the count alone */
    size_t cap = (size_t)c->m->n_ctx + 1, need = 0;
    p->ids = malloc(cap * sizeof *p->ids);
    if (!p->ids) return srv_fail(c->e, 500, NULL, "out of memory");
    pocketllm_status st = pocketllm_tokenize(c->m->model, text, len, add_special, 1, p->ids, cap, &need);
    if (st == POCKETLLM_ERR_INVALID_ARGUMENT && need > cap)
        return srv_fail(c->e, 400, param, "the prompt is %zu tokens; the context holds %u (start the server with a larger --ctx)",
                        need, c->m->n_ctx);
    if (st) return srv_fail(c->e, 400, param, "the prompt cannot be tokenized: %s", pocketllm_last_error());
    p->n = need;
    return true;
}

/* A rendered conversation with images or audio: its rows as the
 * composition lays them out (media_prompt.h), each media token as -1; the
 * prompt takes the media over. */
static bool media_tokenize(pctx *c, const char *text, size_t len, bool add_special, srv_prompt *p) {
    const char *marker = pocketllm_media_marker();
    const size_t ml = strlen(marker);
    size_t markers = 0;
    for (const char *at = text; (at = strstr(at, marker)) != NULL && (size_t)(at - text) < len; at += ml) markers++;
    /* the text parts may not add markers of their own: media would move */
    if (markers > c->n_media)
        return srv_fail(c->e, 400, "messages", "the conversation's text holds the media marker \"%s\" itself; it may "
                        "only stand for the images and audio sent", marker);
    if (markers < c->n_media)
        return srv_fail(c->e, 400, "messages", "the chat template left out %zu of the %zu images and audio clips (in a "
                        "message it does not render?)", c->n_media - markers, c->n_media);
    uint32_t n = 0;
    pocketllm_status st =
        pocketllm_media_list_tokens(c->m->model, c->m->mm, text, len, c->media, c->n_media, add_special, 1, NULL, 0, &n);
    if (st) return srv_fail(c->e, 400, "messages", "the prompt cannot be composed: %s", pocketllm_last_error());
    if (n >= c->m->n_ctx)
        return srv_fail(c->e, 400, "messages", "the prompt and its %zu image%s and audio clip%s take %u positions; the "
                        "context holds %u, with at least one left for the completion (start the server with a larger "
                        "--ctx, or a smaller --image-max-tokens)", c->n_images, c->n_images == 1 ? "" : "s",
                        c->n_audios == 1 ? "" : "s", n, c->m->n_ctx);
    p->ids = malloc((size_t)(n ? n : 1) * sizeof *p->ids);
    p->images = malloc((c->n_images ? c->n_images : 1) * sizeof *p->images);
    p->audios = malloc((c->n_audios ? c->n_audios : 1) * sizeof *p->audios);
    p->media = malloc(c->n_media * sizeof *p->media);
    if (!p->ids || !p->images || !p->audios || !p->media) return srv_fail(c->e, 500, NULL, "out of memory");
    st = pocketllm_media_list_tokens(c->m->model, c->m->mm, text, len, c->media, c->n_media, add_special, 1, p->ids, n,
                                     &n);
    if (st) return srv_fail(c->e, 400, "messages", "the prompt cannot be composed: %s", pocketllm_last_error());
    p->n = n;
    p->add_special = add_special;
    memcpy(p->images, c->images, c->n_images * sizeof *p->images);
    p->n_images = c->n_images;
    c->n_images = 0;
    memcpy(p->audios, c->audios, c->n_audios * sizeof *p->audios);
    p->n_audios = c->n_audios;
    c->n_audios = 0;
    memcpy(p->media, c->media, c->n_media * sizeof *p->media);
    p->n_media = c->n_media;
    c->n_media = 0;
    return true;
}

static bool set_text(pctx *c, srv_prompt *p, const char *text, size_t len) {
    p->text = malloc(len + 1);
    if (!p->text) return srv_fail(c->e, 500, NULL, "out of memory");
    memcpy(p->text, text, len);
    p->text[len] = '\0';
    p->text_len = len;
    return true;
}

static bool id_prompt(pctx *c, const cJSON *arr, srv_prompt *p) {
    int n = cJSON_GetArraySize(arr);
    if (n <= 0) return srv_fail(c->e, 400, "prompt", "a prompt of token ids may not be empty");
    if ((uint32_t)n >= c->m->n_ctx)
        return srv_fail(c->e, 400, "prompt", "the prompt is %d tokens; the context holds %u", n, c->m->n_ctx);
    p->ids = malloc((size_t)n * sizeof *p->ids);
    if (!p->ids) return srv_fail(c->e, 500, NULL, "out of memory");
    for (const cJSON *v = arr->child; v; v = v->next) {
        int64_t id = 0;
        if (!srv_want_int(c, v, "prompt", 0, c->m->n_vocab - 1, &id)) return false;
        p->ids[p->n++] = (int32_t)id;
    }
    if (!c->r->echo) return set_text(c, p, "", 0);
    /* echo: the ids' text */
    size_t need = 0, cap = (size_t)n * 16 + 16;
    char *buf = malloc(cap);
    if (!buf) return srv_fail(c->e, 500, NULL, "out of memory");
    pocketllm_status st = pocketllm_detokenize(c->m->model, p->ids, p->n, 0, 0, buf, cap, &need);
    if (st == POCKETLLM_ERR_INVALID_ARGUMENT && need > cap) {
        char *b2 = realloc(buf, need);
        if (!b2) {
            free(buf);
            return srv_fail(c->e, 500, NULL, "out of memory");
        }
        buf = b2;
        cap = need;
        st = pocketllm_detokenize(c->m->model, p->ids, p->n, 0, 0, buf, cap, &need);
    }
    bool ok = st ? srv_fail(c->e, 400, "prompt", "the prompt ids cannot be turned into text: %s", pocketllm_last_error())
                 : set_text(c, p, buf, need);
    free(buf);
    return ok;
}

static bool text_prompt(pctx *c, const cJSON *v, srv_prompt *p) {
    const char *s = NULL;
    if (!srv_want_string(c, v, "prompt", &s)) return false;
    size_t len = strlen(s);
    return set_text(c, p, s, len) && tokenize(c, s, len, true, p, "prompt");
}

bool srv_build_completion_prompts(pctx *c) {
    const cJSON *v = c->prompt;
    srv_request *r = c->r;
    size_t n = 1;
    bool list = false;
    if (cJSON_IsArray(v)) {
        if (!v->child) return srv_fail(c->e, 400, "prompt", "'prompt' may not be an empty array");
        if (cJSON_IsString(v->child) || cJSON_IsArray(v->child)) {
            list = true;
            n = (size_t)cJSON_GetArraySize(v);
        }
    } else if (!cJSON_IsString(v)) {
        return srv_fail(c->e, 400, "prompt", "'prompt' must be a string, an array of strings, an array of token ids or an "
                        "array of arrays of token ids");
    }
    if (n > SRV_MAX_CHOICES || n * r->n > SRV_MAX_CHOICES)
        return srv_fail(c->e, 400, "prompt", "%zu prompts x n=%u choices is more than %d", n, r->n, SRV_MAX_CHOICES);
    r->prompts = calloc(n, sizeof *r->prompts);
    if (!r->prompts) return srv_fail(c->e, 500, NULL, "out of memory");
    r->n_prompts = n;
    if (!list) return cJSON_IsString(v) ? text_prompt(c, v, &r->prompts[0]) : id_prompt(c, v, &r->prompts[0]);
    size_t i = 0;
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        if (cJSON_IsString(e) && cJSON_IsString(v->child)) {
            if (!text_prompt(c, e, &r->prompts[i])) return false;
        } else if (cJSON_IsArray(e) && cJSON_IsArray(v->child)) {
            if (!id_prompt(c, e, &r->prompts[i])) return false;
        } else {
            return srv_fail(c->e, 400, "prompt", "'prompt' mixes strings and token-id arrays");
        }
    }
    return true;
}

bool srv_build_chat_prompt(pctx *c) {
    if (!c->m->tmpl)
        return srv_fail(c->e, 400, "messages",
                        "this model has no chat template: use /v1/completions, or start the server with --template FILE");
    cJSON *arr = cJSON_CreateArray();
    if (!arr) return srv_fail(c->e, 500, NULL, "out of memory");
    size_t i = 0;
    for (const cJSON *msg = c->messages->child; msg; msg = msg->next, i++)
        if (!normalise_message(c, msg, i, arr)) {
            cJSON_Delete(arr);
            return false;
        }
    char *json = cJSON_PrintUnformatted(arr);
    cJSON_Delete(arr);
    char *vars = c->template_vars ? cJSON_PrintUnformatted(c->template_vars) : NULL;
    if (!json || (c->template_vars && !vars)) {
        free(json);
        free(vars);
        return srv_fail(c->e, 500, NULL, "out of memory");
    }
    pocketllm_chat_options o = pocketllm_chat_default_options();
    o.add_generation_prompt = 1;
    o.enable_thinking = c->enable_thinking;
    o.bos_token = c->m->bos_text;
    o.eos_token = c->m->eos_text;
    o.extra_json = vars;
    o.tools_json = c->r->tools_json; /* NULL unless tools are offered (tool_choice none: not shown) */
    char *text = NULL;
    size_t len = 0;
    pocketllm_status st = pocketllm_chat_render_json(c->m->tmpl, json, &o, &text, &len);
    free(json);
    free(vars);
    if (st) return srv_fail(c->e, 400, "messages", "the chat template refused the conversation: %s", pocketllm_last_error());
    srv_request *r = c->r;
    r->prompts = calloc(1, sizeof *r->prompts);
    if (!r->prompts) {
        pocketllm_chat_free(text);
        return srv_fail(c->e, 500, NULL, "out of memory");
    }
    r->n_prompts = 1;
    bool ok = set_text(c, &r->prompts[0], text, len);
    /* templates that write the BOS token themselves (Llama 3, Gemma...)
     * must not get a second one from the tokenizer */
    bool has_bos = c->m->bos_text && c->m->bos_text[0] && strncmp(text, c->m->bos_text, strlen(c->m->bos_text)) == 0;
    ok = ok && (c->n_media ? media_tokenize(c, text, len, !has_bos, &r->prompts[0])
                            : tokenize(c, text, len, !has_bos, &r->prompts[0], "messages"));
    pocketllm_chat_free(text);
    return ok;
}

/* Every prompt fits the context with room for the completion. */
bool srv_context_checks(pctx *c) {
    srv_request *r = c->r;
    const char *param = c->kind == SRV_CHAT ? "messages" : "prompt";
    for (size_t i = 0; i < r->n_prompts; i++) {
        const size_t n = r->prompts[i].n;
        if (n == 0) return srv_fail(c->e, 400, param, "the prompt has no tokens");
        if (n >= c->m->n_ctx)
            return srv_fail(c->e, 400, param,
                            "the prompt is %zu tokens; the context holds %u, with at least one left for the completion "
                            "(start the server with a larger --ctx)", n, c->m->n_ctx);
        if (r->max_tokens > 0 && n + (uint64_t)r->max_tokens > c->m->n_ctx)
            return srv_fail(c->e, 400, c->max_completion_tokens >= 0 ? "max_completion_tokens" : "max_tokens",
                            "the prompt is %zu tokens and %lld more were asked for; the context holds %u", n,
                            (long long)r->max_tokens, c->m->n_ctx);
    }
    return true;
}
