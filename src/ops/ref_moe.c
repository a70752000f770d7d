/*
 * ref_moe.c -- the reference ops of a mixture-of-experts FFN: the router
 * (softmax, top-k in llama.cpp's order, renormalised weights), the expert
 * products, their weighted sum and qwen2moe's shared-expert gate.
 *
 * The top-k is where bit-level agreement with llama.cpp is decided by an
 * algorithm rather than by arithmetic: ggml's CPU argsort is libstdc++'s
 * std::sort, which is not stable, so when two experts' probabilities are
 * exactly equal the one it keeps depends on the steps of its introsort.
 * pl_ref_argsort_desc runs those steps (libstdc++'s stl_algo.h/stl_heap.h,
 * unchanged since GCC 4) with an explicit stack instead of recursion.
 */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "ops/ref.h"

/* comp(a, b) of ggml's cmp_argsort for GGML_SORT_ORDER_DESC */
static inline bool desc(const float *x, int32_t a, int32_t b) { return x[a] > x[b]; }

static inline void swap_i(int32_t *a, int32_t *b) {
    const int32_t t = *a;
    *a = *b;
    *b = t;
}

/* std::__adjust_heap(first, hole, len, value, comp), with __push_heap */
static void adjust_heap(const float *x, int32_t *f, int64_t hole, int64_t len, int32_t value) {
    const int64_t top = hole;
    int64_t child = hole;
    while (child < (len - 1) / 2) {
        child = 2 * (child + 1);
        if (desc(x, f[child], f[child - 1])) child--;
        f[hole] = f[child];
        hole = child;
    }
    if ((len & 1) == 0 && child == (len - 2) / 2) {
        child = 2 * (child + 1);
        f[hole] = f[child - 1];
        hole = child - 1;
    }
    int64_t parent = (hole - 1) / 2;
    while (hole > top && desc(x, f[parent], value)) {
        f[hole] = f[parent];
        hole = parent;
        parent = (hole - 1) / 2;
    }
    f[hole] = value;
}

/* std::__partial_sort(first, last, last): make_heap, then sort_heap */
static void heap_sort(const float *x, int32_t *f, int64_t len) {
    if (len < 2) return;
    for (int64_t parent = (len - 2) / 2;; parent--) {
        adjust_heap(x, f, parent, len, f[parent]);
        if (parent == 0) break;
    }
    for (int64_t last = len - 1; last > 0; last--) {
        const int32_t v = f[last];
        f[last] = f[0];
        adjust_heap(x, f, 0, last, v);
    }
}

/* std::__move_median_to_first(result, a, b, c, comp) */
static void median_to_first(const float *x, int32_t *r, int32_t *a, int32_t *b, int32_t *c) {
    if (desc(x, *a, *b)) {
        if (desc(x, *b, *c)) swap_i(r, b);
        else if (desc(x, *a, *c)) swap_i(r, c);
        else swap_i(r, a);
    } else if (desc(x, *a, *c)) swap_i(r, a);
    else if (desc(x, *b, *c)) swap_i(r, c);
    else swap_i(r, b);
}

/* std::__unguarded_partition(first, last, pivot, comp): indices into f */
static int64_t unguarded_partition(const float *x, int32_t *f, int64_t first, int64_t last, int64_t pivot) {
    for (;;) {
        while (desc(x, f[first], f[pivot])) first++;
        last--;
        while (desc(x, f[pivot], f[last])) last--;
        if (!(first < last)) return first;
        swap_i(&f[first], &f[last]);
        first++;
    }
}

/* std::__unguarded_linear_insert(last, comp) */
static void linear_insert(const float *x, int32_t *f, int64_t last) {
    const int32_t v = f[last];
    int64_t next = last - 1;
    while (desc(x, v, f[next])) {
        f[last] = f[next];
        last = next--;
    }
    f[last] = v;
}

/* std::__insertion_sort(first, last, comp) */
static void insertion_sort(const float *x, int32_t *f, int64_t first, int64_t last) {
    if (first == last) return;
    for (int64_t i = first + 1; i != last; i++) {
        if (desc(x, f[i], f[first])) {
            const int32_t v = f[i];
            memmove(f + first + 1, f + first, (size_t)(i - first) * sizeof *f);
            f[first] = v;
        } else {
            linear_insert(x, f, i);
        }
    }
}

