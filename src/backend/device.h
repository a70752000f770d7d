/*
 * device.h -- one accelerator a model is opened on.  The device owns what
 * lives there for the model's lifetime (its weights, uploaded once when the
 * model is opened) and makes the compute instances sessions run on.  The
 * CPU needs none: a model opened on the CPU has no pl_device and its
 * sessions make CPU instances directly.
 *
 * One process may open several models, each on its own device object; a
 * model's weights never leave its device and are never split.
 */
#ifndef PL_DEVICE_H
#define PL_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "pocketllm.h"

struct pl_compute;
typedef struct pl_device pl_device;

/* Progress of a long upload: `done` of `total` bytes. */
typedef void (*pl_upload_progress_fn)(void *user, const char *device, uint64_t done, uint64_t total);

/* One stretch of host memory to copy to the device: a tensor's data, or
 * several adjacent tensors.  An op's operand never spans two ranges. */
typedef struct pl_upload_range {
    const void *host;
    size_t bytes;
    const char *name; /* for messages (the first tensor's name) */
} pl_upload_range;

typedef struct pl_device_ops {
    void (*close)(pl_device *d);
    /* Copy host memory the graph reads as constants (tensor data of the
     * mapped file, small vectors the loader made) to the device, kept in
     * the stored layout.  Every pointer into a range that an op is given
     * later means the device copy.  Ranges are sorted by address and do not
     * overlap. */
    pocketllm_status (*upload)(pl_device *d, const pl_upload_range *ranges, size_t n, pl_upload_progress_fn progress,
                               void *user);
    /* A compute instance on the device (n_threads: host threads, unused by
     * GPU backends). */
    pocketllm_status (*compute_new)(pl_device *d, int n_threads, struct pl_compute **out);
} pl_device_ops;

struct pl_device {
    const pl_device_ops *ops;
    const char *backend;  /* "vulkan" */
    char name[300];       /* "vulkan:0 (llvmpipe (LLVM 15.0.6, 256 bits))" */
    uint64_t memory;      /* bytes the model may use on the device (the budget) */
    uint64_t memory_used; /* bytes allocated on it now (weights, sessions) */
    uint64_t weight_bytes;/* of which the uploaded weights */
};

/* Open the device a model asks for.  spec: "vulkan" (the first usable
 * device, discrete GPUs first) or "vulkan:N"; memory_limit (0 = none) caps
 * the budget below what the device reports, to play a smaller device. */
pocketllm_status pl_device_open(const char *spec, uint64_t memory_limit, pl_device **out);

/* The one-line refusal when `need` more bytes do not fit: how much the
 * model needs, how much the device has, and what to run instead. */
pocketllm_status pl_device_no_room(const pl_device *d, uint64_t need, const char *what);

#endif
