#version 450
// gelu.comp -- y = gelu(x) as llama.cpp's CPU backend computes it: 0 for
// x <= -10, x for x >= 10, otherwise the f16 value looked up at x rounded
// to f16 in a table of 65536 indexed by the f16 bits: the reference's own
// table (pl_gelu_f16_table), so the device gives the reference's bits
// whatever its own tanh does.
#include "common.glsl"
layout(local_size_x_id = 0) in;

layout(push_constant) uniform P {
    uvec2 x, y, table;
    uint n;
} p;

void main() {
    const uint i = group_index() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (i >= p.n) return;
    const float v = F32s(p.x).v[i];
    float r;
    if (v <= -10.0) r = 0.0;
    else if (v >= 10.0) r = v;
    else r = f16_to_f32(ld_u16(U32s(p.table), 2u * f32_to_f16(v)));
    F32s(p.y).v[i] = r;
}
