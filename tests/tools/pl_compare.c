/*
 * pl_compare.c -- the comparison rules of tests/common/compare.h as a
 * command, for shell tests:
 *
 *   pl_compare tokens OURS REF [--margins FILE --margin M] [--other REF2]
 *                     [--routing OURS_R --router REF_R --router-margin M --router-first P]
 *       OURS/REF: files holding whitespace-separated ids (or "-" ids inline
 *       with --ours-ids/--ref-ids); FILE: one margin per reference step.
 *   pl_compare logits OURS.f32 REF.f32 VOCAB [--margin M] [--max-rel-diff F]
 *                     [--routing OURS_R --router REF_R --router-margin M]
 *       matrices of positions x VOCAB float32.
 *   --routing / --router (a mixture of experts): the experts each engine's
 *   router chose at every position and layer, `pocketllm logits --routing`'s
 *   "POS LAYER E..." lines and `pl_oracle logits --router`'s "POS LAYER
 *   MARGIN RANGE E..." lines (llama.cpp's in position, then layer order).
 *   Where they first differ at a position, llama.cpp's margin there must be
 *   at most --router-margin times the range of its router logits there (a
 *   router near-tie, tests/common/compare.h) -- the position is then not
 *   judged, nor its layers above, whose input the first one changed -- else
 *   the comparison fails.  For tokens,
 *   step k's logits are those of position P + k (P: the prompt's last
 *   position), and the steps from the first such position on are not
 *   comparable.
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

/* One router decision: the experts chosen at a position and layer (as a
 * sorted set) and, for llama.cpp's, its margin there. */
typedef struct route {
    long pos, layer;
    double margin, range;
    int n;
    long ids[64];
} route;

