/*
 * pl_mkbad.c -- write the malformed GGUF files of tests/common/bad_gguf.c
 * into a folder (NAME.gguf each, and an index NAME<TAB>EXPECTED per line on
 * stdout), plus good.gguf, for the CLI end-to-end test and as a fuzzing seed
 * corpus.
 */
#include <stdio.h>

#include "../common/bad_gguf.h"

static int write_file(const char *dir, const char *name, const gb *b) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.gguf", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || (b->n && fwrite(b->p, 1, b->n, f) != b->n) || fclose(f) != 0) {
        fprintf(stderr, "pl_mkbad: cannot write %s\n", path);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: pl_mkbad DIR\n");
        return 2;
    }
    gb good = {0};
    good_gguf_build(&good);
    if (write_file(argv[1], "good", &good)) return 1;
    gb_free(&good);
    for (const bad_gguf_case *c = bad_gguf_cases; c->name; c++) {
        gb b = {0};
        c->build(&b);
        if (write_file(argv[1], c->name, &b)) return 1;
        printf("%s\t%s\n", c->name, c->expect);
        gb_free(&b);
    }
    return 0;
}
