#version 450
// attention.comp -- causal grouped-query attention of one query row and
// head per work group against the KV cache (or not causal, every query
// reading the same n_kv_all rows: a vision tower whose heads are too large
// for attention_tile.comp), in llama.cpp's arithmetic
// (the reference, src/ops/ref_attention.c):
//   scores  s_j = q . k_j * scale, j <= own position, with q converted to
//           K's dot type: rounded to f16 or bf16 for those caches, else
//           quantized to q8_0 / q8_1 blocks and dotted in integers per
//           block (the reference's vec_dot, its blocks summed in order)
//   default softmax over the s_j, each weight rounded to V's type (f16,
//           bf16), then the weighted sum of the V rows
//   flash   one pass over j in order with a running maximum M and sum S;
//           an f16 (or f32, read as f16) V's sum kept in f16 and rounded
//           after every position, any other V's in f32 (the reference's
//           pl_flash_step, done by every invocation alike)
// K and V may be of different types (kv_types.glsl); a quantized V needs
// flash, as in llama.cpp.  The scores live in shared memory when they fit
// (SH_SCORES), else in the scratch at p.scores (one row of p.score_stride
// per work group).
#include "common.glsl"
#include "kv_types.glsl"
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint SH_SCORES = 2048;
#include "reduce.glsl"

layout(push_constant) uniform P {
    uvec2 q, k, v, out_, scores;
    uint k_off, v_off;     // the caches' byte offsets from their 4-aligned addresses
    uint k_row, v_row;     // bytes of one cache row (all KV heads of a position)
    uint k_type, v_type;   // kv_types.glsl codes
    uint n_head, n_head_kv, head_dim;
    uint pos0;             // the position of query row 0 of this dispatch
    uint t0, h0;           // first query row and head of this dispatch
    uint score_stride;     // floats per work group row in the scratch
    float scale;
    uint flags;            // 2: flash
    uint n_kv_all;         // > 0: not causal, every query reads rows 0 .. n_kv_all-1
} p;

shared float sh_scores[SH_SCORES];
shared float qsh[1024];  // q in K's dot type: rounded floats, or q8 integers
shared float qd[32];     // per 32 of q: its q8 scale (f16-rounded)
shared float qsum[32];   // per 32 of q: q8_1's stored sum d * sum(q)

// q . K row at byte offset off, as the reference's vec_dot of kt
float dot_row(uint kt, uint stored, U32s kb, uint off, uint hd) {
    if (kv_plain(kt)) {
        float s = 0.0;
        for (uint d = 0u; d < hd; d++) {
            float kv = kv_plain_at(stored, kb, off, d);
            if (kt == KV_F16 && stored == KV_F32) kv = f16_round(kv);
            s += qsh[d] * kv;
        }
        return s;
    }
    const uint bb = kv_block_bytes(kt);
    precise float s = 0.0;
    for (uint b = 0u; b < hd / 32u; b++) {
        const uint boff = off + b * bb;
        int sumi = 0;
        for (uint e = 0u; e < 32u; e++) sumi += kv_q(kt, kb, boff, e) * int(qsh[32u * b + e]);
        const float dk = kv_d(kb, boff), dq = qd[b];
        precise float part;
        if (kt == KV_Q4_0) part = float(sumi) * dk * dq;
        else if (kt == KV_Q8_0) part = float(sumi) * (dk * dq);
        else if (kt == KV_IQ4_NL) part = (dq * dk) * float(sumi);
        else if (kt == KV_Q5_0) part = (dk * dq) * float(sumi);
        else part = (dk * dq) * float(sumi) + kv_m(kt, kb, boff) * qsum[b];
        s += part;
    }
    return s;
}

