/*
 * vk_caps.c -- what a Vulkan physical device can do, and the public probe
 * behind `pocketllm devices`: every device the loader sees, whether the
 * backend can use it, and why not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/vulkan/vk_device.h"
#include "base/error.h"

/* Declared here because the Vulkan headers of Debian 12 (1.3.239) predate
 * VK_KHR_cooperative_matrix; the name is all the probe needs. */
#define PL_VK_KHR_COOPMAT "VK_KHR_cooperative_matrix"

bool pl_vk_instance_new(pl_vk_fns *fn, VkInstance *out, char *why, size_t why_cap) {
    uint32_t version = VK_API_VERSION_1_0;
    if (fn->vkEnumerateInstanceVersion) fn->vkEnumerateInstanceVersion(&version);
    if (version < VK_API_VERSION_1_2) {
        snprintf(why, why_cap, "the Vulkan loader offers version %u.%u; the backend needs 1.2", VK_VERSION_MAJOR(version),
                 VK_VERSION_MINOR(version));
        return false;
    }
    /* portability enumeration lets a loader list non-conformant drivers
     * (MoltenVK); asked for only when the loader has it */
    uint32_t n_ext = 0;
    fn->vkEnumerateInstanceExtensionProperties(NULL, &n_ext, NULL);
    VkExtensionProperties *exts = calloc(n_ext ? n_ext : 1, sizeof *exts);
    bool portability = false;
    if (exts && fn->vkEnumerateInstanceExtensionProperties(NULL, &n_ext, exts) == VK_SUCCESS)
        for (uint32_t i = 0; i < n_ext; i++)
            if (strcmp(exts[i].extensionName, "VK_KHR_portability_enumeration") == 0) portability = true;
    free(exts);
    const char *ext_names[1] = {"VK_KHR_portability_enumeration"};
    VkApplicationInfo app = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pApplicationName = "pocketllm",
        .pEngineName = "pocketllm",
        .apiVersion = VK_API_VERSION_1_3 <= version ? VK_API_VERSION_1_3 : VK_API_VERSION_1_2,
    };
    VkInstanceCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
        .pApplicationInfo = &app,
        .enabledExtensionCount = portability ? 1 : 0,
        .ppEnabledExtensionNames = ext_names,
        .flags = portability ? VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR : 0,
    };
    VkResult r = fn->vkCreateInstance(&ci, NULL, out);
    if (r != VK_SUCCESS) {
        snprintf(why, why_cap, "vkCreateInstance failed: %s", pl_vk_result_name(r));
        return false;
    }
    pl_vk_pin_driver();
    if (!pl_vk_load_instance(fn, *out)) {
        snprintf(why, why_cap, "the Vulkan loader lacks instance functions the backend needs");
        return false;
    }
    return true;
}

static bool has_ext(const VkExtensionProperties *e, uint32_t n, const char *name) {
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(e[i].extensionName, name) == 0) return true;
    return false;
}

