/*
 * test_compare.c -- the agreement rules used against llama.cpp can fail:
 * a decidable argmax disagreement is caught, a near-tie is skipped and
 * counted, token sequences part only after a reference near-tie; a
 * position skipped for a router near-tie leaves the argmax rule and the
 * difference bound, and nothing else does.
 */
#include <math.h>

#include "../common/compare.h"
#include "pltest.h"

int main(void) {
    /* 3 positions x 4 vocab */
    float ref[12] = {0, 5, 1, 2,    /* clear winner 1 (margin 3) */
                     3, 3.05f, 0, 0, /* near-tie (margin 0.05) */
                     9, 0, 0, 1};   /* clear winner 0 */
    float ours[12] = {0, 5.1f, 1, 2, 3.1f, 3, 0, 0, 9, 0, 0, 1};
    logit_report r;
    compare_logits(ours, ref, 3, 4, 0.1, NULL, &r);
    CHECK_EQ_U64(r.decidable, 2);
    CHECK_EQ_U64(r.skipped, 1);
    CHECK_EQ_U64(r.agree, 2);
    CHECK(fabs(r.max_abs_diff - 0.1) < 1e-6);
    CHECK(fabs(r.ref_range - 9) < 1e-9);
    ours[8] = 0, ours[11] = 10; /* now position 2 disagrees */
    compare_logits(ours, ref, 3, 4, 0.1, NULL, &r);
    CHECK_EQ_U64(r.agree, 1);
    CHECK_EQ_U64(r.first_disagree, 2);
    /* with no threshold the tie is decidable and disagrees too */
    compare_logits(ours, ref, 3, 4, 0.0, NULL, &r);
    CHECK_EQ_U64(r.decidable, 3);
    /* routers parted at a near-tie at position 2: its difference (9) is
     * reported apart and its argmax not judged; position 1 still counts */
    const unsigned char skip[3] = {0, 0, 1};
    compare_logits(ours, ref, 3, 4, 0.0, skip, &r);
    CHECK_EQ_U64(r.router_skipped, 1);
    CHECK_EQ_U64(r.decidable, 2);
    CHECK_EQ_U64(r.agree, 1);
    CHECK_EQ_U64(r.first_disagree, 1);
    CHECK(fabs(r.max_abs_diff - 0.1) < 1e-6 && fabs(r.max_abs_diff_skipped - 9) < 1e-6);

    int32_t a[5] = {1, 2, 3, 4, 5}, b[5] = {1, 2, 3, 9, 9};
    double margins[5] = {1, 1, 1, 0.01, 1};
    token_report t;
    compare_tokens(a, 5, b, 5, NULL, 0.1, &t);
    CHECK(!t.agree && t.first_diff == 3);
    compare_tokens(a, 5, b, 5, margins, 0.1, &t);
    CHECK(t.agree && t.first_tie == 3 && t.compared == 3);
    compare_tokens(a, 5, a, 4, NULL, 0.1, &t);
    CHECK(!t.agree); /* one stopped early */
    compare_tokens(a, 5, a, 5, NULL, 0.1, &t);
    CHECK(t.agree && t.compared == 5);
    TEST_DONE();
}
