/*
 * pl_quant_tool.c -- PocketLLM's side of the quant comparisons with
 * llama.cpp (tests/oracle/test_quant_*.sh): makes test inputs, runs our
 * kernels on files the oracle also reads, and compares the results.
 *
 *   pl_quant_tool gen-blocks TYPE NBLOCKS SEED MODE OUT    MODE: random|wild|exact|edge
 *   pl_quant_tool gen-rows N NROWS SEED OUT                 rows of every distribution in turn
 *   pl_quant_tool gen-imatrix N SEED OUT
 *   pl_quant_tool to-float TYPE IN OUT [--tier T]
 *   pl_quant_tool quantize TYPE IN OUT N [--imatrix F]     rows through pl_quant_from_float
 *   pl_quant_tool act TYPE IN OUT N [--tier T]             activation encoder, row by row
 *   pl_quant_tool kv-store TYPE IN OUT N                  the CPU backend's kv_store op (2 threads),
 *                                                          all rows in one call, as a KV cache is written
 *   pl_quant_tool vec-dot TYPE W A N OUT [--tier T]
 *   pl_quant_tool cmp-bits A B                             byte-identical files (f32 NaNs by bits)
 *   pl_quant_tool cmp-dot TYPE W A N OURS THEIRS [--exact] within qt_dot_tolerance (--exact: identical)
 *   pl_quant_tool types WHAT      lines "TYPE VEC_DOT_TYPE BLOCK VEC_DOT_BLOCK NEEDS_IMATRIX" of the
 *                                 types with a kernel WHAT: dot|decode|encode|act
 *   pl_quant_tool vec-dot-time TYPE W A N REPS [--tier T]   "ns_per_row X", best of REPS (bench only)
 *   pl_quant_tool tile-time TYPE W A N REPS [--tier T]      "ns_per_dot X", the tile kernel over every
 *                                                          row x activation row, best of REPS (bench only)
 *   pl_quant_tool int8-peak                                one thread's int8 multiply-accumulates per second
 *                                                          (x86 AVX-512 VNNI; the tiles' ceiling, bench only)
 *   pl_quant_tool tiers                                    the SIMD tiers this host runs
 *   pl_quant_tool batch FILE                               the commands above, one per line
 * Exit 0 on success/agreement, 1 on disagreement or error (one line why).
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/quant_testdata.h"
#include "backend/backend.h"
#include "backend/compute.h"
#include "quant/kernels.h"
#include "quant/kv_types.h"
#include "quant/types.h"

static int fail(const char *msg, const char *arg) {
    fprintf(stderr, "pl_quant_tool: %s%s%s\n", msg, arg ? " " : "", arg ? arg : "");
    return 1;
}

static void *read_file(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *p = malloc(sz > 0 ? (size_t)sz : 1);
    if (!p || (sz > 0 && fread(p, 1, (size_t)sz, f) != (size_t)sz)) {
        fclose(f);
        free(p);
        return NULL;
    }
    fclose(f);
    *n = (size_t)(sz > 0 ? sz : 0);
    return p;
}

static int write_file(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n) return fail("cannot write", path);
    fclose(f);
    return 0;
}

static int type_arg(const char *name) {
    int t = pocketllm_type_from_name(name);
    if (t < 0) fprintf(stderr, "pl_quant_tool: unknown type %s\n", name);
    return t;
}

static const pl_quant_kernel_set *tier_kernels(uint32_t type, int argc, char **argv) {
    for (int i = 0; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--tier")) {
            int tier = pl_quant_tier_from_name(argv[i + 1]);
            return tier < 0 ? NULL : pl_quant_kernels_tier(type, (pl_quant_tier)tier);
        }
    return pl_quant_kernels(type);
}

static size_t row_bytes(uint32_t type, int64_t n) {
    uint64_t b = 0;
    return pl_type_row_bytes(type, (uint64_t)n, &b) ? (size_t)b : 0;
}

static int cmd_gen_blocks(char **argv) {
    int t = type_arg(argv[2]);
    if (t < 0) return 1;
    int64_t nb = atoll(argv[3]);
    pl_rng r;
    pl_rng_seed(&r, strtoull(argv[4], NULL, 10));
    const char *m = argv[5];
    qt_mode mode = !strcmp(m, "random") ? QT_RANDOM : !strcmp(m, "wild") ? QT_WILD : !strcmp(m, "exact") ? QT_EXACT
                   : !strcmp(m, "edge") ? QT_EDGE : (qt_mode)-1;
    if ((int)mode < 0 || nb <= 0) return fail("bad mode or count", m);
    size_t bytes = (size_t)nb * pl_type_get((uint32_t)t)->bytes;
    void *p = calloc(1, bytes);
    qt_gen_blocks((uint32_t)t, mode, &r, p, nb);
    int rc = write_file(argv[6], p, bytes);
    free(p);
    return rc;
}

static int cmd_gen_rows(char **argv) {
    int64_t n = atoll(argv[2]), rows = atoll(argv[3]);
    if (n <= 0 || rows <= 0) return fail("bad shape", NULL);
    pl_rng r;
    pl_rng_seed(&r, strtoull(argv[4], NULL, 10));
    float *x = malloc(sizeof(float) * (size_t)(n * rows));
    for (int64_t i = 0; i < rows; i++) qt_gen_floats(&r, x + i * n, n, (int)(i % QT_DISTS));
    int rc = write_file(argv[5], x, sizeof(float) * (size_t)(n * rows));
    free(x);
    return rc;
}

static int cmd_gen_imatrix(char **argv) {
    int64_t n = atoll(argv[2]);
    if (n <= 0) return fail("bad length", NULL);
    pl_rng r;
    pl_rng_seed(&r, strtoull(argv[3], NULL, 10));
    float *x = malloc(sizeof(float) * (size_t)n);
    qt_gen_imatrix(&r, x, n);
    int rc = write_file(argv[4], x, sizeof(float) * (size_t)n);
    free(x);
    return rc;
}

static int cmd_to_float(int argc, char **argv) {
    int t = type_arg(argv[2]);
    if (t < 0) return 1;
    const pl_quant_kernel_set *k = tier_kernels((uint32_t)t, argc, argv);
    if (!k || !k->to_float) return fail("no decoder (or tier unsupported) for", argv[2]);
    size_t n;
    void *in = read_file(argv[3], &n);
    const pl_type_traits *tr = pl_type_get((uint32_t)t);
    if (!in || n % tr->bytes) return fail("input is not whole blocks:", argv[3]);
    int64_t count = (int64_t)(n / tr->bytes) * tr->block;
    float *out = malloc(sizeof(float) * (size_t)(count ? count : 1));
    k->to_float(in, out, count);
    int rc = write_file(argv[4], out, sizeof(float) * (size_t)count);
    free(in), free(out);
    return rc;
}

static int cmd_quantize(int argc, char **argv) {
    int t = type_arg(argv[2]);
    if (t < 0) return 1;
    int64_t n = atoll(argv[5]);
    size_t bytes, ib = 0;
    float *x = read_file(argv[3], &bytes), *im = NULL;
    if (!x || n <= 0 || bytes % (sizeof(float) * (size_t)n)) return fail("input is not whole rows", argv[3]);
    if (argc > 7 && !strcmp(argv[6], "--imatrix")) {
        im = read_file(argv[7], &ib);
        if (!im || ib != sizeof(float) * (size_t)n) return fail("imatrix must hold one row:", argv[7]);
    }
    int64_t rows = (int64_t)(bytes / (sizeof(float) * (size_t)n));
    size_t rb = row_bytes((uint32_t)t, n);
    if (!rb) return fail("row length is not whole blocks of", argv[2]);
    uint8_t *out = calloc((size_t)rows ? (size_t)rows : 1, rb);
    if (pl_quant_from_float((uint32_t)t, x, out, rows, n, im) != POCKETLLM_OK)
        return fail(pocketllm_last_error(), NULL);
    int rc = write_file(argv[4], out, rb * (size_t)rows);
    free(x), free(im), free(out);
    return rc;
}

/* The f32 rows of IN (argv[3], rows of N = argv[5]) and a zeroed output
 * of as many rows of `type`; false (said) when IN is not whole rows. */
