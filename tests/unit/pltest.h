/*
 * pltest.h -- the smallest test harness that reports well: CHECK macros
 * that print file, line and the failed expression, counted per program.
 */
#ifndef PL_TEST_H
#define PL_TEST_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int pl_test_failures;
static int pl_test_checks;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        pl_test_checks++;                                                            \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            pl_test_failures++;                                                      \
        }                                                                            \
    } while (0)

#define CHECK_MSG(cond, ...)                                                         \
    do {                                                                             \
        pl_test_checks++;                                                            \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                            \
            fputc('\n', stderr);                                                     \
            pl_test_failures++;                                                      \
        }                                                                            \
    } while (0)

#define CHECK_EQ_U64(a, b)                                                                          \
    do {                                                                                            \
        uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                                            \
        CHECK_MSG(a_ == b_, "%" PRIu64 " != %" PRIu64, a_, b_);                                     \
    } while (0)

#define CHECK_STR(a, b)                                                                             \
    do {                                                                                            \
        const char *a_ = (a), *b_ = (b);                                                            \
        CHECK_MSG(a_ && b_ && strcmp(a_, b_) == 0, "'%s' != '%s'", a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
    } while (0)

/* PL_TEST_SKIP_GENERIC=1: the CPU tests leave out the generic table (said
 * on stderr).  The ARM64 test runs them under qemu on three CPU models; the
 * generic table's code and its scalar quant tier are the same on each, so
 * it runs on the strictest (a Cortex-A53) only, and the other two spend
 * their time on the NEON table, whose quant tier is what differs. */
static inline bool pl_test_skip_generic(void) {
    const char *e = getenv("PL_TEST_SKIP_GENERIC");
    if (!e || strcmp(e, "1")) return false;
    fprintf(stderr, "note: PL_TEST_SKIP_GENERIC=1: the generic table is not tested in this run\n");
    return true;
}

/* End of main: summary line, exit status 1 on any failure. */
#define TEST_DONE()                                                                             \
    do {                                                                                        \
        fprintf(stderr, "%s: %d checks, %d failed\n", __FILE__, pl_test_checks, pl_test_failures); \
        return pl_test_failures ? 1 : 0;                                                        \
    } while (0)

#endif
