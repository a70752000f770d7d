/*
 * test_json_schema.c -- the JSON-schema -> GBNF compiler
 * (src/grammar/json_schema.c) and its pattern compiler
 * (src/grammar/regex_gbnf.c).
 *
 * The grammar text is checked loosely here: every rule name carries the
 * prefix, every rule used is defined exactly once, parentheses balance, a
 * few expected pieces are present, and the same schema gives the same
 * text.  That the grammars accept the right strings is the end-to-end
 * tests' job (llama.cpp's engine judges them).  The refusals are checked
 * exactly: the keyword and the JSON pointer of the schema that uses it.
 * The fixtures of tests/grammar/ are compiled too.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "grammar/json_schema.h"
#include "grammar/regex_gbnf.h"
#include "pltest.h"

/* ---- a light GBNF lint ------------------------------------------------- */

typedef struct {
    char names[2048][96];
    int n;
} rule_names;

static int is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

/* Rule names defined and used, parentheses, quoting: 1 when sound, else
   prints why. */
static int lint(const char *g, const char *prefix, const char *what) {
    static rule_names defs;
    defs.n = 0;
    size_t plen = strlen(prefix);
    /* definitions: "name ::= " at the start of each line */
    for (const char *line = g; *line;) {
        const char *eol = strchr(line, '\n');
        if (!eol) {
            fprintf(stderr, "%s: text does not end with a newline\n", what);
            return 0;
        }
        const char *def = strstr(line, " ::= ");
        if (!def || def > eol) {
            fprintf(stderr, "%s: line without ' ::= ': %.*s\n", what, (int)(eol - line), line);
            return 0;
        }
        size_t n = (size_t)(def - line);
        for (size_t i = 0; i < n; i++)
            if (!is_name_char(line[i])) {
                fprintf(stderr, "%s: bad rule name %.*s\n", what, (int)n, line);
                return 0;
            }
        if (strncmp(line, prefix, plen) != 0 || n <= plen || n >= sizeof defs.names[0]) {
            fprintf(stderr, "%s: rule %.*s lacks the prefix '%s'\n", what, (int)n, line, prefix);
            return 0;
        }
        for (int i = 0; i < defs.n; i++)
            if (strlen(defs.names[i]) == n && !strncmp(defs.names[i], line, n)) {
                fprintf(stderr, "%s: rule %.*s defined twice\n", what, (int)n, line);
                return 0;
            }
        if (defs.n == (int)(sizeof defs.names / sizeof defs.names[0])) {
            fprintf(stderr, "%s: too many rules for the lint\n", what);
            return 0;
        }
        memcpy(defs.names[defs.n], line, n);
        defs.names[defs.n++][n] = 0;
        line = eol + 1;
    }
    /* uses: names outside literals and classes */
    for (const char *line = g; *line;) {
        const char *eol = strchr(line, '\n');
        const char *p = strstr(line, " ::= ") + 5;
        int depth = 0;
        while (p < eol) {
            char c = *p;
            if (c == '"' || c == '[') {
                char close = c == '"' ? '"' : ']';
                for (p++; p < eol && *p != close; p++)
                    if (*p == '\\')
                        p++;
                if (p >= eol) {
                    fprintf(stderr, "%s: unterminated %c in %.*s\n", what, c, (int)(eol - line), line);
                    return 0;
                }
                p++;
            } else if (c == '{') {
                /* llama.cpp refuses counts of 2000 (times the rules
                   repeated) and reads bigger maxima as none */
                long a = strtol(p + 1, NULL, 10);
                const char *comma = strchr(p, ','), *close = strchr(p, '}');
                long b = comma && close && comma < close && comma + 1 < close ? strtol(comma + 1, NULL, 10) : a;
                if (a > 1000 || b > 1000) {
                    fprintf(stderr, "%s: repetition count above 1000 in %.*s\n", what, (int)(eol - line), line);
                    return 0;
                }
                while (p < eol && *p != '}')
                    p++;
                p++;
            } else if (c == '(') {
                depth++, p++;
            } else if (c == ')') {
                if (--depth < 0) {
                    fprintf(stderr, "%s: unbalanced ) in %.*s\n", what, (int)(eol - line), line);
                    return 0;
                }
                p++;
            } else if (is_name_char(c)) {
                const char *s = p;
                while (p < eol && is_name_char(*p))
                    p++;
                int found = 0;
                for (int i = 0; i < defs.n; i++)
                    if (strlen(defs.names[i]) == (size_t)(p - s) && !strncmp(defs.names[i], s, (size_t)(p - s)))
                        found = 1;
                if (!found) {
                    fprintf(stderr, "%s: undefined rule %.*s\n", what, (int)(p - s), s);
                    return 0;
                }
            } else if (strchr(" |*+?", c)) {
                p++;
            } else {
                fprintf(stderr, "%s: stray '%c' in %.*s\n", what, c, (int)(eol - line), line);
                return 0;
            }
        }
        if (depth) {
            fprintf(stderr, "%s: unbalanced ( in %.*s\n", what, (int)(eol - line), line);
            return 0;
        }
        line = eol + 1;
    }
    return 1;
}

