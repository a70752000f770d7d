// iq3_s: { f16 d; u8 qs[64]; u8 qh[8]; u8 signs[32]; u8 scales[4] } per
// 256 elements.  Row k (4 elements) of 32-group u is the 9-bit index
// qs[8u + k] | bit k of qh[u] << 8 into the 512-row grid of 4 unsigned
// magnitudes; signs[4u..4u+3] hold one sign bit per element; a 4-bit scale
// per 32-group (low nibble for even groups).  The reference's value
// (d * (1 + 2 ls)) * g * (+-1) equals db * (+-g) exactly (negation is
// exact): q = +-g (grid values < 16), s = db.
#define QK 256u
#define QB 110u
#define ACT_Q8_K
void decode32(U32s w, U32s tab, uint boff, uint u, out uint q[8], out vec2 s, out vec2 m) {
    const float d = f16_to_f32(ld_u16(w, boff));
    const uint ls = (ld_u8(w, boff + 106u + u / 2u) >> (4u * (u & 1u))) & 0xfu;
    precise float db = d * float(1u + 2u * ls);
    const uint i0 = ld_u32(w, boff + 2u + 8u * u), i1 = ld_u32(w, boff + 6u + 8u * u);
    const uint qh = ld_u8(w, boff + 66u + u), signs = ld_u32(w, boff + 74u + 4u * u);
    [[unroll]] for (uint k = 0u; k < 8u; k++) {
        const uint idx = (((k < 4u ? i0 : i1) >> (8u * (k & 3u))) & 0xffu) | (((qh >> k) & 1u) << 8);
        q[k] = iq_neg_bytes(tab.v[PL_VK_TAB_IQ3S + idx], iq_sign_mask4(signs >> (4u * k)));
    }
    s = vec2(db);
    m = vec2(0.0);
}
