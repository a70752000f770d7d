#version 450
// kv_store_q.comp -- write n f32 values (whole blocks of 32) into a KV
// cache of a quantized type (q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl) or bf16,
// byte for byte as llama.cpp's CPU backend writes a cache row (the
// reference encoders of quant/kv_types.c: q8_0's activation rounding, the
// legacy types' reference rounding, iq4_nl's row quantizer without the
// scale search).  One invocation encodes one block of 32; blocks of 18,
// 20, 22 or 34 bytes straddle 32-bit words, so the words a block shares
// (with its neighbours or with bytes outside the store) are written with
// atomic and/or on its own bytes only.  Every float operation is `precise`:
// a fused multiply-add would round differently from the host.
#include "common.glsl"
#include "kv_types.glsl"
layout(local_size_x_id = 0) in;

layout(push_constant) uniform P {
    uvec2 x, dst;
    uint n;       // values
    uint dst_off; // the destination's byte offset from the (4-aligned) address
    uint type;
} p;

uint bytes_[64]; // a block: up to 34 bytes; bf16 takes 32 values (64 bytes) as one

void put8(uint at, uint v) { bytes_[at] = v & 0xffu; }
void put16(uint at, uint v) { put8(at, v); put8(at + 1u, v >> 8); }

// llama.cpp's (int8_t)(float) on x86: the 32-bit truncation's low byte
int to_i8(float v) { return (int(v) << 24) >> 24; }

// the first value of largest magnitude
float signed_absmax(float xs[32]) {
    float amax = 0.0, mx = 0.0;
    for (uint j = 0u; j < 32u; j++)
        if (amax < abs(xs[j])) { amax = abs(xs[j]); mx = xs[j]; }
    return mx;
}

// q4_0/q5_0 nibbles, q5's fifth bits in qh (qh_at: its byte, or none)
void pack4(uint qs_at, uint L[32]) {
    for (uint j = 0u; j < 16u; j++) put8(qs_at + j, (L[j] & 15u) | ((L[j + 16u] & 15u) << 4));
}
void pack_qh(uint at, uint L[32]) {
    uint qh = 0u;
    for (uint j = 0u; j < 32u; j++) qh |= ((L[j] >> 4) & 1u) << j;
    put16(at, qh);
    put16(at + 2u, qh >> 16);
}

// index of the table value nearest x (ties go up), as the reference's
// best_index_int8
uint best_index_iq4(float x) {
    if (x <= float(KV_IQ4NL_VALUES[0])) return 0u;
    if (x >= float(KV_IQ4NL_VALUES[15])) return 15u;
    int ml = 0, mu = 15;
    while (mu - ml > 1) {
        const int mav = (ml + mu) / 2;
        if (x < float(KV_IQ4NL_VALUES[mav])) mu = mav;
        else ml = mav;
    }
    precise float lo = x - float(KV_IQ4NL_VALUES[mu - 1]), hi = float(KV_IQ4NL_VALUES[mu]) - x;
    return uint(lo < hi ? mu - 1 : mu);
}

void encode(float xs[32]) {
    uint L[32];
    const uint t = p.type;
    if (t == KV_BF16) {
        for (uint j = 0u; j < 32u; j++) put16(2u * j, f32_to_bf16(xs[j]));
    } else if (t == KV_Q8_0) {
        float amax = 0.0;
        for (uint j = 0u; j < 32u; j++) amax = max(amax, abs(xs[j]));
        precise float d = amax / 127.0, id = amax != 0.0 ? 127.0 / amax : 0.0;
        put16(0u, f32_to_f16(d));
        for (uint j = 0u; j < 32u; j++) {
            precise float v = xs[j] * id;
            put8(2u + j, uint(clamp(int(roundEven(v)), -128, 127)));
        }
    } else if (t == KV_Q4_0 || t == KV_Q5_0) {
        const bool q5 = t == KV_Q5_0;
        precise float d = signed_absmax(xs) / (q5 ? -16.0 : -8.0);
        precise float id = d != 0.0 ? 1.0 / d : 0.0;
        put16(0u, f32_to_f16(d));
        for (uint j = 0u; j < 32u; j++) {
            precise float v = xs[j] * id + (q5 ? 16.5 : 8.5);
            L[j] = uint(min(to_i8(v), q5 ? 31 : 15)) & 31u;
        }
        if (q5) pack_qh(2u, L);
        pack4(q5 ? 6u : 2u, L);
    } else if (t == KV_Q4_1 || t == KV_Q5_1) {
        const bool q5 = t == KV_Q5_1;
        float mn = 3.402823466e38, mx = -3.402823466e38;
        for (uint j = 0u; j < 32u; j++) {
            if (xs[j] < mn) mn = xs[j];
            if (xs[j] > mx) mx = xs[j];
        }
        precise float d = (mx - mn) / (q5 ? 31.0 : 15.0);
        precise float id = d != 0.0 ? 1.0 / d : 0.0;
        put16(0u, f32_to_f16(d));
        put16(2u, f32_to_f16(mn));
        for (uint j = 0u; j < 32u; j++) {
            precise float v = (xs[j] - mn) * id + 0.5;
            // q4_1 clamps the signed byte at 15; q5_1 keeps the low byte
            L[j] = q5 ? uint(int(v)) & 0xffu : uint(min(to_i8(v), 15)) & 15u;
        }
        if (q5) pack_qh(4u, L);
        pack4(q5 ? 8u : 4u, L);
    } else { // KV_IQ4_NL: one scale fitted to x^2 weights, no search
        float amax = 0.0, mx = 0.0;
        for (uint j = 0u; j < 32u; j++)
            if (abs(xs[j]) > amax) { amax = abs(xs[j]); mx = xs[j]; }
        precise float d = 0.0;
        for (uint j = 0u; j < 32u; j++) L[j] = 0u;
        if (amax >= 1e-15) {
            precise float d0 = mx / float(KV_IQ4NL_VALUES[0]);
            precise float id = 1.0 / d0;
            precise float sumqx = 0.0, sumq2 = 0.0;
            for (uint j = 0u; j < 32u; j++) {
                precise float xi = id * xs[j];
                L[j] = best_index_iq4(xi);
                const float q = float(KV_IQ4NL_VALUES[L[j]]);
                precise float w = xs[j] * xs[j];
                precise float wq = w * q;
                sumqx += wq * xs[j];
                sumq2 += wq * q;
            }
            d = sumq2 > 0.0 ? sumqx / sumq2 : 0.0;
        }
        put16(0u, f32_to_f16(d));
        pack4(2u, L);
    }
}

void main() {
    const uint blk = group_index() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (blk >= p.n / 32u) return;
    float xs[32];
    F32s x = F32s(p.x);
    for (uint j = 0u; j < 32u; j++) xs[j] = x.v[blk * 32u + j];
    encode(xs);
    const uint nb = kv_bytes(p.type, 32u), o = p.dst_off + blk * nb;
    U32s d = U32s(p.dst);
    for (uint w = o / 4u; w * 4u < o + nb; w++) {
        uint val = 0u, mask = 0u;
        for (uint k = 0u; k < 4u; k++) {
            const uint at = w * 4u + k;
            if (at < o || at >= o + nb) continue;
            val |= bytes_[at - o] << (8u * k);
            mask |= 0xffu << (8u * k);
        }
        if (mask == 0xffffffffu) {
            d.v[w] = val;
        } else {
            atomicAnd(d.v[w], ~mask);
            atomicOr(d.v[w], val);
        }
    }
}
