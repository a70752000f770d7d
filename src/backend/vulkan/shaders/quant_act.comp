#version 450
// quant_act.comp -- activations rounded to the 8-bit blocks the quantized
// weights' dot products take, as the reference's act_from_float does
// (-DACT_Q8_0, -DACT_Q8_1, -DACT_Q8_K), into a layout made for the
// shaders: per token, the 8-bit values packed four to a word (n_in / 4
// words), the scale of every 32 elements (q8_K: its 256-block's, repeated),
// and per 16 elements the float the weight's offset is multiplied with
// (q8_K: d * the 16 values' sum; q8_1: its stored f16 sum s in the first
// half of each 32, 0 in the second; q8_0: 0).
//
// A work group of 256 takes 256 consecutive elements of the rows (blocks
// never straddle rows: n_in is whole blocks), one element an invocation;
// maxima and sums are exact whatever their order, reduced over the block
// through shared memory, so the result is the sequential reference's.
#include "common.glsl"
layout(local_size_x = 256) in;

layout(push_constant) uniform P {
    uvec2 x, qs, d, sums;
    uint n_in, n_tok;
} p;

shared float sh_f[256];
shared int sh_i[256];
shared uint sh_u[256];

// the reduction of sh_f (max) and sh_i (sum) over aligned runs of `len`
// invocations (a power of two); every invocation calls it
void reduce_runs(uint i, uint len, bool do_max, bool do_sum) {
    for (uint s = len / 2u; s > 0u; s /= 2u) {
        if ((i & (len - 1u)) < s) {
            if (do_max) sh_f[i] = max(sh_f[i], sh_f[i + s]);
            if (do_sum) sh_i[i] += sh_i[i + s];
        }
        barrier();
    }
}

void main() {
    const uint i = gl_LocalInvocationID.x;
    const uint e = group_index() * 256u + i, n = p.n_in * p.n_tok;
    const bool live = e < n;
    F32s x = F32s(p.x), d = F32s(p.d), sums = F32s(p.sums);
    U32s qs = U32s(p.qs);
    const float v = live ? x.v[e] : 0.0;
    int q;
#if defined(ACT_Q8_K)
    // the value of largest magnitude, the first of equals: (|x|, position)
    // reduced to the largest magnitude, then the lowest position holding it
    sh_f[i] = abs(v);
    barrier();
    reduce_runs(i, 256u, true, false);
    const float amax = sh_f[0];
    barrier();
    sh_i[i] = abs(v) == amax ? int(i) : 256;
    barrier();
    for (uint s = 128u; s > 0u; s /= 2u) {
        if (i < s) sh_i[i] = min(sh_i[i], sh_i[i + s]);
        barrier();
    }
    const uint at = uint(sh_i[0]);
    barrier();
    sh_f[i] = v;
    barrier();
    const float mx = sh_f[at];
    if (amax == 0.0) {
        q = 0;
    } else {
        const float iscale = -127.0 / mx;
        q = min(int(roundEven(iscale * v)), 127);
    }
    const float dd = amax == 0.0 ? 0.0 : 1.0 / (-127.0 / mx);
    sh_i[i] = q;
    barrier();
    reduce_runs(i, 16u, false, true);
    if (live && (i & 15u) == 0u) sums.v[e / 16u] = dd * float(sh_i[i]);
    if (live && (i & 31u) == 0u) d.v[e / 32u] = dd;
#else
    sh_f[i] = abs(v);
    barrier();
    reduce_runs(i, 32u, true, false);
    const float amax = sh_f[i & ~31u];
    const float dd = amax / 127.0;
    const float id = amax != 0.0 ? 127.0 / amax : 0.0;
    const int qr = int(roundEven(v * id));
    q = clamp(qr, -128, 127);
#if defined(ACT_Q8_1)
    sh_i[i] = qr; // the sum is over the unsaturated values
    barrier();
    reduce_runs(i, 32u, false, true);
    if (live && (i & 31u) == 0u) {
        sums.v[e / 16u] = f16_round(dd * float(sh_i[i]));
        sums.v[e / 16u + 1u] = 0.0;
    }
#else
    if (live && (i & 31u) == 0u) {
        sums.v[e / 16u] = 0.0;
        sums.v[e / 16u + 1u] = 0.0;
    }
#endif
    if (live && (i & 31u) == 0u) d.v[e / 32u] = f16_round(dd);
#endif
    // four values to a word
    sh_u[i] = uint(q) & 0xffu;
    barrier();
    if (live && (i & 3u) == 0u) qs.v[e / 4u] = sh_u[i] | (sh_u[i + 1u] << 8) | (sh_u[i + 2u] << 16) | (sh_u[i + 3u] << 24);
}
