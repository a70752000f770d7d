/*
 * vk_device.c -- open a Vulkan device for a model: pick the physical
 * device, create the logical device with the features the shaders use,
 * choose memory types, and keep the key map from graph pointers to device
 * addresses (see vk_device.h).
 */
#include "backend/vulkan/vk_device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "backend/vulkan/vk_tables.h"
#include "base/error.h"
#include "quant/iq_tables.h"

pocketllm_status pl_vk_compute_new(pl_device *dev, int n_threads, struct pl_compute **out);
pocketllm_status pl_vk_upload(pl_device *dev, const pl_upload_range *r, size_t n, pl_upload_progress_fn progress,
                              void *user);

pocketllm_status pl_vk_fail(VkResult r, const char *call) {
    if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "vulkan: %s failed: %s", call, pl_vk_result_name(r));
    return pl_fail(POCKETLLM_ERR_IO, "vulkan: %s failed: %s", call, pl_vk_result_name(r));
}

/* ---- memory types ------------------------------------------------------ */

/* The first memory type with all of `want`, preferring one with none of
 * `avoid`; UINT32_MAX when none has `want`. */
static uint32_t pick_type(const VkPhysicalDeviceMemoryProperties *mp, VkMemoryPropertyFlags want,
                          VkMemoryPropertyFlags avoid) {
    uint32_t fallback = UINT32_MAX;
    for (uint32_t i = 0; i < mp->memoryTypeCount; i++) {
        const VkMemoryPropertyFlags f = mp->memoryTypes[i].propertyFlags;
        if ((f & want) != want) continue;
        if (!(f & avoid)) return i;
        if (fallback == UINT32_MAX) fallback = i;
    }
    return fallback;
}

static bool choose_memory_types(pl_vk_device *d) {
    VkPhysicalDeviceMemoryProperties mp;
    d->fn.vkGetPhysicalDeviceMemoryProperties(d->pd, &mp);
    const VkMemoryPropertyFlags HV = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, HC = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                DL = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, CA = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
    /* device buffers: device-local, host-visible only when nothing else is
     * (a discrete GPU's small host-visible window is left alone) */
    d->mt[PL_VK_MEM_DEVICE] = pick_type(&mp, DL, HV);
    if (d->mt[PL_VK_MEM_DEVICE] == UINT32_MAX) d->mt[PL_VK_MEM_DEVICE] = pick_type(&mp, 0, 0);
    /* staging for uploads: host memory the device reads once */
    d->mt[PL_VK_MEM_UPLOAD] = pick_type(&mp, HV | HC, DL);
    /* readback: host-cached when there is such a type (reads from
     * uncached memory are slow) */
    d->mt[PL_VK_MEM_READBACK] = pick_type(&mp, HV | CA, 0);
    if (d->mt[PL_VK_MEM_READBACK] == UINT32_MAX) d->mt[PL_VK_MEM_READBACK] = d->mt[PL_VK_MEM_UPLOAD];
    for (int k = 0; k < 3; k++) {
        if (d->mt[k] == UINT32_MAX) return false;
        d->mt_coherent[k] = (mp.memoryTypes[d->mt[k]].propertyFlags & HC) != 0;
    }
    return true;
}

/* ---- buffers ------------------------------------------------------------ */

