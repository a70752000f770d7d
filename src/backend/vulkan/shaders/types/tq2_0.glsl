// tq2_0: { u8 qs[64]; f16 d } per 256 elements, 2 bits each (0..2 for
// trits -1..1; 3 decodes as 2).  Element 128h + 32l + m is bits 2l, 2l+1 of
// qs[32h + m], so unit u reads qs[32 (u / 4) ..] at bit 2 (u % 4).  The
// reference's value (v - 1) * d is s * q with q = v - 1, s = d.
#define QK 256u
#define QB 66u
#define ACT_Q8_K
void decode32(U32s w, U32s tab, uint boff, uint u, out uint q[8], out vec2 s, out vec2 m) {
    const float d = f16_to_f32(ld_u16(w, boff + 64u));
    const uint base = boff + 32u * (u / 4u), sh = 2u * (u % 4u);
    [[unroll]] for (uint k = 0u; k < 8u; k++) q[k] = sub_bytes((ld_u32(w, base + 4u * k) >> sh) & 0x03030303u, 1u);
    s = vec2(d);
    m = vec2(0.0);
}