void pl_vk_query_caps(const pl_vk_fns *fn, VkPhysicalDevice pd, pl_vk_caps *c) {
    memset(c, 0, sizeof *c);
    VkPhysicalDeviceProperties p;
    fn->vkGetPhysicalDeviceProperties(pd, &p);
    snprintf(c->name, sizeof c->name, "%s", p.deviceName);
    c->type = p.deviceType;
    c->api_version = p.apiVersion;
    c->vendor_id = p.vendorID;
    c->device_id = p.deviceID;
    c->max_alloc = UINT32_MAX;
    c->max_wg_invocations = p.limits.maxComputeWorkGroupInvocations;
    for (int i = 0; i < 3; i++) c->max_wg_count[i] = p.limits.maxComputeWorkGroupCount[i];
    c->max_shared = p.limits.maxComputeSharedMemorySize;
    c->compute_queue_family = UINT32_MAX;

    uint32_t n_ext = 0;
    fn->vkEnumerateDeviceExtensionProperties(pd, NULL, &n_ext, NULL);
    VkExtensionProperties *ext = calloc(n_ext ? n_ext : 1, sizeof *ext);
    if (ext) fn->vkEnumerateDeviceExtensionProperties(pd, NULL, &n_ext, ext);
    else n_ext = 0;
    c->coopmat_khr = has_ext(ext, n_ext, PL_VK_KHR_COOPMAT);
    c->coopmat_nv = has_ext(ext, n_ext, "VK_NV_cooperative_matrix");
    c->memory_budget_ext = has_ext(ext, n_ext, "VK_EXT_memory_budget");
    const bool dot_ext = has_ext(ext, n_ext, "VK_KHR_shader_integer_dot_product");
    free(ext);

    if (p.apiVersion < VK_API_VERSION_1_2) {
        snprintf(c->why_not, sizeof c->why_not, "the device supports Vulkan %u.%u; the backend needs 1.2",
                 VK_VERSION_MAJOR(p.apiVersion), VK_VERSION_MINOR(p.apiVersion));
        return;
    }
    /* properties: driver, subgroups, integer dot product, maintenance3 */
    VkPhysicalDeviceShaderIntegerDotProductProperties dotp = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_PROPERTIES};
    VkPhysicalDeviceMaintenance4Properties m4 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_PROPERTIES};
    VkPhysicalDeviceMaintenance3Properties m3 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
    VkPhysicalDeviceSubgroupProperties sg = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES, .pNext = &m3};
    VkPhysicalDeviceDriverProperties drv = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES, .pNext = &sg};
    const bool v13 = p.apiVersion >= VK_API_VERSION_1_3;
    if (v13) {
        m3.pNext = &m4;
        m4.pNext = &dotp;
    } else if (dot_ext) {
        m3.pNext = &dotp;
    }
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &drv};
    fn->vkGetPhysicalDeviceProperties2(pd, &p2);
    snprintf(c->driver, sizeof c->driver, "%s%s%s", drv.driverName, drv.driverInfo[0] ? " " : "", drv.driverInfo);
    c->subgroup_size = sg.subgroupSize;
    c->subgroup_arith = (sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                        (sg.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) &&
                        (sg.supportedOperations & VK_SUBGROUP_FEATURE_BASIC_BIT);
    c->max_alloc = m3.maxMemoryAllocationSize;
    c->max_buffer = v13 ? m4.maxBufferSize : m3.maxMemoryAllocationSize;
    c->int_dot_fast = dotp.integerDotProduct4x8BitPackedSignedAccelerated;

    /* features */
    VkPhysicalDeviceShaderIntegerDotProductFeatures dotf = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES};
    VkPhysicalDeviceVulkan12Features f12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    if (v13 || dot_ext) f12.pNext = &dotf;
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f12};
    fn->vkGetPhysicalDeviceFeatures2(pd, &f2);
    c->bda = f12.bufferDeviceAddress;
    c->fp16 = f12.shaderFloat16;
    c->int_dot = (v13 || dot_ext) && dotf.shaderIntegerDotProduct;
    c->int_dot_ext = c->int_dot && !v13;

    /* memory heaps (the budget extension's figure is not used: it moves
     * with other processes, while the heap size is what one process may
     * hope to own) */
    VkPhysicalDeviceMemoryProperties mp;
    fn->vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    c->n_heaps = mp.memoryHeapCount;
    for (uint32_t h = 0; h < mp.memoryHeapCount; h++) {
        c->heap_bytes[h] = mp.memoryHeaps[h].size;
        c->heap_device_local[h] = (mp.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0;
        if (c->heap_device_local[h] && c->heap_bytes[h] > c->device_local_bytes) c->device_local_bytes = c->heap_bytes[h];
    }

    uint32_t n_q = 0;
    fn->vkGetPhysicalDeviceQueueFamilyProperties(pd, &n_q, NULL);
    VkQueueFamilyProperties *qf = calloc(n_q ? n_q : 1, sizeof *qf);
    if (qf) {
        fn->vkGetPhysicalDeviceQueueFamilyProperties(pd, &n_q, qf);
        /* a compute queue, preferably one without graphics (the compute
         * engines of discrete GPUs) */
        for (int pass = 0; pass < 2 && c->compute_queue_family == UINT32_MAX; pass++)
            for (uint32_t i = 0; i < n_q; i++) {
                const bool compute = qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT;
                const bool graphics = qf[i].queueFlags & VK_QUEUE_GRAPHICS_BIT;
                if (compute && (pass == 1 || !graphics) && qf[i].queueCount > 0) {
                    c->compute_queue_family = i;
                    break;
                }
            }
        free(qf);
    }

    if (!c->bda) snprintf(c->why_not, sizeof c->why_not, "no bufferDeviceAddress support");
    else if (!c->subgroup_arith) snprintf(c->why_not, sizeof c->why_not, "no subgroup arithmetic in compute shaders");
    else if (c->compute_queue_family == UINT32_MAX) snprintf(c->why_not, sizeof c->why_not, "no compute queue");
    else if (c->max_wg_invocations < 256) snprintf(c->why_not, sizeof c->why_not, "work groups of fewer than 256 invocations");
    else if (c->max_shared < 16384) snprintf(c->why_not, sizeof c->why_not, "less than 16 KiB of shared memory");
    else c->usable = true;
}

