/*
 * bad_gguf.h -- one malformed GGUF per class of bad input the reader must
 * refuse, each with a fragment its error message must contain.  Shared by
 * the reader's unit test and the CLI end-to-end test.
 */
#ifndef PL_TEST_BAD_GGUF_H
#define PL_TEST_BAD_GGUF_H

#include "gguf_builder.h"

typedef struct bad_gguf_case {
    const char *name;   /* file-name friendly */
    const char *expect; /* fragment of the error message */
    void (*build)(gb *b);
} bad_gguf_case;

/* NULL-terminated list. */
extern const bad_gguf_case bad_gguf_cases[];

/* A small valid model file (2 tensors, 2 keys); bad cases derive from it. */
void good_gguf_build(gb *b);
/* Where each section of good_gguf_build() starts, for truncation tests. */
typedef struct good_gguf_layout {
    size_t kv_start, tensors_start, data_start, data_end;
} good_gguf_layout;
void good_gguf_layout_get(good_gguf_layout *l);

#endif
