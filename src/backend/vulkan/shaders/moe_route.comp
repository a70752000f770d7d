#version 450
// moe_route.comp -- the router of a mixture-of-experts layer
// (pl_ref_moe_route): per token, the softmax of its n_expert logits, the
// first n_used experts in the order libstdc++'s std::sort puts them (the
// reference's pl_ref_argsort_desc), their probabilities as the weights,
// renormalised and scaled.  A work group per token.
//
// Which experts run is decided by comparisons, so the probabilities are
// computed to match the reference's as closely as f32 allows: exp_f32
// (within an ulp of libm's), the sum of the exponentials carried in two
// floats (the reference sums in double) and its reciprocal, the weights'
// sum and their division corrected to the rounding of the exact value.
//
// The order.  When none of the n_used largest probabilities equals
// another, each one's place is the number of larger ones, which every
// invocation counts for its experts in parallel; any order-respecting sort
// gives those places.  Only an exact tie reaching into the first n_used
// (or a NaN) depends on the introsort's own steps: then one invocation
// runs them on shared memory, as the reference does, with every index
// kept inside the row.
#include "common.glsl"
#include "exp.glsl"
layout(local_size_x_id = 0) in;
#include "reduce.glsl"

layout(push_constant) uniform P {
    uvec2 logits, ids, w;
    uint n_expert, n_used, n_tok, norm;
    float scale;
} p;

#define MAXE 256 // PL_MAX_EXPERTS
shared float pr[MAXE];
shared int ord[MAXE];
shared uint need_sort;

// ---- double-float arithmetic (no fma: Vulkan may split it in two) --------
void two_sum(float a, float b, out float s, out float e) {
    precise float ss = a + b;
    precise float bb = ss - a;
    precise float ee = (a - (ss - bb)) + (b - bb);
    s = ss;
    e = ee;
}

// a * b = h + l exactly (Dekker's product, Veltkamp's split)
void two_prod(float a, float b, out float h, out float l) {
    precise float ca = 4097.0 * a;
    precise float ah = ca - (ca - a);
    precise float al = a - ah;
    precise float cb = 4097.0 * b;
    precise float bh = cb - (cb - b);
    precise float bl = b - bh;
    precise float hh = a * b;
    precise float ll = ((ah * bh - hh) + ah * bl + al * bh) + al * bl;
    h = hh;
    l = ll;
}

// (ah + al) / (bh + bl) rounded as the exact quotient would be (but
// within a hair of a tie): the device's quotient (2.5 ulp in Vulkan)
// corrected once from its exact residual
float div_acc(float ah, float al, float bh, float bl) {
    precise float q = ah / bh;
    float ph, pl;
    two_prod(q, bh, ph, pl);
    precise float res = (((ah - ph) - pl) + al) - q * bl;
    precise float r = q + res / bh;
    return r;
}

// ---- the reference's introsort, over ord[0, n) by pr descending --------
bool desc(int a, int b) { return pr[a] > pr[b]; }

void swap_at(int i, int j) {
    const int t = ord[i];
    ord[i] = ord[j];
    ord[j] = t;
}

void adjust_heap(int f, int hole, int len, int value) {
    const int top = hole;
    int child = hole;
    while (child < (len - 1) / 2) {
        child = 2 * (child + 1);
        if (desc(ord[f + child], ord[f + child - 1])) child--;
        ord[f + hole] = ord[f + child];
        hole = child;
    }
    if ((len & 1) == 0 && child == (len - 2) / 2) {
        child = 2 * (child + 1);
        ord[f + hole] = ord[f + child - 1];
        hole = child - 1;
    }
    while (hole > top && desc(ord[f + (hole - 1) / 2], value)) {
        ord[f + hole] = ord[f + (hole - 1) / 2];
        hole = (hole - 1) / 2;
    }
    ord[f + hole] = value;
}

void heap_sort(int f, int len) {
    if (len < 2) return;
    for (int parent = (len - 2) / 2;; parent--) {
        adjust_heap(f, parent, len, ord[f + parent]);
        if (parent == 0) break;
    }
    for (int last = len - 1; last > 0; last--) {
        const int v = ord[f + last];
        ord[f + last] = ord[f];
        adjust_heap(f, 0, last, v);
    }
}

void median_to_first(int r, int a, int b, int c) {
    if (desc(ord[a], ord[b])) {
        if (desc(ord[b], ord[c])) swap_at(r, b);
        else if (desc(ord[a], ord[c])) swap_at(r, c);
        else swap_at(r, a);
    } else if (desc(ord[a], ord[c])) swap_at(r, a);
    else if (desc(ord[b], ord[c])) swap_at(r, c);
    else swap_at(r, b);
}

