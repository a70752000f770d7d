/*
 * run_common.h -- what `pocketllm run` and `pocketllm logits` share: the
 * model/prompt/session options, opening the model, turning the prompt into
 * ids, and making the session (with the context check).
 */
#ifndef PL_CLI_RUN_COMMON_H
#define PL_CLI_RUN_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "pocketllm.h"

typedef struct run_common {
    const char *model, *prompt, *ids;
    int64_t n_threads, n_ctx, n_batch;
    uint32_t kv_type, kv_type_v; /* --kv, -ctk, -ctv (cli_opt_kv) */
    int flash_attn; /* --flash-attn: 1 on, 0 off, -1 not given (cli_flash_auto) */
    cli_device device;
} run_common;

typedef struct run_state {
    pocketllm_model *model;
    pocketllm_session *session;
    int32_t *prompt;
    size_t n_prompt;
    int32_t n_vocab; /* logits per position */
} run_state;

void run_common_defaults(run_common *c);
/* Parse the shared option at argv[*i]: 1 when consumed, 0 when not one of
 * ours, -1 after printing a usage error. */
int run_common_opt(int argc, char **argv, int *i, run_common *c, const char *cmd);
/* After parsing: --model and exactly one of --prompt/--ids; 0 or the
 * usage exit code. */
int run_common_check(const run_common *c, const char *cmd);
/* Open the model, make the prompt ids and a session that holds them; 0 or
 * the exit code (the message is printed). */
int run_common_open(const run_common *c, run_state *s, const char *cmd);
void run_common_close(run_state *s);
/* The session the options ask for, of n_ctx positions (0: the model's). */
pocketllm_session_params run_common_session_params(const run_common *c, uint32_t n_ctx);

/* Seconds on a monotonic clock. */
double cli_now(void);

#endif