enum { SORT_THRESHOLD = 16 }; /* libstdc++'s _S_threshold */

void pl_ref_argsort_desc(const float *x, int32_t *idx, int64_t n) {
    for (int64_t i = 0; i < n; i++) idx[i] = (int32_t)i;
    if (n < 2) return;
    int depth = 0; /* std::__lg(n) * 2 */
    for (int64_t m = n; m > 1; m >>= 1) depth++;
    depth *= 2;
    /* __introsort_loop(first, last, depth): the loop keeps [first, last)
     * and recurses on [cut, last) first; the recursion's pending calls are
     * the stack (each a range and the depth left when it was made) */
    struct {
        int64_t first, last;
        int depth;
    } stack[130];
    int sp = 0;
    stack[sp].first = 0, stack[sp].last = n, stack[sp].depth = depth, sp++;
    while (sp > 0) {
        sp--;
        int64_t first = stack[sp].first, last = stack[sp].last;
        int d = stack[sp].depth;
        /* a recursive call runs to its end before its caller's loop goes
         * on: so the caller's remaining range [first, cut) is pushed
         * below the callee's [cut, last) */
        while (last - first > SORT_THRESHOLD) {
            if (d == 0) {
                heap_sort(x, idx + first, last - first);
                break; /* this call returns */
            }
            d--;
            const int64_t mid = first + (last - first) / 2;
            median_to_first(x, &idx[first], &idx[first + 1], &idx[mid], &idx[last - 1]);
            const int64_t cut = unguarded_partition(x, idx, first + 1, last, first);
            /* resume the caller's loop with [first, cut) at depth d after the
             * callee (cut, last, d) has finished */
            stack[sp].first = first, stack[sp].last = cut, stack[sp].depth = d, sp++;
            first = cut;
        }
    }
    /* __final_insertion_sort */
    if (n > SORT_THRESHOLD) {
        insertion_sort(x, idx, 0, SORT_THRESHOLD);
        for (int64_t i = SORT_THRESHOLD; i < n; i++) linear_insert(x, idx, i);
    } else {
        insertion_sort(x, idx, 0, n);
    }
}

void pl_ref_moe_route(const pl_moe_route_params *p, const float *logits, int64_t n_tok, int32_t *ids, float *w) {
    float prob[PL_MAX_EXPERTS];
    int32_t order[PL_MAX_EXPERTS];
    const int64_t ne = p->n_expert, k = p->n_used;
    for (int64_t t = 0; t < n_tok; t++) {
        pl_ref_softmax(logits + t * ne, prob, ne);
        pl_ref_argsort_desc(prob, order, ne);
        int32_t *it = ids + t * k;
        float *wt = w + t * k;
        for (int64_t j = 0; j < k; j++) it[j] = order[j], wt[j] = prob[order[j]];
        if (p->norm) {
            double sum = 0.0;
            for (int64_t j = 0; j < k; j++) sum += (double)wt[j];
            float s = (float)sum;
            if (s < 6.103515625e-5f) s = 6.103515625e-5f;
            for (int64_t j = 0; j < k; j++) wt[j] = wt[j] / s;
        }
        if (p->scale != 0.0f && p->scale != 1.0f)
            for (int64_t j = 0; j < k; j++) wt[j] *= p->scale;
    }
}

pocketllm_status pl_ref_mul_mat_id(const pl_weight *w, const float *x, int64_t x_slots, const int32_t *ids,
                                   int64_t n_used, int64_t n_tok, float *y) {
    if (x_slots != 1 && x_slots != n_used)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "mul_mat_id %s: %lld input rows per token, expected 1 or %lld",
                       w->name, (long long)x_slots, (long long)n_used);
    for (int64_t t = 0; t < n_tok; t++)
        for (int64_t j = 0; j < n_used; j++) {
            const int32_t e = ids[t * n_used + j];
            if (e < 0 || e >= w->n_expert)
                return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "mul_mat_id %s: expert %d of token %lld is not in 0..%lld",
                               w->name, (int)e, (long long)t, (long long)w->n_expert - 1);
            const pl_weight v = pl_weight_expert(w, e);
            const float *xr = x + ((x_slots == 1 ? t : t * n_used + j) * w->n_in);
            pocketllm_status st = pl_ref_mul_mat(&v, xr, 1, y + (t * n_used + j) * w->n_out);
            if (st) return st;
        }
    return POCKETLLM_OK;
}

