// iq2_xs: { f16 d; u16 qs[32]; u8 scales[8] } per 256 elements.  Each u16
// covers 8 elements: a 9-bit index into the 512-row grid of unsigned
// magnitudes and 7 sign bits (the 8th makes the count of minus signs
// even).  Each scales byte holds two 4-bit scales, one per 16 elements of
// its 32-group.  The reference's value (d * (0.5 + ls) * 0.25) * g * (+-1)
// equals db * (+-g) exactly (negation is exact), so q = +-g and s = db per
// half, computed in the reference's order.
#define QK 256u
#define QB 74u
#define ACT_Q8_K
void decode32(U32s w, U32s tab, uint boff, uint u, out uint q[8], out vec2 s, out vec2 m) {
    const float d = f16_to_f32(ld_u16(w, boff));
    const uint sc = ld_u8(w, boff + 66u + u);
    precise float db0 = d * (0.5 + float(sc & 0xfu)) * 0.25;
    precise float db1 = d * (0.5 + float(sc >> 4)) * 0.25;
    const uint e01 = ld_u32(w, boff + 2u + 8u * u), e23 = ld_u32(w, boff + 6u + 8u * u);
    [[unroll]] for (uint l = 0u; l < 4u; l++) {
        const uint e = ((l < 2u ? e01 : e23) >> (16u * (l & 1u))) & 0xffffu;
        const uint row = PL_VK_TAB_IQ2XS + 2u * (e & 511u);
        const uint sg = iq_signs8(e >> 9);
        q[2u * l] = iq_neg_bytes(tab.v[row], iq_sign_mask4(sg));
        q[2u * l + 1u] = iq_neg_bytes(tab.v[row + 1u], iq_sign_mask4(sg >> 4));
    }
    s = vec2(db0, db1);
    m = vec2(0.0);
}
