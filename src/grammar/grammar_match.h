/*
 * grammar_match.h -- the matcher: where a parsed GBNF grammar can be after
 * some text, as a byte-level automaton built lazily.
 *
 * A position in the grammar is a stack of element positions (llama.cpp's
 * pushdown representation: the top is the next character class to match,
 * the frames below are where each enclosing rule continues).  Stacks are
 * hash-consed (a node is (position, parent node)), so equal stacks are
 * equal ids and a set of them is a sorted id array, itself interned.  A
 * state of the automaton is such a set plus a partly read UTF-8 character;
 * its transitions on each byte are computed once and kept, so walking the
 * vocabulary's trie costs a table lookup per trie node once warm.
 */
#ifndef PL_GRAMMAR_MATCH_H
#define PL_GRAMMAR_MATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grammar/gbnf.h"

#define PL_GM_DEAD UINT32_MAX

typedef struct pl_gmatch pl_gmatch;

pl_gmatch *pl_gmatch_new(const pl_gbnf *g);
void pl_gmatch_free(pl_gmatch *m);

/* The state before any text; PL_GM_DEAD only on allocation failure. */
uint32_t pl_gmatch_start(pl_gmatch *m);
/* The state after byte b, PL_GM_DEAD when no text continuing so matches. */
uint32_t pl_gmatch_step(pl_gmatch *m, uint32_t state, uint8_t b);
/* The state after bytes (PL_GM_DEAD as above). */
uint32_t pl_gmatch_feed(pl_gmatch *m, uint32_t state, const uint8_t *bytes, size_t n);
/* The text up to this state is a whole match of the start rule. */
bool pl_gmatch_accepting(const pl_gmatch *m, uint32_t state);
/* Some text can follow (the state is not only a finished match). */
bool pl_gmatch_can_continue(const pl_gmatch *m, uint32_t state);
/* The fewest further bytes that complete a match from this state. */
uint32_t pl_gmatch_distance(const pl_gmatch *m, uint32_t state);
/* Why a step or the start gave PL_GM_DEAD although the text may match: out
 * of memory, or the grammar past the matcher's bounds; NULL when nothing
 * went wrong (PL_GM_DEAD then means the text cannot match).  Sticky. */
const char *pl_gmatch_error(const pl_gmatch *m);
/* Whether that failure is memory running out (else: the grammar past the bounds). */
bool pl_gmatch_out_of_memory(const pl_gmatch *m);

/* Memory held by the automaton, and a reset that keeps only `*state`
 * (renumbered): call between steps when the bytes grow past a budget. */
size_t pl_gmatch_bytes(const pl_gmatch *m);
size_t pl_gmatch_n_states(const pl_gmatch *m);
bool pl_gmatch_compact(pl_gmatch *m, uint32_t *state);
/* Partial characters kept by their membership pattern (on by default, the
 * fast way); off keeps one state per byte prefix -- the plain automaton the
 * tests compare the default with.  Set it before the first step. */
void pl_gmatch_set_canonical(pl_gmatch *m, bool on);

/* Raw access for the trie walk: the transition row of a state (256
 * entries; PL_GM_UNKNOWN where not computed yet).  The pointer is valid
 * until the next call that may add states. */
#define PL_GM_UNKNOWN (UINT32_MAX - 1)
const uint32_t *pl_gmatch_row(const pl_gmatch *m, uint32_t state);

#endif
