/*
 * types.c -- the element type table: per ggml type id its block geometry
 * (facts of the GGUF/ggml file format, from llama.cpp v0.4.0 ggml.c
 * type_traits, MIT; checked against the prebuilt libggml-base by the
 * oracle tests) and its scalar reference kernels (quant/ref.h), plus the
 * checked row encoder pl_quant_from_float.
 */
#include "types.h"

#include <ctype.h>
#include <string.h>

#include "base/checked.h"
#include "base/error.h"
#include "pocketllm.h"
#include "quant/ref.h"

/* Row helpers: a weight type with its dot against `act`, and an activation
 * type (one that is some weight type's vec_dot_type). */
#define PL_KERNELS(t, act) \
    .to_float = pl_ref_##t##_to_float, .from_float = pl_ref_##t##_from_float, .vec_dot_type = (act), \
    .vec_dot = pl_ref_##t##_vec_dot
#define PL_ACT(t) .act_from_float = pl_ref_##t##_act

static const pl_type_traits pl_types[PL_TYPE_COUNT] = {
    [0] = {.name = "f32", .block = 1, .bytes = 4, .quantized = false, PL_KERNELS(f32, PL_TYPE_F32), PL_ACT(f32)},
    [1] = {.name = "f16", .block = 1, .bytes = 2, .quantized = false, PL_KERNELS(f16, PL_TYPE_F16), PL_ACT(f16)},
    [2] = {.name = "q4_0", .block = 32, .bytes = 18, .quantized = true, PL_KERNELS(q4_0, PL_TYPE_Q8_0)},
    [3] = {.name = "q4_1", .block = 32, .bytes = 20, .quantized = true, PL_KERNELS(q4_1, PL_TYPE_Q8_1)},
    [4] = {.name = "q4_2 (removed)", .block = 0, .bytes = 0, .quantized = true},
    [5] = {.name = "q4_3 (removed)", .block = 0, .bytes = 0, .quantized = true},
    [6] = {.name = "q5_0", .block = 32, .bytes = 22, .quantized = true, PL_KERNELS(q5_0, PL_TYPE_Q8_0)},
    [7] = {.name = "q5_1", .block = 32, .bytes = 24, .quantized = true, PL_KERNELS(q5_1, PL_TYPE_Q8_1)},
    [8] = {.name = "q8_0", .block = 32, .bytes = 34, .quantized = true, PL_KERNELS(q8_0, PL_TYPE_Q8_0), PL_ACT(q8_0)},
    [9] = {.name = "q8_1", .block = 32, .bytes = 36, .quantized = true, .to_float = pl_ref_q8_1_to_float, .from_float = pl_ref_q8_1_from_float,
           .vec_dot_type = PL_TYPE_Q8_1, PL_ACT(q8_1)},
    [10] = {.name = "q2_K", .block = 256, .bytes = 84, .quantized = true, PL_KERNELS(q2_K, PL_TYPE_Q8_K)},
    [11] = {.name = "q3_K", .block = 256, .bytes = 110, .quantized = true, PL_KERNELS(q3_K, PL_TYPE_Q8_K)},
    [12] = {.name = "q4_K", .block = 256, .bytes = 144, .quantized = true, PL_KERNELS(q4_K, PL_TYPE_Q8_K)},
    [13] = {.name = "q5_K", .block = 256, .bytes = 176, .quantized = true, PL_KERNELS(q5_K, PL_TYPE_Q8_K)},
    [14] = {.name = "q6_K", .block = 256, .bytes = 210, .quantized = true, PL_KERNELS(q6_K, PL_TYPE_Q8_K)},
    [15] = {.name = "q8_K", .block = 256, .bytes = 292, .quantized = true, .to_float = pl_ref_q8_K_to_float, .from_float = pl_ref_q8_K_from_float,
            .vec_dot_type = PL_TYPE_Q8_K, PL_ACT(q8_K)},
    [16] = {.name = "iq2_xxs", .block = 256, .bytes = 66, .quantized = true, PL_KERNELS(iq2_xxs, PL_TYPE_Q8_K), .requires_imatrix = true},
    [17] = {.name = "iq2_xs", .block = 256, .bytes = 74, .quantized = true, PL_KERNELS(iq2_xs, PL_TYPE_Q8_K), .requires_imatrix = true},
    [18] = {.name = "iq3_xxs", .block = 256, .bytes = 98, .quantized = true, PL_KERNELS(iq3_xxs, PL_TYPE_Q8_K)},
    [19] = {.name = "iq1_s", .block = 256, .bytes = 50, .quantized = true, PL_KERNELS(iq1_s, PL_TYPE_Q8_K), .requires_imatrix = true},
    [20] = {.name = "iq4_nl", .block = 32, .bytes = 18, .quantized = true, PL_KERNELS(iq4_nl, PL_TYPE_Q8_0)},
    [21] = {.name = "iq3_s", .block = 256, .bytes = 110, .quantized = true, PL_KERNELS(iq3_s, PL_TYPE_Q8_K)},
    [22] = {.name = "iq2_s", .block = 256, .bytes = 82, .quantized = true, PL_KERNELS(iq2_s, PL_TYPE_Q8_K), .requires_imatrix = true},
    [23] = {.name = "iq4_xs", .block = 256, .bytes = 136, .quantized = true, PL_KERNELS(iq4_xs, PL_TYPE_Q8_K)},
    [24] = {.name = "i8", .block = 1, .bytes = 1, .quantized = false},
    [25] = {.name = "i16", .block = 1, .bytes = 2, .quantized = false},
    [26] = {.name = "i32", .block = 1, .bytes = 4, .quantized = false},
    [27] = {.name = "i64", .block = 1, .bytes = 8, .quantized = false},
    [28] = {.name = "f64", .block = 1, .bytes = 8, .quantized = false},
    [29] = {.name = "iq1_m", .block = 256, .bytes = 56, .quantized = true, PL_KERNELS(iq1_m, PL_TYPE_Q8_K), .requires_imatrix = true},
    [30] = {.name = "bf16", .block = 1, .bytes = 2, .quantized = false, PL_KERNELS(bf16, PL_TYPE_BF16), PL_ACT(bf16)},
    [31] = {.name = "q4_0_4_4 (removed)", .block = 0, .bytes = 0, .quantized = true},
    [32] = {.name = "q4_0_4_8 (removed)", .block = 0, .bytes = 0, .quantized = true},
    [33] = {.name = "q4_0_8_8 (removed)", .block = 0, .bytes = 0, .quantized = true},
    [34] = {.name = "tq1_0", .block = 256, .bytes = 54, .quantized = true, PL_KERNELS(tq1_0, PL_TYPE_Q8_K)},
    [35] = {.name = "tq2_0", .block = 256, .bytes = 66, .quantized = true, PL_KERNELS(tq2_0, PL_TYPE_Q8_K)},
    [36] = {.name = "iq4_nl_4_4 (removed)", .block = 0, .bytes = 0, .quantized = true},
    [37] = {.name = "iq4_nl_4_8 (removed)", .block = 0, .bytes = 0, .quantized = true},
    [38] = {.name = "iq4_nl_8_8 (removed)", .block = 0, .bytes = 0, .quantized = true},
    [39] = {.name = "mxfp4", .block = 32, .bytes = 17, .quantized = true, PL_KERNELS(mxfp4, PL_TYPE_Q8_0)},
    [40] = {.name = "nvfp4", .block = 64, .bytes = 36, .quantized = true},
    [41] = {.name = "q1_0", .block = 128, .bytes = 18, .quantized = true},
    [42] = {.name = "q2_0", .block = 64, .bytes = 18, .quantized = true},
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

pocketllm_status pl_quant_from_float(uint32_t type, const float *src, void *dst, int64_t nrows,
                                     int64_t n_per_row, const float *imatrix) {
    const pl_type_traits *t = pl_type_get(type);
    if (!t || !pl_type_valid(type) || !t->from_float)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "quantize: no encoder for type %s", t ? t->name : "(unknown)");
    uint64_t row_bytes;
    if (nrows < 0 || n_per_row <= 0 || !pl_type_row_bytes(type, (uint64_t)n_per_row, &row_bytes))
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "quantize: a row of %lld values is not whole %s blocks of %u",
                       (long long)n_per_row, t->name, t->block);
    if (t->requires_imatrix && !imatrix)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT,
                       "quantize: %s needs an importance matrix (it is unusable without one)", t->name);
    for (int64_t r = 0; r < nrows; r++)
        t->from_float(src + r * n_per_row, (uint8_t *)dst + (uint64_t)r * row_bytes, n_per_row, imatrix);
    return POCKETLLM_OK;
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
