/*
 * srv_transcribe.c -- the fields of a transcription form checked one by
 * one (srv_transcribe.h), the language names, and the answer in each
 * response_format: json {"text"}, text, verbose_json (OpenAI's shape, with
 * a segment per transcribed piece), srt and vtt (one cue per piece).
 */
#include "srv_transcribe.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "srv_audio.h"
#include "srv_text.h"

/* ---- languages ------------------------------------------------------------- */

/* The 30 languages Qwen3-ASR transcribes (its model card), by ISO-639
 * code, with the name its prompt format uses ("language English<asr_text>"). */
static const struct { const char *code, *name; } LANGS[] = {
    {"zh", "Chinese"},    {"en", "English"},   {"yue", "Cantonese"}, {"ar", "Arabic"},     {"de", "German"},
    {"fr", "French"},     {"es", "Spanish"},   {"pt", "Portuguese"}, {"id", "Indonesian"}, {"it", "Italian"},
    {"ko", "Korean"},     {"ru", "Russian"},   {"th", "Thai"},       {"vi", "Vietnamese"}, {"ja", "Japanese"},
    {"tr", "Turkish"},    {"hi", "Hindi"},     {"ms", "Malay"},      {"nl", "Dutch"},      {"sv", "Swedish"},
    {"da", "Danish"},     {"fi", "Finnish"},   {"pl", "Polish"},     {"cs", "Czech"},      {"fil", "Filipino"},
    {"fa", "Persian"},    {"el", "Greek"},     {"ro", "Romanian"},   {"hu", "Hungarian"},  {"mk", "Macedonian"},
};

const char *srv_asr_language(const char *s) {
    for (size_t i = 0; i < sizeof LANGS / sizeof *LANGS; i++)
        if (strcasecmp(s, LANGS[i].code) == 0 || strcasecmp(s, LANGS[i].name) == 0) return LANGS[i].name;
    /* Tagalog is Filipino's ISO-639-1 code */
    if (strcasecmp(s, "tl") == 0) return "Filipino";
    return NULL;
}

/* ---- the fields ------------------------------------------------------------ */

/* A text field's value: valid UTF-8 without NUL bytes. */
static bool field_text(const srv_upload_part *p, const char **out, srv_error *e) {
    if (!srv_utf8_valid(p->data.p ? p->data.p : "", p->data.n))
        return srv_fail(e, 400, p->name, "the form field '%.60s' is not valid UTF-8 text", p->name);
    *out = p->data.p ? p->data.p : "";
    return true;
}

static bool f_language(srv_asr *a, const srv_upload_part *p, srv_error *e) {
    const char *v = NULL;
    if (!field_text(p, &v, e)) return false;
    if (!*v) return true; /* empty: the model says which */
    const char *name = srv_asr_language(v);
    if (!name)
        return srv_fail(e, 400, "language", "'language' '%.40s' is not one Qwen3-ASR transcribes (an ISO-639-1 code "
                        "such as en, zh, de, fr, ja, or the name, e.g. English)", v);
    snprintf(a->language, sizeof a->language, "%s", name);
    return true;
}

static bool f_prompt(srv_asr *a, const srv_upload_part *p, srv_error *e) {
    const char *v = NULL;
    if (!field_text(p, &v, e)) return false;
    if (!*v) return true;
    if (!(a->context = strdup(v))) return srv_fail(e, 500, NULL, "out of memory");
    return true;
}

static bool f_response_format(srv_asr *a, const srv_upload_part *p, srv_error *e) {
    static const char *const names[] = {"json", "text", "verbose_json", "srt", "vtt"};
    const char *v = NULL;
    if (!field_text(p, &v, e)) return false;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(v, names[i]) == 0) {
            a->format = (srv_asr_format)i;
            return true;
        }
    return srv_fail(e, 400, "response_format", "'response_format' '%.40s' is not one of json, text, verbose_json, srt, "
                    "vtt", v);
}

static bool f_temperature(srv_asr *a, const srv_upload_part *p, srv_error *e) {
    const char *v = NULL;
    if (!field_text(p, &v, e)) return false;
    char *end = NULL;
    const double d = *v ? strtod(v, &end) : NAN;
    if (!*v || *end || !isfinite(d))
        return srv_fail(e, 400, "temperature", "'temperature' must be a number between 0 and 1, not '%.40s'", v);
    if (d < 0 || d > 1)
        return srv_fail(e, 400, "temperature", "'temperature' is %g; it must be between 0 and 1", d);
    a->temperature = (float)d;
    return true;
}

