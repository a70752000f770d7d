/*
 * ref_matmul.c -- the reference ops over packed weights: embedding rows
 * and the matrix product.  The float types (f32, f16, bf16) are decoded
 * here directly; every other type goes through the element type table's
 * reference kernels (decode; activations encoded as llama.cpp's CPU backend
 * encodes them; dot product), so a type that gains a row there runs here
 * without changes.
 */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/half.h"
#include "ops/ref.h"
#include "quant/types.h"

static bool is_float_type(uint32_t type) {
    return type == PL_TYPE_F32 || type == PL_TYPE_F16 || type == PL_TYPE_BF16;
}

/* Element i of a row of a float type. */
static float float_at(uint32_t type, const void *row, int64_t i) {
    if (type == PL_TYPE_F32) return ((const float *)row)[i];
    if (type == PL_TYPE_F16) return pl_f16_to_f32(((const uint16_t *)row)[i]);
    return pl_bf16_to_f32(((const uint16_t *)row)[i]);
}

bool pl_ref_type_ok(uint32_t type) {
    if (is_float_type(type)) return true;
    const pl_type_traits *t = pl_type_get(type);
    if (!t || !t->block || !t->to_float || !t->vec_dot) return false;
    const pl_type_traits *a = pl_type_get(t->vec_dot_type);
    return a && a->act_from_float;
}

void pl_ref_get_rows(const pl_weight *w, const int32_t *ids, int64_t n, float *y) {
    for (int64_t r = 0; r < n; r++) {
        const void *row = pl_weight_row(w, ids[r]);
        float *yr = y + r * w->n_in;
        if (is_float_type(w->type))
            for (int64_t i = 0; i < w->n_in; i++) yr[i] = float_at(w->type, row, i);
        else
            pl_type_get(w->type)->to_float(row, yr, w->n_in);
    }
}

pocketllm_status pl_ref_mul_mat(const pl_weight *w, const float *x, int64_t n_tok, float *y) {
    if (is_float_type(w->type)) {
        /* f16 and bf16 weights meet activations rounded to their own type
         * (llama.cpp's vec_dot_type); the sum is kept in double */
        for (int64_t t = 0; t < n_tok; t++) {
            const float *xr = x + t * w->n_in;
            for (int64_t o = 0; o < w->n_out; o++) {
                const void *row = pl_weight_row(w, o);
                double s = 0.0;
                for (int64_t i = 0; i < w->n_in; i++) {
                    float a = xr[i];
                    if (w->type == PL_TYPE_F16) a = pl_f16_to_f32(pl_f32_to_f16(a));
                    else if (w->type == PL_TYPE_BF16) a = pl_bf16_to_f32(pl_f32_to_bf16(a));
                    s += (double)(float_at(w->type, row, i) * a);
                }
                y[t * w->n_out + o] = (float)s;
            }
        }
        return POCKETLLM_OK;
    }
    const pl_type_traits *t = pl_type_get(w->type);
    const uint32_t at = t->vec_dot_type;
    uint64_t abytes = 0;
    if (!pl_type_row_bytes(at, (uint64_t)w->n_in, &abytes))
        return pl_fail(POCKETLLM_ERR_INTERNAL, "mul_mat %s: rows of %lld do not fit %s blocks", w->name,
                       (long long)w->n_in, pl_type_get(at)->name);
    void *a = malloc(abytes ? abytes : 1);
    if (!a) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "mul_mat %s: out of memory", w->name);
    for (int64_t tk = 0; tk < n_tok; tk++) {
        const float *xr = x + tk * w->n_in;
        pl_type_get(at)->act_from_float(xr, a, w->n_in);
        for (int64_t o = 0; o < w->n_out; o++) y[tk * w->n_out + o] = t->vec_dot(w->n_in, pl_weight_row(w, o), a);
    }
    free(a);
    return POCKETLLM_OK;
}