pocketllm_status pl_vk_buffer_new(pl_vk_device *d, size_t bytes, pl_vk_mem kind, const char *what,
                                  pl_vk_buffer **out) {
    *out = NULL;
    if (bytes == 0) bytes = 16;
    bytes = (bytes + 255) & ~(size_t)255;
    if (bytes > d->caps.max_alloc || bytes > d->caps.max_buffer)
        return pl_fail(POCKETLLM_ERR_NO_MEMORY,
                       "%s: %s of %zu bytes is larger than the largest buffer the device allows (%llu bytes)",
                       d->base.name, what, bytes, (unsigned long long)(d->caps.max_alloc < d->caps.max_buffer
                                                                          ? d->caps.max_alloc
                                                                          : d->caps.max_buffer));
    if (kind == PL_VK_MEM_DEVICE) {
        pthread_mutex_lock(&d->lock);
        const bool room = d->base.memory_used + bytes <= d->base.memory;
        if (room) d->base.memory_used += bytes;
        pthread_mutex_unlock(&d->lock);
        if (!room) return pl_device_no_room(&d->base, bytes, what);
    }
    pl_vk_buffer *b = calloc(1, sizeof *b);
    if (!b) goto no_host;
    b->bytes = bytes;
    b->kind = kind;
    b->coherent = d->mt_coherent[kind];
    VkBufferCreateInfo bi = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = bytes,
        .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                 VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
    };
    VkResult r = d->fn.vkCreateBuffer(d->dev, &bi, NULL, &b->buf);
    if (r != VK_SUCCESS) goto vk_fail;
    VkMemoryRequirements req;
    d->fn.vkGetBufferMemoryRequirements(d->dev, b->buf, &req);
    if (!(req.memoryTypeBits & (1u << d->mt[kind]))) {
        r = VK_ERROR_FEATURE_NOT_PRESENT;
        goto vk_fail;
    }
    VkMemoryAllocateFlagsInfo fl = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO,
                                    .flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT};
    VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                               .pNext = &fl,
                               .allocationSize = req.size,
                               .memoryTypeIndex = d->mt[kind]};
    r = d->fn.vkAllocateMemory(d->dev, &ai, NULL, &b->mem);
    if (r != VK_SUCCESS) goto vk_fail;
    if ((r = d->fn.vkBindBufferMemory(d->dev, b->buf, b->mem, 0)) != VK_SUCCESS) goto vk_fail;
    if (kind != PL_VK_MEM_DEVICE && (r = d->fn.vkMapMemory(d->dev, b->mem, 0, VK_WHOLE_SIZE, 0, &b->mapped)) != VK_SUCCESS)
        goto vk_fail;
    VkBufferDeviceAddressInfo bai = {.sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO, .buffer = b->buf};
    b->addr = d->fn.vkGetBufferDeviceAddress(d->dev, &bai);
    *out = b;
    return POCKETLLM_OK;
vk_fail:
    pl_vk_buffer_free(d, b); /* gives the budget back */
    if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY)
        return pl_fail(POCKETLLM_ERR_NO_MEMORY,
                       "%s: the device is out of memory allocating %zu bytes for %s (%llu of %llu bytes in use); run "
                       "'pocketllm fit --device vulkan' for a smaller rung",
                       d->base.name, bytes, what, (unsigned long long)d->base.memory_used,
                       (unsigned long long)d->base.memory);
    return pl_fail(r == VK_ERROR_OUT_OF_HOST_MEMORY ? POCKETLLM_ERR_NO_MEMORY : POCKETLLM_ERR_IO,
                   "%s: allocating %zu bytes for %s failed: %s", d->base.name, bytes, what, pl_vk_result_name(r));
no_host:
    if (kind == PL_VK_MEM_DEVICE) {
        pthread_mutex_lock(&d->lock);
        d->base.memory_used -= bytes;
        pthread_mutex_unlock(&d->lock);
    }
    return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
}

void pl_vk_buffer_free(pl_vk_device *d, pl_vk_buffer *b) {
    if (!b) return;
    if (b->mapped) d->fn.vkUnmapMemory(d->dev, b->mem);
    if (b->buf) d->fn.vkDestroyBuffer(d->dev, b->buf, NULL);
    if (b->mem) d->fn.vkFreeMemory(d->dev, b->mem, NULL);
    if (b->kind == PL_VK_MEM_DEVICE) {
        pthread_mutex_lock(&d->lock);
        d->base.memory_used -= b->bytes;
        pthread_mutex_unlock(&d->lock);
    }
    free(b);
}

/* ---- keys --------------------------------------------------------------- */

