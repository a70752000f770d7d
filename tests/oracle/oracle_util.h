/*
 * oracle_util.h -- shared by the oracle programs (pl_oracle.c, C; and
 * pl_mtmd.cpp, C++): failing with one line, keeping llama.cpp's log
 * quiet except for errors (PL_ORACLE_VERBOSE=1 shows all of it), and
 * loading ggml's backends from the prebuilt libraries' folder.
 * PL_ORACLE_PROG names the program in the failure line.
 */
#ifndef PL_ORACLE_UTIL_H
#define PL_ORACLE_UTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "ggml-backend.h"
#include "ggml.h"

__attribute__((noreturn, format(printf, 1, 2))) static inline void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", PL_ORACLE_PROG);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static inline void quiet_log(enum ggml_log_level level, const char *text, void *user) {
    (void)user;
    if (level == GGML_LOG_LEVEL_ERROR || getenv("PL_ORACLE_VERBOSE")) fputs(text, stderr);
}

/* ggml's CPU backend variants from PL_ORACLE_LIBDIR (or the folder the
 * build names), after the caller has set its log callbacks */
static inline void load_backends(void) {
    const char *dir = getenv("PL_ORACLE_LIBDIR");
#ifdef PL_ORACLE_LIBDIR_DEFAULT
    if (!dir) dir = PL_ORACLE_LIBDIR_DEFAULT;
#endif
    if (!dir) die("PL_ORACLE_LIBDIR is not set");
    ggml_backend_load_all_from_path(dir);
}

#endif
