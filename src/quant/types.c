/*
 * types.c -- the element type table.  Block sizes and bytes per block are
 * facts of the GGUF/ggml file format, taken from llama.cpp v0.4.0
 * (ggml/src/ggml.c, type_traits; MIT) and checked against the prebuilt
 * libggml-base by the oracle tests.
 */
#include "types.h"

#include <ctype.h>
#include <string.h>

#include "base/checked.h"
#include "pocketllm.h"

static const pl_type_traits pl_types[PL_TYPE_COUNT] = {
    [0] = {"f32", 1, 4, false},
    [1] = {"f16", 1, 2, false},
    [2] = {"q4_0", 32, 18, true},
    [3] = {"q4_1", 32, 20, true},
    [4] = {"q4_2 (removed)", 0, 0, true},
    [5] = {"q4_3 (removed)", 0, 0, true},
    [6] = {"q5_0", 32, 22, true},
    [7] = {"q5_1", 32, 24, true},
    [8] = {"q8_0", 32, 34, true},
    [9] = {"q8_1", 32, 36, true},
    [10] = {"q2_K", 256, 84, true},
    [11] = {"q3_K", 256, 110, true},
    [12] = {"q4_K", 256, 144, true},
    [13] = {"q5_K", 256, 176, true},
    [14] = {"q6_K", 256, 210, true},
    [15] = {"q8_K", 256, 292, true},
    [16] = {"iq2_xxs", 256, 66, true},
    [17] = {"iq2_xs", 256, 74, true},
    [18] = {"iq3_xxs", 256, 98, true},
    [19] = {"iq1_s", 256, 50, true},
    [20] = {"iq4_nl", 32, 18, true},
    [21] = {"iq3_s", 256, 110, true},
    [22] = {"iq2_s", 256, 82, true},
    [23] = {"iq4_xs", 256, 136, true},
    [24] = {"i8", 1, 1, false},
    [25] = {"i16", 1, 2, false},
    [26] = {"i32", 1, 4, false},
    [27] = {"i64", 1, 8, false},
    [28] = {"f64", 1, 8, false},
    [29] = {"iq1_m", 256, 56, true},
    [30] = {"bf16", 1, 2, false},
    [31] = {"q4_0_4_4 (removed)", 0, 0, true},
    [32] = {"q4_0_4_8 (removed)", 0, 0, true},
    [33] = {"q4_0_8_8 (removed)", 0, 0, true},
    [34] = {"tq1_0", 256, 54, true},
    [35] = {"tq2_0", 256, 66, true},
    [36] = {"iq4_nl_4_4 (removed)", 0, 0, true},
    [37] = {"iq4_nl_4_8 (removed)", 0, 0, true},
    [38] = {"iq4_nl_8_8 (removed)", 0, 0, true},
    [39] = {"mxfp4", 32, 17, true},
    [40] = {"nvfp4", 64, 36, true},
    [41] = {"q1_0", 128, 18, true},
    [42] = {"q2_0", 64, 18, true},
};

const pl_type_traits *pl_type_get(uint32_t type) {
    return type < PL_TYPE_COUNT ? &pl_types[type] : NULL;
}

bool pl_type_valid(uint32_t type) { return type < PL_TYPE_COUNT && pl_types[type].block != 0; }

bool pl_type_row_bytes(uint32_t type, uint64_t n, uint64_t *bytes) {
    if (!pl_type_valid(type)) return false;
    const pl_type_traits *t = &pl_types[type];
    if (n % t->block != 0) return false;
    return pl_mul_u64(n / t->block, t->bytes, bytes);
}

uint32_t pocketllm_type_count(void) { return PL_TYPE_COUNT; }

const char *pocketllm_type_name(uint32_t type) {
    return type < PL_TYPE_COUNT ? pl_types[type].name : NULL;
}

uint32_t pocketllm_type_block_size(uint32_t type) {
    return type < PL_TYPE_COUNT ? pl_types[type].block : 0;
}

uint32_t pocketllm_type_block_bytes(uint32_t type) {
    return type < PL_TYPE_COUNT ? pl_types[type].bytes : 0;
}

int32_t pocketllm_type_from_name(const char *name) {
    if (!name) return -1;
    for (uint32_t t = 0; t < PL_TYPE_COUNT; t++) {
        if (pl_types[t].block == 0) continue;
        const char *a = pl_types[t].name, *b = name;
        while (*a && *b && tolower((unsigned char)*a) == tolower((unsigned char)*b)) a++, b++;
        if (*a == '\0' && *b == '\0') return (int32_t)t;
    }
    return -1;
}
