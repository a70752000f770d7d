// q4_0: { f16 d; u8 qs[16] }, element j = (nibble - 8) * d, low nibbles
// first (elements 0..15), then high nibbles (16..31)
#define QK 32u
#define QB 18u
#define ACT_Q8_0
void decode32(U32s w, U32s tab, uint boff, uint u, out uint q[8], out vec2 s, out vec2 m) {
    const float d = f16_to_f32(ld_u16(w, boff));
    [[unroll]] for (uint k = 0u; k < 4u; k++) {
        const uint b = ld_u32(w, boff + 2u + 4u * k);
        q[k] = sub_bytes(b & 0x0f0f0f0fu, 8u);
        q[k + 4u] = sub_bytes((b >> 4) & 0x0f0f0f0fu, 8u);
    }
    s = vec2(d);
    m = vec2(0.0);
}
