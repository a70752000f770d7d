/*
 * commands.h -- entry points and --help texts of the CLI commands, one
 * source file each.
 */
#ifndef PL_COMMANDS_H
#define PL_COMMANDS_H

int cmd_run(int argc, char **argv);
int cmd_logits(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_devices(int argc, char **argv);
int cmd_backends(int argc, char **argv);
int cmd_architectures(int argc, char **argv);
int cmd_ops(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_synth(int argc, char **argv);
int cmd_quantize(int argc, char **argv);
int cmd_template(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_chat(int argc, char **argv);

/* serve's and chat's --help texts are in their files (serve's includes the
 * request-field table of src/server/srv_request.h) */
extern const char cmd_serve_usage[];
extern const char cmd_chat_usage[];
#define CMD_SERVE_USAGE cmd_serve_usage
#define CMD_CHAT_USAGE cmd_chat_usage

/* the evaluation commands keep their --help texts in their files too */
int cmd_perplexity(int argc, char **argv);
int cmd_imatrix(int argc, char **argv);
int cmd_fit(int argc, char **argv);
extern const char cmd_perplexity_usage[];
extern const char cmd_imatrix_usage[];
extern const char cmd_fit_usage[];
#define CMD_PERPLEXITY_USAGE cmd_perplexity_usage
#define CMD_IMATRIX_USAGE cmd_imatrix_usage
#define CMD_FIT_USAGE cmd_fit_usage

/* transcribe keeps its --help text in its file */
int cmd_transcribe(int argc, char **argv);
extern const char cmd_transcribe_usage[];
#define CMD_TRANSCRIBE_USAGE cmd_transcribe_usage

/* embed keeps its --help text in its file */
int cmd_embed(int argc, char **argv);
extern const char cmd_embed_usage[];
#define CMD_EMBED_USAGE cmd_embed_usage

/* bench keeps its --help text in its file */
int cmd_bench(int argc, char **argv);
extern const char cmd_bench_usage[];
#define CMD_BENCH_USAGE cmd_bench_usage

#define CMD_HELP_USAGE \
    "usage: pocketllm help [COMMAND]\n\nList the commands, or show the help of one.\n"

#define CMD_TOKENIZE_USAGE                                                                               \
    "usage: pocketllm tokenize --model M (--text T | --file F) [--no-special] [--no-bos] [--pieces]\n\n" \
    "Turn text into the token ids of the model's own tokenizer (tokenizer.ggml.*), the ids\n"           \
    "llama.cpp's llama_tokenize gives: printed space-separated on one line.  Works on\n"                \
    "vocabulary-only GGUFs.  BOS (and EOS) are added as the vocabulary asks, and special tokens\n"     \
    "written in the text (<|im_start|>, <s>, ...) become their ids, unless told otherwise.\n\n"         \
    "  --model M     the GGUF file (a checkpoint or a vocabulary)\n"                                   \
    "  --text T      the text to tokenize\n"                                                          \
    "  --file F      read the text from F ('-' = standard input), byte for byte\n"                     \
    "  --no-special  special-token text is plain text (llama.cpp: parse_special = false)\n"           \
    "  --no-bos      add no BOS/EOS (llama.cpp: add_special = false)\n"                               \
    "  --pieces      one token per line: the id, a tab, and its text in quotes (as\n"                \
    "                llama_token_to_piece renders it; control characters and bytes that are\n"        \
    "                not whole UTF-8 characters escaped as \\xNN)\n"

#define CMD_INSPECT_USAGE                                                                            \
    "usage: pocketllm inspect MODEL.gguf [--json] [--tensors]\n\n"                                   \
    "Show what a GGUF file holds: format version, architecture, hyperparameters, tokenizer model\n"  \
    "and vocabulary size, tensor count, bytes per tensor type and in total.  Works on\n"           \
    "vocabulary-only files.  The whole file is validated first; a malformed file is refused with\n" \
    "one line naming the problem and its byte offset (exit 1).\n\n"                                 \
    "  --tensors   also list every tensor: name, type, shape, file offset, bytes\n"               \
    "  --json      print one JSON object instead of text\n"

#define CMD_DEVICES_USAGE                                                                            \
    "usage: pocketllm devices [--json]\n\n"                                                          \
    "Show what this host can open: the CPU (model, physical cores, memory, SIMD features);\n"       \
    "probed through the driver library without needing CUDA installed, whether an NVIDIA driver\n"  \
    "and devices are present -- or why not; and the Vulkan devices, through the Vulkan loader\n"    \
    "(libvulkan.so.1, opened at run time; POCKETLLM_VULKAN_LOADER names another file): the\n"      \
    "loader and its instance version, then per device its id for --device (vulkan:N), name,\n"    \
    "type, driver, Vulkan version, device-local memory (the budget a model gets there) and every\n" \
    "memory heap, subgroup size, fp16, int8 dot product (and whether the driver calls it\n"        \
    "accelerated), cooperative matrix (KHR, NV), and whether the backend can run on it or why\n"   \
    "not -- or why there is no Vulkan device.\n\n"                                                 \
    "  --json      print one JSON object instead of text (keys cpu, cuda, vulkan)\n"

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
    "  --device BACKEND  only this backend (cpu, vulkan, cuda, ...; see 'pocketllm backends')\n"           \
    "  --json            print JSON instead of text\n"

#define CMD_RUN_USAGE                                                                                     \
    "usage: pocketllm run --model M (--prompt T | --ids \"1 2 3\") [-n N] [--temperature F] [--top-k K]\n" \
    "                     [--top-p P] [--min-p P] [--seed S] [-t N] [--ctx N] [--print-ids]\n"            \
    "                     [--kv T] [-ctk T] [-ctv T] [--flash-attn on|off]\n"                             \
    "                     [--mmproj P --image F [--image F2 ...] [--image-min-tokens N]\n"              \
    "                     [--image-max-tokens N]] [--mmproj P --audio F ...]\n"                          \
    "                     [--device D] [--device-memory S]\n"                                              \
    "                     [(--lookup N | --draft M) [--draft-max N] [--draft-min N]]\n\n"                  \
    "Generate text: the prompt is tokenized as llama.cpp's llama_tokenize(add_special=true,\n"            \
    "parse_special=true) does, evaluated in one batched prefill, then tokens are sampled one at a\n"     \
    "time and their text streamed to stdout, until an end-of-generation token, N tokens, or a full\n"   \
    "context (said on stderr).  A prompt longer than the context is an error (exit 1).\n\n"               \
    "With images (a Qwen3-VL model): each <__media__> in the prompt is where the next --image\n"        \
    "goes; a prompt without one gets one per image in front of it (as llama.cpp's mtmd-cli).\n"       \
    "The prompt is composed and evaluated as llama.cpp's libmtmd does it: the text between\n"         \
    "markers tokenized piece by piece, each image as <|vision_start|>, its tokens from the\n"          \
    "vision tower, <|vision_end|>.  A marker count that differs from the images is an error.\n"        \
    "With audio (a Qwen3-ASR model, --audio with its mmproj) the same: each clip goes to a\n"          \
    "marker, as <|audio_start|>, its tokens from the audio tower, <|audio_end|>; images and\n"        \
    "clips take the markers in the order given on the command line.\n\n"                              \
    "  --model M, -m M        the GGUF checkpoint (llama, qwen2, qwen3, qwen3vl; see 'pocketllm\n"      \
    "                         architectures')\n"                                                          \
    "  --prompt T, -p T       the prompt text\n"                                                          \
    "  --ids \"1 2 3\"          the prompt as token ids instead of text\n"                                \
    "  --mmproj P             the vision and/or audio tower (an mmproj GGUF) for --image/--audio\n"      \
    "  --image F              an image (JPEG, PNG or WebP); repeat for more, in prompt order\n"         \
    "  --audio F              an audio clip (WAV, FLAC, MP3, Ogg...; made mono 16 kHz); repeatable\n"  \
    "  --image-min-tokens N   an image's token budget, as llama.cpp's options (defaults 8 and\n"       \
    "  --image-max-tokens N   4096): smaller images are scaled up, larger ones down\n"               \
    "  -n N                   tokens to generate at most (default 128)\n"                                 \
    "  --temperature F        0 (the default) is greedy: the most likely token every time\n"             \
    "  --top-k K              keep the K most likely (default 40; 0 = off)\n"                             \
    "  --top-p P              keep the most likely tokens up to probability P (default 0.95; 1 = off)\n"    \
    "  --min-p P              drop tokens below P x the most likely's probability (default 0.05; 0 = off)\n" \
    "  --repeat-penalty F     penalise recent tokens: logits divided (or, negative, multiplied) by F\n"   \
    "  --presence-penalty F   subtract F from the logit of every recent token\n"                         \
    "  --frequency-penalty F  subtract F per occurrence of a recent token\n"                             \
    "  --repeat-last-n N      how many recent tokens the penalties see (default 64; -1 = all)\n"         \
    "  --seed S               seed of the sampler (default: from the clock); same seed, same text\n"     \
    "  --grammar FILE         constrain the text to a GBNF grammar (llama.cpp's dialect, start\n"      \
    "                         rule root): only tokens that keep it a prefix of a match are drawn,\n"  \
    "                         and generation ends once it is a whole match that cannot go on\n"      \
    "  --json-schema FILE     constrain the text to JSON valid against the schema in FILE (a\n"      \
    "                         keyword the compiler cannot honour is refused by name); '{}' = any\n" \
    "                         JSON value.  With either, -n is a budget the text is completed in\n"   \
    "                         when it can be (a token is taken only if the rest still fits)\n"       \
    "  -t N, --threads N      threads (default: the physical cores)\n"                                    \
    "  --ctx N, -c N          context positions (default: the model's, at most 4096)\n"                  \
    "  --batch N, -b N        most tokens per forward pass of the prefill (default 512)\n"               \
    CLI_KV_HELP                                                                                            \
    "  --flash-attn on|off, -fa on|off\n"                                                                  \
    "                         attention by llama.cpp's flash-attention arithmetic (its -fa on), to\n"     \
    "                         match llama.cpp run that way (default off: its other path, faster here)\n" \
    CLI_DEVICE_HELP                                                                                        \
    "  --print-ids            print the prompt ids on one line (an image token as -1) and the\n"      \
    "                         generated ids (the ending end-of-generation id included) on the\n"      \
    "                         next, instead of the text\n"                                            \
    "  --timings              speeds of the prefill and of the generation on stderr\n"            \
    "  --lookup N             speculative decoding by prompt lookup: after each token, the\n"        \
    "                         tokens that followed the latest earlier occurrence of the text's\n"  \
    "                         last N..1 tokens are drafted and verified in one pass (N 1..8)\n"    \
    "  --draft M, -md M       speculative decoding with a draft model: a smaller model with the\n"  \
    "                         same vocabulary, on the same device, drafts the next tokens and\n"   \
    "                         the model verifies them in one pass.  With either, greedy output\n"  \
    "                         is plain greedy's, token for token; sampled output is distributed\n" \
    "                         as plain sampling's (speculative sampling's acceptance rule), and\n" \
    "                         under --grammar / --json-schema it is plain sampling's draw for\n"   \
    "                         draw from the same seed (each row drawn once, in order)\n"           \
    "  --draft-max N          tokens drafted at most per step (default 8)\n"                        \
    "  --draft-min N          a shorter draft is not verified (default 1)\n"

#define CMD_LOGITS_USAGE                                                                                  \
    "usage: pocketllm logits --model M (--prompt T | --ids \"1 2 3\") --out FILE [-t N] [--ctx N]\n"    \
    "                        [--batch N] [--kv T] [-ctk T] [-ctv T] [--flash-attn on|off] [--device D]\n" \
    "                        [--device-memory S] [--routing FILE]\n\n"                                    \
    "Evaluate the prompt (tokenized as 'pocketllm run' does, or given as ids) and write the\n"           \
    "float32 logits of every position to FILE, row-major: positions x vocabulary, native byte\n"        \
    "order.  Prints \"POSITIONS VOCABULARY\" on stdout.\n\n"                                              \
    "  --out FILE, -o FILE    where the logits go\n"                                                      \
    "  --routing FILE         a mixture of experts: the experts its router chose, one line\n"               \
    "                         \"POSITION LAYER EXPERT...\" per position and layer (router's order)\n"       \
    "  -t N, --ctx N, --batch N, --kv/-ctk/-ctv T, --flash-attn on|off   as for 'pocketllm run'\n"        \
    CLI_DEVICE_HELP

/* (the text is in cmd_synth.c) */
extern const char cmd_synth_usage[];
#define CMD_SYNTH_USAGE cmd_synth_usage

/* (the text is in cmd_quantize.c) */
extern const char cmd_quantize_usage[];
#define CMD_QUANTIZE_USAGE cmd_quantize_usage

#define CMD_TEMPLATE_USAGE                                                                                 \
    "usage: pocketllm template (--model M.gguf [--name NAME] | --file T.jinja) [--messages FILE.json]\n"  \
    "                          [--add-generation-prompt] [--enable-thinking true|false] [--tools FILE]\n"  \
    "                          [--vars FILE] [--bos TEXT] [--eos TEXT] [--now YYYY-MM-DDTHH:MM:SS]\n"      \
    "                          [--split-reasoning FILE]\n\n"                                               \
    "Render a chat template for a conversation and print the prompt, byte for byte what Python's\n"      \
    "jinja2 renders for Hugging Face's apply_chat_template.  The template is the model's\n"              \
    "tokenizer.chat_template (--model; --name picks tokenizer.chat_template.NAME, e.g. tool_use) or\n"  \
    "a file.  Without --messages the template is only checked: exit 0 when it can be rendered,\n"       \
    "1 with the construct that cannot (and its line and column) named.  A conversation the template\n"  \
    "rejects (raise_exception, or any error jinja2 raises too) fails with its message (exit 1).\n\n"   \
    "  --messages FILE          JSON array of messages, e.g. [{\"role\":\"user\",\"content\":\"Hi\"}];\n" \
    "                           '-' reads stdin\n"                                                        \
    "  --add-generation-prompt  end with the opening of the assistant's turn\n"                            \
    "  --enable-thinking B      pass enable_thinking=B (Qwen3 and others); unset by default\n"              \
    "  --tools FILE             JSON array of tool definitions (the template's `tools`; None without)\n" \
    "  --vars FILE              JSON object of more template variables (e.g. reasoning_effort)\n"        \
    "  --bos TEXT, --eos TEXT   bos_token / eos_token (default: the model's tokens with --model,\n"     \
    "                           otherwise not passed)\n"                                                 \
    "  --now TIME               the local time strftime_now() renders (default: the clock)\n"          \
    "  --split-reasoning FILE   instead of the prompt, print {\"content\":..., \"reasoning_content\":...}:\n" \
    "                           the generated reply in FILE split at its <think>...</think> block, as\n"  \
    "                           the template splits it (with --messages, the rendered prompt tells\n"    \
    "                           whether the reply began inside an open think block)\n"

#endif
