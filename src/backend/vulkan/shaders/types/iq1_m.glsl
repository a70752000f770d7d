// iq1_m: { u8 qs[32]; u8 qh[16]; u8 scales[8] } per 256 elements, no
// separate d: the f16 super-scale is the top nibbles of the four u16
// scale words (word 0's lowest).  Row l (8 elements) of 32-group u is
// qs[4u + l] plus 3 high index bits from byte qh[2u + l / 2] (low nibble
// bits 0..2 for even l, high nibble bits 4..6 for odd), whose bit 3 / 7 is
// the sign of the row's +-1/8 shift; the grid is iq1_s's (values in
// {-1, 0, 1}).  3-bit scales, two per 32-group, from scale word u / 2 at
// bit 6 (u % 2) + 3 half.  The reference's value is dl * (g +- 0.125),
// dl = d * (2 ls + 1): with q = 8g +- 1 and s = dl * 0.125 (exact, dl is 0
// or >= 2^-24) s * q rounds the same real product once.
#define QK 256u
#define QB 56u
#define ACT_Q8_K
void decode32(U32s w, U32s tab, uint boff, uint u, out uint q[8], out vec2 s, out vec2 m) {
    const uint s01 = ld_u32(w, boff + 48u), s23 = ld_u32(w, boff + 52u);
    const uint dh = ((s01 >> 12) & 0xfu) | ((s01 >> 24) & 0xf0u) | ((s23 >> 4) & 0xf00u) | ((s23 >> 16) & 0xf000u);
    const float d = f16_to_f32(dh);
    const uint sw = ((u < 4u ? s01 : s23) >> (16u * ((u / 2u) & 1u))) >> (6u * (u & 1u));
    precise float dl0 = d * float(2u * (sw & 7u) + 1u);
    precise float dl1 = d * float(2u * ((sw >> 3) & 7u) + 1u);
    precise float sc0 = dl0 * 0.125, sc1 = dl1 * 0.125;
    const uint qs = ld_u32(w, boff + 4u * u), qh = ld_u16(w, boff + 32u + 2u * u);
    [[unroll]] for (uint l = 0u; l < 4u; l++) {
        const uint h = (qh >> (8u * (l / 2u) + 4u * (l & 1u))) & 0xfu; // 3 index bits, shift sign
        const uint idx = ((qs >> (8u * l)) & 0xffu) | ((h & 7u) << 8);
        const uint row = PL_VK_TAB_IQ1S + 2u * idx;
        const bool neg = (h & 8u) != 0u;
        q[2u * l] = iq1_q(tab.v[row], neg);
        q[2u * l + 1u] = iq1_q(tab.v[row + 1u], neg);
    }
    s = vec2(sc0, sc1);
    m = vec2(0.0);
}
