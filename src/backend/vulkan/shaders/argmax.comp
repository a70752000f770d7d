#version 450
// argmax.comp -- the index of the largest of n values (the first on ties)
// by one work group; the result is one int at out.
#include "common.glsl"
layout(local_size_x_id = 0) in;

layout(push_constant) uniform P {
    uvec2 x, out_;
    uint n;
} p;

shared float best_v[1024];
shared uint best_i[1024];

void main() {
    const uint tid = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
    F32s x = F32s(p.x);
    float bv = -1.0 / 0.0;
    uint bi = 0xffffffffu;
    for (uint i = tid; i < p.n; i += wg) {
        const float v = x.v[i];
        if (bi == 0xffffffffu || v > bv) bv = v, bi = i;
    }
    best_v[tid] = bv;
    best_i[tid] = bi;
    barrier();
    for (uint s = wg / 2u; s > 0u; s /= 2u) {
        if (tid < s) {
            const float ov = best_v[tid + s];
            const uint oi = best_i[tid + s];
            if (oi != 0xffffffffu && (best_i[tid] == 0xffffffffu || ov > best_v[tid] || (ov == best_v[tid] && oi < best_i[tid]))) {
                best_v[tid] = ov;
                best_i[tid] = oi;
            }
        }
        barrier();
    }
    if (tid == 0u) I32s(p.out_).v[0] = int(best_i[0] == 0xffffffffu ? 0u : best_i[0]);
}
