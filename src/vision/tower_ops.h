/*
 * tower_ops.h -- the row-chunked linear layer and MLP both mmproj towers'
 * graphs run (vision_graph.c, audio_tower_graph.c): a tower's compute
 * instance is reserved for `chunk` rows a matmul, so longer inputs go
 * through in chunks of that many rows.  Internal to the engine.
 */
#ifndef PL_TOWER_OPS_H
#define PL_TOWER_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "backend/compute.h"

/* y = w x (+ b) for n rows of x, `chunk` rows a matmul. */
void pl_tower_linear(pl_compute *c, int64_t chunk, const pl_weight *w, const float *b, const float *x, int64_t n,
                     float *y);

/* fc2(act(fc1 x + b1)) + b2 for n rows of x, `chunk` rows at a time through
 * the hidden rows t (chunk x fc1->n_out floats); act is the erf GELU when
 * `gelu_erf`, else the tanh GELU. */
void pl_tower_mlp(pl_compute *c, int64_t chunk, bool gelu_erf, const pl_weight *fc1, const float *b1,
                  const pl_weight *fc2, const float *b2, const float *x, int64_t n, float *t, float *y);

#endif
