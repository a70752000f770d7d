#version 450
// layer_norm.comp -- y = (x - mean) / sqrt(var + eps) * w + b for one row
// per work group (w and b may be absent), as ggml_norm then ggml_mul and
// ggml_add: the mean first, the variance of the centred values second
// (two passes, not E[x^2] - mean^2, which cancels), each step rounded on
// its own (precise: no fused multiply-add the reference does not do).
// The sums are the work group's f32 reductions where the reference sums
// in double; the second pass also sums the centred values, whose mean
// corrects the first mean's rounding (for rows far from zero mean the f32
// sum of x loses digits the reference's double keeps).
#include "common.glsl"
layout(local_size_x_id = 0) in;
#include "reduce.glsl"

layout(push_constant) uniform P {
    uvec2 x, w, b, y;
    uint n;
    uint has_w, has_b;
    float eps;
} p;

void main() {
    const uint row = group_index();
    F32s x = F32s(p.x), y = F32s(p.y), w = F32s(p.w), b = F32s(p.b);
    const uint base = row * p.n;
    float s = 0.0;
    for (uint i = gl_LocalInvocationID.x; i < p.n; i += gl_WorkGroupSize.x) s += x.v[base + i];
    const float mean = wg_sum(s) / float(p.n);
    float ss = 0.0, sd = 0.0;
    for (uint i = gl_LocalInvocationID.x; i < p.n; i += gl_WorkGroupSize.x) {
        const float v = x.v[base + i] - mean;
        sd += v;
        ss += v * v;
    }
    const float var = wg_sum(ss) / float(p.n);
    const float mean_c = mean + wg_sum(sd) / float(p.n);
    const float scale = 1.0 / sqrt(var + p.eps);
    for (uint i = gl_LocalInvocationID.x; i < p.n; i += gl_WorkGroupSize.x) {
        precise float v = (x.v[base + i] - mean_c) * scale;
        if (p.has_w != 0u) v = v * w.v[i];
        if (p.has_b != 0u) v = v + b.v[i];
        y.v[base + i] = v;
    }
}
