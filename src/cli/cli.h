/*
 * cli.h -- what every command of the pocketllm CLI shares: the command
 * table, exit codes, argument parsing helpers and output formatting.
 * Exit codes: 0 success, 1 runtime error, 2 usage error.
 */
#ifndef PL_CLI_H
#define PL_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pocketllm.h"

enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

typedef struct cli_command {
    const char *name;
    const char *summary;
    const char *usage; /* full --help text */
    int (*run)(int argc, char **argv); /* argv[0] is the command name */
} cli_command;

/* Every command, in help order (defined in main.c). */
extern const cli_command cli_commands[];
const cli_command *cli_find(const char *name);

/* Print the command's usage to stdout (for --help). */
int cli_help(const char *cmd);
/* "pocketllm CMD: <message>" plus a pointer to --help on stderr; returns 2. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "pocketllm CMD: error: <message>" on stderr; returns 1. */
int cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Report a failed library call with its last-error message; returns 1. */
int cli_lib_error(const char *cmd, pocketllm_status st);

/* A whole file ("-" = stdin, at most 64 MiB, no NUL bytes), NUL-terminated,
 * malloc'd; *len its bytes (len may be NULL).  NULL with the reason printed. */
char *cli_slurp(const char *cmd, const char *path, size_t *len);

/* True when argv holds -h or --help. */
bool cli_wants_help(int argc, char **argv);

/* Value of an option at argv[*i] ("--opt VALUE" or "--opt=VALUE"); on a
 * match advances *i past the value and returns true.  A missing value is
 * reported through *err (set to a message) and still returns true. */
bool cli_opt(int argc, char **argv, int *i, const char *name, const char **value, const char **err);

/* Strict number parsing with range checks; false on any junk. */
bool cli_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out);
/* The median of v[0..n) (n >= 1), which it sorts. */
double cli_median(double *v, size_t n);
bool cli_parse_f64(const char *s, double lo, double hi, double *out);
/* --flash-attn (or -fa) VALUE at argv[*i]: true when it is that option
 * (*i moved past the value).  *on gets 1 for "on", 0 for "off"; for a bad
 * or missing value the usage is printed and *rc is its exit code (else 0). */
bool cli_opt_flash(int argc, char **argv, int *i, const char *cmd, int *on, int *rc);
/* The KV cache's types at argv[*i]: --kv T (K and V), -ctk/--cache-type-k
 * T (K only; V keeps what it was), -ctv/--cache-type-v T (V).  *k and *v
 * are ggml type ids, *v POCKETLLM_KV_AS_K while it follows K.  True when
 * it is one of them; a bad or missing value prints the usage, *rc its exit
 * code (else 0). */
bool cli_opt_kv(int argc, char **argv, int *i, const char *cmd, uint32_t *k, uint32_t *v, int *rc);
/* The attention path once the options are read: --flash-attn as given
 * (0 or 1), or, not given (< 0), on exactly when V is quantized -- as
 * llama.cpp's auto, since it needs flash for a quantized V. */
int cli_flash_auto(int flash, uint32_t k, uint32_t v);
#define CLI_KV_HELP                                                                                                     \
    "  --kv T, -ctk T, -ctv T  KV cache type of K and V, of K, of V: f16 (default), bf16, f32, q8_0,\n"               \
    "                      q4_0, q4_1, q5_0, q5_1, iq4_nl (kept packed; a block type needs heads of a\n"             \
    "                      multiple of 32, and a quantized V turns --flash-attn on unless it is set off)\n"

/* The device a command opens its model on. */
typedef struct cli_device {
    const char *name; /* NULL: the CPU */
    uint64_t memory;  /* --device-memory (0: all the device has) */
} cli_device;
/* --device NAME or --device-memory SIZE at argv[*i]: true when it is one
 * (*i moved past the value); a bad value prints the usage and sets *rc. */
bool cli_opt_device(int argc, char **argv, int *i, const char *cmd, cli_device *d, int *rc);
/* Fill the model parameters' device fields (and the upload's progress
 * line); POCKETLLM_DEVICE_MEMORY stands in for --device-memory.  0 or the
 * usage exit code. */
int cli_device_params(const char *cmd, const cli_device *d, pocketllm_model_params *mp);
/* The same for the model a server or chat opens (src/server/srv_model.h). */
struct srv_model_params;
int cli_device_srv_params(const char *cmd, const cli_device *d, struct srv_model_params *mp);
/* The device the model runs on, for a status line: "" on the CPU, else
 * ", on vulkan:0 (NAME)" (a static buffer). */
const char *cli_device_suffix(const pocketllm_model *m);
/* The --help lines of the two options. */
#define CLI_DEVICE_HELP                                                                                                \
    "  --device D         cpu (default), vulkan (the first usable GPU) or vulkan:N\n"                                    \
    "                     (see 'pocketllm devices'); the model must fit the device\n"                                    \
    "  --device-memory S  use at most S bytes of the device (512M, 4G): play a smaller\n"                               \
    "                     device (also POCKETLLM_DEVICE_MEMORY)\n"

/* Sizes such as 512M, 4GiB, 8G, 1000000 (bytes). */
bool cli_parse_size(const char *s, uint64_t *out);

/* "1.5 GiB" style. */
const char *cli_fmt_bytes(uint64_t bytes, char *buf, size_t len);

/* Copy of s (n bytes) where every invalid UTF-8 sequence is replaced by
 * U+FFFD, so it can go into JSON; caller frees. */
char *cli_utf8_clean(const char *s, size_t n);

/* Write s (n bytes) to f with control characters escaped (\n, \xNN). */
void cli_print_escaped(void *file, const char *s, size_t n, size_t max);

#endif
