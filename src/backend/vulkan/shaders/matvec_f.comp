#version 450
// matvec_f.comp -- y = W x for float weights (f32, f16, bf16) and a few
// tokens: a work group takes ROWS rows and NT tokens (grid y walks the
// token groups), each invocation a stride of a row's elements, the sums
// reduced over the group.  The activations are rounded to the weight's
// type as the reference does; the products and sums are f32.
#include "common.glsl"
#include "float_types.glsl"
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 2;
layout(constant_id = 2) const uint NT = 1;

layout(push_constant) uniform P {
    uvec2 w, x, y;
    uint w_off, row_bytes;
    uint n_in, n_out, n_tok;
} p;

shared float part[ROWS * NT][128];

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint r0 = gl_WorkGroupID.x * ROWS, t0 = gl_WorkGroupID.y * NT;
    U32s w = U32s(p.w);
    F32s x = F32s(p.x);
    float acc[ROWS * NT];
    [[unroll]] for (uint k = 0u; k < ROWS * NT; k++) acc[k] = 0.0;
    for (uint i = tid; i < p.n_in; i += gl_WorkGroupSize.x) {
        float a[NT];
        [[unroll]] for (uint t = 0u; t < NT; t++)
            a[t] = t0 + t < p.n_tok ? act_round(x.v[(t0 + t) * p.n_in + i]) : 0.0;
        [[unroll]] for (uint r = 0u; r < ROWS; r++) {
            if (r0 + r >= p.n_out) break;
            const float wv = w_elem(w, p.w_off + (r0 + r) * p.row_bytes, i);
            [[unroll]] for (uint t = 0u; t < NT; t++) acc[r * NT + t] += wv * a[t];
        }
    }
    [[unroll]] for (uint k = 0u; k < ROWS * NT; k++) {
        const float v = subgroupAdd(acc[k]);
        if (subgroupElect()) part[k][gl_SubgroupID] = v;
    }
    barrier();
    if (tid < ROWS * NT) {
        const uint r = tid / NT, t = tid % NT;
        float s = 0.0;
        for (uint g = 0u; g < gl_NumSubgroups; g++) s += part[tid][g];
        if (r0 + r < p.n_out && t0 + t < p.n_tok) F32s(p.y).v[(t0 + t) * p.n_out + r0 + r] = s;
    }
}
