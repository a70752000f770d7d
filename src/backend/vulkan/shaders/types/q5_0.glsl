// q5_0: { f16 d; u8 qh[4]; u8 qs[16] }, element j = (v - 16) * d with v
// the 5-bit value: its low 4 bits the nibble of qs (low nibbles for
// elements 0..15, high for 16..31), bit 4 bit j of the little-endian
// 32-bit qh.  The high bits are spread four at a time into bit 4 of each
// byte (a multiply that places bit i at bit 8i, no two terms overlapping),
// and the bias is taken off all four bytes at once.
#define QK 32u
#define QB 22u
#define ACT_Q8_0
void decode32(U32s w, U32s tab, uint boff, uint u, out uint q[8], out vec2 s, out vec2 m) {
    const float d = f16_to_f32(ld_u16(w, boff));
    const uint qh = ld_u32(w, boff + 2u);
    [[unroll]] for (uint k = 0u; k < 4u; k++) {
        const uint b = ld_u32(w, boff + 6u + 4u * k);
        const uint h0 = spread4((qh >> (4u * k)) & 0xfu) << 4;
        const uint h1 = spread4((qh >> (16u + 4u * k)) & 0xfu) << 4;
        q[k] = sub_bytes((b & 0x0f0f0f0fu) | h0, 16u);
        q[k + 4u] = sub_bytes(((b >> 4) & 0x0f0f0f0fu) | h1, 16u);
    }
    s = vec2(d);
    m = vec2(0.0);
}
