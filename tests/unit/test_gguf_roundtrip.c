/*
 * test_gguf_roundtrip.c -- what the writer writes, the reader reads back:
 * every metadata type (arrays of strings and arrays of arrays included),
 * tensors of several types at the right alignment, streaming and one-shot
 * writes giving identical bytes, determinism, and no file left behind on a
 * failed write.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/gguf_builder.h"
#include "gguf/gguf.h"
#include "pltest.h"
#include "pocketllm.h"

static char dir[] = "/tmp/pl_gguf_rt_XXXXXX";

static char *path_in_dir(const char *name) {
    static char buf[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static uint8_t *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc(sz > 0 ? (size_t)sz : 1);
    *n = fread(p, 1, (size_t)sz, f);
    fclose(f);
    return p;
}

static void write_file(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    fwrite(p, 1, n, f);
    fclose(f);
}

/* A source file with nested arrays, built byte by byte (the writer's API
 * copies such values from a reader). */
static const char *nested_source(void) {
    gb b = {0};
    gb_header(&b, 2, 0, 1); /* version 2: read identically to 3 */
    gb_str(&b, "test.nested");
    gb_u32(&b, 9);
    gb_u32(&b, 9);           /* array of arrays */
    gb_u64(&b, 2);
    gb_u32(&b, 4);           /* [0]: array of 3 uint32 */
    gb_u64(&b, 3);
    gb_u32(&b, 10), gb_u32(&b, 20), gb_u32(&b, 30);
    gb_u32(&b, 8);           /* [1]: array of 2 strings */
    gb_u64(&b, 2);
    gb_str(&b, "x");
    gb_str(&b, "yz");
    const char *p = path_in_dir("nested.gguf");
    write_file(p, b.p, b.n);
    gb_free(&b);
    return p;
}

enum { NA = 64 * 3, NB = 32 * 2 };
static float ta[NA];
static uint8_t tb[NB / 32 * 18];
static uint16_t tc[40];
static int32_t td[5];

static pocketllm_gguf_writer *make_writer(pocketllm_gguf *nested, bool with_data) {
    pocketllm_gguf_writer *w;
    CHECK(pocketllm_gguf_writer_new(&w) == POCKETLLM_OK);
    CHECK(pocketllm_gguf_writer_set_str(w, "general.architecture", "test") == 0);
    uint8_t u8 = 200;
    int8_t i8 = -100;
    uint16_t u16 = 60000;
    int16_t i16 = -30000;
    CHECK(pocketllm_gguf_writer_set_scalar(w, "t.u8", POCKETLLM_GGUF_UINT8, &u8) == 0);
    CHECK(pocketllm_gguf_writer_set_scalar(w, "t.i8", POCKETLLM_GGUF_INT8, &i8) == 0);
    CHECK(pocketllm_gguf_writer_set_scalar(w, "t.u16", POCKETLLM_GGUF_UINT16, &u16) == 0);
    CHECK(pocketllm_gguf_writer_set_scalar(w, "t.i16", POCKETLLM_GGUF_INT16, &i16) == 0);
    CHECK(pocketllm_gguf_writer_set_u32(w, "t.u32", 4000000000u) == 0);
    CHECK(pocketllm_gguf_writer_set_i32(w, "t.i32", -2000000000) == 0);
    CHECK(pocketllm_gguf_writer_set_f32(w, "t.f32", 0.25f) == 0);
    CHECK(pocketllm_gguf_writer_set_bool(w, "t.bool", 1) == 0);
    CHECK(pocketllm_gguf_writer_set_u64(w, "t.u64", 0xfedcba9876543210ull) == 0);
    int64_t i64 = INT64_MIN;
    double f64 = -1.5e300;
    CHECK(pocketllm_gguf_writer_set_scalar(w, "t.i64", POCKETLLM_GGUF_INT64, &i64) == 0);
    CHECK(pocketllm_gguf_writer_set_scalar(w, "t.f64", POCKETLLM_GGUF_FLOAT64, &f64) == 0);
    CHECK(pocketllm_gguf_writer_set_str(w, "t.str", "h\xc3\xa9llo, w\xe2\x82\xacrld") == 0);
    const char *strs[] = {"<s>", "", "\xe4\xb8\xad\xe6\x96\x87", "a b"};
    CHECK(pocketllm_gguf_writer_set_str_array(w, "t.strs", strs, 4) == 0);
    float fl[3] = {1, -2, 3.5f};
    CHECK(pocketllm_gguf_writer_set_array(w, "t.floats", POCKETLLM_GGUF_FLOAT32, fl, 3) == 0);
    CHECK(pocketllm_gguf_writer_set_array(w, "t.empty", POCKETLLM_GGUF_INT32, NULL, 0) == 0);
    CHECK(pocketllm_gguf_writer_set_value(w, "t.nested", pocketllm_gguf_find(nested, "test.nested")) == 0);
    /* replacing keeps the position */
    CHECK(pocketllm_gguf_writer_set_u32(w, "t.u32", 4000000001u) == 0);
    CHECK(pocketllm_gguf_writer_set_u32(w, "t.gone", 1) == 0);
    CHECK(pocketllm_gguf_writer_remove(w, "t.gone") == 0);
    CHECK(pocketllm_gguf_writer_remove(w, "t.gone") == POCKETLLM_ERR_NOT_FOUND);

    int64_t ne_a[2] = {64, 3}, ne_b[2] = {32, 2}, ne_c[1] = {40}, ne_d[1] = {5};
    CHECK(pocketllm_gguf_writer_add_tensor(w, "a", 0, 2, ne_a, with_data ? ta : NULL) == 0);
    CHECK(pocketllm_gguf_writer_add_tensor(w, "b", 2, 2, ne_b, tb) == 0); /* q4_0, always given */
    CHECK(pocketllm_gguf_writer_add_tensor(w, "c", 1, 1, ne_c, with_data ? tc : NULL) == 0);
    CHECK(pocketllm_gguf_writer_add_tensor(w, "d", 26, 1, ne_d, with_data ? td : NULL) == 0);
    /* refusals */
    CHECK(pocketllm_gguf_writer_add_tensor(w, "a", 0, 2, ne_a, ta) == POCKETLLM_ERR_INVALID_ARGUMENT);
    int64_t bad[1] = {33};
    CHECK(pocketllm_gguf_writer_add_tensor(w, "e", 2, 1, bad, tb) == POCKETLLM_ERR_INVALID_ARGUMENT);
    CHECK(pocketllm_gguf_writer_add_tensor(w, "f", 31, 1, ne_d, tb) == POCKETLLM_ERR_INVALID_ARGUMENT);
    return w;
}

