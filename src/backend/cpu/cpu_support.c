/*
 * cpu_support.c -- which ops the CPU backend has kernels for, by weight
 * type.  Kept beside the kernels so that adding a kernel and declaring it
 * happen in one place.
 */
#include "backend/backend.h"

bool pl_cpu_supports(pl_op op, uint32_t weight_type) {
    (void)op;
    (void)weight_type;
    /* no kernels yet: the forward pass arrives with the CPU forward issue */
    return false;
}
