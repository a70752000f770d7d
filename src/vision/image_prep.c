/*
 * image_prep.c -- Qwen3-VL's image preprocessing, bit-compatible with
 * llama.cpp v0.4.0's libmtmd (see image_prep.h for the steps).
 *
 * Every floating-point expression below is evaluated in the type and order
 * libmtmd evaluates it (float for the size rules and the normalisation,
 * double for the filter weights), and never fused into an FMA: the filter
 * polynomial is written one operation per statement (clang contracts only
 * within a statement; GCC contracts nothing in ISO C mode), so an ARM or
 * FMA build computes the same weights as libmtmd's x86-64 one.
 */
#include "vision/image_prep.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/error.h"

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* the fixed-point weights: 32 - 8 (pixel bits) - 2 (headroom) fraction bits */
#define PREC_BITS 22

void pl_qwen3vl_prep_default(pl_qwen3vl_prep *p) {
    p->patch_size = 16;
    p->n_merge = 2;
    p->min_tokens = 8;
    p->max_tokens = 4096;
    for (int c = 0; c < 3; c++) {
        p->mean[c] = 0.5f;
        p->std[c] = 0.5f;
    }
}

static pocketllm_status check_side(uint32_t width, uint32_t height) {
    if (width == 0 || height == 0)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "image: %ux%u has no pixels", width, height);
    if (width > PL_IMAGE_MAX_SIDE || height > PL_IMAGE_MAX_SIDE)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "image: %ux%u has a side over %u pixels", width, height,
                       PL_IMAGE_MAX_SIDE);
    return POCKETLLM_OK;
}

/* bytes of a width x height x 3 buffer of elem-byte values, or false */
static bool image_bytes(uint32_t width, uint32_t height, size_t elem, size_t *bytes) {
    uint64_t n;
    if (!pl_mul_u64(width, height, &n) || !pl_mul_u64(n, 3 * (uint64_t)elem, &n) || n > SIZE_MAX) return false;
    *bytes = (size_t)n;
    return true;
}

pocketllm_status pl_image_rgb8_alloc(pl_image_rgb8 *img, uint32_t width, uint32_t height) {
    memset(img, 0, sizeof *img);
    pocketllm_status st = check_side(width, height);
    if (st) return st;
    size_t bytes;
    if (!image_bytes(width, height, 1, &bytes))
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "image: %ux%u does not fit memory", width, height);
    img->rgb = calloc(bytes, 1);
    if (!img->rgb) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "image: cannot allocate %ux%u", width, height);
    img->width = width;
    img->height = height;
    return POCKETLLM_OK;
}

void pl_image_rgb8_free(pl_image_rgb8 *img) {
    free(img->rgb);
    memset(img, 0, sizeof *img);
}

void pl_image_f32_free(pl_image_f32 *img) {
    free(img->rgb);
    memset(img, 0, sizeof *img);
}

static pocketllm_status check_params(const pl_qwen3vl_prep *p, int *align, int *min_px, int *max_px) {
    if (p->patch_size == 0 || p->n_merge == 0 || p->patch_size > 1024 || p->n_merge > 64)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "image: patch size %u / merge %u out of range", p->patch_size,
                       p->n_merge);
    int64_t a = (int64_t)p->patch_size * p->n_merge, area = a * a;
    if (p->min_tokens == 0 || p->max_tokens == 0)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "image: a token limit of 0 (min %u, max %u)", p->min_tokens,
                       p->max_tokens);
    /* libmtmd keeps the pixel limits in an int */
    if ((int64_t)p->min_tokens * area > INT32_MAX || (int64_t)p->max_tokens * area > INT32_MAX)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT,
                       "image: a token limit (min %u, max %u) is too large: at most %lld tokens of %lldx%lld pixels",
                       p->min_tokens, p->max_tokens, (long long)(INT32_MAX / area), (long long)a, (long long)a);
    for (int c = 0; c < 3; c++)
        if (!isfinite(p->mean[c]) || !isfinite(p->std[c]) || p->std[c] == 0.0f)
            return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "image: mean %g / std %g of channel %d unusable",
                           (double)p->mean[c], (double)p->std[c], c);
    *align = (int)a;
    *min_px = (int)((int64_t)p->min_tokens * area);
    *max_px = (int)((int64_t)p->max_tokens * area);
    return POCKETLLM_OK;
}

/* libmtmd's calc_size_preserved_ratio (no longest-edge rule), in its float
 * arithmetic; the products in int64 (libmtmd's int would overflow past
 * 2^31 pixels) */
