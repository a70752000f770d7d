/*
 * test_grammar_vocab.c -- constrained decoding over a real vocabulary
 * (stories260K's SentencePiece one): the trie walk's mask equals asking
 * every token one by one, in many states of several grammars; clones
 * allow what their source allows; lazy triggers activate where the word
 * appears, and not inside a trigger zone (a think block); end of
 * generation only once the text is a whole match; the length budget keeps
 * a greedy run completable; bad arguments fail cleanly.
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "pltest.h"
#include "pocketllm.h"

static pocketllm_model *M;
static int32_t NV;

/* The token whose text is exactly `text` (SentencePiece's tokenizer would
 * add its dummy-prefix space to a fragment), -1 when none. */
static int32_t tok_of(const char *text) {
    char piece[64];
    for (int32_t t = 0; t < NV; t++) {
        size_t n = 0;
        if (pocketllm_token_to_piece(M, t, 0, piece, sizeof piece, &n) == POCKETLLM_OK && n == strlen(text) &&
            !memcmp(piece, text, n))
            return t;
    }
    return -1;
}

/* the mask against allows(), token by token */
static void same_mask(pocketllm_grammar *g, const char *what) {
    uint8_t *a = malloc((size_t)NV);
    CHECK(pocketllm_grammar_mask(g, a, NV) == POCKETLLM_OK);
    int diff = 0, n_ok = 0;
    for (int32_t t = 0; t < NV; t++) {
        diff += (a[t] != 0) != (pocketllm_grammar_allows(g, t) != 0);
        n_ok += a[t];
    }
    CHECK_MSG(diff == 0, "%s: mask and allows() differ on %d tokens", what, diff);
    CHECK_MSG(n_ok > 0, "%s: nothing allowed", what);
    free(a);
}

/* accept text one byte at a time (each byte's own token); false when one
 * is refused */
static bool feed(pocketllm_grammar *g, const char *text) {
    for (const char *p = text; *p; p++) {
        const char one[2] = {*p, 0};
        const int32_t t = tok_of(one);
        if (t < 0 || pocketllm_grammar_accept(g, t)) return false;
    }
    return true;
}

