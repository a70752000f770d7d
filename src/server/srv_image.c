/*
 * srv_image.c -- image_url URLs to decoded images (srv_image.h): the
 * strict base64 decoder, data: URLs, file:// URLs confined to the
 * --allow-image-path folder by their real path, and the refusal of every
 * remote URL (no server-side fetching: a request must not make the server
 * reach other machines).
 */
#include "srv_image.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- base64 ------------------------------------------------------------------ */

static int b64_value(unsigned char ch) {
    if (ch >= 'A' && ch <= 'Z') return ch - 'A';
    if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9') return ch - '0' + 52;
    if (ch == '+') return 62;
    if (ch == '/') return 63;
    return -1;
}

bool srv_base64_decode(const char *s, size_t n, size_t max_len, unsigned char **out, size_t *out_len) {
    *out = NULL;
    *out_len = 0;
    if (n % 4 != 0) return false;
    size_t pad = 0;
    if (n && s[n - 1] == '=') pad++;
    if (n > 1 && s[n - 2] == '=') pad++;
    const size_t len = n / 4 * 3 - pad;
    if (len > max_len) return false;
    unsigned char *d = malloc(len ? len : 1);
    if (!d) return false;
    size_t k = 0;
    for (size_t i = 0; i < n; i += 4) {
        const bool last = i + 4 == n;
        int v[4];
        for (int j = 0; j < 4; j++) {
            const unsigned char ch = (unsigned char)s[i + j];
            /* '=' only as the padding of the last group */
            if (ch == '=' && last && (size_t)j >= 4 - pad) v[j] = 0;
            else if ((v[j] = b64_value(ch)) < 0) {
                free(d);
                return false;
            }
        }
        const uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
        /* the bits under the padding must be zero: one encoding per byte string */
        if (last && ((pad == 1 && (w & 0xff)) || (pad == 2 && (w & 0xffff)))) {
            free(d);
            return false;
        }
        const size_t take = last ? 3 - pad : 3;
        for (size_t j = 0; j < take; j++) d[k++] = (unsigned char)(w >> (16 - 8 * j));
    }
    *out = d;
    *out_len = k;
    return true;
}

/* ---- URLs -------------------------------------------------------------------- */

static bool starts_with_ci(const char *s, const char *prefix) {
    for (; *prefix; s++, prefix++) {
        char a = *s, b = *prefix;
        if (a >= 'A' && a <= 'Z') a = (char)(a - 'A' + 'a');
        if (a != b) return false;
    }
    return true;
}

static bool decoded(const char *part, pocketllm_status st, pocketllm_image *img, pocketllm_image **out, srv_error *e) {
    if (st) return srv_fail(e, 400, part, "%s: %s", part, pocketllm_last_error());
    *out = img;
    return true;
}

/* data:image/<type>[;param...];base64,<data> */
static bool from_data_url(const char *url, const char *part, pocketllm_image **out, srv_error *e) {
    const char *comma = strchr(url, ',');
    if (!comma) return srv_fail(e, 400, part, "%s: a data: URL needs a ',' before its data", part);
    const size_t head = (size_t)(comma - url);
    if (!starts_with_ci(url, "data:image/"))
        return srv_fail(e, 400, part, "%s: a data: URL must have an image/ media type (data:image/png;base64,...)", part);
    if (head < 12 || !starts_with_ci(comma - 7, ";base64"))
        return srv_fail(e, 400, part, "%s: a data: URL must be base64-encoded (data:image/png;base64,...)", part);
    const char *data = comma + 1;
    const size_t n = strlen(data);
    if (n == 0) return srv_fail(e, 400, part, "%s: the data: URL holds no data (an empty image)", part);
    unsigned char *bytes = NULL;
    size_t len = 0;
    /* the body is already capped (--max-body); this bounds only what a
     * caller without that cap could ask for */
    if (!srv_base64_decode(data, n, (size_t)1 << 30, &bytes, &len))
        return srv_fail(e, 400, part, "%s: the data: URL's data is not valid base64", part);
    pocketllm_image *img = NULL;
    pocketllm_status st = pocketllm_image_decode(bytes, len, &img);
    free(bytes);
    return decoded(part, st, img, out, e);
}

static int hex_value(char ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

/* file:///PATH or file://localhost/PATH, percent-decoded; the real path
 * (links resolved) must lie inside the allowed folder. */
static bool from_file_url(const srv_model *m, const char *url, const char *part, pocketllm_image **out, srv_error *e) {
    if (!m->image_dir)
        return srv_fail(e, 400, part, "%s: file:// URLs are refused (the server reads files only inside a folder "
                        "given with --allow-image-path DIR)", part);
    const char *p = url + 7;
    if (starts_with_ci(p, "localhost/")) p += 9;
    if (*p != '/') return srv_fail(e, 400, part, "%s: a file:// URL must name an absolute path on this machine", part);
    char path[PATH_MAX];
    size_t k = 0;
    for (; *p; p++) {
        char ch = *p;
        if (ch == '%') {
            const int hi = hex_value(p[1]), lo = hi < 0 ? -1 : hex_value(p[2]);
            if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
                return srv_fail(e, 400, part, "%s: the file:// URL has a bad %%-escape", part);
            ch = (char)(hi * 16 + lo);
            p += 2;
        }
        if (k + 1 >= sizeof path) return srv_fail(e, 400, part, "%s: the file:// URL's path is too long", part);
        path[k++] = ch;
    }
    path[k] = '\0';
    char real[PATH_MAX];
    if (!realpath(path, real)) return srv_fail(e, 400, part, "%s: no such file in the allowed folder", part);
    const size_t dl = strlen(m->image_dir);
    /* inside means below the folder: "/a/b" does not hold "/a/bc" */
    const bool inside = strncmp(real, m->image_dir, dl) == 0 && (real[dl] == '/' || (dl == 1 && real[0] == '/'));
    if (!inside) return srv_fail(e, 400, part, "%s: the file is outside the folder --allow-image-path allows", part);
    pocketllm_image *img = NULL;
    pocketllm_status st = pocketllm_image_load(real, &img);
    /* the loader's message starts with the path, which the client gave */
    return decoded(part, st, img, out, e);
}

bool srv_image_from_url(const srv_model *m, const char *url, const char *part, pocketllm_image **out, srv_error *e) {
    *out = NULL;
    if (starts_with_ci(url, "data:")) return from_data_url(url, part, out, e);
    if (starts_with_ci(url, "file://")) return from_file_url(m, url, part, out, e);
    if (starts_with_ci(url, "http://") || starts_with_ci(url, "https://"))
        return srv_fail(e, 400, part, "%s: remote image URLs are refused (the server fetches nothing): send the image "
                        "as a data: URL (data:image/png;base64,...)", part);
    if (!*url) return srv_fail(e, 400, part, "%s: the URL is empty", part);
    return srv_fail(e, 400, part, "%s: unsupported URL (data:image/...;base64,... expected)", part);
}
