/*
 * bench_grammar.h -- the constrained-decoding benchmark of `pocketllm
 * bench` (--json-schema / --grammar): decode speed with and without the
 * constraint, and the time of a full vocabulary mask per step.
 */
#ifndef PL_BENCH_GRAMMAR_H
#define PL_BENCH_GRAMMAR_H

#include <stdbool.h>
#include <stdint.h>

#include "pocketllm.h"

/* schema_path or grammar_path (one of them); n_prompt prompt tokens, n
 * steps, reps repetitions; prints text or one JSON object.  A CLI exit code. */
int bench_grammar(const char *cmd, pocketllm_model *m, pocketllm_session *s, const char *schema_path,
                  const char *grammar_path, int64_t n_prompt, int64_t n, int64_t reps, bool json);

#endif
