/*
 * cpu.c -- what the host CPU is and can do: brand, cores, memory, and the
 * SIMD features both the chip and the operating system support (AVX-512
 * state must be enabled by the OS, not just present in CPUID).  Reads only
 * CPUID, /proc and /sys, so it works on a machine with nothing installed.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cpu.h"
#include "base/error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define PL_X86 1
#endif
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

static const char *feature_names[] = {"sse4.2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw",
                                      "avx512vl", "avx512vnni", "avx512bf16", "avxvnni", "neon",
                                      "arm-dotprod", "arm-fp16", "arm-i8mm", "arm-bf16"};

const char *pocketllm_cpu_feature_name(uint32_t bit) {
    for (unsigned i = 0; i < sizeof feature_names / sizeof feature_names[0]; i++)
        if (bit == (1u << i)) return feature_names[i];
    return NULL;
}

#ifdef PL_X86
static uint64_t xgetbv0(void) {
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

static uint32_t x86_features(char *brand, size_t brand_len) {
    uint32_t a, b, c, d, f = 0;
    if (!__get_cpuid(0, &a, &b, &c, &d)) return 0;
    uint32_t max_leaf = a;
    __cpuid(1, a, b, c, d);
    bool osxsave = (c >> 27) & 1;
    uint64_t xcr0 = osxsave ? xgetbv0() : 0;
    bool ymm = (xcr0 & 0x6) == 0x6;      /* SSE and AVX state */
    bool zmm = (xcr0 & 0xe6) == 0xe6;    /* plus opmask and ZMM state */
    if ((c >> 20) & 1) f |= POCKETLLM_CPU_SSE42;
    if (ymm && ((c >> 28) & 1)) f |= POCKETLLM_CPU_AVX;
    if (ymm && ((c >> 12) & 1)) f |= POCKETLLM_CPU_FMA;
    if (ymm && ((c >> 29) & 1)) f |= POCKETLLM_CPU_F16C;
    if (max_leaf >= 7) {
        __cpuid_count(7, 0, a, b, c, d);
        if (ymm && ((b >> 5) & 1)) f |= POCKETLLM_CPU_AVX2;
        if (zmm && ((b >> 16) & 1)) f |= POCKETLLM_CPU_AVX512F;
        if (zmm && ((b >> 30) & 1)) f |= POCKETLLM_CPU_AVX512BW;
        if (zmm && ((b >> 31) & 1)) f |= POCKETLLM_CPU_AVX512VL;
        if (zmm && ((c >> 11) & 1)) f |= POCKETLLM_CPU_AVX512VNNI;
        __cpuid_count(7, 1, a, b, c, d);
        if (zmm && ((a >> 5) & 1)) f |= POCKETLLM_CPU_AVX512BF16;
        if (ymm && ((a >> 4) & 1)) f |= POCKETLLM_CPU_AVXVNNI;
    }
    if (__get_cpuid(0x80000000, &a, &b, &c, &d) && a >= 0x80000004 && brand_len >= 49) {
        uint32_t r[12];
        for (uint32_t i = 0; i < 3; i++) __cpuid(0x80000002 + i, r[i * 4], r[i * 4 + 1], r[i * 4 + 2], r[i * 4 + 3]);
        memcpy(brand, r, 48);
        brand[48] = '\0';
    }
    return f;
}
#endif

/* SIMD features usable here; fills the brand string where CPUID has one. */
static uint32_t detect_features(char *brand, size_t brand_len) {
    uint32_t f = 0;
#ifdef PL_X86
    f = x86_features(brand, brand_len);
#else
    (void)brand;
    (void)brand_len;
#endif
#if defined(__aarch64__)
    f |= POCKETLLM_CPU_NEON; /* Advanced SIMD is mandatory on AArch64 */
#if defined(__linux__)
    unsigned long hw = getauxval(AT_HWCAP);
    if (hw & (1ul << 20)) f |= POCKETLLM_CPU_ARM_DOTPROD; /* HWCAP_ASIMDDP */
    if (hw & (1ul << 10)) f |= POCKETLLM_CPU_ARM_FP16;    /* HWCAP_ASIMDHP */
    unsigned long hw2 = getauxval(AT_HWCAP2);
    if (hw2 & (1ul << 13)) f |= POCKETLLM_CPU_ARM_I8MM; /* HWCAP2_I8MM */
    if (hw2 & (1ul << 14)) f |= POCKETLLM_CPU_ARM_BF16; /* HWCAP2_BF16 */
#endif
#endif
    return f;
}

/* Trim leading and trailing blanks in place. */
static void trim(char *s) {
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    size_t i = 0;
    while (s[i] && isspace((unsigned char)s[i])) i++;
    memmove(s, s + i, n - i + 1);
}

