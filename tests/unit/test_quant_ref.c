/*
 * test_quant_ref.c -- properties of the reference quant kernels that hold
 * without llama.cpp (which the oracle tests compare against bit for bit):
 *  - pl_quant_from_float refuses what it must (unknown type, rows that are
 *    not whole blocks, IQ1/IQ2 without an importance matrix) with a message;
 *  - every encoder round-trips random rows within a per-type error bound,
 *    with and without an imatrix, and the reference dot of the quantized
 *    row with quantized activations is close to the float dot;
 *  - the IQ codebooks are self-consistent: the quantizers' level codes
 *    (kgrid) describe the same rows as the decode grids, and the search map
 *    sends every on-grid pattern to its row.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/quant_testdata.h"
#include "pltest.h"
#include "quant/iq_grid_search.h"
#include "quant/iq_tables.h"
#include "quant/types.h"

static pl_rng rng;

/* relative RMS error bound of a round trip on normal data, per type */
static double rt_bound(uint32_t t) {
    switch (t) {
    case PL_TYPE_F32: return 0;
    case PL_TYPE_F16: return 1e-3;
    case PL_TYPE_BF16: return 5e-3;
    case PL_TYPE_Q8_0: return 0.01;
    case PL_TYPE_Q6_K: return 0.03;
    case PL_TYPE_Q5_0: case PL_TYPE_Q5_1: case PL_TYPE_Q5_K: return 0.06;
    case PL_TYPE_Q4_0: case PL_TYPE_Q4_1: case PL_TYPE_Q4_K: case PL_TYPE_IQ4_NL: case PL_TYPE_IQ4_XS: return 0.12;
    case PL_TYPE_MXFP4: return 0.2;
    case PL_TYPE_Q3_K: case PL_TYPE_IQ3_S: case PL_TYPE_IQ3_XXS: return 0.25;
    case PL_TYPE_Q2_K: case PL_TYPE_IQ2_S: case PL_TYPE_IQ2_XS: return 0.45;
    case PL_TYPE_IQ2_XXS: return 0.5;
    case PL_TYPE_IQ1_M: case PL_TYPE_IQ1_S: return 0.8;
    case PL_TYPE_TQ1_0: case PL_TYPE_TQ2_0: return 0.9; /* ternary on non-ternary data */
    default: return 0.3;
    }
}

static void check_refusals(void) {
    float x[256] = {0};
    uint8_t out[512];
    CHECK(pl_quant_from_float(4, x, out, 1, 32, NULL) != POCKETLLM_OK);           /* removed id */
    CHECK(pl_quant_from_float(PL_TYPE_COUNT, x, out, 1, 32, NULL) != POCKETLLM_OK);
    CHECK(pl_quant_from_float(PL_TYPE_Q4_K, x, out, 1, 128, NULL) == POCKETLLM_ERR_INVALID_ARGUMENT);
    CHECK(strstr(pocketllm_last_error(), "not whole") != NULL);
    CHECK(pl_quant_from_float(PL_TYPE_Q4_0, x, out, 1, 0, NULL) != POCKETLLM_OK);
    const uint32_t need[] = {PL_TYPE_IQ2_XXS, PL_TYPE_IQ2_XS, PL_TYPE_IQ2_S, PL_TYPE_IQ1_S, PL_TYPE_IQ1_M};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
        CHECK(pl_quant_from_float(need[i], x, out, 1, 256, NULL) == POCKETLLM_ERR_INVALID_ARGUMENT);
        CHECK(strstr(pocketllm_last_error(), "importance matrix") != NULL);
        CHECK(pl_quant_from_float(need[i], x, out, 1, 256, x) == POCKETLLM_OK);
    }
    CHECK(pl_quant_from_float(PL_TYPE_Q4_K, x, out, 1, 256, NULL) == POCKETLLM_OK);
}

static void check_round_trips(void) {
    const int64_t n = 1024;
    float *x = malloc(sizeof(float) * n), *y = malloc(sizeof(float) * n), *im = malloc(sizeof(float) * n);
    uint8_t *q = malloc(8 * (size_t)n), *a = malloc(8 * (size_t)n);
    int types = 0;
    for (uint32_t t = 0; t < PL_TYPE_COUNT; t++) {
        const pl_type_traits *tr = pl_type_get(t);
        if (!pl_type_valid(t) || !tr->from_float || !tr->vec_dot) continue;
        types++;
        for (int with_im = 0; with_im < 2; with_im++) {
            qt_gen_floats(&rng, x, n, 0);
            qt_gen_imatrix(&rng, im, n);
            for (int64_t i = 0; i < n; i++) im[i] = 1.0f + im[i] * 0.01f; /* no zero weights here */
            if (!with_im && tr->requires_imatrix) continue;
            CHECK(pl_quant_from_float(t, x, q, 1, n, with_im ? im : NULL) == POCKETLLM_OK);
            tr->to_float(q, y, n);
            double e2 = 0, x2 = 0, dot = 0;
            for (int64_t i = 0; i < n; i++) e2 += (double)(y[i] - x[i]) * (y[i] - x[i]), x2 += (double)x[i] * x[i];
            const double rel = sqrt(e2 / x2);
            CHECK_MSG(rel <= rt_bound(t), "%s%s: round-trip relative RMS %.4f > %.4f", tr->name,
                      with_im ? " (imatrix)" : "", rel, rt_bound(t));
            /* the dot of the quantized row with quantized activations is the
             * dot of the decoded row with the activations, to within the
             * activation rounding */
            float *act = malloc(sizeof(float) * n);
            qt_gen_floats(&rng, act, n, 1);
            pl_type_get(tr->vec_dot_type)->act_from_float(act, a, n);
            for (int64_t i = 0; i < n; i++) dot += (double)y[i] * act[i];
            const double got = tr->vec_dot(n, q, a);
            double mag = 0;
            for (int64_t i = 0; i < n; i++) mag += fabs((double)y[i] * act[i]);
            CHECK_MSG(fabs(got - dot) <= 0.02 * mag + 1e-6, "%s: dot %.6g vs float %.6g (magnitude %.3g)", tr->name, got,
                      dot, mag);
            free(act);
        }
    }
    CHECK(types >= 24);
    free(x), free(y), free(im), free(q), free(a);
}

