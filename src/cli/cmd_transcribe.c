/*
 * cmd_transcribe.c -- `pocketllm transcribe`: a recording to its transcript
 * with a Qwen3-ASR pair (text model + qwen3a mmproj), through
 * pocketllm_transcribe: the file decoded to mono 16 kHz, long recordings
 * cut at quiet points into pieces of at most 30 s, each piece transcribed
 * (greedy unless --temperature), the texts joined.  Prints the transcript,
 * or with --json one object (text, language, duration, segments, cut
 * pieces, tokens); progress of a long file on stderr.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

#define CMD "transcribe"

const char cmd_transcribe_usage[] =
    "usage: pocketllm transcribe --model M --mmproj P FILE [--language L] [--prompt TEXT] [--json]\n"
    "                            [-t N] [--temperature T] [--seed N] [--ctx N]\n"
    "                            [--device D] [--device-memory S]\n\n"
    "Transcribe a recording with a Qwen3-ASR model: M the text model, P its mmproj (the audio\n"
    "tower).  FILE is decoded (WAV, FLAC, MP3, Ogg/Vorbis: what libsndfile reads), mixed to mono\n"
    "and resampled to 16 kHz.  The request is Qwen3-ASR's own (the model's chat template: the\n"
    "context as the system turn, the audio as the user turn); the model answers \"language\n"
    "X<asr_text>the words\" and the words are printed.  A recording over 30 s is cut at quiet\n"
    "points (the quietest 100 ms in the last 5 s before each 30 s limit) into pieces transcribed\n"
    "one by one and joined with a space; progress goes to stderr.  Over 20 minutes (Qwen3-ASR's\n"
    "limit) is refused.  A piece stops at <|im_end|> or after 64 + 16 tokens per second of its\n"
    "audio (a bound against repetition loops; --json counts such pieces as cut).\n\n"
    "  --model M, -m M    the Qwen3-ASR text model (GGUF, arch qwen3vl)\n"
    "  --mmproj P         its mmproj (projector qwen3a)\n"
    "  --language L       the language to write (\"English\", \"German\", ...): the prompt ends\n"
    "                     with it and the model writes only the words; default: the model says\n"
    "  --prompt TEXT      context that biases the transcript (names, terms; OpenAI's prompt)\n"
    "  --json             print one JSON object: text, language, duration (s), segments\n"
    "                     (start, end, text per piece), cut_pieces, tokens\n"
    "  -t N, --threads N  CPU threads\n"
    "  --temperature T    0 (default): greedy; above 0: sampled (top-k 40, top-p 0.95,\n"
    "                     min-p 0.05) with --seed\n"
    "  --seed N           the sampler's seed (default 0)\n"
    "  --ctx N            context positions (default 4096: a piece's prompt, its audio tokens\n"
    "                     and the generation bound fit)\n" CLI_DEVICE_HELP;

typedef struct tr_opts {
    const char *model, *mmproj, *file, *language, *context;
    bool json;
    int64_t n_threads, n_ctx;
    double temperature;
    uint64_t seed;
    cli_device device;
} tr_opts;

static int parse(int argc, char **argv, tr_opts *o) {
    memset(o, 0, sizeof *o);
    o->n_ctx = 4096;
    const char *v, *err = NULL;
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        int64_t n;
        double d;
        if (cli_opt(argc, argv, &i, "--model", &v, &err) || cli_opt(argc, argv, &i, "-m", &v, &err)) {
            if (err) break;
            o->model = v;
        } else if (cli_opt(argc, argv, &i, "--mmproj", &v, &err)) {
            if (err) break;
            o->mmproj = v;
        } else if (cli_opt(argc, argv, &i, "--language", &v, &err)) {
            if (err) break;
            if (!*v) return cli_usage(CMD, "--language wants a language name such as English");
            o->language = v;
        } else if (cli_opt(argc, argv, &i, "--prompt", &v, &err) || cli_opt(argc, argv, &i, "-p", &v, &err)) {
            if (err) break;
            o->context = v;
        } else if (cli_opt(argc, argv, &i, "-t", &v, &err) || cli_opt(argc, argv, &i, "--threads", &v, &err)) {
            if (err) break;
            if (!cli_parse_i64(v, 1, 1024, &n)) return cli_usage(CMD, "-t wants a thread count 1..1024, not '%s'", v);
            o->n_threads = n;
        } else if (cli_opt(argc, argv, &i, "--ctx", &v, &err) || cli_opt(argc, argv, &i, "-c", &v, &err)) {
            if (err) break;
            if (!cli_parse_i64(v, 64, 1 << 24, &n)) return cli_usage(CMD, "--ctx wants a position count 64..16777216, not '%s'", v);
            o->n_ctx = n;
        } else if (cli_opt(argc, argv, &i, "--temperature", &v, &err) || cli_opt(argc, argv, &i, "--temp", &v, &err)) {
            if (err) break;
            if (!cli_parse_f64(v, 0, 100, &d)) return cli_usage(CMD, "--temperature wants a number 0..100, not '%s'", v);
            o->temperature = d;
        } else if (cli_opt(argc, argv, &i, "--seed", &v, &err)) {
            if (err) break;
            if (!cli_parse_i64(v, 0, INT64_MAX, &n)) return cli_usage(CMD, "--seed wants a number >= 0, not '%s'", v);
            o->seed = (uint64_t)n;
        } else if (cli_opt_device(argc, argv, &i, CMD, &o->device, &rc)) {
            if (rc) return rc;
        } else if (!strcmp(argv[i], "--json")) {
            o->json = true;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_usage(CMD, "unknown option '%s'", argv[i]);
        } else {
            if (o->file) return cli_usage(CMD, "one recording at a time ('%s' and '%s')", o->file, argv[i]);
            o->file = argv[i];
        }
    }
    if (err) return cli_usage(CMD, "an option %s", err);
    if (!o->model) return cli_usage(CMD, "needs --model M (a Qwen3-ASR text model)");
    if (!o->mmproj) return cli_usage(CMD, "needs --mmproj P (the Qwen3-ASR audio tower)");
    if (!o->file) return cli_usage(CMD, "needs the recording: FILE");
    return 0;
}

static void progress(void *user, double done, double total) {
    (void)user;
    if (total > 30.0) fprintf(stderr, "transcribe: %.1f / %.1f s\n", done, total);
}

static cJSON *json_text(const char *s) {
    char *clean = cli_utf8_clean(s, strlen(s));
    cJSON *j = cJSON_CreateString(clean ? clean : "");
    free(clean);
    return j;
}

/* Whether the mmproj file holds an audio tower (clip.has_audio_encoder),
 * asked before the model loads so that a vision-only mmproj gets this
 * reason rather than a width mismatch; 0, or the exit code. */
