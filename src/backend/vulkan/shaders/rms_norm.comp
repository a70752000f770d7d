#version 450
// rms_norm.comp -- y = x / sqrt(mean(x^2) + eps) * w for one row per work
// group (w may be absent).
#include "common.glsl"
layout(local_size_x_id = 0) in;
#include "reduce.glsl"

layout(push_constant) uniform P {
    uvec2 x, w, y;
    uint n;
    uint has_w;
    float eps;
} p;

void main() {
    const uint row = group_index();
    F32s x = F32s(p.x), y = F32s(p.y), w = F32s(p.w);
    const uint base = row * p.n;
    float ss = 0.0;
    for (uint i = gl_LocalInvocationID.x; i < p.n; i += gl_WorkGroupSize.x) {
        float v = x.v[base + i];
        ss += v * v;
    }
    ss = wg_sum(ss);
    const float scale = 1.0 / sqrt(ss / float(p.n) + p.eps);
    for (uint i = gl_LocalInvocationID.x; i < p.n; i += gl_WorkGroupSize.x) {
        float v = x.v[base + i] * scale;
        if (p.has_w != 0u) v *= w.v[i];
        y.v[base + i] = v;
    }
}
