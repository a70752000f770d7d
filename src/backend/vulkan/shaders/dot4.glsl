// dot4.glsl -- acc + the dot product of two words of four signed bytes:
// one SPV_KHR_integer_dot_product instruction where the device has it
// (-DPL_INT_DOT), four multiplies otherwise.
#if defined(PL_INT_DOT)
#extension GL_EXT_spirv_intrinsics : require
// OpSDotAccSatKHR would saturate; the sums here never come near 2^31, so
// the plain OpSDotKHR (4450) with the packed 4x8-bit format (literal 0)
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4450)
int spv_sdot4x8(uint a, uint b, spirv_literal int fmt);
int dot4(uint a, uint b, int acc) { return acc + spv_sdot4x8(a, b, 0); }
#else
int dot4(uint a, uint b, int acc) {
    [[unroll]] for (int k = 0; k < 4; k++)
        acc += bitfieldExtract(int(a), 8 * k, 8) * bitfieldExtract(int(b), 8 * k, 8);
    return acc;
}
#endif