static int check_audio_tower(const char *path) {
    pocketllm_gguf *g;
    if (pocketllm_gguf_open(path, &g)) return cli_error(CMD, "%s: %s", path, pocketllm_last_error());
    const pocketllm_gguf_value *v = pocketllm_gguf_find(g, "clip.has_audio_encoder");
    const pocketllm_gguf_value *pt = pocketllm_gguf_find(g, "clip.projector_type");
    uint64_t u = 0, n = 0;
    const bool audio = v && !pocketllm_gguf_value_u64(v, &u) && u != 0;
    const char *proj = pt ? pocketllm_gguf_value_str(pt, &n) : NULL;
    int rc = 0;
    if (!audio)
        rc = cli_error(CMD, "%s has no audio tower (projector %.*s): transcription needs a Qwen3-ASR mmproj", path,
                       proj ? (int)n : 1, proj ? proj : "?");
    pocketllm_gguf_close(g);
    return rc;
}

static int print_json(const pocketllm_transcript *t, double duration) {
    cJSON *o = cJSON_CreateObject(), *segs = cJSON_CreateArray();
    if (!o || !segs) {
        cJSON_Delete(o);
        cJSON_Delete(segs);
        return cli_lib_error(CMD, POCKETLLM_ERR_NO_MEMORY);
    }
    cJSON_AddItemToObject(o, "text", json_text(t->text));
    cJSON_AddItemToObject(o, "language", json_text(t->language));
    cJSON_AddNumberToObject(o, "duration", duration);
    for (size_t i = 0; i < t->n_segments; i++) {
        cJSON *g = cJSON_CreateObject();
        cJSON_AddNumberToObject(g, "start", t->segments[i].start);
        cJSON_AddNumberToObject(g, "end", t->segments[i].end);
        cJSON_AddItemToObject(g, "text", json_text(t->segments[i].text));
        cJSON_AddItemToArray(segs, g);
    }
    cJSON_AddItemToObject(o, "segments", segs);
    cJSON_AddNumberToObject(o, "cut_pieces", t->n_cut);
    cJSON_AddNumberToObject(o, "tokens", t->n_tokens);
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!s) return cli_lib_error(CMD, POCKETLLM_ERR_NO_MEMORY);
    puts(s);
    cJSON_free(s);
    return CLI_OK;
}

