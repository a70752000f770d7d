/*
 * image_decode.h -- image files in, 8-bit RGB out: JPEG (libjpeg-turbo),
 * PNG (libpng) and WebP (libwebp), told apart by their first bytes, never
 * by a file name.
 *
 * What comes out is, byte for byte, what ImageMagick 6 gives for the same
 * file with `convert -define jpeg:dct-method=islow F -auto-orient +repage
 * -background white -flatten -depth 8 rgb:-` (tests/oracle/
 * test_image_decode.sh).  libmtmd's stb_image decodes JPEG with its own
 * IDCT (a few levels apart) and drops alpha; we follow ImageMagick.
 *   - grayscale is replicated to R = G = B; CMYK and YCCK JPEGs (Adobe's
 *     inverted CMYK, as Photoshop and ImageMagick write them) become RGB
 *     as R = (1 - C)(1 - K), i.e. round(C' K' / 255) on the stored
 *     (inverted) samples;
 *   - transparency is composited onto WHITE, not dropped (floor((c a +
 *     255 (255 - a)) / 255), ImageMagick's -flatten): a transparent
 *     region of a screenshot or logo is almost always a white page's, and
 *     dropping alpha shows whatever colour the encoder left under it
 *     (often black), which changes what the model sees;
 *   - 16-bit samples become floor(v / 257) (after compositing, which is
 *     done at 16 bits), as ImageMagick's -depth 8 does;
 *   - a JPEG's EXIF orientation (1-8) is applied to the pixels.
 *
 * Limits, checked from the header before any large allocation: a side of
 * 0 or over PL_IMAGE_MAX_SIDE is refused; over PL_IMAGE_MAX_PIXELS, a JPEG
 * is decoded at 1/2, 1/4 or 1/8 scale by libjpeg (the first that fits; the
 * pixels then differ from a full decode, by design) and a PNG or WebP is
 * refused.  Corrupt or truncated data gets an error, never a crash.
 */
#ifndef PL_IMAGE_DECODE_H
#define PL_IMAGE_DECODE_H

#include <stddef.h>

#include "pocketllm.h"
#include "vision/image_prep.h"

/* the most pixels a decoded image may have (64 Mi: the largest JPEG,
 * 65535 a side, fits at 1/8 scale) */
#define PL_IMAGE_MAX_PIXELS (64ull << 20)
/* the largest image file pl_image_load reads (256 MiB) */
#define PL_IMAGE_MAX_FILE_BYTES (256ull << 20)

/* Decode a JPEG, PNG or WebP held in memory into 8-bit RGB (free with
 * pl_image_rgb8_free).  On failure *out is empty and the status and
 * pocketllm_last_error() say why, in one line. */
pocketllm_status pl_image_decode(const void *data, size_t len, pl_image_rgb8 *out);

/* Read and decode a file (refuses files over PL_IMAGE_MAX_FILE_BYTES, with
 * a message); errors are prefixed with the path. */
pocketllm_status pl_image_load(const char *path, pl_image_rgb8 *out);

#endif
