/*
 * pl_oracle_grammar.c -- llama.cpp's own grammar engine as the judge of our
 * constrained output: given a vocabulary, a GBNF file and the ids we
 * generated, it replays them through llama_sampler_init_grammar one at a
 * time and says whether llama.cpp allows each (a candidate list of that one
 * token; refused = its logit set to -inf), and at the end whether the text
 * is a whole match (an end-of-generation token allowed).
 *
 *   pl_oracle_grammar VOCAB.gguf GRAMMAR.gbnf IDS_FILE [--complete]
 *   pl_oracle_grammar VOCAB.gguf GRAMMAR.gbnf --parse-only
 *
 * IDS_FILE: the ids, whitespace-separated.  Prints "ok N" or the first
 * refused position; exit 1 on a refusal (or an incomplete text with
 * --complete), 0 otherwise.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama.h"

#define PL_ORACLE_PROG "pl_oracle_grammar"
#include "oracle_util.h"

static char *read_all(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) die("cannot open %s: %s", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc(sz > 0 ? (size_t)sz + 1 : 1);
    if (!p || (sz > 0 && fread(p, 1, (size_t)sz, f) != (size_t)sz)) die("cannot read %s", path);
    p[sz > 0 ? sz : 0] = 0;
    fclose(f);
    return p;
}

/* Does the grammar sampler leave token id alive? */
static bool allows(struct llama_sampler *g, llama_token id) {
    llama_token_data d = {id, 0.0f, 0.0f};
    llama_token_data_array a = {&d, 1, -1, false};
    llama_sampler_apply(g, &a);
    return isfinite(d.logit);
}

int main(int argc, char **argv) {
    if (argc < 4) die("usage: pl_oracle_grammar VOCAB GRAMMAR (IDS_FILE [--complete] | --parse-only)");
    llama_log_set(quiet_log, NULL);
    llama_backend_init();
    struct llama_model_params mp = llama_model_default_params();
    mp.vocab_only = true;
    struct llama_model *m = llama_model_load_from_file(argv[1], mp);
    if (!m) die("llama.cpp cannot load %s", argv[1]);
    const struct llama_vocab *v = llama_model_get_vocab(m);
    char *gbnf = read_all(argv[2]);
    struct llama_sampler *g = llama_sampler_init_grammar(v, gbnf, "root");
    if (!g) die("llama.cpp refuses the grammar %s", argv[2]);
    if (!strcmp(argv[3], "--parse-only")) {
        printf("ok parsed\n");
        return 0;
    }
    const bool complete = argc > 4 && !strcmp(argv[4], "--complete");
    char *ids = read_all(argv[3]);
    int n = 0;
    for (char *p = strtok(ids, " \t\r\n"); p; p = strtok(NULL, " \t\r\n"), n++) {
        const llama_token id = (llama_token)strtol(p, NULL, 10);
        if (llama_vocab_is_eog(v, id)) {
            if (!allows(g, id)) {
                printf("refused: end of generation at position %d, before the text is a whole match\n", n);
                return 1;
            }
            printf("ok %d (ended)\n", n);
            return 0;
        }
        if (!allows(g, id)) {
            printf("refused: token %d at position %d\n", id, n);
            return 1;
        }
        llama_sampler_accept(g, id);
    }
    if (complete && !allows(g, llama_vocab_eos(v))) {
        printf("refused: the text of %d tokens is not a whole match\n", n);
        return 1;
    }
    printf("ok %d\n", n);
    llama_sampler_free(g);
    llama_model_free(m);
    free(ids);
    free(gbnf);
    return 0;
}
