/*
 * cmd_imatrix.c -- `pocketllm imatrix`: the importance matrix of a model
 * over a text, in llama.cpp's GGUF imatrix format, for `pocketllm quantize
 * --imatrix` (and llama-quantize) to spend the bits of the low-width types
 * where the activations are large -- per expert for a mixture of experts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "eval_common.h"

const char cmd_imatrix_usage[] =
    "usage: pocketllm imatrix --model M --file TEXT --out F [--ctx N] [--chunks N]\n"
    "                         [--process-output] [--parse-special] [-t N] [--device D]\n"
    "                         [--device-memory S] [--quiet]\n\n"
    "Run the model over a text and collect, for every weight matrix it multiplies by, the sum of\n"
    "the squares of each input column over all tokens and the token count: the importance matrix\n"
    "llama.cpp's llama-imatrix collects, written in its GGUF format (tensors <weight>.in_sum2 and\n"
    "<weight>.counts, keys imatrix.datasets, imatrix.chunk_count, imatrix.chunk_size), which\n"
    "'pocketllm quantize --imatrix' and llama-quantize read.  As llama-imatrix: the text is cut\n"
    "into windows of --ctx tokens (at least two), each with BOS first when the vocabulary adds one;\n"
    "every position goes through every layer; matrices named blk.* are collected (the token\n"
    "embeddings are looked up, not multiplied).  The perplexity of the same pass is printed.\n\n"
    "A mixture-of-experts model (qwen3moe, qwen2moe) gets one row of sums and one count per\n"
    "expert for each 3-D expert tensor (ffn_gate_exps, ffn_up_exps, ffn_down_exps): every token\n"
    "adds its input to the rows of the experts the router chose for it, as llama-imatrix collects\n"
    "MUL_MAT_ID (in_sum2 [columns, experts], counts [1, experts]).  An expert no token reached\n"
    "keeps a count of 0, which the quantizers read as even weights; a longer text reaches more of\n"
    "them.  The router (ffn_gate_inp) and qwen2moe's shared expert are collected as matrices.\n\n"
    "  --model M, -m M      the model (f32/f16/bf16 gives the statistics a quantizer wants)\n"
    "  --file TEXT, -f TEXT the calibration text (UTF-8, at most 256 MiB)\n"
    "  --out F, -o F        where the imatrix goes (written atomically)\n"
    "  --ctx N, -c N        window size in tokens (default 512, as llama-imatrix; at least 16)\n"
    "  --chunks N           use only the first N windows\n"
    "  --process-output     collect output.weight too (llama-imatrix --process-output)\n"
    "  --parse-special      special-token text in the file becomes its token\n"
    "  -t N                 threads (default: the physical cores)\n"
    CLI_DEVICE_HELP
    "  --quiet              no progress on stderr\n";

int cmd_imatrix(int argc, char **argv) {
    const char *cmd = "imatrix";
    const char *model = NULL, *file = NULL, *out = NULL, *v, *err = NULL;
    bool quiet = false;
    pocketllm_imatrix_params p = pocketllm_imatrix_default_params();
    int64_t n;
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
        } else if (cli_opt(argc, argv, &i, "--out", &v, &err) || cli_opt(argc, argv, &i, "-o", &v, &err)) {
            if (err) return cli_usage(cmd, "--out %s", err);
            out = v;
        } else if (cli_opt(argc, argv, &i, "--ctx", &v, &err) || cli_opt(argc, argv, &i, "-c", &v, &err)) {
            if (err) return cli_usage(cmd, "--ctx %s", err);
            if (!cli_parse_i64(v, 16, 1 << 20, &n)) return cli_usage(cmd, "--ctx wants a window of 16..1048576 tokens, not '%s'", v);
            p.n_ctx = (uint32_t)n;
        } else if (cli_opt(argc, argv, &i, "--chunks", &v, &err)) {
            if (err) return cli_usage(cmd, "--chunks %s", err);
            if (!cli_parse_i64(v, 1, 1 << 30, &n)) return cli_usage(cmd, "--chunks wants a window count, not '%s'", v);
            p.max_chunks = (uint32_t)n;
        } else if (cli_opt(argc, argv, &i, "-t", &v, &err) || cli_opt(argc, argv, &i, "--threads", &v, &err)) {
            if (err) return cli_usage(cmd, "-t %s", err);
            if (!cli_parse_i64(v, 1, 1024, &n)) return cli_usage(cmd, "-t wants a thread count 1..1024, not '%s'", v);
            p.n_threads = (int)n;
        } else if (!strcmp(argv[i], "--process-output")) {
            p.process_output = 1;
        } else if (!strcmp(argv[i], "--parse-special")) {
            p.parse_special = 1;
        } else if (!strcmp(argv[i], "--quiet")) {
            quiet = true;
        } else {
            return cli_usage(cmd, "unknown argument '%s'", argv[i]);
        }
    }
    if (!model) return cli_usage(cmd, "needs --model");
    if (!file) return cli_usage(cmd, "needs --file TEXT");
    if (!out) return cli_usage(cmd, "needs --out FILE");

    pocketllm_model_params mp = pocketllm_model_default_params();
    mp.n_threads = p.n_threads;
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
    p.dataset = file;
    double ppl = 0;
    st = pocketllm_imatrix(m, text, len, &p, out, &ppl);
    free(text);
    pocketllm_model_close(m);
    if (st) return cli_lib_error(cmd, st);
    /* what went into the file, read back */
    pocketllm_gguf *g;
    if ((st = pocketllm_gguf_open(out, &g))) return cli_lib_error(cmd, st);
    uint64_t chunks = 0;
    const pocketllm_gguf_value *cv = pocketllm_gguf_find(g, "imatrix.chunk_count");
    if (cv) pocketllm_gguf_value_u64(cv, &chunks);
    printf("imatrix: wrote %s: %llu matrices over %llu windows of %u tokens (perplexity %.4f)\n", out,
           (unsigned long long)(pocketllm_gguf_tensor_count(g) / 2), (unsigned long long)chunks, p.n_ctx, ppl);
    pocketllm_gguf_close(g);
    return CLI_OK;
}
