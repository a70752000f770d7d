#version 450
// matvec_q.comp -- y = W x for a quantized weight type (types.glsl) and a
// few tokens whose activations quant_act.comp rounded to 8-bit blocks.  A
// work group takes ROWS rows and NT tokens (grid y walks the token
// groups); each subgroup takes whole rows, its invocations striding over a
// row's 32-element units, and one subgroupAdd finishes a row: no shared
// memory, no barrier.  Rows are dealt out by gl_SubgroupID and
// gl_NumSubgroups, so any subgroup size the driver picks is correct (the
// host sizes ROWS from the size it reports).  The integer products come
// from 4x8-bit dot products (-DPL_INT_DOT, SPV_KHR_integer_dot_product)
// or from plain multiplies (the _nodot variant, for devices without them).
// With MOE (moe.glsl) a grid row is one (token, slot) pair of an expert
// product.
#include "common.glsl"
#include "types.glsl"
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 4;
layout(constant_id = 2) const uint NT = 1;

layout(push_constant) uniform P {
    uvec2 w, qs, d, sums, y, tables, route;
    uint w_off, row_bytes;
    uint n_in, n_out, n_tok;
    uint expert_bytes, x_div, n_expert;
} p;

#include "dot4.glsl"
#include "moe.glsl"

void main() {
    const uint r0 = gl_WorkGroupID.x * ROWS, t0 = gl_WorkGroupID.y * NT;
    if (t0 >= p.n_tok) return;
    const uint units = p.n_in / 32u;
    // the weights and the first activation row (an expert's, a pair's row)
    uint w0 = p.w_off, x0 = t0;
    if (MOE) {
        w0 += moe_expert(t0) * p.expert_bytes;
        x0 = t0 / p.x_div;
    }
    U32s w = U32s(p.w), tab = U32s(p.tables), qs = U32s(p.qs);
    F32s d = F32s(p.d), sums = F32s(p.sums), y = F32s(p.y);
    for (uint r = gl_SubgroupID; r < ROWS; r += gl_NumSubgroups) {
        const uint row = r0 + r;
        if (row >= p.n_out) break;
        float acc[NT];
        [[unroll]] for (uint t = 0u; t < NT; t++) acc[t] = 0.0;
        for (uint u = gl_SubgroupInvocationID; u < units; u += gl_SubgroupSize) {
            const uint e = u * 32u;
            uint q[8];
            vec2 s, m;
            decode32(w, tab, w0 + row * p.row_bytes + (e / QK) * QB, (e % QK) / 32u, q, s, m);
            [[unroll]] for (uint t = 0u; t < NT; t++) {
                if (t0 + t >= p.n_tok) break;
                const uint ab = (x0 + t) * units + u; // the token's unit
                int i0 = 0, i1 = 0;
                [[unroll]] for (uint k = 0u; k < 4u; k++) i0 = dot4(q[k], qs.v[ab * 8u + k], i0);
                [[unroll]] for (uint k = 4u; k < 8u; k++) i1 = dot4(q[k], qs.v[ab * 8u + k], i1);
                acc[t] += d.v[ab] * (s.x * float(i0) + s.y * float(i1)) - (m.x * sums.v[2u * ab] + m.y * sums.v[2u * ab + 1u]);
            }
        }
        [[unroll]] for (uint t = 0u; t < NT; t++) {
            const float v = subgroupAdd(acc[t]);
            if (subgroupElect() && t0 + t < p.n_tok) y.v[(t0 + t) * p.n_out + row] = v;
        }
    }
}
