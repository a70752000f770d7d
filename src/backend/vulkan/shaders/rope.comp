#version 450
// rope.comp -- rotary embedding with the angles' cos/sin computed on the
// host (pl_rope_angles: the reference's own arithmetic, so every backend
// rotates by bit-identical angles), one table row of n_rot floats per
// token.  One invocation per rotated pair, or per element past n_rot
// (copied when y is not x).
#include "common.glsl"
layout(local_size_x_id = 0) in;

layout(push_constant) uniform P {
    uvec2 x, y, table;
    uint n_tok, n_head, head_dim, n_rot;
    uint neox;
} p;

void main() {
    const uint half_ = p.n_rot / 2u, per_head = half_ + (p.head_dim - p.n_rot);
    const uint i = group_index() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (i >= p.n_tok * p.n_head * per_head) return;
    const uint j = i % per_head, th = i / per_head, t = th / p.n_head;
    const uint base = th * p.head_dim;
    F32s x = F32s(p.x), y = F32s(p.y);
    if (j >= half_) {
        const uint e = base + p.n_rot + (j - half_);
        y.v[e] = x.v[e];
        return;
    }
    F32s tab = F32s(p.table);
    const float c = tab.v[t * p.n_rot + 2u * j], s = tab.v[t * p.n_rot + 2u * j + 1u];
    const uint a = base + (p.neox != 0u ? j : 2u * j), b = base + (p.neox != 0u ? j + half_ : 2u * j + 1u);
    const float xa = x.v[a], xb = x.v[b];
    precise float ya = xa * c - xb * s;
    precise float yb = xa * s + xb * c;
    y.v[a] = ya;
    y.v[b] = yb;
}