static const char *type_name(VkPhysicalDeviceType t) {
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
    }
}

pocketllm_status pocketllm_vulkan_probe(pocketllm_vulkan_info *out) {
    if (!out) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "vulkan_probe: NULL");
    memset(out, 0, sizeof *out);
    pl_vk_fns fn;
    const char *why = NULL;
    if (!pl_vk_load(&fn, &why)) {
        snprintf(out->reason, sizeof out->reason, "%s", why);
        return POCKETLLM_OK;
    }
    out->loader_loaded = 1;
    uint32_t version = VK_API_VERSION_1_0;
    if (fn.vkEnumerateInstanceVersion) fn.vkEnumerateInstanceVersion(&version);
    snprintf(out->instance_version, sizeof out->instance_version, "%u.%u.%u", VK_VERSION_MAJOR(version),
             VK_VERSION_MINOR(version), VK_VERSION_PATCH(version));
    VkInstance inst;
    if (!pl_vk_instance_new(&fn, &inst, out->reason, sizeof out->reason)) return POCKETLLM_OK;
    uint32_t n = 0;
    fn.vkEnumeratePhysicalDevices(inst, &n, NULL);
    VkPhysicalDevice pds[8];
    if (n > 8) n = 8;
    VkResult r = fn.vkEnumeratePhysicalDevices(inst, &n, pds);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) n = 0;
    out->device_count = (int)n;
    if (n == 0) snprintf(out->reason, sizeof out->reason, "the Vulkan loader found no device (no driver installed?)");
    int usable = 0;
    for (uint32_t i = 0; i < n; i++) {
        pl_vk_caps c;
        pl_vk_query_caps(&fn, pds[i], &c);
        pocketllm_vulkan_device *d = &out->devices[i];
        snprintf(d->name, sizeof d->name, "%s", c.name);
        snprintf(d->type, sizeof d->type, "%s", type_name(c.type));
        snprintf(d->driver, sizeof d->driver, "%s", c.driver);
        snprintf(d->api_version, sizeof d->api_version, "%u.%u.%u", VK_VERSION_MAJOR(c.api_version),
                 VK_VERSION_MINOR(c.api_version), VK_VERSION_PATCH(c.api_version));
        d->vendor_id = c.vendor_id;
        d->device_id = c.device_id;
        d->n_heaps = c.n_heaps < 8 ? c.n_heaps : 8;
        for (uint32_t h = 0; h < d->n_heaps; h++) {
            d->heap_bytes[h] = c.heap_bytes[h];
            d->heap_device_local[h] = c.heap_device_local[h];
        }
        d->device_local_bytes = c.device_local_bytes;
        d->subgroup_size = c.subgroup_size;
        d->fp16 = c.fp16;
        d->int8_dot = c.int_dot;
        d->int8_dot_accelerated = c.int_dot_fast;
        d->cooperative_matrix = c.coopmat_khr;
        d->cooperative_matrix_nv = c.coopmat_nv;
        d->usable = c.usable;
        snprintf(d->why_not, sizeof d->why_not, "%s", c.why_not);
        usable += c.usable;
    }
    if (n > 0 && usable == 0) snprintf(out->reason, sizeof out->reason, "no device meets the backend's needs");
    fn.vkDestroyInstance(inst, NULL);
    return POCKETLLM_OK;
}
