/*
 * pl_grammar_mask_check.c -- the vocabulary mask's shortcuts held to the
 * token-by-token verdict on a real byte-level vocabulary (Qwen2's 151936
 * tokens: multi-byte characters, partial ones, long runs of spaces).
 *
 * For each (JSON schema, text) pair the text is tokenized with the
 * vocabulary's own tokenizer and fed to the grammar token by token; before
 * each token the mask is made under several length budgets, both as the
 * walk chooses and forced into each of its two modes (marking allowed
 * tokens, clearing refused ones), and every one must equal asking each
 * token alone.  The run must also have taken subtrees whole and cut at a
 * length -- otherwise the shortcuts were not exercised and the check
 * proves nothing, which is a failure too.
 *
 * usage: pl_grammar_mask_check VOCAB.gguf SCHEMA TEXT [SCHEMA TEXT]...
 * (SCHEMA and TEXT are files).  Exit 1 on any difference.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOL_NAME "pl_grammar_mask_check"
#include "grammar/grammar_probe.h"
#include "pocketllm.h"
#include "tool_io.h"

int main(int argc, char **argv) {
    if (argc < 4 || (argc - 2) % 2) {
        fprintf(stderr, "usage: %s VOCAB.gguf SCHEMA TEXT [SCHEMA TEXT]...\n", argv[0]);
        return 2;
    }
    pocketllm_model_params mp = pocketllm_model_default_params();
    mp.vocab_only = 1;
    pocketllm_model *m = NULL;
    if (pocketllm_model_open(argv[1], &mp, &m)) {
        fprintf(stderr, "FAIL: %s: %s\n", argv[1], pocketllm_last_error());
        return 1;
    }
    const int32_t nv = pocketllm_model_n_vocab(m);
    uint8_t *want = malloc((size_t)nv), *got = malloc((size_t)nv);
    const int32_t budgets[] = {-1, 1, 3, 8};
    int bad = 0;
    uint64_t whole = 0, cut = 0, steps = 0;
    for (int a = 2; a + 1 < argc; a += 2) {
        size_t sl = 0, tl = 0;
        char *schema = slurp(argv[a], &sl), *text = slurp(argv[a + 1], &tl);
        while (tl && text[tl - 1] == '\n') text[--tl] = 0; /* the file's own end of line is not the text's */
        size_t n = 0;
        pocketllm_tokenize(m, text, tl, 0, 0, NULL, 0, &n);
        int32_t *ids = malloc((n + 1) * sizeof *ids);
        pocketllm_grammar *g = NULL;
        if (!ids || pocketllm_tokenize(m, text, tl, 0, 0, ids, n, &n) ||
            pocketllm_grammar_from_json_schema(m, schema, sl, &g)) {
            fprintf(stderr, "FAIL: %s: %s\n", argv[a], pocketllm_last_error());
            return 1;
        }
        for (size_t i = 0; i <= n; i++) {
            for (size_t b = 0; b < sizeof budgets / sizeof *budgets; b++) {
                for (int32_t t = 0; t < nv; t++) want[t] = (uint8_t)pl_grammar_probe_allows(g, t, budgets[b]);
                for (int mode = -1; mode <= 1; mode++) {
                    if (pl_grammar_probe_mask(g, budgets[b], mode, got, nv)) {
                        fprintf(stderr, "FAIL: mask: %s\n", pocketllm_last_error());
                        return 1;
                    }
                    int diff = 0, first = -1;
                    for (int32_t t = 0; t < nv; t++)
                        if (got[t] != want[t]) diff++, first = first < 0 ? t : first;
                    if (diff) {
                        char piece[256];
                        size_t pl = 0;
                        pocketllm_token_to_piece(m, first, 1, piece, sizeof piece - 1, &pl);
                        piece[pl < sizeof piece ? pl : 0] = 0;
                        fprintf(stderr,
                                "FAIL: %s, before token %zu, budget %d, mode %d: %d tokens differ (first %d '%s': mask %d, "
                                "alone %d)\n",
                                argv[a + 1], i, budgets[b], mode, diff, first, piece, got[first], want[first]);
                        bad++;
                    }
                }
            }
            steps++;
            if (i < n && pocketllm_grammar_accept(g, ids[i])) {
                fprintf(stderr, "FAIL: %s: token %zu (%d) refused: %s\n", argv[a + 1], i, ids[i], pocketllm_last_error());
                bad++;
                break;
            }
        }
        uint64_t w = 0, c = 0;
        pl_grammar_probe_counts(g, &w, &c);
        whole += w, cut += c;
        printf("%s: %zu tokens, %llu subtrees whole, %llu cut\n", argv[a + 1], n, (unsigned long long)w,
               (unsigned long long)c);
        pocketllm_grammar_free(g);
        free(ids), free(schema), free(text);
    }
    if (!whole || !cut) {
        fprintf(stderr, "FAIL: the shortcuts were not exercised (%llu whole, %llu cut)\n", (unsigned long long)whole,
                (unsigned long long)cut);
        bad++;
    }
    printf("%llu steps, every mask x %zu budgets x 3 modes %s\n", (unsigned long long)steps,
           sizeof budgets / sizeof *budgets, bad ? "DIFFERED" : "equal to the token-by-token verdict");
    free(want), free(got);
    pocketllm_model_close(m);
    return bad ? 1 : 0;
}
