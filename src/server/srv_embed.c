/*
 * srv_embed.c -- the embeddings request of srv_embed.h: its fields
 * (input, model, encoding_format, dimensions, user; anything else is a
 * 400 naming it), its inputs tokenized as llama-server tokenizes them
 * (add_special and parse_special: the BOS/EOS the vocabulary asks for),
 * one input's vector per scheduler step, and the response JSON.
 */
#include "srv_embed.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "srv_text.h"

void srv_embd_free(srv_embd *em) {
    if (!em) return;
    for (size_t i = 0; em->ids && i < em->n_inputs; i++) free(em->ids[i]);
    free(em->ids);
    free(em->n_ids);
    free(em->vec);
    free(em->work);
    free(em);
}

/* ---- parsing ---------------------------------------------------------------------- */

typedef struct ectx {
    const srv_model *m;
    srv_embd *em;
    srv_error *e;
} ectx;

/* Input i as token ids: a JSON array of integers in the vocabulary. */
static bool id_input(ectx *c, const cJSON *arr, size_t i) {
    const int n = cJSON_GetArraySize(arr);
    if (n <= 0) return srv_fail(c->e, 400, "input", "input %zu is an empty array of token ids", i);
    if ((uint32_t)n > c->m->n_ctx)
        return srv_fail(c->e, 400, "input", "input %zu is %d tokens; the context holds %u (start the server with a larger "
                        "--ctx)", i, n, c->m->n_ctx);
    int32_t *ids = malloc((size_t)n * sizeof *ids);
    if (!ids) return srv_fail(c->e, 500, NULL, "out of memory");
    c->em->ids[i] = ids;
    size_t k = 0;
    for (const cJSON *v = arr->child; v; v = v->next, k++) {
        const double d = cJSON_IsNumber(v) ? v->valuedouble : -1.0;
        if (!cJSON_IsNumber(v) || !isfinite(d) || d != floor(d) || d < 0 || d >= (double)c->m->n_vocab)
            return srv_fail(c->e, 400, "input", "input %zu, element %zu: a token id must be an integer 0..%d", i, k,
                            c->m->n_vocab - 1);
        ids[k] = (int32_t)d;
    }
    c->em->n_ids[i] = k;
    return true;
}

/* Input i as text, tokenized with the vocabulary's BOS/EOS and special
 * tokens recognised (llama-server's tokenize_input_prompts). */
static bool text_input(ectx *c, const cJSON *v, size_t i) {
    const char *s = v->valuestring;
    const size_t len = s ? strlen(s) : 0;
    if (!len) return srv_fail(c->e, 400, "input", "input %zu is an empty string", i);
    if (!srv_utf8_valid(s, len)) return srv_fail(c->e, 400, "input", "input %zu is not valid UTF-8", i);
    /* room for one id more than the context: a longer input is refused
     * from the count alone */
    size_t cap = (size_t)c->m->n_ctx + 1, need = 0;
    int32_t *ids = malloc(cap * sizeof *ids);
    if (!ids) return srv_fail(c->e, 500, NULL, "out of memory");
    c->em->ids[i] = ids;
    pocketllm_status st = pocketllm_tokenize(c->m->model, s, len, 1, 1, ids, cap, &need);
    if (st == POCKETLLM_ERR_INVALID_ARGUMENT && need > cap)
        return srv_fail(c->e, 400, "input", "input %zu is %zu tokens; the context holds %u (start the server with a "
                        "larger --ctx)", i, need, c->m->n_ctx);
    if (st) return srv_fail(c->e, 400, "input", "input %zu cannot be tokenized: %s", i, pocketllm_last_error());
    if (need > c->m->n_ctx)
        return srv_fail(c->e, 400, "input", "input %zu is %zu tokens; the context holds %u (start the server with a "
                        "larger --ctx)", i, need, c->m->n_ctx);
    if (!need) return srv_fail(c->e, 400, "input", "input %zu has no tokens", i);
    c->em->n_ids[i] = need;
    return true;
}

