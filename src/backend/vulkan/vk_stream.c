/*
 * vk_stream.c -- recording a pass: command buffer lifecycle, barriers from
 * the hazards between recorded commands, the input ring, submission.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "backend/vulkan/vk_compute.h"
#include "base/error.h"

void pl_vk_grid(uint64_t groups, uint32_t g[3]) {
    if (groups == 0) groups = 1;
    g[0] = groups < 65535 ? (uint32_t)groups : 65535;
    g[1] = (uint32_t)((groups + g[0] - 1) / g[0]);
    g[2] = 1;
}

static void fail_vk(pl_vk_compute *vc, VkResult r, const char *call) {
    pl_compute_fail(&vc->base, pl_vk_fail(r, call));
}

/* A barrier between everything recorded so far and what follows, for
 * shader and transfer access alike. */
static void barrier(pl_vk_compute *vc) {
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                           VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
    const VkPipelineStageFlags st = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    vc->d->fn.vkCmdPipelineBarrier(vc->cmd, st, st, 0, 1, &mb, 0, NULL, 0, NULL);
    vc->n_w = vc->n_r = 0;
    vc->n_barrier++;
}

/* Wait for the submission in flight, then start recording. */
static bool begin(pl_vk_compute *vc) {
    if (vc->base.status) return false;
    if (vc->recording) return true;
    const pl_vk_fns *fn = &vc->d->fn;
    if (vc->in_flight) {
        VkResult r = fn->vkWaitForFences(vc->d->dev, 1, &vc->fence, VK_TRUE, UINT64_MAX);
        vc->in_flight = false;
        vc->ring_used = 0;
        vc->rope_n = 0; /* its table lived in the ring */
        if (r != VK_SUCCESS) return fail_vk(vc, r, "vkWaitForFences"), false;
    }
    VkResult r = fn->vkResetFences(vc->d->dev, 1, &vc->fence);
    if (r == VK_SUCCESS) r = fn->vkResetCommandPool(vc->d->dev, vc->pool, 0);
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    if (r == VK_SUCCESS) r = fn->vkBeginCommandBuffer(vc->cmd, &bi);
    if (r != VK_SUCCESS) return fail_vk(vc, r, "vkBeginCommandBuffer"), false;
    vc->recording = true;
    vc->bound = VK_NULL_HANDLE;
    /* order against the previous submission's writes */
    barrier(vc);
    return true;
}

static bool overlaps(const pl_vk_range *a, int n, pl_vk_range r) {
    for (int i = 0; i < n; i++)
        if (a[i].lo < r.hi && r.lo < a[i].hi) return true;
    return false;
}

/* Record a barrier when this command's accesses conflict with those
 * recorded since the last one, then note its accesses. */