typedef struct {
    float *x;
    uint8_t *out;
    int64_t n;
    size_t rows, rb;
} f32_rows;

static bool rows_in(char **argv, uint32_t type, f32_rows *r) {
    size_t bytes;
    r->n = atoll(argv[5]);
    r->x = read_file(argv[3], &bytes);
    r->rb = row_bytes(type, r->n);
    if (!r->x || !r->rb || bytes % (sizeof(float) * (size_t)r->n)) {
        free(r->x);
        fail("input is not whole rows", argv[3]);
        return false;
    }
    r->rows = bytes / (sizeof(float) * (size_t)r->n);
    r->out = calloc(r->rows ? r->rows : 1, r->rb);
    return true;
}

static int cmd_act(int argc, char **argv) {
    int t = type_arg(argv[2]);
    if (t < 0) return 1;
    const pl_quant_kernel_set *k = tier_kernels((uint32_t)t, argc, argv);
    if (!k || !k->act_from_float) return fail("no activation encoder (or tier unsupported) for", argv[2]);
    f32_rows r;
    if (!rows_in(argv, (uint32_t)t, &r)) return 1;
    for (size_t i = 0; i < r.rows; i++) k->act_from_float(r.x + i * (size_t)r.n, r.out + i * r.rb, r.n);
    int rc = write_file(argv[4], r.out, r.rb * r.rows);
    free(r.x), free(r.out);
    return rc;
}

