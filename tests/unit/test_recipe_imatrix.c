/*
 * test_recipe_imatrix.c -- the importance-matrix reader (src/quantize/
 * imatrix.c): both file formats, llama-quantize's normalisation (sum over
 * the rounded count, 1 where the count is 0; legacy values over their call
 * count), and every malformed input refused with a message, never a crash
 * (the legacy format truncated at every byte).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pltest.h"
#include "quantize/imatrix.h"

/* ---- GGUF imatrix files, written with the public writer ------------------- */

typedef struct gt {
    const char *name;
    uint32_t type;
    int64_t ne[2];
    const void *data;
} gt;

static char tmpdir[] = "/tmp/pl_test_imatrix.XXXXXX";

/* Write a GGUF with the given tensors (and the three imatrix keys unless
 * `drop` names one to leave out) and parse it. */
static pocketllm_status gguf_case(const gt *t, int n, const char *drop, pl_imatrix *im) {
    char path[256];
    snprintf(path, sizeof path, "%s/case.gguf", tmpdir);
    pocketllm_gguf_writer *w;
    pocketllm_gguf_writer_new(&w);
    const char *ds = "the data";
    if (!drop || strcmp(drop, "imatrix.datasets")) pocketllm_gguf_writer_set_str_array(w, "imatrix.datasets", &ds, 1);
    if (!drop || strcmp(drop, "imatrix.chunk_count")) pocketllm_gguf_writer_set_u32(w, "imatrix.chunk_count", 7);
    if (!drop || strcmp(drop, "imatrix.chunk_size")) pocketllm_gguf_writer_set_u32(w, "imatrix.chunk_size", 512);
    for (int i = 0; i < n; i++) pocketllm_gguf_writer_add_tensor(w, t[i].name, t[i].type, 2, t[i].ne, t[i].data);
    pocketllm_status st = pocketllm_gguf_writer_write(w, path);
    pocketllm_gguf_writer_free(w);
    if (st) return POCKETLLM_ERR_INTERNAL;
    st = pl_imatrix_load(path, im);
    unlink(path);
    return st;
}

static void test_gguf(void) {
    pl_imatrix im;
    /* two experts of three columns; the second expert's count is 0 */
    const float sums[6] = {2, 4, 6, 8, 10, 12}, counts[2] = {2, 0};
    gt ok[2] = {{"blk.0.ffn_up.weight.in_sum2", 0, {3, 2}, sums}, {"blk.0.ffn_up.weight.counts", 0, {1, 2}, counts}};
    CHECK(gguf_case(ok, 2, NULL, &im) == POCKETLLM_OK);
    CHECK(im.n_entries == 1 && !im.legacy && im.chunk_count == 7);
    CHECK_STR(im.dataset, "the data");
    const pl_imatrix_entry *e = pl_imatrix_find(&im, "blk.0.ffn_up.weight");
    CHECK(e && e->n == 6);
    if (e && e->n == 6) {
        const float want[6] = {1, 2, 3, 1, 1, 1};
        CHECK(memcmp(e->values, want, sizeof want) == 0);
    }
    CHECK(pl_imatrix_find(&im, "blk.0.ffn_up") == NULL);
    pl_imatrix_free(&im);

    /* counts are rounded to whole numbers first (std::lround) */
    const float s1[2] = {3, 9}, c1[1] = {2.6f};
    gt rounded[2] = {{"w.in_sum2", 0, {2, 1}, s1}, {"w.counts", 0, {1, 1}, c1}};
    CHECK(gguf_case(rounded, 2, NULL, &im) == POCKETLLM_OK);
    e = pl_imatrix_find(&im, "w");
    CHECK(e && e->values[0] == 1.0f && e->values[1] == 3.0f);
    pl_imatrix_free(&im);

    /* refusals */
    for (int k = 0; k < 3; k++) {
        const char *keys[] = {"imatrix.datasets", "imatrix.chunk_count", "imatrix.chunk_size"};
        CHECK_MSG(gguf_case(ok, 2, keys[k], &im) == POCKETLLM_ERR_FORMAT, "without %s", keys[k]);
        CHECK(strstr(pocketllm_last_error(), keys[k]) != NULL);
    }
    CHECK(gguf_case(ok, 1, NULL, &im) == POCKETLLM_ERR_FORMAT); /* sums without counts */
    CHECK(strstr(pocketllm_last_error(), "no matching") != NULL);
    CHECK(gguf_case(ok + 1, 1, NULL, &im) == POCKETLLM_ERR_FORMAT); /* counts without sums */
    const uint16_t half[6] = {0};
    gt f16[2] = {{"w.in_sum2", 1, {3, 2}, half}, {"w.counts", 0, {1, 2}, counts}};
    CHECK(gguf_case(f16, 2, NULL, &im) == POCKETLLM_ERR_FORMAT);
    CHECK(strstr(pocketllm_last_error(), "f32") != NULL);
    const float five[5] = {1, 1, 1, 1, 1};
    gt uneven[2] = {{"w.in_sum2", 0, {5, 1}, five}, {"w.counts", 0, {1, 2}, counts}};
    CHECK(gguf_case(uneven, 2, NULL, &im) == POCKETLLM_ERR_FORMAT);
    const float bad[6] = {1, NAN, 1, 1, 1, 1};
    gt nan_sum[2] = {{"w.in_sum2", 0, {3, 2}, bad}, {"w.counts", 0, {1, 2}, counts}};
    CHECK(gguf_case(nan_sum, 2, NULL, &im) == POCKETLLM_ERR_FORMAT);
    CHECK(strstr(pocketllm_last_error(), "not finite") != NULL);
    const float inf_count[2] = {INFINITY, 1};
    gt inf_c[2] = {{"w.in_sum2", 0, {3, 2}, sums}, {"w.counts", 0, {1, 2}, inf_count}};
    CHECK(gguf_case(inf_c, 2, NULL, &im) == POCKETLLM_ERR_FORMAT);
    CHECK(gguf_case(NULL, 0, NULL, &im) == POCKETLLM_ERR_FORMAT); /* no tensors */
}

