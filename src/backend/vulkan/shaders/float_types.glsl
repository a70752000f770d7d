// float_types.glsl -- element access for the float weight types, chosen by
// the build's -DPL_F32 / -DPL_F16 / -DPL_BF16: element i of a row at byte
// offset `row` of w, decoded exactly (w_elem, in integer arithmetic: the
// bits are the contract of get_rows) or by the device's own conversion
// (w_elem_fast, for the products, where a device flushing an f16
// subnormal to zero changes a sum by less than its rounding), and the
// rounding the reference applies to the activation it is multiplied with
// (llama.cpp converts the activations of f16 and bf16 weights to the
// weight's type first; round_act.comp does it once per pass).
#if defined(PL_F32)
#define ELEM_BYTES 4u
float w_elem(U32s w, uint row, uint i) { return uintBitsToFloat(w.v[(row >> 2) + i]); }
float w_elem_fast(U32s w, uint row, uint i) { return uintBitsToFloat(w.v[(row >> 2) + i]); }
// elements i .. i+3 of a 4-byte aligned row (i a multiple of 4)
vec4 w_elem4(U32s w, uint row, uint i) {
    const uint o = (row >> 2) + i;
    return uintBitsToFloat(uvec4(w.v[o], w.v[o + 1u], w.v[o + 2u], w.v[o + 3u]));
}
float act_round(float x) { return x; }
#elif defined(PL_F16)
#define ELEM_BYTES 2u
float w_elem(U32s w, uint row, uint i) { return f16_to_f32(ld_u16(w, row + 2u * i)); }
float w_elem_fast(U32s w, uint row, uint i) { return unpackHalf2x16(ld_u16(w, row + 2u * i)).x; }
vec4 w_elem4(U32s w, uint row, uint i) {
    const uint o = (row + 2u * i) >> 2;
    return vec4(unpackHalf2x16(w.v[o]), unpackHalf2x16(w.v[o + 1u]));
}
float act_round(float x) { return f16_round(x); }
#elif defined(PL_BF16)
#define ELEM_BYTES 2u
float w_elem(U32s w, uint row, uint i) { return bf16_to_f32(ld_u16(w, row + 2u * i)); }
float w_elem_fast(U32s w, uint row, uint i) { return bf16_to_f32(ld_u16(w, row + 2u * i)); }
vec4 w_elem4(U32s w, uint row, uint i) {
    const uint o = (row + 2u * i) >> 2;
    const uint a = w.v[o], b = w.v[o + 1u];
    return uintBitsToFloat(uvec4(a << 16, a & 0xffff0000u, b << 16, b & 0xffff0000u));
}
float act_round(float x) { return bf16_round(x); }
#else
#error "float_types.glsl: no type"
#endif
