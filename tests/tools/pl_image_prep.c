/*
 * pl_image_prep.c -- PocketLLM's Qwen3-VL image preprocessing
 * (src/vision/image_prep.c) against libmtmd's, for shell tests:
 *
 *   pl_image_prep RGB_FILE WIDTH HEIGHT REF.f32 REF_NX REF_NY
 *                 [--min-tokens N] [--max-tokens N] [--mean M] [--std S]
 *                 [--max-diff D] [--out OURS.f32]
 *
 * RGB_FILE: the decoded image, raw RGB8 (WIDTH x HEIGHT x 3 bytes, as
 * `pl_mtmd preprocess --out-rgb` writes it); REF.f32: libmtmd's
 * preprocessed image, REF_NX x REF_NY pixels of three floats.  Runs our
 * preprocessing with the given token limits (defaults 8 and 4096) and
 * mean/std (default 0.5, all channels), prints the sizes, the largest
 * absolute difference and how many values differ.  Exit 0 when the sizes
 * match and no value differs by more than D (default 1/255), 1 otherwise,
 * 2 on bad input or a refusal of our preprocessing (its message on stderr).
 *
 *   pl_image_prep selftest
 *       what needs no reference: the refusals (a 0 side, a side over the
 *       limit, token limits out of range, an aspect ratio beyond the
 *       budget), each with its status and message, and a 100-megapixel
 *       image (10000 x 10000) resized within the budget (2048 x 2048)
 *       while the peak memory grows by no more than the output and a few
 *       rows (getrusage's peak resident size).  Exit 0 when all hold.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* getrusage */
#endif
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "pocketllm.h"
#include "vision/image_prep.h"

#define TOOL_NAME "pl_image_prep"
#include "tool_io.h"

/* a count: a whole number >= 0 */
static unsigned long parse_u(const char *s) { return (unsigned long)parse_l(s, 0, LONG_MAX); }

static int st_fails;

/* one refusal: preprocessing a w x h image with p fails with `want` and a
 * message containing `words` */
static void expect_refusal(uint32_t w, uint32_t h, const pl_qwen3vl_prep *p, pocketllm_status want,
                           const char *words) {
    uint8_t px[3] = {0};
    pl_image_rgb8 src = {w, h, px};
    pl_image_f32 out = {1, 1, NULL};
    pocketllm_status st = pl_qwen3vl_preprocess(&src, p, &out);
    const char *msg = st ? pocketllm_last_error() : "";
    bool good = st == want && strstr(msg, words) && !out.rgb && out.width == 0;
    printf("%s: %ux%u tokens %u..%u: status %d (want %d) '%s'\n", good ? "ok" : "FAIL", w, h, p->min_tokens,
           p->max_tokens, (int)st, (int)want, msg);
    if (!good) st_fails++;
    pl_image_f32_free(&out);
}

static long peak_rss_kib(void) {
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) ? -1 : ru.ru_maxrss;
}

