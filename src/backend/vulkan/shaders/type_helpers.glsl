// type_helpers.glsl -- bit tricks more than one block format uses
// (types/*.glsl): sign fields of the IQ grids, the 6-bit scales of
// q4_K/q5_K, table lookups of the 4-bit nonlinear types, the high bits of
// q5_0/q5_1.  Included by types.glsl before the type's own file.

// per byte 8g + 1 (neg false) or 8g - 1 (neg true) for g in {-1, 0, 1}:
// 8g + 1 sets the low bit of 8g (no carry); 8g - 1 = ~(8 * (-g)), and -g
// swaps 0x01 and 0xff (xor with 0xfe where the low bit is set)
uint iq1_q(uint g, bool neg) {
    if (!neg) return ((g << 3) & 0xf8f8f8f8u) | 0x01010101u;
    const uint ng = g ^ ((g & 0x01010101u) * 0xfeu);
    return ~((ng << 3) & 0xf8f8f8f8u);
}

// 4 sign bits -> 0xff in each byte whose bit is set: the multiply places
// bit i at bit 8i (the shifted copies never overlap, so nothing carries)
uint iq_sign_mask4(uint bits) { return (((bits & 0xfu) * 0x00204081u) & 0x01010101u) * 0xffu; }

// bytes negated where mask is 0xff: (b ^ 0xff) + 1, the +1 kept inside
// each byte by adding to the low 7 bits only
uint iq_neg_bytes(uint b, uint mask) {
    const uint x = b ^ mask;
    return ((x & 0x7f7f7f7fu) + (mask & 0x01010101u)) ^ (x & 0x80808080u);
}

// the 8 sign bits from 7 stored ones plus even parity
uint iq_signs8(uint b7) {
    b7 &= 127u;
    return b7 | ((uint(bitCount(b7)) & 1u) << 7);
}

// the table values of the nibbles at bit sh of each byte of b, one per byte
uint iq4_lookup(U32s tab, uint b, uint sh) {
    uint r = 0u;
    [[unroll]] for (uint j = 0u; j < 4u; j++)
        r |= (tab.v[PL_VK_TAB_KVALUES_IQ4NL + ((b >> (8u * j + sh)) & 0xfu)] & 0xffu) << (8u * j);
    return r;
}

// the packed 6-bit scale and min of sub-block j (llama.cpp's get_scale_min_k4
// layout): j < 4 in the low 6 bits of bytes j, j + 4; otherwise the nibbles
// of byte j + 4 and the top 2 bits of bytes j - 4, j
void k4_scale_min(U32s w, uint off, uint j, out uint sc, out uint mn) {
    if (j < 4u) {
        sc = ld_u8(w, off + j) & 63u;
        mn = ld_u8(w, off + j + 4u) & 63u;
    } else {
        const uint b = ld_u8(w, off + j + 4u);
        sc = (b & 0xfu) | ((ld_u8(w, off + j - 4u) >> 6) << 4);
        mn = (b >> 4) | ((ld_u8(w, off + j) >> 6) << 4);
    }
}

// q4_K/q5_K: the scale and offset of sub-block u of the block at boff
// ({f16 d, f16 dmin, u8 scales[12]} first): (d * sc) and (dmin * mn), as
// the reference forms them, the same for both 16-halves
void k4_scales(U32s w, uint boff, uint u, out vec2 s, out vec2 m) {
    const uint dd = ld_u32(w, boff); // d in the low half, dmin in the high
    const float d = f16_to_f32(dd & 0xffffu), dmin = f16_to_f32(dd >> 16);
    uint sc, mn;
    k4_scale_min(w, boff + 4u, u, sc, mn);
    precise float s0 = d * float(sc), m0 = dmin * float(mn);
    s = vec2(s0);
    m = vec2(m0);
}

// bits 0..3 of h to bit 0 of bytes 0..3
uint spread4(uint h) { return (h * 0x00204081u) & 0x01010101u; }