static bool parse_input(ectx *c, const cJSON *v) {
    srv_embd *em = c->em;
    size_t n = 1;
    /* a string; an array of strings; an array of ids; an array of arrays of ids */
    enum { ONE_TEXT, ONE_IDS, TEXTS, ID_LISTS } form;
    if (cJSON_IsString(v)) {
        form = ONE_TEXT;
    } else if (cJSON_IsArray(v)) {
        if (!v->child) return srv_fail(c->e, 400, "input", "'input' may not be an empty array");
        if (!cJSON_IsString(v->child) && !cJSON_IsArray(v->child) && !cJSON_IsNumber(v->child))
            return srv_fail(c->e, 400, "input", "'input' must be a string, an array of strings, an array of token ids "
                            "or an array of arrays of token ids");
        form = cJSON_IsString(v->child) ? TEXTS : cJSON_IsArray(v->child) ? ID_LISTS : ONE_IDS;
        if (form != ONE_IDS) n = (size_t)cJSON_GetArraySize(v);
    } else {
        return srv_fail(c->e, 400, "input", "'input' must be a string, an array of strings, an array of token ids or an "
                        "array of arrays of token ids");
    }
    if (n > SRV_MAX_EMBED_INPUTS)
        return srv_fail(c->e, 400, "input", "%zu inputs; at most %d in one request", n, SRV_MAX_EMBED_INPUTS);
    em->ids = calloc(n, sizeof *em->ids);
    em->n_ids = calloc(n, sizeof *em->n_ids);
    if (!em->ids || !em->n_ids) return srv_fail(c->e, 500, NULL, "out of memory");
    em->n_inputs = n;
    if (form == ONE_TEXT) return text_input(c, v, 0);
    if (form == ONE_IDS) return id_input(c, v, 0);
    size_t i = 0;
    for (const cJSON *x = v->child; x; x = x->next, i++) {
        if (form == TEXTS && cJSON_IsString(x)) {
            if (!text_input(c, x, i)) return false;
        } else if (form == ID_LISTS && cJSON_IsArray(x)) {
            if (!id_input(c, x, i)) return false;
        } else {
            return srv_fail(c->e, 400, "input", "'input' mixes kinds: input %zu is not %s like input 0", i,
                            form == TEXTS ? "a string" : "an array of token ids");
        }
    }
    return true;
}

static bool parse_field(ectx *c, const cJSON *v, const cJSON **input) {
    const char *k = v->string;
    if (!strcmp(k, "input")) {
        *input = v;
    } else if (!strcmp(k, "model") || !strcmp(k, "user")) {
        /* any string: the one model answers; user asks for nothing */
        if (!cJSON_IsString(v) && !cJSON_IsNull(v)) return srv_fail(c->e, 400, k, "'%s' must be a string", k);
    } else if (!strcmp(k, "encoding_format")) {
        if (cJSON_IsNull(v)) return true;
        if (!cJSON_IsString(v) || (strcmp(v->valuestring, "float") && strcmp(v->valuestring, "base64")))
            return srv_fail(c->e, 400, k, "'encoding_format' must be \"float\" or \"base64\"");
        c->em->base64 = !strcmp(v->valuestring, "base64");
    } else if (!strcmp(k, "dimensions")) {
        if (cJSON_IsNull(v)) return true;
        const double d = cJSON_IsNumber(v) ? v->valuedouble : 0;
        if (!cJSON_IsNumber(v) || !isfinite(d) || d != floor(d) || d < 1 || d > c->em->n_embd)
            return srv_fail(c->e, 400, k, "'dimensions' must be an integer 1..%u (the model's embedding width)",
                            c->em->n_embd);
        c->em->dims = (uint32_t)d;
    } else {
        return srv_fail(c->e, 400, k, "unknown field '%.60s' (see 'pocketllm serve --help')", k);
    }
    return true;
}

static const char *pooling_word(int32_t p) {
    return p == POCKETLLM_POOLING_MEAN ? "mean" : p == POCKETLLM_POOLING_CLS ? "cls" : p == POCKETLLM_POOLING_LAST ? "last" : NULL;
}

static bool parse_body(ectx *c, const char *body, size_t len) {
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(body, len, &end, 0);
    bool ok = true;
    if (!root) {
        const size_t at = end && end >= body && end <= body + len ? (size_t)(end - body) : 0;
        ok = srv_fail(c->e, 400, NULL, "the body is not valid JSON (at byte %zu)", at);
    } else if (!cJSON_IsObject(root)) {
        ok = srv_fail(c->e, 400, NULL, "the body must be a JSON object");
    } else {
        for (const char *p = end; p && p < body + len; p++)
            if (*p != ' ' && *p != '\t' && *p != '\r' && *p != '\n') {
                ok = srv_fail(c->e, 400, NULL, "the body has bytes after its JSON value");
                break;
            }
        const cJSON *input = NULL;
        for (const cJSON *v = root->child; ok && v; v = v->next) {
            for (const cJSON *w = root->child; ok && w != v; w = w->next)
                if (!strcmp(w->string, v->string)) ok = srv_fail(c->e, 400, v->string, "field '%s' is given twice", v->string);
            ok = ok && parse_field(c, v, &input);
        }
        if (ok && (!input || cJSON_IsNull(input))) ok = srv_fail(c->e, 400, "input", "'input' is required");
        ok = ok && parse_input(c, input);
    }
    cJSON_Delete(root);
    return ok;
}