int cmd_transcribe(int argc, char **argv) {
    tr_opts o;
    int rc = parse(argc, argv, &o);
    if (rc) return rc;
    pocketllm_audio *audio = NULL;
    pocketllm_model *model = NULL;
    pocketllm_mmproj *mm = NULL;
    pocketllm_session *s = NULL;
    pocketllm_transcript *t = NULL;
    /* the recording first: a file that is not audio fails before the model loads */
    pocketllm_status st = pocketllm_audio_load(o.file, &audio);
    if (st) {
        const char *e = pocketllm_last_error();
        /* (the decoder's messages name the file already) */
        return strstr(e, o.file) ? cli_error(CMD, "%s", e) : cli_error(CMD, "%s: %s", o.file, e);
    }
    if ((rc = check_audio_tower(o.mmproj))) goto done;
    const double duration = pocketllm_audio_seconds(audio);
    if (duration > 1200.0) {
        rc = cli_error(CMD, "%s is %.1f s long; Qwen3-ASR transcribes at most 20 minutes at once (cut it first)",
                       o.file, duration);
        goto done;
    }
    pocketllm_model_params mp = pocketllm_model_default_params();
    mp.n_threads = (int)o.n_threads;
    if ((rc = cli_device_params(CMD, &o.device, &mp))) goto done;
    if ((st = pocketllm_model_open(o.model, &mp, &model))) goto fail;
    pocketllm_mmproj_params pp = pocketllm_mmproj_default_params();
    if ((st = pocketllm_mmproj_open(model, o.mmproj, &pp, &mm))) {
        rc = cli_error(CMD, "%s: %s", o.mmproj, pocketllm_last_error());
        goto done;
    }
    pocketllm_mmproj_info info;
    if ((st = pocketllm_mmproj_get_info(mm, &info))) goto fail;
    if (!info.has_audio) {
        rc = cli_error(CMD, "%s has no audio tower (projector %s): transcription needs a Qwen3-ASR mmproj", o.mmproj,
                       info.projector);
        goto done;
    }
    pocketllm_session_params sp = pocketllm_session_default_params();
    sp.n_ctx = (uint32_t)o.n_ctx;
    sp.n_threads = (int)o.n_threads;
    if ((st = pocketllm_session_new(model, &sp, &s))) goto fail;
    pocketllm_transcribe_params tp = pocketllm_transcribe_default_params();
    tp.language = o.language;
    tp.context = o.context;
    tp.temperature = (float)o.temperature;
    tp.seed = o.seed;
    tp.progress = progress;
    if ((st = pocketllm_transcribe(s, 0, mm, audio, &tp, &t))) goto fail;
    if (o.json) {
        rc = print_json(t, duration);
    } else {
        char *clean = cli_utf8_clean(t->text, strlen(t->text));
        puts(clean ? clean : t->text);
        free(clean);
        if (t->n_cut)
            fprintf(stderr, "pocketllm transcribe: %u piece%s hit the generation bound (a repetition loop?)\n", t->n_cut,
                    t->n_cut == 1 ? "" : "s");
        rc = CLI_OK;
    }
    goto done;
fail:
    rc = cli_lib_error(CMD, st);
done:
    pocketllm_transcript_free(t);
    pocketllm_session_free(s);
    pocketllm_mmproj_close(mm);
    pocketllm_model_close(model);
    pocketllm_audio_free(audio);
    return rc;
}
