/*
 * test_base.c -- the base helpers: string map (growth, duplicates, lookups),
 * arena (alignment, zeroing, large blocks), error messages (one line,
 * prefixing), version queries.
 */
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/error.h"
#include "base/strmap.h"
#include "pltest.h"

int main(void) {
    pl_strmap m = {0};
    enum { N = 5000 };
    static char keys[N][16];
    for (int i = 0; i < N; i++) {
        snprintf(keys[i], sizeof keys[i], "key%d", i);
        CHECK(pl_strmap_put(&m, keys[i], strlen(keys[i]), (uint64_t)i, NULL) == 1);
    }
    uint64_t v, first;
    CHECK(pl_strmap_put(&m, "key7", 4, 99, &first) == 0 && first == 7);
    int ok = 1;
    for (int i = 0; i < N; i++) ok &= pl_strmap_get(&m, keys[i], strlen(keys[i]), &v) && v == (uint64_t)i;
    CHECK(ok);
    CHECK(!pl_strmap_get(&m, "key", 3, &v));
    CHECK(pl_strmap_put(&m, "", 0, 5, NULL) == 1 && pl_strmap_get(&m, "", 0, &v) && v == 5);
    CHECK_EQ_U64(m.count, N + 1);
    pl_strmap_free(&m);

    pl_arena a = {0};
    for (int i = 0; i < 1000; i++) {
        size_t sz = (size_t)(i * 37 % 500) + 1;
        uint8_t *p = pl_arena_alloc(&a, sz, 16);
        CHECK(p && ((uintptr_t)p % 16) == 0);
        int zero = 1;
        for (size_t k = 0; k < sz; k++) zero &= p[k] == 0;
        CHECK(zero);
        memset(p, 0xab, sz);
    }
    char *big = pl_arena_alloc(&a, 1 << 20, 8);
    CHECK(big != NULL);
    CHECK_STR(pl_arena_strndup(&a, "hello world", 5), "hello");
    pl_arena_free(&a);

    CHECK(pl_fail(POCKETLLM_ERR_FORMAT, "bad\nthing %d", 3) == POCKETLLM_ERR_FORMAT);
    CHECK_STR(pocketllm_last_error(), "bad thing 3");
    pl_error_prefix("file.gguf");
    CHECK_STR(pocketllm_last_error(), "file.gguf: bad thing 3");
    CHECK_STR(pocketllm_status_string(POCKETLLM_ERR_FORMAT), "format error");
    CHECK_EQ_U64(pocketllm_abi_version(), ((uint32_t)POCKETLLM_ABI_MAJOR << 16) | POCKETLLM_ABI_MINOR);
    CHECK(strlen(pocketllm_version_string()) > 0);
    TEST_DONE();
}
