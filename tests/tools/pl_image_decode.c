/*
 * pl_image_decode.c -- PocketLLM's image decoding (src/vision/image_decode.c)
 * for shell tests:
 *
 *   pl_image_decode FILE [--out RAW] [--ref RAW] [--prep]
 *
 * decodes FILE (JPEG, PNG or WebP) with pl_image_load, prints "width W"
 * and "height H", and with --out writes the pixels as raw RGB8 (W x H x 3
 * bytes, row by row).  --ref compares them with another decode of the same
 * size (raw RGB8) and prints "max_abs_diff D" and "n_diff N" (bytes that
 * differ); a reference of another size is an error.  --prep also runs
 * Qwen3-VL's preprocessing with the default budget on the result and
 * prints "prep_width" / "prep_height".  Exit 0 on success, 1 when the
 * image is refused (the one-line message on stderr), 2 on bad usage or a
 * file that cannot be read or written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pocketllm.h"
#include "vision/image_decode.h"
#include "vision/image_prep.h"

static int compare(const pl_image_rgb8 *img, const char *ref) {
    const size_t n = (size_t)img->width * img->height * 3;
    FILE *f = fopen(ref, "rb");
    if (!f) {
        fprintf(stderr, "pl_image_decode: cannot open %s\n", ref);
        return 2;
    }
    unsigned char buf[1 << 16];
    size_t at = 0, got, n_diff = 0;
    int max = 0;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) {
        for (size_t i = 0; i < got && at + i < n; i++) {
            const int d = abs((int)buf[i] - (int)img->rgb[at + i]);
            if (d) n_diff++;
            if (d > max) max = d;
        }
        at += got;
    }
    fclose(f);
    if (at != n) {
        fprintf(stderr, "pl_image_decode: %s has %zu bytes, the image %zu\n", ref, at, n);
        return 2;
    }
    printf("max_abs_diff %d\nn_diff %zu\n", max, n_diff);
    return 0;
}

int main(int argc, char **argv) {
    const char *path = NULL, *out = NULL, *ref = NULL;
    int prep = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(argv[i], "--ref") && i + 1 < argc) ref = argv[++i];
        else if (!strcmp(argv[i], "--prep")) prep = 1;
        else if (!path && argv[i][0] != '-') path = argv[i];
        else {
            fprintf(stderr, "usage: pl_image_decode FILE [--out RAW] [--ref RAW] [--prep]\n");
            return 2;
        }
    }
    if (!path) {
        fprintf(stderr, "usage: pl_image_decode FILE [--out RAW] [--ref RAW] [--prep]\n");
        return 2;
    }
    pl_image_rgb8 img;
    if (pl_image_load(path, &img) != POCKETLLM_OK) {
        fprintf(stderr, "pl_image_decode: %s\n", pocketllm_last_error());
        return 1;
    }
    printf("width %u\nheight %u\n", img.width, img.height);
    int rc = 0;
    if (out) {
        FILE *f = fopen(out, "wb");
        const size_t n = (size_t)img.width * img.height * 3;
        if (!f || fwrite(img.rgb, 1, n, f) != n || fclose(f) != 0) {
            fprintf(stderr, "pl_image_decode: cannot write %s\n", out);
            rc = 2;
        }
    }
    if (ref && rc == 0) rc = compare(&img, ref);
    if (prep && rc == 0) {
        pl_qwen3vl_prep p;
        pl_qwen3vl_prep_default(&p);
        pl_image_f32 f;
        if (pl_qwen3vl_preprocess(&img, &p, &f) != POCKETLLM_OK) {
            fprintf(stderr, "pl_image_decode: preprocessing: %s\n", pocketllm_last_error());
            rc = 1;
        } else {
            printf("prep_width %u\nprep_height %u\n", f.width, f.height);
            pl_image_f32_free(&f);
        }
    }
    pl_image_rgb8_free(&img);
    return rc;
}
