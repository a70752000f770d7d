/*
 * test_grammar.c -- the GBNF parser and the byte automaton against texts
 * whose membership is known by construction: each grammar with strings it
 * must take whole, strings it must refuse at a known byte, and prefixes
 * that are alive but not complete; the refusals of bad grammars; the
 * distance to completion; compaction keeping the state's meaning.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grammar/gbnf.h"
#include "grammar/grammar_match.h"
#include "pltest.h"

/* -1: the whole text matches; -2: alive, not a match; else the byte where it dies */
static int run(const char *gbnf, const char *text) {
    pl_gbnf g;
    char err[300];
    if (!pl_gbnf_parse(gbnf, NULL, &g, err, sizeof err)) {
        fprintf(stderr, "parse failed: %s\n", err);
        return -3;
    }
    pl_gmatch *m = pl_gmatch_new(&g);
    uint32_t s = pl_gmatch_start(m);
    int r = -2;
    for (size_t i = 0; text[i]; i++) {
        s = pl_gmatch_step(m, s, (uint8_t)text[i]);
        if (s == PL_GM_DEAD) {
            r = (int)i;
            break;
        }
    }
    if (r == -2 && pl_gmatch_accepting(m, s)) r = -1;
    pl_gmatch_free(m);
    pl_gbnf_free(&g);
    return r;
}

static bool refuses(const char *gbnf, const char *want) {
    pl_gbnf g;
    char err[300];
    if (pl_gbnf_parse(gbnf, NULL, &g, err, sizeof err)) {
        pl_gbnf_free(&g);
        return false;
    }
    if (!strstr(err, want)) fprintf(stderr, "message '%s' lacks '%s'\n", err, want);
    return strstr(err, want) != NULL;
}

static const char *JSON =
    "root   ::= object\n"
    "value  ::= object | array | string | number | (\"true\" | \"false\" | \"null\") ws\n"
    "object ::=\n"
    "  \"{\" ws (\n"
    "            string \":\" ws value\n"
    "    (\",\" ws string \":\" ws value)*\n"
    "  )? \"}\" ws\n"
    "array  ::=\n"
    "  \"[\" ws (\n"
    "            value\n"
    "    (\",\" ws value)*\n"
    "  )? \"]\" ws\n"
    "string ::=\n"
    "  \"\\\"\" (\n"
    "    [^\"\\\\\\x7F\\x00-\\x1F] |\n"
    "    \"\\\\\" ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4}) # escapes\n"
    "  )* \"\\\"\" ws\n"
    "number ::= (\"-\"? ([0-9] | [1-9] [0-9]{0,15})) (\".\" [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws\n"
    "ws ::= | \" \" | \"\\n\" [ \\t]{0,20}\n";