static bool f_model(srv_asr *a, const srv_upload_part *p, srv_error *e) {
    (void)a;
    const char *v = NULL; /* any name: the one model served answers */
    return field_text(p, &v, e);
}

static bool f_granularities(srv_asr *a, const srv_upload_part *p, srv_error *e) {
    (void)a;
    const char *v = NULL;
    if (!field_text(p, &v, e)) return false;
    if (strcmp(v, "segment") != 0)
        return srv_fail(e, 400, p->name, "'timestamp_granularities[]' '%.40s' is not supported (only 'segment': a "
                        "segment per transcribed piece; no word timestamps)", v);
    return true;
}

static bool f_stream(srv_asr *a, const srv_upload_part *p, srv_error *e) {
    (void)a;
    const char *v = NULL;
    if (!field_text(p, &v, e)) return false;
    if (strcmp(v, "false") != 0)
        return srv_fail(e, 400, "stream", "'stream' '%.40s' is not supported: a transcription comes back whole", v);
    return true;
}

static bool f_file(srv_asr *a, const srv_upload_part *p, srv_error *e) {
    (void)a;
    (void)e;
    (void)p; /* decoded last, once every other field is known to be good */
    return true;
}

typedef bool (*field_fn)(srv_asr *a, const srv_upload_part *p, srv_error *e);
static const struct {
    const char *name;
    field_fn fn;
} FIELDS[] = {
    {"file", f_file},
    {"model", f_model},
    {"language", f_language},
    {"prompt", f_prompt},
    {"response_format", f_response_format},
    {"temperature", f_temperature},
    {"timestamp_granularities[]", f_granularities},
    {"timestamp_granularities", f_granularities},
    {"stream", f_stream},
};

bool srv_transcription_fields(const srv_upload *u, srv_asr *a, const srv_upload_part **file, srv_error *e) {
    *file = NULL;
    a->format = SRV_ASR_JSON;
    for (size_t i = 0; i < u->n_parts; i++) {
        const srv_upload_part *p = &u->parts[i];
        size_t k = 0;
        while (k < sizeof FIELDS / sizeof *FIELDS && strcmp(FIELDS[k].name, p->name) != 0) k++;
        if (k == sizeof FIELDS / sizeof *FIELDS)
            return srv_fail(e, 400, p->name, "unknown form field '%.60s' (see 'pocketllm serve --help')", p->name);
        if (!FIELDS[k].fn(a, p, e)) return false;
    }
    const srv_upload_part *f = srv_upload_find(u, "file");
    if (!f) return srv_fail(e, 400, "file", "the form has no 'file' field (the recording to transcribe)");
    if (f->data.n == 0) return srv_fail(e, 400, "file", "the 'file' field is empty (no audio)");
    *file = f;
    return true;
}

bool srv_transcription_parse(const srv_model *m, const srv_upload *u, srv_request *r, srv_error *e) {
    memset(r, 0, sizeof *r);
    memset(e, 0, sizeof *e);
    r->kind = SRV_TRANSCRIPTION;
    r->n = 1;
    srv_asr *a = calloc(1, sizeof *a);
    if (!a) return srv_fail(e, 500, NULL, "out of memory");
    r->asr = a;
    const srv_upload_part *file = NULL;
    bool ok = srv_transcription_fields(u, a, &file, e);
    ok = ok && srv_audio_tower_check(m, "file", e);
    ok = ok && srv_audio_decode("file", file->data.p, file->data.n, SRV_MAX_AUDIO_SECONDS, &a->audio, e);
    if (ok) a->seconds = pocketllm_audio_seconds(a->audio);
    if (!ok) srv_request_free(r);
    return ok;
}

/* ---- the answer ------------------------------------------------------------ */

/* A cJSON string of s made valid UTF-8. */
static cJSON *text_item(const char *s) {
    srv_buf b = {0};
    if (!srv_buf_add_utf8(&b, s ? s : "", s ? strlen(s) : 0) || !srv_buf_add(&b, "", 0)) {
        srv_buf_free(&b);
        return NULL;
    }
    cJSON *item = cJSON_CreateString(b.p);
    srv_buf_free(&b);
    return item;
}

static void add(cJSON *obj, const char *key, cJSON *item, bool *ok) {
    if (!item || !obj || !cJSON_AddItemToObject(obj, key, item)) {
        cJSON_Delete(item);
        *ok = false;
    }
}

/* OpenAI writes the language in lower case ("english"). */
static cJSON *language_item(const char *lang) {
    char low[32];
    size_t i = 0;
    for (; lang[i] && i + 1 < sizeof low; i++) low[i] = (char)(lang[i] >= 'A' && lang[i] <= 'Z' ? lang[i] - 'A' + 'a' : lang[i]);
    low[i] = '\0';
    return text_item(low);
}

