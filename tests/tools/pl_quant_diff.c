/*
 * pl_quant_diff.c -- compare a quantized GGUF with llama.cpp's quantization
 * of the same input, tensor by tensor: same tensors in the same order, same
 * types and shapes, same bytes, same metadata (in order).
 *
 *   pl_quant_diff OURS THEIRS [--ignore-key KEY]... [--types-only]
 *   pl_quant_diff --types FILE        (one "name type" line per tensor)
 *
 * Prints up to 20 differences, "types: equal" (or "differ": every tensor
 * present in both in the same order with the same type and shape) and a
 * summary line starting "equal:" or "DIFFERENT:"; exit 0 when everything
 * compared is equal, 1 when not, 2 on a usage or read error.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "gguf/gguf.h"
#include "quant/types.h"

static int shown;

static void diff(const char *fmt, const char *a, const char *b) {
    if (shown++ < 20) {
        printf(fmt, a, b);
        putchar('\n');
    }
}

static bool value_eq(const pocketllm_gguf_value *a, const pocketllm_gguf_value *b) {
    if (a->type != b->type) return false;
    if (a->type == POCKETLLM_GGUF_STRING) return a->n == b->n && memcmp(a->str, b->str, a->n) == 0;
    if (a->type != POCKETLLM_GGUF_ARRAY) return memcmp(a->raw, b->raw, pl_gguf_type_size(a->type)) == 0;
    if (a->elem_type != b->elem_type || a->n != b->n) return false;
    uint32_t es = pl_gguf_type_size(a->elem_type);
    if (es) return a->n == 0 || memcmp(a->raw, b->raw, a->n * es) == 0;
    if (a->elem_type == POCKETLLM_GGUF_STRING) {
        for (uint64_t i = 0; i < a->n; i++) {
            uint64_t la, lb;
            const char *sa = pl_gguf_array_str(a, i, &la), *sb = pl_gguf_array_str(b, i, &lb);
            if (la != lb || memcmp(sa, sb, (size_t)la)) return false;
        }
        return true;
    }
    for (uint64_t i = 0; i < a->n; i++)
        if (!value_eq(&a->elems[i], &b->elems[i])) return false;
    return true;
}

static bool ignored(const char *key, const char **ign, int n_ign) {
    for (int i = 0; i < n_ign; i++)
        if (strcmp(key, ign[i]) == 0) return true;
    return false;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--types") == 0) {
        pl_gguf *g;
        if (pocketllm_gguf_open(argv[2], &g)) {
            fprintf(stderr, "pl_quant_diff: %s\n", pocketllm_last_error());
            return 2;
        }
        for (uint64_t i = 0; i < g->n_tensors; i++) printf("%s %s\n", g->tensors[i].name, pl_type_get(g->tensors[i].type)->name);
        pocketllm_gguf_close(g);
        return 0;
    }
    if (argc < 3) {
        fprintf(stderr, "usage: pl_quant_diff OURS THEIRS [--ignore-key KEY]... [--types-only] | --types FILE\n");
        return 2;
    }
    const char *ign[32];
    int n_ign = 0;
    bool types_only = false;
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--types-only")) types_only = true;
        else if (!strcmp(argv[i], "--ignore-key") && i + 1 < argc && n_ign < 32) ign[n_ign++] = argv[++i];
        else {
            fprintf(stderr, "pl_quant_diff: bad option %s\n", argv[i]);
            return 2;
        }
    }
    pl_gguf *a, *b;
    if (pocketllm_gguf_open(argv[1], &a) || pocketllm_gguf_open(argv[2], &b)) {
        fprintf(stderr, "pl_quant_diff: %s\n", pocketllm_last_error());
        return 2;
    }
    /* metadata, in order, without the ignored keys */
    uint64_t ia = 0, ib = 0;
    bool meta_eq = true;
    for (;;) {
        while (ia < a->n_kv && ignored(a->kv[ia].key, ign, n_ign)) ia++;
        while (ib < b->n_kv && ignored(b->kv[ib].key, ign, n_ign)) ib++;
        if (ia == a->n_kv || ib == b->n_kv) {
            if (ia != a->n_kv || ib != b->n_kv) {
                meta_eq = false;
                diff("metadata: key %s is only in one file", ia < a->n_kv ? a->kv[ia].key : b->kv[ib].key, "");
            }
            break;
        }
        if (strcmp(a->kv[ia].key, b->kv[ib].key) != 0) {
            meta_eq = false;
            diff("metadata: key order differs: %s vs %s", a->kv[ia].key, b->kv[ib].key);
            break;
        }
        if (!value_eq(&a->kv[ia].value, &b->kv[ib].value)) {
            meta_eq = false;
            diff("metadata: value of %s differs%s", a->kv[ia].key, "");
        }
        ia++, ib++;
    }
    uint64_t n = a->n_tensors < b->n_tensors ? a->n_tensors : b->n_tensors, types_eq = 0, bytes_eq = 0;
    bool order_eq = a->n_tensors == b->n_tensors;
    if (!order_eq) diff("tensor count differs%s%s", "", "");
    for (uint64_t i = 0; i < n; i++) {
        const pl_gguf_tensor *x = &a->tensors[i], *y = &b->tensors[i];
        if (strcmp(x->name, y->name) != 0) {
            order_eq = false;
            diff("tensor order differs: %s vs %s", x->name, y->name);
            continue;
        }
        bool shape = x->n_dims == y->n_dims && !memcmp(x->ne, y->ne, sizeof x->ne);
        if (x->type != y->type || !shape) {
            char t[128];
            snprintf(t, sizeof t, "%s vs %s%s", pl_type_get(x->type)->name, pl_type_get(y->type)->name,
                     shape ? "" : " (shapes differ)");
            diff("%s: %s", x->name, t);
            continue;
        }
        types_eq++;
        if (x->n_bytes == y->n_bytes && memcmp(x->data, y->data, x->n_bytes) == 0) bytes_eq++;
        else if (!types_only) diff("%s: %s bytes differ", x->name, pl_type_get(x->type)->name);
    }
    bool types_ok = order_eq && types_eq == n;
    bool ok = meta_eq && types_ok && (types_only || bytes_eq == n);
    printf("types: %s\n", types_ok ? "equal" : "differ");
    printf("%s: %" PRIu64 " tensors, %" PRIu64 " same type, %" PRIu64 " same bytes, metadata %s\n",
           ok ? "equal" : "DIFFERENT", n, types_eq, bytes_eq, meta_eq ? "equal" : "differs");
    pocketllm_gguf_close(a);
    pocketllm_gguf_close(b);
    return ok ? 0 : 1;
}
