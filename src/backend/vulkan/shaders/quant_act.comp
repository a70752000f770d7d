#version 450
// quant_act.comp -- activations rounded to the 8-bit blocks the quantized
// weights' dot products take, as the reference's act_from_float does
// (-DACT_Q8_0, -DACT_Q8_1, -DACT_Q8_K), into a layout made for the
// shaders: per token, the 8-bit values packed four to a word (n_in / 4
// words), the scale of every 32 elements (q8_K: its 256-block's, repeated),
// and per 16 elements the float the weight's offset is multiplied with
// (q8_K: d * the 16 values' sum; q8_1: its stored f16 sum s in the first
// half of each 32, 0 in the second; q8_0: 0).  One invocation per block.
#include "common.glsl"
layout(local_size_x_id = 0) in;

layout(push_constant) uniform P {
    uvec2 x, qs, d, sums;
    uint n_in, n_tok;
} p;

#if defined(ACT_Q8_K)
#define BLK 256u
#else
#define BLK 32u
#endif

// the reference's round-half-even of x * id, saturated to int8
int q8(float v) { return clamp(int(roundEven(v)), -128, 127); }

void main() {
    const uint blocks = p.n_in / BLK;
    const uint b = group_index() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (b >= blocks * p.n_tok) return;
    const uint t = b / blocks, e0 = b * BLK; // element index over all tokens (rows are contiguous)
    F32s x = F32s(p.x);
    U32s qs = U32s(p.qs);
    F32s d = F32s(p.d), sums = F32s(p.sums);
#if defined(ACT_Q8_K)
    float amax = 0.0, mx = 0.0;
    for (uint j = 0u; j < BLK; j++) {
        const float v = x.v[e0 + j], av = abs(v);
        if (av > amax) amax = av, mx = v;
    }
    if (amax == 0.0) {
        for (uint j = 0u; j < BLK / 4u; j++) qs.v[e0 / 4u + j] = 0u;
        for (uint j = 0u; j < BLK / 32u; j++) d.v[e0 / 32u + j] = 0.0;
        for (uint j = 0u; j < BLK / 16u; j++) sums.v[e0 / 16u + j] = 0.0;
        return;
    }
    const float iscale = -127.0 / mx;
    const float dd = 1.0 / iscale;
    for (uint g = 0u; g < BLK / 16u; g++) {
        int sum = 0;
        for (uint w4 = 0u; w4 < 4u; w4++) {
            uint word = 0u;
            for (uint k = 0u; k < 4u; k++) {
                const uint j = g * 16u + w4 * 4u + k;
                const int v = min(int(roundEven(iscale * x.v[e0 + j])), 127);
                sum += v;
                word |= (uint(v) & 0xffu) << (8u * k);
            }
            qs.v[e0 / 4u + g * 4u + w4] = word;
        }
        sums.v[e0 / 16u + g] = dd * float(sum);
    }
    for (uint j = 0u; j < BLK / 32u; j++) d.v[e0 / 32u + j] = dd;
#else
    float amax = 0.0;
    for (uint j = 0u; j < 32u; j++) amax = max(amax, abs(x.v[e0 + j]));
    const float dd = amax / 127.0;
    const float id = amax != 0.0 ? 127.0 / amax : 0.0;
    int sum = 0;
    for (uint w4 = 0u; w4 < 8u; w4++) {
        uint word = 0u;
        for (uint k = 0u; k < 4u; k++) {
            const int v = int(roundEven(x.v[e0 + w4 * 4u + k] * id));
            sum += v;
            word |= (uint(clamp(v, -128, 127)) & 0xffu) << (8u * k);
        }
        qs.v[e0 / 4u + w4] = word;
    }
    d.v[e0 / 32u] = f16_round(dd);
#if defined(ACT_Q8_1)
    sums.v[e0 / 16u] = f16_round(dd * float(sum));
#else
    sums.v[e0 / 16u] = 0.0;
#endif
    sums.v[e0 / 16u + 1u] = 0.0;
#endif
}
