#version 450
// im2col.comp -- the rows of a 2-D convolution over channel-last images
// (pl_ref_im2col): one invocation per output value, so that the stores --
// kh * kw times the loads -- are contiguous across a work group; the
// loads (the same pixels for neighbouring taps) come from the cache.
// round_f16 rounds each value to f16 and back in integer arithmetic
// (common.glsl), the reference's bits.
#include "common.glsl"
layout(local_size_x_id = 0) in;

layout(push_constant) uniform P {
    uvec2 x, y;
    uint c_in, h, w, oh, ow, kh, kw, sh, sw, ph, pw, round_f16;
    uint n_out; // values of y (< 2^32)
} p;

void main() {
    const uint i = group_index() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (i >= p.n_out) return;
    const uint taps = p.kh * p.kw, cols = p.c_in * taps;
    const uint r = i / cols, col = i - r * cols;
    const uint ch = col / taps, tap = col - ch * taps;
    const uint ky = tap / p.kw, kx = tap - ky * p.kw;
    const uint ox = r % p.ow, oy = (r / p.ow) % p.oh, b = r / (p.ow * p.oh);
    // signed: the padding reaches before the image
    const int iy = int(oy * p.sh + ky) - int(p.ph), ix = int(ox * p.sw + kx) - int(p.pw);
    float v = 0.0;
    if (iy >= 0 && iy < int(p.h) && ix >= 0 && ix < int(p.w)) {
        v = F32s(p.x).v[((b * p.h + uint(iy)) * p.w + uint(ix)) * p.c_in + ch];
        if (p.round_f16 != 0u) v = f16_round(v);
    }
    F32s(p.y).v[i] = v;
}
