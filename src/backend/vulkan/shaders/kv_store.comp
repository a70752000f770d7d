#version 450
// kv_store.comp -- write n f32 values into a cache of f16 (rounded to
// nearest even, as the host) or f32.  For f16 one invocation writes one
// 32-bit word of the destination: two halves, or one at an edge (the
// other half of an edge word belongs to a neighbouring row and is kept).
#include "common.glsl"
layout(local_size_x_id = 0) in;

layout(push_constant) uniform P {
    uvec2 x, dst;
    uint n;
    uint dst_half; // f16: the destination's offset in halves from the (4-aligned) address
    uint f16;
} p;

void main() {
    const uint i = group_index() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    F32s x = F32s(p.x);
    if (p.f16 == 0u) {
        if (i < p.n) F32s(p.dst).v[i] = x.v[i];
        return;
    }
    // word i covers halves 2i, 2i+1 counted from the aligned address; element e = half - dst_half
    const uint n_words = (p.dst_half + p.n + 1u) / 2u;
    if (i >= n_words) return;
    U32s d = U32s(p.dst);
    uint w = d.v[i];
    for (uint k = 0u; k < 2u; k++) {
        const int e = int(2u * i + k) - int(p.dst_half);
        if (e < 0 || e >= int(p.n)) continue;
        const uint h = f32_to_f16(x.v[uint(e)]);
        w = (w & ~(0xffffu << (16u * k))) | (h << (16u * k));
    }
    d.v[i] = w;
}
