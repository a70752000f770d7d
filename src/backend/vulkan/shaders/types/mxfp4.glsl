// mxfp4: { u8 e; u8 qs[16] }, element = kvalues_mxfp4[nibble] * 2^(e-128)
// (low nibbles elements 0..15, high nibbles 16..31).  The table holds the
// e2m1 values doubled (-12..12, integers that fit a byte), so the e8m0
// scale is halved to match: 2^(e-128), built from its bits as the
// reference's pl_q_e8m0_half does (e = 0, 1 give f32 subnormals).  The
// table comes from the codebook buffer (vk_tables.h), the one copy of the
// values.  Blocks are 17 bytes: any alignment, so bytes are read with
// ld_u8/ld_u32 only.
#define QK 32u
#define QB 17u
#define ACT_Q8_0
void decode32(U32s w, U32s tab, uint boff, uint u, out uint q[8], out vec2 s, out vec2 m) {
    const uint e = ld_u8(w, boff);
    const float d = uintBitsToFloat(e < 2u ? 0x00200000u << e : (e - 1u) << 23);
    [[unroll]] for (uint k = 0u; k < 4u; k++) {
        const uint b = ld_u32(w, boff + 1u + 4u * k);
        uint lo = 0u, hi = 0u;
        [[unroll]] for (uint j = 0u; j < 4u; j++) {
            const uint nl = (b >> (8u * j)) & 0xfu, nh = (b >> (8u * j + 4u)) & 0xfu;
            lo |= (tab.v[PL_VK_TAB_KVALUES_MXFP4 + nl] & 0xffu) << (8u * j);
            hi |= (tab.v[PL_VK_TAB_KVALUES_MXFP4 + nh] & 0xffu) << (8u * j);
        }
        q[k] = lo;
        q[k + 4u] = hi;
    }
    s = vec2(d);
    m = vec2(0.0);
}