static void check_read_back(const char *path, uint32_t alignment) {
    pocketllm_gguf *g;
    pocketllm_status st = pocketllm_gguf_open(path, &g);
    CHECK_MSG(st == POCKETLLM_OK, "%s", pocketllm_last_error());
    if (st) return;
    CHECK_EQ_U64(pocketllm_gguf_version(g), 3);
    CHECK_EQ_U64(pocketllm_gguf_alignment(g), alignment);
    CHECK_STR(pocketllm_gguf_kv_key(g, 0), "general.architecture");
    uint64_t u;
    int64_t i;
    double d;
    CHECK(pocketllm_gguf_value_u64(pocketllm_gguf_find(g, "t.u8"), &u) == 0 && u == 200);
    CHECK(pocketllm_gguf_value_i64(pocketllm_gguf_find(g, "t.i8"), &i) == 0 && i == -100);
    CHECK(pocketllm_gguf_value_u64(pocketllm_gguf_find(g, "t.i8"), &u) != 0); /* negative */
    CHECK(pocketllm_gguf_value_u64(pocketllm_gguf_find(g, "t.u16"), &u) == 0 && u == 60000);
    CHECK(pocketllm_gguf_value_i64(pocketllm_gguf_find(g, "t.i16"), &i) == 0 && i == -30000);
    CHECK(pocketllm_gguf_value_u64(pocketllm_gguf_find(g, "t.u32"), &u) == 0 && u == 4000000001u);
    CHECK(pocketllm_gguf_value_i64(pocketllm_gguf_find(g, "t.i32"), &i) == 0 && i == -2000000000);
    CHECK(pocketllm_gguf_value_f64(pocketllm_gguf_find(g, "t.f32"), &d) == 0 && d == 0.25);
    CHECK(pocketllm_gguf_value_u64(pocketllm_gguf_find(g, "t.bool"), &u) == 0 && u == 1);
    CHECK(pocketllm_gguf_value_type(pocketllm_gguf_find(g, "t.bool")) == POCKETLLM_GGUF_BOOL);
    CHECK(pocketllm_gguf_value_u64(pocketllm_gguf_find(g, "t.u64"), &u) == 0 && u == 0xfedcba9876543210ull);
    CHECK(pocketllm_gguf_value_i64(pocketllm_gguf_find(g, "t.u64"), &i) != 0); /* too large */
    CHECK(pocketllm_gguf_value_i64(pocketllm_gguf_find(g, "t.i64"), &i) == 0 && i == INT64_MIN);
    CHECK(pocketllm_gguf_value_f64(pocketllm_gguf_find(g, "t.f64"), &d) == 0 && d == -1.5e300);
    CHECK(pocketllm_gguf_value_u64(pocketllm_gguf_find(g, "t.str"), &u) != 0);
    CHECK_STR(pocketllm_gguf_value_str(pocketllm_gguf_find(g, "t.str"), NULL), "h\xc3\xa9llo, w\xe2\x82\xacrld");
    CHECK(pocketllm_gguf_find(g, "t.gone") == NULL);
    const pocketllm_gguf_value *s = pocketllm_gguf_find(g, "t.strs");
    CHECK(pocketllm_gguf_array_type(s) == POCKETLLM_GGUF_STRING && pocketllm_gguf_array_len(s) == 4);
    CHECK_STR(pocketllm_gguf_value_str(pocketllm_gguf_array_get(s, 0), NULL), "<s>");
    CHECK_STR(pocketllm_gguf_value_str(pocketllm_gguf_array_get(s, 1), NULL), "");
    CHECK_STR(pocketllm_gguf_value_str(pocketllm_gguf_array_get(s, 2), NULL), "\xe4\xb8\xad\xe6\x96\x87");
    CHECK(pocketllm_gguf_array_get(s, 4) == NULL);
    const pocketllm_gguf_value *fl = pocketllm_gguf_find(g, "t.floats");
    CHECK(pocketllm_gguf_array_len(fl) == 3);
    CHECK(pocketllm_gguf_value_f64(pocketllm_gguf_array_get(fl, 2), &d) == 0 && d == 3.5);
    CHECK(pocketllm_gguf_array_len(pocketllm_gguf_find(g, "t.empty")) == 0);
    const pocketllm_gguf_value *n = pocketllm_gguf_find(g, "t.nested");
    CHECK(pocketllm_gguf_array_type(n) == POCKETLLM_GGUF_ARRAY && pocketllm_gguf_array_len(n) == 2);
    const pocketllm_gguf_value *n0 = pocketllm_gguf_array_get(n, 0), *n1 = pocketllm_gguf_array_get(n, 1);
    CHECK(pocketllm_gguf_array_type(n0) == POCKETLLM_GGUF_UINT32 && pocketllm_gguf_array_len(n0) == 3);
    CHECK(pocketllm_gguf_value_u64(pocketllm_gguf_array_get(n0, 2), &u) == 0 && u == 30);
    CHECK_STR(pocketllm_gguf_value_str(pocketllm_gguf_array_get(n1, 1), NULL), "yz");

    CHECK_EQ_U64(pocketllm_gguf_tensor_count(g), 4);
    CHECK(pocketllm_gguf_data_offset(g) % alignment == 0);
    const void *want[4] = {ta, tb, tc, td};
    const uint64_t bytes[4] = {sizeof ta, sizeof tb, sizeof tc, sizeof td};
    const uint32_t types[4] = {0, 2, 1, 26};
    for (uint64_t k = 0; k < 4; k++) {
        pocketllm_tensor_info t;
        CHECK(pocketllm_gguf_tensor(g, k, &t) == 0);
        CHECK_EQ_U64(t.type, types[k]);
        CHECK_EQ_U64(t.n_bytes, bytes[k]);
        CHECK(t.offset % alignment == 0);
        CHECK(memcmp(t.data, want[k], bytes[k]) == 0);
        CHECK_EQ_U64(pocketllm_gguf_find_tensor(g, t.name), k);
    }
    CHECK(pocketllm_gguf_find_tensor(g, "nope") == -1);
    pocketllm_tensor_info t;
    CHECK(pocketllm_gguf_tensor(g, 4, &t) == POCKETLLM_ERR_NOT_FOUND);
    pocketllm_gguf_close(g);
}

