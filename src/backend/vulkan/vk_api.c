/*
 * vk_api.c -- dlopen the Vulkan loader and fill the entry-point tables.
 */
#include "backend/vulkan/vk_api.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static void *loader;
static PFN_vkGetInstanceProcAddr get_instance_proc;
static const char *load_why;

static void load_loader(void) {
    const char *path = getenv("POCKETLLM_VULKAN_LOADER");
    if (path && *path) loader = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    else {
        loader = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!loader) loader = dlopen("libvulkan.so", RTLD_NOW | RTLD_LOCAL);
    }
    if (!loader) {
        load_why = "no Vulkan loader: libvulkan.so.1 not found (Debian: apt-get install libvulkan1 and a driver, "
                   "e.g. mesa-vulkan-drivers)";
        return;
    }
    get_instance_proc = (PFN_vkGetInstanceProcAddr)dlsym(loader, "vkGetInstanceProcAddr");
    if (!get_instance_proc) load_why = "the Vulkan loader has no vkGetInstanceProcAddr";
}

bool pl_vk_load(pl_vk_fns *fn, const char **why) {
    pthread_once(&load_once, load_loader);
    memset(fn, 0, sizeof *fn);
    if (!get_instance_proc) {
        *why = load_why;
        return false;
    }
    fn->vkGetInstanceProcAddr = get_instance_proc;
#define PL_VK_LOAD_GLOBAL(name) fn->name = (PFN_##name)get_instance_proc(NULL, #name);
    PL_VK_GLOBAL_FNS(PL_VK_LOAD_GLOBAL)
#undef PL_VK_LOAD_GLOBAL
    if (!fn->vkCreateInstance || !fn->vkEnumerateInstanceExtensionProperties) {
        *why = "the Vulkan loader lacks vkCreateInstance";
        return false;
    }
    return true;
}

bool pl_vk_load_instance(pl_vk_fns *fn, VkInstance inst) {
    bool ok = true;
#define PL_VK_LOAD_INSTANCE(name)                                                                                      \
    fn->name = (PFN_##name)fn->vkGetInstanceProcAddr(inst, #name);                                                     \
    ok = ok && fn->name;
    PL_VK_INSTANCE_FNS(PL_VK_LOAD_INSTANCE)
#undef PL_VK_LOAD_INSTANCE
    return ok;
}

bool pl_vk_load_device(pl_vk_fns *fn, VkDevice dev) {
    bool ok = true;
#define PL_VK_LOAD_DEVICE(name)                                                                                        \
    fn->name = (PFN_##name)fn->vkGetDeviceProcAddr(dev, #name);                                                        \
    ok = ok && fn->name;
    PL_VK_DEVICE_FNS(PL_VK_LOAD_DEVICE)
#undef PL_VK_LOAD_DEVICE
    return ok;
}

const char *pl_vk_result_name(VkResult r) {
    switch (r) {
#define PL_VK_RESULT(x)                                                                                                \
    case x: return #x;
        PL_VK_RESULT(VK_SUCCESS)
        PL_VK_RESULT(VK_NOT_READY)
        PL_VK_RESULT(VK_TIMEOUT)
        PL_VK_RESULT(VK_INCOMPLETE)
        PL_VK_RESULT(VK_ERROR_OUT_OF_HOST_MEMORY)
        PL_VK_RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
        PL_VK_RESULT(VK_ERROR_INITIALIZATION_FAILED)
        PL_VK_RESULT(VK_ERROR_DEVICE_LOST)
        PL_VK_RESULT(VK_ERROR_MEMORY_MAP_FAILED)
        PL_VK_RESULT(VK_ERROR_LAYER_NOT_PRESENT)
        PL_VK_RESULT(VK_ERROR_EXTENSION_NOT_PRESENT)
        PL_VK_RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
        PL_VK_RESULT(VK_ERROR_INCOMPATIBLE_DRIVER)
        PL_VK_RESULT(VK_ERROR_TOO_MANY_OBJECTS)
        PL_VK_RESULT(VK_ERROR_FORMAT_NOT_SUPPORTED)
        PL_VK_RESULT(VK_ERROR_FRAGMENTED_POOL)
        PL_VK_RESULT(VK_ERROR_UNKNOWN)
        PL_VK_RESULT(VK_ERROR_OUT_OF_POOL_MEMORY)
        PL_VK_RESULT(VK_ERROR_INVALID_EXTERNAL_HANDLE)
        PL_VK_RESULT(VK_ERROR_FRAGMENTATION)
        PL_VK_RESULT(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
#undef PL_VK_RESULT
    default: return "VkResult error";
    }
}

#ifdef PL_SANITIZE_BUILD
/* dl_iterate_phdr callback: mark one loaded library never to be unloaded */
static int pin_one(struct dl_phdr_info *info, size_t size, void *arg) {
    (void)size;
    (void)arg;
    if (info->dlpi_name && info->dlpi_name[0]) {
        void *h = dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
        if (h) dlclose(h); /* drops our reference; RTLD_NODELETE stays */
    }
    return 0;
}
#endif

/* Why: the loader unloads the driver (Mesa's lavapipe here) at
 * vkDestroyInstance, and memory the driver keeps in its own globals for the
 * life of the process then has no visible owner, so LeakSanitizer reports it
 * as ours.  Pinning the driver keeps those globals mapped and scanned.  Only
 * the sanitizer builds do this; a release build lets the loader unload. */
void pl_vk_pin_driver(void) {
#ifdef PL_SANITIZE_BUILD
    dl_iterate_phdr(pin_one, NULL);
#endif
}