static char *json_reply(const srv_request *r, const pocketllm_transcript *t) {
    const srv_asr *a = r->asr;
    bool ok = true;
    cJSON *root = cJSON_CreateObject();
    if (a->format == SRV_ASR_VERBOSE_JSON) {
        add(root, "task", cJSON_CreateString("transcribe"), &ok);
        add(root, "language", language_item(t->language), &ok);
        add(root, "duration", cJSON_CreateNumber(a->seconds), &ok);
    }
    add(root, "text", text_item(t->text), &ok);
    if (a->format == SRV_ASR_VERBOSE_JSON) {
        cJSON *segs = cJSON_CreateArray();
        for (size_t i = 0; segs && i < t->n_segments; i++) {
            const pocketllm_transcript_segment *sg = &t->segments[i];
            cJSON *o = cJSON_CreateObject();
            add(o, "id", cJSON_CreateNumber((double)i), &ok);
            /* where the piece starts, in 10 ms frames (as Whisper's seek) */
            add(o, "seek", cJSON_CreateNumber(floor(sg->start * 100 + 0.5)), &ok);
            add(o, "start", cJSON_CreateNumber(sg->start), &ok);
            add(o, "end", cJSON_CreateNumber(sg->end), &ok);
            add(o, "text", text_item(sg->text), &ok);
            add(o, "temperature", cJSON_CreateNumber(a->temperature), &ok);
            if (o) cJSON_AddItemToArray(segs, o);
            else ok = false;
        }
        add(root, "segments", segs, &ok);
    }
    cJSON *usage = cJSON_CreateObject();
    add(usage, "type", cJSON_CreateString("duration"), &ok);
    add(usage, "seconds", cJSON_CreateNumber(ceil(a->seconds)), &ok);
    add(root, "usage", usage, &ok);
    /* pieces whose generation hit the token bound (a repetition loop cut) */
    add(root, "cut_pieces", cJSON_CreateNumber(t->n_cut), &ok);
    char *s = ok ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    return s;
}

/* hh:mm:ss,mmm (srt) or hh:mm:ss.mmm (vtt) */
static void timestamp(srv_buf *b, double sec, char sep) {
    long long ms = (long long)floor(sec * 1000 + 0.5);
    if (ms < 0) ms = 0;
    srv_buf_printf(b, "%02lld:%02lld:%02lld%c%03lld", ms / 3600000, ms / 60000 % 60, ms / 1000 % 60, sep, ms % 1000);
}

static char *cues(const pocketllm_transcript *t, bool vtt, size_t *len) {
    srv_buf b = {0};
    srv_buf_add(&b, "", 0);
    if (vtt) srv_buf_str(&b, "WEBVTT\n\n");
    for (size_t i = 0; i < t->n_segments; i++) {
        const pocketllm_transcript_segment *sg = &t->segments[i];
        if (!vtt) srv_buf_printf(&b, "%zu\n", i + 1);
        timestamp(&b, sg->start, vtt ? '.' : ',');
        srv_buf_str(&b, " --> ");
        timestamp(&b, sg->end, vtt ? '.' : ',');
        srv_buf_str(&b, "\n");
        const char *s = sg->text ? sg->text : "";
        srv_buf_add_utf8(&b, s, strlen(s));
        srv_buf_str(&b, "\n\n");
    }
    if (b.oom) {
        srv_buf_free(&b);
        return NULL;
    }
    return srv_buf_take(&b, len);
}

bool srv_transcription_reply(const srv_request *r, const pocketllm_transcript *t, char **body, size_t *len,
                             const char **content_type) {
    *body = NULL;
    *len = 0;
    switch (r->asr->format) {
    case SRV_ASR_TEXT: {
        srv_buf b = {0};
        const char *s = t->text ? t->text : "";
        srv_buf_add(&b, "", 0);
        srv_buf_add_utf8(&b, s, strlen(s));
        if (b.oom) {
            srv_buf_free(&b);
            return false;
        }
        *body = srv_buf_take(&b, len);
        *content_type = "text/plain; charset=utf-8";
        break;
    }
    case SRV_ASR_SRT:
    case SRV_ASR_VTT:
        *body = cues(t, r->asr->format == SRV_ASR_VTT, len);
        *content_type = r->asr->format == SRV_ASR_VTT ? "text/vtt; charset=utf-8" : "application/x-subrip; charset=utf-8";
        break;
    default:
        *body = json_reply(r, t);
        if (*body) *len = strlen(*body);
        *content_type = "application/json";
        break;
    }
    return *body != NULL;
}
