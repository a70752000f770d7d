/*
 * kv_types.c -- the KV cache's element types and their row encoders (see
 * kv_types.h).  The encoders are the reference ones; the CPU backend runs
 * them block-parallel.
 */
#include "quant/kv_types.h"

#include <strings.h>

#include "base/error.h"
#include "quant/ref.h"
#include "quant/types.h"

static const uint32_t kv_types[] = {PL_TYPE_F16,  PL_TYPE_BF16, PL_TYPE_F32,  PL_TYPE_Q8_0,  PL_TYPE_Q4_0,
                                    PL_TYPE_Q4_1, PL_TYPE_Q5_0, PL_TYPE_Q5_1, PL_TYPE_IQ4_NL};

bool pl_kv_type_supported(uint32_t type) {
    for (size_t i = 0; i < sizeof kv_types / sizeof *kv_types; i++)
        if (kv_types[i] == type) return true;
    return false;
}

uint32_t pl_kv_type_from_name(const char *name) {
    if (!name) return UINT32_MAX;
    for (size_t i = 0; i < sizeof kv_types / sizeof *kv_types; i++)
        if (!strcasecmp(pl_type_get(kv_types[i])->name, name)) return kv_types[i];
    return UINT32_MAX;
}

uint32_t pocketllm_kv_type_from_name(const char *name) { return pl_kv_type_from_name(name); }

/* The weight encoders take an importance matrix the cache never has. */
#define PL_KV_ENC(t) \
    static void kv_##t(const float *src, void *dst, int64_t n) { pl_ref_##t##_from_float(src, dst, n, NULL); }
PL_KV_ENC(q4_0)
PL_KV_ENC(q4_1)
PL_KV_ENC(q5_0)
PL_KV_ENC(q5_1)

pl_kv_encode_fn pl_kv_encoder(uint32_t type) {
    switch (type) {
    case PL_TYPE_F32: return pl_ref_f32_act;
    case PL_TYPE_F16: return pl_ref_f16_act;
    case PL_TYPE_BF16: return pl_ref_bf16_act;
    case PL_TYPE_Q8_0: return pl_ref_q8_0_act;
    case PL_TYPE_Q4_0: return kv_q4_0;
    case PL_TYPE_Q4_1: return kv_q4_1;
    case PL_TYPE_Q5_0: return kv_q5_0;
    case PL_TYPE_Q5_1: return kv_q5_1;
    case PL_TYPE_IQ4_NL: return pl_ref_iq4_nl_row_ref;
    default: return NULL;
    }
}

pocketllm_status pl_kv_type_check(uint32_t type, int64_t head_dim, const char *which) {
    const pl_type_traits *t = pl_type_get(type);
    if (!pl_kv_type_supported(type))
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "%s cache type %s: a KV cache is one of " PL_KV_TYPE_NAMES, which,
                       t ? t->name : "(unknown)");
    if (head_dim % t->block)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT,
                       "%s cache type %s: its blocks of %u do not divide this model's heads of %lld (as llama.cpp refuses)",
                       which, t->name, t->block, (long long)head_dim);
    return POCKETLLM_OK;
}

uint64_t pl_kv_row_bytes(uint32_t type, int64_t kv_dim) {
    const pl_type_traits *t = pl_type_get(type);
    return (uint64_t)kv_dim / t->block * t->bytes;
}
