/*
 * pl_vision_encode.c -- PocketLLM's Qwen3-VL vision tower
 * (src/vision/vision_*.c) as a command, for shell tests against libmtmd:
 *
 *   pl_vision_encode TEXT.gguf MMPROJ.gguf (--rgb RAW W H | --image F) --out FILE
 *                    [--min-tokens N] [--max-tokens N] [--threads N] [--device D]
 *       RAW: the decoded image as raw RGB8 (W x H x 3 bytes, as `pl_mtmd
 *       preprocess --out-rgb` writes it), or F: an image file
 *       (pl_image_load).  Preprocesses it with the mmproj's parameters and
 *       the token limits, encodes it, writes the output embeddings as raw
 *       f32 (n_tokens rows of n_embd: the projection, then each DeepStack
 *       set -- libmtmd's layout, as `pl_mtmd encode --out` writes it) and
 *       prints "n_tokens N", "nx X", "ny Y" (the merged grid), "n_embd E",
 *       "n_deepstack D"; the encode time goes to stderr.
 *
 *   pl_vision_encode compare OURS.f32 REF.f32 N_EMBD N_SETS [--min-cos C] [--max-abs A]
 *       two such outputs (rows of N_EMBD x N_SETS floats): for each set
 *       (0 the projection, then DeepStack), the smallest cosine similarity
 *       of a token's vector, the largest absolute difference and the
 *       largest reference magnitude.  Exit 0 when every cosine is >= C
 *       (default 0.9999) and every difference <= A (default: no bound), 1
 *       otherwise, 2 on bad input.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pocketllm.h"
#include "vision/image_decode.h"
#include "vision/image_prep.h"
#include "vision/vision.h"

#define TOOL_NAME "pl_vision_encode"
#include "tool_io.h"

static float *read_f32(const char *path, size_t *n) {
    size_t bytes;
    float *p = slurp(path, &bytes);
    if (bytes % 4) die("%s is not a file of floats", path);
    *n = bytes / 4;
    return p;
}

static int cmd_compare(int argc, char **argv) {
    if (argc < 6) die("%s", "usage: pl_vision_encode compare OURS.f32 REF.f32 N_EMBD N_SETS [--min-cos C] [--max-abs A]");
    double min_cos = 0.9999, max_abs = INFINITY;
    for (int i = 6; i < argc; i++) {
        if (!strcmp(argv[i], "--min-cos") && i + 1 < argc) min_cos = atof(argv[++i]);
        else if (!strcmp(argv[i], "--max-abs") && i + 1 < argc) max_abs = atof(argv[++i]);
        else die("unknown argument '%s'", argv[i]);
    }
    size_t no, nr;
    float *o = read_f32(argv[2], &no), *r = read_f32(argv[3], &nr);
    const long e = parse_l(argv[4], 1, 1 << 20), sets = parse_l(argv[5], 1, 64), w = e * sets;
    if (no != nr || nr % (size_t)w || nr == 0) {
        fprintf(stderr, "pl_vision_encode: %zu floats against the reference's %zu (rows of %ld)\n", no, nr, w);
        return 1;
    }
    const size_t n_tok = nr / (size_t)w;
    int bad = 0;
    for (long s = 0; s < sets; s++) {
        double worst_cos = 1.0, worst_abs = 0.0, ref_max = 0.0;
        size_t at = 0;
        for (size_t t = 0; t < n_tok; t++) {
            const float *a = o + t * (size_t)w + (size_t)(s * e), *b = r + t * (size_t)w + (size_t)(s * e);
            double ab = 0, aa = 0, bb = 0;
            for (long k = 0; k < e; k++) {
                if (!isfinite(a[k])) worst_abs = INFINITY;
                ab += (double)a[k] * b[k];
                aa += (double)a[k] * a[k];
                bb += (double)b[k] * b[k];
                const double d = fabs((double)a[k] - b[k]);
                if (d > worst_abs) worst_abs = d;
                if (fabs(b[k]) > ref_max) ref_max = fabs(b[k]);
            }
            const double cs = aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : (aa == bb ? 1.0 : 0.0);
            if (!(cs >= worst_cos)) worst_cos = cs, at = t;
        }
        const bool ok = worst_cos >= min_cos && worst_abs <= max_abs;
        bad |= !ok;
        printf("set %ld (%s): tokens %zu min_cos %.7f (token %zu) max_abs %.3g ref_max %.3g%s\n", s,
               s == 0 ? "projection" : "deepstack", n_tok, worst_cos, at, worst_abs, ref_max, ok ? "" : "  FAIL");
    }
    free(o);
    free(r);
    return bad;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int fail_lib(const char *what, pocketllm_status st) {
    fprintf(stderr, "pl_vision_encode: %s: %s (status %d)\n", what, pocketllm_last_error(), (int)st);
    return 2;
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "compare")) return cmd_compare(argc, argv);
    if (argc < 3)
        die("%s", "usage: pl_vision_encode TEXT.gguf MMPROJ.gguf (--rgb RAW W H | --image F) --out FILE "
                  "[--min-tokens N] [--max-tokens N] [--threads N] [--device D]  |  compare ...");
    const char *rgb = NULL, *image = NULL, *out = NULL, *device = NULL;
    long w = 0, h = 0, min_tok = 0, max_tok = 0, threads = 0;
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--rgb") && i + 3 < argc) {
            rgb = argv[++i];
            w = parse_l(argv[++i], 1, PL_IMAGE_MAX_SIDE);
            h = parse_l(argv[++i], 1, PL_IMAGE_MAX_SIDE);
        } else if (!strcmp(argv[i], "--image") && i + 1 < argc) image = argv[++i];
        else if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(argv[i], "--min-tokens") && i + 1 < argc) min_tok = parse_l(argv[++i], 1, 1 << 24);
        else if (!strcmp(argv[i], "--max-tokens") && i + 1 < argc) max_tok = parse_l(argv[++i], 1, 1 << 24);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = parse_l(argv[++i], 0, 1024);
        else if (!strcmp(argv[i], "--device") && i + 1 < argc) device = argv[++i];
        else die("unknown or incomplete argument '%s'", argv[i]);
    }
    if (!out || (!rgb) == (!image)) die("%s", "needs --out FILE and one of --rgb RAW W H / --image F");

    pl_image_rgb8 src = {0};
    pocketllm_status st;
    if (image) {
        if ((st = pl_image_load(image, &src))) return fail_lib("decode", st);
    } else {
        if ((st = pl_image_rgb8_alloc(&src, (uint32_t)w, (uint32_t)h))) return fail_lib("image", st);
        FILE *f = fopen(rgb, "rb");
        if (!f) die("cannot open %s", rgb);
        const size_t bytes = (size_t)w * (size_t)h * 3;
        if (fread(src.rgb, 1, bytes, f) != bytes || fgetc(f) != EOF) die("%s is not W x H x 3 bytes", rgb);
        fclose(f);
    }

    pocketllm_model_params mp = pocketllm_model_default_params();
    mp.n_threads = (int)threads;
    mp.device = device;
    pocketllm_model *text = NULL;
    if ((st = pocketllm_model_open(argv[1], &mp, &text))) return fail_lib("text model", st);
    pl_vision *v = NULL;
    if ((st = pl_vision_open(text, argv[2], &v))) return fail_lib("mmproj", st);
    const pl_vision_hparams *hp = pl_vision_hparams_of(v);

    pl_qwen3vl_prep prep;
    pl_vision_prep_params(v, (uint32_t)min_tok, (uint32_t)max_tok, &prep);
    pl_image_f32 img = {0};
    if ((st = pl_qwen3vl_preprocess(&src, &prep, &img))) return fail_lib("preprocess", st);
    pl_image_rgb8_free(&src);
    const int64_t g = hp->patch_size * hp->n_merge, nx = img.width / g, ny = img.height / g;
    const int64_t width = pl_vision_out_width(v), n_tok = nx * ny;
    float *emb = malloc((size_t)(n_tok * width) * sizeof *emb);
    if (!emb) die("%s", "out of memory");
    const double t0 = now_ms();
    if ((st = pl_vision_encode(v, &img, emb))) return fail_lib("encode", st);
    const double t1 = now_ms();
    fprintf(stderr, "pl_vision_encode: %ux%u pixels, %lld tokens, encode %.1f ms\n", img.width, img.height,
            (long long)n_tok, t1 - t0);
    FILE *f = fopen(out, "wb");
    if (!f) die("cannot create %s", out);
    if (fwrite(emb, sizeof *emb, (size_t)(n_tok * width), f) != (size_t)(n_tok * width) || fclose(f))
        die("cannot write %s", out);
    printf("n_tokens %lld\nnx %lld\nny %lld\nn_embd %lld\nn_deepstack %lld\n", (long long)n_tok, (long long)nx,
           (long long)ny, (long long)width, (long long)hp->n_deepstack);
    free(emb);
    pl_image_f32_free(&img);
    pl_vision_close(v);
    pocketllm_model_close(text);
    return 0;
}
