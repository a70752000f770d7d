/*
 * test_gguf_bad.c -- the reader refuses every class of malformed file with
 * one line that names the problem and its byte offset: each class in
 * tests/common/bad_gguf.c, a truncation at every byte of a valid file, and
 * random corruptions (which must never crash; run under ASan in CI).
 * Buffers are allocated to the exact size so that an over-read is caught.
 */
#include <stdlib.h>
#include <string.h>

#include "../common/bad_gguf.h"
#include "gguf/gguf.h"
#include "pltest.h"

/* Parse n bytes from an exactly-sized copy; returns the status. */
static pocketllm_status parse_copy(const uint8_t *p, size_t n, pl_gguf **out) {
    uint8_t *copy = malloc(n ? n : 1);
    if (n) memcpy(copy, p, n);
    pl_gguf *g = NULL;
    pocketllm_status st = pl_gguf_open_memory(n ? copy : NULL, n, "test.gguf", &g);
    if (st == POCKETLLM_OK) {
        /* touch everything a caller could reach */
        for (uint64_t i = 0; i < g->n_tensors; i++) {
            volatile uint8_t sink = 0;
            if (g->tensors[i].n_bytes) sink ^= g->tensors[i].data[g->tensors[i].n_bytes - 1];
            (void)sink;
        }
        if (out) *out = g;
        else pocketllm_gguf_close(g);
    }
    if (!out || st) free(copy);
    return st;
}

static bool one_line_with_offset(const char *msg) {
    return msg && *msg && !strchr(msg, '\n') && strstr(msg, "at byte ") != NULL;
}

int main(void) {
    /* the valid file parses */
    gb good = {0};
    good_gguf_build(&good);
    CHECK_MSG(parse_copy(good.p, good.n, NULL) == POCKETLLM_OK, "%s", pocketllm_last_error());

    /* every class */
    int n_cases = 0;
    for (const bad_gguf_case *c = bad_gguf_cases; c->name; c++, n_cases++) {
        gb b = {0};
        c->build(&b);
        pocketllm_status st = parse_copy(b.p, b.n, NULL);
        const char *msg = pocketllm_last_error();
        CHECK_MSG(st != POCKETLLM_OK, "case %s was accepted", c->name);
        CHECK_MSG(strstr(msg, c->expect) != NULL, "case %s: message '%s' lacks '%s'", c->name, msg, c->expect);
        CHECK_MSG(one_line_with_offset(msg), "case %s: message '%s' is not one line with a byte offset", c->name,
                  msg);
        CHECK_MSG(strncmp(msg, "test.gguf: ", 11) == 0, "case %s: message '%s' does not name the file", c->name, msg);
        gb_free(&b);
    }
    CHECK(n_cases >= 35);

    /* truncation at every byte before the end of the last tensor's data */
    good_gguf_layout l;
    good_gguf_layout_get(&l);
    for (size_t cut = 0; cut < l.data_end; cut++) {
        pocketllm_status st = parse_copy(good.p, cut, NULL);
        CHECK_MSG(st == POCKETLLM_ERR_FORMAT, "truncation at %zu: status %d", cut, (int)st);
        CHECK_MSG(one_line_with_offset(pocketllm_last_error()), "truncation at %zu: '%s'", cut,
                  pocketllm_last_error());
    }
    /* trailing padding after the last tensor is optional */
    CHECK(parse_copy(good.p, l.data_end, NULL) == POCKETLLM_OK);

    /* random corruption: any outcome but a crash, and failures explain themselves */
    srand(12345);
    int refused = 0;
    for (int iter = 0; iter < 20000; iter++) {
        uint8_t *m = malloc(good.n);
        memcpy(m, good.p, good.n);
        int flips = 1 + rand() % 4;
        for (int f = 0; f < flips; f++) {
            size_t at = (size_t)rand() % good.n;
            m[at] = (rand() % 3 == 0) ? 0xff : (uint8_t)rand();
        }
        size_t n = (rand() % 8 == 0) ? (size_t)rand() % good.n : good.n;
        pocketllm_status st = parse_copy(m, n, NULL);
        if (st != POCKETLLM_OK) {
            refused++;
            CHECK_MSG(one_line_with_offset(pocketllm_last_error()) || st == POCKETLLM_ERR_NO_MEMORY,
                      "corruption %d: '%s'", iter, pocketllm_last_error());
        }
        free(m);
    }
    fprintf(stderr, "random corruptions: %d of 20000 refused\n", refused);
    CHECK(refused > 0);
    gb_free(&good);
    TEST_DONE();
}