// the scans stop at the row's ends, where the reference relies on its
// sentinels (which a NaN can defeat): the same steps wherever it stays inside
int partition_at(int first, int last, int pivot, int n) {
    for (;;) {
        while (first < n - 1 && desc(ord[first], ord[pivot])) first++;
        last--;
        while (last > 0 && desc(ord[pivot], ord[last])) last--;
        if (!(first < last)) return first;
        swap_at(first, last);
        first++;
    }
    return first;
}

void linear_insert(int last) {
    const int v = ord[last];
    int next = last - 1;
    while (next >= 0 && desc(v, ord[next])) {
        ord[last] = ord[next];
        last = next--;
    }
    ord[last] = v;
}

void insertion_sort(int first, int last) {
    for (int i = first + 1; i < last; i++) {
        if (desc(ord[i], ord[first])) {
            const int v = ord[i];
            for (int j = i; j > first; j--) ord[j] = ord[j - 1];
            ord[first] = v;
        } else {
            linear_insert(i);
        }
    }
}

#define STACK 24 // the recursion is at most 2 log2(256) + 1 deep
void argsort_desc(int n) {
    if (n < 2) return;
    int depth = 0;
    for (int m = n; m > 1; m >>= 1) depth++;
    depth *= 2;
    int s_first[STACK], s_last[STACK], s_depth[STACK];
    int sp = 0;
    s_first[0] = 0, s_last[0] = n, s_depth[0] = depth, sp = 1;
    while (sp > 0) {
        sp--;
        int first = s_first[sp], last = s_last[sp], d = s_depth[sp];
        while (last - first > 16) {
            if (d == 0) {
                heap_sort(first, last - first);
                break;
            }
            d--;
            const int mid = first + (last - first) / 2;
            median_to_first(first, first + 1, mid, last - 1);
            const int cut = partition_at(first + 1, last, first, n);
            if (sp < STACK) s_first[sp] = first, s_last[sp] = cut, s_depth[sp] = d, sp++;
            first = cut;
        }
    }
    if (n > 16) {
        insertion_sort(0, 16);
        for (int i = 16; i < n; i++) linear_insert(i);
    } else {
        insertion_sort(0, n);
    }
}

void main() {
    const uint t = group_index(), lid = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
    if (t >= p.n_tok) return;
    const uint n = p.n_expert, k = p.n_used;
    F32s x = F32s(p.logits);
    const uint base = t * n;
    if (lid == 0u) need_sort = 0u;

    // softmax: max, the exponentials, their sum in two floats
    float m = -1.0 / 0.0;
    for (uint i = lid; i < n; i += wg) {
        const float v = x.v[base + i];
        m = v > m ? v : m;
    }
    m = wg_max(m);
    for (uint i = lid; i < n; i += wg) pr[i] = exp_f32(x.v[base + i] - m);
    barrier();
    if (lid == 0u) {
        float hi = 0.0, lo = 0.0;
        for (uint i = 0u; i < n; i++) {
            float e;
            two_sum(hi, pr[i], hi, e);
            lo += e;
        }
        red_sh[0] = div_acc(1.0, 0.0, hi, lo);
    }
    barrier();
    const float inv = red_sh[0];
    for (uint i = lid; i < n; i += wg) pr[i] *= inv;
    barrier();

    // places by counting, unless a tie or a NaN reaches the first k
    for (uint i = lid; i < n; i += wg) {
        const float v = pr[i];
        uint gt = 0u, eq = 0u;
        for (uint j = 0u; j < n; j++) {
            gt += pr[j] > v ? 1u : 0u;
            eq += pr[j] == v ? 1u : 0u;
        }
        if (isnan(v) || (gt < k && eq > 1u)) atomicOr(need_sort, 1u);
        else if (gt < k) ord[gt] = int(i);
    }
    barrier();
    if (need_sort != 0u) {
        for (uint i = lid; i < n; i += wg) ord[i] = int(i);
        barrier();
        if (lid == 0u) argsort_desc(int(n));
        barrier();
    }

    if (lid != 0u) return;
    I32s ids = I32s(p.ids);
    F32s w = F32s(p.w);
    float s = 1.0;
    if (p.norm != 0u) {
        // the sum as the reference's double rounded to f32
        float hi = 0.0, lo = 0.0;
        for (uint j = 0u; j < k; j++) {
            float e;
            two_sum(hi, pr[ord[j]], hi, e);
            lo += e;
        }
        s = hi + lo;
        if (s < 6.103515625e-5) s = 6.103515625e-5;
    }
    for (uint j = 0u; j < k; j++) {
        float v = pr[ord[j]];
        if (p.norm != 0u) v = div_acc(v, 0.0, s, 0.0);
        if (p.scale != 0.0 && p.scale != 1.0) v *= p.scale;
        ids.v[t * k + j] = ord[j];
        w.v[t * k + j] = v;
    }
}
