#version 450
// matvec_q.comp -- y = W x for a quantized weight type (types.glsl) and a
// few tokens whose activations quant_act.comp rounded to 8-bit blocks: a
// work group takes ROWS rows and NT tokens; each invocation a stride of the
// rows' 32-element units, whose integer products come from 4x8-bit dot
// products (-DPL_INT_DOT, SPV_KHR_integer_dot_product) or from plain
// integer multiplies (the build's _nodot variant, for devices without
// them); the sums are reduced over the group.
#include "common.glsl"
#include "types.glsl"
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 2;
layout(constant_id = 2) const uint NT = 1;

layout(push_constant) uniform P {
    uvec2 w, qs, d, sums, y, tables;
    uint w_off, row_bytes;
    uint n_in, n_out, n_tok;
} p;

#include "dot4.glsl"

shared float part[ROWS * NT][128];

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint r0 = gl_WorkGroupID.x * ROWS, t0 = gl_WorkGroupID.y * NT;
    const uint units = p.n_in / 32u;
    U32s w = U32s(p.w), tab = U32s(p.tables), qs = U32s(p.qs);
    F32s d = F32s(p.d), sums = F32s(p.sums);
    float acc[ROWS * NT];
    [[unroll]] for (uint k = 0u; k < ROWS * NT; k++) acc[k] = 0.0;
    for (uint u = tid; u < units; u += gl_WorkGroupSize.x) {
        const uint e = u * 32u;
        [[unroll]] for (uint r = 0u; r < ROWS; r++) {
            if (r0 + r >= p.n_out) break;
            uint q[8];
            vec2 s, m;
            decode32(w, tab, p.w_off + (r0 + r) * p.row_bytes + (e / QK) * QB, (e % QK) / 32u, q, s, m);
            [[unroll]] for (uint t = 0u; t < NT; t++) {
                if (t0 + t >= p.n_tok) break;
                const uint ab = (t0 + t) * units + u; // the token's unit
                int i0 = 0, i1 = 0;
                [[unroll]] for (uint k = 0u; k < 4u; k++) i0 = dot4(q[k], qs.v[ab * 8u + k], i0);
                [[unroll]] for (uint k = 4u; k < 8u; k++) i1 = dot4(q[k], qs.v[ab * 8u + k], i1);
                const float da = d.v[ab];
                acc[r * NT + t] += da * (s.x * float(i0) + s.y * float(i1)) - (m.x * sums.v[2u * ab] + m.y * sums.v[2u * ab + 1u]);
            }
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
