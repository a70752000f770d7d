// iq1_s: { f16 d; u8 qs[32]; u16 qh[8] } per 256 elements.  Row l (8
// elements) of 32-group u is the 11-bit index qs[4u + l] | ((qh[u] >> 3l)
// & 7) << 8 into the 2048-row grid of signed values in {-1, 0, 1}; bits
// 12..14 of qh[u] are the 3-bit scale, bit 15 the sign of the group's
// +-1/8 shift.  The reference's value dl * (g +- 0.125) with
// dl = d * (2 ls + 1): g +- 0.125 is exact, so with q = 8g +- 1 (odd,
// |q| <= 9) and s = dl * 0.125 (exact: dl >= 2^-24 stays normal) s * q
// rounds the same real product once, bit for bit the reference.
#define QK 256u
#define QB 50u
#define ACT_Q8_K
void decode32(U32s w, U32s tab, uint boff, uint u, out uint q[8], out vec2 s, out vec2 m) {
    const float d = f16_to_f32(ld_u16(w, boff));
    const uint qs = ld_u32(w, boff + 2u + 4u * u), qh = ld_u16(w, boff + 34u + 2u * u);
    precise float dl = d * float(2u * ((qh >> 12) & 7u) + 1u);
    precise float sc = dl * 0.125;
    const bool neg = (qh & 0x8000u) != 0u;
    [[unroll]] for (uint l = 0u; l < 4u; l++) {
        const uint idx = ((qs >> (8u * l)) & 0xffu) | (((qh >> (3u * l)) & 7u) << 8);
        const uint row = PL_VK_TAB_IQ1S + 2u * idx;
        q[2u * l] = iq1_q(tab.v[row], neg);
        q[2u * l + 1u] = iq1_q(tab.v[row + 1u], neg);
    }
    s = vec2(sc);
    m = vec2(0.0);
}