static int round_by(float x, int f) { return (int)roundf(x / (float)f) * f; }
static int ceil_by(float x, int f) { return (int)ceilf(x / (float)f) * f; }
static int floor_by(float x, int f) { return (int)floorf(x / (float)f) * f; }

pocketllm_status pl_qwen3vl_target_size(uint32_t width, uint32_t height, const pl_qwen3vl_prep *p,
                                        uint32_t *out_width, uint32_t *out_height) {
    *out_width = *out_height = 0;
    int align = 1, min_px = 0, max_px = 0;
    pocketllm_status st = check_side(width, height);
    if (st) return st;
    if ((st = check_params(p, &align, &min_px, &max_px))) return st;
    const int w = (int)width, h = (int)height;
    int w_bar = round_by((float)w, align), h_bar = round_by((float)h, align);
    if (w_bar < align) w_bar = align;
    if (h_bar < align) h_bar = align;
    if ((int64_t)h_bar * w_bar > max_px) {
        const float beta = sqrtf((float)h * (float)w / (float)max_px);
        h_bar = floor_by((float)h / beta, align);
        w_bar = floor_by((float)w / beta, align);
        if (h_bar < align) h_bar = align;
        if (w_bar < align) w_bar = align;
    } else if ((int64_t)h_bar * w_bar < min_px) {
        const float beta = sqrtf((float)min_px / ((float)h * (float)w));
        h_bar = ceil_by((float)h * beta, align);
        w_bar = ceil_by((float)w * beta, align);
    }
    const int64_t budget = 2 * (int64_t)(min_px > max_px ? min_px : max_px);
    if ((int64_t)w_bar * h_bar > budget)
        return pl_fail(POCKETLLM_ERR_UNSUPPORTED,
                       "image: %ux%u is too elongated: it would be resized to %dx%d, %lld tokens, over twice the "
                       "budget of %u",
                       width, height, w_bar, h_bar, (long long)w_bar * h_bar / ((int64_t)align * align),
                       p->min_tokens > p->max_tokens ? p->min_tokens : p->max_tokens);
    *out_width = (uint32_t)w_bar;
    *out_height = (uint32_t)h_bar;
    return POCKETLLM_OK;
}

/* ---- Pillow's separable resampling (bicubic), as libmtmd's resize_pillow */

/* the bicubic kernel with a = -0.5, one operation a statement (no FMA) */
static double bicubic(double x) {
    const double a = -0.5;
    if (x < 0.0) x = -x;
    if (x < 1.0) {
        double t = (a + 2.0) * x;
        t = t - (a + 3.0);
        t = t * x;
        t = t * x;
        return t + 1;
    }
    if (x < 2.0) {
        double t = x - 5;
        t = t * x;
        t = t + 8;
        t = t * x;
        t = t - 4;
        return t * a;
    }
    return 0.0;
}

/* one axis' filter: for output pixel i, inputs bounds[2i] .. +bounds[2i+1]
 * with fixed-point weights weights[i * ksize ..] */
typedef struct filter {
    int ksize;
    int *bounds;
    int32_t *weights;
} filter;

static void filter_free(filter *f) {
    free(f->bounds);
    free(f->weights);
    memset(f, 0, sizeof *f);
}

static pocketllm_status filter_init(filter *f, int in_size, int out_size) {
    memset(f, 0, sizeof *f);
    const double support_base = 2.0; /* bicubic */
    double scale = (double)in_size / out_size, filterscale = scale;
    if (filterscale < 1.0) filterscale = 1.0;
    const double support = support_base * filterscale;
    const int ksize = (int)ceil(support) * 2 + 1;
    uint64_t n;
    if (!pl_mul_u64((uint64_t)out_size, (uint64_t)ksize, &n) || n > SIZE_MAX / sizeof(int32_t))
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "image: resize filter %d -> %d too large", in_size, out_size);
    f->ksize = ksize;
    f->bounds = malloc(2 * (size_t)out_size * sizeof *f->bounds);
    f->weights = malloc((size_t)n * sizeof *f->weights);
    double *pre = malloc((size_t)ksize * sizeof *pre);
    if (!f->bounds || !f->weights || !pre) {
        free(pre);
        filter_free(f);
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "image: cannot allocate a resize filter %d -> %d", in_size, out_size);
    }
    const double fxp = ldexp(1.0, PREC_BITS);
    const double ss = 1.0 / filterscale;
    for (int xx = 0; xx < out_size; xx++) {
        const double center = (xx + 0.5) * scale;
        double ww = 0.0;
        int xmin = (int)(center - support + 0.5);
        if (xmin < 0) xmin = 0;
        int xmax = (int)(center + support + 0.5);
        if (xmax > in_size) xmax = in_size;
        xmax -= xmin;
        int x;
        for (x = 0; x < xmax; x++) {
            double d = x + xmin - center + 0.5;
            double w = bicubic(d * ss);
            pre[x] = w;
            ww += w;
        }
        for (x = 0; x < xmax; x++)
            if (ww != 0.0) pre[x] /= ww;
        for (; x < ksize; x++) pre[x] = 0;
        f->bounds[2 * xx] = xmin;
        f->bounds[2 * xx + 1] = xmax;
        /* round half away from zero, by adding +-0.5 and truncating */
        for (x = 0; x < ksize; x++) {
            double r = pre[x] * fxp;
            r = r + (pre[x] < 0 ? -0.5 : 0.5);
            f->weights[(size_t)xx * ksize + x] = (int32_t)r;
        }
    }
    free(pre);
    return POCKETLLM_OK;
}