/* ---- helpers ------------------------------------------------------------ */

static char g_err[512];

/* compile a schema given as JSON text; NULL (g_err filled) on failure */
static char *compile(const char *json, const char *prefix) {
    cJSON *s = cJSON_Parse(json);
    if (!s) {
        snprintf(g_err, sizeof g_err, "test schema is not JSON: %s", json);
        return NULL;
    }
    g_err[0] = 0;
    char *g = pl_schema_to_gbnf(s, prefix, g_err, sizeof g_err);
    cJSON_Delete(s);
    return g;
}

/* compiles, lints, and returns the text (caller frees) */
static char *good(const char *json, const char *prefix) {
    char *g = compile(json, prefix);
    CHECK_MSG(g != NULL, "%s: %s", json, g_err);
    if (g)
        CHECK_MSG(lint(g, prefix, json), "lint failed:\n%s", g);
    return g;
}

static void expect_error(const char *json, const char *want) {
    char *g = compile(json, "");
    CHECK_MSG(g == NULL, "%s compiled, expected the error: %s", json, want);
    free(g);
    if (!g)
        CHECK_MSG(strstr(g_err, want) != NULL, "%s: error '%s' does not contain '%s'", json, g_err, want);
    CHECK_MSG(strchr(g_err, '\n') == NULL, "error is not one line: %s", g_err);
}

static int count(const char *hay, const char *needle) {
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* the body of rule `name` (a copy, without the newline), or NULL */
static char *rule_body(const char *g, const char *name) {
    size_t n = strlen(name);
    for (const char *line = g; *line;) {
        const char *eol = strchr(line, '\n');
        if (!strncmp(line, name, n) && !strncmp(line + n, " ::= ", 5)) {
            const char *b = line + n + 5;
            char *r = malloc((size_t)(eol - b) + 1);
            memcpy(r, b, (size_t)(eol - b));
            r[eol - b] = 0;
            return r;
        }
        line = eol + 1;
    }
    return NULL;
}

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    if (b)
        b[n] = 0;
    fclose(f);
    return b;
}

/* ---- tests -------------------------------------------------------------- */

