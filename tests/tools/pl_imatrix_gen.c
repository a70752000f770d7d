/*
 * pl_imatrix_gen.c -- a test helper that writes a valid importance matrix
 * for a model from random positive statistics, in llama.cpp's GGUF imatrix
 * format (or its legacy .dat format with --legacy), until `pocketllm
 * imatrix` exists.  One entry for every matrix a forward pass multiplies by
 * (every 2-D+ "*.weight" except the norms and the token embeddings, which
 * are looked up, not multiplied -- as llama-imatrix collects them).
 *
 *   pl_imatrix_gen MODEL OUT [--seed N] [--legacy] [--count C]
 *                  [--skip NAME] [--resize NAME] [--zero-count NAME] [--rename PREFIX]
 *                  [--with-embd]
 *
 * --skip leaves NAME out, --resize writes NAME one column short (a
 * mismatching imatrix), --zero-count gives NAME a count of 0 (llama.cpp
 * reads its weights as 1), --rename puts PREFIX before every name (an
 * imatrix that matches none of the model's tensors), --with-embd adds an
 * entry for token_embd.weight too (llama-imatrix never has one; with it,
 * llama.cpp can quantize the embeddings to the types that need weights).  Counts are whole numbers (C tokens, default
 * 512), as llama-imatrix writes them, so any reader's rounding agrees.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "pocketllm.h"

static int die(const char *msg, const char *arg) {
    fprintf(stderr, "pl_imatrix_gen: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
    return 1;
}

static bool wanted(const pocketllm_tensor_info *t, bool embd) {
    size_t n = strlen(t->name);
    int dims = 1;
    for (int d = 3; d >= 1; d--)
        if (t->ne[d] > 1) {
            dims = d + 1;
            break;
        }
    return dims >= 2 && n > 7 && strcmp(t->name + n - 7, ".weight") == 0 && !strstr(t->name, "_norm") &&
           (embd || strcmp(t->name, "token_embd.weight") != 0);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: pl_imatrix_gen MODEL OUT [--seed N] [--legacy] [--count C] [--skip NAME] "
                        "[--resize NAME] [--zero-count NAME] [--rename PREFIX] [--with-embd]\n");
        return 2;
    }
    uint64_t seed = 1;
    int legacy = 0;
    bool embd = false;
    float count = 512.0f;
    const char *skip = "", *resize = "", *zero = "", *prefix = "";
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--legacy")) legacy = 1;
        else if (!strcmp(argv[i], "--with-embd")) embd = true;
        else if (i + 1 < argc && !strcmp(argv[i], "--seed")) seed = strtoull(argv[++i], NULL, 10);
        else if (i + 1 < argc && !strcmp(argv[i], "--count")) count = (float)atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--skip")) skip = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "--resize")) resize = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "--zero-count")) zero = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "--rename")) prefix = argv[++i];
        else return die("unknown option", argv[i]);
    }
    pocketllm_gguf *g;
    if (pocketllm_gguf_open(argv[1], &g)) return die(pocketllm_last_error(), NULL);
    pl_rng rng;
    pl_rng_seed(&rng, seed);
    uint64_t nt = pocketllm_gguf_tensor_count(g);
    float **bufs = calloc((size_t)(2 * nt + 1), sizeof *bufs);
    pocketllm_gguf_writer *w = NULL;
    FILE *f = NULL;
    int32_t n_entries = 0;
    if (legacy) {
        if (!(f = fopen(argv[2], "wb"))) return die("cannot create", argv[2]);
        fwrite(&n_entries, 4, 1, f); /* patched at the end */
    } else {
        pocketllm_gguf_writer_new(&w);
        const char *ds = "pl_imatrix_gen random statistics";
        pocketllm_gguf_writer_set_str(w, "general.type", "imatrix");
        pocketllm_gguf_writer_set_str_array(w, "imatrix.datasets", &ds, 1);
        pocketllm_gguf_writer_set_u32(w, "imatrix.chunk_count", 4);
        pocketllm_gguf_writer_set_u32(w, "imatrix.chunk_size", 128);
    }
    for (uint64_t i = 0; i < nt; i++) {
        pocketllm_tensor_info t;
        pocketllm_gguf_tensor(g, i, &t);
        if (!wanted(&t, embd) || !strcmp(t.name, skip)) continue;
        int64_t ne0 = t.ne[0] - (strcmp(t.name, resize) == 0 ? 1 : 0), nmat = t.ne[2];
        float c = strcmp(t.name, zero) == 0 ? 0.0f : count;
        float *sums = malloc(sizeof(float) * (size_t)(ne0 * nmat)), *cnt = malloc(sizeof(float) * (size_t)nmat);
        bufs[2 * i] = sums;
        bufs[2 * i + 1] = cnt;
        /* mean squares spread over two orders of magnitude, as real ones are */
        for (int64_t k = 0; k < ne0 * nmat; k++) {
            float u = pl_rng_uniform(&rng);
            sums[k] = (0.01f + u * u * 4.0f) * (c > 0 ? c : 1.0f);
        }
        for (int64_t k = 0; k < nmat; k++) cnt[k] = c;
        n_entries++;
        char ename[96];
        snprintf(ename, sizeof ename, "%s%s", prefix, t.name);
        if (legacy) {
            /* stored as (sum / count) * calls, with calls = chunks */
            int32_t len = (int32_t)strlen(ename), ncall = 4, nval = (int32_t)(ne0 * nmat);
            fwrite(&len, 4, 1, f);
            fwrite(ename, 1, (size_t)len, f);
            fwrite(&ncall, 4, 1, f);
            fwrite(&nval, 4, 1, f);
            for (int64_t k = 0; k < ne0 * nmat; k++) {
                float v = (c > 0 ? sums[k] / c : sums[k]) * (float)ncall;
                fwrite(&v, 4, 1, f);
            }
        } else {
            char name[128];
            int64_t ne_s[2] = {ne0, nmat}, ne_c[2] = {1, nmat};
            snprintf(name, sizeof name, "%s.in_sum2", ename);
            if (pocketllm_gguf_writer_add_tensor(w, name, 0, 2, ne_s, sums)) return die(pocketllm_last_error(), NULL);
            snprintf(name, sizeof name, "%s.counts", ename);
            if (pocketllm_gguf_writer_add_tensor(w, name, 0, 2, ne_c, cnt)) return die(pocketllm_last_error(), NULL);
        }
    }
    int rc = 0;
    if (legacy) {
        int32_t chunks = 4, dlen = 6;
        fwrite(&chunks, 4, 1, f);
        fwrite(&dlen, 4, 1, f);
        fwrite("random", 1, 6, f);
        fseek(f, 0, SEEK_SET);
        fwrite(&n_entries, 4, 1, f);
        if (fclose(f) != 0) rc = die("cannot write", argv[2]);
    } else {
        if (pocketllm_gguf_writer_write(w, argv[2])) rc = die(pocketllm_last_error(), NULL);
        pocketllm_gguf_writer_free(w);
    }
    for (uint64_t i = 0; i < 2 * nt; i++) free(bufs[i]);
    free(bufs);
    pocketllm_gguf_close(g);
    if (!rc) fprintf(stderr, "pl_imatrix_gen: %d entries\n", n_entries);
    return rc;
}
