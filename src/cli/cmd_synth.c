/*
 * cmd_synth.c -- `pocketllm synth`: write a random-weight checkpoint at a
 * named or explicit model shape, to size and benchmark a shape before
 * downloading it, and to give tests a checkpoint at a real shape.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"

typedef struct progress_state {
    int last;      /* last percentage printed, -1 before the first */
    bool tty;      /* redraw one line in place, else print every 10% */
} progress_state;

static void progress(void *user, uint64_t done, uint64_t total) {
    progress_state *ps = user;
    if (!ps->tty && total < (64u << 20)) return; /* small files: no log noise */
    int pct = total ? (int)(done * 100 / total) : 100;
    int step = ps->tty ? 1 : 10;
    if (ps->last >= 0 && pct / step == ps->last / step && done != total) return;
    char b[32];
    fprintf(stderr, "%ssynth: %3d%% of %s%s", ps->tty ? "\r" : "", pct, cli_fmt_bytes(total, b, sizeof b),
            ps->tty && done != total ? "" : "\n");
    ps->last = pct;
}

int cmd_synth(int argc, char **argv) {
    pocketllm_synth_params p = pocketllm_synth_default_params();
    const char *out = NULL, *err = NULL, *v;
    bool quiet = false;
    /* --mmproj: the shape's vision or audio tower, beside or instead of the text model */
    pocketllm_synth_mmproj_params mp = {.shape = NULL};
    const char *mmproj = NULL, *layers_opt = NULL;
    for (int i = 1; i < argc; i++) {
        int64_t n = 0;
        uint32_t *dim = NULL;
        if (cli_opt(argc, argv, &i, "--arch", &v, &err)) p.arch = v;
        else if (cli_opt(argc, argv, &i, "--shape", &v, &err)) p.shape = v;
        else if (cli_opt(argc, argv, &i, "--type", &v, &err)) {
            if (v && !strcmp(v, "f32")) p.type = 0;
            else if (v && !strcmp(v, "f16")) p.type = 1;
            else if (v && !strcmp(v, "bf16")) p.type = 30;
            else if (v) return cli_usage("synth", "--type must be f32, f16 or bf16, not '%s'", v);
        } else if (!strcmp(argv[i], "--untied")) p.untied = 1;
        else if (!strcmp(argv[i], "--quiet")) quiet = true;
        else if (cli_opt(argc, argv, &i, "--seed", &v, &err)) {
            if (v && !cli_parse_i64(v, 0, INT64_MAX, &n)) return cli_usage("synth", "bad --seed '%s'", v);
            p.seed = (uint64_t)n;
        } else if (cli_opt(argc, argv, &i, "--vocab", &v, &err)) p.vocab_path = v;
        else if (cli_opt(argc, argv, &i, "--template", &v, &err)) p.template_path = v;
        else if (cli_opt(argc, argv, &i, "--mmproj", &v, &err)) mmproj = v;
        else if (cli_opt(argc, argv, &i, "--vision-layers", &v, &err)) dim = &mp.n_layer, layers_opt = "--vision-layers";
        else if (cli_opt(argc, argv, &i, "--audio-layers", &v, &err)) dim = &mp.n_layer, layers_opt = "--audio-layers";
        else if (cli_opt(argc, argv, &i, "--n-embd", &v, &err)) dim = &p.n_embd;
        else if (cli_opt(argc, argv, &i, "--n-layer", &v, &err)) dim = &p.n_layer;
        else if (cli_opt(argc, argv, &i, "--n-head", &v, &err)) dim = &p.n_head;
        else if (cli_opt(argc, argv, &i, "--n-head-kv", &v, &err)) dim = &p.n_head_kv;
        else if (cli_opt(argc, argv, &i, "--head-dim", &v, &err)) dim = &p.head_dim;
        else if (cli_opt(argc, argv, &i, "--n-ff", &v, &err)) dim = &p.n_ff;
        else if (argv[i][0] == '-' && argv[i][1]) return cli_usage("synth", "unknown option '%s'", argv[i]);
        else if (out) return cli_usage("synth", "takes one OUT path, got '%s' and '%s'", out, argv[i]);
        else out = argv[i];
        if (err) return cli_usage("synth", "%s %s", argv[i], err);
        if (dim) {
            if (!cli_parse_i64(v, 1, 1 << 20, &n)) return cli_usage("synth", "bad value '%s' for %s", v, argv[i - 1]);
            *dim = (uint32_t)n;
        }
    }
    if (!out && !mmproj) return cli_usage("synth", "needs an OUT path");
    if (mp.n_layer && !mmproj) return cli_usage("synth", "%s needs --mmproj", layers_opt);
    if (mmproj && !p.shape) return cli_usage("synth", "--mmproj needs --shape (qwen3vl-2b, qwen3asr-0.6b, qwen3asr-1.7b)");
    /* the Qwen3-ASR shapes' towers hear, the others' see */
    bool audio = p.shape && !strncmp(p.shape, "qwen3asr-", 9);
    if (mp.n_layer && audio != !strcmp(layers_opt, "--audio-layers"))
        return cli_usage("synth", "%s: shape %s has %s tower", layers_opt, p.shape, audio ? "an audio" : "no audio");
    if (out && !p.shape && !(p.n_embd && p.n_layer && p.n_head && p.n_head_kv && p.head_dim && p.n_ff))
        return cli_usage("synth", "needs --shape NAME or all of --n-embd --n-layer --n-head --n-head-kv --head-dim --n-ff");
    progress_state ps = {.last = -1, .tty = isatty(2)};
    if (!quiet) {
        p.progress = progress;
        p.progress_user = &ps;
    }
    pocketllm_status st = POCKETLLM_OK;
    if (mmproj) {
        mp.shape = p.shape;
        mp.type = p.type;
        mp.seed = p.seed;
        mp.progress = p.progress;
        mp.progress_user = p.progress_user;
        st = pocketllm_synth_mmproj(&mp, mmproj);
        ps.last = -1;
    }
    if (!st && out) st = pocketllm_synth(&p, out);
    if (st) {
        if (!quiet && ps.tty && ps.last >= 0) fputc('\n', stderr);
        /* a bad --shape/--arch/dimension is the caller's mistake */
        return st == POCKETLLM_ERR_INVALID_ARGUMENT ? cli_usage("synth", "%s", pocketllm_last_error())
                                                    : cli_lib_error("synth", st);
    }
    return CLI_OK;
}