bool srv_embd_parse(const srv_model *m, int32_t pooling, const char *body, size_t len, srv_embd **out, srv_error *e) {
    *out = NULL;
    memset(e, 0, sizeof *e);
    if (!pooling_word(pooling))
        return srv_fail(e, 400, NULL, "this server pools no embeddings: its model declares %s (%s.pooling_type), and "
                        "/v1/embeddings returns one vector per input; start it with --pooling mean, cls or last",
                        pooling == POCKETLLM_POOLING_NONE ? "no pooling" : "a pooling it cannot compute",
                        pocketllm_model_arch(m->model));
    srv_embd *em = calloc(1, sizeof *em);
    if (!em) return srv_fail(e, 500, NULL, "out of memory");
    em->pooling = pooling;
    em->n_embd = (uint32_t)pocketllm_model_n_embd(m->model);
    em->dims = em->n_embd;
    ectx c = {m, em, e};
    bool ok = em->n_embd > 0 ? parse_body(&c, body, len)
                             : srv_fail(e, 400, NULL, "the model was opened without weights: it embeds nothing");
    if (ok) {
        for (size_t i = 0; i < em->n_inputs; i++) em->n_tokens += em->n_ids[i];
        em->vec = malloc(em->n_inputs * em->dims * sizeof *em->vec);
        em->work = malloc(em->n_embd * sizeof *em->work);
        if (!em->vec || !em->work) ok = srv_fail(e, 500, NULL, "out of memory");
    }
    if (!ok) {
        srv_embd_free(em);
        return false;
    }
    *out = em;
    return true;
}

/* ---- the work --------------------------------------------------------------------- */

int srv_embd_step(srv_embd *em, pocketllm_session *sess, uint32_t seq, char *msg, size_t cap, size_t *tokens) {
    *tokens = 0;
    if (em->n_done >= em->n_inputs) return 1;
    const size_t i = em->n_done;
    /* raw: `dimensions` truncates before the vector is normalised */
    if (pocketllm_embed(sess, seq, em->ids[i], em->n_ids[i], em->pooling, 0, em->work, em->n_embd)) {
        snprintf(msg, cap, "embedding input %zu failed: %s", i, pocketllm_last_error());
        return -1;
    }
    *tokens = em->n_ids[i];
    float *v = em->vec + i * em->dims;
    double sum = 0.0;
    for (uint32_t k = 0; k < em->dims; k++) sum += (double)em->work[k] * (double)em->work[k];
    if (!isfinite(sum)) {
        snprintf(msg, cap, "input %zu: the model's hidden state is not finite", i);
        return -1;
    }
    /* L2, as llama-server's default embd_normalize (2); a zero vector stays zero */
    const double norm = sum > 0.0 ? 1.0 / sqrt(sum) : 0.0;
    for (uint32_t k = 0; k < em->dims; k++) v[k] = (float)((double)em->work[k] * norm);
    em->n_done++;
    return em->n_done == em->n_inputs;
}

/* ---- the response ----------------------------------------------------------------- */

/* The floats' little-endian float32 bytes in base64 (as OpenAI sends them). */
static void add_base64(srv_buf *b, const float *v, size_t n) {
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    uint8_t bytes[3];
    size_t have = 0;
    char quad[4];
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &v[i], 4);
        for (int k = 0; k < 4; k++) {
            bytes[have++] = (uint8_t)(u >> (8 * k));
            if (have == 3) {
                quad[0] = abc[bytes[0] >> 2];
                quad[1] = abc[((bytes[0] & 3) << 4) | (bytes[1] >> 4)];
                quad[2] = abc[((bytes[1] & 15) << 2) | (bytes[2] >> 6)];
                quad[3] = abc[bytes[2] & 63];
                srv_buf_add(b, quad, 4);
                have = 0;
            }
        }
    }
    if (have) {
        if (have == 1) bytes[1] = 0;
        quad[0] = abc[bytes[0] >> 2];
        quad[1] = abc[((bytes[0] & 3) << 4) | (bytes[1] >> 4)];
        quad[2] = have == 2 ? abc[(bytes[1] & 15) << 2] : '=';
        quad[3] = '=';
        srv_buf_add(b, quad, 4);
    }
}

char *srv_embd_reply(const srv_embd *em, const char *model_id) {
    /* the name through cJSON, for its escapes */
    cJSON *name = cJSON_CreateString(model_id);
    char *quoted = name ? cJSON_PrintUnformatted(name) : NULL;
    cJSON_Delete(name);
    if (!quoted) return NULL;
    srv_buf b = {0};
    srv_buf_str(&b, "{\"object\":\"list\",\"data\":[");
    for (size_t i = 0; i < em->n_inputs && !b.oom; i++) {
        srv_buf_printf(&b, "%s{\"object\":\"embedding\",\"index\":%zu,\"embedding\":", i ? "," : "", i);
        const float *v = em->vec + i * em->dims;
        if (em->base64) {
            srv_buf_str(&b, "\"");
            add_base64(&b, v, em->dims);
            srv_buf_str(&b, "\"}");
        } else {
            srv_buf_str(&b, "[");
            /* %.9g: every float32 comes back exactly */
            for (uint32_t k = 0; k < em->dims; k++) srv_buf_printf(&b, "%s%.9g", k ? "," : "", (double)v[k]);
            srv_buf_str(&b, "]}");
        }
    }
    srv_buf_printf(&b, "],\"model\":%s,\"usage\":{\"prompt_tokens\":%llu,\"total_tokens\":%llu}}", quoted,
                   (unsigned long long)em->n_tokens, (unsigned long long)em->n_tokens);
    free(quoted);
    return b.oom ? (srv_buf_free(&b), NULL) : srv_buf_take(&b, NULL);
}