int main(void) {
    /* literals, alternatives, groups, repetitions */
    CHECK(run("root ::= \"ab\" | \"cd\"", "ab") == -1);
    CHECK(run("root ::= \"ab\" | \"cd\"", "a") == -2);
    CHECK(run("root ::= \"ab\" | \"cd\"", "ac") == 1);
    CHECK(run("root ::= (\"x\" \"y\")* \"z\"", "xyxyz") == -1);
    CHECK(run("root ::= (\"x\" \"y\")* \"z\"", "xyy") == 2);
    CHECK(run("root ::= [a-c]+", "abcabc") == -1);
    CHECK(run("root ::= [a-c]+", "") == -2);
    CHECK(run("root ::= [a-c]+", "abd") == 2);
    CHECK(run("root ::= [^a-c]?", "") == -1);
    CHECK(run("root ::= [^a-c]?", "d") == -1);
    CHECK(run("root ::= [^a-c]?", "b") == 0);
    CHECK(run("root ::= \"a\"{2,3}", "aa") == -1);
    CHECK(run("root ::= \"a\"{2,3}", "aaa") == -1);
    CHECK(run("root ::= \"a\"{2,3}", "aaaa") == 3);
    CHECK(run("root ::= \"a\"{2}", "a") == -2);
    CHECK(run("root ::= \"a\"{2,}", "aaaaaa") == -1);
    CHECK(run("root ::= \"ab\"{2}", "abab") == -1); /* a literal repeats whole, as llama.cpp reads it */
    CHECK(run("root ::= \"ab\"{2}", "abb") == 2);
    CHECK(run("root ::= . \"!\"", "\xc3\xa9!") == -1);
    CHECK(run("root ::= [\\u00e0-\\u00ff]", "\xc3\xa9") == -1);
    CHECK(run("root ::= [\\u00e0-\\u00ff]", "\xc3\x80") == 1); /* U+00C0: the lead byte could still fit */
    CHECK(run("root ::= [\\u00e0-\\u00ff]", "\xe2") == 0);     /* no 3-byte character is in range */
    CHECK(run("root ::= [a-z] # comment\n  # more\n", "q") == -1);
    CHECK(run("root ::= x\nx ::= \"1\" x | \"2\"", "1112") == -1); /* right recursion */
    CHECK(run("root ::= \"\\x41\\u00e9\\n\\t\\\"\"", "A\xc3\xa9\n\t\"") == -1);
    /* empty alternatives and nullable rules */
    CHECK(run("root ::= a b\na ::= | \"x\"\nb ::= \"y\"", "y") == -1);
    CHECK(run("root ::= a b\na ::= | \"x\"\nb ::= \"y\"", "xy") == -1);

    /* JSON (the bundle's json.gbnf, as written there) */
    CHECK(run(JSON, "{\"a\": [1, 2.5, -3e+7, true, null, {\"b\": \"\\u00e9\"}]}") == -1);
    CHECK(run(JSON, "{\"a\": 01}") == 7);
    CHECK(run(JSON, "{\"a\"") == -2);
    CHECK(run(JSON, "[1]") == 0);

    /* bad grammars */
    CHECK(refuses("root ::= \"a\" | ", "") == false); /* an empty alternative is fine */
    CHECK(refuses("root ::= b", "rule 'b' is used but never defined"));
    CHECK(refuses("root ::= root \"a\" | \"b\"", "left-recursive"));
    CHECK(refuses("root ::= a\na ::= b? root | \"z\"\nb ::= \"x\"", "left-recursive"));
    CHECK(refuses("root ::= \"a", "unexpected end"));
    CHECK(refuses("root ::= [a-", "unexpected end"));
    CHECK(refuses("root := \"a\"", "expected '::='"));
    CHECK(refuses("foo ::= \"a\"", "no start rule 'root'"));
    CHECK(refuses("root ::= \"a\"\nroot ::= \"b\"", "defined twice"));
    CHECK(refuses("root ::= \"a\"{3,1}", "below the minimum"));
    CHECK(refuses("root ::= \"a\"{5000}", "repetitions"));
    CHECK(refuses("root ::= x\nx ::= \"a\" x", "matches nothing"));
    CHECK(refuses("root ::= []{104}", "matches nothing")); /* a grammar with no ranges at all (fuzz_grammar's find) */
    CHECK(refuses("root ::= \"\\q\"", "unknown escape"));
    CHECK(refuses("root ::= *", "nothing before it"));
    CHECK(refuses("", "empty"));
    CHECK(refuses("root ::= \"\xff\"", "invalid UTF-8"));

    /* distance: the fewest bytes that finish the match */
    {
        pl_gbnf g;
        char err[200];
        CHECK(pl_gbnf_parse("root ::= \"{\" ws \"\\\"k\\\":\" ws [0-9]+ ws \"}\"\nws ::= [ ]*", NULL, &g, err, sizeof err));
        pl_gmatch *m = pl_gmatch_new(&g);
        uint32_t s = pl_gmatch_start(m);
        CHECK_EQ_U64(pl_gmatch_distance(m, s), 7); /* {"k":0} */
        s = pl_gmatch_feed(m, s, (const uint8_t *)"{ \"k\":12", 8);
        CHECK_EQ_U64(pl_gmatch_distance(m, s), 1);
        CHECK(pl_gmatch_can_continue(m, s));
        s = pl_gmatch_step(m, s, '}');
        CHECK(pl_gmatch_accepting(m, s));
        CHECK(!pl_gmatch_can_continue(m, s));
        CHECK_EQ_U64(pl_gmatch_distance(m, s), 0);
        pl_gmatch_free(m);
        pl_gbnf_free(&g);
    }
    /* a partial UTF-8 character counts the bytes it still needs */
    {
        pl_gbnf g;
        char err[200];
        CHECK(pl_gbnf_parse("root ::= \"\\u20ac\" \"x\"", NULL, &g, err, sizeof err));
        pl_gmatch *m = pl_gmatch_new(&g);
        uint32_t s = pl_gmatch_start(m);
        CHECK_EQ_U64(pl_gmatch_distance(m, s), 4);
        s = pl_gmatch_step(m, s, 0xE2);
        CHECK(s != PL_GM_DEAD);
        CHECK_EQ_U64(pl_gmatch_distance(m, s), 3);
        pl_gmatch_free(m);
        pl_gbnf_free(&g);
    }
    /* compaction: the state means the same afterwards */
    {
        pl_gbnf g;
        char err[200];
        CHECK(pl_gbnf_parse(JSON, NULL, &g, err, sizeof err));
        pl_gmatch *m = pl_gmatch_new(&g);
        uint32_t s = pl_gmatch_start(m);
        const char *a = "{\"a\": [1, {\"b\": [tr";
        s = pl_gmatch_feed(m, s, (const uint8_t *)a, strlen(a));
        CHECK(s != PL_GM_DEAD);
        const uint32_t d = pl_gmatch_distance(m, s);
        CHECK(pl_gmatch_compact(m, &s));
        CHECK_EQ_U64(pl_gmatch_distance(m, s), d);
        CHECK(pl_gmatch_feed(m, s, (const uint8_t *)"x", 1) == PL_GM_DEAD);
        s = pl_gmatch_feed(m, s, (const uint8_t *)"ue]}]}", 6);
        CHECK(pl_gmatch_accepting(m, s));
        pl_gmatch_free(m);
        pl_gbnf_free(&g);
    }
    /* partial characters kept by pattern give the plain automaton's
     * verdicts, distances and acceptance on every prefix of random UTF-8
     * (and invalid) byte strings */
    {
        static const char *const grammars[] = {
            "root ::= \"\\\"\" [^\"\\\\\\x00-\\x1f]* \"\\\"\"",
            "root ::= ([\\u0400-\\u04ff] | [\\u4e00-\\u9fff] \"x\" | [^a-z\\u4e00-\\u4eff])+",
            "root ::= (. | [\\U0001F600-\\U0001F64F] \"!\")* \"$\"",
            "root ::= [\\u00e0-\\u00ff]+ | [\\u0100-\\u017f] [\\u0080-\\u00ff]",
        };
        uint64_t x = 12345;
        int mismatches = 0;
        for (size_t gi = 0; gi < sizeof grammars / sizeof *grammars; gi++) {
            pl_gbnf g;
            char err[200];
            if (!pl_gbnf_parse(grammars[gi], NULL, &g, err, sizeof err)) {
                CHECK_MSG(0, "grammar %zu: %s", gi, err);
                continue;
            }
            pl_gmatch *a = pl_gmatch_new(&g), *b = pl_gmatch_new(&g);
            pl_gmatch_set_canonical(b, false);
            for (int trial = 0; trial < 400; trial++) {
                uint32_t sa = pl_gmatch_start(a), sb = pl_gmatch_start(b);
                for (int k = 0; k < 24; k++) {
                    x = x * 6364136223846793005ull + 1442695040888963407ull;
                    /* mostly valid UTF-8 of all lengths, some stray bytes */
                    static const uint8_t pool[] = {'"', 'a', 'x', '!', '$', 0xC3, 0xA9, 0xD0, 0x96, 0xE4, 0xB8, 0xAD,
                                                   0xE0, 0xA0, 0x80, 0xED, 0x9F, 0xBF, 0xF0, 0x9F, 0x98, 0x80, 0xF4,
                                                   0x8F, 0xC4, 0x81, 0xBF, 0xFF};
                    const uint8_t byte = pool[(x >> 33) % sizeof pool];
                    sa = pl_gmatch_step(a, sa, byte);
                    sb = pl_gmatch_step(b, sb, byte);
                    if ((sa == PL_GM_DEAD) != (sb == PL_GM_DEAD) ||
                        (sa != PL_GM_DEAD && (pl_gmatch_accepting(a, sa) != pl_gmatch_accepting(b, sb) ||
                                              pl_gmatch_distance(a, sa) != pl_gmatch_distance(b, sb)))) {
                        mismatches++;
                        fprintf(stderr, "grammar %zu trial %d byte %d (%02x): dead %d/%d acc %d/%d dist %u/%u\n", gi, trial, k, byte, sa == PL_GM_DEAD, sb == PL_GM_DEAD, sa != PL_GM_DEAD && pl_gmatch_accepting(a, sa), sb != PL_GM_DEAD && pl_gmatch_accepting(b, sb), sa == PL_GM_DEAD ? 0 : pl_gmatch_distance(a, sa), sb == PL_GM_DEAD ? 0 : pl_gmatch_distance(b, sb));
                        break;
                    }
                    if (sa == PL_GM_DEAD) break;
                }
            }
            pl_gmatch_free(a);
            pl_gmatch_free(b);
            pl_gbnf_free(&g);
        }
        CHECK_MSG(mismatches == 0, "%d random texts read differently with partial characters kept by pattern", mismatches);
    }
    /* deep nesting stays correct (each level a stack frame) */
    {
        char text[4096] = {0};
        size_t k = 0;
        for (int i = 0; i < 500; i++) text[k++] = '[';
        for (int i = 0; i < 500; i++) text[k++] = ']';
        char buf[4200];
        snprintf(buf, sizeof buf, "{\"x\":%s}", text);
        CHECK(run(JSON, buf) == -1);
    }
    /* classes are kept sorted and merged, negated ones complemented: every
     * code point near the random ranges' ends answers as the ranges as
     * written say (overlapping, adjacent, nested, out of order, negated) */
    {
        uint64_t x = 99;
        int wrong = 0;
        for (int trial = 0; trial < 200 && !wrong; trial++) {
            uint32_t lo[12], hi[12];
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            const int n = 1 + (int)((x >> 40) % 12), neg = (int)((x >> 20) & 1);
            char gbnf[1024];
            int k = snprintf(gbnf, sizeof gbnf, "root ::= [%s", neg ? "^" : "");
            for (int i = 0; i < n; i++) {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                /* small code points so that ranges meet; some past U+FFFF */
                const uint32_t base = (x >> 60) == 0 ? 0x10000 : 0x100;
                lo[i] = base + (uint32_t)((x >> 33) % 64);
                hi[i] = lo[i] + (uint32_t)((x >> 13) % 9);
                k += snprintf(gbnf + k, sizeof gbnf - (size_t)k, "\\U%08X-\\U%08X", lo[i], hi[i]);
            }
            snprintf(gbnf + k, sizeof gbnf - (size_t)k, "]");
            pl_gbnf g;
            char err[200];
            if (!pl_gbnf_parse(gbnf, NULL, &g, err, sizeof err)) {
                CHECK_MSG(0, "%s: %s", gbnf, err);
                break;
            }
            const pl_gclass *c = &g.cls[0];
            for (uint32_t cp = 0xF0; cp < 0x10100 && !wrong; cp = cp == 0x200 ? 0xFFF0 : cp + 1) {
                bool in = false;
                for (int i = 0; i < n; i++) in |= cp >= lo[i] && cp <= hi[i];
                if (neg) in = !in;
                if (pl_gclass_hits(&g, c, cp, cp) != in) {
                    wrong++;
                    fprintf(stderr, "%s: U+%04X %s\n", gbnf, cp, in ? "refused" : "taken");
                }
            }
            /* and a span question: [lo, hi] holds a member */
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            const uint32_t a = 0x100 + (uint32_t)((x >> 33) % 80), b = a + (uint32_t)((x >> 13) % 12);
            bool any = false;
            for (uint32_t cp = a; cp <= b; cp++) {
                bool in = false;
                for (int i = 0; i < n; i++) in |= cp >= lo[i] && cp <= hi[i];
                any |= neg ? !in : in;
            }
            if (pl_gclass_hits(&g, c, a, b) != any) wrong++;
            pl_gbnf_free(&g);
        }
        CHECK_MSG(wrong == 0, "%d class answers differ from the ranges as written", wrong);
    }
    /* rules that can match nothing, nested: r_i ::= r_{i+1} r_{i+1} puts
     * 2^depth stacks under one character.  At depth 12 (4096 of them,
     * completions chained that deep) it still matches, in a work list and
     * not recursion; at depth 30 the start is refused with the reason, in
     * bounded time, where an unbounded matcher runs for hours (the fuzzer
     * found one under the sanitizers that did, since fixed) */
    for (int depth = 12; depth <= 30; depth += 18) {
        char gbnf[2048];
        int k = snprintf(gbnf, sizeof gbnf, "root ::= r1 r1\n");
        for (int i = 1; i < depth; i++) k += snprintf(gbnf + k, sizeof gbnf - (size_t)k, "r%d ::= r%d r%d\n", i, i + 1, i + 1);
        snprintf(gbnf + k, sizeof gbnf - (size_t)k, "r%d ::= \"x\" | \"\"\n", depth);
        pl_gbnf g;
        char err[200];
        CHECK(pl_gbnf_parse(gbnf, NULL, &g, err, sizeof err));
        pl_gmatch *m = pl_gmatch_new(&g);
        uint32_t s = pl_gmatch_start(m);
        if (depth == 12) {
            CHECK(s != PL_GM_DEAD && pl_gmatch_accepting(m, s));
            s = pl_gmatch_feed(m, s, (const uint8_t *)"xxx", 3);
            CHECK(s != PL_GM_DEAD && pl_gmatch_accepting(m, s));
            CHECK(pl_gmatch_error(m) == NULL);
        } else {
            CHECK(s == PL_GM_DEAD);
            CHECK_MSG(pl_gmatch_error(m) && strstr(pl_gmatch_error(m), "too ambiguous"), "error: %s",
                      pl_gmatch_error(m) ? pl_gmatch_error(m) : "(none)");
        }
        pl_gmatch_free(m);
        pl_gbnf_free(&g);
    }
    TEST_DONE();
}
