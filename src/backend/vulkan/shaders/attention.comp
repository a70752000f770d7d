#version 450
// attention.comp -- causal grouped-query attention of one query row and
// head per work group against the KV cache (or not causal, every query
// reading the same n_kv_all rows: a vision tower whose heads are too large
// for attention_tile.comp), in llama.cpp's arithmetic
// (the reference, src/ops/ref_attention.c):
//   scores  s_j = (q rounded to the cache type) . k_j * scale, j <= own position
//   default softmax over the s_j, each weight rounded to the cache type,
//           then the weighted sum of the V rows
//   flash   one pass over j in order with a running maximum M and sum S,
//           the V sum kept in f16 and rounded after every position (the
//           reference's pl_flash_step, done by every invocation alike)
// The scores live in shared memory when they fit (SH_SCORES), else in the
// scratch at p.scores (one row of p.score_stride per work group).
#include "common.glsl"
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint SH_SCORES = 2048;
#include "reduce.glsl"

layout(push_constant) uniform P {
    uvec2 q, k, v, out_, scores;
    uint k_half, v_half;   // f16 caches: offset in halves from the 4-aligned address
    uint n_head, n_head_kv, head_dim, kv_dim;
    uint pos0;             // the position of query row 0 of this dispatch
    uint t0, h0;           // first query row and head of this dispatch
    uint score_stride;     // floats per work group row in the scratch
    float scale;
    uint flags;            // 1: f16 cache, 2: flash
    uint n_kv_all;         // > 0: not causal, every query reads rows 0 .. n_kv_all-1
} p;

shared float sh_scores[SH_SCORES];
shared float qsh[1024];

bool f16c() { return (p.flags & 1u) != 0u; }

float cache_at(uvec2 base, uint half_off, uint i) {
    if (f16c()) return f16_to_f32(ld_u16(U32s(base), 2u * (half_off + i)));
    return F32s(base).v[i];
}

void main() {
    const uint tid = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
    const uint h = p.h0 + gl_WorkGroupID.x, t = p.t0 + gl_WorkGroupID.y;
    const uint hd = p.head_dim, kvh = h / (p.n_head / p.n_head_kv);
    const uint n_kv = p.n_kv_all != 0u ? p.n_kv_all : p.pos0 + t + 1u;
    const bool flash = (p.flags & 2u) != 0u;
    const bool round16 = flash || f16c(); // the type q and the weights are rounded to
    const bool in_shared = n_kv <= SH_SCORES;
    F32c sc = F32c(p.scores);
    const uint srow = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * p.score_stride;

    F32s q = F32s(p.q);
    for (uint d = tid; d < hd; d += wg) {
        const float x = q.v[(t * p.n_head + h) * hd + d];
        qsh[d] = round16 ? f16_round(x) : x;
    }
    barrier();

    // scores and their maximum
    float mx = -1.0 / 0.0;
    for (uint j = tid; j < n_kv; j += wg) {
        const uint row = j * p.kv_dim + kvh * hd;
        float s = 0.0;
        for (uint d = 0u; d < hd; d++) {
            float kv = cache_at(p.k, p.k_half, row + d);
            if (flash && !f16c()) kv = f16_round(kv);
            s += qsh[d] * kv;
        }
        s *= p.scale;
        if (in_shared) sh_scores[j] = s;
        else sc.v[srow + j] = s;
        mx = max(mx, s);
    }
    memoryBarrierBuffer();
    barrier();

    F32s o = F32s(p.out_);
    const uint ob = (t * p.n_head + h) * hd;
    if (flash) {
        // every invocation walks the positions in order (the same M and S
        // everywhere); each keeps the V sums of its columns
        for (uint d0 = 0u; d0 < hd; d0 += wg) {
            const uint d = d0 + tid;
            float M = -1.0 / 0.0, S = 0.0, acc = 0.0;
            for (uint j = 0u; j < n_kv; j++) {
                const float s = in_shared ? sh_scores[j] : sc.v[srow + j];
                float ms = 1.0, vs;
                if (s > M) {
                    ms = exp(M - s);
                    M = s;
                    vs = 1.0;
                    acc = f16_round(acc * ms);
                } else {
                    vs = exp(s - M);
                }
                if (d < hd) {
                    const float vv = f16_round(cache_at(p.v, p.v_half, j * p.kv_dim + kvh * hd + d));
                    acc = f16_round(fma(vv, vs, acc));
                }
                S = S * ms + vs;
            }
            if (d < hd) o.v[ob + d] = acc * (S == 0.0 ? 0.0 : 1.0 / S);
        }
        return;
    }

    // default: softmax weights, rounded to the cache type
    mx = wg_max(mx);
    float sum = 0.0;
    for (uint j = tid; j < n_kv; j += wg) {
        const float e = exp((in_shared ? sh_scores[j] : sc.v[srow + j]) - mx);
        if (in_shared) sh_scores[j] = e;
        else sc.v[srow + j] = e;
        sum += e;
    }
    sum = wg_sum(sum);
    const float inv = 1.0 / sum;
    for (uint j = tid; j < n_kv; j += wg) {
        float w = (in_shared ? sh_scores[j] : sc.v[srow + j]) * inv;
        if (f16c()) w = f16_round(w);
        if (in_shared) sh_scores[j] = w;
        else sc.v[srow + j] = w;
    }
    memoryBarrierBuffer();
    barrier();
    for (uint d = tid; d < hd; d += wg) {
        float acc = 0.0;
        for (uint j = 0u; j < n_kv; j++)
            acc += (in_shared ? sh_scores[j] : sc.v[srow + j]) * cache_at(p.v, p.v_half, j * p.kv_dim + kvh * hd + d);
        o.v[ob + d] = acc;
    }
}
