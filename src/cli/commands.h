/*
 * commands.h -- entry points and --help texts of the CLI commands, one
 * source file each.
 */
#ifndef PL_COMMANDS_H
#define PL_COMMANDS_H

int cmd_inspect(int argc, char **argv);
int cmd_devices(int argc, char **argv);
int cmd_backends(int argc, char **argv);
int cmd_architectures(int argc, char **argv);
int cmd_ops(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_synth(int argc, char **argv);

#define CMD_HELP_USAGE \
    "usage: pocketllm help [COMMAND]\n\nList the commands, or show the help of one.\n"

#define CMD_INSPECT_USAGE                                                                            \
    "usage: pocketllm inspect MODEL.gguf [--json] [--tensors]\n\n"                                   \
    "Show what a GGUF file holds: format version, architecture, hyperparameters, tokenizer model\n"  \
    "and vocabulary size, tensor count, bytes per tensor type and in total.  Works on\n"           \
    "vocabulary-only files.  The whole file is validated first; a malformed file is refused with\n" \
    "one line naming the problem and its byte offset (exit 1).\n\n"                                 \
    "  --tensors   also list every tensor: name, type, shape, file offset, bytes\n"               \
    "  --json      print one JSON object instead of text\n"

#define CMD_DEVICES_USAGE                                                                           \
    "usage: pocketllm devices [--json]\n\n"                                                         \
    "Show what this host can open: the CPU (model, physical cores, memory, SIMD features) and,\n"  \
    "probed through the driver library without needing CUDA installed, whether an NVIDIA driver\n" \
    "and devices are present -- or why not.\n\n"                                                    \
    "  --json      print one JSON object instead of text\n"

#define CMD_BACKENDS_USAGE                                                                          \
    "usage: pocketllm backends [--json]\n\n"                                                        \
    "List every backend with its state: 'implemented' (built into this binary) or 'declared'\n"    \
    "(planned; the note names the runtime it waits for).\n\n"                                       \
    "  --json      print a JSON array instead of text\n"

#define CMD_ARCHITECTURES_USAGE                                                                     \
    "usage: pocketllm architectures [--json]\n\n"                                                   \
    "List the model architectures (GGUF general.architecture) this build can run.\n\n"             \
    "  --json      print a JSON array instead of text\n"

#define CMD_OPS_USAGE                                                                               \
    "usage: pocketllm ops [--op NAME] [--device BACKEND] [--json]\n\n"                              \
    "List the op vocabulary of the kernel ABI and, for each backend, which ops it implements;\n"   \
    "ops that take a weight tensor are listed per weight type.\n\n"                                 \
    "  --op NAME         only this op\n"                                                            \
    "  --device BACKEND  only this backend (cpu, cuda, ...; see 'pocketllm backends')\n"           \
    "  --json            print JSON instead of text\n"

#define CMD_SYNTH_USAGE                                                                                  \
    "usage: pocketllm synth [--arch qwen3|llama] --shape NAME [--type f32|f16|bf16] [--untied]\n"        \
    "                       [--seed N] [--vocab FILE.gguf] [--template FILE] [--quiet] OUT.gguf\n"       \
    "       pocketllm synth ... --n-embd N --n-layer N --n-head N --n-head-kv N --head-dim N --n-ff N OUT\n\n" \
    "Write a checkpoint with random weights at a model shape: to size and benchmark a shape before\n"   \
    "downloading it, and to test the engine at real shapes.  Same arguments, same bytes.\n\n"           \
    "Shapes: tiny, small (ours, for tests), qwen3-0.6b, qwen3-1.7b, qwen3-4b, qwen3-8b (the real\n"     \
    "Qwen3 hyperparameters, vocabulary 151936).  Explicit dimensions override a named shape's\n"         \
    "(e.g. --shape qwen3-8b --n-layer 2 keeps the 8B widths at two layers).\n\n"                          \
    "  --arch A        qwen3 (default: per-head QK norm) or llama\n"                                       \
    "  --type T        weight matrices in f32 (default), f16 or bf16; norm weights stay f32\n"              \
    "  --untied        write a separate output.weight (default: tied to token_embd)\n"                    \
    "  --seed N        generator seed (default 0)\n"                                                      \
    "  --vocab FILE    copy the tokenizer from this GGUF (e.g. a ggml-vocab-qwen2.gguf); default: a\n"    \
    "                  built-in byte-level vocabulary (256 bytes + 3 Qwen control tokens)\n"             \
    "  --template FILE embed this chat template as tokenizer.chat_template\n"                              \
    "  --quiet         no progress on stderr\n"

#endif
