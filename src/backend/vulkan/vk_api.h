/*
 * vk_api.h -- the Vulkan entry points the backend uses, loaded at run time
 * from the loader library (libvulkan.so.1) so that the engine neither links
 * against nor needs Vulkan: on a host without a loader the Vulkan backend
 * says why and everything else runs on the CPU.
 *
 * The headers come from Debian's libvulkan-dev at build time (types only,
 * VK_NO_PROTOTYPES); every function is reached through a pl_vk_fns table
 * filled for one instance and one device.
 */
#ifndef PL_VK_API_H
#define PL_VK_API_H

#define VK_NO_PROTOTYPES
#include <stdbool.h>
#include <vulkan/vulkan.h>

#include "pocketllm.h"

/* Functions reached before an instance exists. */
#define PL_VK_GLOBAL_FNS(X)                                                                                            \
    X(vkCreateInstance)                                                                                                \
    X(vkEnumerateInstanceVersion)                                                                                      \
    X(vkEnumerateInstanceExtensionProperties)

/* Functions of an instance (and of its physical devices). */
#define PL_VK_INSTANCE_FNS(X)                                                                                          \
    X(vkDestroyInstance)                                                                                               \
    X(vkEnumeratePhysicalDevices)                                                                                      \
    X(vkGetPhysicalDeviceProperties)                                                                                   \
    X(vkGetPhysicalDeviceProperties2)                                                                                  \
    X(vkGetPhysicalDeviceFeatures2)                                                                                    \
    X(vkGetPhysicalDeviceMemoryProperties)                                                                             \
    X(vkGetPhysicalDeviceMemoryProperties2)                                                                            \
    X(vkGetPhysicalDeviceQueueFamilyProperties)                                                                        \
    X(vkEnumerateDeviceExtensionProperties)                                                                            \
    X(vkCreateDevice)                                                                                                  \
    X(vkGetDeviceProcAddr)

/* Functions of a logical device. */
#define PL_VK_DEVICE_FNS(X)                                                                                            \
    X(vkDestroyDevice)                                                                                                 \
    X(vkGetDeviceQueue)                                                                                                \
    X(vkCreateBuffer)                                                                                                  \
    X(vkDestroyBuffer)                                                                                                 \
    X(vkGetBufferMemoryRequirements)                                                                                   \
    X(vkAllocateMemory)                                                                                                \
    X(vkFreeMemory)                                                                                                    \
    X(vkBindBufferMemory)                                                                                              \
    X(vkMapMemory)                                                                                                     \
    X(vkUnmapMemory)                                                                                                   \
    X(vkFlushMappedMemoryRanges)                                                                                       \
    X(vkInvalidateMappedMemoryRanges)                                                                                  \
    X(vkGetBufferDeviceAddress)                                                                                        \
    X(vkCreateShaderModule)                                                                                            \
    X(vkDestroyShaderModule)                                                                                           \
    X(vkCreatePipelineLayout)                                                                                          \
    X(vkDestroyPipelineLayout)                                                                                         \
    X(vkCreatePipelineCache)                                                                                           \
    X(vkDestroyPipelineCache)                                                                                          \
    X(vkGetPipelineCacheData)                                                                                          \
    X(vkCreateComputePipelines)                                                                                        \
    X(vkDestroyPipeline)                                                                                               \
    X(vkCreateCommandPool)                                                                                             \
    X(vkDestroyCommandPool)                                                                                            \
    X(vkAllocateCommandBuffers)                                                                                        \
    X(vkFreeCommandBuffers)                                                                                            \
    X(vkBeginCommandBuffer)                                                                                            \
    X(vkEndCommandBuffer)                                                                                              \
    X(vkResetCommandPool)                                                                                              \
    X(vkCmdBindPipeline)                                                                                               \
    X(vkCmdPushConstants)                                                                                              \
    X(vkCmdDispatch)                                                                                                   \
    X(vkCmdPipelineBarrier)                                                                                            \
    X(vkCmdCopyBuffer)                                                                                                 \
    X(vkCmdFillBuffer)                                                                                                 \
    X(vkQueueSubmit)                                                                                                   \
    X(vkQueueWaitIdle)                                                                                                 \
    X(vkCreateFence)                                                                                                   \
    X(vkDestroyFence)                                                                                                  \
    X(vkWaitForFences)                                                                                                 \
    X(vkResetFences)                                                                                                   \
    X(vkDeviceWaitIdle)

typedef struct pl_vk_fns {
#define PL_VK_FN_FIELD(name) PFN_##name name;
    PL_VK_GLOBAL_FNS(PL_VK_FN_FIELD)
    PL_VK_INSTANCE_FNS(PL_VK_FN_FIELD)
    PL_VK_DEVICE_FNS(PL_VK_FN_FIELD)
#undef PL_VK_FN_FIELD
    PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr;
} pl_vk_fns;

/* Load the loader library (POCKETLLM_VULKAN_LOADER names another file; the
 * tests use it to play a host without Vulkan) and the global functions.
 * Once per process; on failure *why says what is missing. */
bool pl_vk_load(pl_vk_fns *fn, const char **why);
/* The instance functions of `inst`; false when one is missing. */
bool pl_vk_load_instance(pl_vk_fns *fn, VkInstance inst);
/* The device functions of `dev`; false when one is missing. */
bool pl_vk_load_device(pl_vk_fns *fn, VkDevice dev);

/* In sanitizer builds: keep every library loaded so far (the driver the
 * loader just opened) from being unloaded; a no-op otherwise. */
void pl_vk_pin_driver(void);

/* A one-line name for a VkResult ("VK_ERROR_OUT_OF_DEVICE_MEMORY"). */
const char *pl_vk_result_name(VkResult r);

#endif
