/*
 * error.h -- the library's error reporting: a status code plus a one-line,
 * thread-local message that pocketllm_last_error() returns.
 */
#ifndef PL_ERROR_H
#define PL_ERROR_H

#include "pocketllm.h"

/* Record a message for the current thread and return `status`, so a failing
 * function can end with `return pl_fail(POCKETLLM_ERR_FORMAT, "...")`. */
pocketllm_status pl_fail(pocketllm_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Put `prefix: ` in front of the current message (to add a file name). */
void pl_error_prefix(const char *prefix);

void pl_error_clear(void);

#endif