int main(void) {
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    srand(7);
    for (size_t k = 0; k < NA; k++) ta[k] = (float)(rand() % 20001) / 10000.0f - 1.0f;
    for (size_t k = 0; k < sizeof tb; k++) tb[k] = (uint8_t)rand();
    for (size_t k = 0; k < 40; k++) tc[k] = (uint16_t)rand();
    for (size_t k = 0; k < 5; k++) td[k] = rand() - RAND_MAX / 2;

    pocketllm_gguf *nested;
    CHECK(pocketllm_gguf_open(nested_source(), &nested) == POCKETLLM_OK);
    CHECK_EQ_U64(pocketllm_gguf_version(nested), 2);

    /* one-shot write */
    pocketllm_gguf_writer *w = make_writer(nested, true);
    CHECK_MSG(pocketllm_gguf_writer_write(w, path_in_dir("one.gguf")) == 0, "%s", pocketllm_last_error());
    pocketllm_gguf_writer_free(w);
    check_read_back(path_in_dir("one.gguf"), 32);

    /* the same again: identical bytes */
    w = make_writer(nested, true);
    CHECK(pocketllm_gguf_writer_write(w, path_in_dir("two.gguf")) == 0);
    pocketllm_gguf_writer_free(w);
    size_t n1, n2, n3;
    uint8_t *b1 = slurp(path_in_dir("one.gguf"), &n1), *b2 = slurp(path_in_dir("two.gguf"), &n2);
    CHECK(b1 && b2 && n1 == n2 && memcmp(b1, b2, n1) == 0);

    /* streaming in odd-sized pieces gives the same bytes */
    w = make_writer(nested, false);
    CHECK(pocketllm_gguf_writer_begin(w, path_in_dir("stream.gguf")) == 0);
    const uint8_t *pa = (const uint8_t *)ta;
    for (size_t off = 0; off < sizeof ta; off += 7)
        CHECK(pocketllm_gguf_writer_write_data(w, pa + off, sizeof ta - off < 7 ? sizeof ta - off : 7) == 0);
    CHECK(pocketllm_gguf_writer_write_data(w, tc, sizeof tc) == 0);
    CHECK(pocketllm_gguf_writer_write_data(w, td, sizeof td) == 0);
    CHECK(pocketllm_gguf_writer_finish(w) == 0);
    pocketllm_gguf_writer_free(w);
    uint8_t *b3 = slurp(path_in_dir("stream.gguf"), &n3);
    CHECK(b3 && n3 == n1 && memcmp(b1, b3, n1) == 0);
    free(b1), free(b2), free(b3);

    /* a missing piece fails and leaves nothing behind */
    w = make_writer(nested, false);
    CHECK(pocketllm_gguf_writer_begin(w, path_in_dir("short.gguf")) == 0);
    CHECK(pocketllm_gguf_writer_write_data(w, ta, 10) == 0);
    CHECK(pocketllm_gguf_writer_finish(w) == POCKETLLM_ERR_INVALID_ARGUMENT);
    pocketllm_gguf_writer_free(w);
    struct stat sb;
    CHECK(stat(path_in_dir("short.gguf"), &sb) != 0);
    CHECK(stat(path_in_dir("short.gguf.partial"), &sb) != 0);
    /* too much data is refused too */
    w = make_writer(nested, false);
    CHECK(pocketllm_gguf_writer_begin(w, path_in_dir("long.gguf")) == 0);
    static uint8_t big[4096];
    CHECK(pocketllm_gguf_writer_write_data(w, big, sizeof big) == POCKETLLM_ERR_INVALID_ARGUMENT);
    pocketllm_gguf_writer_free(w);
    CHECK(stat(path_in_dir("long.gguf.partial"), &sb) != 0);

    /* a custom alignment */
    w = make_writer(nested, true);
    CHECK(pocketllm_gguf_writer_set_u32(w, "general.alignment", 256) == 0);
    CHECK(pocketllm_gguf_writer_write(w, path_in_dir("a256.gguf")) == 0);
    pocketllm_gguf_writer_free(w);
    check_read_back(path_in_dir("a256.gguf"), 256);
    w = make_writer(nested, true);
    CHECK(pocketllm_gguf_writer_set_u32(w, "general.alignment", 24) == 0);
    CHECK(pocketllm_gguf_writer_write(w, path_in_dir("a24.gguf")) == POCKETLLM_ERR_INVALID_ARGUMENT);
    pocketllm_gguf_writer_free(w);

    /* vocabulary-only: metadata and no tensors */
    CHECK(pocketllm_gguf_writer_new(&w) == 0);
    const char *toks[] = {"<unk>", "<s>", "</s>", "a"};
    CHECK(pocketllm_gguf_writer_set_str(w, "tokenizer.ggml.model", "llama") == 0);
    CHECK(pocketllm_gguf_writer_set_str_array(w, "tokenizer.ggml.tokens", toks, 4) == 0);
    CHECK(pocketllm_gguf_writer_write(w, path_in_dir("vocab.gguf")) == 0);
    pocketllm_gguf_writer_free(w);
    pocketllm_gguf *v;
    CHECK(pocketllm_gguf_open(path_in_dir("vocab.gguf"), &v) == 0);
    CHECK_EQ_U64(pocketllm_gguf_tensor_count(v), 0);
    CHECK_EQ_U64(pocketllm_gguf_array_len(pocketllm_gguf_find(v, "tokenizer.ggml.tokens")), 4);
    pocketllm_gguf_close(v);

    /* I/O errors are errors, not crashes */
    pocketllm_gguf *none;
    CHECK(pocketllm_gguf_open(path_in_dir("does-not-exist.gguf"), &none) == POCKETLLM_ERR_IO);
    CHECK(pocketllm_gguf_open(dir, &none) == POCKETLLM_ERR_IO);
    CHECK(strstr(pocketllm_last_error(), "not a regular file") != NULL);

    pocketllm_gguf_close(nested);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    TEST_DONE();
}
