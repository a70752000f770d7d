/*
 * image_jpeg.c -- JPEG to RGB8 with libjpeg-turbo: RGB/YCbCr, grayscale,
 * CMYK and YCCK, the EXIF orientation applied, libjpeg's DCT scaling for
 * images over PL_IMAGE_MAX_PIXELS.
 *
 * The decode parameters are ImageMagick's with `-define
 * jpeg:dct-method=islow`: the accurate integer IDCT (JDCT_ISLOW, which
 * libjpeg-turbo computes bit for bit alike on every CPU, SIMD or not;
 * ImageMagick's own default, JDCT_FLOAT, does not) and fancy upsampling
 * (libjpeg's default), so the tests compare with it exactly.
 *
 * libjpeg reports errors by calling error_exit, which must not return: ours
 * longjmps back here (never exit()).  Its warnings are ignored, except
 * "premature end of file" (libjpeg would pad the image with grey): a
 * truncated JPEG is an error.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jerror.h>
#include <jpeglib.h>

#include "base/error.h"
#include "vision/image_codecs.h"

/* libjpeg's own working memory (a progressive JPEG's coefficients, 2 bytes
 * a sample of the full-size image even when scaled): a file that needs
 * more is refused rather than allocated */
#define JPEG_MAX_WORK_BYTES (1024l << 20)
/* a progressive JPEG may hold thousands of tiny scans that each cost a
 * pass over the image; no encoder writes more than a few dozen */
#define JPEG_MAX_SCANS 1000

typedef struct {
    struct jpeg_error_mgr pub;
    struct jpeg_progress_mgr progress;
    jmp_buf jump;
    char msg[JMSG_LENGTH_MAX + 64];
} jpeg_guard;

static void on_error_exit(j_common_ptr c) {
    jpeg_guard *g = (jpeg_guard *)c->err;
    if (c->err->msg_code == JERR_NO_BACKING_STORE || c->err->msg_code == JERR_OUT_OF_MEMORY) {
        snprintf(g->msg, sizeof g->msg, "JPEG needs more than %ld MiB to decode", JPEG_MAX_WORK_BYTES >> 20);
    } else {
        char buf[JMSG_LENGTH_MAX];
        c->err->format_message(c, buf);
        snprintf(g->msg, sizeof g->msg, "corrupt JPEG: %s", buf);
    }
    longjmp(g->jump, 1);
}

static void on_emit_message(j_common_ptr c, int level) {
    jpeg_guard *g = (jpeg_guard *)c->err;
    if (level < 0 && c->err->msg_code == JWRN_JPEG_EOF) {
        snprintf(g->msg, sizeof g->msg, "truncated JPEG");
        longjmp(g->jump, 1);
    }
}

static void on_output_message(j_common_ptr c) { (void)c; }

static void on_progress(j_common_ptr c) {
    j_decompress_ptr d = (j_decompress_ptr)c;
    if (d->input_scan_number > JPEG_MAX_SCANS) {
        jpeg_guard *g = (jpeg_guard *)c->err;
        snprintf(g->msg, sizeof g->msg, "JPEG has more than %d scans", JPEG_MAX_SCANS);
        longjmp(g->jump, 1);
    }
}

/* the EXIF orientation from the first APP1 segment that is EXIF */
static int orientation_of(j_decompress_ptr d) {
    for (jpeg_saved_marker_ptr m = d->marker_list; m; m = m->next)
        if (m->marker == JPEG_APP0 + 1 && m->data_length >= 6 && !memcmp(m->data, "Exif\0\0", 6))
            return pl_exif_orientation(m->data, m->data_length);
    return 1;
}

/* Adobe CMYK, stored inverted (as Photoshop, and every other writer, does;
 * ImageMagick reads every CMYK JPEG so): R = (255 - C')... with C' = 255 -
 * C, so R = C * K / 255 on the stored samples, rounded */
static void cmyk_row_to_rgb(const uint8_t *src, uint8_t *dst, size_t n) {
    for (size_t i = 0; i < n; i++, src += 4, dst += 3) {
        const unsigned k = src[3];
        dst[0] = (uint8_t)((src[0] * k + 127u) / 255u);
        dst[1] = (uint8_t)((src[1] * k + 127u) / 255u);
        dst[2] = (uint8_t)((src[2] * k + 127u) / 255u);
    }
}

