// q2_K: { u8 scales[16]; u8 qs[64]; f16 d; f16 dmin } per 256 elements, 16
// sub-blocks of 16.  Each scales byte holds the sub-block's 4-bit scale
// (low nibble) and 4-bit min (high).  Element e = 32u + l takes 2 bits of
// qs[(u / 4) * 32 + l] at bit 2 * (u % 4); the reference's value is
// (d * sc) * q - dmin * mn, so s = d * sc and m = dmin * mn per 16-half,
// the same products (q itself 0..3).
#define QK 256u
#define QB 84u
#define ACT_Q8_K
void decode32(U32s w, U32s tab, uint boff, uint u, out uint q[8], out vec2 s, out vec2 m) {
    const uint dd = ld_u32(w, boff + 80u); // d in the low half, dmin in the high
    const float d = f16_to_f32(dd & 0xffffu), dmin = f16_to_f32(dd >> 16);
    const uint sc = ld_u16(w, boff + 2u * u); // scales[2u], scales[2u + 1]
    precise float s0 = d * float(sc & 0xfu), s1 = d * float((sc >> 8) & 0xfu);
    precise float m0 = dmin * float((sc >> 4) & 0xfu), m1 = dmin * float((sc >> 12) & 0xfu);
    const uint base = boff + 16u + (u / 4u) * 32u, sh = 2u * (u % 4u);
    [[unroll]] for (uint k = 0u; k < 8u; k++) q[k] = (ld_u32(w, base + 4u * k) >> sh) & 0x03030303u;
    s = vec2(s0, s1);
    m = vec2(m0, m1);
}