/* (the sums stay far inside int32: |weights| sum to under 1.5 x 2^22, and
 * 255 x 1.5 x 2^22 + 2^21 < 2^31) */
static inline uint8_t clip8(int32_t ss) {
    if (ss < 0) return 0;
    ss >>= PREC_BITS;
    return ss > 255 ? 255 : (uint8_t)ss;
}

/* one row, horizontally: in_row (RGB8) -> out_row (out_nx RGB8) */
static void resample_row(const uint8_t *in_row, uint8_t *out_row, int out_nx, const filter *f) {
    for (int xx = 0; xx < out_nx; xx++) {
        const int xmin = f->bounds[2 * xx], xcnt = f->bounds[2 * xx + 1];
        const int32_t *k = f->weights + (size_t)xx * f->ksize;
        const uint8_t *p = in_row + (size_t)xmin * 3;
        int32_t s0 = 1 << (PREC_BITS - 1), s1 = s0, s2 = s0;
        for (int x = 0; x < xcnt; x++, p += 3) {
            s0 += p[0] * k[x];
            s1 += p[1] * k[x];
            s2 += p[2] * k[x];
        }
        out_row[3 * xx + 0] = clip8(s0);
        out_row[3 * xx + 1] = clip8(s1);
        out_row[3 * xx + 2] = clip8(s2);
    }
}

/* the normalisation of each byte value, per channel, as libmtmd computes it:
 * (float)v / 255.0f, minus the mean, over the std */
typedef struct norm_lut {
    float v[3][256];
} norm_lut;

static void norm_init(norm_lut *l, const pl_qwen3vl_prep *p) {
    for (int c = 0; c < 3; c++)
        for (int v = 0; v < 256; v++) {
            float x = (float)v / 255.0f;
            x = x - p->mean[c];
            l->v[c][v] = x / p->std[c];
        }
}

static void norm_row(const norm_lut *l, const uint8_t *row, int n_px, float *out) {
    for (int i = 0; i < n_px; i++) {
        out[3 * i + 0] = l->v[0][row[3 * i + 0]];
        out[3 * i + 1] = l->v[1][row[3 * i + 1]];
        out[3 * i + 2] = l->v[2][row[3 * i + 2]];
    }
}

/* Resize src to new_w x new_h (Pillow bicubic: horizontal pass, then
 * vertical, each to uint8) and write it normalised into `out` (out_w floats
 * x 3 a row) at (off_x, off_y).  The horizontal results live in a ring of
 * ksize rows: the vertical filter's window only moves down. */