pocketllm_status pl_image_decode_jpeg(const uint8_t *data, size_t len, pl_image_rgb8 *out) {
    struct jpeg_decompress_struct d;
    jpeg_guard g;
    memset(&d, 0, sizeof d);
    memset(&g, 0, sizeof g);
    d.err = jpeg_std_error(&g.pub);
    g.pub.error_exit = on_error_exit;
    g.pub.emit_message = on_emit_message;
    g.pub.output_message = on_output_message;
    /* written after setjmp and read after a longjmp: volatile */
    uint8_t *volatile pixels = NULL;
    uint8_t *volatile row = NULL;
    volatile int created = 0;
    if (setjmp(g.jump)) {
        free(pixels);
        free(row);
        if (created) jpeg_destroy_decompress(&d);
        return pl_fail(POCKETLLM_ERR_FORMAT, "%s", g.msg);
    }
    jpeg_create_decompress(&d);
    created = 1;
    d.mem->max_memory_to_use = JPEG_MAX_WORK_BYTES;
    g.progress.progress_monitor = on_progress;
    d.progress = &g.progress;
    jpeg_save_markers(&d, JPEG_APP0 + 1, 0xFFFF);
    jpeg_mem_src(&d, data, (unsigned long)len);
    jpeg_read_header(&d, TRUE);

    pocketllm_status st = pl_image_check_size("JPEG", d.image_width, d.image_height, 0);
    if (st != POCKETLLM_OK) {
        jpeg_destroy_decompress(&d);
        return st;
    }
    const int cmyk = d.jpeg_color_space == JCS_CMYK || d.jpeg_color_space == JCS_YCCK;
    d.out_color_space = cmyk ? JCS_CMYK : JCS_RGB; /* (grayscale and YCbCr to RGB by libjpeg) */
    d.dct_method = JDCT_ISLOW;
    d.do_fancy_upsampling = TRUE;
    d.quantize_colors = FALSE;
    /* Over the pixel limit, libjpeg's DCT scaling decodes at 1/2, 1/4 or
     * 1/8 of each side (the first that fits): cheaper than decoding in
     * full and resizing, and within memory -- but the pixels then differ
     * from a full-size decode (each is an average of the block's, by the
     * scaled IDCT).  The largest JPEG (65535 a side) fits at 1/8. */
    for (unsigned denom = 1; denom <= 8; denom *= 2) {
        d.scale_num = 1;
        d.scale_denom = denom;
        jpeg_calc_output_dimensions(&d);
        if ((unsigned long long)d.output_width * d.output_height <= PL_IMAGE_MAX_PIXELS) break;
    }
    st = pl_image_check_size("JPEG", d.output_width, d.output_height, 1);
    if (st != POCKETLLM_OK) {
        jpeg_destroy_decompress(&d);
        return st;
    }
    const uint32_t w = d.output_width, h = d.output_height;
    pixels = pl_image_pixels_alloc(w, h, 3, 0);
    if (cmyk && pixels) row = pl_image_pixels_alloc(w, 1, 4, 0);
    if (!pixels || (cmyk && !row)) {
        free(pixels);
        jpeg_destroy_decompress(&d);
        return POCKETLLM_ERR_NO_MEMORY;
    }
    jpeg_start_decompress(&d);
    if (d.output_components != (cmyk ? 4 : 3)) {
        snprintf(g.msg, sizeof g.msg, "JPEG decodes to %d components", d.output_components);
        longjmp(g.jump, 1);
    }
    while (d.output_scanline < h) {
        const size_t y = d.output_scanline;
        JSAMPROW dst = cmyk ? row : pixels + 3 * (size_t)w * y;
        if (jpeg_read_scanlines(&d, &dst, 1) != 1) {
            snprintf(g.msg, sizeof g.msg, "truncated JPEG");
            longjmp(g.jump, 1);
        }
        if (cmyk) cmyk_row_to_rgb(row, pixels + 3 * (size_t)w * y, w);
    }
    const int orientation = orientation_of(&d);
    /* every row is in: what follows the last scan (normally just EOI) is
     * not read, so a file cut right after its pixels still decodes */
    jpeg_destroy_decompress(&d);
    free(row);
    pl_image_take(out, pixels, w, h, 0);
    st = pl_image_orient(out, orientation);
    if (st != POCKETLLM_OK) pl_image_rgb8_free(out);
    return st;
}
