/*
 * device.c -- opening the device a model names ("cpu", "vulkan",
 * "vulkan:N"), and the one message every backend gives when a model does
 * not fit its device.
 */
#include "backend/device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

#ifdef PL_HAVE_VULKAN
pocketllm_status pl_vk_device_open(int index, uint64_t memory_limit, pl_device **out);
#endif

static void fmt_bytes(uint64_t b, char *buf, size_t cap) {
    if (b >= ((uint64_t)1 << 30)) snprintf(buf, cap, "%.2f GiB", (double)b / (double)((uint64_t)1 << 30));
    else snprintf(buf, cap, "%.1f MiB", (double)b / (double)((uint64_t)1 << 20));
}

pocketllm_status pl_device_no_room(const pl_device *d, uint64_t need, const char *what) {
    char total[32], add[32], used[32], has[32];
    fmt_bytes(d->memory_used + need, total, sizeof total);
    fmt_bytes(need, add, sizeof add);
    fmt_bytes(d->memory_used, used, sizeof used);
    fmt_bytes(d->memory, has, sizeof has);
    return pl_fail(POCKETLLM_ERR_NO_MEMORY,
                   "the model does not fit %s: it needs %s (%s for %s on top of %s in use), the device has %s; run "
                   "'pocketllm fit --device %s' to pick a rung of the width ladder that fits",
                   d->name, total, add, what, used, has, d->backend);
}

pocketllm_status pl_device_open(const char *spec, uint64_t memory_limit, pl_device **out) {
    *out = NULL;
    if (strncmp(spec, "vulkan", 6) == 0 && (spec[6] == 0 || spec[6] == ':')) {
        int index = -1;
        if (spec[6] == ':') {
            char *end;
            long v = strtol(spec + 7, &end, 10);
            if (end == spec + 7 || *end || v < 0 || v > 64)
                return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "device '%s': expected vulkan or vulkan:N", spec);
            index = (int)v;
        }
#ifdef PL_HAVE_VULKAN
        return pl_vk_device_open(index, memory_limit, out);
#else
        (void)index;
        (void)memory_limit;
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED,
                       "device '%s': this build has no Vulkan backend (it was configured without it, or glslc and the "
                       "Vulkan headers were missing)",
                       spec);
#endif
    }
    return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "device '%s' is not implemented in this build (devices: cpu, vulkan, vulkan:N; see "
                   "'pocketllm backends')",
                   spec);
}

#ifndef PL_HAVE_VULKAN
/* A build without the backend still answers the probe: with why. */
pocketllm_status pocketllm_vulkan_probe(pocketllm_vulkan_info *out) {
    if (!out) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "vulkan_probe: NULL");
    memset(out, 0, sizeof *out);
    snprintf(out->reason, sizeof out->reason,
             "this build has no Vulkan backend (configured without it, or glslc and the Vulkan headers were missing)");
    return POCKETLLM_OK;
}
#endif
