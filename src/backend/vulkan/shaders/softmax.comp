#version 450
// softmax.comp -- y = softmax(x) over one row of n per work group: the
// maximum subtracted, the sum of the exponentials, a multiply by its
// reciprocal (as the reference).
#include "common.glsl"
layout(local_size_x_id = 0) in;
#include "reduce.glsl"

layout(push_constant) uniform P {
    uvec2 x, y;
    uint n;
} p;

void main() {
    const uint row = group_index();
    F32s x = F32s(p.x);
    F32c y = F32c(p.y);
    const uint base = row * p.n;
    float m = -1.0 / 0.0;
    for (uint i = gl_LocalInvocationID.x; i < p.n; i += gl_WorkGroupSize.x) m = max(m, x.v[base + i]);
    m = wg_max(m);
    float s = 0.0;
    for (uint i = gl_LocalInvocationID.x; i < p.n; i += gl_WorkGroupSize.x) {
        float e = exp(x.v[base + i] - m);
        y.v[base + i] = e;
        s += e;
    }
    s = wg_sum(s);
    const float inv = 1.0 / s;
    for (uint i = gl_LocalInvocationID.x; i < p.n; i += gl_WorkGroupSize.x) y.v[base + i] *= inv;
}
