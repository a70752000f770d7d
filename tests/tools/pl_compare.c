/*
 * pl_compare.c -- the comparison rules of tests/common/compare.h as a
 * command, for shell tests:
 *
 *   pl_compare tokens OURS REF [--margins FILE --margin M] [--other REF2]
 *       OURS/REF: files holding whitespace-separated ids (or "-" ids inline
 *       with --ours-ids/--ref-ids); FILE: one margin per reference step.
 *   pl_compare logits OURS.f32 REF.f32 VOCAB [--margin M] [--max-rel-diff F]
 *       matrices of positions x VOCAB float32.
 *   pl_compare margins REF.f32 VOCAB FIRST
 *       print the reference top-1/top-2 margin of each row from FIRST on.
 *
 * Prints one summary line; exit 0 on agreement, 1 on disagreement, 2 on
 * bad input.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/compare.h"

static void *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "pl_compare: cannot open %s\n", path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc((size_t)sz + 1);
    if (fread(p, 1, (size_t)sz, f) != (size_t)sz) exit(2);
    p[sz] = '\0';
    fclose(f);
    *n = (size_t)sz;
    return p;
}

static int32_t *read_ids(const char *path, size_t *n) {
    size_t len;
    char *s = slurp(path, &len), *p = s, *end;
    size_t cap = 64;
    int32_t *ids = malloc(cap * sizeof *ids);
    *n = 0;
    for (;;) {
        long v = strtol(p, &end, 10);
        if (end == p) break;
        if (*n == cap) ids = realloc(ids, (cap *= 2) * sizeof *ids);
        ids[(*n)++] = (int32_t)v;
        p = end;
    }
    free(s);
    return ids;
}

static int cmd_tokens(int argc, char **argv) {
    if (argc < 4) return 2;
    size_t no, nr;
    int32_t *o = read_ids(argv[2], &no), *r = read_ids(argv[3], &nr);
    double *margins = NULL, margin = 0;
    for (int i = 4; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--margin")) margin = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--margins")) {
            size_t len;
            char *s = slurp(argv[i + 1], &len), *p = s, *end;
            margins = calloc(nr + 1, sizeof *margins);
            for (size_t k = 0; k < nr; k++) {
                margins[k] = strtod(p, &end);
                if (end == p) margins[k] = INFINITY;
                p = end;
            }
            free(s);
        }
    }
    /* --other FILE: llama.cpp's ids from its other attention path (flash
     * on when REF is off, or off when on): where its two runs part,
     * llama.cpp itself did not decide, and the rest is not comparable */
    size_t parted = SIZE_MAX;
    for (int i = 4; i + 1 < argc; i += 2)
        if (!strcmp(argv[i], "--other")) {
            size_t n2;
            int32_t *o2 = read_ids(argv[i + 1], &n2);
            for (size_t k = 0; k < nr && parted == SIZE_MAX; k++)
                if (k >= n2 || o2[k] != r[k]) parted = k;
            free(o2);
            if (parted != SIZE_MAX) {
                if (!margins) {
                    margins = calloc(nr + 1, sizeof *margins);
                    for (size_t k = 0; k < nr; k++) margins[k] = INFINITY;
                }
                for (size_t k = parted; k < nr; k++) margins[k] = -INFINITY;
            }
        }
    token_report rep;
    compare_tokens(o, no, r, nr, margins, margin, &rep);
    printf("tokens: ours %zu, llama.cpp %zu, compared %zu", no, nr, rep.compared);
    if (parted != SIZE_MAX && rep.first_tie == parted)
        printf(", llama.cpp's plain and flash-attention runs part at step %zu: rest not comparable", parted);
    else
    if (rep.first_tie != SIZE_MAX) printf(", llama.cpp near-tie (margin <= %g) at step %zu: rest not comparable", margin, rep.first_tie);
    if (!rep.agree) printf(", FIRST DIFFERENCE at step %zu (ours %d, llama.cpp %d)", rep.first_diff,
                           rep.first_diff < no ? o[rep.first_diff] : -1, rep.first_diff < nr ? r[rep.first_diff] : -1);
    printf("%s\n", rep.agree ? ", agree" : "");
    return rep.agree ? 0 : 1;
}

static int cmd_logits(int argc, char **argv) {
    if (argc < 5) return 2;
    size_t na, nb;
    float *a = slurp(argv[2], &na), *b = slurp(argv[3], &nb);
    size_t vocab = (size_t)atol(argv[4]);
    double margin = 0, max_rel = INFINITY;
    for (int i = 5; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--margin")) margin = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--max-rel-diff")) max_rel = atof(argv[i + 1]);
    }
    if (!vocab || na != nb || na % (vocab * 4)) {
        fprintf(stderr, "pl_compare: sizes %zu and %zu are not equal matrices of %zu columns\n", na, nb, vocab);
        return 2;
    }
    logit_report r;
    compare_logits(a, b, na / 4 / vocab, vocab, margin, &r);
    double rel = r.ref_range > 0 ? r.max_abs_diff / r.ref_range : r.max_abs_diff;
    printf("logits: %zu positions, %zu decidable, %zu skipped as near-ties (margin <= %g), argmax agree %zu/%zu, "
           "max |diff| %.3g = %.3g%% of the logit range %.3g\n",
           r.positions, r.decidable, r.skipped, margin, r.agree, r.decidable, r.max_abs_diff, rel * 100, r.ref_range);
    int bad = r.agree != r.decidable || !(rel <= max_rel);
    if (r.agree != r.decidable) printf("first disagreement at position %zu\n", r.first_disagree);
    if (!(rel <= max_rel)) printf("relative difference %.3g exceeds %.3g\n", rel, max_rel);
    return bad;
}

static int cmd_margins(int argc, char **argv) {
    if (argc < 5) return 2;
    size_t n;
    float *a = slurp(argv[2], &n);
    size_t vocab = (size_t)atol(argv[3]), first = (size_t)atol(argv[4]);
    if (!vocab || n % (vocab * 4)) return 2;
    for (size_t p = first; p < n / 4 / vocab; p++) {
        double m;
        row_argmax(a + p * vocab, vocab, &m);
        printf("%.6g\n", m);
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 2 && !strcmp(argv[1], "tokens")) return cmd_tokens(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "logits")) return cmd_logits(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "margins")) return cmd_margins(argc, argv);
    fprintf(stderr, "usage: pl_compare tokens|logits|margins ... (see the top of tests/tools/pl_compare.c)\n");
    return 2;
}
