// iq3_xxs: { f16 d; u8 qs[96] } per 256 elements.  qs[8u..8u+7] are the
// indices of 32-group u into the 256-row grid of 4 unsigned magnitudes
// (two rows per 8 elements); qs[64 + 4u] is a u32 whose top 4 bits are the
// group's scale and whose low 28 bits are four 7-bit sign fields (the 8th
// sign makes the count of minus signs even).  The reference's value
// (d * (0.5 + ls) * 0.5) * g * (+-1) equals db * (+-g) exactly (negation
// is exact): q = +-g (grid values < 64), s = db in the reference's order.
#define QK 256u
#define QB 98u
#define ACT_Q8_K
void decode32(U32s w, U32s tab, uint boff, uint u, out uint q[8], out vec2 s, out vec2 m) {
    const float d = f16_to_f32(ld_u16(w, boff));
    const uint i0 = ld_u32(w, boff + 2u + 8u * u), i1 = ld_u32(w, boff + 6u + 8u * u);
    const uint meta = ld_u32(w, boff + 66u + 4u * u);
    precise float db = d * (0.5 + float(meta >> 28)) * 0.5;
    [[unroll]] for (uint k = 0u; k < 8u; k++) {
        // row k covers elements 4k..4k+3: sign field k / 2, its nibble k % 2
        const uint idx = ((k < 4u ? i0 : i1) >> (8u * (k & 3u))) & 0xffu;
        const uint sg = iq_signs8(meta >> (7u * (k / 2u))) >> (4u * (k & 1u));
        q[k] = iq_neg_bytes(tab.v[PL_VK_TAB_IQ3XXS + idx], iq_sign_mask4(sg));
    }
    s = vec2(db);
    m = vec2(0.0);
}