static int selftest(void) {
    pl_qwen3vl_prep p, q;
    pl_qwen3vl_prep_default(&p);
    expect_refusal(0, 10, &p, POCKETLLM_ERR_INVALID_ARGUMENT, "no pixels");
    expect_refusal(10, 0, &p, POCKETLLM_ERR_INVALID_ARGUMENT, "no pixels");
    expect_refusal(PL_IMAGE_MAX_SIDE + 1, 4, &p, POCKETLLM_ERR_UNSUPPORTED, "side over");
    expect_refusal(4, UINT32_MAX, &p, POCKETLLM_ERR_UNSUPPORTED, "side over");
    /* 2^20 x 1: 2^20 x 32 aligned, floored to 2097152 x 32 -- 65536 tokens */
    expect_refusal(PL_IMAGE_MAX_SIDE, 1, &p, POCKETLLM_ERR_UNSUPPORTED, "too elongated");
    q = p, q.min_tokens = 0;
    expect_refusal(64, 64, &q, POCKETLLM_ERR_INVALID_ARGUMENT, "token limit of 0");
    q = p, q.max_tokens = 0;
    expect_refusal(64, 64, &q, POCKETLLM_ERR_INVALID_ARGUMENT, "token limit of 0");
    q = p, q.max_tokens = 1u << 21; /* 2^21 x 1024 pixels: over int32 */
    expect_refusal(64, 64, &q, POCKETLLM_ERR_INVALID_ARGUMENT, "too large");
    q = p, q.std[1] = 0;
    expect_refusal(64, 64, &q, POCKETLLM_ERR_INVALID_ARGUMENT, "unusable");
    q = p, q.patch_size = 0;
    expect_refusal(64, 64, &q, POCKETLLM_ERR_INVALID_ARGUMENT, "out of range");

    /* 100 megapixels, within the budget, in bounded memory */
    const uint32_t side = 10000;
    pl_image_rgb8 big;
    if (pl_image_rgb8_alloc(&big, side, side)) {
        printf("FAIL: cannot allocate the %ux%u test image: %s\n", side, side, pocketllm_last_error());
        return 1;
    }
    for (size_t i = 0, n = (size_t)side * side * 3; i < n; i++) big.rgb[i] = (uint8_t)(i * 2654435761u >> 13);
    const long before = peak_rss_kib();
    pl_image_f32 out;
    pocketllm_status st = pl_qwen3vl_preprocess(&big, &p, &out);
    const long after = peak_rss_kib();
    if (st) {
        printf("FAIL: %ux%u refused: %s\n", side, side, pocketllm_last_error());
        st_fails++;
    } else {
        const long out_kib = (long)((size_t)out.width * out.height * 3 * sizeof(float) / 1024);
        /* the output, a ring of filter rows and the tables: 16 MiB of slack */
        const bool good = out.width == 2048 && out.height == 2048 && before > 0 && after - before <= out_kib + 16384;
        printf("%s: %ux%u -> %ux%u; peak memory grew %ld KiB (output %ld KiB, input %zu KiB)\n", good ? "ok" : "FAIL",
               side, side, out.width, out.height, after - before, out_kib, (size_t)side * side * 3 / 1024);
        if (!good) st_fails++;
        pl_image_f32_free(&out);
    }
    pl_image_rgb8_free(&big);
    printf("selftest: %d failed\n", st_fails);
    return st_fails ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc == 2 && !strcmp(argv[1], "selftest")) return selftest();
    if (argc < 7)
        die("%s", "usage: pl_image_prep RGB_FILE WIDTH HEIGHT REF.f32 REF_NX REF_NY [--min-tokens N] "
                  "[--max-tokens N] [--mean M] [--std S] [--max-diff D] [--out OURS.f32]");
    pl_qwen3vl_prep p;
    pl_qwen3vl_prep_default(&p);
    double max_diff = 1.0 / 255.0;
    const char *ours_path = NULL;
    for (int i = 7; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 >= argc) die("'%s' needs a value", a);
        const char *v = argv[++i];
        if (!strcmp(a, "--min-tokens")) p.min_tokens = (uint32_t)parse_u(v);
        else if (!strcmp(a, "--max-tokens")) p.max_tokens = (uint32_t)parse_u(v);
        else if (!strcmp(a, "--mean")) p.mean[0] = p.mean[1] = p.mean[2] = strtof(v, NULL);
        else if (!strcmp(a, "--std")) p.std[0] = p.std[1] = p.std[2] = strtof(v, NULL);
        else if (!strcmp(a, "--max-diff")) max_diff = strtod(v, NULL);
        else if (!strcmp(a, "--out")) ours_path = v;
        else die("unknown argument '%s'", a);
    }
    const unsigned long w = parse_u(argv[2]), h = parse_u(argv[3]);
    const unsigned long ref_nx = parse_u(argv[5]), ref_ny = parse_u(argv[6]);
    if (w > PL_IMAGE_MAX_SIDE || h > PL_IMAGE_MAX_SIDE) die("%s: side too large", argv[1]);
    size_t n_rgb, n_ref;
    uint8_t *rgb = slurp(argv[1], &n_rgb);
    if (n_rgb != (size_t)w * h * 3) {
        fprintf(stderr, "pl_image_prep: %s has %zu bytes, %lux%lu RGB8 needs %zu\n", argv[1], n_rgb, w, h,
                (size_t)w * h * 3);
        return 2;
    }
    float *ref = slurp(argv[4], &n_ref);
    if (n_ref != (size_t)ref_nx * ref_ny * 3 * sizeof(float)) {
        fprintf(stderr, "pl_image_prep: %s has %zu bytes, %lux%lu x 3 floats need %zu\n", argv[4], n_ref, ref_nx,
                ref_ny, (size_t)ref_nx * ref_ny * 3 * sizeof(float));
        return 2;
    }
    pl_image_rgb8 src = {(uint32_t)w, (uint32_t)h, rgb};
    pl_image_f32 out;
    pocketllm_status st = pl_qwen3vl_preprocess(&src, &p, &out);
    if (st) {
        fprintf(stderr, "pl_image_prep: our preprocessing refused %lux%lu: %s\n", w, h, pocketllm_last_error());
        return 2;
    }
    printf("image %lux%lu tokens %u..%u: ours %ux%u, libmtmd %lux%lu\n", w, h, p.min_tokens, p.max_tokens, out.width,
           out.height, ref_nx, ref_ny);
    if (ours_path) {
        FILE *f = fopen(ours_path, "wb");
        size_t n = (size_t)out.width * out.height * 3;
        if (!f || fwrite(out.rgb, sizeof(float), n, f) != n || fclose(f)) die("cannot write %s", ours_path);
    }
    if (out.width != ref_nx || out.height != ref_ny) {
        printf("MISMATCH: size ours %ux%u, libmtmd %lux%lu\n", out.width, out.height, ref_nx, ref_ny);
        return 1;
    }
    size_t n = (size_t)ref_nx * ref_ny * 3, n_diff = 0, worst = 0;
    double md = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)out.rgb[i] - (double)ref[i]);
        if (!(d <= md)) { /* (a NaN on either side counts as the worst) */
            md = isnan(d) ? INFINITY : d;
            worst = i;
        }
        if (out.rgb[i] != ref[i]) n_diff++;
    }
    printf("max_abs_diff %.9g (%zu of %zu values differ", md, n_diff, n);
    if (n_diff)
        printf("; worst at pixel (%zu, %zu) channel %zu: ours %.9g, libmtmd %.9g", worst / 3 % ref_nx,
               worst / 3 / ref_nx, worst % 3, (double)out.rgb[worst], (double)ref[worst]);
    printf(")\n");
    pl_image_f32_free(&out);
    free(rgb);
    free(ref);
    if (md > max_diff) {
        printf("MISMATCH: max abs difference %.9g over the bound %.9g\n", md, max_diff);
        return 1;
    }
    return 0;
}