static int cmd_kv_store(char **argv) {
    int t = type_arg(argv[2]);
    if (t < 0) return 1;
    if (!pl_kv_type_supported((uint32_t)t)) return fail("not a KV cache type:", argv[2]);
    f32_rows r;
    if (!rows_in(argv, (uint32_t)t, &r)) return 1;
    pl_compute *c = NULL;
    if (pl_backend_find("cpu")->compute_new(2, &c)) return fail("cannot make a CPU compute instance", NULL);
    c->ops->kv_store(c, (uint32_t)t, r.x, r.out, (int64_t)r.rows * r.n);
    int rc = c->status ? fail("kv_store failed:", pocketllm_last_error()) : write_file(argv[4], r.out, r.rb * r.rows);
    c->ops->free(c);
    free(r.x), free(r.out);
    return rc;
}

static int cmd_vec_dot(int argc, char **argv) {
    int t = type_arg(argv[2]);
    if (t < 0) return 1;
    const pl_quant_kernel_set *k = tier_kernels((uint32_t)t, argc, argv);
    if (!k || !k->vec_dot) return fail("no vec_dot (or tier unsupported) for", argv[2]);
    int64_t n = atoll(argv[5]);
    size_t wn, an, wr = row_bytes((uint32_t)t, n), ar = row_bytes(pl_type_get((uint32_t)t)->vec_dot_type, n);
    uint8_t *w = read_file(argv[3], &wn), *a = read_file(argv[4], &an);
    if (!w || !a || !wr || !ar || wn % wr || an % ar || wn / wr != an / ar) return fail("bad W/A rows", NULL);
    size_t rows = wn / wr;
    float *out = malloc(sizeof(float) * (rows ? rows : 1));
    for (size_t r = 0; r < rows; r++) out[r] = k->vec_dot(n, w + r * wr, a + r * ar);
    int rc = write_file(argv[6], out, sizeof(float) * rows);
    free(w), free(a), free(out);
    return rc;
}

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The arguments the timing commands share: TYPE W A N REPS [--tier T],
 * the two files read whole.  False (the reason printed) on a bad type,
 * file or row count; ti->k may still be NULL when the tier has no kernels,
 * which each command checks for the kernel it times.  The caller frees
 * ti->w and ti->a either way. */
typedef struct {
    const pl_quant_kernel_set *k;
    int64_t n;
    int reps;
    uint8_t *w, *a;
    size_t wn, an, wr, ar; /* file sizes and row sizes */
} timing_inputs;

static bool timing_inputs_read(int argc, char **argv, timing_inputs *ti) {
    memset(ti, 0, sizeof *ti);
    int t = type_arg(argv[2]);
    if (t < 0) return false;
    ti->k = tier_kernels((uint32_t)t, argc, argv);
    ti->n = atoll(argv[5]);
    ti->reps = atoi(argv[6]);
    ti->wr = row_bytes((uint32_t)t, ti->n);
    ti->ar = row_bytes(pl_type_get((uint32_t)t)->vec_dot_type, ti->n);
    ti->w = read_file(argv[3], &ti->wn);
    ti->a = read_file(argv[4], &ti->an);
    if (!ti->w || !ti->a || !ti->wr || !ti->ar || ti->reps <= 0 || ti->wn % ti->wr || ti->an % ti->ar) {
        fail("bad W/A rows", NULL);
        return false;
    }
    return true;
}