static void test_object_basics(void) {
    const char *schema = "{\"type\":\"object\",\"properties\":{"
                         "\"name\":{\"type\":\"string\",\"maxLength\":20},"
                         "\"age\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":150},"
                         "\"nick\":{\"type\":\"string\"}},"
                         "\"required\":[\"age\",\"name\"],\"additionalProperties\":false}";
    char *g = good(schema, "");
    if (!g)
        return;
    char *root = rule_body(g, "root");
    CHECK(root != NULL);
    if (root) {
        /* required in the properties' order (name, age), then the optional one */
        const char *n = strstr(root, "root-name-kv"), *a = strstr(root, "root-age-kv"), *k = strstr(root, "root-nick-kv");
        CHECK(n && a && k && n < a && a < k);
        CHECK(strncmp(root, "\"{\" ws ", 7) == 0);
        CHECK(strstr(root, "\"}\"") != NULL);
    }
    free(root);
    char *kv = rule_body(g, "root-name-kv");
    CHECK(kv && strstr(kv, "\"\\\"name\\\":\" ws ") == kv);
    free(kv);
    char *name = rule_body(g, "root-name");
    CHECK(name && strstr(name, "char{0,20}"));
    free(name);
    /* the JSON whitespace: bounded */
    char *ws = rule_body(g, "ws");
    CHECK_STR(ws, "| \" \" | \"\\n\" [ \\t]{0,20}");
    free(ws);
    /* same schema, same text */
    char *g2 = good(schema, "");
    CHECK(g2 && strcmp(g, g2) == 0);
    free(g2);
    free(g);
}

static void test_prefix(void) {
    const char *schema = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"array\",\"items\":{}},"
                         "\"b\":{\"type\":\"string\",\"format\":\"date\"}},\"required\":[\"a\"]}";
    char *g = good(schema, "tool-3-");
    if (g) {
        CHECK(strncmp(g, "tool-3-root ::= ", 16) == 0);
        CHECK(strstr(g, "\ntool-3-ws ::= ") != NULL);
        CHECK(strstr(g, "\ntool-3-value ::= ") != NULL);
        CHECK(strstr(g, "\ntool-3-date ::= ") != NULL);
        CHECK(strstr(g, "\nws ::=") == NULL);
    }
    free(g);
    char *o = pl_json_object_gbnf("obj-");
    CHECK(o != NULL);
    if (o) {
        CHECK(lint(o, "obj-", "json_object"));
        CHECK(strncmp(o, "obj-root ::= obj-object\n", 24) == 0);
        CHECK(strstr(o, "obj-object ::= \"{\" obj-ws (obj-string \":\" obj-ws obj-value") != NULL);
    }
    free(o);
    o = pl_json_object_gbnf("");
    CHECK(o && lint(o, "", "json_object ''"));
    free(o);
    CHECK(pl_json_object_gbnf("bad prefix") == NULL);
    cJSON *s = cJSON_Parse("{}");
    char *x = pl_schema_to_gbnf(s, "a_b", g_err, sizeof g_err);
    CHECK(x == NULL && strstr(g_err, "prefix"));
    cJSON_Delete(s);
}

static void test_optional_chain(void) {
    /* all optional: any subset, in order, commas right (llama.cpp's chain) */
    char *g = good("{\"properties\":{\"a\":{\"type\":\"null\"},\"b\":{\"type\":\"null\"},\"c\":{\"type\":\"null\"}},"
                   "\"additionalProperties\":false}",
                   "");
    if (g) {
        char *root = rule_body(g, "root");
        CHECK_STR(root, "\"{\" ws ((root-a-kv root-rest1 | root-b-kv root-rest2 | root-c-kv) ws)? \"}\"");
        free(root);
        char *r1 = rule_body(g, "root-rest1");
        CHECK_STR(r1, "(\",\" ws root-b-kv)? root-rest2");
        free(r1);
        char *r2 = rule_body(g, "root-rest2");
        CHECK_STR(r2, "(\",\" ws root-c-kv)?");
        free(r2);
    }
    free(g);
    /* extra properties (any value) after the declared ones, keys other
       than the declared names */
    g = good("{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\"}},\"required\":[\"id\"]}", "");
    if (g) {
        char *root = rule_body(g, "root");
        CHECK_STR(root, "\"{\" ws root-id-kv (\",\" ws (root-additional-kv (\",\" ws root-additional-kv)*))? ws \"}\"");
        free(root);
        CHECK(strstr(g, "root-additional-k ::= \"\\\"\" (\"i\" (\"d\" kchar+ |") != NULL);
        CHECK(strstr(g, "\nkchar ::= ") != NULL);
    }
    free(g);
}

