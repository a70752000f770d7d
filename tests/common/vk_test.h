/*
 * vk_test.h -- what the Vulkan op tests share: opening the device (or
 * saying why the test cannot run), device buffers made from host data,
 * weights uploaded as a model's would be, and reading results back.
 *
 * A Vulkan test that finds no device fails with the reason, unless
 * POCKETLLM_NO_VULKAN=1 is set: then it exits 77, which ctest reports as
 * skipped (never as passed).
 */
#ifndef PL_TEST_VK_TEST_H
#define PL_TEST_VK_TEST_H

#include <stddef.h>
#include <stdint.h>

#include "backend/compute.h"
#include "backend/device.h"
#include "ops/weight.h"

typedef struct vkt {
    pl_device *dev;
    pl_compute *c;
} vkt;

/* Open "vulkan" and a compute instance reserved for `lim`.  Returns 0, or
 * the exit code the test should end with (77 skipped, 1 failed; the
 * reason is printed). */
int vkt_open(vkt *t, const pl_compute_limits *lim);
void vkt_close(vkt *t);

/* Device memory holding a copy of host[0 .. bytes). */
void *vkt_buf(vkt *t, const void *host, size_t bytes);
/* Device memory of `bytes`, filled with 0xff bytes (NaN floats) so that
 * an op that leaves outputs unwritten is caught. */
void *vkt_out(vkt *t, size_t bytes);
/* Read device memory back (waits for the recorded work); 0 or the status. */
int vkt_get(vkt *t, void *host, const void *dev, size_t bytes);
/* Upload host as weights (the host pointer stays the key, as a model's
 * tensors do); the host memory must outlive the device. */
int vkt_weight(vkt *t, const void *host, size_t bytes);
/* Drop the status of a failed pass so the next checks can run. */
void vkt_reset(vkt *t);

/* Distance of two floats in ulps (NaN to NaN 0, NaN to a number
 * INT64_MAX). */
int64_t vkt_ulps(float a, float b);
/* |got - ref| / |ref| over n values, as 2-norms (|got - ref| when ref is
 * all zeros). */
double vkt_rel_l2(const float *got, const float *ref, int64_t n);

#endif