static int cmd_vec_dot_time(int argc, char **argv) {
    timing_inputs ti;
    bool ok = timing_inputs_read(argc, argv, &ti);
    const pl_quant_kernel_set *k = ti.k;
    if (ok && (!k || !k->vec_dot)) ok = !fail("no vec_dot (or tier unsupported) for", argv[2]);
    if (ok && ti.wn / ti.wr != ti.an / ti.ar) ok = !fail("W and A differ in rows", NULL);
    const size_t rows = ok ? ti.wn / ti.wr : 0;
    double best = 1e30;
    volatile float sink = 0;
    for (int r = 0; ok && r < ti.reps; r++) {
        double t0 = now_ns();
        for (size_t i = 0; i < rows; i++) sink += k->vec_dot(ti.n, ti.w + i * ti.wr, ti.a + i * ti.ar);
        double dt = (now_ns() - t0) / (double)rows;
        if (dt < best) best = dt;
    }
    (void)sink;
    if (ok) printf("ns_per_row %.1f\n", best);
    free(ti.w), free(ti.a);
    return ok ? 0 : 1;
}

/* The tile kernel (a prompt's or a verification pass's products): every
 * weight row against every activation row, tile_cols activation rows at a
 * time as pl_cpu_mm_rows walks them; ns per row x activation-row dot. */
static int cmd_tile_time(int argc, char **argv) {
    timing_inputs ti;
    bool ok = timing_inputs_read(argc, argv, &ti);
    const pl_quant_kernel_set *k = ti.k;
    if (ok && (!k || !k->vec_dot_tile)) ok = !fail("no tile kernel (or tier unsupported) for", argv[2]);
    size_t rows = ok ? ti.wn / ti.wr / (size_t)k->tile_rows * (size_t)k->tile_rows : 0;
    size_t cols = ok ? ti.an / ti.ar / (size_t)k->tile_cols * (size_t)k->tile_cols : 0;
    if (ok && (!rows || !cols)) ok = !fail("fewer rows than one tile", NULL);
    float *y = ok ? malloc(rows * cols * sizeof(float)) : NULL;
    if (ok && !y) ok = !fail("out of memory", NULL);
    double best = 1e30;
    for (int r = 0; ok && r < ti.reps; r++) {
        double t0 = now_ns();
        for (size_t c = 0; c < cols; c += (size_t)k->tile_cols)
            for (size_t i = 0; i < rows; i += (size_t)k->tile_rows)
                k->vec_dot_tile(ti.n, ti.w + i * ti.wr, ti.wr, ti.a + c * ti.ar, ti.ar, y + c * rows + i, rows);
        double dt = (now_ns() - t0) / (double)(rows * cols);
        if (dt < best) best = dt;
    }
    if (ok) printf("ns_per_dot %.2f tile %dx%d\n", best, k->tile_rows, k->tile_cols);
    free(ti.w), free(ti.a), free(y);
    return ok ? 0 : 1;
}

/* The ceiling the k-quant tiles are measured against: one thread's int8
 * multiply-accumulates per second in the AVX-512 kernels' core step (a
 * maddubs then a dpwssd: 64 products) and in one vpdpbusd (64 products),
 * ten independent accumulators so that only throughput counts. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PL_PEAK_STEPS 200000000L
#define PL_PEAK_ACC(c) __m512i c##0 = _mm512_set1_epi32(0), c##1 = _mm512_set1_epi32(1), c##2 = _mm512_set1_epi32(2), \
    c##3 = _mm512_set1_epi32(3), c##4 = _mm512_set1_epi32(4), c##5 = _mm512_set1_epi32(5), c##6 = _mm512_set1_epi32(6), \
    c##7 = _mm512_set1_epi32(7), c##8 = _mm512_set1_epi32(8), c##9 = _mm512_set1_epi32(9)
#define PL_PEAK_SUM(c) _mm512_reduce_add_epi32(_mm512_add_epi32( \
    _mm512_add_epi32(_mm512_add_epi32(c##0, c##1), _mm512_add_epi32(c##2, c##3)), \
    _mm512_add_epi32(_mm512_add_epi32(_mm512_add_epi32(c##4, c##5), _mm512_add_epi32(c##6, c##7)), _mm512_add_epi32(c##8, c##9))))
__attribute__((target("avx512f,avx512bw,avx512vnni"))) static int peak_pair(void) {
    __m512i u = _mm512_set1_epi8(3), v = _mm512_set1_epi8(5), sc = _mm512_set1_epi16(7);
    PL_PEAK_ACC(c);
    for (long i = 0; i < PL_PEAK_STEPS / 10; i++) {
        __asm__ volatile("" : "+v"(u), "+v"(v)); /* keeps the steps from being folded */
#define PL_PAIR(x) x = _mm512_dpwssd_epi32(x, _mm512_maddubs_epi16(u, v), sc)
        PL_PAIR(c0), PL_PAIR(c1), PL_PAIR(c2), PL_PAIR(c3), PL_PAIR(c4);
        PL_PAIR(c5), PL_PAIR(c6), PL_PAIR(c7), PL_PAIR(c8), PL_PAIR(c9);
