// common.glsl -- what every shader includes: memory reached by device
// address (push constants carry 64-bit addresses as uvec2), exact f16 and
// bf16 conversions in integer arithmetic (the GPU's own conversions may
// flush subnormals or round differently, and the reference's bits are the
// contract), byte-addressed reads of packed blocks, and the flat index of
// a work group in a 2-D grid (grids wider than 65535 groups fold into y).
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_control_flow_attributes : enable

layout(buffer_reference, std430, buffer_reference_align = 4) buffer F32s { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer U32s { uint v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer I32s { int v[]; };
// written and read back by other invocations of the same work group
layout(buffer_reference, std430, buffer_reference_align = 4) coherent buffer F32c { float v[]; };

uint group_index() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }

// ---- half floats -------------------------------------------------------
float f16_to_f32(uint h) {
    uint sign = (h & 0x8000u) << 16;
    uint e = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (e == 0x1fu) return uintBitsToFloat(sign | 0x7f800000u | (man << 13));
    if (e == 0u) {
        // subnormal: man * 2^-24, exact in f32
        float f = float(man) * 5.9604644775390625e-8;
        return sign != 0u ? -f : f;
    }
    return uintBitsToFloat(sign | ((e + 112u) << 23) | (man << 13));
}

// round to nearest even, overflow to inf, NaN kept (as the host's pl_f32_to_f16)
uint f32_to_f16(float f) {
    uint x = floatBitsToUint(f);
    uint sign = (x >> 16) & 0x8000u;
    uint ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return sign | 0x7e00u | ((ax >> 13) & 0x3ffu);
    if (ax >= 0x477ff000u) return sign | 0x7c00u;
    if (ax < 0x38800000u) {
        // subnormal or zero: m = round_even(value * 2^24) = mant >> (126 - e)
        uint e = ax >> 23;
        if (e < 102u) return sign;
        uint mant = (ax & 0x7fffffu) | 0x800000u;
        uint s = 126u - e;
        uint q = mant >> s, rem = mant & ((1u << s) - 1u), half_ = 1u << (s - 1u);
        if (rem > half_ || (rem == half_ && (q & 1u) != 0u)) q++;
        return sign | q;
    }
    ax += 0xfffu + ((ax >> 13) & 1u);
    ax -= 0x38000000u;
    return sign | (ax >> 13);
}

float f16_round(float f) { return f16_to_f32(f32_to_f16(f)); }

float bf16_to_f32(uint h) { return uintBitsToFloat(h << 16); }

// round to nearest even; NaN made quiet (as the host's pl_f32_to_bf16)
uint f32_to_bf16(float f) {
    uint x = floatBitsToUint(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (x >> 16) | 64u;
    return (x + (0x7fffu + ((x >> 16) & 1u))) >> 16;
}

float bf16_round(float f) { return bf16_to_f32(f32_to_bf16(f)); }

// ---- packed bytes ----------------------------------------------------------
uint ld_u8(U32s b, uint off) { return (b.v[off >> 2] >> ((off & 3u) * 8u)) & 0xffu; }
// off even
uint ld_u16(U32s b, uint off) { return (b.v[off >> 2] >> ((off & 2u) * 8u)) & 0xffffu; }
// any alignment (reads the next word when unaligned: buffers are padded)
uint ld_u32(U32s b, uint off) {
    uint s = (off & 3u) * 8u;
    uint lo = b.v[off >> 2];
    if (s == 0u) return lo;
    return (lo >> s) | (b.v[(off >> 2) + 1u] << (32u - s));
}
