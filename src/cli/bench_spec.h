/*
 * bench_spec.h -- the speculative-decoding benchmark of `pocketllm bench`
 * (--lookup N / --draft M): greedy generation with and without drafting,
 * side by side on the same prompt, its speed-up and acceptance rate.
 */
#ifndef PL_BENCH_SPEC_H
#define PL_BENCH_SPEC_H

#include <stdbool.h>
#include <stdint.h>

#include "pocketllm.h"
#include "spec_draft.h"

typedef struct bench_spec_cfg {
    int64_t n_prompt, n, reps;
    int lookup;              /* prompt lookup's longest n-gram (no draft model) */
    spec_draft *dm;          /* the draft model (dm->s set), or NULL */
    const char *draft_path;  /* its file, for the report */
    int64_t draft_max, draft_min;
} bench_spec_cfg;

/* Runs the comparison on s (the target's session, n_prompt + n positions
 * at least) from `ids`; prints text or one JSON object.  A CLI exit code. */
int bench_spec(const char *cmd, pocketllm_session *s, const int32_t *ids, const bench_spec_cfg *c, bool json);

#endif
