// iq2_s: { f16 d; u8 qs[64]; u8 qh[8]; u8 scales[8] } per 256 elements.
// qs[0..31] are the low 8 bits of 10-bit indices into the 1024-row grid of
// unsigned magnitudes (one per 8 elements; the top 2 bits of index l of
// 32-group u are bits 2l, 2l+1 of qh[u]); qs[32..63] are explicit sign
// bytes, one per 8 elements.  Two 4-bit scales per 32-group, one per 16.
// The reference's value (d * (0.5 + ls) * 0.25) * g * (+-1) equals
// db * (+-g) exactly (negation is exact): q = +-g, s = db per half.
#define QK 256u
#define QB 82u
#define ACT_Q8_K
void decode32(U32s w, U32s tab, uint boff, uint u, out uint q[8], out vec2 s, out vec2 m) {
    const float d = f16_to_f32(ld_u16(w, boff));
    const uint sc = ld_u8(w, boff + 74u + u);
    precise float db0 = d * (0.5 + float(sc & 0xfu)) * 0.25;
    precise float db1 = d * (0.5 + float(sc >> 4)) * 0.25;
    const uint qs = ld_u32(w, boff + 2u + 4u * u), signs = ld_u32(w, boff + 34u + 4u * u);
    const uint qh = ld_u8(w, boff + 66u + u);
    [[unroll]] for (uint l = 0u; l < 4u; l++) {
        const uint idx = ((qs >> (8u * l)) & 0xffu) | ((qh << (8u - 2u * l)) & 0x300u);
        const uint row = PL_VK_TAB_IQ2S + 2u * idx;
        const uint sg = signs >> (8u * l);
        q[2u * l] = iq_neg_bytes(tab.v[row], iq_sign_mask4(sg));
        q[2u * l + 1u] = iq_neg_bytes(tab.v[row + 1u], iq_sign_mask4(sg >> 4));
    }
    s = vec2(db0, db1);
    m = vec2(0.0);
}