/* Index of the first key with lo > p (caller holds the lock). */
static size_t key_upper(const pl_vk_device *d, uintptr_t p) {
    size_t lo = 0, hi = d->n_keys;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (d->keys[mid].lo <= p) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static pocketllm_status key_insert(pl_vk_device *d, uintptr_t lo, uintptr_t hi, pl_vk_buffer *b, bool reserved) {
    pthread_mutex_lock(&d->lock);
    if (d->n_keys == d->cap_keys) {
        size_t cap = d->cap_keys ? 2 * d->cap_keys : 64;
        pl_vk_key *k = realloc(d->keys, cap * sizeof *k);
        if (!k) {
            pthread_mutex_unlock(&d->lock);
            return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
        }
        d->keys = k;
        d->cap_keys = cap;
    }
    size_t at = key_upper(d, lo);
    if ((at > 0 && d->keys[at - 1].hi > lo) || (at < d->n_keys && d->keys[at].lo < hi)) {
        pthread_mutex_unlock(&d->lock);
        return pl_fail(POCKETLLM_ERR_INTERNAL, "vulkan: device ranges overlap at %p", (void *)lo);
    }
    memmove(&d->keys[at + 1], &d->keys[at], (d->n_keys - at) * sizeof *d->keys);
    d->keys[at] = (pl_vk_key){lo, hi, b, reserved};
    d->n_keys++;
    pthread_mutex_unlock(&d->lock);
    return POCKETLLM_OK;
}

/* Remove the key starting at lo; its buffer (or NULL). */
static pl_vk_buffer *key_remove(pl_vk_device *d, uintptr_t lo, bool *reserved, size_t *bytes) {
    pl_vk_buffer *b = NULL;
    pthread_mutex_lock(&d->lock);
    size_t at = key_upper(d, lo);
    if (at > 0 && d->keys[at - 1].lo == lo) {
        b = d->keys[at - 1].b;
        *reserved = d->keys[at - 1].reserved;
        *bytes = d->keys[at - 1].hi - d->keys[at - 1].lo;
        memmove(&d->keys[at - 1], &d->keys[at], (d->n_keys - at) * sizeof *d->keys);
        d->n_keys--;
    }
    pthread_mutex_unlock(&d->lock);
    return b;
}

pocketllm_status pl_vk_register(pl_vk_device *d, const void *host, size_t bytes, pl_vk_buffer *b) {
    return key_insert(d, (uintptr_t)host, (uintptr_t)host + bytes, b, false);
}

void *pl_vk_alloc_keyed(pl_vk_device *d, size_t bytes, const char *what) {
    pl_vk_buffer *b;
    if (pl_vk_buffer_new(d, bytes, PL_VK_MEM_DEVICE, what, &b)) return NULL;
    void *key = mmap(NULL, b->bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (key == MAP_FAILED) {
        pl_vk_buffer_free(d, b);
        pl_fail(POCKETLLM_ERR_NO_MEMORY, "vulkan: no address space for a key of %zu bytes", bytes);
        return NULL;
    }
    if (key_insert(d, (uintptr_t)key, (uintptr_t)key + b->bytes, b, true)) {
        munmap(key, b->bytes);
        pl_vk_buffer_free(d, b);
        return NULL;
    }
    return key;
}

void pl_vk_free_keyed(pl_vk_device *d, void *key) {
    if (!key) return;
    bool reserved = false;
    size_t bytes = 0;
    pl_vk_buffer *b = key_remove(d, (uintptr_t)key, &reserved, &bytes);
    if (!b) return;
    if (reserved) munmap(key, bytes);
    pl_vk_buffer_free(d, b);
}

VkDeviceAddress pl_vk_resolve(pl_vk_device *d, const void *p, size_t bytes, pl_vk_buffer **b, size_t *offset) {
    const uintptr_t u = (uintptr_t)p;
    VkDeviceAddress a = 0;
    pthread_mutex_lock(&d->lock);
    size_t at = key_upper(d, u);
    if (at > 0) {
        const pl_vk_key *k = &d->keys[at - 1];
        if (u >= k->lo && u < k->hi && bytes <= k->hi - u) {
            const size_t off = (size_t)(u - k->lo);
            if (b) *b = k->b;
            if (offset) *offset = off;
            a = k->b->addr + off;
        }
    }
    pthread_mutex_unlock(&d->lock);
    return a;
}

/* ---- one-shot commands --------------------------------------------------- */

pocketllm_status pl_vk_run_once(pl_vk_device *d, void (*record)(void *user, VkCommandBuffer cb), void *user) {
    VkCommandPool pool = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
    VkCommandBuffer cb;
    VkCommandPoolCreateInfo pi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                  .flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT,
                                  .queueFamilyIndex = d->caps.compute_queue_family};
    VkResult r = d->fn.vkCreateCommandPool(d->dev, &pi, NULL, &pool);
    const char *call = "vkCreateCommandPool";
    if (r != VK_SUCCESS) goto done;
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
    call = "vkAllocateCommandBuffers";
    if ((r = d->fn.vkAllocateCommandBuffers(d->dev, &ai, &cb)) != VK_SUCCESS) goto done;
    VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    call = "vkCreateFence";
    if ((r = d->fn.vkCreateFence(d->dev, &fi, NULL, &fence)) != VK_SUCCESS) goto done;
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    call = "vkBeginCommandBuffer";
    if ((r = d->fn.vkBeginCommandBuffer(cb, &bi)) != VK_SUCCESS) goto done;
    record(user, cb);
    call = "vkEndCommandBuffer";
    if ((r = d->fn.vkEndCommandBuffer(cb)) != VK_SUCCESS) goto done;
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
    pthread_mutex_lock(&d->lock);
    r = d->fn.vkQueueSubmit(d->queue, 1, &si, fence);
    pthread_mutex_unlock(&d->lock);
    call = "vkQueueSubmit";
    if (r != VK_SUCCESS) goto done;
    call = "vkWaitForFences";
    r = d->fn.vkWaitForFences(d->dev, 1, &fence, VK_TRUE, UINT64_MAX);
done:
    if (fence) d->fn.vkDestroyFence(d->dev, fence, NULL);
    if (pool) d->fn.vkDestroyCommandPool(d->dev, pool, NULL);
    return r == VK_SUCCESS ? POCKETLLM_OK : pl_vk_fail(r, call);
}

/* ---- the IQ tables --------------------------------------------------------- */

typedef struct copy_job {
    const pl_vk_device *d;
    VkBuffer src, dst;
    VkDeviceSize src_off, dst_off, bytes;
} copy_job;

static void record_copy(void *user, VkCommandBuffer cb) {
    const copy_job *j = user;
    VkBufferCopy rg = {j->src_off, j->dst_off, j->bytes};
    j->d->fn.vkCmdCopyBuffer(cb, j->src, j->dst, 1, &rg);
}

static void put_grid64(uint32_t *w, uint32_t at, const uint64_t *g, int n) {
    for (int i = 0; i < n; i++) {
        w[at + 2 * i] = (uint32_t)g[i];
        w[at + 2 * i + 1] = (uint32_t)(g[i] >> 32);
    }
}

static pocketllm_status upload_tables(pl_vk_device *d) {
    pl_vk_buffer *stage;
    pocketllm_status st = pl_vk_buffer_new(d, PL_VK_TAB_WORDS * 4, PL_VK_MEM_UPLOAD, "the IQ tables", &stage);
    if (st) return st;
    uint32_t *w = stage->mapped;
    put_grid64(w, PL_VK_TAB_IQ2XXS, pl_iq2xxs_grid, 256);
    put_grid64(w, PL_VK_TAB_IQ2XS, pl_iq2xs_grid, 512);
    put_grid64(w, PL_VK_TAB_IQ2S, pl_iq2s_grid, 1024);
    put_grid64(w, PL_VK_TAB_IQ1S, pl_iq1s_grid, 2048);
    for (int i = 0; i < 256; i++) w[PL_VK_TAB_IQ3XXS + i] = pl_iq3xxs_grid[i];
    for (int i = 0; i < 512; i++) w[PL_VK_TAB_IQ3S + i] = pl_iq3s_grid[i];
    for (int i = 0; i < 16; i++) {
        w[PL_VK_TAB_KVALUES_IQ4NL + i] = (uint32_t)(int32_t)pl_kvalues_iq4nl[i];
        w[PL_VK_TAB_KVALUES_MXFP4 + i] = (uint32_t)(int32_t)pl_kvalues_mxfp4[i];
    }
    if (!(st = pl_vk_buffer_new(d, PL_VK_TAB_WORDS * 4, PL_VK_MEM_DEVICE, "the IQ tables", &d->tables))) {
        copy_job j = {d, stage->buf, d->tables->buf, 0, 0, PL_VK_TAB_WORDS * 4};
        st = pl_vk_run_once(d, record_copy, &j);
    }
    pl_vk_buffer_free(d, stage);
    return st;
}

/* ---- weights --------------------------------------------------------------- */

/* Copy `bytes` of host memory into dst at dst_off through a staging
 * buffer, in pieces. */
static pocketllm_status stage_copy(pl_vk_device *d, pl_vk_buffer *stage, const uint8_t *src, size_t bytes,
                                   pl_vk_buffer *dst, size_t dst_off, uint64_t *done, uint64_t total,
                                   pl_upload_progress_fn progress, void *user) {
    while (bytes) {
        const size_t n = bytes < stage->bytes ? bytes : stage->bytes;
        memcpy(stage->mapped, src, n);
        copy_job j = {d, stage->buf, dst->buf, 0, dst_off, n};
        pocketllm_status st = pl_vk_run_once(d, record_copy, &j);
        if (st) return st;
        src += n;
        dst_off += n;
        bytes -= n;
        *done += n;
        if (progress) progress(user, d->base.name, *done, total);
    }
    return POCKETLLM_OK;
}

#define PL_VK_CHUNK_MAX ((size_t)1 << 30) /* bytes of weights per device buffer, at most */
#define PL_VK_STAGE_BYTES ((size_t)64 << 20)

pocketllm_status pl_vk_upload(pl_device *dev, const pl_upload_range *r, size_t n, pl_upload_progress_fn progress,
                              void *user) {
    pl_vk_device *d = (pl_vk_device *)dev;
    uint64_t total = 0, done = 0;
    for (size_t i = 0; i < n; i++) total += r[i].bytes;
    if (d->base.memory_used + total > d->base.memory) return pl_device_no_room(&d->base, total, "the weights");
    size_t chunk_max = PL_VK_CHUNK_MAX;
    if (chunk_max > d->caps.max_alloc) chunk_max = (size_t)d->caps.max_alloc;
    if (chunk_max > d->caps.max_buffer) chunk_max = (size_t)d->caps.max_buffer;
    pl_vk_buffer *stage;
    pocketllm_status st = pl_vk_buffer_new(d, total < PL_VK_STAGE_BYTES ? (size_t)total : PL_VK_STAGE_BYTES,
                                           PL_VK_MEM_UPLOAD, "the upload staging buffer", &stage);
    if (st) return st;
    for (size_t i = 0; i < n && !st;) {
        /* a chunk: ranges i .. j-1, contiguous in host memory up to
         * chunk_max.  The chunk's key covers the gaps between its ranges,
         * so a gap must be under a page: then every page of the key holds
         * data and stays mapped.  A wider gap (a vector the loader copied
         * next to a file's mapping) may hold unmapped address space, which
         * a later allocation's key could be given -- two keys on one
         * address. */
        const uint8_t *lo = r[i].host;
        size_t j = i + 1;
        while (j < n && (const uint8_t *)r[j].host + r[j].bytes - lo <= (ptrdiff_t)chunk_max &&
               (const uint8_t *)r[j].host >= (const uint8_t *)r[j - 1].host + r[j - 1].bytes &&
               (const uint8_t *)r[j].host - ((const uint8_t *)r[j - 1].host + r[j - 1].bytes) < 4096)
            j++;
        const size_t bytes = (size_t)((const uint8_t *)r[j - 1].host + r[j - 1].bytes - lo);
        pl_vk_buffer **grown = realloc(d->weights, (d->n_weights + 1) * sizeof *grown);
        if (!grown) {
            st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
            break;
        }
        d->weights = grown;
        pl_vk_buffer *b;
        char what[120];
        snprintf(what, sizeof what, "the weights from %s", r[i].name ? r[i].name : "?");
        if ((st = pl_vk_buffer_new(d, bytes, PL_VK_MEM_DEVICE, what, &b))) break;
        d->weights[d->n_weights++] = b;
        d->base.weight_bytes += b->bytes;
        if ((st = pl_vk_register(d, lo, bytes, b))) break;
        /* copy only the ranges (the gaps are alignment padding) */
        for (size_t k = i; k < j && !st; k++)
            st = stage_copy(d, stage, r[k].host, r[k].bytes, b, (size_t)((const uint8_t *)r[k].host - lo), &done, total,
                            progress, user);
        i = j;
    }
    pl_vk_buffer_free(d, stage);
    return st;
}

/* ---- open and close --------------------------------------------------------- */

static void vk_close(pl_device *dev) {
    pl_vk_device *d = (pl_vk_device *)dev;
    if (!d) return;
    if (d->dev) {
        d->fn.vkDeviceWaitIdle(d->dev);
        for (size_t i = 0; i < d->n_pipes; i++) d->fn.vkDestroyPipeline(d->dev, d->pipes[i].p, NULL);
        for (size_t i = 0; i < d->n_weights; i++) pl_vk_buffer_free(d, d->weights[i]);
        /* keys still registered belong to buffers freed above (weights) or
         * leaked by a caller; free the reserved ones */
        for (size_t i = 0; i < d->n_keys; i++)
            if (d->keys[i].reserved) {
                munmap((void *)d->keys[i].lo, d->keys[i].hi - d->keys[i].lo);
                pl_vk_buffer_free(d, d->keys[i].b);
            }
        pl_vk_buffer_free(d, d->tables);
        if (d->layout) d->fn.vkDestroyPipelineLayout(d->dev, d->layout, NULL);
        if (d->cache) d->fn.vkDestroyPipelineCache(d->dev, d->cache, NULL);
        d->fn.vkDestroyDevice(d->dev, NULL);
    }
    if (d->inst) d->fn.vkDestroyInstance(d->inst, NULL);
    pthread_mutex_destroy(&d->lock);
    free(d->keys);
    free(d->pipes);
    free(d->weights);
    free(d);
}

static const pl_device_ops vk_device_ops = {
    .close = vk_close,
    .upload = pl_vk_upload,
    .compute_new = pl_vk_compute_new,
};

static int type_rank(VkPhysicalDeviceType t) {
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
    default: return 4;
    }
}

