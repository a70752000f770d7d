/*
 * ids_arg.h -- the --ids argument of the teacher-forcing tools
 * (pl_vlm_logits.c, pl_asr_logits.c): a list of token ids separated by
 * spaces (or anything strtol skips), as llama.cpp's run printed them.
 */
#ifndef PL_TOOL_IDS_ARG_H
#define PL_TOOL_IDS_ARG_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* Up to max ids of s into ids, up to the first thing that is not a number;
 * returns how many. */
static inline size_t parse_ids(const char *s, int32_t *ids, size_t max) {
    size_t n = 0;
    for (char *p = (char *)s, *e; n < max; p = e) {
        long v = strtol(p, &e, 10);
        if (e == p) break;
        ids[n++] = (int32_t)v;
    }
    return n;
}

#endif
