/*
 * grammar_probe.h -- what the tests reach inside a constrained-decoding
 * grammar (not part of the ABI): the mask under a length budget with the
 * walk's mode chosen, the per-token verdict it must equal, and how often
 * the walk took a trie subtree at once, so a test can show that it
 * exercised those paths.
 */
#ifndef PL_GRAMMAR_PROBE_H
#define PL_GRAMMAR_PROBE_H

#include <stdint.h>

#include "pocketllm.h"

/* The mask of an active grammar afresh, budget < 0: none; mode -1: as the
 * walk chooses, 0: marking allowed tokens, 1: clearing refused ones. */
pocketllm_status pl_grammar_probe_mask(pocketllm_grammar *g, int32_t budget, int mode, uint8_t *allow, int32_t n_vocab);
/* The token's verdict asked alone (as the unconstrained-first sampling does). */
int pl_grammar_probe_allows(pocketllm_grammar *g, int32_t id, int32_t budget);
/* Subtrees taken whole and subtrees cut at a length, since the grammar was made. */
void pl_grammar_probe_counts(const pocketllm_grammar *g, uint64_t *whole, uint64_t *cut);

#endif
