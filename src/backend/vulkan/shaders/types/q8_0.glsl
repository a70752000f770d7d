// q8_0: { f16 d; int8 qs[32] }, element = qs * d
#define QK 32u
#define QB 34u
#define ACT_Q8_0
void decode32(U32s w, U32s tab, uint boff, uint u, out uint q[8], out vec2 s, out vec2 m) {
    const float d = f16_to_f32(ld_u16(w, boff));
    [[unroll]] for (uint k = 0u; k < 8u; k++) q[k] = ld_u32(w, boff + 2u + 4u * k);
    s = vec2(d);
    m = vec2(0.0);
}
