/*
 * test_sampler_draw.c -- the sampler's draw by selection picks what
 * sorting the candidates and walking their cumulative weights picks: for
 * random weights (with many equal logits, zero weights and a single
 * candidate) and random points r across the whole range, past the end
 * included.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "pltest.h"
#include "runtime/sampler_draw.h"

int main(void) {
    pl_rng rng;
    pl_rng_seed(&rng, 42);
    const size_t sizes[] = {1, 2, 3, 7, 64, 1000, 20000};
    int diff = 0, draws = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        const size_t n = sizes[si];
        pl_wcand *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *orig = malloc(n * sizeof *orig);
        for (int trial = 0; trial < 40; trial++) {
            double total = 0;
            for (size_t i = 0; i < n; i++) {
                /* few distinct logits so ties are common; some weights vanish */
                const float logit = (float)(pl_rng_uniform_f64(&rng) < 0.5 ? (int)(pl_rng_uniform_f64(&rng) * 8)
                                                                           : pl_rng_uniform_f64(&rng) * 30 - 20);
                orig[i] = (pl_wcand){trial % 5 == 0 && i % 3 == 0 ? 0.0 : exp((double)logit - 8), logit, (int32_t)(n - i)};
                total += orig[i].w;
            }
            for (int k = 0; k < 50; k++) {
                const double r = k == 49 ? total * 1.5 : pl_rng_uniform_f64(&rng) * total;
                memcpy(a, orig, n * sizeof *a);
                memcpy(b, orig, n * sizeof *b);
                const int32_t want = b[pl_draw_sorted(b, n, r)].id, got = a[pl_draw_select(a, n, r)].id;
                diff += want != got;
                draws++;
            }
        }
        free(a), free(b), free(orig);
    }
    CHECK_MSG(diff == 0, "%d of %d draws by selection differ from the sorted walk", diff, draws);
    TEST_DONE();
}
