/*
 * image_webp.c -- WebP to RGB8 with libwebp: lossy (VP8) and lossless
 * (VP8L), with or without alpha (composited onto white, see
 * image_decode.h).  An animation is refused: which frame would be "the"
 * image is not ours to guess.
 */
#include <stdlib.h>
#include <string.h>

#include <webp/decode.h>

#include "base/error.h"
#include "vision/image_codecs.h"

static const char *status_text(VP8StatusCode s) {
    switch (s) {
    case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
    case VP8_STATUS_INVALID_PARAM: return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR: return "bitstream error";
    case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature";
    case VP8_STATUS_SUSPENDED: return "suspended";
    case VP8_STATUS_USER_ABORT: return "aborted";
    case VP8_STATUS_NOT_ENOUGH_DATA: return "not enough data";
    default: return "error";
    }
}

static pocketllm_status fail_status(VP8StatusCode s) {
    if (s == VP8_STATUS_NOT_ENOUGH_DATA) return pl_fail(POCKETLLM_ERR_FORMAT, "truncated WebP");
    if (s == VP8_STATUS_OUT_OF_MEMORY) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "WebP: out of memory");
    return pl_fail(POCKETLLM_ERR_FORMAT, "corrupt WebP: %s", status_text(s));
}

pocketllm_status pl_image_decode_webp(const uint8_t *data, size_t len, pl_image_rgb8 *out) {
    WebPDecoderConfig cfg;
    if (!WebPInitDecoderConfig(&cfg)) return pl_fail(POCKETLLM_ERR_INTERNAL, "libwebp version mismatch");
    VP8StatusCode s = WebPGetFeatures(data, len, &cfg.input);
    if (s != VP8_STATUS_OK) return fail_status(s);
    if (cfg.input.has_animation)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "animated WebP is not supported (a still image expected)");
    if (cfg.input.width <= 0 || cfg.input.height <= 0)
        return pl_fail(POCKETLLM_ERR_FORMAT, "WebP image is %dx%d", cfg.input.width, cfg.input.height);
    pocketllm_status st = pl_image_check_size("WebP", (uint64_t)cfg.input.width, (uint64_t)cfg.input.height, 1);
    if (st != POCKETLLM_OK) return st;
    const uint32_t w = (uint32_t)cfg.input.width, h = (uint32_t)cfg.input.height;
    const unsigned channels = cfg.input.has_alpha ? 4 : 3;
    uint8_t *px = pl_image_pixels_alloc(w, h, channels, 0);
    if (!px) return POCKETLLM_ERR_NO_MEMORY;
    cfg.output.colorspace = channels == 4 ? MODE_RGBA : MODE_RGB; /* not premultiplied */
    cfg.output.is_external_memory = 1;
    cfg.output.u.RGBA.rgba = px;
    cfg.output.u.RGBA.stride = (int)(w * channels);
    cfg.output.u.RGBA.size = (size_t)w * h * channels;
    s = WebPDecode(data, len, &cfg);
    WebPFreeDecBuffer(&cfg.output);
    if (s != VP8_STATUS_OK) {
        free(px);
        return fail_status(s);
    }
    if (channels == 4) pl_image_flatten_rgba(px, px, (size_t)w * h);
    pl_image_take(out, px, w, h, channels == 4);
    return POCKETLLM_OK;
}
