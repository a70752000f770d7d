/*
 * spec_draft.h -- a draft model for speculative decoding (`run --draft M`):
 * a smaller model with the target's vocabulary, on the same device, that
 * proposes the next tokens greedily; the target verifies them in one
 * batched pass (cmd_run.c's spec_generate).  The draft's session follows
 * the target's history: before each draft it evaluates the ids it has not
 * seen, and after each verification it forgets the rows the target did not
 * keep.
 */
#ifndef PL_CLI_SPEC_DRAFT_H
#define PL_CLI_SPEC_DRAFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pocketllm.h"
#include "run_common.h"

typedef struct spec_draft {
    pocketllm_model *model;
    pocketllm_session *s;
    int32_t n_vocab;
    pocketllm_sampler *smp; /* sampled drafting: its own sampler (no penalties history), or NULL: greedy */
} spec_draft;

/* Whether a draft model speaks another vocabulary than the target's: not
 * the same size, BOS or EOS, or a token whose text differs; why gets the
 * reason (the first token that differs). */
bool spec_vocab_differs(const pocketllm_model *draft, const pocketllm_model *target, char *why, size_t cap);

/* Open the draft model at path with the target's device, threads and
 * session settings (n_ctx positions), and check that it speaks the
 * target's vocabulary: the same size, BOS and EOS, and the same text for
 * every token.  sp: the sampling of a sampled run (the draft draws with
 * the same chain and a seed of its own), or NULL for greedy.  0 or the
 * exit code (the message printed). */
int spec_draft_open(const char *path, const run_common *c, const pocketllm_model *target, uint32_t n_ctx,
                    const pocketllm_sampler_params *sp, spec_draft *d, const char *cmd);
void spec_draft_close(spec_draft *d);

/* Up to max ids the draft model picks after hist[0 .. n) (the last of
 * them not yet evaluated by anyone): greedily, or drawn by its sampler, in
 * which case q receives the distribution each was drawn from (n_vocab
 * floats per id).  *k gets how many. */
pocketllm_status spec_draft_next(spec_draft *d, const int32_t *hist, size_t n, int32_t *out, size_t max, size_t *k,
                                 float *q);

/* The target kept the first n ids of the history: drop the draft's rows
 * past them. */
pocketllm_status spec_draft_keep(spec_draft *d, size_t n);

#endif
