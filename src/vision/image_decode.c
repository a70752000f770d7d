/*
 * image_decode.c -- the image decoders' front door: tells JPEG, PNG and
 * WebP apart by their signatures, reads files within a size limit, and
 * holds the helpers the three decoders share (size checks, allocation,
 * compositing onto white).
 */
#include "vision/image_decode.h"

#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/error.h"
#include "base/file.h"
#include "vision/image_codecs.h"

pocketllm_status pl_image_check_size(const char *format, uint64_t width, uint64_t height, int limit_pixels) {
    if (width == 0 || height == 0)
        return pl_fail(POCKETLLM_ERR_FORMAT, "%s image is %llux%llu", format, (unsigned long long)width,
                       (unsigned long long)height);
    if (width > PL_IMAGE_MAX_SIDE || height > PL_IMAGE_MAX_SIDE)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "%s image is %llux%llu: a side over the %u-pixel limit", format,
                       (unsigned long long)width, (unsigned long long)height, PL_IMAGE_MAX_SIDE);
    if (limit_pixels && width * height > PL_IMAGE_MAX_PIXELS)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "%s image is %llux%llu = %llu pixels, over the limit of %llu (%llu Mi)",
                       format, (unsigned long long)width, (unsigned long long)height,
                       (unsigned long long)(width * height), PL_IMAGE_MAX_PIXELS, PL_IMAGE_MAX_PIXELS >> 20);
    return POCKETLLM_OK;
}

uint8_t *pl_image_pixels_alloc(uint32_t width, uint32_t height, unsigned channels, int zero) {
    uint64_t n;
    if (!pl_mul_u64(width, height, &n) || !pl_mul_u64(n, channels, &n) || n > SIZE_MAX) {
        pl_fail(POCKETLLM_ERR_NO_MEMORY, "image %ux%u does not fit memory", width, height);
        return NULL;
    }
    uint8_t *p = zero ? calloc((size_t)n, 1) : malloc((size_t)n);
    if (!p) pl_fail(POCKETLLM_ERR_NO_MEMORY, "cannot allocate a %ux%u image", width, height);
    return p;
}

void pl_image_take(pl_image_rgb8 *out, uint8_t *px, uint32_t w, uint32_t h, int trim) {
    if (trim) {
        uint8_t *shrunk = realloc(px, (size_t)w * h * 3);
        if (shrunk) px = shrunk; /* else the larger buffer serves as well */
    }
    out->width = w;
    out->height = h;
    out->rgb = px;
}

void pl_image_flatten_rgba(const uint8_t *src, uint8_t *dst, size_t n) {
    /* floored, not rounded: ImageMagick's -flatten gives exactly this
     * (measured over every colour and alpha value), so the tests compare
     * with it exactly.  In place (dst == src) too: pixel i is read whole
     * before its RGB is written at 3i, at or before where it was read
     * (4i), so nothing unread is overwritten. */
    for (size_t i = 0; i < n; i++, src += 4, dst += 3) {
        const unsigned a = src[3], w = 255u * (255u - a);
        const uint8_t r = (uint8_t)((src[0] * a + w) / 255u);
        const uint8_t g = (uint8_t)((src[1] * a + w) / 255u);
        const uint8_t b = (uint8_t)((src[2] * a + w) / 255u);
        dst[0] = r;
        dst[1] = g;
        dst[2] = b;
    }
}

/* names for formats we recognise but do not decode, for a clearer refusal */
static const char *other_format(const uint8_t *d, size_t len) {
    if (len >= 6 && (!memcmp(d, "GIF87a", 6) || !memcmp(d, "GIF89a", 6))) return "GIF";
    if (len >= 4 && (!memcmp(d, "II*\0", 4) || !memcmp(d, "MM\0*", 4))) return "TIFF";
    if (len >= 2 && !memcmp(d, "BM", 2)) return "BMP";
    if (len >= 12 && !memcmp(d + 4, "ftyp", 4) && (!memcmp(d + 8, "avif", 4) || !memcmp(d + 8, "heic", 4)))
        return "AVIF/HEIC";
    return NULL;
}

pocketllm_status pl_image_decode(const void *data, size_t len, pl_image_rgb8 *out) {
    memset(out, 0, sizeof *out);
    const uint8_t *d = data;
    if (!d || len == 0) return pl_fail(POCKETLLM_ERR_FORMAT, "empty image data (JPEG, PNG or WebP expected)");
    pocketllm_status st;
    if (len >= 3 && d[0] == 0xFF && d[1] == 0xD8 && d[2] == 0xFF) {
        st = pl_image_decode_jpeg(d, len, out);
    } else if (len >= 8 && !memcmp(d, "\x89PNG\r\n\x1a\n", 8)) {
        st = pl_image_decode_png(d, len, out);
    } else if (len >= 12 && !memcmp(d, "RIFF", 4) && !memcmp(d + 8, "WEBP", 4)) {
        st = pl_image_decode_webp(d, len, out);
    } else {
        const char *other = other_format(d, len);
        if (other)
            return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "%s images are not supported (JPEG, PNG or WebP expected)",
                           other);
        return pl_fail(POCKETLLM_ERR_FORMAT, "not an image (JPEG, PNG or WebP expected)");
    }
    if (st != POCKETLLM_OK) pl_image_rgb8_free(out);
    return st;
}

pocketllm_status pl_image_load(const char *path, pl_image_rgb8 *out) {
    memset(out, 0, sizeof *out);
    char *buf;
    size_t n;
    pocketllm_status st = pl_read_file(path, (size_t)PL_IMAGE_MAX_FILE_BYTES, &buf, &n);
    if (st) return st;
    st = pl_image_decode(buf, n, out);
    free(buf);
    if (st != POCKETLLM_OK) pl_error_prefix(path);
    return st;
}
