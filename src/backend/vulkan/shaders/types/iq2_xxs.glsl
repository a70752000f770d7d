// iq2_xxs: { f16 d; u8 qs[64] } per 256 elements.  Each 32-group is 8
// bytes: four grid indices (one per 8 elements, into the 256-row grid of
// unsigned magnitudes), then a u32 whose top 4 bits are the group's scale
// and whose low 28 bits are four 7-bit sign fields (the 8th sign makes the
// count of minus signs even).  The reference's value is
// (d * (0.5 + ls) * 0.25) * g * (+-1); since multiplying by -1 is exact,
// that equals db * (+-g), so q = +-g (grid values < 64) and s = db,
// computed in the reference's order.
#define QK 256u
#define QB 66u
#define ACT_Q8_K
void decode32(U32s w, U32s tab, uint boff, uint u, out uint q[8], out vec2 s, out vec2 m) {
    const float d = f16_to_f32(ld_u16(w, boff));
    const uint g = boff + 2u + 8u * u;
    const uint idx = ld_u32(w, g), meta = ld_u32(w, g + 4u);
    precise float db = d * (0.5 + float(meta >> 28)) * 0.25;
    [[unroll]] for (uint l = 0u; l < 4u; l++) {
        const uint row = PL_VK_TAB_IQ2XXS + 2u * ((idx >> (8u * l)) & 0xffu);
        const uint sg = iq_signs8(meta >> (7u * l));
        q[2u * l] = iq_neg_bytes(tab.v[row], iq_sign_mask4(sg));
        q[2u * l + 1u] = iq_neg_bytes(tab.v[row + 1u], iq_sign_mask4(sg >> 4));
    }
    s = vec2(db);
    m = vec2(0.0);
}
