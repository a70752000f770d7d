/*
 * vk_test.c -- see vk_test.h.
 */
#include "vk_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pocketllm.h"

int vkt_open(vkt *t, const pl_compute_limits *lim) {
    memset(t, 0, sizeof *t);
    const char *skip = getenv("POCKETLLM_NO_VULKAN");
    if (skip && strcmp(skip, "1") == 0) {
        fprintf(stderr, "POCKETLLM_NO_VULKAN=1: the Vulkan tests are skipped\n");
        return 77;
    }
    pocketllm_status st = pl_device_open("vulkan", 0, &t->dev);
    if (st) {
        fprintf(stderr, "FAIL: no Vulkan device to test on: %s (scripts/install-deps.sh installs Mesa's lavapipe; "
                        "POCKETLLM_NO_VULKAN=1 skips)\n", pocketllm_last_error());
        return 1;
    }
    if ((st = t->dev->ops->compute_new(t->dev, 1, &t->c)) || (st = t->c->ops->reserve(t->c, lim))) {
        fprintf(stderr, "FAIL: %s: %s\n", t->dev->name, pocketllm_last_error());
        return 1;
    }
    fprintf(stderr, "testing on %s\n", t->dev->name);
    return 0;
}

void vkt_close(vkt *t) {
    if (t->c) t->c->ops->free(t->c);
    if (t->dev) t->dev->ops->close(t->dev);
    memset(t, 0, sizeof *t);
}

void *vkt_buf(vkt *t, const void *host, size_t bytes) {
    void *p = t->c->ops->alloc(t->c, bytes);
    if (!p) {
        fprintf(stderr, "vkt_buf: %s\n", pocketllm_last_error());
        abort();
    }
    t->c->ops->upload(t->c, p, host, bytes);
    return p;
}

void *vkt_out(vkt *t, size_t bytes) {
    unsigned char *h = malloc(bytes ? bytes : 1);
    memset(h, 0xff, bytes);
    void *p = vkt_buf(t, h, bytes);
    free(h);
    return p;
}

int vkt_get(vkt *t, void *host, const void *dev, size_t bytes) {
    if (t->c->status) return t->c->status;
    t->c->ops->download(t->c, host, dev, bytes);
    return t->c->status;
}

int vkt_weight(vkt *t, const void *host, size_t bytes) {
    pl_upload_range r = {host, bytes, "test weight"};
    return t->dev->ops->upload(t->dev, &r, 1, NULL, NULL);
}

void vkt_reset(vkt *t) { t->c->status = POCKETLLM_OK; }

int64_t vkt_ulps(float a, float b) {
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b) ? 0 : INT64_MAX;
    int32_t ia, ib;
    memcpy(&ia, &a, 4);
    memcpy(&ib, &b, 4);
    /* the floats' order as integers: negative values below zero */
    const int64_t oa = ia < 0 ? -(int64_t)(ia & 0x7fffffff) : ia, ob = ib < 0 ? -(int64_t)(ib & 0x7fffffff) : ib;
    return oa > ob ? oa - ob : ob - oa;
}

double vkt_rel_l2(const float *got, const float *ref, int64_t n) {
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        const double d = (double)got[i] - (double)ref[i];
        num += d * d;
        den += (double)ref[i] * (double)ref[i];
    }
    return sqrt(num / (den > 0 ? den : 1));
}