/* ---- legacy .dat ------------------------------------------------------------ */

typedef struct buf {
    uint8_t p[4096];
    size_t n;
} buf;

static void put(buf *b, const void *d, size_t n) {
    memcpy(b->p + b->n, d, n);
    b->n += n;
}
static void put_i32(buf *b, int32_t v) { put(b, &v, 4); }
static void entry(buf *b, const char *name, int32_t len, int32_t ncall, int32_t nval, const float *v) {
    put_i32(b, len);
    put(b, name, (size_t)len);
    put_i32(b, ncall);
    put_i32(b, nval);
    put(b, v, (size_t)nval * 4);
}

static void test_legacy(void) {
    pl_imatrix im;
    buf b = {{0}, 0};
    const float v[4] = {4, 8, 12, 16};
    put_i32(&b, 3);
    entry(&b, "blk.0.attn_q.weight", 19, 4, 4, v); /* over 4 calls */
    entry(&b, "raw", 3, 0, 2, v);                  /* 0 calls: as stored */
    entry(&b, "raw", 3, 2, 2, v);                  /* a repeated name: the last wins */
    size_t entries_end = b.n;
    put_i32(&b, 9);
    put_i32(&b, 5);
    put(&b, "wiki!", 5);
    CHECK(pl_imatrix_parse(b.p, b.n, "t.dat", &im) == POCKETLLM_OK);
    CHECK(im.legacy && im.n_entries == 2 && im.chunk_count == 9);
    CHECK_STR(im.dataset, "wiki!");
    const pl_imatrix_entry *e = pl_imatrix_find(&im, "blk.0.attn_q.weight");
    CHECK(e && e->n == 4 && e->values[0] == 1.0f && e->values[3] == 4.0f);
    e = pl_imatrix_find(&im, "raw");
    CHECK(e && e->n == 2 && e->values[0] == 2.0f && e->values[1] == 4.0f);
    pl_imatrix_free(&im);

    /* cut at every byte: refused until the entries are whole, then read
     * (the trailer is optional); never a crash or an over-read */
    for (size_t cut = 0; cut < b.n; cut++) {
        uint8_t *copy = malloc(cut ? cut : 1);
        memcpy(copy, b.p, cut);
        pocketllm_status st = pl_imatrix_parse(copy, cut, "cut.dat", &im);
        CHECK_MSG((st == POCKETLLM_OK) == (cut >= entries_end), "cut at %zu: status %d", cut, (int)st);
        if (st == POCKETLLM_OK) pl_imatrix_free(&im);
        free(copy);
    }

    /* bad counts and lengths */
    struct {
        int32_t n_entries, len, nval;
    } bad[] = {{0, 3, 1}, {-1, 3, 1}, {1000000, 3, 1}, {1, -5, 1}, {1, 1 << 30, 1}, {1, 3, 0}, {1, 3, -2},
               {1, 3, 1 << 29}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        buf c = {{0}, 0};
        put_i32(&c, bad[i].n_entries);
        put_i32(&c, bad[i].len);
        put(&c, "abc", 3);
        put_i32(&c, 1);
        put_i32(&c, bad[i].nval);
        put(&c, v, 16);
        CHECK_MSG(pl_imatrix_parse(c.p, c.n, "bad.dat", &im) == POCKETLLM_ERR_FORMAT, "case %zu", i);
        CHECK(strstr(pocketllm_last_error(), "bad.dat") != NULL);
    }
    /* a name is read up to its first NUL, as llama.cpp's std::string does */
    buf z = {{0}, 0};
    put_i32(&z, 1);
    entry(&z, "ab\0cd", 5, 1, 1, v);
    CHECK(pl_imatrix_parse(z.p, z.n, "nul.dat", &im) == POCKETLLM_OK);
    CHECK(pl_imatrix_find(&im, "ab") != NULL);
    pl_imatrix_free(&im);
    /* non-finite values */
    buf n = {{0}, 0};
    const float inf[1] = {INFINITY};
    put_i32(&n, 1);
    entry(&n, "w", 1, 1, 1, inf);
    CHECK(pl_imatrix_parse(n.p, n.n, "inf.dat", &im) == POCKETLLM_ERR_FORMAT);
    /* a file that does not exist */
    CHECK(pl_imatrix_load("/nonexistent/x.imatrix", &im) == POCKETLLM_ERR_IO);
}

int main(void) {
    if (!mkdtemp(tmpdir)) {
        fprintf(stderr, "cannot make a temporary folder\n");
        return 1;
    }
    test_gguf();
    test_legacy();
    rmdir(tmpdir);
    TEST_DONE();
}
