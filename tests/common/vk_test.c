/*
 * vk_test.c -- see vk_test.h.
 */
#include "vk_test.h"

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
