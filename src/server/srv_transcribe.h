/*
 * srv_transcribe.h -- POST /v1/audio/transcriptions as OpenAI's API has it:
 * the fields of a multipart form (srv_upload.h) checked into a
 * transcription request (srv_request with kind SRV_TRANSCRIPTION), and the
 * transcript written back in the format asked for.
 *
 * Fields: file (required: the recording; any format the decoder reads),
 * model (any string), language (an ISO-639-1 code or a language name of
 * Qwen3-ASR's; forces the language), prompt (the context Qwen3-ASR is
 * given, which biases the transcript), response_format (json, text,
 * verbose_json, srt, vtt), temperature (0..1; 0, the default, is greedy),
 * timestamp_granularities[] (segment only), stream (false only).  Any other
 * field, or a value of the wrong type, is a 400 naming it.
 */
#ifndef PL_SRV_TRANSCRIBE_H
#define PL_SRV_TRANSCRIBE_H

#include <stdbool.h>
#include <stddef.h>

#include "pocketllm.h"
#include "srv_model.h"
#include "srv_request.h"
#include "srv_upload.h"

/* The request of a complete upload (srv_upload_end said yes): every field
 * checked, the audio tower there, the file decoded.  On failure nothing is
 * left allocated and e says why (a 4xx). */
bool srv_transcription_parse(const srv_model *m, const srv_upload *u, srv_request *out, srv_error *e);

/* The first half of srv_transcription_parse: the fields other than the
 * file checked into a (its context and audio left for the caller to free),
 * and the file part found, not empty.  The fuzz target runs it alone. */
bool srv_transcription_fields(const srv_upload *u, srv_asr *a, const srv_upload_part **file, srv_error *e);

/* The answer to a finished transcription in r's format: *body (malloc'd,
 * *len bytes) and its Content-Type.  false when out of memory. */
bool srv_transcription_reply(const srv_request *r, const pocketllm_transcript *t, char **body, size_t *len,
                             const char **content_type);

/* The Qwen3-ASR language name for an ISO-639-1 code or a name (any case);
 * NULL when it is not one of the languages Qwen3-ASR knows. */
const char *srv_asr_language(const char *code_or_name);

#endif
