// q3_K: { u8 hmask[32]; u8 qs[64]; u8 scales[12]; f16 d } per 256
// elements, 16 sub-blocks of 16.  Element e = 32u + l: 2 low bits from
// qs[(u / 4) * 32 + l] at bit 2 * (u % 4), and bit u of hmask[l]; the value
// is low - 4 when that bit is clear, low when set (-4..3): low + 4 * bit - 4.
// The 6-bit scales (bias 32) are packed: low 4 bits in the nibbles of bytes
// 0..7 (k < 8 low nibble of byte k, else high nibble of byte k - 8), high 2
// bits in byte 8 + k % 4 at bit 2 * (k / 4).  Element = (d * (sc - 32)) * q.
#define QK 256u
#define QB 110u
#define ACT_Q8_K
int q3k_scale(U32s w, uint soff, uint k) {
    const uint lo = k < 8u ? ld_u8(w, soff + k) & 0xfu : ld_u8(w, soff + k - 8u) >> 4;
    const uint hi = (ld_u8(w, soff + 8u + k % 4u) >> (2u * (k / 4u))) & 3u;
    return int(lo | (hi << 4)) - 32;
}
void decode32(U32s w, U32s tab, uint boff, uint u, out uint q[8], out vec2 s, out vec2 m) {
    const float d = f16_to_f32(ld_u16(w, boff + 108u));
    precise float s0 = d * float(q3k_scale(w, boff + 96u, 2u * u));
    precise float s1 = d * float(q3k_scale(w, boff + 96u, 2u * u + 1u));
    const uint base = boff + 32u + (u / 4u) * 32u, sh = 2u * (u % 4u);
    [[unroll]] for (uint k = 0u; k < 8u; k++) {
        const uint lo = (ld_u32(w, base + 4u * k) >> sh) & 0x03030303u;
        const uint hb = (ld_u32(w, boff + 4u * k) >> u) & 0x01010101u;
        q[k] = sub_bytes(lo | (hb << 2), 4u);
    }
    s = vec2(s0, s1);
    m = vec2(0.0);
}
