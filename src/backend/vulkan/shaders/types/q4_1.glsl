// q4_1: { f16 d; f16 m; u8 qs[16] }, element = nibble * d + m, low nibbles
// first (elements 0..15), then high nibbles (16..31).  The nibbles are the
// integers as they are (0..15); the reference's "+ m" is our "- (-m)",
// which IEEE arithmetic makes the same bits (signed zeros included).
#define QK 32u
#define QB 20u
#define ACT_Q8_1
void decode32(U32s w, U32s tab, uint boff, uint u, out uint q[8], out vec2 s, out vec2 m) {
    const uint dm = ld_u32(w, boff); // d in the low half, m in the high
    const float d = f16_to_f32(dm & 0xffffu), mn = f16_to_f32(dm >> 16);
    [[unroll]] for (uint k = 0u; k < 4u; k++) {
        const uint b = ld_u32(w, boff + 4u + 4u * k);
        q[k] = b & 0x0f0f0f0fu;
        q[k + 4u] = (b >> 4) & 0x0f0f0f0fu;
    }
    s = vec2(d);
    m = vec2(-mn);
}
