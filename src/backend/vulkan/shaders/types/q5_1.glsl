// q5_1: { f16 d; f16 m; u8 qh[4]; u8 qs[16] }, element j = v * d + m with
// v the 5-bit value (0..31): low 4 bits the nibble of qs (low nibbles for
// elements 0..15, high for 16..31), bit 4 bit j of the little-endian qh.
// As in q4_1, "+ m" is "- (-m)" bit for bit; the high bits are spread into
// bit 4 of each byte by a multiply whose four terms never overlap.
#define QK 32u
#define QB 24u
#define ACT_Q8_1
void decode32(U32s w, U32s tab, uint boff, uint u, out uint q[8], out vec2 s, out vec2 m) {
    const uint dm = ld_u32(w, boff); // d in the low half, m in the high
    const float d = f16_to_f32(dm & 0xffffu), mn = f16_to_f32(dm >> 16);
    const uint qh = ld_u32(w, boff + 4u);
    [[unroll]] for (uint k = 0u; k < 4u; k++) {
        const uint b = ld_u32(w, boff + 8u + 4u * k);
        q[k] = (b & 0x0f0f0f0fu) | (spread4((qh >> (4u * k)) & 0xfu) << 4);
        q[k + 4u] = ((b >> 4) & 0x0f0f0f0fu) | (spread4((qh >> (16u + 4u * k)) & 0xfu) << 4);
    }
    s = vec2(d);
    m = vec2(-mn);
}