int main(void) {
    const char *shared = getenv("PL_SHARED");
    char path[4096];
    snprintf(path, sizeof path, "%s/models/stories260K.gguf", shared ? shared : "../shared");
    pocketllm_model_params mp = pocketllm_model_default_params();
    mp.vocab_only = 1;
    if (pocketllm_model_open(path, &mp, &M)) {
        fprintf(stderr, "FAIL: stories260K.gguf must be readable at %s: %s\n", path, pocketllm_last_error());
        return 1;
    }
    NV = pocketllm_model_n_vocab(M);
    const int32_t eos = pocketllm_token_eos(M);

    /* masks in several states of a JSON-ish grammar */
    const char *json = "root ::= \"{\" ws (pair (\",\" ws pair)*)? \"}\"\n"
                       "pair ::= \"\\\"\" [a-z ]+ \"\\\":\" ws (num | \"\\\"\" [^\"]* \"\\\"\")\n"
                       "num ::= \"-\"? [0-9]+\nws ::= [ ]?\n";
    pocketllm_grammar *g = NULL;
    CHECK(pocketllm_grammar_new(M, json, NULL, &g) == POCKETLLM_OK);
    const char *steps[] = {"{", " \"ab", "c\":", " 12", ", \"x\": \"once upon", " a time\"", "}"};
    same_mask(g, "start");
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
        CHECK_MSG(feed(g, steps[i]), "step '%s' refused", steps[i]);
        if (i + 1 < sizeof steps / sizeof *steps) {
            same_mask(g, steps[i]);
            CHECK_MSG(!pocketllm_grammar_allows(g, eos), "end allowed after '%s'", steps[i]);
            /* a clone allows the same */
            pocketllm_grammar *c = NULL;
            CHECK(pocketllm_grammar_clone(g, &c) == POCKETLLM_OK);
            int diff = 0;
            for (int32_t t = 0; c && t < NV; t++) diff += !pocketllm_grammar_allows(g, t) != !pocketllm_grammar_allows(c, t);
            CHECK_MSG(diff == 0, "a clone after '%s' differs on %d tokens", steps[i], diff);
            pocketllm_grammar_free(c);
        }
    }
    CHECK(pocketllm_grammar_complete(g));
    CHECK(pocketllm_grammar_done(g));
    CHECK(pocketllm_grammar_allows(g, eos));
    CHECK(pocketllm_grammar_accept(g, tok_of("x")) != POCKETLLM_OK); /* nothing may follow */
    pocketllm_grammar_reset(g);
    CHECK(!pocketllm_grammar_complete(g));
    CHECK(pocketllm_grammar_accept(g, eos) != POCKETLLM_OK);

    /* lazy: free text until the trigger, then the grammar from its first byte */
    pocketllm_grammar *lz = NULL;
    CHECK(pocketllm_grammar_new(M, "root ::= \"call(\" [a-z]+ \")\"", NULL, &lz) == POCKETLLM_OK);
    const char *trig[] = {"call("};
    CHECK(pocketllm_grammar_set_triggers(lz, trig, 1) == POCKETLLM_OK);
    CHECK(pocketllm_grammar_set_trigger_zone(lz, "<q>", "</q>", 0) == POCKETLLM_OK);
    CHECK(pocketllm_grammar_allows(lz, eos)); /* inactive: the reply may end */
    CHECK(feed(lz, "Once upon a time <q>she said call(x) and</q> then"));
    CHECK(pocketllm_grammar_allows(lz, tok_of("1"))); /* still free: that call( was in a zone */
    CHECK(feed(lz, " we call("));
    CHECK(!pocketllm_grammar_allows(lz, tok_of("1"))); /* active now */
    CHECK(!pocketllm_grammar_allows(lz, eos));
    same_mask(lz, "after the trigger");
    pocketllm_grammar *lc = NULL;
    CHECK(pocketllm_grammar_clone(lz, &lc) == POCKETLLM_OK);
    CHECK(lc && !pocketllm_grammar_allows(lc, tok_of("1")) && pocketllm_grammar_allows(lc, tok_of("a")));
    CHECK(feed(lz, "abc)"));
    CHECK(pocketllm_grammar_done(lz));
    CHECK(lc && feed(lc, "zz)") && pocketllm_grammar_done(lc));
    pocketllm_grammar_free(lc);
    pocketllm_grammar_free(lz);
    /* starting inside a zone: its close must come first */
    CHECK(pocketllm_grammar_new(M, "root ::= \"call(\" [a-z]+ \")\"", NULL, &lz) == POCKETLLM_OK);
    CHECK(pocketllm_grammar_set_triggers(lz, trig, 1) == POCKETLLM_OK);
    CHECK(pocketllm_grammar_set_trigger_zone(lz, "<q>", "</q>", 1) == POCKETLLM_OK);
    CHECK(feed(lz, "thinking call(a) more</q> call("));
    CHECK(!pocketllm_grammar_allows(lz, tok_of("1")));
    pocketllm_grammar_free(lz);

    /* the budget: greedy on flat logits that favour the token that never
     * ends the grammar (a space) still finishes within the budget */
    pocketllm_grammar *bg = NULL;
    CHECK(pocketllm_grammar_new(M, "root ::= \"a\" [ ]* \"b\"", NULL, &bg) == POCKETLLM_OK);
    pocketllm_sampler *smp = NULL;
    pocketllm_sampler_params sp = pocketllm_sampler_default_params();
    CHECK(pocketllm_sampler_new(&sp, &smp) == POCKETLLM_OK);
    float *logits = calloc((size_t)NV, sizeof *logits);
    const int32_t space = tok_of(" ");
    CHECK(space >= 0);
    if (space >= 0) logits[space] = 10.0f; /* the model wants spaces forever */
    int steps_taken = 0;
    for (int32_t budget = 6; budget > 0; budget--) {
        int32_t id;
        CHECK(pocketllm_sampler_sample_grammar(smp, bg, logits, NV, budget, &id) == POCKETLLM_OK);
        CHECK(pocketllm_grammar_accept(bg, id) == POCKETLLM_OK);
        steps_taken++;
        if (pocketllm_grammar_done(bg)) break;
    }
    CHECK_MSG(pocketllm_grammar_done(bg), "the budget of 6 did not complete the grammar (%d steps)", steps_taken);
    /* without one the model's spaces go on */
    pocketllm_grammar_reset(bg);
    for (int k = 0; k < 6; k++) {
        int32_t id;
        CHECK(pocketllm_sampler_sample_grammar(smp, bg, logits, NV, -1, &id) == POCKETLLM_OK);
        CHECK(pocketllm_grammar_accept(bg, id) == POCKETLLM_OK);
    }
    CHECK(!pocketllm_grammar_done(bg));
    free(logits);
    pocketllm_sampler_free(smp);
    pocketllm_grammar_free(bg);

    /* bad arguments */
    pocketllm_grammar *bad = NULL;
    CHECK(pocketllm_grammar_new(M, "root ::= nope", NULL, &bad) == POCKETLLM_ERR_INVALID_ARGUMENT && !bad);
    CHECK(strstr(pocketllm_last_error(), "never defined") != NULL);
    CHECK(pocketllm_grammar_from_json_schema(M, "{\"uniqueItems\":true}", 20, &bad) == POCKETLLM_ERR_UNSUPPORTED);
    CHECK(strstr(pocketllm_last_error(), "uniqueItems") != NULL);
    CHECK(pocketllm_grammar_from_json_schema(M, "{nope", 5, &bad) == POCKETLLM_ERR_INVALID_ARGUMENT);
    CHECK(pocketllm_grammar_accept(g, -5) != POCKETLLM_OK);
    CHECK(pocketllm_grammar_accept(g, NV) != POCKETLLM_OK);
    uint8_t one;
    CHECK(pocketllm_grammar_mask(g, &one, 1) != POCKETLLM_OK);
    CHECK(pocketllm_grammar_set_trigger_zone(g, "", "x", 0) != POCKETLLM_OK);
    pocketllm_grammar_free(g);
    pocketllm_grammar_free(NULL);
    pocketllm_model_close(M);
    TEST_DONE();
}