void pl_ref_moe_sum(const float *e, const float *w, float *y, int64_t n_tok, int64_t n_used, int64_t n) {
    for (int64_t t = 0; t < n_tok; t++) {
        const float *et = e + t * n_used * n, *wt = w + t * n_used;
        float *yt = y + t * n;
        for (int64_t i = 0; i < n; i++) {
            float s = et[i] * wt[0];
            for (int64_t j = 1; j < n_used; j++) {
                const float v = et[j * n + i] * wt[j];
                s = s + v;
            }
            yt[i] = s;
        }
    }
}

void pl_ref_sigmoid_gate(const float *x, const float *g, float *y, int64_t rows, int64_t n) {
    for (int64_t r = 0; r < rows; r++) {
        const float v = g[r], s = v / (1.0f + expf(-v)) / v;
        for (int64_t i = 0; i < n; i++) y[r * n + i] = x[r * n + i] * s;
    }
}

pocketllm_status pl_moe_ffn_check(const pl_moe_ffn_weights *e, int64_t n_used) {
    const pl_weight *g = e->gate, *u = e->up, *d = e->down;
    if (!g || !u || !d || !g->data || !u->data || !d->data)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "moe_ffn: an expert tensor is missing");
    if (g->n_expert < 1 || u->n_expert != g->n_expert || d->n_expert != g->n_expert)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "moe_ffn: %s, %s and %s have %lld, %lld and %lld experts",
                       g->name, u->name, d->name, (long long)g->n_expert, (long long)u->n_expert,
                       (long long)d->n_expert);
    if (u->n_in != g->n_in || u->n_out != g->n_out || d->n_in != g->n_out)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "moe_ffn: %s [%lld, %lld], %s [%lld, %lld] and %s [%lld, %lld] "
                       "do not chain", g->name, (long long)g->n_in, (long long)g->n_out, u->name, (long long)u->n_in,
                       (long long)u->n_out, d->name, (long long)d->n_in, (long long)d->n_out);
    if (n_used < 1 || n_used > g->n_expert)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "moe_ffn: %lld experts per token of %lld", (long long)n_used,
                       (long long)g->n_expert);
    return POCKETLLM_OK;
}

pocketllm_status pl_ref_moe_ffn(const pl_moe_ffn_weights *e, const float *x, const int32_t *ids, const float *w,
                                int64_t n_used, int64_t n_tok, float *y) {
    pocketllm_status st = pl_moe_ffn_check(e, n_used);
    if (st) return st;
    const int64_t n_ff = e->gate->n_out, pairs = n_tok * n_used;
    float *g = malloc((size_t)pairs * (size_t)n_ff * sizeof *g);
    float *u = malloc((size_t)pairs * (size_t)n_ff * sizeof *u);
    float *d = malloc((size_t)pairs * (size_t)e->down->n_out * sizeof *d);
    if (!g || !u || !d) st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "moe_ffn: out of memory for %lld rows", (long long)pairs);
    if (!st) st = pl_ref_mul_mat_id(e->gate, x, 1, ids, n_used, n_tok, g);
    if (!st) st = pl_ref_mul_mat_id(e->up, x, 1, ids, n_used, n_tok, u);
    if (!st) {
        pl_ref_silu_mul(g, u, g, pairs * n_ff);
        st = pl_ref_mul_mat_id(e->down, g, n_used, ids, n_used, n_tok, d);
    }
    if (!st) pl_ref_moe_sum(d, w, y, n_tok, n_used, e->down->n_out);
    free(g);
    free(u);
    free(d);
    return st;
}
