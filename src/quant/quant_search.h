/*
 * quant_search.h -- the scale searches llama.cpp's quantizers share: given
 * a group of values (and optional importance weights), find the integer
 * levels L and the scale (and min) that fit them best.  Reproduced
 * operation for operation from llama.cpp v0.4.0 (ggml-quants.c, MIT), since
 * the chosen levels -- and so the file bytes -- depend on every rounding.
 */
#ifndef PL_QUANT_SEARCH_H
#define PL_QUANT_SEARCH_H

#include <stdbool.h>
#include <stdint.h>

#define PL_GROUP_MAX_EPS 1e-15f

/* Symmetric levels L[i] in [0, 2*nmax) around nmax; rmse_type 1 weights by
 * qw (or x^2 when qw is NULL) and searches 18 scales near nmax/max.
 * Returns the scale. */
float pl_q_make_qx(int n, int nmax, const float *x, int8_t *L, int rmse_type, const float *qw);

/* Symmetric 3-bit-style levels with x^2 weights and coordinate refinement
 * (q3_K without imatrix).  L[i] in [0, 2*nmax). */
float pl_q_make_q3(int n, int nmax, const float *x, int8_t *L, bool do_rmse);

/* Asymmetric levels L[i] in [0, nmax] with a min: returns the scale and
 * stores -min in *the_min.  make_qkx2 takes weights; make_qkx3 uses x^2
 * when weights is NULL. */
float pl_q_make_qkx2(int n, int nmax, const float *x, const float *weights, uint8_t *L, float *the_min,
                     uint8_t *Laux, float rmin, float rdelta, int nstep, bool use_mad);
float pl_q_make_qkx3(int n, int nmax, const float *x, const float *weights, uint8_t *L, float *the_min,
                     uint8_t *Laux, float rmin, float rdelta, int nstep, bool use_mad);

/* Non-negative levels L[i] in [0, nmax] for positive values (block scales
 * and mins of the k-quants with an imatrix). */
float pl_q_make_qp(int n, int nmax, const float *x, uint8_t *L, const float *quant_weights);

#endif
