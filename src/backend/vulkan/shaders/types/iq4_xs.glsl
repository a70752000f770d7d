// iq4_xs: { f16 d; u16 scales_h; u8 scales_l[4]; u8 qs[128] } per 256
// elements: iq4_nl's non-linear 4-bit values in 32-groups of 16 bytes (low
// nibbles elements 0..15, high 16..31), each group with a 6-bit scale (bias
// 32: low 4 bits in nibble u % 2 of scales_l[u / 2], high 2 bits at bit 2u
// of scales_h).  The reference's value (d * (ls - 32)) * kvalue: s is that
// product, q the table value.
#define QK 256u
#define QB 136u
#define ACT_Q8_K
void decode32(U32s w, U32s tab, uint boff, uint u, out uint q[8], out vec2 s, out vec2 m) {
    const uint dsh = ld_u32(w, boff); // d in the low half, scales_h in the high
    const float d = f16_to_f32(dsh & 0xffffu);
    const uint ls = ((ld_u8(w, boff + 4u + u / 2u) >> (4u * (u & 1u))) & 0xfu) | (((dsh >> (16u + 2u * u)) & 3u) << 4);
    precise float dl = d * float(int(ls) - 32);
    const uint base = boff + 8u + 16u * u;
    [[unroll]] for (uint k = 0u; k < 4u; k++) {
        const uint b = ld_u32(w, base + 4u * k);
        q[k] = iq4_lookup(tab, b, 0u);
        q[k + 4u] = iq4_lookup(tab, b, 4u);
    }
    s = vec2(dl);
    m = vec2(0.0);
}
