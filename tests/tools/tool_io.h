/*
 * tool_io.h -- what the small test programs of tests/tools share: dying on
 * bad input with a one-line message (exit 2), numbers parsed strictly, and
 * whole-file reads.  Define TOOL_NAME (the program's name, for messages)
 * before including it.
 */
#ifndef PL_TOOL_IO_H
#define PL_TOOL_IO_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef TOOL_NAME
#error "define TOOL_NAME before including tool_io.h"
#endif

static inline void die(const char *fmt, const char *arg) {
    fprintf(stderr, TOOL_NAME ": ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    exit(2);
}

/* a whole decimal number in lo..hi, or die */
static inline long parse_l(const char *s, long lo, long hi) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) die("bad number '%s'", s);
    return v;
}

/* The whole file (*n bytes; the buffer has room for 4 more, and must be
 * freed), or die. */
static inline void *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) die("cannot open %s", path);
    if (fseek(f, 0, SEEK_END)) die("cannot seek %s", path);
    long sz = ftell(f);
    if (sz < 0 || fseek(f, 0, SEEK_SET)) die("cannot size %s", path);
    void *p = malloc((size_t)sz + 4);
    if (!p || fread(p, 1, (size_t)sz, f) != (size_t)sz) die("cannot read %s", path);
    fclose(f);
    *n = (size_t)sz;
    return p;
}

#endif
