#version 450
// round_act.comp -- the activations of an f16 or bf16 weight's product
// rounded to that type once (-DPL_F16, -DPL_BF16), as the reference
// rounds them before its dot products; the products then read them as
// they are.  One element per invocation.
#include "common.glsl"
#include "float_types.glsl"
layout(local_size_x_id = 0) in;

layout(push_constant) uniform P {
    uvec2 x, y;
    uint n;
} p;

void main() {
    const uint i = group_index() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (i < p.n) F32s(p.y).v[i] = act_round(F32s(p.x).v[i]);
}
