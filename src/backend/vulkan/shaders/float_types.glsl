// float_types.glsl -- element access for the float weight types, chosen by
// the build's -DPL_F32 / -DPL_F16 / -DPL_BF16: element i of a row at byte
// offset `row` of w, decoded exactly, and the rounding the reference
// applies to the activation it is multiplied with (llama.cpp converts the
// activations of f16 and bf16 weights to the weight's type first).
#if defined(PL_F32)
#define ELEM_BYTES 4u
float w_elem(U32s w, uint row, uint i) { return uintBitsToFloat(w.v[(row >> 2) + i]); }
float act_round(float x) { return x; }
#elif defined(PL_F16)
#define ELEM_BYTES 2u
float w_elem(U32s w, uint row, uint i) { return f16_to_f32(ld_u16(w, row + 2u * i)); }
float act_round(float x) { return f16_round(x); }
#elif defined(PL_BF16)
#define ELEM_BYTES 2u
float w_elem(U32s w, uint row, uint i) { return bf16_to_f32(ld_u16(w, row + 2u * i)); }
float act_round(float x) { return bf16_round(x); }
#else
#error "float_types.glsl: no type"
#endif
