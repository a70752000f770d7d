/*
 * bench_verify.h -- what speculative decoding's verification costs
 * (`pocketllm bench --verify N`): one pass of 1 + j tokens with every
 * row's logits kept -- the token just decoded and j drafts, as `run
 * --draft` / `--lookup` verify them -- against one plain decode step, at
 * the same depth, for j = 0 .. N; and, computed from those costs, the
 * speedup prompt lookup would give at a few acceptance rates.
 */
#ifndef PL_BENCH_VERIFY_H
#define PL_BENCH_VERIFY_H

#include <stdint.h>

#include <cjson/cJSON.h>
#include "pocketllm.h"

/* ms[j] (j = 0 .. n_draft): the median over `tries` passes of 1 + j tokens
 * appended to a cache holding `depth` tokens of ids (evaluated first,
 * untimed), each pass's rows forgotten before the next.  The session is
 * left holding depth tokens. */
pocketllm_status bench_verify_measure(pocketllm_session *s, const int32_t *ids, int64_t depth, int64_t n_draft,
                                      int tries, double *ms);

/* The text lines, or the JSON object ("verify"). */
void bench_verify_print(const double *ms, int64_t n_draft, int64_t depth);
cJSON *bench_verify_json(const double *ms, int64_t n_draft, int64_t depth);

#endif
