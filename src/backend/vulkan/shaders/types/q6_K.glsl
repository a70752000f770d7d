// q6_K: { u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d } per 256 elements,
// 16 sub-blocks of 16 with a signed 8-bit scale.  Element e = 32u + l
// (h = u / 4, c = u % 4): low 4 bits from ql[h * 64 + (c & 1) * 32 + l]
// (low nibble for c < 2, high otherwise), bits 4..5 from qh[h * 32 + l] at
// bit 2 * c; value 0..63 less the bias 32.  The reference's value is
// (d * sc) * q, so s = d * sc per 16-half.
#define QK 256u
#define QB 210u
#define ACT_Q8_K
void decode32(U32s w, U32s tab, uint boff, uint u, out uint q[8], out vec2 s, out vec2 m) {
    const float d = f16_to_f32(ld_u16(w, boff + 208u));
    const uint sc = ld_u16(w, boff + 192u + 2u * u); // scales[2u], scales[2u + 1]
    precise float s0 = d * float(bitfieldExtract(int(sc), 0, 8));
    precise float s1 = d * float(bitfieldExtract(int(sc), 8, 8));
    const uint h = u / 4u, c = u % 4u;
    const uint lbase = boff + h * 64u + (c & 1u) * 32u, lsh = c < 2u ? 0u : 4u;
    const uint hbase = boff + 128u + h * 32u, hsh = 2u * c;
    [[unroll]] for (uint k = 0u; k < 8u; k++) {
        const uint lo = (ld_u32(w, lbase + 4u * k) >> lsh) & 0x0f0f0f0fu;
        const uint hi = (ld_u32(w, hbase + 4u * k) >> hsh) & 0x03030303u;
        q[k] = sub_bytes(lo | (hi << 4), 32u);
    }
    s = vec2(s0, s1);
    m = vec2(0.0);
}
