#version 450
// attention_tile.comp -- non-causal attention (a vision tower: every query
// reads KV rows 0 .. n_kv-1) for BQ query rows of one head per work group,
// the K and V rows brought into shared memory a tile of BK at a time and
// used by all BQ queries (the one-query-a-group attention.comp reads the
// whole of K and V once per query: thousands of times for a tower).  The
// arithmetic is the reference's (src/ops/ref_attention.c), as in
// attention.comp:
//   scores  s_j = (q rounded to the cache type) . k_j * scale
//   default two passes over the tiles: the running maximum M and the sum
//           S of e^(s - M) (rescaled when M grows), then the weights
//           e^(s_j - M) * (1/S), rounded to the cache type, times V --
//           the scores are made again in the second pass, bit for bit the
//           first pass's
//   flash   one pass: for each query one invocation walks the tile's
//           positions in order (pl_flash_step: the factors ms_j, vs_j),
//           then every (query, column) invocation folds them into its
//           V sum, kept in f16 and rounded after every position
// Each invocation keeps the V sums of up to MAXC (query, column) pairs:
// BQ * HD <= MAXC * work group size (the driver chooses BQ so).
#include "common.glsl"
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint BQ = 16; // query rows per work group
layout(constant_id = 2) const uint BK = 32; // KV rows per tile
layout(constant_id = 3) const uint HD = 64; // head_dim
#define MAXC 4u
// rows of the K and V tiles padded by one float: the invocations of a
// score row read K rows HD floats apart, which would hit one bank
const uint KS = HD + 1u;

layout(push_constant) uniform P {
    uvec2 q, k, v, out_;
    uint k_half, v_half;   // f16 caches: offset in halves from the 4-aligned address
    uint n_head, n_head_kv, kv_dim;
    uint n_tok, n_kv;
    uint t0;               // first query row of this dispatch
    float scale;
    uint flags;            // 1: f16 cache, 2: flash
} p;

shared float qsh[BQ * HD];
shared float ksh[BK * KS];
shared float vsh[BK * KS];
shared float ssh[BQ * BK];  // scores, then (default, pass 2) weights or (flash) vs
shared float msh[BQ * BK];  // flash: ms
shared float Msh[BQ], Ish[BQ];

bool f16c() { return (p.flags & 1u) != 0u; }

float cache_at(uvec2 base, uint half_off, uint i) {
    if (f16c()) return f16_to_f32(ld_u16(U32s(base), 2u * (half_off + i)));
    return F32s(base).v[i];
}

// K (and V) rows j0 .. j0+BK-1 of KV head kvh into shared memory (zeros
// past n_kv); ends with a barrier
void load_tile(uint j0, uint kvh, bool with_v, bool flash) {
    const uint tid = gl_LocalInvocationID.x;
    for (uint e = tid; e < BK * HD; e += gl_WorkGroupSize.x) {
        const uint jj = e / HD, d = e % HD, j = j0 + jj;
        float kv = 0.0, vv = 0.0;
        if (j < p.n_kv) {
            const uint i = j * p.kv_dim + kvh * HD + d;
            kv = cache_at(p.k, p.k_half, i);
            if (flash && !f16c()) kv = f16_round(kv);
            if (with_v) vv = cache_at(p.v, p.v_half, i);
        }
        ksh[jj * KS + d] = kv;
        if (with_v) vsh[jj * KS + d] = vv;
    }
    barrier();
}

// the scores of the tile into ssh; ends with a barrier
void score_tile(uint j0) {
    for (uint c = gl_LocalInvocationID.x; c < BQ * BK; c += gl_WorkGroupSize.x) {
        const uint qi = c / BK, jj = c % BK;
        float s = 0.0;
        if (j0 + jj < p.n_kv)
            for (uint d = 0u; d < HD; d++) s += qsh[qi * HD + d] * ksh[jj * KS + d];
        ssh[c] = s * p.scale;
    }
    barrier();
}

