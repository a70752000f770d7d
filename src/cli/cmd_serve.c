/*
 * cmd_serve.c -- `pocketllm serve`: an OpenAI-compatible HTTP server for
 * one model.  Opens the model, starts the continuous-batching scheduler
 * and the HTTP daemon (src/server/), then waits for SIGINT or SIGTERM and
 * shuts down in order: connections first, then the scheduler, then the
 * model.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "spec_draft.h"
#include "srv_http.h"
#include "srv_metrics.h"
#include "srv_model.h"
#include "srv_request.h"
#include "srv_sched.h"

#define CMD "serve"

const char cmd_serve_usage[] =
    "usage: pocketllm serve --model M [--host 127.0.0.1] [--port 8080] [--api-key K] [--ctx N]\n"
    "                       [--parallel N] [-t N] [--queue N] [--batch N] [--lookup N | --draft M]\n"
    "                       [--draft-max N] [--draft-min N] [--kv T]\n"
    "                       [-ctk T] [-ctv T] [--flash-attn on|off] [--device D] [--device-memory S]\n"
    "                       [--template FILE] [--name NAME] [--max-body SIZE] [--max-upload-mb N]\n"
    "                       [--keepalive S] [--quiet] [--metrics] [--no-webui] [--pooling mean|cls|last]\n"
    "                       [--mmproj FILE [--image-min-tokens N] [--image-max-tokens N]\n"
    "                        [--allow-image-path DIR]]\n\n"
    "Serve the model over HTTP with OpenAI's API, so that OpenAI clients and libraries work\n"
    "against it.  Up to --parallel requests run at the same time by continuous batching: their\n"
    "sequences share one KV cache and are decoded together, one forward pass per step; a greedy\n"
    "answer is the same whether it ran alone or beside others.  Up to --queue more requests wait\n"
    "for a sequence; past that the answer is 503.  A client that disconnects cancels its request\n"
    "(queued, in its prompt or generating) and frees its sequence.  Prints the address it listens\n"
    "on to stderr, then one line per request; SIGINT or SIGTERM stops it.\n\n"
    "  --model M, -m M    the GGUF checkpoint\n"
    "  --mmproj FILE      the model's towers, on the model's device: a Qwen3-VL mmproj (vision) lets\n"
    "                     chat messages hold images (image_url parts, see below); a Qwen3-ASR\n"
    "                     mmproj (audio) lets them hold input_audio parts and serves\n"
    "                     POST /v1/audio/transcriptions.  A prompt with images or audio is evaluated\n"
    "                     on its own sequence, then decodes in the batch with the others; a\n"
    "                     transcription runs whole on its sequence, and the other sequences wait\n"
    "                     for it.  /v1/models lists \"multimodal\" among its capabilities\n"
    "  --image-min-tokens N, --image-max-tokens N   an image's token budget, as llama.cpp's\n"
    "                     (default 8 and 4096): images are resized to fit it\n"
    "  --allow-image-path DIR  file:///PATH image URLs may read files inside DIR (the real path,\n"
    "                     links resolved, must be inside); without it file:// URLs are refused\n"
    "  --host H           address to listen on (default 127.0.0.1: this machine only)\n"
    "  --port P           port (default 8080; 0 = any free port, printed at start)\n"
    "  --api-key K        require 'Authorization: Bearer K' on /v1/* (401 without it); the\n"
    "                     environment variable POCKETLLM_API_KEY works too\n"
    "  --ctx N, -c N      positions each request may fill, prompt and completion (default: the\n"
    "                     model's context, at most 4096); the KV cache holds N x --parallel\n"
    "  --parallel N       requests decoded together (default 4)\n"
    "  -t N, --threads N  compute threads (default: the physical cores)\n"
    "  --queue N          requests that may wait for a sequence (default 64; 0 = none)\n"
    "  --batch N          most tokens in one forward pass: decoding tokens first, then chunks of\n"
    "                     prompts (default 256)\n"
    "  --lookup N         speculative decoding by prompt lookup, per sequence and in the batch: each\n"
    "                     decoding sequence drafts ids from n-grams (up to N long, 1..8) of its\n"
    "                     prompt and reply, verified in the same pass; replies are plain decoding's,\n"
    "                     token for token (greedy or sampled); /health and /metrics count the\n"
    "                     drafts and how many were kept\n"
    "  --draft M, -md M   speculative decoding with a draft model: a smaller model with the model's\n"
    "                     vocabulary, on the same device, with a sequence of its own per request;\n"
    "                     before each step it drafts each decoding sequence's next ids greedily\n"
    "                     (all sequences in batched passes of it), verified in the model's pass;\n"
    "                     replies are plain decoding's, token for token (greedy or sampled); a\n"
    "                     prompt with images or audio drafts nothing.  Its KV cache holds\n"
    "                     --ctx x --parallel positions too\n"
    "  --draft-max N, --draft-min N  most / fewest ids a sequence drafts in a step (default 8 / 1)\n"
    CLI_KV_HELP
    "  --flash-attn on|off llama.cpp's flash-attention arithmetic (default off; see 'pocketllm run')\n"
    CLI_DEVICE_HELP
    "                     (the KV cache of all --parallel sequences must fit there too)\n"
    "  --template FILE    a Jinja chat template to use instead of the model's\n"
    "  --name NAME        the model's name in the API (default: the file name without .gguf)\n"
    "  --max-body SIZE    largest request body (default 8M)\n"
    "  --max-upload-mb N  largest file a transcription form may upload, in MiB (default 100,\n"
    "                     at most 1024); more is a 413\n"
    "  --keepalive S      while a stream has nothing to send (a long prompt, the queue), an SSE\n"
    "                     comment every S seconds (default 2)\n"
    "  --quiet            no line per request\n"
    "  --metrics          serve GET /metrics: Prometheus text-format counters (requests by endpoint\n"
    "                     and status, errors by status, prompt and generated tokens, prompt-cache\n"
    "                     hits and reused tokens, embeddings, histograms of the time to first token,\n"
    "                     between tokens and per request; gauges of the queue and busy sequences),\n"
    "                     without the API key, like /health; without --metrics it is a 404\n"
    "  --no-webui         no chat page: by default http://HOST:PORT/ in a browser opens one (built\n"
    "                     into the binary: conversations kept in the browser, replies streamed,\n"
    "                     images and audio with --mmproj; it asks for the API key when one is set)\n"
    "  --pooling P        how POST /v1/embeddings pools a sequence: mean, cls (its first token) or\n"
    "                     last (its last token); default: the model's <arch>.pooling_type -- a\n"
    "                     model without one (a generative model) refuses embeddings until given one\n\n"
    SRV_FIELDS_HELP;

static int parse(int argc, char **argv, srv_model_params *mp, srv_sched_params *sp, srv_http_params *hp,
                 cli_device *dev, const char **draft) {
    const char *v, *err = NULL;
    int frc = 0;
    for (int i = 1; i < argc; i++) {
        int64_t n;
        double d;
        uint64_t size;
        if (cli_opt(argc, argv, &i, "--model", &v, &err) || cli_opt(argc, argv, &i, "-m", &v, &err)) {
            if (err) break;
            mp->path = v;
        } else if (cli_opt(argc, argv, &i, "--host", &v, &err)) {
            if (err) break;
            hp->host = v;
        } else if (cli_opt(argc, argv, &i, "--port", &v, &err)) {
            if (err) break;
            if (!cli_parse_i64(v, 0, 65535, &n)) return cli_usage(CMD, "--port wants 0..65535, not '%s'", v);
            hp->port = (uint16_t)n;
        } else if (cli_opt(argc, argv, &i, "--api-key", &v, &err)) {
            if (err) break;
            if (!*v) return cli_usage(CMD, "--api-key may not be empty");
            hp->api_key = v;
        } else if (cli_opt(argc, argv, &i, "--ctx", &v, &err) || cli_opt(argc, argv, &i, "-c", &v, &err)) {
            if (err) break;
            if (!cli_parse_i64(v, 2, 1 << 20, &n)) return cli_usage(CMD, "--ctx wants 2..1048576 positions, not '%s'", v);
            mp->n_ctx = (uint32_t)n;
        } else if (cli_opt(argc, argv, &i, "--parallel", &v, &err) || cli_opt(argc, argv, &i, "-np", &v, &err)) {
            if (err) break;
            if (!cli_parse_i64(v, 1, 256, &n)) return cli_usage(CMD, "--parallel wants 1..256, not '%s'", v);
            sp->parallel = (uint32_t)n;
        } else if (cli_opt(argc, argv, &i, "-t", &v, &err) || cli_opt(argc, argv, &i, "--threads", &v, &err)) {
            if (err) break;
            if (!cli_parse_i64(v, 1, 1024, &n)) return cli_usage(CMD, "-t wants a thread count 1..1024, not '%s'", v);
            sp->n_threads = (int)n;
            mp->n_threads = (int)n;
        } else if (cli_opt(argc, argv, &i, "--queue", &v, &err)) {
            if (err) break;
            if (!cli_parse_i64(v, 0, 100000, &n)) return cli_usage(CMD, "--queue wants 0..100000, not '%s'", v);
            sp->queue = (uint32_t)n;
        } else if (cli_opt(argc, argv, &i, "--lookup", &v, &err)) {
            if (err) break;
            if (!cli_parse_i64(v, 1, 8, &n)) return cli_usage(CMD, "--lookup wants the longest n-gram, 1..8, not '%s'", v);
            sp->lookup = (uint32_t)n;
        } else if (cli_opt(argc, argv, &i, "--draft-max", &v, &err) || cli_opt(argc, argv, &i, "--draft-min", &v, &err)) {
            const bool max = !strcmp(argv[i - 1], "--draft-max");
            if (err) break;
            if (!cli_parse_i64(v, 1, SRV_MAX_DRAFT, &n))
                return cli_usage(CMD, "%s wants 1..%d, not '%s'", max ? "--draft-max" : "--draft-min", SRV_MAX_DRAFT, v);
            if (max) sp->draft_max = (uint32_t)n;
            else sp->draft_min = (uint32_t)n;
        } else if (cli_opt(argc, argv, &i, "--draft", &v, &err) || cli_opt(argc, argv, &i, "-md", &v, &err)) {
            if (err) break;
            *draft = v;
        } else if (cli_opt(argc, argv, &i, "--batch", &v, &err) || cli_opt(argc, argv, &i, "-b", &v, &err)) {
            if (err) break;
            if (!cli_parse_i64(v, 1, 65536, &n)) return cli_usage(CMD, "--batch wants 1..65536 tokens, not '%s'", v);
            sp->n_batch = (uint32_t)n;
        } else if (cli_opt_flash(argc, argv, &i, CMD, &sp->flash_attn, &frc)) {
            if (frc) return frc;
        } else if (cli_opt_device(argc, argv, &i, CMD, dev, &frc)) {
            if (frc) return frc;
        } else if (cli_opt_kv(argc, argv, &i, CMD, &sp->kv_type, &sp->kv_type_v, &frc)) {
            if (frc) return frc;
        } else if (cli_opt(argc, argv, &i, "--mmproj", &v, &err)) {
            if (err) break;
            mp->mmproj_path = v;
        } else if (cli_opt(argc, argv, &i, "--image-min-tokens", &v, &err)) {
            if (err) break;
            if (!cli_parse_i64(v, 1, 1 << 20, &n)) return cli_usage(CMD, "--image-min-tokens wants a count 1..1048576, not '%s'", v);
            mp->image_min_tokens = (uint32_t)n;
        } else if (cli_opt(argc, argv, &i, "--image-max-tokens", &v, &err)) {
            if (err) break;
            if (!cli_parse_i64(v, 1, 1 << 20, &n)) return cli_usage(CMD, "--image-max-tokens wants a count 1..1048576, not '%s'", v);
            mp->image_max_tokens = (uint32_t)n;
        } else if (cli_opt(argc, argv, &i, "--allow-image-path", &v, &err)) {
            if (err) break;
            if (!*v) return cli_usage(CMD, "--allow-image-path wants a folder");
            mp->image_dir = v;
        } else if (cli_opt(argc, argv, &i, "--template", &v, &err)) {
            if (err) break;
            mp->template_path = v;
        } else if (cli_opt(argc, argv, &i, "--name", &v, &err)) {
            if (err) break;
            if (!*v || strchr(v, '/')) return cli_usage(CMD, "--name wants a non-empty name without '/'");
            mp->name = v;
        } else if (cli_opt(argc, argv, &i, "--max-body", &v, &err)) {
            if (err) break;
            if (!cli_parse_size(v, &size) || size < 64 || size > (1u << 30))
                return cli_usage(CMD, "--max-body wants a size from 64 bytes to 1G, not '%s'", v);
            hp->max_body = (size_t)size;
        } else if (cli_opt(argc, argv, &i, "--max-upload-mb", &v, &err)) {
            if (err) break;
            if (!cli_parse_i64(v, 1, 1024, &n)) return cli_usage(CMD, "--max-upload-mb wants 1..1024 MiB, not '%s'", v);
            hp->max_upload = (size_t)n << 20;
        } else if (cli_opt(argc, argv, &i, "--keepalive", &v, &err)) {
            if (err) break;
            if (!cli_parse_f64(v, 0.05, 3600, &d)) return cli_usage(CMD, "--keepalive wants seconds (0.05..3600), not '%s'", v);
            hp->keepalive_ms = (int)(d * 1000);
        } else if (!strcmp(argv[i], "--quiet")) {
            hp->log = false;
        } else if (!strcmp(argv[i], "--metrics")) {
            hp->metrics_endpoint = true;
        } else if (!strcmp(argv[i], "--no-webui")) {
            hp->no_webui = true;
        } else if (cli_opt(argc, argv, &i, "--pooling", &v, &err)) {
            if (err) break;
            if (!strcmp(v, "mean")) hp->pooling = POCKETLLM_POOLING_MEAN;
            else if (!strcmp(v, "cls")) hp->pooling = POCKETLLM_POOLING_CLS;
            else if (!strcmp(v, "last")) hp->pooling = POCKETLLM_POOLING_LAST;
            else return cli_usage(CMD, "--pooling wants mean, cls or last, not '%s'", v);
        } else {
            return cli_usage(CMD, "unknown argument '%s'", argv[i]);
        }
    }
    if (err) return cli_usage(CMD, "an option %s", err);
    if (!mp->path) return cli_usage(CMD, "needs --model M");
    if (*draft && sp->lookup) return cli_usage(CMD, "--lookup and --draft are two ways to draft: give one");
    if ((mp->image_min_tokens || mp->image_max_tokens || mp->image_dir) && !mp->mmproj_path)
        return cli_usage(CMD, "--image-min-tokens, --image-max-tokens and --allow-image-path need --mmproj FILE");
    return 0;
}

/* --draft M: open the draft model on the model's device and check that it
 * speaks the model's vocabulary; into sp with its name (*name, freed by
 * close_draft).  0 or the exit code (the message printed). */
