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

/* `pocketllm synth --help` (CMD_SYNTH_USAGE in commands.h) */
const char cmd_synth_usage[] =
    "usage: pocketllm synth [--arch A] --shape NAME [--type T] [--untied] [--seed N] [--vocab FILE.gguf]\n"
    "                       [--template FILE] [--quiet] OUT.gguf\n"
    "       pocketllm synth --shape qwen3vl-2b [--mmproj MMPROJ.gguf [--vision-layers N]] [OUT.gguf]\n"
    "       pocketllm synth --shape qwen3asr-0.6b|qwen3asr-1.7b [--mmproj MMPROJ.gguf [--audio-layers N]]\n"
    "                       [OUT.gguf]\n"
    "       pocketllm synth ... --n-embd N --n-layer N --n-head N --n-head-kv N --head-dim N --n-ff N OUT\n"
    "       pocketllm synth --arch qwen3moe|qwen2moe ... --n-expert N --n-expert-used N --n-ff-exp N\n"
    "                       [--n-ff-shexp N] OUT\n\n"
    "Write a checkpoint with random weights at a model shape: to size and benchmark a shape before\n"
    "downloading it, and to test the engine at real shapes.  Same arguments, same bytes.\n\n"
    "Shapes: tiny, small (ours, for tests), qwen3-0.6b, qwen3-1.7b, qwen3-4b, qwen3-8b (the real\n"
    "Qwen3 hyperparameters, vocabulary 151936), qwen3vl-2b (Qwen3-VL-2B's text model, arch qwen3vl),\n"
    "qwen3asr-0.6b, qwen3asr-1.7b (Qwen3-ASR's text models: the Qwen3-0.6B/1.7B widths as arch qwen3vl\n"
    "without DeepStack, its audio tokens in the vocabulary, BOS = EOS = <|im_end|>, chatml template).\n"
    "Mixtures of experts: moe-tiny (qwen3moe, 8 experts of 32, 2 used), moe-small (qwen3moe, 16\n"
    "experts of 256, 4 used; rows of whole 256-blocks), qwen2moe-tiny (6 experts, 2 used, a shared\n"
    "expert) -- ours, for tests --, qwen3moe-30b-a3b (Qwen3-30B-A3B: 48 layers of 2048, 32 heads (4 KV)\n"
    "of 128, 128 experts of FFN 768, 8 used, untied output) and qwen2moe-a2.7b (Qwen1.5-MoE-A2.7B: 24\n"
    "layers of 2048, 16 heads (16 KV), 60 experts of FFN 1408, 4 used, shared expert FFN 5632).\n"
    "Explicit dimensions override a named shape's (e.g. --shape qwen3-8b --n-layer 2 keeps the 8B\n"
    "widths at two layers; --shape qwen3moe-30b-a3b --n-layer 1 --type Q4_K_M is 0.8 GB).\n\n"
    "  --arch A        qwen3 (per-head QK norm), qwen3vl (qwen3 with M-RoPE sections and DeepStack),\n"
    "                  llama, qwen3moe (qwen3 with routed experts in place of the FFN: a router and\n"
    "                  the experts as 3-D tensors, as llama.cpp's converter writes them) or qwen2moe\n"
    "                  (routed experts and a gated shared expert, Q/K/V biases, always an\n"
    "                  output.weight); default: the shape's own, else qwen3.  A dense shape becomes\n"
    "                  a mixture with --arch qwen3moe|qwen2moe and --n-expert/--n-expert-used\n"
    "  --type T        f32 (default), f16 or bf16: every matrix in that type, norms, biases and\n"
    "                  routers f32.  Or any TYPE of 'pocketllm quantize' (a recipe: Q4_K_M, Q2_K,\n"
    "                  IQ2_XXS, ...; or a tensor type: q8_0, iq4_nl, ... as --pure): a quantized rung\n"
    "                  written directly, with no f16 file in between and little memory -- every\n"
    "                  tensor gets the type llama-quantize gives it in this shape's f16 file (the\n"
    "                  recipes llama.cpp makes only with an imatrix are planned as made with one)\n"
    "                  and random valid blocks of that type; Q1_0 and Q2_0, which this build\n"
    "                  cannot encode, are refused\n"
    "  --untied        write a separate output.weight (default: as the real model has it; our\n"
    "                  shapes tied, except qwen2moe, which always has one)\n"
    "  --n-expert N    experts (mixtures of experts only; 1..1024)\n"
    "  --n-expert-used N  experts used per token (1..--n-expert)\n"
    "  --n-ff-exp N    each expert's FFN width (default: the shape's, else --n-ff / --n-expert-used);\n"
    "                  --n-ff is then only written as feed_forward_length (default: N x used)\n"
    "  --n-ff-shexp N  qwen2moe's shared expert's FFN width (default: the shape's, else --n-ff)\n"
    "  --seed N        generator seed (default 0)\n"
    "  --vocab FILE    copy the tokenizer from this GGUF (e.g. a ggml-vocab-qwen2.gguf); default: a\n"
    "                  built-in byte-level vocabulary (256 bytes + 3 Qwen control tokens; qwen3asr-*\n"
    "                  add Qwen3-ASR's audio and <asr_text> tokens at their ids, also to a copy)\n"
    "  --template FILE embed this chat template as tokenizer.chat_template\n"
    "  --mmproj FILE   also (or only) write the shape's vision tower (qwen3vl-2b) or audio tower\n"
    "                  (qwen3asr-*) as an mmproj GGUF, laid out as llama.cpp's converter writes it\n"
    "                  (libmtmd loads it); --type sets its matrices (vision: f32 or f16; audio: f32,\n"
    "                  f16 or bf16, the conv kernels and conv_out always f16 as the converter has them)\n"
    "  --vision-layers N  vision blocks of --mmproj (default: all 24); DeepStack taps past the last\n"
    "                  are dropped\n"
    "  --audio-layers N   audio encoder blocks of --mmproj (default: all: 18 for 0.6b, 24 for 1.7b)\n"
    "  --quiet         no progress on stderr (shown for files over 64 MiB)\n";

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
            p.quant = NULL;
            if (v && !strcmp(v, "f32")) p.type = 0;
            else if (v && !strcmp(v, "f16")) p.type = 1;
            else if (v && !strcmp(v, "bf16")) p.type = 30;
            /* anything else `quantize` takes: a quantized rung written directly */
            else if (v && pocketllm_quantize_type_known(v)) p.quant = v;
            else if (v)
                return cli_usage("synth", "--type '%s' is neither f32/f16/bf16 nor a recipe or type of "
                                 "'pocketllm quantize' (Q4_K_M, q8_0, ...)", v);
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
        else if (cli_opt(argc, argv, &i, "--n-expert", &v, &err)) dim = &p.n_expert;
        else if (cli_opt(argc, argv, &i, "--n-expert-used", &v, &err)) dim = &p.n_expert_used;
        else if (cli_opt(argc, argv, &i, "--n-ff-exp", &v, &err)) dim = &p.n_ff_exp;
        else if (cli_opt(argc, argv, &i, "--n-ff-shexp", &v, &err)) dim = &p.n_ff_shexp;
        else if (argv[i][0] == '-' && argv[i][1]) return cli_usage("synth", "unknown option '%s'", argv[i]);
        else if (out) return cli_usage("synth", "takes one OUT path, got '%s' and '%s'", out, argv[i]);
        else out = argv[i];
        if (err) return cli_usage("synth", "%s %s", argv[i], err);
        if (dim) {
            /* 0 would mean "the shape's value" below: say what is wrong with it */
            if (cli_parse_i64(v, 0, 0, &n)) return cli_usage("synth", "%s must be at least 1", argv[i - 1]);
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
    if (mmproj && p.quant) return cli_usage("synth", "--mmproj takes --type f32, f16 or bf16, not '%s'", p.quant);
    /* a mixture of experts' FFN width is --n-ff-exp; --n-ff is then optional */
    bool moe = p.arch && (!strcmp(p.arch, "qwen3moe") || !strcmp(p.arch, "qwen2moe"));
    if (out && !p.shape && !(p.n_embd && p.n_layer && p.n_head && p.n_head_kv && p.head_dim && (p.n_ff || moe)))
        return cli_usage("synth", "needs --shape NAME or all of --n-embd --n-layer --n-head --n-head-kv --head-dim %s",
                         moe ? "(and --n-expert --n-expert-used --n-ff-exp)" : "--n-ff");
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
