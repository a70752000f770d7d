/*
 * compute.c -- what all backend instances share: the sticky failure of a
 * pass.
 */
#include "backend/compute.h"

void pl_compute_fail(pl_compute *c, pocketllm_status st) {
    if (!c->status) c->status = st;
}
