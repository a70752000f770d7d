#version 450
// gelu_erf.comp -- y = 0.5 x (1 + erf(x / sqrt 2)), the exact GELU of the
// audio tower.  erf(s) = s * g(s^2), g(u) = erf(sqrt u) / sqrt u as the
// CPU's vector kernels have it (backend/cpu/cpu_erf.h: a degree-22
// polynomial in t = u / 8 - 1 over u in [0, 16], s clamped to [-4, 4]) but
// evaluated in float, which every device has (double is rare on phones):
// within 6 * 2^-24 * |x| of the reference's libm erff (measured 3.9 on the
// host), checked in unit/test_vk_ops.  -inf gives -0 and NaN stays NaN, as
// in the reference.
#include "common.glsl"
layout(local_size_x_id = 0) in;

layout(push_constant) uniform P {
    uvec2 x, y;
    uint n;
} p;

const float coef[23] = float[23](
    0.35353099564338764,
    -0.17657623330399316,
    0.13167511689968869,
    -0.10771044229947456,
    0.090208993875337179,
    -0.074727871662727208,
    0.059886909381808469,
    -0.045765039920974332,
    0.033060590467983222,
    -0.022474034391340183,
    0.014349837455242995,
    -0.0086043438673272521,
    0.0048526991480117229,
    -0.0025830616260720521,
    0.0012946077416273029,
    -0.0006048212241895356,
    0.00027244095229377762,
    -0.00012652732473185325,
    5.0998210780335286e-05,
    -1.2620635793609832e-05,
    4.8665918620827149e-06,
    -4.5892181697126946e-06,
    1.525252555438783e-06);

void main() {
    const uint i = group_index() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (i >= p.n) return;
    const float v = F32s(p.x).v[i];
    const float s = v * 0.70710678118654752440084436210484;
    const float c = min(max(s, -4.0), 4.0);
    const float t = c * c * 0.125 - 1.0;
    float q = coef[22];
    [[unroll]] for (int k = 21; k >= 0; k--) q = q * t + coef[k];
    float r = 0.5 * v * (1.0 + c * q);
    if (isnan(v)) r = v;
    else if (isinf(v)) r = v > 0.0 ? v : -0.0;
    F32s(p.y).v[i] = r;
}
