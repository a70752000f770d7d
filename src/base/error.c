/*
 * error.c -- status names, the thread-local last-error message, and the
 * library's version queries.
 */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define PL_ERROR_MAX 1024

static _Thread_local char pl_error_msg[PL_ERROR_MAX];

pocketllm_status pl_fail(pocketllm_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pl_error_msg, sizeof pl_error_msg, fmt, ap);
    va_end(ap);
    /* Messages are one line by contract: fold any newline a caller's data
     * (a file name, a key) smuggled in. */
    for (char *p = pl_error_msg; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    return status;
}

void pl_error_prefix(const char *prefix) {
    char tmp[PL_ERROR_MAX];
    int k = snprintf(tmp, sizeof tmp, "%.300s: ", prefix);
    size_t used = k > 0 ? (size_t)k : 0, len = strlen(pl_error_msg);
    if (len > sizeof tmp - 1 - used) len = sizeof tmp - 1 - used;
    memcpy(tmp + used, pl_error_msg, len);
    tmp[used + len] = '\0';
    memcpy(pl_error_msg, tmp, sizeof tmp);
    for (char *p = pl_error_msg; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
}

void pl_error_clear(void) { pl_error_msg[0] = '\0'; }

const char *pocketllm_last_error(void) { return pl_error_msg; }

const char *pocketllm_status_string(pocketllm_status status) {
    switch (status) {
    case POCKETLLM_OK: return "ok";
    case POCKETLLM_ERR_INVALID_ARGUMENT: return "invalid argument";
    case POCKETLLM_ERR_IO: return "i/o error";
    case POCKETLLM_ERR_FORMAT: return "format error";
    case POCKETLLM_ERR_UNSUPPORTED: return "unsupported";
    case POCKETLLM_ERR_NO_MEMORY: return "out of memory";
    case POCKETLLM_ERR_NOT_FOUND: return "not found";
    case POCKETLLM_ERR_CONTEXT_FULL: return "context full";
    case POCKETLLM_ERR_INTERNAL: return "internal error";
    }
    return "unknown status";
}

uint32_t pocketllm_abi_version(void) {
    return ((uint32_t)POCKETLLM_ABI_MAJOR << 16) | (uint32_t)POCKETLLM_ABI_MINOR;
}

const char *pocketllm_version_string(void) { return PL_VERSION_STRING; }