static pocketllm_status create_device(pl_vk_device *d) {
    const pl_vk_caps *c = &d->caps;
    const float prio = 1.0f;
    VkDeviceQueueCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                  .queueFamilyIndex = c->compute_queue_family,
                                  .queueCount = 1,
                                  .pQueuePriorities = &prio};
    VkPhysicalDeviceShaderIntegerDotProductFeatures dotf = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES, .shaderIntegerDotProduct = VK_TRUE};
    VkPhysicalDeviceVulkan12Features f12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                            .bufferDeviceAddress = VK_TRUE};
    if (c->int_dot) f12.pNext = &dotf;
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f12};
    const char *exts[1] = {"VK_KHR_shader_integer_dot_product"};
    VkDeviceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                             .pNext = &f2,
                             .queueCreateInfoCount = 1,
                             .pQueueCreateInfos = &qi,
                             .enabledExtensionCount = c->int_dot_ext ? 1 : 0,
                             .ppEnabledExtensionNames = exts};
    VkResult r = d->fn.vkCreateDevice(d->pd, &ci, NULL, &d->dev);
    if (r != VK_SUCCESS) return pl_vk_fail(r, "vkCreateDevice");
    if (!pl_vk_load_device(&d->fn, d->dev))
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "vulkan: the driver lacks device functions the backend needs");
    d->fn.vkGetDeviceQueue(d->dev, c->compute_queue_family, 0, &d->queue);
    VkPushConstantRange pr = {VK_SHADER_STAGE_COMPUTE_BIT, 0, 128};
    VkPipelineLayoutCreateInfo li = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                     .pushConstantRangeCount = 1,
                                     .pPushConstantRanges = &pr};
    if ((r = d->fn.vkCreatePipelineLayout(d->dev, &li, NULL, &d->layout)) != VK_SUCCESS)
        return pl_vk_fail(r, "vkCreatePipelineLayout");
    VkPipelineCacheCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
    if ((r = d->fn.vkCreatePipelineCache(d->dev, &pci, NULL, &d->cache)) != VK_SUCCESS)
        return pl_vk_fail(r, "vkCreatePipelineCache");
    if (!choose_memory_types(d))
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "vulkan: the device has no host-visible memory for staging");
    return POCKETLLM_OK;
}

