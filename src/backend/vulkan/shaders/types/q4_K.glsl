// q4_K: { f16 d; f16 dmin; u8 scales[12]; u8 qs[128] } per 256 elements,
// 8 sub-blocks of 32 (one per unit u) with a 6-bit scale and min each.
// Sub-block u's nibbles are qs[(u / 2) * 32 + l], low nibble for even u,
// high for odd.  The reference's value is (d * sc) * q - dmin * mn: s and m
// are those two products (the same for both 16-halves).
#define QK 256u
#define QB 144u
#define ACT_Q8_K
void decode32(U32s w, U32s tab, uint boff, uint u, out uint q[8], out vec2 s, out vec2 m) {
    k4_scales(w, boff, u, s, m);
    const uint base = boff + 16u + (u / 2u) * 32u, sh = 4u * (u & 1u);
    [[unroll]] for (uint k = 0u; k < 8u; k++) q[k] = (ld_u32(w, base + 4u * k) >> sh) & 0x0f0f0f0fu;
}
