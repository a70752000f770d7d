/*
 * pl_imatrix_cmp.c -- compare two importance matrices in llama.cpp's GGUF
 * format (ours and llama.cpp's, collected over the same text): the same
 * entries, the same token counts, the same metadata, and every column's
 * sum of squares within a relative tolerance of the reference's.
 *
 *   pl_imatrix_cmp OURS REF [--rel R]     (default R 1e-3)
 *
 * Prints "entries N, columns C, max rel diff D (NAME col J), mean rel diff M";
 * exit 0 when they agree, 1 when not (with the reason), 2 on bad use.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pocketllm.h"

static int die(const char *fmt, const char *a, const char *b) {
    fprintf(stderr, "pl_imatrix_cmp: ");
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    return 1;
}

static const char *meta_str(const pocketllm_gguf *g, const char *key, char *buf, size_t cap) {
    const pocketllm_gguf_value *v = pocketllm_gguf_find(g, key);
    uint64_t u;
    if (!v) snprintf(buf, cap, "(absent)");
    else if (pocketllm_gguf_value_type(v) == POCKETLLM_GGUF_STRING) snprintf(buf, cap, "%s", pocketllm_gguf_value_str(v, NULL));
    else if (pocketllm_gguf_value_u64(v, &u) == POCKETLLM_OK) snprintf(buf, cap, "%llu", (unsigned long long)u);
    else snprintf(buf, cap, "(type %d)", (int)pocketllm_gguf_value_type(v));
    return buf;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: pl_imatrix_cmp OURS REF [--rel R]\n");
        return 2;
    }
    double tol = 1e-3;
    if (argc == 5 && !strcmp(argv[3], "--rel")) tol = atof(argv[4]);
    pocketllm_gguf *a, *b;
    if (pocketllm_gguf_open(argv[1], &a) || pocketllm_gguf_open(argv[2], &b))
        return die("%s%s", pocketllm_last_error(), "");
    const char *keys[] = {"general.type", "imatrix.chunk_count", "imatrix.chunk_size"};
    for (int k = 0; k < 3; k++) {
        char x[256], y[256];
        meta_str(a, keys[k], x, sizeof x);
        meta_str(b, keys[k], y, sizeof y);
        if (strcmp(x, y)) {
            fprintf(stderr, "pl_imatrix_cmp: %s is %s here, %s in the reference\n", keys[k], x, y);
            return 1;
        }
    }
    if (pocketllm_gguf_tensor_count(a) != pocketllm_gguf_tensor_count(b)) {
        fprintf(stderr, "pl_imatrix_cmp: %llu tensors here, %llu in the reference\n",
                (unsigned long long)pocketllm_gguf_tensor_count(a), (unsigned long long)pocketllm_gguf_tensor_count(b));
        return 1;
    }
    double max_rel = 0, sum_rel = 0;
    uint64_t cols = 0;
    char where[160] = "";
    for (uint64_t i = 0; i < pocketllm_gguf_tensor_count(a); i++) {
        pocketllm_tensor_info ta, tb;
        pocketllm_gguf_tensor(a, i, &ta);
        pocketllm_gguf_tensor(b, i, &tb);
        if (strcmp(ta.name, tb.name)) return die("tensor order differs: %s against %s", ta.name, tb.name);
        if (ta.type != 0 || tb.type != 0 || ta.ne[0] != tb.ne[0] || ta.n_bytes != tb.n_bytes)
            return die("%s: type or shape differs (%s)", ta.name, "");
        const float *x = ta.data, *y = tb.data;
        const int64_t n = ta.ne[0] * ta.ne[1];
        const size_t len = strlen(ta.name);
        if (len > 7 && !strcmp(ta.name + len - 7, ".counts")) {
            for (int64_t j = 0; j < n; j++)
                if (x[j] != y[j]) {
                    fprintf(stderr, "pl_imatrix_cmp: %s: count %g here, %g in the reference\n", ta.name, x[j], y[j]);
                    return 1;
                }
            continue;
        }
        for (int64_t j = 0; j < n; j++) {
            const double d = fabs((double)x[j] - (double)y[j]), r = d / fmax(fabs((double)y[j]), 1e-30);
            if (!isfinite(x[j]) || r > max_rel) {
                max_rel = isfinite(x[j]) ? r : INFINITY;
                snprintf(where, sizeof where, "%s col %lld", ta.name, (long long)j);
            }
            sum_rel += r;
            cols++;
        }
    }
    printf("entries %llu, columns %llu, max rel diff %.3g (%s), mean rel diff %.3g\n",
           (unsigned long long)(pocketllm_gguf_tensor_count(a) / 2), (unsigned long long)cols, max_rel, where,
           cols ? sum_rel / (double)cols : 0.0);
    pocketllm_gguf_close(a);
    pocketllm_gguf_close(b);
    if (!(max_rel <= tol)) {
        fprintf(stderr, "pl_imatrix_cmp: a column differs by %.3g relative (%s), more than %g\n", max_rel, where, tol);
        return 1;
    }
    return 0;
}