#undef PL_PAIR
    }
    return PL_PEAK_SUM(c);
}
__attribute__((target("avx512f,avx512bw,avx512vnni"))) static int peak_dpbusd(void) {
    __m512i u = _mm512_set1_epi8(3), v = _mm512_set1_epi8(5);
    PL_PEAK_ACC(c);
    for (long i = 0; i < PL_PEAK_STEPS / 10; i++) {
        __asm__ volatile("" : "+v"(u), "+v"(v));
#define PL_BUSD(x) x = _mm512_dpbusd_epi32(x, u, v)
        PL_BUSD(c0), PL_BUSD(c1), PL_BUSD(c2), PL_BUSD(c3), PL_BUSD(c4);
        PL_BUSD(c5), PL_BUSD(c6), PL_BUSD(c7), PL_BUSD(c8), PL_BUSD(c9);
#undef PL_BUSD
    }
    return PL_PEAK_SUM(c);
}
static int cmd_int8_peak(void) {
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512vnni") || !__builtin_cpu_supports("avx512bw"))
        return fail("int8-peak needs AVX-512 VNNI, which this CPU lacks", NULL);
    volatile int sink = 0;
    double best_pair = 1e30, best_busd = 1e30;
    for (int r = 0; r < 3; r++) {
        double t0 = now_ns();
        sink += peak_pair();
        double t1 = now_ns();
        sink += peak_dpbusd();
        double t2 = now_ns();
        if (t1 - t0 < best_pair) best_pair = t1 - t0;
        if (t2 - t1 < best_busd) best_busd = t2 - t1;
    }
    (void)sink;
    printf("maddubs+dpwssd_GMAC_per_s %.1f\n", 64.0 * PL_PEAK_STEPS / best_pair);
    printf("dpbusd_GMAC_per_s %.1f\n", 64.0 * PL_PEAK_STEPS / best_busd);
    return 0;
}
#else
static int cmd_int8_peak(void) { return fail("int8-peak is an x86-64 (AVX-512 VNNI) measurement", NULL); }
#endif

static int cmd_cmp_bits(char **argv) {
    size_t na, nb;
    uint8_t *a = read_file(argv[2], &na), *b = read_file(argv[3], &nb);
    if (!a || !b) return fail("cannot read inputs", NULL);
    if (na != nb) {
        fprintf(stderr, "pl_quant_tool: sizes differ: %zu vs %zu bytes\n", na, nb);
        return 1;
    }
    size_t first = SIZE_MAX, count = 0;
    for (size_t i = 0; i < na; i++)
        if (a[i] != b[i]) {
            if (first == SIZE_MAX) first = i;
            count++;
        }
    if (count) fprintf(stderr, "pl_quant_tool: %zu of %zu bytes differ, first at byte %zu\n", count, na, first);
    free(a), free(b);
    return count ? 1 : 0;
}

static int cmd_cmp_dot(int argc, char **argv) {
    int t = type_arg(argv[2]);
    if (t < 0) return 1;
    int64_t n = atoll(argv[5]);
    bool exact = argc > 8 && !strcmp(argv[8], "--exact");
    size_t wn, an, on, tn, wr = row_bytes((uint32_t)t, n), ar = row_bytes(pl_type_get((uint32_t)t)->vec_dot_type, n);
    uint8_t *w = read_file(argv[3], &wn), *a = read_file(argv[4], &an);
    float *ours = read_file(argv[6], &on), *theirs = read_file(argv[7], &tn);
    if (!w || !a || !ours || !theirs || !wr || !ar || on != tn || on / 4 != wn / wr) return fail("bad inputs", NULL);
    size_t rows = on / 4, bad = 0;
    double worst = 0.0;
    for (size_t r = 0; r < rows; r++) {
        double tol = exact ? 0.0 : qt_dot_tolerance((uint32_t)t, w + r * wr, a + r * ar, n);
        double diff = fabs((double)ours[r] - (double)theirs[r]);
        bool same = memcmp(&ours[r], &theirs[r], 4) == 0 || (isnan(ours[r]) && isnan(theirs[r]));
        if (!same && !(diff <= tol)) {
            if (bad++ < 3)
                fprintf(stderr, "pl_quant_tool: %s row %zu: ours %.9g theirs %.9g (tolerance %.3g)\n", argv[2], r,
                        ours[r], theirs[r], tol);
        } else if (tol > 0) {
            worst = fmax(worst, diff / tol);
        }
    }
    printf("%s: %zu rows, %zu beyond tolerance, worst |diff|/tolerance %.4f\n", argv[2], rows, bad, worst);
    free(w), free(a), free(ours), free(theirs);
    return bad ? 1 : 0;
}

