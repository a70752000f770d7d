/*
 * grammar_loops.h -- where a state goes on a whole class of bytes
 * (grammar_vocab.h's classes): a class is uniform on a state when every
 * byte of it (ASCII), or every whole UTF-8 character (the non-ASCII class,
 * its partial reads staying alive), leads to the state's one successor.
 * Inside a JSON string the successor is the state itself; inside a string
 * with a length bound it is the next position.  A trie subtree whose bytes
 * are all of uniform classes, and whose texts are no longer than the chain
 * of successors that keep them uniform, is allowed whole -- the mask walk
 * takes it at once instead of node by node.
 *
 * Classes are tested lazily: a state first meets the classes a subtree
 * needs (failing at the first that is not uniform: cheap where nothing
 * is); a state that passes has all its classes tested, and its chain of
 * successors is measured as far as asked and remembered.
 */
#ifndef PL_GRAMMAR_LOOPS_H
#define PL_GRAMMAR_LOOPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grammar/grammar_match.h"

typedef struct pl_gloops {
    size_t cap;             /* states the arrays below hold */
    uint64_t *tested, *ok;  /* classes tested, and those found uniform (to succ) */
    uint32_t *succ;         /* the successor of the uniform classes (PL_GM_UNKNOWN: none yet) */
    uint32_t *high_dist;    /* the largest distance among the state's partial characters' states */
    /* the chain over all of ok[q]: texts of up to run_len characters stay
     * alive (PL_GL_FOREVER: any length), ending no farther than run_far;
     * run_last is where the measurement stopped, run_end that it cannot go on,
     * run_dead that it stops where no character of ok[q] is taken at all */
    uint16_t *run_len;
    uint8_t *run_end, *run_dead;
    uint32_t *run_last, *run_far;
} pl_gloops;

#define PL_GL_FOREVER 0xffff

/* What pl_gloops_chain found for texts of at most n_chars characters, all
 * of the classes in need and valid UTF-8, read from state q: */
typedef enum {
    PL_GL_WALK,  /* nothing certain: walk them */
    PL_GL_WHOLE, /* every one stays alive */
    PL_GL_CUT    /* those of at most *cut characters stay alive, every longer one dies */
} pl_gl_verdict;
/* *far: the largest distance of a state an allowed text can end in. */
pl_gl_verdict pl_gloops_chain(pl_gloops *L, pl_gmatch *m, uint32_t q, uint64_t need, unsigned n_chars, uint32_t *far,
                              unsigned *cut);
/* The one successor of state q over every class in need, PL_GM_DEAD when
 * some class has none (or another). */
uint32_t pl_gloops_succ(pl_gloops *L, pl_gmatch *m, uint32_t q, uint64_t need);
/* Forget everything (the automaton was renumbered). */
void pl_gloops_clear(pl_gloops *L);
void pl_gloops_free(pl_gloops *L);

#endif
