// iq4_nl: { f16 d; u8 qs[16] } per 32 elements, 4-bit indices into the
// 16-value non-linear table (low nibbles elements 0..15, high 16..31).
// The reference's value d * kvalue is s * q with q the table value
// (-127..113) and s = d.
#define QK 32u
#define QB 18u
#define ACT_Q8_0
void decode32(U32s w, U32s tab, uint boff, uint u, out uint q[8], out vec2 s, out vec2 m) {
    const float d = f16_to_f32(ld_u16(w, boff));
    [[unroll]] for (uint k = 0u; k < 4u; k++) {
        const uint b = ld_u32(w, boff + 2u + 4u * k);
        q[k] = iq4_lookup(tab, b, 0u);
        q[k + 4u] = iq4_lookup(tab, b, 4u);
    }
    s = vec2(d);
    m = vec2(0.0);
}
