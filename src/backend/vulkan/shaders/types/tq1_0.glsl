// tq1_0: { u8 qs[48]; u8 qh[4]; f16 d } per 256 elements of trits.  A
// byte holds 5 trits (4 in qh) as a base-3 fraction scaled by 256/243:
// trit n is the top base-3 digit of byte * 3^n (mod 256), i.e.
// ((byte * 3^n) mod 256) * 3 >> 8.  Layout: elements 32n + m (n < 5) are
// trit n of qs[m]; 160 + 16n + m of qs[32 + m]; 240 + 4n + j of qh[j].
// So unit u < 5 is trit u of qs[0..31]; units 5, 6 are trits 2(u-5) and
// 2(u-5)+1 of qs[32..47]; unit 7 is trit 4 of qs[32..47], then trits 0..3
// of qh (one word each).  The reference's value (trit - 1) * d is s * q
// with q = trit - 1, s = d (a single product, order immaterial).
#define QK 256u
#define QB 54u
#define ACT_Q8_K
// trit n (p3 = 3^n) of each byte of b, minus 1: the bytes are split into
// 16-bit lanes so the products (< 2^16) stay inside their lane
uint tq1_trits(uint b, uint p3) {
    uint e = ((b & 0x00ff00ffu) * p3) & 0x00ff00ffu;
    uint o = (((b >> 8) & 0x00ff00ffu) * p3) & 0x00ff00ffu;
    e = ((e * 3u) >> 8) & 0x00ff00ffu;
    o = ((o * 3u) >> 8) & 0x00ff00ffu;
    return sub_bytes(e | (o << 8), 1u);
}
void decode32(U32s w, U32s tab, uint boff, uint u, out uint q[8], out vec2 s, out vec2 m) {
    const uint P3[5] = uint[5](1u, 3u, 9u, 27u, 81u);
    const float d = f16_to_f32(ld_u16(w, boff + 52u));
    if (u < 5u) {
        const uint p3 = P3[u];
        [[unroll]] for (uint k = 0u; k < 8u; k++) q[k] = tq1_trits(ld_u32(w, boff + 4u * k), p3);
    } else {
        const uint n0 = 2u * (u - 5u);
        const uint qh = ld_u32(w, boff + 48u);
        [[unroll]] for (uint k = 0u; k < 4u; k++) {
            const uint b = ld_u32(w, boff + 32u + 4u * k);
            q[k] = tq1_trits(b, P3[n0]);
            q[k + 4u] = u < 7u ? tq1_trits(b, P3[n0 + 1u]) : tq1_trits(qh, P3[k]);
        }
    }
    s = vec2(d);
    m = vec2(0.0);
}
