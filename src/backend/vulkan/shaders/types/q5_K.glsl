// q5_K: { f16 d; f16 dmin; u8 scales[12]; u8 qh[32]; u8 qs[128] } per 256
// elements, 8 sub-blocks of 32 (one per unit u) with a 6-bit scale and min
// each (q4_K's packing).  Element e = 32u + l: low 4 bits the nibble of
// qs[(u / 2) * 32 + l] (low for even u, high for odd), bit 4 bit u of
// qh[l]; 0..31.  The reference's value is (d * sc) * q - dmin * mn: s and m
// are those two products.
#define QK 256u
#define QB 176u
#define ACT_Q8_K
void decode32(U32s w, U32s tab, uint boff, uint u, out uint q[8], out vec2 s, out vec2 m) {
    k4_scales(w, boff, u, s, m);
    const uint base = boff + 48u + (u / 2u) * 32u, sh = 4u * (u & 1u);
    [[unroll]] for (uint k = 0u; k < 8u; k++) {
        const uint lo = (ld_u32(w, base + 4u * k) >> sh) & 0x0f0f0f0fu;
        const uint hb = (ld_u32(w, boff + 16u + 4u * k) >> u) & 0x01010101u;
        q[k] = lo | (hb << 4);
    }
}
