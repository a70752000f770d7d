/*
 * pl_gguf_edit.c -- a test helper that copies a GGUF file with a few edits,
 * to make damaged variants of a good checkpoint (or imatrix) that the
 * writer would never produce by itself: a count key that disagrees with
 * the tensors, a tensor whose extents are regrouped (the same elements and
 * bytes, another shape), a key left out.
 *
 *   pl_gguf_edit IN OUT [--set-u32 KEY V] [--set-bool KEY 0|1] [--drop-key KEY] [--shape NAME D0,D1[,D2[,D3]]] ...
 *
 * --shape regroups a tensor's elements; with fewer of them it keeps a prefix
 * of the data (a counts tensor with fewer rows).  --set-bool also makes a
 * good file a checkpoint would have (tokenizer.ggml.add_eos_token, as
 * Qwen3-Embedding sets it).  Every option may repeat.
 * Keys keep their order (a set key not in IN goes last).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pocketllm.h"

#define MAX_EDITS 16

static int die(const char *msg, const char *arg) {
    fprintf(stderr, "pl_gguf_edit: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
    return 1;
}

typedef struct edit {
    const char *key, *name;
    uint32_t u32;
    bool is_bool;
    int64_t ne[4];
    uint32_t n_dims;
} edit;

static bool parse_shape(const char *s, edit *e) {
    e->n_dims = 0;
    for (int d = 0; d < 4; d++) e->ne[d] = 1;
    while (*s && e->n_dims < 4) {
        char *end;
        long long v = strtoll(s, &end, 10);
        if (end == s || v < 0) return false;
        e->ne[e->n_dims++] = v;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return false;
    }
    return !*s && e->n_dims > 0;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: pl_gguf_edit IN OUT [--set-u32 KEY V] [--set-bool KEY 0|1] [--drop-key KEY] "
                        "[--shape NAME D0,D1,...]\n");
        return 2;
    }
    edit sets[MAX_EDITS], drops[MAX_EDITS], shapes[MAX_EDITS];
    int n_set = 0, n_drop = 0, n_shape = 0;
    for (int i = 3; i < argc; i++) {
        if (i + 2 < argc && !strcmp(argv[i], "--set-u32") && n_set < MAX_EDITS) {
            sets[n_set].key = argv[i + 1];
            sets[n_set].is_bool = false;
            sets[n_set++].u32 = (uint32_t)strtoul(argv[i + 2], NULL, 10);
            i += 2;
        } else if (i + 2 < argc && !strcmp(argv[i], "--set-bool") && n_set < MAX_EDITS) {
            sets[n_set].key = argv[i + 1];
            sets[n_set].is_bool = true;
            sets[n_set++].u32 = strcmp(argv[i + 2], "0") != 0;
            i += 2;
        } else if (i + 1 < argc && !strcmp(argv[i], "--drop-key") && n_drop < MAX_EDITS) {
            drops[n_drop++].key = argv[++i];
        } else if (i + 2 < argc && !strcmp(argv[i], "--shape") && n_shape < MAX_EDITS) {
            shapes[n_shape].name = argv[i + 1];
            if (!parse_shape(argv[i + 2], &shapes[n_shape++])) return die("bad shape", argv[i + 2]);
            i += 2;
        } else {
            return die("bad option", argv[i]);
        }
    }
    pocketllm_gguf *g;
    if (pocketllm_gguf_open(argv[1], &g)) return die(pocketllm_last_error(), NULL);
    pocketllm_gguf_writer *w;
    if (pocketllm_gguf_writer_new(&w)) return die(pocketllm_last_error(), NULL);
    int rc = 0;
    for (uint64_t i = 0; i < pocketllm_gguf_kv_count(g) && !rc; i++) {
        const char *k = pocketllm_gguf_kv_key(g, i);
        bool drop = false;
        for (int d = 0; d < n_drop; d++) drop |= !strcmp(drops[d].key, k);
        if (!drop && pocketllm_gguf_writer_set_value(w, k, pocketllm_gguf_kv_value(g, i)))
            rc = die(pocketllm_last_error(), k);
    }
    for (int s = 0; s < n_set && !rc; s++)
        if (sets[s].is_bool ? pocketllm_gguf_writer_set_bool(w, sets[s].key, (int)sets[s].u32)
                            : pocketllm_gguf_writer_set_u32(w, sets[s].key, sets[s].u32))
            rc = die(pocketllm_last_error(), sets[s].key);
    for (uint64_t i = 0; i < pocketllm_gguf_tensor_count(g) && !rc; i++) {
        pocketllm_tensor_info t;
        if (pocketllm_gguf_tensor(g, i, &t)) {
            rc = die(pocketllm_last_error(), NULL);
            break;
        }
        uint32_t n_dims = t.n_dims;
        int64_t ne[4] = {t.ne[0], t.ne[1], t.ne[2], t.ne[3]};
        for (int s = 0; s < n_shape; s++) {
            if (strcmp(shapes[s].name, t.name)) continue;
            if (shapes[s].ne[0] * shapes[s].ne[1] * shapes[s].ne[2] * shapes[s].ne[3] > ne[0] * ne[1] * ne[2] * ne[3])
                rc = die("the new shape holds more elements than the tensor has", t.name);
            memcpy(ne, shapes[s].ne, sizeof ne);
            n_dims = shapes[s].n_dims;
        }
        if (!rc && pocketllm_gguf_writer_add_tensor(w, t.name, t.type, n_dims, ne, t.data))
            rc = die(pocketllm_last_error(), t.name);
    }
    if (!rc && pocketllm_gguf_writer_write(w, argv[2])) rc = die(pocketllm_last_error(), argv[2]);
    pocketllm_gguf_writer_free(w);
    pocketllm_gguf_close(g);
    return rc;
}
