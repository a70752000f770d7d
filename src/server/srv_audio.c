/*
 * srv_audio.c -- input_audio parts and uploaded files to decoded clips
 * (srv_audio.h): the tower check, the format names, strict base64 (the
 * image path's decoder, srv_image.h), and the decoder's refusals as 400s
 * naming the part.
 */
#include "srv_audio.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "srv_image.h"

bool srv_audio_tower_check(const srv_model *m, const char *part, srv_error *e) {
    if (!m->mm)
        return srv_fail(e, 400, part, "%s: this server takes no audio (start it with --mmproj FILE, a Qwen3-ASR "
                        "mmproj with an audio tower)", part);
    if (!m->has_audio)
        return srv_fail(e, 400, part, "%s: this server's --mmproj has no audio tower (it holds a vision tower only); "
                        "audio needs a Qwen3-ASR mmproj", part);
    return true;
}

bool srv_audio_decode(const char *part, const void *data, size_t len, double max_seconds, pocketllm_audio **out,
                      srv_error *e) {
    *out = NULL;
    if (len == 0) return srv_fail(e, 400, part, "%s: the audio is empty", part);
    pocketllm_audio *a = NULL;
    if (pocketllm_audio_decode(data, len, &a) != POCKETLLM_OK)
        return srv_fail(e, 400, part, "%s: not decodable audio (%s)", part, pocketllm_last_error());
    const double sec = pocketllm_audio_seconds(a);
    if (sec > max_seconds) {
        pocketllm_audio_free(a);
        return srv_fail(e, 400, part, "%s: the audio is %.1f s long; at most %.0f s (%.0f minutes, Qwen3-ASR's limit) "
                        "are taken", part, sec, max_seconds, max_seconds / 60);
    }
    *out = a;
    return true;
}

bool srv_audio_from_part(const srv_model *m, const cJSON *v, const char *part, double max_seconds,
                         pocketllm_audio **out, srv_error *e) {
    *out = NULL;
    if (!srv_audio_tower_check(m, part, e)) return false;
    if (!cJSON_IsObject(v)) return srv_fail(e, 400, part, "%s must be an object with 'data' and 'format'", part);
    const cJSON *data = NULL, *format = NULL;
    for (const cJSON *k = v->child; k; k = k->next) {
        if (strcmp(k->string, "data") == 0) data = k;
        else if (strcmp(k->string, "format") == 0) format = k;
        else return srv_fail(e, 400, part, "unknown field '%s.%.40s'", part, k->string);
    }
    if (!cJSON_IsString(data) || !data->valuestring)
        return srv_fail(e, 400, part, "%s.data must be a string (the file, base64-encoded)", part);
    if (!cJSON_IsString(format) || !format->valuestring)
        return srv_fail(e, 400, part, "%s.format must be a string (\"wav\" or \"mp3\")", part);
    bool known = false;
    char list[] = SRV_AUDIO_FORMATS;
    for (char *save = NULL, *f = strtok_r(list, ", ", &save); f && !known; f = strtok_r(NULL, ", ", &save))
        known = strcasecmp(f, format->valuestring) == 0;
    if (!known)
        return srv_fail(e, 400, part, "%s.format '%.40s' is not one of %s", part, format->valuestring, SRV_AUDIO_FORMATS);
    const size_t n = strlen(data->valuestring);
    if (n == 0) return srv_fail(e, 400, part, "%s.data is empty (no audio)", part);
    unsigned char *bytes = NULL;
    size_t len = 0;
    /* the body is already capped (--max-body) */
    if (!srv_base64_decode(data->valuestring, n, (size_t)1 << 30, &bytes, &len))
        return srv_fail(e, 400, part, "%s.data is not valid base64", part);
    char name[112];
    snprintf(name, sizeof name, "%s.data", part);
    bool ok = srv_audio_decode(name, bytes, len, max_seconds, out, e);
    free(bytes);
    return ok;
}
