#version 450
// elementwise.comp -- y = a + b, a * b (b one row broadcast over the rows
// of a, or as many rows as a), x * s, silu(g) * u, and for mixture of
// experts x * sigmoid(g) with one gate per row (qwen2moe's shared expert)
// and the weighted sum of each token's k expert rows in slot order: one
// output element per invocation.
#include "common.glsl"
#include "exp.glsl"
layout(local_size_x_id = 0) in;

layout(push_constant) uniform P {
    uvec2 a, b, y;
    uint n;      // elements of y
    uint row_n;  // elements per row of b when broadcast (0: not broadcast); per row of a for ops 4, 5
    uint op;     // 0 add, 1 mul, 2 scale, 3 silu_mul, 4 sigmoid_gate, 5 moe_sum
    float s;
    uint k;      // moe_sum: rows of a (and weights in b) per token
} p;

// op 4, pl_ref_sigmoid_gate: silu(g) / g, as the reference rounds it (exp_f32)
float sigmoid_gate(float a, float g) {
    precise float v = a * (g / (1.0 + exp_f32(-g)) / g);
    return v;
}

// op 5, pl_ref_moe_sum: y[t][o] = sum over j of a[t][j][o] * b[t][j], each
// product rounded before its add (precise: no fused multiply-add)
float moe_sum(uint i) {
    const uint t = i / p.row_n, o = i % p.row_n;
    F32s a = F32s(p.a), b = F32s(p.b);
    precise float s = a.v[t * p.k * p.row_n + o] * b.v[t * p.k];
    for (uint j = 1u; j < p.k; j++) s = s + a.v[(t * p.k + j) * p.row_n + o] * b.v[t * p.k + j];
    return s;
}

void main() {
    uint i = group_index() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (i >= p.n) return;
    if (p.op == 5u) {
        F32s(p.y).v[i] = moe_sum(i);
        return;
    }
    float a = F32s(p.a).v[i];
    float r;
    if (p.op == 2u) {
        r = a * p.s;
    } else if (p.op == 4u) {
        r = sigmoid_gate(a, F32s(p.b).v[i / p.row_n]);
    } else {
        float b = F32s(p.b).v[p.row_n != 0u ? i % p.row_n : i];
        if (p.op == 0u) r = a + b;
        else if (p.op == 1u) r = a * b;
        else r = a / (1.0 + exp(-a)) * b;
    }
    F32s(p.y).v[i] = r;
}
