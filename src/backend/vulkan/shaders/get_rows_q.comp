#version 450
// get_rows_q.comp -- embedding rows of a quantized weight decoded to f32,
// bit for bit the reference decode: one 32-element unit per invocation,
// each element s * q - m from the type's decode32 (types.glsl).
#include "common.glsl"
#include "types.glsl"
layout(local_size_x_id = 0) in;

layout(push_constant) uniform P {
    uvec2 w, ids, y, tables;
    uint w_off, row_bytes;
    uint n_in, n;
} p;

void main() {
    const uint units = p.n_in / 32u;
    const uint i = group_index() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (i >= p.n * units) return;
    const uint r = i / units, u = i % units;
    const uint id = uint(I32s(p.ids).v[r]);
    const uint ub = u * 32u; // element index of the unit in its row
    const uint boff = p.w_off + id * p.row_bytes + (ub / QK) * QB;
    uint q[8];
    vec2 s, m;
    decode32(U32s(p.w), U32s(p.tables), boff, (ub % QK) / 32u, q, s, m);
    F32s y = F32s(p.y);
    const uint yo = r * p.n_in + ub;
    [[unroll]] for (uint k = 0u; k < 32u; k++) {
        const float sc = k < 16u ? s.x : s.y, mn = k < 16u ? m.x : m.y;
        const int qv = bitfieldExtract(int(q[k >> 2]), int((k & 3u) * 8u), 8);
        precise float v = sc * float(qv) - mn;
        y.v[yo + k] = v;
    }
}
