// moe.glsl -- expert products (ggml's mul_mat_id) in the product shaders
// (matvec_q, matvec_f, gemm_q, gemm_f), switched on by the specialization
// constant MOE: output row `pair` (token t, slot j: t * n_used + j)
// multiplies the matrix of expert ids[pair] (expert_bytes apart in the 3-D
// tensor) with activation row pair / x_div (x_div = n_used where every
// slot reads its token's row, 1 where each reads its own).  The
// matrix-vector shaders take one pair per grid row and read its expert
// from the ids; the GEMMs take a tile of one expert's pairs from
// moe_group.comp's table (word 0 the number of tiles, tile i at word
// 4 + 4i: expert, the word of its first pair in the list, pairs), so that
// an expert's weights are decoded once per 64 of its pairs.  The
// arithmetic of a row is the plain product's.  An id outside the tensor is
// clamped into it: garbage for that row, never a read outside the weights.
// Included after the push constants, which end in route (the ids or the
// table), expert_bytes, x_div and n_expert.
layout(constant_id = 3) const bool MOE = false;

uint moe_expert(uint pair) { return uint(clamp(I32s(p.route).v[pair], 0, int(p.n_expert) - 1)); }

// the tile of grid row y: false past the table's tiles (the host sizes
// the grid for the most tiles the pairs can make)
bool moe_tile(uint y, out uint expert, out uint list, out uint count) {
    U32s g = U32s(p.route);
    if (y >= g.v[0]) return false;
    expert = g.v[4u + 4u * y];
    list = g.v[5u + 4u * y];
    count = g.v[6u + 4u * y];
    return true;
}

// output row and activation row of a GEMM tile's token i (without MOE:
// the token; branches, not selects, so that nothing reads the table then)
uint moe_out_row(uint list, uint i) {
    if (MOE) return U32s(p.route).v[list + i];
    return i;
}
uint moe_x_row(uint list, uint i) {
    if (MOE) return U32s(p.route).v[list + i] / p.x_div;
    return i;
}
