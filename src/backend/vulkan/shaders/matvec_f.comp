#version 450
// matvec_f.comp -- y = W x for float weights (f32, f16, bf16) and a few
// tokens: ROWS rows and NT tokens per work group, whole rows per subgroup
// (dealt out by gl_SubgroupID, so any subgroup size is correct), each row
// finished by one subgroupAdd.  x holds the activations already rounded
// to the weight's type (round_act.comp); products and sums are f32.
// With MOE (moe.glsl) a grid row is one (token, slot) pair of an expert
// product.
#include "common.glsl"
#include "float_types.glsl"
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 4;
layout(constant_id = 2) const uint NT = 1;

layout(push_constant) uniform P {
    uvec2 w, x, y, route;
    uint w_off, row_bytes;
    uint n_in, n_out, n_tok;
    uint wide; // rows start on 4-byte boundaries: read them four elements at a time
    uint expert_bytes, x_div, n_expert;
} p;

#include "moe.glsl"

void main() {
    const uint r0 = gl_WorkGroupID.x * ROWS, t0 = gl_WorkGroupID.y * NT;
    if (t0 >= p.n_tok) return;
    // the weights and the first activation row (an expert's, a pair's row)
    uint w0 = p.w_off, x0 = t0;
    if (MOE) {
        w0 += moe_expert(t0) * p.expert_bytes;
        x0 = t0 / p.x_div;
    }
    U32s w = U32s(p.w);
    F32s x = F32s(p.x), y = F32s(p.y);
    for (uint r = gl_SubgroupID; r < ROWS; r += gl_NumSubgroups) {
        const uint row = r0 + r;
        if (row >= p.n_out) break;
        const uint rb = w0 + row * p.row_bytes;
        float acc[NT];
        [[unroll]] for (uint t = 0u; t < NT; t++) acc[t] = 0.0;
        uint i0 = 0u;
        if (p.wide != 0u) {
            // four elements an invocation from whole words (rows 4-byte
            // aligned, n_in a multiple of 4): fewer, wider loads
            const uint n4 = p.n_in / 4u;
            for (uint j = gl_SubgroupInvocationID; j < n4; j += gl_SubgroupSize) {
                const vec4 wv = w_elem4(w, rb, 4u * j);
                [[unroll]] for (uint t = 0u; t < NT; t++) {
                    if (t0 + t >= p.n_tok) break;
                    const uint xo = (x0 + t) * p.n_in + 4u * j;
                    acc[t] += dot(wv, vec4(x.v[xo], x.v[xo + 1u], x.v[xo + 2u], x.v[xo + 3u]));
                }
            }
            i0 = n4 * 4u;
        }
        for (uint i = i0 + gl_SubgroupInvocationID; i < p.n_in; i += gl_SubgroupSize) {
            const float wv = w_elem_fast(w, rb, i);
            [[unroll]] for (uint t = 0u; t < NT; t++)
                if (t0 + t < p.n_tok) acc[t] += wv * x.v[(x0 + t) * p.n_in + i];
        }
        [[unroll]] for (uint t = 0u; t < NT; t++) {
            const float v = subgroupAdd(acc[t]);
            if (subgroupElect() && t0 + t < p.n_tok) y.v[(t0 + t) * p.n_out + row] = v;
        }
    }
}
