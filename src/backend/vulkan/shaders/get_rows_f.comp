#version 450
// get_rows_f.comp -- embedding rows of a float weight (f32, f16, bf16)
// decoded to f32: one element per invocation.
#include "common.glsl"
#include "float_types.glsl"
layout(local_size_x_id = 0) in;

layout(push_constant) uniform P {
    uvec2 w, ids, y;
    uint w_off;     // byte offset of the weight from its (4-aligned) address
    uint row_bytes;
    uint n_in, n;   // elements per row, rows
} p;

void main() {
    const uint i = group_index() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (i >= p.n * p.n_in) return;
    const uint r = i / p.n_in, e = i % p.n_in;
    const uint id = uint(I32s(p.ids).v[r]);
    F32s(p.y).v[i] = w_elem(U32s(p.w), p.w_off + id * p.row_bytes, e);
}
