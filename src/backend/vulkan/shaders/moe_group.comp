#version 450
// moe_group.comp -- the (token, slot) pairs of an expert product grouped
// by expert for the GEMMs' expert mode (moe.glsl): the pairs listed
// expert after expert from word `list` of the table, and a tile for every
// 64 pairs of one expert (64 = BN of gemm_q and gemm_f).  One work group:
// counts and places through shared atomics.  The order of one expert's
// pairs in the list is whatever the atomics give; each pair's output is
// computed on its own, so no value depends on it.
#include "common.glsl"
layout(local_size_x = 256) in;

layout(push_constant) uniform P {
    uvec2 ids, table;
    uint n_pairs, n_expert, list;
} p;

#define TILE 64u
shared uint cnt[256], off[256], fill[256], toff[256]; // n_expert <= 256

uint expert_of(uint pair) { return uint(clamp(I32s(p.ids).v[pair], 0, int(p.n_expert) - 1)); }

void main() {
    const uint lid = gl_LocalInvocationID.x;
    U32s tab = U32s(p.table);
    cnt[lid] = 0u;
    fill[lid] = 0u;
    barrier();
    for (uint i = lid; i < p.n_pairs; i += 256u) atomicAdd(cnt[expert_of(i)], 1u);
    barrier();
    if (lid == 0u) {
        uint o = 0u, tiles = 0u;
        for (uint e = 0u; e < p.n_expert; e++) {
            off[e] = o;
            toff[e] = tiles;
            o += cnt[e];
            tiles += (cnt[e] + TILE - 1u) / TILE;
        }
        tab.v[0] = tiles;
    }
    barrier();
    if (lid < p.n_expert)
        for (uint k = 0u; k * TILE < cnt[lid]; k++) {
            const uint ti = toff[lid] + k;
            tab.v[4u + 4u * ti] = lid;
            tab.v[5u + 4u * ti] = p.list + off[lid] + k * TILE;
            tab.v[6u + 4u * ti] = min(TILE, cnt[lid] - k * TILE);
        }
    for (uint i = lid; i < p.n_pairs; i += 256u) {
        const uint e = expert_of(i);
        tab.v[p.list + off[e] + atomicAdd(fill[e], 1u)] = i;
    }
}