pocketllm_status pl_vk_device_open(int index, uint64_t memory_limit, pl_device **out) {
    *out = NULL;
    pl_vk_device *d = calloc(1, sizeof *d);
    if (!d) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    pthread_mutex_init(&d->lock, NULL);
    d->base.ops = &vk_device_ops;
    d->base.backend = "vulkan";
    pocketllm_status st = POCKETLLM_OK;
    const char *why = NULL;
    char buf[256];
    if (!pl_vk_load(&d->fn, &why)) {
        st = pl_fail(POCKETLLM_ERR_UNSUPPORTED, "vulkan: %s", why);
        goto fail;
    }
    if (!pl_vk_instance_new(&d->fn, &d->inst, buf, sizeof buf)) {
        st = pl_fail(POCKETLLM_ERR_UNSUPPORTED, "vulkan: %s", buf);
        goto fail;
    }
    uint32_t n = 0;
    d->fn.vkEnumeratePhysicalDevices(d->inst, &n, NULL);
    /* as many as pocketllm_vulkan_probe lists, so that every device one
     * can name is one `devices` shows */
    VkPhysicalDevice pds[8];
    if (n > 8) n = 8;
    if (n) d->fn.vkEnumeratePhysicalDevices(d->inst, &n, pds);
    if (n == 0) {
        st = pl_fail(POCKETLLM_ERR_NOT_FOUND, "vulkan: no Vulkan device (see 'pocketllm devices')");
        goto fail;
    }
    if (index >= (int)n) {
        st = pl_fail(POCKETLLM_ERR_NOT_FOUND, "vulkan:%d: there are %u Vulkan devices (0..%u; see 'pocketllm devices')",
                     index, n, n - 1);
        goto fail;
    }
    if (index < 0) {
        /* the best usable device: discrete, integrated, virtual, cpu */
        int best = -1, best_rank = 99;
        for (uint32_t i = 0; i < n; i++) {
            pl_vk_caps c;
            pl_vk_query_caps(&d->fn, pds[i], &c);
            if (c.usable && type_rank(c.type) < best_rank) best = (int)i, best_rank = type_rank(c.type);
        }
        if (best < 0) {
            st = pl_fail(POCKETLLM_ERR_UNSUPPORTED, "vulkan: no device meets the backend's needs (see 'pocketllm devices')");
            goto fail;
        }
        index = best;
    }
    d->index = index;
    d->pd = pds[index];
    pl_vk_query_caps(&d->fn, d->pd, &d->caps);
    snprintf(d->base.name, sizeof d->base.name, "vulkan:%d (%s)", index, d->caps.name);
    if (!d->caps.usable) {
        st = pl_fail(POCKETLLM_ERR_UNSUPPORTED, "%s cannot run the backend: %s", d->base.name, d->caps.why_not);
        goto fail;
    }
    d->base.memory = d->caps.device_local_bytes;
    if (memory_limit && memory_limit < d->base.memory) d->base.memory = memory_limit;
    const char *no_dot = getenv("POCKETLLM_VK_NO_INT_DOT");
    d->no_int_dot = !d->caps.int_dot || (no_dot && strcmp(no_dot, "1") == 0);
    if ((st = create_device(d)) || (st = upload_tables(d))) goto fail;
    *out = &d->base;
    return POCKETLLM_OK;
fail:
    vk_close(&d->base);
    return st;
}
