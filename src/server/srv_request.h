/*
 * srv_request.h -- an OpenAI request as the engine will run it.  The
 * handler turns the raw body bytes into this without any network: parse
 * the JSON, check every field (type, range, what the engine can honour),
 * render the chat template, tokenize, check the context.  Anything wrong
 * gives an srv_error with the HTTP status and a message naming the field.
 *
 * Field by field, what is honoured and what is refused is listed in
 * SRV_FIELDS_HELP (shown by `pocketllm serve --help`).
 */
#ifndef PL_SRV_REQUEST_H
#define PL_SRV_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pocketllm.h"
#include "srv_model.h"

typedef enum srv_kind { SRV_CHAT, SRV_COMPLETION, SRV_TRANSCRIPTION } srv_kind;

#define SRV_MAX_CHOICES 16    /* prompts x n */
#define SRV_MAX_STOPS 16
#define SRV_MAX_STOP_LEN 256
#define SRV_MAX_TOP_LOGPROBS 20
#define SRV_MAX_LOGIT_BIAS 1024
#define SRV_MAX_IMAGES 32                       /* images in one request */
#define SRV_MAX_IMAGE_PIXELS ((uint64_t)64 << 20) /* their decoded pixels together (RGB: 3 bytes each) */
#define SRV_MAX_AUDIO 8                         /* input_audio parts in one request */
#define SRV_MAX_AUDIO_SECONDS 1200.0            /* their audio together, and one transcription's:
                                                 * Qwen3-ASR's documented 20 minutes */

typedef struct srv_error {
    int http;          /* 400, 401, 404, 405, 413, 500, 503 */
    const char *type;  /* OpenAI error type: "invalid_request_error", ... */
    char param[64];    /* the offending field, "" for none */
    char message[512];
} srv_error;

