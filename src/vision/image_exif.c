/*
 * image_exif.c -- EXIF orientation: read from a JPEG's APP1 segment (only
 * IFD0's Orientation tag, 0x0112; every offset checked against the
 * segment) and applied to decoded pixels by flipping/rotating them.
 */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "vision/image_codecs.h"

static uint32_t rd16(const uint8_t *p, int be) { return be ? (uint32_t)p[0] << 8 | p[1] : (uint32_t)p[1] << 8 | p[0]; }

static uint32_t rd32(const uint8_t *p, int be) {
    return be ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
              : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

int pl_exif_orientation(const uint8_t *app1, size_t len) {
    if (!app1 || len < 6 || memcmp(app1, "Exif\0\0", 6) != 0) return 1;
    const uint8_t *t = app1 + 6; /* the TIFF header: offsets below count from here */
    const size_t n = len - 6;
    if (n < 8) return 1;
    int be;
    if (!memcmp(t, "II*\0", 4)) be = 0;
    else if (!memcmp(t, "MM\0*", 4)) be = 1;
    else return 1;
    const uint32_t ifd = rd32(t + 4, be);
    if (ifd > n || n - ifd < 2) return 1;
    const uint32_t count = rd16(t + ifd, be);
    if ((n - ifd - 2) / 12 < count) return 1;
    for (uint32_t i = 0; i < count; i++) {
        const uint8_t *e = t + ifd + 2 + 12 * (size_t)i;
        if (rd16(e, be) != 0x0112) continue;
        /* SHORT, one value, held in the first two bytes of the value field */
        if (rd16(e + 2, be) != 3 || rd32(e + 4, be) != 1) return 1;
        const uint32_t v = rd16(e + 8, be);
        return v >= 1 && v <= 8 ? (int)v : 1;
    }
    return 1;
}

static void swap3(uint8_t *a, uint8_t *b) {
    uint8_t t[3];
    memcpy(t, a, 3);
    memcpy(a, b, 3);
    memcpy(b, t, 3);
}

static void flip_h(pl_image_rgb8 *img) {
    const size_t w = img->width;
    for (size_t y = 0; y < img->height; y++) {
        uint8_t *row = img->rgb + 3 * w * y;
        for (size_t x = 0; x < w / 2; x++) swap3(row + 3 * x, row + 3 * (w - 1 - x));
    }
}

static void flip_v(pl_image_rgb8 *img) {
    const size_t stride = 3 * (size_t)img->width;
    for (size_t y = 0; y < img->height / 2; y++) {
        uint8_t *a = img->rgb + stride * y, *b = img->rgb + stride * (img->height - 1 - y);
        for (size_t i = 0; i < stride; i++) {
            uint8_t t = a[i];
            a[i] = b[i];
            b[i] = t;
        }
    }
}

pocketllm_status pl_image_orient(pl_image_rgb8 *img, int orientation) {
    switch (orientation) {
    case 2: flip_h(img); return POCKETLLM_OK;
    case 3: flip_h(img); flip_v(img); return POCKETLLM_OK;
    case 4: flip_v(img); return POCKETLLM_OK;
    case 5: case 6: case 7: case 8: break;
    default: return POCKETLLM_OK;
    }
    /* the sides swap: dest (x, y), dest width = source height */
    const size_t w = img->width, h = img->height;
    uint8_t *dst = pl_image_pixels_alloc(img->height, img->width, 3, 0);
    if (!dst) return POCKETLLM_ERR_NO_MEMORY;
    for (size_t y = 0; y < w; y++) {
        uint8_t *drow = dst + 3 * h * y;
        for (size_t x = 0; x < h; x++) {
            size_t sx, sy;
            switch (orientation) {
            case 5: sx = y; sy = x; break;                 /* transpose */
            case 6: sx = y; sy = h - 1 - x; break;         /* 90 degrees clockwise */
            case 7: sx = w - 1 - y; sy = h - 1 - x; break; /* transverse */
            default: sx = w - 1 - y; sy = x; break;        /* 8: 90 degrees counter-clockwise */
            }
            memcpy(drow + 3 * x, img->rgb + 3 * (w * sy + sx), 3);
        }
    }
    free(img->rgb);
    img->rgb = dst;
    img->width = (uint32_t)h;
    img->height = (uint32_t)w;
    return POCKETLLM_OK;
}