void main() {
    const uint tid = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
    const uint h = gl_WorkGroupID.x, tb = p.t0 + gl_WorkGroupID.y * BQ;
    const uint kvh = h / (p.n_head / p.n_head_kv);
    const bool flash = (p.flags & 2u) != 0u;
    const bool round16 = flash || f16c(); // the type q and the weights are rounded to

    F32s q = F32s(p.q);
    for (uint e = tid; e < BQ * HD; e += wg) {
        const uint qi = e / HD, d = e % HD, t = tb + qi;
        float x = 0.0;
        if (t < p.n_tok) x = q.v[(t * p.n_head + h) * HD + d];
        qsh[e] = round16 ? f16_round(x) : x;
    }
    // this invocation's (query, column) pairs: c = tid + i * wg
    float acc[MAXC];
    [[unroll]] for (uint i = 0u; i < MAXC; i++) acc[i] = 0.0;
    // the query walker (tid < BQ): running maximum and sum
    float M = -1.0 / 0.0, S = 0.0;
    barrier();

    if (flash) {
        for (uint j0 = 0u; j0 < p.n_kv; j0 += BK) {
            const uint nj = min(BK, p.n_kv - j0);
            load_tile(j0, kvh, true, true);
            score_tile(j0);
            if (tid < BQ) {
                for (uint jj = 0u; jj < nj; jj++) {
                    const float s = ssh[tid * BK + jj];
                    float ms = 1.0, vs;
                    if (s > M) {
                        ms = exp(M - s);
                        M = s;
                        vs = 1.0;
                    } else {
                        vs = exp(s - M);
                    }
                    msh[tid * BK + jj] = ms;
                    ssh[tid * BK + jj] = vs;
                    S = S * ms + vs;
                }
            }
            barrier();
            [[unroll]] for (uint i = 0u; i < MAXC; i++) {
                const uint c = tid + i * wg;
                if (c >= BQ * HD) break;
                const uint qi = c / HD, d = c % HD;
                float a = acc[i];
                for (uint jj = 0u; jj < nj; jj++) {
                    const float ms = msh[qi * BK + jj];
                    // ms is 1 but on a new maximum, and a is already an f16 value
                    if (ms != 1.0) a = f16_round(a * ms);
                    a = f16_round(fma(f16_round(vsh[jj * KS + d]), ssh[qi * BK + jj], a));
                }
                acc[i] = a;
            }
            barrier(); // before the next tile overwrites the shared rows
        }
        if (tid < BQ) Ish[tid] = S == 0.0 ? 0.0 : 1.0 / S;
    } else {
        // pass 1: the maximum and the sum of the exponentials
        for (uint j0 = 0u; j0 < p.n_kv; j0 += BK) {
            const uint nj = min(BK, p.n_kv - j0);
            load_tile(j0, kvh, false, false);
            score_tile(j0);
            if (tid < BQ) {
                float m = M;
                for (uint jj = 0u; jj < nj; jj++) m = max(m, ssh[tid * BK + jj]);
                float add = 0.0;
                for (uint jj = 0u; jj < nj; jj++) add += exp(ssh[tid * BK + jj] - m);
                S = S * exp(M - m) + add;
                M = m;
            }
            barrier();
        }
        if (tid < BQ) {
            Msh[tid] = M;
            Ish[tid] = 1.0 / S;
        }
        barrier();
        // pass 2: the weights times V
        for (uint j0 = 0u; j0 < p.n_kv; j0 += BK) {
            const uint nj = min(BK, p.n_kv - j0);
            load_tile(j0, kvh, true, false);
            score_tile(j0);
            for (uint c = tid; c < BQ * BK; c += wg) {
                const uint qi = c / BK;
                float w = exp(ssh[c] - Msh[qi]) * Ish[qi];
                if (f16c()) w = f16_round(w);
                ssh[c] = w;
            }
            barrier();
            [[unroll]] for (uint i = 0u; i < MAXC; i++) {
                const uint c = tid + i * wg;
                if (c >= BQ * HD) break;
                const uint qi = c / HD, d = c % HD;
                float a = acc[i];
                for (uint jj = 0u; jj < nj; jj++) a += ssh[qi * BK + jj] * vsh[jj * KS + d];
                acc[i] = a;
            }
            barrier();
        }
        // the division by the sum is in the weights
        if (tid < BQ) Ish[tid] = 1.0;
    }
    barrier();

    F32s o = F32s(p.out_);
    [[unroll]] for (uint i = 0u; i < MAXC; i++) {
        const uint c = tid + i * wg;
        if (c >= BQ * HD) break;
        const uint qi = c / HD, d = c % HD, t = tb + qi;
        if (t < p.n_tok) o.v[(t * p.n_head + h) * HD + d] = acc[i] * Ish[qi];
    }
}