/* The kgrid level codes and the decode grids describe the same rows: each
 * decode byte is a fixed increasing function of the level. */
static void check_codebooks(void) {
    struct {
        const uint16_t *kgrid;
        const void *grid;
        int rows, bits, per, bytes;
    } cbs[] = {
        {pl_kgrid_iq2xxs, pl_iq2xxs_grid, 256, 2, 8, 8}, {pl_kgrid_iq2xs, pl_iq2xs_grid, 512, 2, 8, 8},
        {pl_kgrid_iq2s, pl_iq2s_grid, 1024, 2, 8, 8},    {pl_kgrid_iq3xxs, pl_iq3xxs_grid, 256, 3, 4, 4},
        {pl_kgrid_iq3s, pl_iq3s_grid, 512, 3, 4, 4},     {pl_kgrid_iq1s, pl_iq1s_grid, 2048, 2, 8, 8},
    };
    for (size_t c = 0; c < sizeof cbs / sizeof cbs[0]; c++) {
        int value_of[8];
        for (int l = 0; l < 8; l++) value_of[l] = -1000;
        int bad = 0;
        for (int r = 0; r < cbs[c].rows; r++)
            for (int k = 0; k < cbs[c].per; k++) {
                const int l = (cbs[c].kgrid[r] >> (cbs[c].bits * k)) & ((1 << cbs[c].bits) - 1);
                const int v = cbs[c].bytes == 8 ? (int8_t)(((const uint64_t *)cbs[c].grid)[r] >> (8 * k))
                                                : (uint8_t)(((const uint32_t *)cbs[c].grid)[r] >> (8 * k));
                if (value_of[l] == -1000) value_of[l] = v;
                else if (value_of[l] != v) bad++;
            }
        for (int l = 1; l < 8; l++)
            if (value_of[l] != -1000 && value_of[l - 1] != -1000 && value_of[l] <= value_of[l - 1]) bad++;
        CHECK_MSG(bad == 0, "codebook %zu: kgrid and decode grid disagree (%d)", c, bad);
    }
    for (int cb = 0; cb < PL_IQ_CB_COUNT; cb++) {
        const pl_iq_grid *g = pl_iq_grid_get((pl_iq_codebook)cb);
        CHECK(g != NULL);
        if (!g) continue;
        const uint16_t *kg = cb == PL_IQ_CB_IQ2XXS ? pl_kgrid_iq2xxs : cb == PL_IQ_CB_IQ2XS ? pl_kgrid_iq2xs
                             : cb == PL_IQ_CB_IQ1S ? pl_kgrid_iq1s : cb == PL_IQ_CB_IQ2S ? pl_kgrid_iq2s
                             : cb == PL_IQ_CB_IQ3XXS ? pl_kgrid_iq3xxs : pl_kgrid_iq3s;
        const int rows = cb == PL_IQ_CB_IQ2XXS || cb == PL_IQ_CB_IQ3XXS ? 256 : cb == PL_IQ_CB_IQ2XS || cb == PL_IQ_CB_IQ3S ? 512
                         : cb == PL_IQ_CB_IQ1S ? 2048 : 1024;
        int bad = 0;
        for (int r = 0; r < rows; r++) bad += g->map[kg[r]] != r;
        /* an off-grid pattern's list is non-empty and names real rows */
        const int32_t m = g->map[1]; /* pattern 1 (one level 1, rest 0) */
        if (m < 0) {
            const uint16_t *nb = g->neighbours - m - 1;
            bad += nb[0] == 0;
            for (int j = 1; j <= nb[0]; j++) bad += nb[j] >= rows;
        }
        CHECK_MSG(bad == 0, "codebook %d: search map inconsistent (%d)", cb, bad);
    }
}

int main(void) {
    pl_rng_seed(&rng, 42);
    check_refusals();
    check_codebooks();
    check_round_trips();
    TEST_DONE();
}