/* First "key : value" line of /proc/cpuinfo with this key. */
static bool cpuinfo_field(const char *key, char *out, size_t len) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return false;
    char line[512];
    bool found = false;
    size_t klen = strlen(key);
    while (!found && fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) != 0) continue;
        char *colon = strchr(line, ':');
        if (!colon) continue;
        snprintf(out, len, "%s", colon + 1);
        trim(out);
        found = true;
    }
    fclose(f);
    return found;
}

/* Distinct physical cores among the CPUs this process may run on, from the
 * sysfs topology (package id, core id) pairs. */
static uint32_t count_physical_cores(uint32_t logical) {
    enum { MAX = 4096 };
    uint64_t seen[MAX];
    uint32_t n = 0;
    for (uint32_t cpu = 0; cpu < MAX && n < MAX; cpu++) {
        char path[128];
        long core = -1, pkg = 0;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%u/topology/core_id", cpu);
        FILE *f = fopen(path, "r");
        if (!f) {
            if (cpu > logical * 4 + 64) break;
            continue;
        }
        if (fscanf(f, "%ld", &core) != 1) core = -1;
        fclose(f);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%u/topology/physical_package_id", cpu);
        if ((f = fopen(path, "r"))) {
            if (fscanf(f, "%ld", &pkg) != 1) pkg = 0;
            fclose(f);
        }
        if (core < 0) continue;
        uint64_t key = ((uint64_t)(uint32_t)pkg << 32) | (uint32_t)core;
        bool dup = false;
        for (uint32_t i = 0; i < n && !dup; i++) dup = seen[i] == key;
        if (!dup) seen[n++] = key;
    }
    if (n == 0 || n > logical) return logical;
    return n;
}

/* A "Key:   12345 kB" line of /proc/meminfo, in bytes (0 if absent). */
static uint64_t meminfo_bytes(const char *key) {
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return 0;
    char line[256];
    uint64_t v = 0;
    size_t klen = strlen(key);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
            v = strtoull(line + klen + 1, NULL, 10) * 1024ull;
            break;
        }
    }
    fclose(f);
    return v;
}

/* The cgroup v2 memory limit of this process, 0 when unlimited/unknown. */
static uint64_t cgroup_limit(void) {
    FILE *f = fopen("/sys/fs/cgroup/memory.max", "r");
    if (!f) return 0;
    char s[64] = {0};
    uint64_t v = 0;
    if (fgets(s, sizeof s, f) && isdigit((unsigned char)s[0])) v = strtoull(s, NULL, 10);
    fclose(f);
    return v;
}

pocketllm_status pocketllm_cpu_info_get(pocketllm_cpu_info *out) {
    if (!out) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "cpu_info: NULL");
    memset(out, 0, sizeof *out);
    snprintf(out->model, sizeof out->model, "unknown");
#if defined(__x86_64__)
    snprintf(out->arch, sizeof out->arch, "x86_64");
#elif defined(__aarch64__)
    snprintf(out->arch, sizeof out->arch, "aarch64");
#else
    snprintf(out->arch, sizeof out->arch, "other");
#endif
    char brand[64] = {0};
    out->features = detect_features(brand, sizeof brand);
    trim(brand);
    if (brand[0]) snprintf(out->model, sizeof out->model, "%s", brand);
    if (strcmp(out->model, "unknown") == 0) {
        char m[128];
        if (cpuinfo_field("model name", m, sizeof m) || cpuinfo_field("Model", m, sizeof m) ||
            cpuinfo_field("Hardware", m, sizeof m))
            snprintf(out->model, sizeof out->model, "%s", m);
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    out->logical_cpus = online > 0 ? (uint32_t)online : 1;
    out->physical_cores = count_physical_cores(out->logical_cpus);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    out->memory_bytes = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
    uint64_t lim = cgroup_limit();
    if (lim && lim < out->memory_bytes) out->memory_bytes = lim;
    out->memory_available_bytes = meminfo_bytes("MemAvailable");
    if (out->memory_available_bytes > out->memory_bytes) out->memory_available_bytes = out->memory_bytes;
    return POCKETLLM_OK;
}

uint32_t pl_cpu_features(void) {
    /* CPUID answers the same on every call: racing first callers store the
     * same value */
    static uint32_t cached;
    static int done;
    if (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
        char brand[64];
        __atomic_store_n(&cached, detect_features(brand, sizeof brand), __ATOMIC_RELAXED);
        __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
    }
    return __atomic_load_n(&cached, __ATOMIC_RELAXED);
}