/* Fill an error (message printf-style); returns false, for `return srv_fail(...)`. */
bool srv_fail(srv_error *e, int http, const char *param, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

typedef struct srv_prompt {
    int32_t *ids;      /* with media: each image or audio token's cache row as -1 */
    size_t n;          /* cache rows the prompt takes (image tokens counted) */
    char *text;        /* the prompt as text (echo, the reasoning split); "" for id prompts;
                        * with images, one media marker where each one goes */
    size_t text_len;
    pocketllm_image **images; /* decoded at parse time (owned) */
    size_t n_images;
    pocketllm_audio **audios; /* input_audio clips, decoded at parse time (owned) */
    size_t n_audios;
    pocketllm_media *media;   /* the images and clips in marker order (views of the two above) */
    size_t n_media;
    bool add_special;  /* how the text is tokenized when media compose it */
} srv_prompt;

/* A transcription (POST /v1/audio/transcriptions, srv_transcribe.h). */
typedef enum srv_asr_format { SRV_ASR_JSON, SRV_ASR_TEXT, SRV_ASR_VERBOSE_JSON, SRV_ASR_SRT, SRV_ASR_VTT } srv_asr_format;
typedef struct srv_asr {
    pocketllm_audio *audio;  /* the uploaded file, decoded (owned) */
    double seconds;
    char language[32];       /* the name Qwen3-ASR is forced to ("English"); "" = the model says */
    char *context;           /* OpenAI's `prompt`, NULL when none */
    float temperature;       /* 0: greedy */
    srv_asr_format format;
} srv_asr;

typedef struct srv_request {
    srv_kind kind;
    srv_asr *asr;                  /* SRV_TRANSCRIPTION: what to transcribe (no prompts then) */
    bool stream, include_usage;
    uint32_t n;                    /* choices per prompt */
    int64_t max_tokens;            /* -1: until the context is full */
    pocketllm_sampler_params sp;   /* penalty_last_n -1: over the whole completion */
    bool seed_given;
    char **stop;                   /* n_stop strings, valid UTF-8, 1..SRV_MAX_STOP_LEN bytes */
    size_t n_stop;
    bool logprobs;                 /* return the chosen tokens' log-probabilities */
    int top_logprobs;              /* ... and this many alternatives */
    bool echo;                     /* completions: the prompt text before the completion */
    int32_t *bias_id;              /* logit_bias */
    float *bias;
    size_t n_bias;
    srv_prompt *prompts;
    size_t n_prompts;
    /* the shape of the reply (srv_constrain.c): the grammar every choice
     * starts from -- response_format, llama.cpp's grammar / json_schema
     * fields, or the tool calls tool_choice demands -- NULL for none */
    pocketllm_grammar *grammar;
    char *tools_json;              /* the tools offered (JSON array text), NULL for none */
    int tool_choice;               /* SRV_TOOL_CHOICE_* */
    bool parallel_tool_calls;
    /* the template's prompt opens the reply's first part (Functionary
     * v3.2's ">>>"): chat replies are parsed for their "all\n" text marker
     * even when no tools are offered (srv_reply_tools) */
    bool parse_replies;
} srv_request;

enum { SRV_TOOL_CHOICE_NONE, SRV_TOOL_CHOICE_AUTO, SRV_TOOL_CHOICE_REQUIRED, SRV_TOOL_CHOICE_NAMED };

/* The tools a chat reply is parsed against (JSON array text), NULL when
 * the reply is content as it stands. */
static inline const char *srv_reply_tools(const srv_request *r) {
    if (r->tool_choice != SRV_TOOL_CHOICE_NONE && r->tools_json) return r->tools_json;
    return r->parse_replies ? "[]" : NULL;
}

typedef struct srv_limits {
    uint32_t n_ctx;                /* positions one sequence may fill */
} srv_limits;

/* Parse, validate and prepare a request body for `kind`.  On success the
 * request owns its memory (srv_request_free); on failure nothing is left
 * allocated and e says why. */
bool srv_request_parse(const srv_model *m, srv_kind kind, const char *body, size_t len, srv_request *out,
                       srv_error *e);
void srv_request_free(srv_request *r);

/* The text `pocketllm serve --help` shows about the endpoints and the
 * request fields: what is honoured, what is accepted because it asks for
 * nothing, what is refused. */
#define SRV_FIELDS_HELP                                                                                       \
    "Endpoints: GET /health (no key needed), GET /v1/models, GET /v1/models/ID,\n"                            \
    "POST /v1/chat/completions, POST /v1/completions, POST /v1/embeddings, POST\n"                           \
    "/v1/audio/transcriptions (with an audio --mmproj), GET /metrics (with --metrics; no key\n"            \
    "needed).  Errors come as OpenAI-style JSON\n"                                                          \
    "({\"error\":{\"message\",\"type\",\"param\",\"code\"}}): 400 for a bad request (the message names\n"   \
    "the field), 401 without the key, 404, 405, 413 for a body over --max-body, 503 when the queue\n"       \
    "is full, 500 when the engine fails.\n\n"                                                                \
    "POST /v1/embeddings, as OpenAI's API (the vectors: the hidden states after the model's final\n"      \
    "norm, pooled by --pooling or the model's pooling_type, L2-normalised):\n"                             \
    "  input                  (required) a string, an array of strings, an array of token ids or an\n"    \
    "                         array of such arrays (at most 2048 inputs); text gets the BOS/EOS its\n"   \
    "                         vocabulary asks for, ids are used as given; an empty input, or one\n"     \
    "                         longer than --ctx, is a 400\n"                                            \
    "  encoding_format        float (default) or base64 (little-endian float32 bytes)\n"               \
    "  dimensions             1..the model's width: the first N floats, normalised after the cut\n"   \
    "  model, user            any string; other fields (also llama.cpp's embd_normalize): 400\n"        \
    "  Each input runs on a free sequence, one input per scheduler step between the others' steps.\n\n" \
    "POST /v1/audio/transcriptions takes a multipart/form-data form, as OpenAI's API:\n"                    \
    "  file                   (required) the recording: WAV, FLAC, MP3, Ogg/Vorbis/Opus, ... (what\n"      \
    "                         libsndfile reads), at most --max-upload-mb (413 past it) and 20 minutes\n"  \
    "  model                  any string\n"                                                               \
    "  language               an ISO-639-1 code (en, zh, de, ...) or a name (English) of the 30\n"       \
    "                         languages Qwen3-ASR knows: forces it; default: the model says which\n"     \
    "  prompt                 context given to Qwen3-ASR (names, terms) that biases the transcript\n"    \
    "  response_format        json (default: {\"text\"}), text, verbose_json (task, language,\n"          \
    "                         duration, text, segments: one per transcribed piece of at most 30 s,\n"   \
    "                         cut at quiet points, with id, seek, start, end, text, temperature), srt,\n" \
    "                         vtt (a cue per piece)\n"                                                   \
    "  temperature            0..1 (default 0: greedy)\n"                                               \
    "  timestamp_granularities[]  only \"segment\"; stream only false; other fields: 400\n"             \
    "  json and verbose_json add cut_pieces (pieces whose generation hit the bound of 64 + 16\n"         \
    "  tokens per second of audio: a repetition loop, cut); every format has the header\n"              \
    "  X-Transcript-Cut-Pieces.  A bad upload (no file, not audio, truncated, too large, a bad\n"       \
    "  field) is a 4xx naming the problem.\n\n"                                                           \
    "Request fields; any other field is refused with a 400 that names it:\n"                                 \
    "  model                  any string: the one model served answers, and responses name it\n"             \
    "  messages               (chat) roles system, developer (read as system), user, assistant, tool;\n"    \
    "                         content a string, null, or an array of parts: text parts, joined with\n"   \
    "                         newlines as llama-server joins them, and (with --mmproj) image parts\n"     \
    "                         {\"type\":\"image_url\",\"image_url\":{\"url\":U}}, any number in any message\n" \
    "                         (at most 32 in a request, 64 megapixels together).  U: a data: URL,\n"        \
    "                         data:image/png|jpeg|webp;base64,...; file:///PATH only inside\n"             \
    "                         --allow-image-path; http(s) URLs are refused (nothing is fetched).\n"       \
    "                         image_url.detail is accepted and ignored (the budget is --image-*-tokens);\n" \
    "                         a bad image is a 400 naming its part.  With an audio --mmproj, audio\n"   \
    "                         parts {\"type\":\"input_audio\",\"input_audio\":{\"data\":B64,\"format\":F}},\n" \
    "                         F wav or mp3, or flac, ogg, oga, opus, aiff, aif, au, caf, w64 (the decoder\n" \
    "                         reads the bytes whatever F says); at most 8 clips, 20 minutes together;\n" \
    "                         a bad clip is a 400 naming its part.\n"                                   \
    "                         name, tool_call_id, tool_calls (of earlier turns) and\n"                     \
    "                         reasoning_content go to the chat template\n"                                   \
    "  prompt                 (completions) a string, a list of strings, a list of token ids, or a\n"       \
    "                         list of such lists; prompts x n at most 16\n"                                  \
    "  stream                 server-sent events, ending with \"data: [DONE]\"\n"                             \
    "  stream_options         {\"include_usage\": true} adds a last chunk with the token counts\n"           \
    "  max_tokens, max_completion_tokens   1..16777216 (default: until the context is full); a\n"        \
    "                         prompt plus max_tokens longer than --ctx is refused\n"                        \
    "  temperature            0..2 (default 1; 0 is greedy: the most likely token every time)\n"          \
    "  top_p                  0..1 (default 1 = off)\n"                                                      \
    "  top_k, min_p           llama.cpp's extensions: 0.. and 0..1 (default off)\n"                        \
    "  repeat_penalty         llama.cpp's extension, 0.01..100 (default 1 = off)\n"                         \
    "  presence_penalty, frequency_penalty   -2..2, over the completion's own tokens\n"                     \
    "  seed                   an integer (|seed| <= 2^53); choice k of a prompt samples with seed + k\n"   \
    "  stop                   a string or a list of up to 16, each 1..256 bytes: generation ends\n"       \
    "                         before one, and no part of it is ever sent, streamed or not\n"               \
    "  n                      1..16 choices, each its own sequence\n"                                         \
    "  logprobs, top_logprobs chat: true and 0..20; completions: logprobs 0..20 -- log-probabilities\n"    \
    "                         of the model's distribution (with logit_bias, before the sampling steps)\n"  \
    "  logit_bias             {\"TOKEN_ID\": -100..100, ...} (at most 1024) added to the logits\n"           \
    "  echo                   (completions) the prompt before the completion (not with logprobs)\n"         \
    "  best_of                (completions) only equal to n: every choice is returned\n"                    \
    "  chat_template_kwargs   (chat) more template variables, e.g. {\"enable_thinking\": false}\n"          \
    "  user                   accepted; it changes nothing\n"                                                \
    "  tools                  (chat) [{\"type\":\"function\",\"function\":{\"name\",\"description\",\n"   \
    "                         \"parameters\": a JSON schema}}], at most 128: shown to the model through\n"   \
    "                         its chat template; calls in the template's own format (Qwen3's\n"            \
    "                         <tool_call> JSON, Qwen3-Coder's XML, Llama 3's JSON, Mistral, Granite,\n"    \
    "                         DeepSeek, GLM, Kimi, ... read from the template) come back as\n"            \
    "                         message.tool_calls (content null when nothing else was said) with\n"        \
    "                         finish_reason \"tool_calls\"; streamed, each call's first delta has its\n"  \
    "                         index, id, type and name, later ones argument fragments.  A template\n"   \
    "                         without tools, or in a format not read, is a 400.  A botched call\n"     \
    "                         comes back as text with finish_reason \"stop\"\n"                          \
    "  tool_choice            \"auto\" (default with tools: a call, once the model opens one, is held\n" \
    "                         to the tools' names and parameter schemas), \"required\" (a call from the\n" \
    "                         first token), {\"type\":\"function\",\"function\":{\"name\":N}} (a call to N),\n" \
    "                         \"none\" (no tools shown, no calls): enforced by constraining the tokens\n" \
    "  parallel_tool_calls    true (default): one or more calls; false: one\n"                           \
    "  response_format        (chat) {\"type\":\"text\"}; {\"type\":\"json_object\"} (any JSON object);\n"   \
    "                         {\"type\":\"json_schema\",\"json_schema\":{\"name\",\"schema\",\"strict\"}}: the\n"  \
    "                         content is JSON valid for the schema (strict or not).  The compiler takes\n" \
    "                         type, properties, required, additionalProperties, items, prefixItems,\n"  \
    "                         min/maxItems, enum, const, anyOf, oneOf (as anyOf), allOf (merged), $ref\n" \
    "                         and $defs (recursive too), min/maxLength, pattern, format (date, time,\n" \
    "                         date-time, uuid, email), minimum/maximum and their exclusive forms;\n"   \
    "                         any other keyword is a 400 that names it and where it is\n"             \
    "  grammar                llama.cpp's field: a GBNF grammar (start rule root) the text must match\n" \
    "  json_schema            llama.cpp's field: a JSON schema, as response_format's\n"                  \
    "                         (one of response_format json, grammar and json_schema; not with tools).\n" \
    "                         Under any of them a token is taken only if the text can still be\n"      \
    "                         completed within max_tokens, so a reply ends whole, not cut; a think\n"  \
    "                         block before the constrained text stays free\n"                        \
    "  service_tier \"auto\"/\"default\", modalities [\"text\"], store false, suffix \"\"\n"                    \
    "                         accepted: with these values they ask for nothing else\n"                       \
    "  refused (400): functions and function_call (the old names of tools), store true, metadata,\n"   \
    "  reasoning_effort, audio, prediction, web_search_options, verbosity, prompt_cache_key,\n"         \
    "  safety_identifier, stream_options.include_obfuscation true, suffix text, echo with logprobs.\n"  \
    "A reply's <think>...</think> block (Qwen3 and kin) comes back as reasoning_content, streamed\n"        \
    "or not; the rest as content.  usage counts the prompt tokens once per prompt and every\n"             \
    "generated token (the end-of-generation token included).\n"

#endif
