#version 450
// gemm_f.comp -- y = W x for float weights (f32, f16, bf16) and many
// tokens: a tile of 64 rows x 64 tokens per work group, 32 elements of
// each at a time through shared memory (x holds the activations already
// rounded to the weight's type: round_act.comp); each invocation
// accumulates 4 x 4 outputs in f32.  With MOE (moe.glsl) the tile's
// tokens are up to 64 pairs of one expert.
#include "common.glsl"
#include "float_types.glsl"
layout(local_size_x_id = 0) in; // 256

layout(push_constant) uniform P {
    uvec2 w, x, y, route;
    uint w_off, row_bytes;
    uint n_in, n_out, n_tok;
    uint wide; // (matvec_f's; the push constants are one struct on the host)
    uint expert_bytes, x_div, n_expert;
} p;

#include "moe.glsl"

#define BM 64u
#define BN 64u
#define BK 32u

shared float ws[BM][BK + 1u];
shared float xs[BN][BK + 1u];

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint r0 = gl_WorkGroupID.x * BM;
    uint t0 = gl_WorkGroupID.y * BN, n_tok = p.n_tok, w0 = p.w_off, list = 0u;
    if (MOE) {
        uint e;
        if (!moe_tile(gl_WorkGroupID.y, e, list, n_tok)) return;
        t0 = 0u;
        w0 += e * p.expert_bytes;
    }
    // the activation row of each of the 8 tile rows this invocation loads
    uint xr[8];
    [[unroll]] for (uint l = 0u; l < 8u; l++) {
        const uint t = t0 + (tid + 256u * l) / BK;
        xr[l] = t < n_tok ? moe_x_row(list, t) : 0u;
    }
    U32s w = U32s(p.w);
    F32s x = F32s(p.x);
    const uint tx = tid % 16u, ty = tid / 16u;
    float acc[4][4];
    [[unroll]] for (uint i = 0u; i < 4u; i++)
        [[unroll]] for (uint j = 0u; j < 4u; j++) acc[i][j] = 0.0;
    for (uint k0 = 0u; k0 < p.n_in; k0 += BK) {
        // 64 x 32 of each: 8 elements per invocation
        [[unroll]] for (uint l = 0u; l < 8u; l++) {
            const uint e = tid + 256u * l, rr = e / BK, kk = e % BK;
            const uint r = r0 + rr, t = t0 + rr, k = k0 + kk;
            ws[rr][kk] = r < p.n_out && k < p.n_in ? w_elem_fast(w, w0 + r * p.row_bytes, k) : 0.0;
            xs[rr][kk] = t < n_tok && k < p.n_in ? x.v[xr[l] * p.n_in + k] : 0.0;
        }
        barrier();
        [[unroll]] for (uint kk = 0u; kk < BK; kk++) {
            float a[4], b[4];
            [[unroll]] for (uint i = 0u; i < 4u; i++) a[i] = ws[ty + 16u * i][kk];
            [[unroll]] for (uint j = 0u; j < 4u; j++) b[j] = xs[tx + 16u * j][kk];
            [[unroll]] for (uint i = 0u; i < 4u; i++)
                [[unroll]] for (uint j = 0u; j < 4u; j++) acc[i][j] += a[i] * b[j];
        }
        barrier();
    }
    F32s y = F32s(p.y);
    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        const uint r = r0 + ty + 16u * i;
        [[unroll]] for (uint j = 0u; j < 4u; j++) {
            const uint t = t0 + tx + 16u * j;
            if (r < p.n_out && t < n_tok) y.v[moe_out_row(list, t) * p.n_out + r] = acc[i][j];
        }
    }
}
