/*
 * srv_audio.h -- the audio of a request: an OpenAI input_audio content
 * part ({"data": BASE64, "format": "wav"|"mp3"|...}) or an uploaded file
 * (POST /v1/audio/transcriptions) turned into a decoded clip (mono, 16
 * kHz: pocketllm_audio_decode), under the server's rules -- strict base64,
 * a known format name, a clip that decodes, the length Qwen3-ASR takes, an
 * mmproj with an audio tower.  Every refusal is a 400 whose message starts
 * with the part's name, decided while the request is parsed, before any
 * sequence is touched.  (srv_image.h is the same for images.)
 */
#ifndef PL_SRV_AUDIO_H
#define PL_SRV_AUDIO_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "pocketllm.h"
#include "srv_model.h"
#include "srv_request.h"

/* The format names an input_audio part may give: OpenAI's "wav" and "mp3",
 * and the other containers the decoder (libsndfile) reads.  The decoder
 * goes by the bytes, so the name is checked against this list only. */
#define SRV_AUDIO_FORMATS "wav, mp3, flac, ogg, oga, opus, aiff, aif, au, caf, w64"

/* true when the server's mmproj holds an audio tower; otherwise e is a 400
 * naming `part` (no --mmproj, or one with a vision tower only). */
bool srv_audio_tower_check(const srv_model *m, const char *part, srv_error *e);

/* Decode len bytes of a recording; `part` begins every error message.  A
 * clip over max_seconds is refused (400). */
bool srv_audio_decode(const char *part, const void *data, size_t len, double max_seconds, pocketllm_audio **out,
                      srv_error *e);

/* The clip of an input_audio part's "input_audio" object `v`. */
bool srv_audio_from_part(const srv_model *m, const cJSON *v, const char *part, double max_seconds,
                         pocketllm_audio **out, srv_error *e);

#endif
