/*
 * pl_typetable.c -- print PocketLLM's element type table as
 * "id name block bytes" lines for the ids that GGUF allows, in the format
 * pl_oracle types prints for libggml-base, so the two can be diffed.
 */
#include <stdio.h>

#include "quant/types.h"

int main(void) {
    for (uint32_t t = 0; t < PL_TYPE_COUNT; t++) {
        const pl_type_traits *tr = pl_type_get(t);
        if (tr->block) printf("%u %s %u %u\n", t, tr->name, tr->block, tr->bytes);
    }
    return 0;
}