static int cmd_types(char **argv) {
    const char *what = argv[2];
    for (uint32_t t = 0; t < PL_TYPE_COUNT; t++) {
        const pl_type_traits *tr = pl_type_get(t);
        if (!pl_type_valid(t)) continue;
        bool want = !strcmp(what, "dot") ? tr->vec_dot != NULL
                    : !strcmp(what, "decode") ? tr->to_float != NULL
                    : !strcmp(what, "encode") ? tr->from_float != NULL
                    : !strcmp(what, "act") ? tr->act_from_float != NULL : false;
        if (want)
            printf("%s %s %u %u %d\n", tr->name, pl_type_get(tr->vec_dot_type)->name, tr->block,
                   pl_type_get(tr->vec_dot_type)->block, tr->requires_imatrix ? 1 : 0);
    }
    return 0;
}

static int run(int argc, char **argv);

/* One command per line (as on the command line, space-separated); every
 * line runs even after a failure; the summary says how many failed. */
static int cmd_batch(char **argv) {
    FILE *f = fopen(argv[2], "r");
    if (!f) return fail("cannot open", argv[2]);
    char line[8192], copy[8192];
    int n = 0, bad = 0;
    while (fgets(line, sizeof line, f)) {
        snprintf(copy, sizeof copy, "%s", line);
        copy[strcspn(copy, "\n")] = '\0';
        char *av[32];
        int ac = 0;
        av[ac++] = "pl_quant_tool";
        for (char *tok = strtok(line, " \t\r\n"); tok && ac < 31; tok = strtok(NULL, " \t\r\n")) av[ac++] = tok;
        av[ac] = NULL;
        if (ac < 2) continue;
        n++;
        fflush(stdout);
        if (run(ac, av) != 0) {
            fprintf(stderr, "FAIL: %s\n", copy);
            bad++;
        }
    }
    fclose(f);
    printf("batch: %d commands, %d failed\n", n, bad);
    return bad ? 1 : 0;
}

static int cmd_tiers(void) {
    for (int t = 0; t < PL_TIER_COUNT; t++)
        if (pl_quant_tier_supported((pl_quant_tier)t)) printf("%s\n", pl_quant_tier_name((pl_quant_tier)t));
    return 0;
}

int main(int argc, char **argv) { return run(argc, argv); }

static int run(int argc, char **argv) {
    const char *c = argc > 1 ? argv[1] : "";
    if (!strcmp(c, "batch") && argc == 3) return cmd_batch(argv);
    if (!strcmp(c, "tiers") && argc == 2) return cmd_tiers();
    if (!strcmp(c, "gen-blocks") && argc == 7) return cmd_gen_blocks(argv);
    if (!strcmp(c, "gen-rows") && argc == 6) return cmd_gen_rows(argv);
    if (!strcmp(c, "gen-imatrix") && argc == 5) return cmd_gen_imatrix(argv);
    if (!strcmp(c, "to-float") && argc >= 5) return cmd_to_float(argc, argv);
    if (!strcmp(c, "quantize") && argc >= 6) return cmd_quantize(argc, argv);
    if (!strcmp(c, "act") && argc >= 6) return cmd_act(argc, argv);
    if (!strcmp(c, "vec-dot") && argc >= 7) return cmd_vec_dot(argc, argv);
    if (!strcmp(c, "kv-store") && argc == 6) return cmd_kv_store(argv);
    if (!strcmp(c, "vec-dot-time") && argc >= 7) return cmd_vec_dot_time(argc, argv);
    if (!strcmp(c, "tile-time") && argc >= 7) return cmd_tile_time(argc, argv);
    if (!strcmp(c, "int8-peak") && argc == 2) return cmd_int8_peak();
    if (!strcmp(c, "cmp-bits") && argc == 4) return cmd_cmp_bits(argv);
    if (!strcmp(c, "cmp-dot") && argc >= 8) return cmd_cmp_dot(argc, argv);
    if (!strcmp(c, "types") && argc == 3) return cmd_types(argv);
    fprintf(stderr, "usage: see the comment at the top of tests/tools/pl_quant_tool.c\n");
    return 2;
}