static int by_id(const void *a, const void *b) {
    const long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static route *read_routes(const char *path, int with_margin, size_t *n) {
    size_t len;
    char *s = slurp(path, &len), *line = s;
    size_t cap = 64;
    route *r = malloc(cap * sizeof *r);
    *n = 0;
    while (*line) {
        char *nl = strchr(line, '\n'), *p = line, *end;
        if (nl) *nl = '\0';
        route x = {0};
        x.pos = strtol(p, &end, 10);
        if (end != p) {
            p = end;
            x.layer = strtol(p, &end, 10);
            p = end;
            if (with_margin) {
                x.margin = strtod(p, &end), p = end;
                x.range = strtod(p, &end), p = end;
            }
            for (long v = strtol(p, &end, 10); end != p && x.n < 64; v = strtol(p, &end, 10)) x.ids[x.n++] = v, p = end;
            qsort(x.ids, (size_t)x.n, sizeof x.ids[0], by_id);
            if (*n == cap) r = realloc(r, (cap *= 2) * sizeof *r);
            r[(*n)++] = x;
        }
        if (!nl) break;
        line = nl + 1;
    }
    free(s);
    return r;
}

/* The routing options: skip[p] = 1 where the routers chose differently at
 * a near-tie of llama.cpp's (a margin at most --router-margin of the
 * router logits' range).  Returns 0, or 1 after
 * printing the first difference at a decided router; -1 without the
 * options. */
static int routing_opts(int argc, char **argv, int first, size_t positions, unsigned char *skip) {
    const char *ours_path = NULL, *ref_path = NULL;
    double margin = 0;
    for (int i = first; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--routing")) ours_path = argv[i + 1];
        else if (!strcmp(argv[i], "--router")) ref_path = argv[i + 1];
        else if (!strcmp(argv[i], "--router-margin")) margin = atof(argv[i + 1]);
    }
    if (!ours_path || !ref_path) return -1;
    size_t no, nr;
    route *o = read_routes(ours_path, 0, &no), *r = read_routes(ref_path, 1, &nr);
    int bad = 0;
    size_t found = 0;
    for (size_t i = 0; i < nr && !bad; i++) {
        const route *x = &r[i], *y = NULL;
        for (size_t j = 0; j < no && !y; j++)
            if (o[j].pos == x->pos && o[j].layer == x->layer) y = &o[j];
        if (!y) {
            printf("routing: no choice of ours at position %ld, layer %ld\n", x->pos, x->layer);
            bad = 1;
            break;
        }
        found++;
        if (y->n == x->n && !memcmp(y->ids, x->ids, (size_t)x->n * sizeof x->ids[0])) continue;
        /* the layers above a parted router at the same position see a
         * different input: their choices follow from the first one's */
        if (x->pos >= 0 && (size_t)x->pos < positions && skip[x->pos]) continue;
        if (x->margin <= margin * x->range && x->pos >= 0 && (size_t)x->pos < positions) {
            skip[x->pos] = 1;
            continue;
        }
        printf("routing: the experts differ at position %ld, layer %ld, where llama.cpp's router decided (margin %.3g > "
               "%g of the range %.3g)\n", x->pos, x->layer, x->margin, margin, x->range);
        bad = 1;
    }
    if (!bad && found != no) {
        printf("routing: %zu choices of ours, %zu of llama.cpp's\n", no, nr);
        bad = 1;
    }
    free(o), free(r);
    return bad;
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
    /* the routers parted at a near-tie at the position of step k or
     * before: llama.cpp itself did not decide its experts there, the rest is
     * not comparable */
    size_t first_pos = 0, router_step = SIZE_MAX, router_pos = SIZE_MAX;
    for (int i = 4; i + 1 < argc; i += 2)
        if (!strcmp(argv[i], "--router-first")) first_pos = (size_t)atol(argv[i + 1]);
    unsigned char *skip = calloc(first_pos + nr + 1, 1);
    const int routed = routing_opts(argc, argv, 4, first_pos + nr + 1, skip);
    if (routed > 0) return 1;
    for (size_t p = 0; p < first_pos + nr + 1 && router_pos == SIZE_MAX; p++)
        if (skip[p]) router_pos = p, router_step = p <= first_pos ? 0 : p - first_pos;
    free(skip);
    if (router_step != SIZE_MAX && router_step < parted) {
        if (!margins) {
            margins = calloc(nr + 1, sizeof *margins);
            for (size_t k = 0; k < nr; k++) margins[k] = INFINITY;
        }
        for (size_t k = router_step; k < nr; k++) margins[k] = -INFINITY;
    }
    token_report rep;
    compare_tokens(o, no, r, nr, margins, margin, &rep);
    printf("tokens: ours %zu, llama.cpp %zu, compared %zu", no, nr, rep.compared);
    if (parted != SIZE_MAX && rep.first_tie == parted)
        printf(", llama.cpp's plain and flash-attention runs part at step %zu: rest not comparable", parted);
    else if (router_step != SIZE_MAX && rep.first_tie == router_step)
        printf(", the routers chose differently at a near-tie of llama.cpp's at position %zu, for step %zu: rest not "
               "comparable", router_pos, router_step);
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
    const size_t positions = na / 4 / vocab;
    unsigned char *skip = calloc(positions + 1, 1);
    const int routed = routing_opts(argc, argv, 5, positions, skip);
    if (routed > 0) return 1;
    logit_report r;
    compare_logits(a, b, positions, vocab, margin, routed == 0 ? skip : NULL, &r);
    free(skip);
    double rel = r.ref_range > 0 ? r.max_abs_diff / r.ref_range : r.max_abs_diff;
    printf("logits: %zu positions, %zu decidable, %zu skipped as near-ties (margin <= %g), argmax agree %zu/%zu, "
           "max |diff| %.3g = %.3g%% of the logit range %.3g",
           r.positions, r.decidable, r.skipped, margin, r.agree, r.decidable, r.max_abs_diff, rel * 100, r.ref_range);
    if (routed == 0)
        printf("; %zu positions not judged where the routers parted at a near-tie (their max |diff| %.3g = %.3g%%)",
               r.router_skipped, r.max_abs_diff_skipped,
               (r.ref_range > 0 ? r.max_abs_diff_skipped / r.ref_range : r.max_abs_diff_skipped) * 100);
    printf("\n");
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