static void test_refs(void) {
    const char *tree = "{\"$defs\":{\"node\":{\"type\":\"object\",\"properties\":{"
                       "\"v\":{\"type\":\"integer\"},"
                       "\"kids\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/$defs/node\"},\"maxItems\":2}},"
                       "\"required\":[\"v\",\"kids\"],\"additionalProperties\":false}},"
                       "\"$ref\":\"#/$defs/node\"}";
    char *g = good(tree, "");
    if (g) {
        CHECK_EQ_U64(count(g, "def-node ::= "), 1);
        CHECK(strstr(g, "root ::= def-node\n") != NULL);
        char *kids = rule_body(g, "def-node-kids");
        CHECK_STR(kids, "\"[\" ws (def-node (\",\" ws def-node)? ws)? \"]\"");
        free(kids);
    }
    free(g);
    /* "#": the root itself */
    g = good("{\"type\":\"object\",\"properties\":{\"next\":{\"anyOf\":[{\"$ref\":\"#\"},{\"type\":\"null\"}]}},"
             "\"required\":[\"next\"],\"additionalProperties\":false}",
             "");
    if (g) {
        char *next = rule_body(g, "root-next");
        CHECK_STR(next, "root | null");
        free(next);
    }
    free(g);
    g = good("{\"definitions\":{\"c\":{\"enum\":[\"r\",\"g\"]}},\"type\":\"array\",\"items\":{\"$ref\":\"#/definitions/c\"}}",
             "");
    CHECK(g && strstr(g, "def-c ::= \"\\\"r\\\"\" | \"\\\"g\\\"\"\n"));
    free(g);
    expect_error("{\"$ref\":\"#\"}", "recursive $ref '#' at # is left recursion");
    expect_error("{\"anyOf\":[{\"$ref\":\"#/$defs/a\"},{\"type\":\"null\"}],\"$defs\":{\"a\":{\"$ref\":\"#\"}}}",
                 "left recursion");
    expect_error("{\"$ref\":\"#/$defs/missing\"}", "unresolvable $ref '#/$defs/missing' at #");
    expect_error("{\"properties\":{\"x\":{\"$ref\":\"https://example.com/s.json\"}}}",
                 "unsupported $ref 'https://example.com/s.json' at #/properties/x");
}

