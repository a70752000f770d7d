// kv_types.glsl -- the element types a KV cache may be kept in (f32, f16,
// bf16, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl; the codes are the engine's
// PL_TYPE_* values, which are ggml's), read by byte offset from a 4-aligned
// base.  The quantized ones are llama.cpp's blocks of 32 (quant/blocks.h):
// kv_q() is an element's integer (what a dot product against q8_0 / q8_1
// activations multiplies), kv_value() the float the reference's to_float
// gives, in the same operations.  Included after common.glsl.
#define KV_F32 0u
#define KV_F16 1u
#define KV_Q4_0 2u
#define KV_Q4_1 3u
#define KV_Q5_0 6u
#define KV_Q5_1 7u
#define KV_Q8_0 8u
#define KV_IQ4_NL 20u
#define KV_BF16 30u

// llama.cpp's kvalues_iq4nl (ggml-common.h), the non-linear 4-bit table
const int KV_IQ4NL_VALUES[16] = int[16](-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113);

bool kv_plain(uint t) { return t == KV_F32 || t == KV_F16 || t == KV_BF16; }
// q4_1 and q5_1 dot against q8_1 (with an offset term), the others q8_0
bool kv_has_min(uint t) { return t == KV_Q4_1 || t == KV_Q5_1; }

uint kv_block_bytes(uint t) {
    switch (t) {
    case KV_Q8_0: return 34u;
    case KV_Q4_0: return 18u;
    case KV_Q4_1: return 20u;
    case KV_Q5_0: return 22u;
    case KV_Q5_1: return 24u;
    case KV_IQ4_NL: return 18u;
    default: return 0u;
    }
}

// bytes of n elements (n whole blocks for the quantized types)
uint kv_bytes(uint t, uint n) {
    if (t == KV_F32) return 4u * n;
    if (t == KV_F16 || t == KV_BF16) return 2u * n;
    return n / 32u * kv_block_bytes(t);
}

// a plain type's element i of the run at byte offset off
float kv_plain_at(uint t, U32s b, uint off, uint i) {
    if (t == KV_F32) return uintBitsToFloat(ld_u32(b, off + 4u * i));
    const uint h = ld_u16(b, off + 2u * i);
    return t == KV_F16 ? f16_to_f32(h) : bf16_to_f32(h);
}

// the block's scale d and offset m (0 where the type has none)
float kv_d(U32s b, uint boff) { return f16_to_f32(ld_u16(b, boff)); }
float kv_m(uint t, U32s b, uint boff) { return kv_has_min(t) ? f16_to_f32(ld_u16(b, boff + 2u)) : 0.0; }

// the 4-bit field of element e of 16 packed bytes at qoff: low nibbles
// hold elements 0..15, high ones 16..31
uint kv_nibble(U32s b, uint qoff, uint e) { return (ld_u8(b, qoff + (e & 15u)) >> (e < 16u ? 0u : 4u)) & 15u; }

// element e's integer in the block at boff
int kv_q(uint t, U32s b, uint boff, uint e) {
    switch (t) {
    case KV_Q8_0: return (int(ld_u8(b, boff + 2u + e)) << 24) >> 24;
    case KV_Q4_0: return int(kv_nibble(b, boff + 2u, e)) - 8;
    case KV_Q4_1: return int(kv_nibble(b, boff + 4u, e));
    case KV_IQ4_NL: return KV_IQ4NL_VALUES[kv_nibble(b, boff + 2u, e)];
    case KV_Q5_0: {
        const uint qh = ld_u32(b, boff + 2u);
        return int(kv_nibble(b, boff + 6u, e) | (((qh >> e) & 1u) << 4)) - 16;
    }
    default: { // KV_Q5_1
        const uint qh = ld_u32(b, boff + 4u);
        return int(kv_nibble(b, boff + 8u, e) | (((qh >> e) & 1u) << 4));
    }
    }
}

// element e of a quantized block as the reference's to_float computes it
float kv_qvalue(uint t, U32s b, uint boff, uint e) {
    const float d = kv_d(b, boff);
    const int q = kv_q(t, b, boff, e);
    precise float v;
    if (t == KV_IQ4_NL) v = d * float(q);
    else if (kv_has_min(t)) v = float(q) * d + kv_m(t, b, boff);
    else v = float(q) * d;
    return v;
}

// element i of a row of any type starting at byte offset off
float kv_value(uint t, U32s b, uint off, uint i) {
    if (kv_plain(t)) return kv_plain_at(t, b, off, i);
    return kv_qvalue(t, b, off + (i / 32u) * kv_block_bytes(t), i & 31u);
}
