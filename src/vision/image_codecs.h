/*
 * image_codecs.h -- what the image decoders (image_jpeg.c, image_png.c,
 * image_webp.c) share with the dispatcher (image_decode.c) and each other.
 * Internal to src/vision.
 */
#ifndef PL_IMAGE_CODECS_H
#define PL_IMAGE_CODECS_H

#include <stddef.h>
#include <stdint.h>

#include "pocketllm.h"
#include "vision/image_decode.h"

/* Each decoder: data starts with its format's signature; on success *out
 * holds the image (malloc'd), on failure *out is empty. */
pocketllm_status pl_image_decode_jpeg(const uint8_t *data, size_t len, pl_image_rgb8 *out);
pocketllm_status pl_image_decode_png(const uint8_t *data, size_t len, pl_image_rgb8 *out);
pocketllm_status pl_image_decode_webp(const uint8_t *data, size_t len, pl_image_rgb8 *out);

/* Refuse a header's size: a 0 side, a side over PL_IMAGE_MAX_SIDE, or (when
 * `limit_pixels`) more than PL_IMAGE_MAX_PIXELS; `format` names the file
 * kind in the message. */
pocketllm_status pl_image_check_size(const char *format, uint64_t width, uint64_t height, int limit_pixels);

/* width x height x `channels` bytes, malloc'd (not zeroed when !zero), or
 * NULL with an error recorded. */
uint8_t *pl_image_pixels_alloc(uint32_t width, uint32_t height, unsigned channels, int zero);

/* Hand a decoded image to *out.  `trim`: its w x h RGB pixels are at the
 * front of a larger buffer (converted in place), which gives back the rest
 * when it can. */
void pl_image_take(pl_image_rgb8 *out, uint8_t *px, uint32_t w, uint32_t h, int trim);

/* Composite `n` RGBA pixels onto white: c' = floor((c a + 255 (255 - a))
 * / 255), RGB into dst, which may be src (then the n RGB pixels end up at
 * the front of the buffer). */
void pl_image_flatten_rgba(const uint8_t *src, uint8_t *dst, size_t n);

/* The orientation (1-8) that an APP1 segment's payload ("Exif\0\0" then a
 * TIFF header) gives in IFD0's Orientation tag; 1 when the payload is not
 * EXIF, has no such tag or is malformed (every offset is bounds-checked). */
int pl_exif_orientation(const uint8_t *app1, size_t len);

/* Apply EXIF orientation 2-8 to *img (rotating/flipping; 5-8 swap the
 * sides and take a second buffer for the move).  1 and other values leave
 * it as it is. */
pocketllm_status pl_image_orient(pl_image_rgb8 *img, int orientation);

#endif
