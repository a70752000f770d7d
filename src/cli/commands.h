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

#endif
