/*
 * cmd_perplexity.c -- `pocketllm perplexity`: a model's perplexity over a
 * text, computed as llama.cpp's llama-perplexity computes it; and, against a
 * base model's saved log-probabilities, the KL divergence and top-1
 * agreement -- how far down the ladder a model still answers like itself.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "eval_common.h"

const char cmd_perplexity_usage[] =
    "usage: pocketllm perplexity --model M --file TEXT [--ctx N] [--chunks N]\n"
    "                            [--save-logits F [--logits-type f32|u16] | --kl-base F]\n"
    "                            [-t N] [--kv T] [-ctk T] [-ctv T] [-fa on|off] [--device D] [--device-memory S] [--json] [--quiet]\n\n"
    "Perplexity of the model over a text, defined as llama.cpp's llama-perplexity defines it, so\n"
    "the numbers compare: the text is tokenized (with BOS if the vocabulary adds one; special-token\n"
    "text is not parsed) and cut into windows of --ctx tokens; each window starts from an empty\n"
    "cache with BOS in its first place, and only its second half is scored (each scored token\n"
    "has at least ctx/2 tokens before it).  The text must hold at least two windows.\n"
    "PPL = exp(mean negative log-likelihood), printed with its standard error.\n\n"
    "  --model M, -m M      the model\n"
    "  --file TEXT, -f TEXT the text (UTF-8, at most 256 MiB)\n"
    "  --ctx N, -c N        window size in tokens (default 512, as llama-perplexity)\n"
    "  --chunks N           score only the first N windows\n"
    "  --save-logits F      save this (base) model's log-probabilities of every scored position,\n"
    "                       with the text's tokens, for a later --kl-base\n"
    "  --logits-type T      f32: exact log-probabilities (a model against its own file gives KL 0;\n"
    "                       4 bytes x vocabulary per position); u16: llama.cpp's\n"
    "                       --kl-divergence-base file, byte for byte (2 bytes x vocabulary, within\n"
    "                       1.3e-4 nats).  Default: f32 for vocabularies up to 65536, else u16\n"
    "  --kl-base F          compare with a base model's saved file: the same text and --ctx are\n"
    "                       required (the tokens are checked).  Adds the mean KL divergence\n"
    "                       KL(base||model) per position with its percentiles, the base's perplexity\n"
    "                       and the top-1 agreement (how often both rank the same token first)\n"
    "  -t N                 threads (default: the physical cores)\n"
    CLI_KV_HELP
    "  --flash-attn on|off  llama.cpp's flash-attention arithmetic (default off; see 'pocketllm run')\n"
    CLI_DEVICE_HELP
    "  --json               print the results as one JSON object\n"
    "  --quiet              no progress on stderr\n";

static int parse_u32(const char *cmd, const char *opt, const char *v, int64_t lo, int64_t hi, uint32_t *out) {
    int64_t n;
    if (!cli_parse_i64(v, lo, hi, &n))
        return cli_usage(cmd, "%s wants a number %lld..%lld, not '%s'", opt, (long long)lo, (long long)hi, v);
    *out = (uint32_t)n;
    return 0;
}

int cmd_perplexity(int argc, char **argv) {
    const char *cmd = "perplexity";
    const char *model = NULL, *file = NULL, *v, *err = NULL;
    bool json = false, quiet = false;
    pocketllm_perplexity_params p = pocketllm_perplexity_default_params();
    uint32_t threads = 0;
    int flash = -1;
    cli_device dev = {NULL, 0};
    int drc = 0;
    for (int i = 1; i < argc; i++) {
        if (cli_opt_device(argc, argv, &i, cmd, &dev, &drc)) {
            if (drc) return drc;
        } else if (cli_opt(argc, argv, &i, "--model", &v, &err) || cli_opt(argc, argv, &i, "-m", &v, &err)) {
            if (err) return cli_usage(cmd, "--model %s", err);
            model = v;
        } else if (cli_opt(argc, argv, &i, "--file", &v, &err) || cli_opt(argc, argv, &i, "-f", &v, &err)) {
            if (err) return cli_usage(cmd, "--file %s", err);
            file = v;
        } else if (cli_opt(argc, argv, &i, "--ctx", &v, &err) || cli_opt(argc, argv, &i, "-c", &v, &err)) {
            if (err) return cli_usage(cmd, "--ctx %s", err);
            if (parse_u32(cmd, "--ctx", v, 8, 1 << 20, &p.n_ctx)) return CLI_USAGE;
        } else if (cli_opt(argc, argv, &i, "--chunks", &v, &err)) {
            if (err) return cli_usage(cmd, "--chunks %s", err);
            if (parse_u32(cmd, "--chunks", v, 1, 1 << 30, &p.max_chunks)) return CLI_USAGE;
        } else if (cli_opt(argc, argv, &i, "--save-logits", &v, &err)) {
            if (err) return cli_usage(cmd, "--save-logits %s", err);
            p.save_logits = v;
        } else if (cli_opt(argc, argv, &i, "--logits-type", &v, &err)) {
            if (err) return cli_usage(cmd, "--logits-type %s", err);
            if (!strcmp(v, "f32")) p.save_type = POCKETLLM_LOGITS_F32;
            else if (!strcmp(v, "u16")) p.save_type = POCKETLLM_LOGITS_U16;
            else return cli_usage(cmd, "--logits-type wants f32 or u16, not '%s'", v);
        } else if (cli_opt(argc, argv, &i, "--kl-base", &v, &err)) {
            if (err) return cli_usage(cmd, "--kl-base %s", err);
            p.kl_base = v;
        } else if (cli_opt(argc, argv, &i, "-t", &v, &err) || cli_opt(argc, argv, &i, "--threads", &v, &err)) {
            if (err) return cli_usage(cmd, "-t %s", err);
            if (parse_u32(cmd, "-t", v, 1, 1024, &threads)) return CLI_USAGE;
        } else if (cli_opt_kv(argc, argv, &i, cmd, &p.kv_type, &p.kv_type_v, &drc)) {
            if (drc) return drc;
        } else if (cli_opt_flash(argc, argv, &i, cmd, &flash, &drc)) {
            if (drc) return drc;
        } else if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (!strcmp(argv[i], "--quiet")) {
            quiet = true;
        } else {
            return cli_usage(cmd, "unknown argument '%s'", argv[i]);
        }
    }
    if (!model) return cli_usage(cmd, "needs --model");
    if (!file) return cli_usage(cmd, "needs --file TEXT");
    if (p.save_logits && p.kl_base) return cli_usage(cmd, "--save-logits and --kl-base do not go together");
    if (p.save_type && !p.save_logits) return cli_usage(cmd, "--logits-type goes with --save-logits");
    p.n_threads = (int)threads;
    p.flash_attn = cli_flash_auto(flash, p.kv_type, p.kv_type_v);

    pocketllm_model_params mp = pocketllm_model_default_params();
    mp.n_threads = (int)threads;
    if ((drc = cli_device_params(cmd, &dev, &mp))) return drc;
    size_t len;
    char *text = eval_read_text(file, &len);
    if (!text) return cli_error(cmd, "cannot read %s: %s", file, errno == EFBIG ? "larger than 256 MiB" : strerror(errno));
    pocketllm_model *m;
    pocketllm_status st = pocketllm_model_open(model, &mp, &m);
    if (st) {
        free(text);
        return cli_lib_error(cmd, st);
    }
    eval_progress prog = {cmd, quiet, 0};
    p.progress = eval_progress_cb;
    p.progress_user = &prog;
    pocketllm_perplexity_result r;
    st = pocketllm_perplexity(m, text, len, &p, &r);
    free(text);
    pocketllm_model_close(m);
    if (st) return cli_lib_error(cmd, st);

    if (json) {
        printf("{\"tokens\": %llu, \"ctx\": %u, \"chunks\": %u, \"scored\": %llu, \"ppl\": %.17g, \"ppl_err\": %.17g",
               (unsigned long long)r.n_tokens, r.n_ctx, r.n_chunks, (unsigned long long)r.n_scored, r.ppl, r.ppl_err);
        if (r.has_kl)
            printf(", \"ppl_base\": %.17g, \"kl_mean\": %.17g, \"kl_err\": %.17g, \"kl_median\": %.17g, "
                   "\"kl_p90\": %.17g, \"kl_p99\": %.17g, \"kl_max\": %.17g, \"top1\": %.17g, \"top1_err\": %.17g",
                   r.ppl_base, r.kl_mean, r.kl_err, r.kl_median, r.kl_p90, r.kl_p99, r.kl_max, r.top1, r.top1_err);
        printf("}\n");
        return CLI_OK;
    }
    printf("perplexity: %.4f +/- %.5f over %llu positions (%u windows of %u tokens; the text has %llu tokens)\n",
           r.ppl, r.ppl_err, (unsigned long long)r.n_scored, r.n_chunks, r.n_ctx, (unsigned long long)r.n_tokens);
    if (r.has_kl) {
        printf("base perplexity: %.4f\n", r.ppl_base);
        printf("KL divergence: mean %.6f +/- %.6f, median %.6f, 90%% %.6f, 99%% %.6f, max %.6f\n", r.kl_mean, r.kl_err,
               r.kl_median, r.kl_p90, r.kl_p99, r.kl_max);
        printf("top-1 agreement: %.3f%% +/- %.3f%%\n", 100 * r.top1, 100 * r.top1_err);
    }
    if (p.save_logits) printf("saved log-probabilities to %s\n", p.save_logits);
    return CLI_OK;
}
