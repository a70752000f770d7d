/*
 * fuzz_grammar.c -- libFuzzer target for the GBNF parser and the matcher:
 * the input up to its first NUL byte is a grammar; when it parses, the
 * bytes after the NUL are fed to the automaton one at a time (as a token's
 * text would be), with the distance and the acceptance asked at every
 * step and the tables compacted half-way -- which must keep the state's
 * meaning: the rest of the text then reaches the same verdict -- and the
 * plain automaton (one state per partial character) beside the default
 * one must agree at every byte.
 * Seeds: the bundle's .gbnf grammars and small ones (seeds/fuzz_grammar.sh).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grammar/gbnf.h"
#include "grammar/grammar_match.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const uint8_t *nul = memchr(data, 0, size);
    const size_t glen = nul ? (size_t)(nul - data) : size;
    char *text = malloc(glen + 1);
    if (!text) return 0;
    memcpy(text, data, glen);
    text[glen] = 0;
    pl_gbnf g;
    char err[300];
    if (pl_gbnf_parse(text, NULL, &g, err, sizeof err)) {
        const uint8_t *in = nul ? nul + 1 : data + size;
        /* at most 4 KiB of text: a step is bounded (PL_GM_STEP_STACKS), and
         * a text of fresh worst-case steps would only measure that bound
         * over and over, past the fuzzer's time limit per input */
        size_t n = (size_t)(data + size - in);
        if (n > 4096) n = 4096;
        pl_gmatch *a = pl_gmatch_new(&g), *b = pl_gmatch_new(&g), *c = pl_gmatch_new(&g);
        if (c) pl_gmatch_set_canonical(c, false);
        if (a && b && c) {
            uint32_t sa = pl_gmatch_start(a), sb = pl_gmatch_start(b), sc = pl_gmatch_start(c);
            for (size_t i = 0; i < n && sa != PL_GM_DEAD; i++) {
                sa = pl_gmatch_step(a, sa, in[i]);
                sb = pl_gmatch_step(b, sb, in[i]);
                sc = pl_gmatch_step(c, sc, in[i]);
                if ((sa == PL_GM_DEAD) != (sb == PL_GM_DEAD) || (sa == PL_GM_DEAD) != (sc == PL_GM_DEAD)) abort();
                if (sa != PL_GM_DEAD && (pl_gmatch_accepting(a, sa) != pl_gmatch_accepting(c, sc) ||
                                         pl_gmatch_distance(a, sa) != pl_gmatch_distance(c, sc)))
                    abort(); /* partial characters kept by pattern read as the plain automaton does */
                if (sa == PL_GM_DEAD) break;
                (void)pl_gmatch_distance(a, sa);
                if (pl_gmatch_accepting(a, sa) != pl_gmatch_accepting(b, sb)) abort();
                if (pl_gmatch_distance(a, sa) != pl_gmatch_distance(b, sb)) abort();
                if (i == n / 2 && !pl_gmatch_compact(b, &sb)) break; /* b's tables rebuilt: same verdicts after */
            }
        }
        pl_gmatch_free(a);
        pl_gmatch_free(b);
        pl_gmatch_free(c);
        pl_gbnf_free(&g);
    }
    free(text);
    return 0;
}