static void test_strings(void) {
    char *g = good("{\"type\":\"string\",\"pattern\":\"^\\\"a\\\\\\\\b$\"}", "");
    /* pattern ^"a\\b$: the value "a\b, whose JSON text is \"a\\b */
    CHECK(g && strstr(g, "root ::= \"\\\"\" \"\\\\\\\"a\\\\\\\\b\" \"\\\"\"\n"));
    free(g);
    g = good("{\"type\":\"string\",\"pattern\":\"^\\\\d{3}-[A-Z]\\\\w?$\"}", "");
    CHECK(g && strstr(g, "root ::= \"\\\"\" [0-9]{3} \"-\" [A-Z] [0-9A-Z_a-z]? \"\\\"\"\n"));
    free(g);
    /* lengths count code points: repetitions of the char rule */
    g = good("{\"type\":\"string\",\"minLength\":2,\"maxLength\":5}", "");
    CHECK(g && strstr(g, "root ::= \"\\\"\" char{2,5} \"\\\"\"\n"));
    free(g);
    /* a pattern and lengths: the one varying part takes the bounds */
    g = good("{\"type\":\"string\",\"pattern\":\"^[a-z]+$\",\"maxLength\":8}", "");
    CHECK(g && strstr(g, "[a-z]{1,8}"));
    free(g);
    /* long strings: chunks of 1000 (llama.cpp refuses a count of 2000 and
       reads a bigger maximum as none) */
    g = good("{\"type\":\"string\",\"minLength\":1,\"maxLength\":2500}", "");
    CHECK(g && strstr(g, "root ::= \"\\\"\" root-r1 \"\\\"\"\n"));
    CHECK(g && strstr(g, "root-r ::= char{1000}\n"));
    CHECK(g && strstr(g, "root-r1 ::= char{1,999} | root-r char{0,999} | root-r{2} char{0,500}\n"));
    free(g);
    g = good("{\"type\":\"string\",\"pattern\":\"^(ab){1,3000}$\"}", "");
    free(g);
    g = good("{\"type\":\"array\",\"items\":{\"type\":\"integer\"},\"minItems\":1200,\"maxItems\":4000}", "");
    free(g);
    g = good("{\"type\":\"string\",\"pattern\":\"^([a-z]{0,900}x){2,9}$\"}", "");
    CHECK(g && strstr(g, "root-r ::= [a-z]{0,900}\n") && strstr(g, "(root-r \"x\"){2,9}"));
    free(g);
    g = good("{\"type\":\"string\",\"format\":\"uuid\"}", "");
    CHECK(g && strstr(g, "root ::= uuid\n") && strstr(g, "[0-9A-Fa-f]{8} \"-\""));
    free(g);
    for (int i = 0; i < 4; i++) {
        static const char *const f[] = {"date", "time", "date-time", "email"};
        char schema[96];
        snprintf(schema, sizeof schema, "{\"type\":\"string\",\"format\":\"%s\"}", f[i]);
        g = good(schema, "p-");
        free(g);
    }
    expect_error("{\"type\":\"string\",\"format\":\"uri\"}", "unsupported JSON-schema format 'uri' at #");
    expect_error("{\"properties\":{\"p\":{\"type\":\"string\",\"pattern\":\"^(?=a)b$\"}}}",
                 "unsupported pattern at #/properties/p: lookahead");
    expect_error("{\"type\":\"string\",\"pattern\":\"^(a)\\\\1$\"}", "backreferences");
    expect_error("{\"type\":\"string\",\"pattern\":\"^a+?$\"}", "lazy quantifiers");
    expect_error("{\"type\":\"string\",\"pattern\":\"^a\\\\bb$\"}", "word-boundary");
    expect_error("{\"type\":\"string\",\"pattern\":\"^a(b\"}", "missing ')'");
    expect_error("{\"type\":\"string\",\"pattern\":\"a^b\"}", "anchor");
    expect_error("{\"type\":\"string\",\"minLength\":5,\"maxLength\":2}", "unsatisfiable JSON schema at #: minLength 5 > maxLength 2");
}

static void test_numbers(void) {
    char *g = good("{\"type\":\"integer\",\"minimum\":-5,\"maximum\":12}", "");
    CHECK(g && strstr(g, "root ::= \"-\" [1-5] | [0-9] | \"1\" [0-2]\n"));
    free(g);
    g = good("{\"type\":\"integer\",\"exclusiveMinimum\":0,\"exclusiveMaximum\":100}", "");
    CHECK(g && strstr(g, "root ::= [1-9] | [1-9] [0-9]\n"));
    free(g);
    g = good("{\"type\":\"integer\",\"minimum\":0}", "");
    CHECK(g && strstr(g, "root ::= [0-9] | [1-9] [0-9]{1,15}\n"));
    free(g);
    g = good("{\"type\":\"number\",\"minimum\":0,\"maximum\":1}", "");
    /* 0..1: 0 with any fraction, or 1 with a zero fraction; no exponent */
    CHECK(g && strstr(g, "root ::= \"0\" (\".\" [0-9]{1,16})? | \"1\" (\".\" \"0\"{1,16})?\n"));
    free(g);
    g = good("{\"type\":\"number\",\"minimum\":-2.5,\"exclusiveMaximum\":2.5}", "");
    free(g);
    g = good("{\"type\":\"number\"}", "");
    CHECK(g && strstr(g, "root ::= number\n") && strstr(g, "[eE]"));
    free(g);
    expect_error("{\"type\":\"integer\",\"minimum\":3,\"maximum\":2}", "unsatisfiable JSON schema at #: minimum 3 is above maximum 2");
    expect_error("{\"type\":\"integer\",\"exclusiveMinimum\":1,\"exclusiveMaximum\":2}", "no integer between the bounds");
    expect_error("{\"properties\":{\"n\":{\"type\":\"number\",\"multipleOf\":0.5}}}",
                 "unsupported JSON-schema keyword 'multipleOf' at #/properties/n");
}