static int open_draft(const char *path, const srv_model_params *mp, const pocketllm_model *target, srv_sched_params *sp,
                      char **name) {
    pocketllm_model_params dp = pocketllm_model_default_params();
    dp.n_threads = mp->n_threads;
    dp.device = mp->device;
    dp.device_memory = mp->device_memory;
    if (pocketllm_model_open(path, &dp, &sp->draft_model))
        return cli_error(CMD, "--draft %s: %s", path, pocketllm_last_error());
    char why[160];
    if (spec_vocab_differs(sp->draft_model, target, why, sizeof why)) {
        pocketllm_model_close(sp->draft_model);
        sp->draft_model = NULL;
        return cli_error(CMD, "--draft %s: %s", path, why);
    }
    *name = srv_model_name_from_path(path);
    sp->draft_name = *name;
    return CLI_OK;
}

static void close_draft(srv_sched_params *sp, char *name) {
    pocketllm_model_close(sp->draft_model);
    sp->draft_model = NULL;
    free(name);
}

int cmd_serve(int argc, char **argv) {
    srv_model_params mp = {0};
    srv_sched_params sp = {.parallel = 4, .queue = 64, .n_batch = 256, .kv_type = 1, .kv_type_v = POCKETLLM_KV_AS_K,
                           .flash_attn = -1, .n_threads = 0, .draft_max = 8, .draft_min = 1};
    srv_http_params hp = {.host = "127.0.0.1", .port = 8080, .max_body = 8u << 20, .max_upload = (size_t)100 << 20,
                          .keepalive_ms = 2000, .log = true, .pooling = POCKETLLM_POOLING_MODEL};
    cli_device dev = {NULL, 0};
    const char *draft = NULL;
    int rc = parse(argc, argv, &mp, &sp, &hp, &dev, &draft);
    if (rc) return rc;
    if ((rc = cli_device_srv_params(CMD, &dev, &mp))) return rc;
    if (sp.draft_min > sp.draft_max) return cli_usage(CMD, "--draft-min is larger than --draft-max");
    sp.flash_attn = cli_flash_auto(sp.flash_attn, sp.kv_type, sp.kv_type_v);
    if (!hp.api_key) {
        const char *env = getenv("POCKETLLM_API_KEY");
        if (env && *env) hp.api_key = env;
    }
    hp.max_connections = sp.parallel + sp.queue + 64;

    /* the signals are taken by sigwait below: block them before any
     * thread starts, so that every thread inherits the mask */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);

    srv_model m;
    char *err = NULL;
    if (srv_model_open(&mp, &m, &err)) {
        rc = cli_error(CMD, "%s", err ? err : "cannot open the model");
        free(err);
        return rc;
    }
    if (hp.pooling == POCKETLLM_POOLING_MODEL) hp.pooling = pocketllm_model_pooling(m.model);
    char *draft_name = NULL;
    if (draft && (rc = open_draft(draft, &mp, m.model, &sp, &draft_name))) {
        srv_model_close(&m);
        return rc;
    }
    /* counted always (a few additions per token); served with --metrics */
    srv_metrics *metrics = srv_metrics_new();
    sp.metrics = hp.metrics = metrics;
    srv_sched *s = NULL;
    if (!metrics || srv_sched_new(&m, &sp, &s, &err)) {
        rc = cli_error(CMD, "%s", err ? err : "cannot start the scheduler");
        free(err);
        srv_metrics_free(metrics);
        close_draft(&sp, draft_name);
        srv_model_close(&m);
        return rc;
    }
    srv_http *h = NULL;
    if (!srv_http_start(&hp, &m, s, &h, &err)) {
        rc = cli_error(CMD, "%s", err ? err : "cannot start the HTTP server");
        free(err);
        srv_sched_free(s);
        srv_metrics_free(metrics);
        close_draft(&sp, draft_name);
        srv_model_close(&m);
        return rc;
    }
    const bool v6 = strchr(hp.host, ':') != NULL;
    char spec[200] = "";
    if (draft_name) snprintf(spec, sizeof spec, ", draft model %s", draft_name);
    else if (sp.lookup) snprintf(spec, sizeof spec, ", prompt lookup %u", sp.lookup);
    fprintf(stderr, "pocketllm serve: %s on http://%s%s%s:%u/v1 (parallel %u, queue %u, context %u per request%s%s%s%s%s%s%s)\n",
            m.id, v6 ? "[" : "", hp.host, v6 ? "]" : "", srv_http_port(h), sp.parallel, sp.queue, m.n_ctx, spec,
            m.tmpl ? "" : ", no chat template",
            m.has_vision && m.has_audio ? ", images and audio in" : m.has_vision ? ", images in" : m.has_audio ? ", audio in" : "",
            hp.api_key ? ", API key required" : "", hp.metrics_endpoint ? ", /metrics" : "",
            hp.no_webui ? "" : ", chat page at /", cli_device_suffix(m.model));
    fflush(stderr);
    int sig = 0;
    sigwait(&stop, &sig);
    fprintf(stderr, "pocketllm serve: %s: stopping\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    srv_http_stop(h);
    srv_sched_free(s);
    srv_metrics_free(metrics);
    close_draft(&sp, draft_name);
    srv_model_close(&m);
    return CLI_OK;
}
