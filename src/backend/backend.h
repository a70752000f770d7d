/*
 * backend.h -- the backend interface.  A backend is a device class with
 * kernels for ops; the graph asks it whether it supports an (op, weight
 * type) pair and runs it.  Declared backends are named so that users see
 * where the project is going, and say which runtime they wait for.
 */
#ifndef PL_BACKEND_H
#define PL_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "ops/ops.h"

struct pl_compute;
#include "pocketllm.h"

typedef struct pl_backend {
    const char *name;
    const char *device_class;
    pocketllm_backend_state state;
    const char *note;
    /* NULL for a declared backend */
    bool (*supports)(pl_op op, uint32_t weight_type);
    /* a new instance to run ops on (n_threads 0 = the backend's default);
     * NULL for a device backend, whose instances come from the device a
     * model was opened on (backend/device.h) */
    pocketllm_status (*compute_new)(int n_threads, struct pl_compute **out);
} pl_backend;

/* The backend called `name`, or NULL. */
const pl_backend *pl_backend_find(const char *name);

/* CPU backend: which (op, type) pairs have kernels; a new instance. */
bool pl_cpu_supports(pl_op op, uint32_t weight_type);
pocketllm_status pl_cpu_compute_default(int n_threads, struct pl_compute **out);

/* Vulkan backend (instances come from its device, backend/device.h). */
bool pl_vk_supports(pl_op op, uint32_t weight_type);

#endif
