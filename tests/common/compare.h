/*
 * compare.h -- how the suite decides that PocketLLM agrees with llama.cpp.
 *
 * Token sequences: identical, or identical up to the first step where
 * llama.cpp itself was undecided (its top-1/top-2 logit margin at or below
 * a stated threshold), since past a near-tie either choice is right and the
 * sequences may part.
 *
 * Logit matrices, teacher-forced (both engines fed the same ids): at every
 * position where llama.cpp's top-1/top-2 margin exceeds the threshold the
 * argmax must agree; positions at or below it are counted as skipped and
 * reported, never silently passed.  The largest absolute difference is
 * reported relative to the reference's logit range.
 *
 * A mixture of experts adds a second kind of undecided step: a position
 * where llama.cpp's own router had two experts all but tied at the edge of
 * its top-k (their log-probabilities within a stated margin in some layer)
 * -- the last bits of the router's input pick one or the other, and the
 * two give different hidden states.  Where the two engines' routers first
 * chose different experts at a position, llama.cpp's margin there must be
 * within that bound (else the engines disagree), and the position is then
 * not judged -- neither its argmax nor its difference, nor the choices of
 * its layers above, whose input that one changed; every other position is.  Greedy
 * ids are compared up to the first step whose position or any before it
 * had such a difference.
 */
#ifndef PL_TEST_COMPARE_H
#define PL_TEST_COMPARE_H

#include <stddef.h>
#include <stdint.h>

typedef struct logit_report {
    size_t positions;
    size_t decidable;      /* positions whose reference margin > threshold */
    size_t skipped;        /* positions with a near-tie in the reference */
    size_t agree;          /* decidable positions where the argmaxes match */
    size_t first_disagree; /* position of the first decidable disagreement, or SIZE_MAX */
    double max_abs_diff;   /* over all logits */
    double ref_range;      /* max - min of the reference logits */
    double min_margin;     /* smallest reference margin seen */
    /* positions left out for a router near-tie (compare_logits' skip) */
    size_t router_skipped;
    double max_abs_diff_skipped; /* the largest difference there (not bounded) */
} logit_report;

/* Compare two [positions x vocab] float matrices.  skip (may be NULL):
 * positions where the routers chose differently at a near-tie (see above),
 * left out of the argmax rule and of max_abs_diff. */
void compare_logits(const float *ours, const float *ref, size_t positions, size_t vocab, double margin,
                    const unsigned char *skip, logit_report *r);

/* Top-1 index and top-1/top-2 margin of one row. */
size_t row_argmax(const float *row, size_t n, double *margin);

typedef struct token_report {
    size_t compared;      /* steps compared */
    size_t first_diff;    /* first differing step, or SIZE_MAX */
    size_t first_tie;     /* first step where the reference was near-tied, or SIZE_MAX */
    int agree;            /* 1 when identical up to the first near-tie (or fully) */
} token_report;

/* Compare generated ids; ref_margins[i] (may be NULL) is the reference's
 * top-1/top-2 margin when it chose ref[i]. */
void compare_tokens(const int32_t *ours, size_t n_ours, const int32_t *ref, size_t n_ref,
                    const double *ref_margins, double margin, token_report *r);

#endif
