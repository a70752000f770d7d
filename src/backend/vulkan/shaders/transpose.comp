#version 450
// transpose.comp -- a batch of rows x cols matrices transposed
// (pl_ref_transpose): one invocation per output value, the stores
// contiguous.
#include "common.glsl"
layout(local_size_x_id = 0) in;

layout(push_constant) uniform P {
    uvec2 x, y;
    uint rows, cols, n; // n = batch * rows * cols (< 2^32)
} p;

void main() {
    const uint o = group_index() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (o >= p.n) return;
    const uint per = p.rows * p.cols, b = o / per, rem = o - b * per;
    const uint j = rem / p.rows, i = rem - j * p.rows;
    F32s(p.y).v[o] = F32s(p.x).v[b * per + i * p.cols + j];
}
