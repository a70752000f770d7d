/*
 * compute.c -- what all backend instances share: the sticky failure of a
 * pass.
 */
#include "backend/compute.h"

#include "base/error.h"

void pl_compute_fail(pl_compute *c, pocketllm_status st) {
    if (!c->status) c->status = st;
}

pocketllm_status pl_compute_missing(pl_compute *c, const char *op) {
    pocketllm_status st = pl_fail(POCKETLLM_ERR_UNSUPPORTED, "the %s backend has no %s kernel", c->backend, op);
    pl_compute_fail(c, st);
    return st;
}
