/*
 * vk_device.h -- one Vulkan device opened for a model: the instance, the
 * logical device and its compute queue, what the device can do, its
 * memory, the pipelines made so far, and the map from the pointers the
 * graph holds to device addresses.
 *
 * Pointers.  The graph passes plain pointers to ops and does arithmetic on
 * them (a row of the cache, the last rows of a batch).  On a GPU they must
 * name device memory, so every device buffer is given a key: a range of
 * host address space reserved with PROT_NONE (the kernel guarantees no
 * other mapping shares it, and a stray host read of it faults at once).
 * Weights keep the host address they have in the mapped file as their key.
 * pl_vk_resolve() turns any pointer inside a key range into the buffer and
 * device address behind it.  Shaders reach memory by device address
 * (VK_KHR_buffer_device_address, core in Vulkan 1.2): no descriptor sets,
 * and no limit on how much one binding may cover.
 */
#ifndef PL_VK_DEVICE_H
#define PL_VK_DEVICE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/device.h"
#include "backend/vulkan/vk_api.h"

/* What a physical device offers that the backend cares about. */
typedef struct pl_vk_caps {
    char name[256];
    char driver[600];        /* driver name and info */
    VkPhysicalDeviceType type;
    uint32_t api_version, vendor_id, device_id;
    uint32_t subgroup_size;  /* queried, never assumed */
    bool subgroup_arith;     /* subgroup arithmetic in compute shaders */
    bool bda;                /* bufferDeviceAddress */
    bool fp16;               /* shaderFloat16 */
    bool int_dot;            /* shaderIntegerDotProduct (SPV_KHR_integer_dot_product) */
    bool int_dot_fast;       /* 4x8-bit packed signed dot reported as accelerated */
    bool int_dot_ext;        /* needs VK_KHR_shader_integer_dot_product enabled (device < 1.3) */
    bool coopmat_khr, coopmat_nv;
    bool memory_budget_ext;  /* VK_EXT_memory_budget */
    uint32_t n_heaps;
    uint64_t heap_bytes[VK_MAX_MEMORY_HEAPS];
    bool heap_device_local[VK_MAX_MEMORY_HEAPS];
    uint64_t device_local_bytes; /* the largest device-local heap */
    uint64_t max_alloc;      /* maxMemoryAllocationSize */
    uint64_t max_buffer;     /* maxBufferSize (Vulkan 1.3) or max_alloc */
    uint32_t max_wg_invocations, max_wg_count[3], max_shared;
    uint32_t compute_queue_family; /* UINT32_MAX when none */
    bool usable;
    char why_not[160];
} pl_vk_caps;

/* Where a buffer lives. */
typedef enum pl_vk_mem { PL_VK_MEM_DEVICE, PL_VK_MEM_UPLOAD, PL_VK_MEM_READBACK } pl_vk_mem;

/* A buffer with its memory, device address and (host-visible kinds) its
 * mapping. */
typedef struct pl_vk_buffer {
    VkBuffer buf;
    VkDeviceMemory mem;
    VkDeviceAddress addr;
    size_t bytes;
    pl_vk_mem kind;
    void *mapped;
    bool coherent;
} pl_vk_buffer;

/* A key range and the buffer it stands for. */
typedef struct pl_vk_key {
    uintptr_t lo, hi; /* [lo, hi) of host address space */
    pl_vk_buffer *b;
    bool reserved;    /* the key is our own PROT_NONE mapping (not a weight's host address) */
} pl_vk_key;

typedef struct pl_vk_pipeline {
    char name[48];
    uint32_t spec[8];
    uint32_t n_spec;
    VkPipeline p;
} pl_vk_pipeline;

typedef struct pl_vk_device {
    pl_device base;
    pl_vk_fns fn;
    int index;
    VkInstance inst;
    VkPhysicalDevice pd;
    VkDevice dev;
    VkQueue queue;
    pl_vk_caps caps;
    uint32_t mt[3];        /* memory type index per pl_vk_mem */
    bool mt_coherent[3];
    VkPipelineLayout layout; /* push constants only */
    VkPipelineCache cache;
    pthread_mutex_t lock;  /* keys, pipelines, the queue, memory_used */
    pl_vk_key *keys;       /* sorted by lo */
    size_t n_keys, cap_keys;
    pl_vk_pipeline *pipes;
    size_t n_pipes, cap_pipes;
    pl_vk_buffer **weights; /* the uploaded weight chunks */
    size_t n_weights;
    pl_vk_buffer *tables;  /* the IQ codebooks, at the offsets of vk_tables.h */
    bool no_int_dot;       /* POCKETLLM_VK_NO_INT_DOT=1: the shaders without int8 dot products */
} pl_vk_device;

/* Probe device `i` of an instance into *caps. */
void pl_vk_query_caps(const pl_vk_fns *fn, VkPhysicalDevice pd, pl_vk_caps *caps);
/* A new instance (Vulkan 1.2 or later asked for); false with *why. */
bool pl_vk_instance_new(pl_vk_fns *fn, VkInstance *out, char *why, size_t why_cap);

pocketllm_status pl_vk_device_open(int index, uint64_t memory_limit, pl_device **out);

/* Buffers.  Device buffers count against the budget (base.memory_used). */
pocketllm_status pl_vk_buffer_new(pl_vk_device *d, size_t bytes, pl_vk_mem kind, const char *what,
                                  pl_vk_buffer **out);
void pl_vk_buffer_free(pl_vk_device *d, pl_vk_buffer *b);

/* Device memory the graph addresses: a new buffer under a fresh key range
 * (returned), or NULL with a message. */
void *pl_vk_alloc_keyed(pl_vk_device *d, size_t bytes, const char *what);
void pl_vk_free_keyed(pl_vk_device *d, void *key);
/* Register an existing buffer under the host range [host, host + bytes). */
pocketllm_status pl_vk_register(pl_vk_device *d, const void *host, size_t bytes, pl_vk_buffer *b);

/* The device address of pointer p, which must lie in a key range with
 * `bytes` bytes after it inside the same range; 0 when it does not. */
VkDeviceAddress pl_vk_resolve(pl_vk_device *d, const void *p, size_t bytes, pl_vk_buffer **b, size_t *offset);

/* The pipeline of embedded shader `name` with specialization constants
 * spec[0..n) (constant_id i = spec[i]); made on first use.  NULL with a
 * message when the shader is not in this build. */
VkPipeline pl_vk_pipeline_get(pl_vk_device *d, const char *name, const uint32_t *spec, uint32_t n);
/* Whether this build has an embedded shader called `name`. */
bool pl_vk_shader_exists(const char *name);

/* One-shot command buffer on the device's queue (weights upload, tests):
 * record with fn, submit, wait. */
pocketllm_status pl_vk_run_once(pl_vk_device *d, void (*record)(void *user, VkCommandBuffer cb), void *user);

/* Fail with "vulkan: CALL failed: VK_ERROR_..." */
pocketllm_status pl_vk_fail(VkResult r, const char *call);

#endif