static void test_enum_const(void) {
    char *g = good("{\"enum\":[\"a\",1,null,true,{\"k\":[1,2]},2.5]}", "");
    CHECK(g && strstr(g, "root ::= \"\\\"a\\\"\" | \"1\" | \"null\" | \"true\" | \"{\\\"k\\\":[1,2]}\" | \"2.5\"\n"));
    free(g);
    /* enum values that break another keyword are left out */
    g = good("{\"type\":\"string\",\"enum\":[\"ab\",\"abcdef\",3],\"maxLength\":4}", "");
    CHECK(g && strstr(g, "root ::= \"\\\"ab\\\"\"\n"));
    free(g);
    g = good("{\"const\":\"x\\ny\"}", "");
    CHECK(g && strstr(g, "root ::= \"\\\"x\\\\ny\\\"\"\n"));
    free(g);
    expect_error("{\"enum\":[]}", "unsatisfiable JSON schema at #: no value of 'enum'");
    expect_error("{\"type\":\"integer\",\"enum\":[\"a\"]}", "no value of 'enum' satisfies");
}

static void test_combinations(void) {
    /* anyOf with siblings: each alternative merged with them */
    char *g = good("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},\"b\":{\"type\":\"integer\"}},"
                   "\"additionalProperties\":false,\"anyOf\":[{\"required\":[\"a\"]},{\"required\":[\"b\"]}]}",
                   "");
    if (g) {
        char *root = rule_body(g, "root");
        CHECK_STR(root, "root-0 | root-1");
        free(root);
        CHECK(strstr(g, "root-0 ::= \"{\" ws root-0-a-kv") != NULL);
        CHECK(strstr(g, "root-1 ::= \"{\" ws root-1-b-kv") != NULL);
    }
    free(g);
    /* allOf merged exactly: bounds tightened, required and properties joined */
    g = good("{\"allOf\":[{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":50}},"
             "\"required\":[\"n\"]},{\"properties\":{\"n\":{\"maximum\":9}},\"additionalProperties\":false}]}",
             "");
    CHECK(g && strstr(g, "root ::= \"{\" ws root-n-kv ws \"}\"\n") && strstr(g, "root-n-kv ::= \"\\\"n\\\":\" ws [0-9]\n"));
    free(g);
    /* type arrays */
    g = good("{\"type\":[\"string\",\"null\"],\"maxLength\":3}", "");
    CHECK(g && strstr(g, "root ::= \"\\\"\" char{0,3} \"\\\"\" | null\n"));
    free(g);
    /* {} and true: any value */
    g = good("true", "");
    CHECK(g && strstr(g, "root ::= value\n"));
    free(g);
    g = good("{\"description\":\"anything\"}", "");
    CHECK(g && strstr(g, "root ::= value\n"));
    free(g);
    /* tuples */
    g = good("{\"type\":\"array\",\"prefixItems\":[{\"type\":\"integer\"},{\"type\":\"string\"}],\"items\":false}", "");
    CHECK(g && strstr(g, "root ::= \"[\" ws (integer (\",\" ws string)? ws)? \"]\"\n"));
    free(g);
    g = good("{\"type\":\"array\",\"items\":{\"type\":\"boolean\"},\"minItems\":2,\"maxItems\":4}", "");
    CHECK(g && strstr(g, "root ::= \"[\" ws boolean \",\" ws boolean (\",\" ws boolean){0,2} ws \"]\"\n"));
    free(g);
    expect_error("{\"allOf\":[{\"type\":\"string\"},{\"type\":\"integer\"}]}", "unsatisfiable JSON schema at #: allOf parts share no type");
    expect_error("{\"allOf\":[{\"pattern\":\"^a\"},{\"pattern\":\"^b\"}]}", "unsupported JSON-schema keyword 'pattern' at #");
    expect_error("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"null\"}},\"required\":[\"b\"],\"additionalProperties\":false}",
                 "required property 'b' is not allowed");
    expect_error("{\"type\":\"array\",\"items\":false,\"minItems\":1}", "minItems 1 cannot be met");
    expect_error("false", "it accepts no value");
}

