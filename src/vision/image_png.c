/*
 * image_png.c -- PNG to RGB8 with libpng: every colour type and depth
 * (palette, gray, gray+alpha, RGB, RGBA; 1 to 16 bits), tRNS, interlaced
 * or not.  libpng expands everything to RGB or RGBA of 8 or 16 bits; the
 * rest is ours, with ImageMagick's arithmetic (measured over every value,
 * so the tests compare with it exactly): 16-bit samples become
 * floor(v / 257) -- after compositing, which happens at 16 bits -- and
 * alpha is composited onto white (see image_decode.h for why).
 *
 * A non-interlaced image is read a row at a time into its RGB8 rows; an
 * interlaced one needs the whole image at libpng's width first (up to 8
 * bytes a pixel, for 16-bit RGBA), converted in place after.
 *
 * libpng reports errors by longjmp to png_jmpbuf; ours records the message
 * first.  Its warnings (ancillary-chunk trouble, which it survives) are
 * ignored.
 */
#include <png.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "vision/image_codecs.h"

typedef struct {
    const uint8_t *data;
    size_t len, pos;
    char msg[256];
} png_source;

static void on_error(png_structp png, png_const_charp msg) {
    png_source *s = png_get_error_ptr(png);
    snprintf(s->msg, sizeof s->msg, "corrupt PNG: %s", msg);
    png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp msg) { (void)png, (void)msg; }

static void on_read(png_structp png, png_bytep dst, png_size_t n) {
    png_source *s = png_get_io_ptr(png);
    if (n > s->len - s->pos) {
        snprintf(s->msg, sizeof s->msg, "truncated PNG");
        png_longjmp(png, 1);
    }
    memcpy(dst, s->data + s->pos, n);
    s->pos += n;
}

static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

/* n pixels of `ch` channels (3 or 4) of 8 or 16 bits (big-endian) to RGB8
 * over white.  In place too (dst == src): pixel k is read whole before its
 * 3 bytes are written at 3k, at or before where it was read. */
static void to_rgb8(const uint8_t *src, uint8_t *dst, size_t n, unsigned ch, int d16) {
    if (!d16 && ch == 3) {
        if (dst != src) memcpy(dst, src, 3 * n);
        return;
    }
    if (!d16) {
        pl_image_flatten_rgba(src, dst, n);
        return;
    }
    for (size_t k = 0; k < n; k++, src += 2 * ch, dst += 3) {
        uint32_t v[4] = {0, 0, 0, 0};
        for (unsigned c = 0; c < ch; c++) v[c] = (uint32_t)src[2 * c] << 8 | src[2 * c + 1];
        if (ch == 4) {
            const uint64_t a = v[3], white = 65535ull * (65535ull - a);
            /* rounded at 16 bits, then floored to 8, as ImageMagick does */
            for (unsigned c = 0; c < 3; c++) v[c] = (uint32_t)((v[c] * a + white + 32767u) / 65535u);
        }
        for (unsigned c = 0; c < 3; c++) dst[c] = (uint8_t)(v[c] / 257u);
    }
}

pocketllm_status pl_image_decode_png(const uint8_t *data, size_t len, pl_image_rgb8 *out) {
    /* the size, from IHDR (the first chunk), before libpng allocates anything
     * for the image: signature, length, "IHDR", width, height */
    if (len < 24) return pl_fail(POCKETLLM_ERR_FORMAT, "truncated PNG");
    if (memcmp(data + 12, "IHDR", 4) != 0) return pl_fail(POCKETLLM_ERR_FORMAT, "corrupt PNG: IHDR is not the first chunk");
    pocketllm_status st = pl_image_check_size("PNG", be32(data + 16), be32(data + 20), 1);
    if (st != POCKETLLM_OK) return st;

    png_source src = {.data = data, .len = len};
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &src, on_error, on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!info) {
        png_destroy_read_struct(png ? &png : NULL, NULL, NULL);
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "cannot start libpng");
    }
    /* written after setjmp and read after a longjmp: volatile */
    uint8_t *volatile pixels = NULL;
    png_bytep *volatile rows = NULL; /* interlaced: every row of the image */
    uint8_t *volatile row = NULL;     /* not: the one row being read */
    if (setjmp(png_jmpbuf(png))) {
        free(pixels);
        free(rows);
        free(row);
        png_destroy_read_struct(&png, &info, NULL);
        return pl_fail(POCKETLLM_ERR_FORMAT, "%s", src.msg[0] ? src.msg : "corrupt PNG");
    }
    png_set_read_fn(png, &src, on_read);
    png_set_user_limits(png, PL_IMAGE_MAX_SIDE, PL_IMAGE_MAX_SIDE);
    png_read_info(png, info);
    png_uint_32 w, h;
    int depth, color, interlace;
    png_get_IHDR(png, info, &w, &h, &depth, &color, &interlace, NULL, NULL);
    png_set_expand(png); /* palette -> RGB, gray < 8 bits -> 8, tRNS -> alpha */
    if (!(color & PNG_COLOR_MASK_COLOR)) png_set_gray_to_rgb(png);
    const int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    const unsigned channels = png_get_channels(png, info);
    const int d16 = png_get_bit_depth(png, info) == 16;
    const size_t px_bytes = (size_t)channels * (d16 ? 2 : 1);
    if ((channels != 3 && channels != 4) || png_get_rowbytes(png, info) != (size_t)w * px_bytes) {
        snprintf(src.msg, sizeof src.msg, "PNG decodes to %u channels", channels);
        png_longjmp(png, 1);
    }
    /* zeroed: rows that a corrupt file leaves unwritten stay defined */
    if (passes > 1) {
        pixels = pl_image_pixels_alloc(w, h, (unsigned)px_bytes, 1);
        rows = pixels ? malloc(sizeof(png_bytep) * h) : NULL;
    } else {
        pixels = pl_image_pixels_alloc(w, h, 3, 1);
        row = pixels ? malloc(px_bytes * w) : NULL;
    }
    if (!rows && !row) { /* (a failed pl_image_pixels_alloc has said why) */
        const int had_pixels = pixels != NULL;
        free(pixels);
        png_destroy_read_struct(&png, &info, NULL);
        return had_pixels ? pl_fail(POCKETLLM_ERR_NO_MEMORY, "cannot allocate a PNG's rows") : POCKETLLM_ERR_NO_MEMORY;
    }
    if (passes > 1) {
        for (png_uint_32 y = 0; y < h; y++) rows[y] = pixels + (size_t)w * px_bytes * y;
        png_read_image(png, rows);
    } else {
        for (png_uint_32 y = 0; y < h; y++) {
            png_read_row(png, row, NULL);
            to_rgb8(row, pixels + (size_t)w * 3 * y, w, channels, d16);
        }
    }
    /* (the chunks after the image are not read: a file cut after its
     * pixels still decodes) */
    png_destroy_read_struct(&png, &info, NULL);
    free(rows);
    free(row);
    const int trim = passes > 1 && px_bytes != 3;
    if (trim) to_rgb8(pixels, pixels, (size_t)w * h, channels, d16);
    pl_image_take(out, pixels, w, h, trim);
    return POCKETLLM_OK;
}
