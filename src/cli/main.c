/*
 * main.c -- the pocketllm command line: dispatch to one file per command,
 * `pocketllm help`, `pocketllm CMD --help`, `pocketllm --version`.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

const cli_command cli_commands[] = {
    {"run", "generate text from a prompt (greedy or sampled), streaming it", CMD_RUN_USAGE, cmd_run},
    {"logits", "write the logits of every position of a prompt to a file", CMD_LOGITS_USAGE, cmd_logits},
    {"inspect", "show what a GGUF file holds: architecture, hyperparameters, tokenizer, tensors",
     CMD_INSPECT_USAGE, cmd_inspect},
    {"devices", "show what this host can run on: CPU, memory, SIMD features, CUDA and Vulkan devices",
     CMD_DEVICES_USAGE, cmd_devices},
    {"backends", "list every backend and whether this build implements it", CMD_BACKENDS_USAGE, cmd_backends},
    {"architectures", "list the model architectures the engine can run", CMD_ARCHITECTURES_USAGE,
     cmd_architectures},
    {"ops", "list the kernel ops and which backend implements each, per weight type", CMD_OPS_USAGE, cmd_ops},
    {"tokenize", "turn text into the checkpoint's token ids (as llama.cpp does), or show their pieces",
     CMD_TOKENIZE_USAGE, cmd_tokenize},
    {"synth", "write a random-weight checkpoint at a named or explicit model shape", CMD_SYNTH_USAGE, cmd_synth},
    {"quantize", "quantize a checkpoint to a llama.cpp recipe (Q4_K_M, IQ2_XS, ...) or one tensor type",
     CMD_QUANTIZE_USAGE, cmd_quantize},
    {"perplexity", "perplexity over a text as llama-perplexity computes it; KL divergence against a base model",
     CMD_PERPLEXITY_USAGE, cmd_perplexity},
    {"imatrix", "collect the importance matrix of a model over a text (llama.cpp's imatrix format)",
     CMD_IMATRIX_USAGE, cmd_imatrix},
    {"fit", "pick the best rung of the width ladder that fits a memory budget, and write it", CMD_FIT_USAGE, cmd_fit},
    {"template", "render a chat template (a model's or a file) for a conversation, as jinja2 does",
     CMD_TEMPLATE_USAGE, cmd_template},
    {"serve", "serve the model over HTTP with OpenAI's API (chat, completions, streaming, batching)",
     CMD_SERVE_USAGE, cmd_serve},
    {"chat", "chat with the model in the terminal, with its chat template and streaming", CMD_CHAT_USAGE, cmd_chat},
    {"transcribe", "transcribe a recording with a Qwen3-ASR model (speech to text)", CMD_TRANSCRIBE_USAGE,
     cmd_transcribe},
    {"embed", "embed texts: the model's pooled final hidden states, as llama.cpp's embeddings", CMD_EMBED_USAGE,
     cmd_embed},
    {"bench", "measure prompt and generation speed as llama-bench does, with the memory-bandwidth bound",
     CMD_BENCH_USAGE, cmd_bench},
    {"help", "show this list, or the help of one command", CMD_HELP_USAGE, cmd_help},
    {NULL, NULL, NULL, NULL},
};

static void print_overview(FILE *f) {
    fprintf(f, "PocketLLM %s -- run a large language model on one device.\n\n", pocketllm_version_string());
    fprintf(f, "usage: pocketllm COMMAND [ARGS]\n\ncommands:\n");
    for (const cli_command *c = cli_commands; c->name; c++) fprintf(f, "  %-14s %s\n", c->name, c->summary);
    fprintf(f, "\n'pocketllm COMMAND --help' describes a command.  Exit status: 0 success, 1 runtime error,\n"
               "2 usage error.\n");
}

int cmd_help(int argc, char **argv) {
    if (argc > 2) return cli_usage("help", "takes at most one command name");
    if (argc == 2) {
        if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) return cli_help("help");
        if (!cli_find(argv[1])) return cli_usage("help", "unknown command '%s'", argv[1]);
        return cli_help(argv[1]);
    }
    print_overview(stdout);
    return CLI_OK;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        print_overview(stderr);
        return CLI_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) return cmd_help(1, argv + 1);
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        uint32_t abi = pocketllm_abi_version();
        printf("pocketllm %s (ABI %u.%u)\n", pocketllm_version_string(), abi >> 16, abi & 0xffff);
        return CLI_OK;
    }
    const cli_command *c = cli_find(name);
    if (!c) {
        fprintf(stderr, "pocketllm: unknown command '%s' (see 'pocketllm help')\n", name);
        return CLI_USAGE;
    }
    if (c->run != cmd_help && cli_wants_help(argc - 1, argv + 1)) return cli_help(name);
    return c->run(argc - 1, argv + 1);
}