static void test_keyword_refusals(void) {
    expect_error("{\"type\":\"object\",\"properties\":{\"tags\":{\"type\":\"array\",\"uniqueItems\":true}}}",
                 "unsupported JSON-schema keyword 'uniqueItems' at #/properties/tags");
    expect_error("{\"type\":\"object\",\"properties\":{\"a~b/c\":{\"not\":{}}}}",
                 "unsupported JSON-schema keyword 'not' at #/properties/a~0b~1c");
    expect_error("{\"items\":{\"anyOf\":[{\"type\":\"string\"},{\"if\":{}}]}}",
                 "unsupported JSON-schema keyword 'if' at #/items/anyOf/1");
    expect_error("{\"$defs\":{\"x\":{\"patternProperties\":{}}},\"$ref\":\"#/$defs/x\"}",
                 "unsupported JSON-schema keyword 'patternProperties' at #/$defs/x");
    expect_error("{\"type\":\"object\",\"strict\":true}", "unsupported JSON-schema keyword 'strict' at #");
    expect_error("{\"prefixItems\":[true,{\"contains\":{}}]}", "unsupported JSON-schema keyword 'contains' at #/prefixItems/1");
    /* the keywords that ask nothing are fine */
    char *g = good("{\"title\":\"t\",\"description\":\"d\",\"$schema\":\"https://json-schema.org/draft/2020-12/schema\","
                   "\"$id\":\"x\",\"$comment\":\"c\",\"examples\":[1],\"default\":1,\"deprecated\":false,"
                   "\"readOnly\":true,\"writeOnly\":false,\"type\":\"integer\"}",
                   "");
    CHECK(g && strstr(g, "root ::= integer\n"));
    free(g);
}

