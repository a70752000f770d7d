/*
 * cuda_probe.c -- is there an NVIDIA driver and a device?  Asked of the
 * driver library itself through dlopen, so the answer needs neither the CUDA
 * toolkit nor a CUDA build of PocketLLM, and a host without a driver gets a
 * reason instead of a failure.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "pocketllm.h"

/* Driver API entry points (stable C ABI of libcuda). */
typedef int (*cu_init_fn)(unsigned int);
typedef int (*cu_driver_version_fn)(int *);
typedef int (*cu_device_count_fn)(int *);
typedef int (*cu_device_get_fn)(int *, int);
typedef int (*cu_device_name_fn)(char *, int, int);
typedef int (*cu_device_mem_fn)(size_t *, int);
typedef int (*cu_device_attr_fn)(int *, int, int);
typedef int (*cu_error_string_fn)(int, const char **);

enum { CU_ATTR_CC_MAJOR = 75, CU_ATTR_CC_MINOR = 76 };

static void cu_reason(pocketllm_cuda_info *out, void *lib, const char *call, int code) {
    const char *msg = NULL;
    cu_error_string_fn es = (cu_error_string_fn)dlsym(lib, "cuGetErrorString");
    if (es) es(code, &msg);
    snprintf(out->reason, sizeof out->reason, "%s failed with error %d (%s)", call, code, msg ? msg : "unknown");
}

pocketllm_status pocketllm_cuda_probe(pocketllm_cuda_info *out) {
    if (!out) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "cuda_probe: NULL");
    memset(out, 0, sizeof *out);
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) lib = dlopen("libcuda.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(out->reason, sizeof out->reason, "no NVIDIA driver: libcuda.so.1 not found");
        return POCKETLLM_OK;
    }
    cu_init_fn init = (cu_init_fn)dlsym(lib, "cuInit");
    cu_driver_version_fn ver = (cu_driver_version_fn)dlsym(lib, "cuDriverGetVersion");
    cu_device_count_fn count = (cu_device_count_fn)dlsym(lib, "cuDeviceGetCount");
    cu_device_get_fn get = (cu_device_get_fn)dlsym(lib, "cuDeviceGet");
    cu_device_name_fn name = (cu_device_name_fn)dlsym(lib, "cuDeviceGetName");
    cu_device_mem_fn mem = (cu_device_mem_fn)dlsym(lib, "cuDeviceTotalMem_v2");
    cu_device_attr_fn attr = (cu_device_attr_fn)dlsym(lib, "cuDeviceGetAttribute");
    if (!init || !ver || !count || !get || !name || !mem || !attr) {
        snprintf(out->reason, sizeof out->reason, "libcuda.so.1 lacks the driver API entry points");
        dlclose(lib);
        return POCKETLLM_OK;
    }
    int rc = init(0);
    if (rc != 0) {
        cu_reason(out, lib, "cuInit", rc);
        dlclose(lib);
        return POCKETLLM_OK;
    }
    out->driver_loaded = 1;
    ver(&out->driver_version);
    int n = 0;
    if ((rc = count(&n)) != 0) {
        cu_reason(out, lib, "cuDeviceGetCount", rc);
        dlclose(lib);
        return POCKETLLM_OK;
    }
    out->device_count = n;
    if (n == 0) snprintf(out->reason, sizeof out->reason, "driver loaded but no CUDA device is visible");
    for (int i = 0; i < n && i < (int)(sizeof out->devices / sizeof out->devices[0]); i++) {
        pocketllm_cuda_device *d = &out->devices[i];
        int dev = 0;
        size_t bytes = 0;
        if (get(&dev, i) != 0) continue;
        name(d->name, (int)sizeof d->name, dev);
        d->name[sizeof d->name - 1] = '\0';
        if (mem(&bytes, dev) == 0) d->memory_bytes = bytes;
        attr(&d->compute_major, CU_ATTR_CC_MAJOR, dev);
        attr(&d->compute_minor, CU_ATTR_CC_MINOR, dev);
    }
    /* the driver stays loaded: unloading libcuda after cuInit is unsafe */
    return POCKETLLM_OK;
}