void main() {
    const uint tid = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
    const uint h = p.h0 + gl_WorkGroupID.x, t = p.t0 + gl_WorkGroupID.y;
    const uint hd = p.head_dim, kvh = h / (p.n_head / p.n_head_kv);
    const uint n_kv = p.n_kv_all != 0u ? p.n_kv_all : p.pos0 + t + 1u;
    const bool flash = (p.flags & 2u) != 0u;
    // the types the arithmetic sees: flash reads an f32 cache as f16
    const uint kt = flash && p.k_type == KV_F32 ? KV_F16 : p.k_type;
    const uint vt = flash && p.v_type == KV_F32 ? KV_F16 : p.v_type;
    const bool in_shared = n_kv <= SH_SCORES;
    F32c sc = F32c(p.scores);
    const uint srow = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * p.score_stride;
    U32s kb = U32s(p.k), vb = U32s(p.v);
    const uint k_head = kv_bytes(p.k_type, hd), v_head = kv_bytes(p.v_type, hd);

    F32s q = F32s(p.q);
    const uint qb = (t * p.n_head + h) * hd;
    if (kv_plain(kt)) {
        for (uint d = tid; d < hd; d += wg) {
            const float x = q.v[qb + d];
            qsh[d] = kt == KV_F16 ? f16_round(x) : kt == KV_BF16 ? bf16_round(x) : x;
        }
    } else {
        // q8_0 / q8_1 blocks of q, one block an invocation (the
        // reference's act_from_float)
        for (uint b = tid; b < hd / 32u; b += wg) {
            float amax = 0.0;
            for (uint e = 0u; e < 32u; e++) amax = max(amax, abs(q.v[qb + 32u * b + e]));
            precise float dd = amax / 127.0, id = amax != 0.0 ? 127.0 / amax : 0.0;
            int sum = 0;
            for (uint e = 0u; e < 32u; e++) {
                precise float x = q.v[qb + 32u * b + e] * id;
                const int r = int(roundEven(x));
                sum += r;
                qsh[32u * b + e] = float(clamp(r, -128, 127));
            }
            qd[b] = f16_round(dd);
            precise float sd = dd * float(sum);
            qsum[b] = f16_round(sd);
        }
    }
    barrier();

    // scores and their maximum
    float mx = -1.0 / 0.0;
    for (uint j = tid; j < n_kv; j += wg) {
        float s = dot_row(kt, p.k_type, kb, p.k_off + j * p.k_row + kvh * k_head, hd);
        s *= p.scale;
        if (in_shared) sh_scores[j] = s;
        else sc.v[srow + j] = s;
        mx = max(mx, s);
    }
    memoryBarrierBuffer();
    barrier();

    F32s o = F32s(p.out_);
    const uint ob = (t * p.n_head + h) * hd;
    const uint v0 = p.v_off + kvh * v_head;
    if (flash) {
        // every invocation walks the positions in order (the same M and S
        // everywhere); each keeps the V sums of its columns
        const bool v16 = vt == KV_F16;
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
                    acc = v16 ? f16_round(acc * ms) : acc * ms;
                } else {
                    vs = exp(s - M);
                }
                if (d < hd) {
                    float vv = kv_value(p.v_type, vb, v0 + j * p.v_row, d);
                    if (v16) vv = f16_round(vv);
                    acc = v16 ? f16_round(fma(vv, vs, acc)) : fma(vv, vs, acc);
                }
                S = S * ms + vs;
            }
            if (d < hd) o.v[ob + d] = acc * (S == 0.0 ? 0.0 : 1.0 / S);
        }
        return;
    }

    // default: softmax weights, rounded to V's type
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
        if (p.v_type == KV_F16) w = f16_round(w);
        else if (p.v_type == KV_BF16) w = bf16_round(w);
        if (in_shared) sh_scores[j] = w;
        else sc.v[srow + j] = w;
    }
    memoryBarrierBuffer();
    barrier();
    for (uint d = tid; d < hd; d += wg) {
        float acc = 0.0;
        for (uint j = 0u; j < n_kv; j++)
            acc += (in_shared ? sh_scores[j] : sc.v[srow + j]) * kv_plain_at(p.v_type, vb, v0 + j * p.v_row, d);
        o.v[ob + d] = acc;
    }
}