static void test_regex(void) {
    char err[200];
    pl_regex *re = pl_regex_parse("^(?:[a-c]x|\\d{2,3})$", err, sizeof err);
    CHECK(re != NULL);
    if (re) {
        long lo, hi;
        pl_regex_length(re, &lo, &hi);
        CHECK(lo == 2 && hi == 3);
        CHECK(pl_regex_match(re, "bx", 2) == 1);
        CHECK(pl_regex_match(re, "123", 3) == 1);
        CHECK(pl_regex_match(re, "1234", 4) == 0);
        CHECK(pl_regex_match(re, "dx", 2) == 0);
        pl_regex_free(re);
    }
    /* unanchored: anything around */
    re = pl_regex_parse("ab", err, sizeof err);
    CHECK(re && pl_regex_match(re, "xxabyy", 6) == 1 && pl_regex_match(re, "xxayy", 5) == 0);
    pl_regex_free(re);
    /* no repeated nullable part (left recursion to a GBNF engine) */
    re = pl_regex_parse("^(a?b?)*$", err, sizeof err);
    char *x = re ? pl_regex_to_gbnf(re, NULL, NULL) : NULL;
    CHECK_STR(x, "(\"a\" \"b\"? | \"b\")*");
    free(x);
    pl_regex_free(re);
    /* the JSON spelling of special characters */
    re = pl_regex_parse("^[\"\\\\\\n\\u0001]$", err, sizeof err);
    x = re ? pl_regex_to_gbnf(re, NULL, NULL) : NULL;
    CHECK_STR(x, "(\"\\\\\" [\\x22\\x5Cn] | \"\\\\u0001\")");
    free(x);
    pl_regex_free(re);
    /* length limits: exact with one varying part */
    re = pl_regex_parse("^[A-Z]{2}\\d+$", err, sizeof err);
    CHECK(re && pl_regex_limit_length(re, 4, 6, err, sizeof err) == 1);
    x = re ? pl_regex_to_gbnf(re, NULL, NULL) : NULL;
    CHECK_STR(x, "[A-Z]{2} [0-9]{2,4}");
    free(x);
    pl_regex_free(re);
    re = pl_regex_parse("^[a-z]{3}$", err, sizeof err);
    CHECK(re && pl_regex_limit_length(re, 4, -1, err, sizeof err) == 0);
    pl_regex_free(re);
    CHECK(pl_regex_parse("[]", err, sizeof err) == NULL && strstr(err, "no string"));
    CHECK(pl_regex_parse("(?<=a)b", err, sizeof err) == NULL && strstr(err, "lookbehind"));
}

/* every fixture compiles (and lints); every refused one names its keyword */
static void test_fixtures(void) {
    char base[1024];
    snprintf(base, sizeof base, "%s", __FILE__);
    char *cut = strstr(base, "unit/test_json_schema.c");
    if (!cut) {
        fprintf(stderr, "fixtures: cannot locate tests/ from %s\n", __FILE__);
        CHECK(0);
        return;
    }
    *cut = 0;
    char dir[1100], path[1400];
    snprintf(dir, sizeof dir, "%sgrammar/schemas", base);
    DIR *d = opendir(dir);
    CHECK_MSG(d != NULL, "cannot open %s", dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json"))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        char *text = read_file(path);
        CHECK_MSG(text != NULL, "cannot read %s", path);
        if (!text)
            continue;
        char *g = compile(text, "fx-");
        CHECK_MSG(g != NULL, "%s: %s", e->d_name, g_err);
        if (g)
            CHECK_MSG(lint(g, "fx-", e->d_name), "%s: lint failed", e->d_name);
        free(g);
        free(text);
        n++;
    }
    if (d)
        closedir(d);
    CHECK_MSG(n >= 32, "only %d schema fixtures", n);
    snprintf(path, sizeof path, "%sgrammar/unsupported/expected.txt", base);
    char *list = read_file(path);
    CHECK_MSG(list != NULL, "cannot read %s", path);
    int m = 0;
    for (char *line = list ? strtok(list, "\n") : NULL; line; line = strtok(NULL, "\n")) {
        char file[256], keyword[128];
        if (sscanf(line, "%255s %127s", file, keyword) != 2)
            continue;
        snprintf(path, sizeof path, "%sgrammar/unsupported/%s", base, file);
        char *text = read_file(path);
        CHECK_MSG(text != NULL, "cannot read %s", path);
        if (!text)
            continue;
        char *g = compile(text, "");
        char want[200];
        snprintf(want, sizeof want, "unsupported JSON-schema keyword '%s' at #", keyword);
        CHECK_MSG(g == NULL && strstr(g_err, want) == g_err, "%s: want '%s...', got '%s'", file, want,
                  g ? "(compiled)" : g_err);
        free(g);
        free(text);
        m++;
    }
    free(list);
    CHECK_MSG(m >= 8, "only %d refused fixtures", m);
}

int main(void) {
    test_object_basics();
    test_prefix();
    test_optional_chain();
    test_refs();
    test_strings();
    test_numbers();
    test_enum_const();
    test_combinations();
    test_keyword_refusals();
    test_regex();
    test_fixtures();
    TEST_DONE();
}