static pocketllm_status resize_into(const pl_image_rgb8 *src, int new_w, int new_h, const norm_lut *lut, float *out,
                                    int out_w, int off_x, int off_y) {
    const int in_w = (int)src->width, in_h = (int)src->height;
    const bool need_h = new_w != in_w, need_v = new_h != in_h;
    const size_t in_row_bytes = (size_t)in_w * 3, row_bytes = (size_t)new_w * 3;
    filter fh = {0}, fv = {0};
    pocketllm_status st = POCKETLLM_OK;
    uint8_t *ring = NULL, *row = NULL;
    int32_t *acc = NULL;
    if (need_h && (st = filter_init(&fh, in_w, new_w))) goto done;
    if (need_v && (st = filter_init(&fv, in_h, new_h))) goto done;
    if (!need_v) {
        /* rows one by one: each through the horizontal filter, or copied */
        if (need_h && !(row = malloc(row_bytes))) goto oom;
        for (int y = 0; y < in_h; y++) {
            const uint8_t *in_row = src->rgb + (size_t)y * in_row_bytes;
            if (need_h) {
                resample_row(in_row, row, new_w, &fh);
                in_row = row;
            }
            norm_row(lut, in_row, new_w, out + ((size_t)(off_y + y) * out_w + off_x) * 3);
        }
        goto done;
    }
    if (!(acc = malloc(row_bytes * sizeof *acc)) || !(row = malloc(row_bytes))) goto oom;
    if (need_h && !(ring = malloc((size_t)fv.ksize * row_bytes))) goto oom;
    int have = 0; /* horizontal rows computed so far (0 .. have-1; the last ksize in the ring) */
    for (int yy = 0; yy < new_h; yy++) {
        const int ymin = fv.bounds[2 * yy], ycnt = fv.bounds[2 * yy + 1];
        const int32_t *k = fv.weights + (size_t)yy * fv.ksize;
        if (need_h)
            for (; have < ymin + ycnt; have++)
                resample_row(src->rgb + (size_t)have * in_row_bytes, ring + (size_t)(have % fv.ksize) * row_bytes,
                             new_w, &fh);
        for (size_t i = 0; i < row_bytes; i++) acc[i] = 1 << (PREC_BITS - 1);
        for (int y = 0; y < ycnt; y++) {
            const int r = ymin + y;
            const uint8_t *in_row =
                need_h ? ring + (size_t)(r % fv.ksize) * row_bytes : src->rgb + (size_t)r * in_row_bytes;
            const int32_t w = k[y];
            for (size_t i = 0; i < row_bytes; i++) acc[i] += in_row[i] * w;
        }
        for (size_t i = 0; i < row_bytes; i++) row[i] = clip8(acc[i]);
        norm_row(lut, row, new_w, out + ((size_t)(off_y + yy) * out_w + off_x) * 3);
    }
    goto done;
oom:
    st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "image: cannot allocate the resize buffers (%dx%d -> %dx%d)", in_w, in_h,
                 new_w, new_h);
done:
    free(ring);
    free(row);
    free(acc);
    filter_free(&fh);
    filter_free(&fv);
    return st;
}

pocketllm_status pl_qwen3vl_preprocess(const pl_image_rgb8 *src, const pl_qwen3vl_prep *p, pl_image_f32 *out) {
    memset(out, 0, sizeof *out);
    if (!src || !p) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "image: no image or no parameters");
    uint32_t tw, th;
    pocketllm_status st = pl_qwen3vl_target_size(src->width, src->height, p, &tw, &th);
    if (st) return st;
    if (!src->rgb) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "image: %ux%u has no pixel data", src->width,
                                  src->height);
    size_t bytes;
    if (!image_bytes(tw, th, sizeof(float), &bytes))
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "image: %ux%u floats do not fit memory", tw, th);
    float *o = malloc(bytes);
    if (!o) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "image: cannot allocate %ux%u floats", tw, th);
    norm_lut lut;
    norm_init(&lut, p);
    const int w = (int)src->width, h = (int)src->height;
    int new_w = (int)tw, new_h = (int)th, off_x = 0, off_y = 0;
    if (tw != src->width || th != src->height) {
        /* fit inside the target keeping the aspect ratio (libmtmd's PAD_CEIL),
         * centred, black around */
        const float sw = (float)tw / (float)w, sh = (float)th / (float)h;
        const float scale = sh < sw ? sh : sw;
        new_w = (int)ceilf((float)w * scale);
        new_h = (int)ceilf((float)h * scale);
        if (new_w > (int)tw) new_w = (int)tw;
        if (new_h > (int)th) new_h = (int)th;
        off_x = ((int)tw - new_w) / 2;
        off_y = ((int)th - new_h) / 2;
        const float b0 = lut.v[0][0], b1 = lut.v[1][0], b2 = lut.v[2][0];
        for (size_t y = 0; y < th; y++) {
            float *r = o + y * tw * 3;
            const bool full = y < (size_t)off_y || y >= (size_t)(off_y + new_h);
            for (size_t x = 0; x < tw; x++) {
                if (!full && x == (size_t)off_x) x += (size_t)new_w; /* the picture's part is written below */
                if (x >= tw) break;
                r[3 * x + 0] = b0;
                r[3 * x + 1] = b1;
                r[3 * x + 2] = b2;
            }
        }
    }
    if ((st = resize_into(src, new_w, new_h, &lut, o, (int)tw, off_x, off_y))) {
        free(o);
        return st;
    }
    out->width = tw;
    out->height = th;
    out->rgb = o;
    return POCKETLLM_OK;
}
