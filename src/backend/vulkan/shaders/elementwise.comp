#version 450
// elementwise.comp -- y = a + b, a * b (b one row broadcast over the rows
// of a, or as many rows as a), x * s, silu(g) * u: one element per
// invocation.
#include "common.glsl"
layout(local_size_x_id = 0) in;

layout(push_constant) uniform P {
    uvec2 a, b, y;
    uint n;      // elements
    uint row_n;  // elements per row of b when broadcast (0: not broadcast)
    uint op;     // 0 add, 1 mul, 2 scale, 3 silu_mul
    float s;
} p;

void main() {
    uint i = group_index() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (i >= p.n) return;
    float a = F32s(p.a).v[i];
    float r;
    if (p.op == 2u) {
        r = a * p.s;
    } else {
        float b = F32s(p.b).v[p.row_n != 0u ? i % p.row_n : i];
        if (p.op == 0u) r = a + b;
        else if (p.op == 1u) r = a * b;
        else r = a / (1.0 + exp(-a)) * b;
    }
    F32s(p.y).v[i] = r;
}
