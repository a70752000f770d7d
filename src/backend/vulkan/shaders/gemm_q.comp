#version 450
// gemm_q.comp -- y = W x for a quantized weight type and many tokens
// (prefill): a work group computes a tile of 64 rows x 64 tokens, walking
// the rows 128 elements (4 units of 32) at a time.  Each step the 256
// invocations decode one weight unit each (decode32, the same decode as
// everywhere) and load one activation unit each into shared memory, so a
// weight block is decoded once for 64 tokens and an activation unit read
// once for 64 rows; then each invocation accumulates its 4 x 4 outputs
// from shared memory.  The arithmetic of one unit is matvec_q.comp's.
// With MOE (moe.glsl) the tile's tokens are up to 64 pairs of one expert.
#include "common.glsl"
#include "types.glsl"
layout(local_size_x_id = 0) in; // 256

layout(push_constant) uniform P {
    uvec2 w, qs, d, sums, y, tables, route;
    uint w_off, row_bytes;
    uint n_in, n_out, n_tok;
    uint expert_bytes, x_div, n_expert;
} p;

#include "dot4.glsl"
#include "moe.glsl"

#define BM 64u
#define BN 64u
#define BU 4u // units of 32 elements per step

shared uint wq[BU][BM][8];
shared vec4 wsm[BU][BM]; // s.x, s.y, m.x, m.y
shared uint aq[BU][BN][8];
shared vec4 asm_[BU][BN]; // d, sum0, sum1, unused

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
    const uint units = p.n_in / 32u;
    U32s w = U32s(p.w), tab = U32s(p.tables), qs = U32s(p.qs);
    F32s d = F32s(p.d), sums = F32s(p.sums);
    const uint tx = tid % 16u, ty = tid / 16u;
    float acc[4][4];
    [[unroll]] for (uint i = 0u; i < 4u; i++)
        [[unroll]] for (uint j = 0u; j < 4u; j++) acc[i][j] = 0.0;

    // this invocation's share of each step: weight unit (lr, lu), activation unit (lt, lu)
    const uint lu = tid / BM, lr = tid % BM;
    const bool t_live = t0 + lr < n_tok; // BN == BM: the same split
    const uint xr = t_live ? moe_x_row(list, t0 + lr) : 0u;
    for (uint u0 = 0u; u0 < units; u0 += BU) {
        const uint u = u0 + lu;
        {
            uint q[8];
            vec2 s = vec2(0.0), m = vec2(0.0);
            [[unroll]] for (uint k = 0u; k < 8u; k++) q[k] = 0u;
            const uint r = r0 + lr;
            if (r < p.n_out && u < units) {
                const uint e = u * 32u;
                decode32(w, tab, w0 + r * p.row_bytes + (e / QK) * QB, (e % QK) / 32u, q, s, m);
            }
            [[unroll]] for (uint k = 0u; k < 8u; k++) wq[lu][lr][k] = q[k];
            wsm[lu][lr] = vec4(s, m);
        }
        {
            if (t_live && u < units) {
                const uint ab = xr * units + u;
                [[unroll]] for (uint k = 0u; k < 8u; k++) aq[lu][lr][k] = qs.v[ab * 8u + k];
                asm_[lu][lr] = vec4(d.v[ab], sums.v[2u * ab], sums.v[2u * ab + 1u], 0.0);
            } else {
                [[unroll]] for (uint k = 0u; k < 8u; k++) aq[lu][lr][k] = 0u;
                asm_[lu][lr] = vec4(0.0);
            }
        }
        barrier();
        // (the unit loop stays a loop: unrolled, it made each variant's
        // SPIR-V three times larger -- 200 KB -- and the build slower)
        for (uint uu = 0u; uu < BU; uu++) {
            [[unroll]] for (uint i = 0u; i < 4u; i++) {
                const uint rr = ty + 16u * i;
                uint q[8];
                [[unroll]] for (uint k = 0u; k < 8u; k++) q[k] = wq[uu][rr][k];
                const vec4 sm = wsm[uu][rr];
                [[unroll]] for (uint j = 0u; j < 4u; j++) {
                    const uint tt = tx + 16u * j;
                    int i0 = 0, i1 = 0;
                    [[unroll]] for (uint k = 0u; k < 4u; k++) i0 = dot4(q[k], aq[uu][tt][k], i0);
                    [[unroll]] for (uint k = 4u; k < 8u; k++) i1 = dot4(q[k], aq[uu][tt][k], i1);
                    const vec4 a = asm_[uu][tt];
                    acc[i][j] += a.x * (sm.x * float(i0) + sm.y * float(i1)) - (sm.z * a.y + sm.w * a.z);
                }
            }
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