static void hazards(pl_vk_compute *vc, const pl_vk_range *reads, int n_reads, const pl_vk_range *writes, int n_writes) {
    bool need = vc->n_r + n_reads > PL_VK_MAX_PENDING || vc->n_w + n_writes > PL_VK_MAX_PENDING;
    for (int i = 0; i < n_reads && !need; i++) need = overlaps(vc->pend_w, vc->n_w, reads[i]);
    for (int i = 0; i < n_writes && !need; i++)
        need = overlaps(vc->pend_w, vc->n_w, writes[i]) || overlaps(vc->pend_r, vc->n_r, writes[i]);
    if (need) barrier(vc);
    for (int i = 0; i < n_reads; i++)
        if (reads[i].hi > reads[i].lo) vc->pend_r[vc->n_r++] = reads[i];
    for (int i = 0; i < n_writes; i++)
        if (writes[i].hi > writes[i].lo) vc->pend_w[vc->n_w++] = writes[i];
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Run what is recorded (the dispatch just added and anything before it)
 * and charge the time to the shader. */
static void profile(pl_vk_compute *vc, const char *name) {
    const double t0 = now();
    pl_vk_sync(vc);
    const double dt = now() - t0;
    int i = 0;
    while (i < vc->n_prof && strcmp(vc->prof[i].name, name)) i++;
    if (i == vc->n_prof) {
        if (vc->n_prof == (int)(sizeof vc->prof / sizeof vc->prof[0])) return;
        snprintf(vc->prof[vc->n_prof++].name, sizeof vc->prof[0].name, "%s", name);
    }
    vc->prof[i].seconds += dt;
    vc->prof[i].calls++;
}

void pl_vk_profile_print(const pl_vk_compute *vc) {
    double total = 0;
    for (int i = 0; i < vc->n_prof; i++) total += vc->prof[i].seconds;
    fprintf(stderr, "vulkan profile (%s): %.3f s in %llu dispatches\n", vc->d->base.name, total,
            (unsigned long long)vc->n_dispatch);
    for (int i = 0; i < vc->n_prof; i++)
        fprintf(stderr, "  %-28s %8.3f s %6.1f%% %8llu calls\n", vc->prof[i].name, vc->prof[i].seconds,
                total > 0 ? 100.0 * vc->prof[i].seconds / total : 0.0, (unsigned long long)vc->prof[i].calls);
}

void pl_vk_dispatch(pl_vk_compute *vc, const char *name, const uint32_t *spec, uint32_t n_spec, const void *push,
                    uint32_t push_bytes, const uint32_t groups[3], const pl_vk_range *reads, int n_reads,
                    const pl_vk_range *writes, int n_writes) {
    if (vc->base.status) return;
    VkPipeline p = pl_vk_pipeline_get(vc->d, name, spec, n_spec);
    if (!p) {
        pl_compute_fail(&vc->base, POCKETLLM_ERR_UNSUPPORTED);
        return;
    }
    if (!begin(vc)) return;
    hazards(vc, reads, n_reads, writes, n_writes);
    const pl_vk_fns *fn = &vc->d->fn;
    if (vc->bound != p) {
        fn->vkCmdBindPipeline(vc->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p);
        vc->bound = p;
    }
    fn->vkCmdPushConstants(vc->cmd, vc->d->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes, push);
    fn->vkCmdDispatch(vc->cmd, groups[0], groups[1], groups[2]);
    vc->n_dispatch++;
    if (vc->profile) profile(vc, name);
}

void pl_vk_copy(pl_vk_compute *vc, VkBuffer src, size_t src_off, VkDeviceAddress src_addr, VkBuffer dst, size_t dst_off,
                VkDeviceAddress dst_addr, size_t bytes) {
    if (!begin(vc)) return;
    const pl_vk_range r = {src_addr, src_addr + bytes}, w = {dst_addr, dst_addr + bytes};
    hazards(vc, &r, 1, &w, 1);
    VkBufferCopy rg = {src_off, dst_off, bytes};
    vc->d->fn.vkCmdCopyBuffer(vc->cmd, src, dst, 1, &rg);
}

void pl_vk_submit(pl_vk_compute *vc) {
    if (!vc->recording) return;
    const pl_vk_fns *fn = &vc->d->fn;
    /* make the device's writes visible to the host reads after the wait */
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
    fn->vkCmdPipelineBarrier(vc->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                             VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
    vc->recording = false;
    VkResult r = fn->vkEndCommandBuffer(vc->cmd);
    if (r != VK_SUCCESS) {
        fail_vk(vc, r, "vkEndCommandBuffer");
        return;
    }
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &vc->cmd};
    pthread_mutex_lock(&vc->d->lock);
    r = fn->vkQueueSubmit(vc->d->queue, 1, &si, vc->fence);
    pthread_mutex_unlock(&vc->d->lock);
    if (r != VK_SUCCESS) {
        fail_vk(vc, r, "vkQueueSubmit");
        return;
    }
    vc->in_flight = true;
    vc->n_submit++;
}

void pl_vk_sync(pl_vk_compute *vc) {
    pl_vk_submit(vc);
    if (!vc->in_flight) return;
    VkResult r = vc->d->fn.vkWaitForFences(vc->d->dev, 1, &vc->fence, VK_TRUE, UINT64_MAX);
    vc->in_flight = false;
    vc->ring_used = 0;
    vc->rope_n = 0; /* the table lived in the ring */
    if (r != VK_SUCCESS) fail_vk(vc, r, "vkWaitForFences");
}

VkDeviceAddress pl_vk_ring_put(pl_vk_compute *vc, const void *data, size_t bytes) {
    if (vc->base.status) return 0;
    const size_t need = (bytes + 255) & ~(size_t)255;
    if (need > vc->ring->bytes) {
        pl_compute_fail(&vc->base, pl_fail(POCKETLLM_ERR_INTERNAL, "vulkan: %zu bytes of op input exceed the ring (%zu)",
                                           bytes, vc->ring->bytes));
        return 0;
    }
    if (vc->ring_used + need > vc->ring->bytes || vc->in_flight) {
        /* everything recorded may still read the ring: let it finish */
        pl_vk_sync(vc);
        if (vc->base.status) return 0;
    }
    memcpy((char *)vc->ring->mapped + vc->ring_used, data, bytes);
    const VkDeviceAddress a = vc->ring->addr + vc->ring_used;
    vc->ring_used += need;
    return a;
}

VkDeviceAddress pl_vk_operand(pl_vk_compute *vc, const void *p, size_t bytes, const char *op) {
    if (vc->base.status) return 0;
    VkDeviceAddress a = pl_vk_resolve(vc->d, p, bytes, NULL, NULL);
    if (!a)
        pl_compute_fail(&vc->base, pl_fail(POCKETLLM_ERR_INTERNAL,
                                           "vulkan: %s: operand %p (%zu bytes) is not memory of device %s", op, p, bytes,
                                           vc->d->base.name));
    return a;
}
