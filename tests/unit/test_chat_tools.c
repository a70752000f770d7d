/*
 * test_chat_tools.c -- tool calling's formats (src/chat/chat_tools*.c):
 * every format's replies parsed in one piece, in every split into two
 * pieces and in 1-byte pieces give the same calls and content (the
 * streamed events joined equal the batch result); content before / after
 * calls, parallel calls, botched calls (invalid JSON, unknown functions,
 * unterminated markup); no markup ever in a content event; the XML
 * formats' values typed by the parameter schema; call ids; the GBNF's
 * structure for each format; and the template -> format table on the
 * bundle's templates ($PL_ORACLE_DIR/src/models/templates, or the cache
 * scripts/install-oracle.sh fills; missing: a failure with the reason,
 * unless POCKETLLM_NO_ORACLE=1).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "chat/chat_tools.h"
#include "pltest.h"

#if defined(__has_include)
#if __has_include("grammar/json_schema.h")
#define HAVE_SCHEMA_COMPILER 1
#endif
#endif
#ifndef HAVE_SCHEMA_COMPILER
/* the schema compiler is not in the tree yet: a stand-in with its interface */
char *pl_schema_to_gbnf(const cJSON *schema, const char *prefix, char *err, size_t errlen);
char *pl_schema_to_gbnf(const cJSON *schema, const char *prefix, char *err, size_t errlen) {
    if (cJSON_GetObjectItem(schema, "unsupportedKeyword")) {
        snprintf(err, errlen, "unsupported keyword 'unsupportedKeyword'");
        return NULL;
    }
    size_t n = strlen(prefix) * 2 + 64;
    char *s = malloc(n);
    snprintf(s, n, "%sroot ::= \"{\" %sws \"}\"\n%sws ::= [ ]*\n", prefix, prefix, prefix);
    return s;
}
#endif

static const char TOOLS[] =
    "[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"description\":\"weather\",\"parameters\":"
    "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"},\"days\":{\"type\":\"integer\"},"
    "\"metric\":{\"type\":\"boolean\"},\"opts\":{\"type\":\"object\"},\"note\":{\"type\":[\"string\",\"null\"]},"
    "\"temp\":{\"type\":\"number\"}},\"required\":[\"city\"]}}},"
    "{\"type\":\"function\",\"function\":{\"name\":\"get_time\",\"parameters\":{\"type\":\"object\","
    "\"properties\":{\"tz\":{\"type\":\"string\",\"enum\":[\"UTC\",\"CET\"]}}}}}]";

/* ---- what the events build ------------------------------------------------ */

typedef struct rec {
    char *content;
    size_t clen;
    int ncalls;
    char names[16][65], ids[16][32];
    char *args[16];
    bool order_bad;
    const char *forbid[6];
    bool markup;
} rec;

static void append(char **s, size_t *len, const char *t, size_t n) {
    *s = realloc(*s, *len + n + 1);
    memcpy(*s + *len, t, n);
    *len += n;
    (*s)[*len] = 0;
}

static void on_event(void *user, const pl_tool_event *ev) {
    rec *r = user;
    if (ev->kind == PL_TEV_CONTENT) {
        append(&r->content, &r->clen, ev->text, ev->len);
        char *piece = malloc(ev->len + 1);
        memcpy(piece, ev->text, ev->len);
        piece[ev->len] = 0;
        for (int i = 0; i < 6 && r->forbid[i]; i++)
            if (strstr(piece, r->forbid[i])) r->markup = true;
        free(piece);
    } else if (ev->kind == PL_TEV_CALL_START) {
        if (ev->index != r->ncalls || r->ncalls >= 16 || !ev->name || !ev->id) {
            r->order_bad = true;
            return;
        }
        snprintf(r->names[r->ncalls], sizeof r->names[0], "%s", ev->name);
        snprintf(r->ids[r->ncalls], sizeof r->ids[0], "%s", ev->id);
        r->args[r->ncalls] = calloc(1, 1);
        r->ncalls++;
    } else {
        if (ev->index != r->ncalls - 1 || ev->index < 0) {
            r->order_bad = true;
            return;
        }
        size_t n = strlen(r->args[ev->index]);
        append(&r->args[ev->index], &n, ev->text, ev->len);
    }
}

static void rec_free(rec *r) {
    free(r->content);
    for (int i = 0; i < r->ncalls; i++) free(r->args[i]);
}

/* "content|name args|name args" ("-" for no content), or "BOTCH" */
static char *describe(const char *content, int n, char names[][65], char **args) {
    char *s = NULL;
    size_t len = 0;
    const char *c = content ? content : "-";
    append(&s, &len, c, strlen(c));
    for (int i = 0; i < n; i++) {
        append(&s, &len, "|", 1);
        append(&s, &len, names[i], strlen(names[i]));
        append(&s, &len, " ", 1);
        append(&s, &len, args[i], strlen(args[i]));
    }
    return s;
}

static char *describe_parser(pl_tool_parser *p, bool ok) {
    if (!ok) {
        char *b = malloc(6);
        memcpy(b, "BOTCH", 6);
        return b;
    }
    char names[16][65];
    char *args[16];
    int n = pl_tool_parser_ncalls(p);
    for (int i = 0; i < n && i < 16; i++) {
        const char *nm, *id, *a;
        pl_tool_parser_call(p, i, &nm, &id, &a);
        snprintf(names[i], sizeof names[0], "%s", nm);
        args[i] = (char *)a;
    }
    return describe(pl_tool_parser_content(p), n < 16 ? n : 16, names, args);
}

static bool blank(const char *s) {
    for (; s && *s; s++)
        if (!strchr(" \t\r\n", *s)) return false;
    return true;
}

/* One run: the reply in pieces at the given cuts; the events' result must
 * equal the parser's own. */
static char *run(pl_tool_format f, const cJSON *tools, const char *reply, const size_t *cuts, int ncuts,
                 uint64_t seed, rec *r) {
    const char *trig = pl_tools_trigger(f);
    memset(r, 0, sizeof *r);
    r->forbid[0] = trig && *trig ? trig : ">>>"; /* ("": the prompt opens the part, later parts start ">>>") */
    r->forbid[1] = "</tool_call>";
    r->forbid[2] = "<function=";
    r->forbid[3] = "[ARGS]";
    r->forbid[4] = "tool\xe2\x96\x81";
    pl_tool_parser *p = pl_tool_parser_new(f, tools, seed);
    size_t len = strlen(reply), at = 0;
    for (int i = 0; i <= ncuts; i++) {
        size_t to = i < ncuts ? cuts[i] : len;
        pl_tool_parser_feed(p, reply + at, to - at, on_event, r);
        at = to;
    }
    bool ok = pl_tool_parser_finish(p, on_event, r);
    char *mine = describe_parser(p, ok);
    if (ok) {
        char *c = r->content && !blank(r->content) ? r->content : NULL;
        char *ev = describe(c, r->ncalls, r->names, r->args);
        CHECK_MSG(strcmp(ev, mine) == 0, "events give '%s', the parser '%s' (reply '%s')", ev, mine, reply);
        CHECK_MSG(!r->order_bad, "events out of order for '%s'", reply);
        CHECK_MSG(!r->markup, "tool-call markup in a content event for '%s'", reply);
        for (int i = 0; i < r->ncalls; i++) {
            const char *id;
            pl_tool_parser_call(p, i, NULL, &id, NULL);
            CHECK(strcmp(id, r->ids[i]) == 0);
            CHECK_MSG(strncmp(id, "call_", 5) == 0 && strlen(id) == 29, "bad id '%s'", id);
            for (int k = 0; k < i; k++) CHECK_MSG(strcmp(r->ids[k], id) != 0, "two calls with id %s", id);
        }
        free(ev);
    } else {
        CHECK(pl_tool_parser_error(p) != NULL);
        size_t tl;
        const char *t = pl_tool_parser_text(p, &tl);
        CHECK(tl == len && memcmp(t, reply, len) == 0);
    }
    pl_tool_parser_free(p);
    return mine;
}

static cJSON *g_tools;

/* The reply parsed whole, in every 2-piece split and byte by byte. */
static void parse_case(pl_tool_format f, const char *reply, const char *want) {
    rec r;
    char *whole = run(f, g_tools, reply, NULL, 0, 1, &r);
    rec_free(&r);
    CHECK_MSG(strcmp(whole, want) == 0, "%s: '%s'\n  gives '%s'\n  wanted '%s'", pl_tools_format_name(f), reply,
              whole, want);
    size_t len = strlen(reply);
    for (size_t cut = 1; cut < len; cut++) {
        char *two = run(f, g_tools, reply, &cut, 1, 1, &r);
        rec_free(&r);
        CHECK_MSG(strcmp(two, whole) == 0, "%s: split at %zu gives '%s', whole '%s'", pl_tools_format_name(f), cut,
                  two, whole);
        free(two);
    }
    size_t *cuts = malloc((len + 1) * sizeof *cuts);
    for (size_t i = 0; i + 1 < len; i++) cuts[i] = i + 1;
    char *bytes = run(f, g_tools, reply, cuts, len > 1 ? (int)len - 1 : 0, 1, &r);
    rec_free(&r);
    CHECK_MSG(strcmp(bytes, whole) == 0, "%s: bytewise gives '%s', whole '%s'", pl_tools_format_name(f), bytes, whole);
    free(bytes);
    free(cuts);
    free(whole);
}

#define W "get_weather "
#define PARIS "{\"city\": \"Paris\"}"

static void test_hermes(void) {
    pl_tool_format f = PL_TOOLS_HERMES;
    parse_case(f, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": " PARIS "}\n</tool_call>", "-|" W PARIS);
    parse_case(f,
               "Let me check.\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"P}a\\\"r{is\", "
               "\"days\": 3}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>",
               "Let me check.|get_weather {\"city\": \"P}a\\\"r{is\", \"days\": 3}|get_time {}");
    parse_case(f, "<tool_call>{\"arguments\": {\"tz\": \"UTC\"}, \"id\": [1, {\"x\": null}], \"name\": \"get_time\"}"
                  "</tool_call>", "-|get_time {\"tz\": \"UTC\"}");
    parse_case(f, "<tool_call>{\"name\": \"get_time\"}</tool_call>", "-|get_time {}");
    /* arguments as a JSON string holding the object, as OpenAI writes them */
    parse_case(f, "<tool_call>{\"name\": \"get_weather\", \"arguments\": \"{\\\"city\\\": \\\"P\\u00e9\\ud83d\\ude00\\\"}\"}"
                  "</tool_call>", "-|get_weather {\"city\": \"P\xc3\xa9\xf0\x9f\x98\x80\"}");
    parse_case(f, "<tool_call>{\"arguments\": \"{}\", \"name\": \"get_time\"}</tool_call>", "-|get_time {}");
    parse_case(f, "<tool_call>{\"name\": \"get_time\", \"arguments\": \"[1]\"}</tool_call>", "BOTCH");
    parse_case(f, "<tool_call>{\"name\": \"get_time\", \"arguments\": \"\\ud800\"}</tool_call>", "BOTCH");
    parse_case(f, "<tool_call>{\"name\": \"get_time\", \"arguments\": {}}</tool_call>\n\nDone.", "Done.|get_time {}");
    parse_case(f, "a < b and <tool_", "a < b and <tool_");
    parse_case(f, "plain text\n", "plain text\n");
    parse_case(f, "  \n", "-");
    parse_case(f, "", "-");
    /* botched */
    parse_case(f, "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": }}</tool_call>", "BOTCH");
    parse_case(f, "<tool_call>{\"name\": \"launch\", \"arguments\": {}}</tool_call>", "BOTCH");
    parse_case(f, "<tool_call>{\"name\": \"get_time\", \"arguments\": {}}", "BOTCH");
    parse_case(f, "<tool_call>{\"name\": \"get_time\", \"arguments\": {}}</tool_cal", "BOTCH");
    parse_case(f, "<tool_call>{\"arguments\": {}}</tool_call>", "BOTCH");
    parse_case(f, "<tool_call>{\"name\": \"get_time\", \"arguments\": [1]}</tool_call>", "BOTCH");
    parse_case(f, "<tool_call>get_time</tool_call>", "BOTCH");
    parse_case(f, "ok <tool_call>", "BOTCH");
}

static void test_qwen_xml(void) {
    pl_tool_format f = PL_TOOLS_QWEN_XML;
    parse_case(f,
               "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n"
               "</parameter>\n</function>\n</tool_call>",
               "-|get_weather {\"city\": \"Paris\", \"days\": 3}");
    parse_case(f,
               "I'll look.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nline1\n\"q\"\t</para x\n\n"
               "</parameter>\n<parameter=metric>\nTrue\n</parameter>\n<parameter=opts>\n{\"a\": [1, 2]}\n</parameter>\n"
               "<parameter=days>\nthree\n</parameter>\n<parameter=note>\nnull\n</parameter>\n<parameter=temp>\n-2.5e1\n"
               "</parameter>\n<parameter=extra>\n42\n</parameter>\n<parameter=other>\nabc\n</parameter>\n</function>\n"
               "</tool_call>\n<tool_call>\n<function=get_time>\n</function>\n</tool_call>",
               "I'll look.|get_weather {\"city\": \"line1\\n\\\"q\\\"\\t</para x\\n\", \"metric\": true, \"opts\": {\"a\": "
               "[1, 2]}, \"days\": \"three\", \"note\": null, \"temp\": -2.5e1, \"extra\": 42, \"other\": \"abc\"}"
               "|get_time {}");
    parse_case(f, "<tool_call>\n<function=get_weather>\n<parameter=city>\n\n</parameter>\n</function>\n</tool_call>",
               "-|get_weather {\"city\": \"\"}");
    parse_case(f, "<tool_call>\n<function=nope>\n</function>\n</tool_call>", "BOTCH");
    parse_case(f, "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n", "BOTCH");
    parse_case(f, "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n",
               "BOTCH");
    parse_case(f, "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>", "BOTCH");
}

static void test_llama3(void) {
    pl_tool_format f = PL_TOOLS_LLAMA3_JSON;
    parse_case(f, "{\"name\": \"get_weather\", \"parameters\": " PARIS "}", "-|" W PARIS);
    parse_case(f, "\n<|python_tag|>{\"name\": \"get_weather\", \"parameters\": " PARIS "}", "-|" W PARIS);
    parse_case(f, "{\"type\": \"function\", \"name\": \"get_time\", \"parameters\": {}}; {\"name\": \"get_weather\", "
                  "\"parameters\": " PARIS "}", "-|get_time {}|" W PARIS);
    parse_case(f, "Hello {world}", "Hello {world}");
    parse_case(f, " <|python", " <|python");
    parse_case(f, "  {\"foo\": 1}", "BOTCH");
    parse_case(f, "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Par", "BOTCH");
    /* a key's length limit (256) holds whether the key came whole or in
     * pieces (the fuzzer found a reply that passed whole, botched by bytes) */
    char reply[400];
    for (int klen = 256; klen <= 257; klen++) {
        snprintf(reply, sizeof reply, "{\"name\": \"get_time\", \"%0*d\": {}}", klen, 0);
        parse_case(f, reply, klen == 256 ? "-|get_time {}" : "BOTCH");
    }
}

static void test_json_lists(void) {
    const char *items = "{\"name\": \"get_weather\", \"arguments\": " PARIS ", \"id\": \"abcdefghi\"}, "
                        "{\"name\": \"get_time\", \"arguments\": {}}";
    const char *want = "Sure.|" W PARIS "|get_time {}";
    char buf[512];
    snprintf(buf, sizeof buf, "Sure. [TOOL_CALLS][%s]", items);
    parse_case(PL_TOOLS_MISTRAL_NEMO, buf, want);
    snprintf(buf, sizeof buf, "Sure.<|tool_call|>[%s]", items);
    parse_case(PL_TOOLS_GRANITE, buf, want);
    snprintf(buf, sizeof buf, "Sure. functools[%s]", items);
    parse_case(PL_TOOLS_FIREFUNCTION, buf, want);
    snprintf(buf, sizeof buf, "Sure.\n<tool_calls>[%s]</tool_calls>", items);
    parse_case(PL_TOOLS_APRIEL, buf, want);
    snprintf(buf, sizeof buf, "Sure.\n<TOOLCALL>[%s]</TOOLCALL>", items);
    parse_case(PL_TOOLS_NEMOTRON_V2, buf, want);
    parse_case(PL_TOOLS_MINIMAX_M1,
               "Sure.<tool_calls>\n{\"name\": \"get_weather\", \"arguments\": " PARIS "}\n{\"name\": \"get_time\", "
               "\"arguments\": {}}\n</tool_calls>",
               want);
    /* as Command R7B's template writes them: numbered, on their own lines */
    parse_case(PL_TOOLS_COMMAND_R7B,
               "Sure.<|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", \"parameters\": " PARIS
               "},\n    {\"tool_call_id\": \"1\", \"tool_name\": \"get_time\", \"parameters\": {}}\n]<|END_ACTION|>",
               want);
    parse_case(PL_TOOLS_APERTUS,
               "Sure.<|tools_prefix|>[{\"get_weather\": " PARIS "}, {\"get_time\": {}}]<|tools_suffix|>", want);
    parse_case(PL_TOOLS_APERTUS, "<|tools_prefix|>[{\"get_time\": {}, \"get_weather\": {}}]<|tools_suffix|>", "BOTCH");
    parse_case(PL_TOOLS_APERTUS, "<|tools_prefix|>[{\"nope\": {}}]<|tools_suffix|>", "BOTCH");
    parse_case(PL_TOOLS_APRIEL, "<tool_calls>[{\"name\": \"get_time\", \"arguments\": {}}", "BOTCH");
    parse_case(PL_TOOLS_MISTRAL_NEMO, "[TOOL_CALLS][{\"name\": \"get_time\", \"arguments\": {}},]", "BOTCH");
    parse_case(PL_TOOLS_MISTRAL_NEMO, "[TOOL_CALLS]{\"name\": \"get_time\", \"arguments\": {}}", "BOTCH");
}

#define DS_CALLS_BEGIN "<\xef\xbd\x9ctool\xe2\x96\x81" "calls\xe2\x96\x81" "begin\xef\xbd\x9c>"
#define DS_CALLS_END "<\xef\xbd\x9ctool\xe2\x96\x81" "calls\xe2\x96\x81" "end\xef\xbd\x9c>"
#define DS_CALL_BEGIN "<\xef\xbd\x9ctool\xe2\x96\x81" "call\xe2\x96\x81" "begin\xef\xbd\x9c>"
#define DS_CALL_END "<\xef\xbd\x9ctool\xe2\x96\x81" "call\xe2\x96\x81" "end\xef\xbd\x9c>"
#define DS_SEP "<\xef\xbd\x9ctool\xe2\x96\x81sep\xef\xbd\x9c>"
#define DSML "\xef\xbd\x9c" "DSML\xef\xbd\x9c"

static void test_named(void) {
    const char *two = "-|" W PARIS "|get_time {}";
    parse_case(PL_TOOLS_MISTRAL, "[TOOL_CALLS]get_weather[ARGS]" PARIS "[TOOL_CALLS]get_time[ARGS]{}", two);
    parse_case(PL_TOOLS_MISTRAL_CALL_ID,
               "[TOOL_CALLS]get_weather[CALL_ID]abc123XYZ[ARGS]" PARIS "\n[TOOL_CALLS]get_time[CALL_ID]a1[ARGS]{}", two);
    parse_case(PL_TOOLS_MISTRAL, "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"", "BOTCH");
    parse_case(PL_TOOLS_MISTRAL, "[TOOL_CALLS]get_weather", "BOTCH");
    parse_case(PL_TOOLS_KIMI_K2,
               "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>" PARIS
               "<|tool_call_end|><|tool_call_begin|>functions.get_time:1<|tool_call_argument_begin|>{}"
               "<|tool_call_end|><|tool_calls_section_end|>",
               two);
    parse_case(PL_TOOLS_KIMI_K2,
               "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_time:0<|tool_call_argument_begin|>{}"
               "<|tool_call_end|>",
               "-|get_time {}");
    parse_case(PL_TOOLS_DEEPSEEK_R1,
               DS_CALLS_BEGIN DS_CALL_BEGIN "function" DS_SEP "get_weather\n```json\n" PARIS "\n```" DS_CALL_END "\n"
               DS_CALL_BEGIN "function" DS_SEP "get_time\n```json\n{}\n```" DS_CALL_END DS_CALLS_END,
               two);
    parse_case(PL_TOOLS_DEEPSEEK_V31,
               "Checking." DS_CALLS_BEGIN DS_CALL_BEGIN "get_weather" DS_SEP PARIS DS_CALL_END DS_CALL_BEGIN
               "get_time" DS_SEP "{}" DS_CALL_END DS_CALLS_END,
               "Checking.|" W PARIS "|get_time {}");
    parse_case(PL_TOOLS_DEEPSEEK_V31, DS_CALLS_BEGIN DS_CALL_BEGIN "get_weather" DS_SEP PARIS DS_CALLS_END, "BOTCH");
    parse_case(PL_TOOLS_FUNCTIONARY_V31, "<function=get_weather>" PARIS "</function><function=get_time>{}</function>",
               two);
    parse_case(PL_TOOLS_SOLAR,
               "<|tool_call:begin|>a1b2c3d4e5<|tool_call:name|>get_weather<|tool_call:args|>" PARIS
               "<|tool_call:end|>\n<|tool_call:begin|>zz<|tool_call:name|>get_time<|tool_call:args|>{}<|tool_call:end|>",
               two);
}

static void test_xml_families(void) {
    const char *want = "-|get_weather {\"city\": \"Paris\", \"days\": 3}|get_time {}";
    parse_case(PL_TOOLS_SEED_OSS,
               "<seed:tool_call>\n<function=get_weather>\n<parameter=city>Paris</parameter>\n<parameter=days>3"
               "</parameter>\n</function>\n</seed:tool_call><seed:tool_call>\n<function=get_time>\n</function>\n"
               "</seed:tool_call>",
               want);
    parse_case(PL_TOOLS_MINIMAX_M2,
               "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n"
               "<parameter name=\"days\">3</parameter>\n</invoke>\n<invoke name=\"get_time\">\n</invoke>\n"
               "</minimax:tool_call>",
               want);
    parse_case(PL_TOOLS_GLM,
               "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n<arg_key>days</arg_key>\n"
               "<arg_value>3</arg_value>\n</tool_call>\n<tool_call>get_time\n</tool_call>",
               want);
    parse_case(PL_TOOLS_GLM,
               "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value><arg_key>days</arg_key>"
               "<arg_value>3</arg_value></tool_call><tool_call>get_time</tool_call>",
               want);
    parse_case(PL_TOOLS_DSML_V32,
               "<" DSML "function_calls>\n<" DSML "invoke name=\"get_weather\">\n<" DSML
               "parameter name=\"city\" string=\"true\">Paris</" DSML "parameter>\n<" DSML
               "parameter name=\"days\" string=\"false\">3</" DSML "parameter>\n</" DSML "invoke>\n<" DSML
               "invoke name=\"get_time\">\n</" DSML "invoke>\n</" DSML "function_calls>",
               want);
    parse_case(PL_TOOLS_DSML_V4,
               "<" DSML "tool_calls>\n<" DSML "invoke name=\"get_time\">\n</" DSML "invoke>\n</" DSML "tool_calls>",
               "-|get_time {}");
    parse_case(PL_TOOLS_HY3,
               "<tool_calls:opensource>\n<tool_call:opensource>get_weather<tool_sep:opensource>\n"
               "<arg_key:opensource>city</arg_key:opensource>\n<arg_value:opensource>Paris</arg_value:opensource>\n"
               "<arg_key:opensource>days</arg_key:opensource>\n<arg_value:opensource>3</arg_value:opensource>\n"
               "</tool_call:opensource>\n<tool_call:opensource>get_time<tool_sep:opensource>\n"
               "</tool_call:opensource>\n</tool_calls:opensource>",
               want);
    parse_case(PL_TOOLS_MINICPM5,
               "<function name=\"get_weather\"><param name=\"city\">Paris</param><param name=\"days\">3</param>"
               "</function><function name=\"get_time\"></function>",
               want);
    parse_case(PL_TOOLS_GLM, "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris", "BOTCH");
}

/* Python calls: either quote, escapes, Python's words, nested literals,
 * a value of the wrong type taken as its text where strings are allowed */
/* Functionary v3.2: the prompt ends with ">>>", so the reply starts with
 * its first part's recipient: "all" for text, else a function's name */
static void test_functionary_v32(void) {
    const pl_tool_format f = PL_TOOLS_FUNCTIONARY_V32;
    CHECK_STR(pl_tools_trigger(f), "");
    parse_case(f, "get_weather\n" PARIS, "-|" W PARIS);
    parse_case(f, "get_weather\n" PARIS ">>>get_time\n{}", "-|" W PARIS "|get_time {}");
    parse_case(f, "all\nHello there", "Hello there");
    parse_case(f, "all\na >> b > c", "a >> b > c");
    parse_case(f, "all\nLet me check.\n>>>get_time\n{\"tz\": \"UTC\"}", "Let me check.|get_time {\"tz\": \"UTC\"}");
    parse_case(f, "get_time\n{}>>>all\nDone.", "Done.|get_time {}");
    parse_case(f, "all", "-");
    parse_case(f, "", "-");
    parse_case(f, "allow\n{}", "BOTCH");
    parse_case(f, "nope\n{}", "BOTCH");
    parse_case(f, "al", "BOTCH");
    parse_case(f, "get_time\n{", "BOTCH");
    parse_case(f, "get_time\n[1]", "BOTCH");
    parse_case(f, "all\nx >>>", "BOTCH");
}

static void test_python(void) {
    const pl_tool_format f = PL_TOOLS_LFM2;
    parse_case(f, "Sure.<|tool_call_start|>[get_weather(city=\"Paris\", days=3), get_time()]<|tool_call_end|>",
               "Sure.|get_weather {\"city\": \"Paris\", \"days\": 3}|get_time {}");
    parse_case(f,
               "<|tool_call_start|>[get_weather(city='It\\'s \\u00e9\\n', metric=True, note=None, opts={'a': [1, (2, 3)], "
               "\"b\": false}, temp=-1.5)]<|tool_call_end|> done",
               "done|get_weather {\"city\": \"It's \u00e9\\n\", \"metric\": true, \"note\": null, \"opts\": {\"a\": [1, "
               "[2, 3]], \"b\": false}, \"temp\": -1.5}");
    parse_case(f, "<|tool_call_start|>[get_weather(city=12)]<|tool_call_end|>", "-|get_weather {\"city\": \"12\"}");
    parse_case(f, "<|tool_call_start|>[get_weather(days='x')]<|tool_call_end|>", "BOTCH");
    parse_case(f, "<|tool_call_start|>[nope()]<|tool_call_end|>", "BOTCH");
    parse_case(f, "<|tool_call_start|>[get_time(tz=\"UTC\"]<|tool_call_end|>", "BOTCH");
    /* a bare word is no Python literal: as text, where strings are allowed */
    parse_case(f, "<|tool_call_start|>[get_time(tz=UTC)]<|tool_call_end|>", "-|get_time {\"tz\": \"UTC\"}");
}

/* ids: unique within a reply and across seeds; no tools: any name */
static void test_ids_and_untyped(void) {
    const char *reply = "<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>"
                        "<tool_call>{\"name\": \"b\", \"arguments\": {}}</tool_call>";
    pl_tool_parser *p1 = pl_tool_parser_new(PL_TOOLS_HERMES, NULL, 7), *p2 = pl_tool_parser_new(PL_TOOLS_HERMES, NULL, 8);
    pl_tool_parser_feed(p1, reply, strlen(reply), NULL, NULL);
    pl_tool_parser_feed(p2, reply, strlen(reply), NULL, NULL);
    CHECK(pl_tool_parser_finish(p1, NULL, NULL) && pl_tool_parser_finish(p2, NULL, NULL));
    CHECK(pl_tool_parser_ncalls(p1) == 2 && pl_tool_parser_ncalls(p2) == 2);
    const char *a0, *a1, *b0;
    pl_tool_parser_call(p1, 0, NULL, &a0, NULL);
    pl_tool_parser_call(p1, 1, NULL, &a1, NULL);
    pl_tool_parser_call(p2, 0, NULL, &b0, NULL);
    CHECK(strcmp(a0, a1) != 0 && strcmp(a0, b0) != 0);
    cJSON *arr = pl_tool_parser_calls_json(p1);
    char *s = cJSON_PrintUnformatted(arr);
    char want[256];
    snprintf(want, sizeof want,
             "[{\"id\":\"%s\",\"type\":\"function\",\"function\":{\"name\":\"a\",\"arguments\":\"{}\"}},{\"id\":\"%s\","
             "\"type\":\"function\",\"function\":{\"name\":\"b\",\"arguments\":\"{}\"}}]",
             a0, a1);
    CHECK_STR(s, want);
    CHECK(pl_tool_parser_content(p1) == NULL);
    free(s);
    cJSON_Delete(arr);
    pl_tool_parser_free(p1);
    pl_tool_parser_free(p2);

    /* botched: the whole reply, and the unsent tail, for the caller */
    const char *bad = "Hi. <tool_call>{\"name\": \"zz\"}</tool_call>";
    pl_tool_parser *p = pl_tool_parser_new(PL_TOOLS_HERMES, g_tools, 1);
    pl_tool_parser_feed(p, bad, strlen(bad), NULL, NULL);
    CHECK(!pl_tool_parser_finish(p, NULL, NULL));
    CHECK(strstr(pl_tool_parser_error(p), "unknown function 'zz'") != NULL);
    size_t n;
    const char *u = pl_tool_parser_unsent(p, &n);
    CHECK(n == strlen(bad) - 4 && strncmp(u, "<tool_call>", 11) == 0);
    pl_tool_parser_free(p);

    CHECK(pl_tool_parser_new(PL_TOOLS_NONE, NULL, 0) == NULL);
    CHECK(pl_tool_parser_new(PL_TOOLS_UNSUPPORTED, NULL, 0) == NULL);
}

/* ---- grammar ---------------------------------------------------------------- */

static char *grammar(pl_tool_format f, const char *only, bool parallel, char *err) {
    return pl_tools_grammar(f, g_tools, only, parallel, false, err, 256);
}

#define HAS(g, s) CHECK_MSG((g) && strstr((g), (s)), "grammar lacks %s:\n%s", s, (g) ? (g) : "(null)")

static void test_grammar(void) {
    char err[256];
    for (int f = PL_TOOLS_HERMES; f < PL_TOOLS_COUNT; f++) {
        char *g = grammar((pl_tool_format)f, NULL, true, err);
        CHECK_MSG(g != NULL, "%s: no grammar: %s", pl_tools_format_name((pl_tool_format)f), err);
        if (!g) continue;
        HAS(g, "root ::= ");
        HAS(g, "tc-any ::= tc-f0 | tc-f1");
        HAS(g, "tc-f0 ::= ");
        HAS(g, ")* ");
        /* the grammar starts with the trigger (lazy activation) */
        const char *trig = pl_tools_trigger((pl_tool_format)f);
        if (trig) {
            char q[80]; /* the trigger as a GBNF literal starts: quotes escaped */
            size_t k = 0;
            q[k++] = '"';
            for (const char *c = trig; *c && k + 3 < sizeof q; c++) {
                if (*c == '"') q[k++] = '\\';
                q[k++] = *c;
            }
            q[k] = 0;
            char *at = strstr(g, q);
            CHECK_MSG(at != NULL, "%s: the trigger %s is not in the grammar", pl_tools_format_name((pl_tool_format)f),
                      trig);
        }
        free(g);
    }
    char *g = grammar(PL_TOOLS_HERMES, NULL, false, err);
    HAS(g, "root ::= tc-call \n");
    HAS(g, "tc-call ::= \"<tool_call>\" \"\\n\" tc-any \"\\n</tool_call>\" \n");
    HAS(g, "tc-f0 ::= \"{\\\"name\\\": \\\"get_weather\\\", \\\"arguments\\\": \" t0-root \"}\" \n");
    HAS(g, "t0-root ::=");
    HAS(g, "t1-root ::=");
    free(g);
    g = grammar(PL_TOOLS_HERMES, "get_time", false, err);
    HAS(g, "tc-any ::= tc-f1 \n");
    CHECK(g && !strstr(g, "tc-f0"));
    free(g);
    g = grammar(PL_TOOLS_LLAMA3_JSON, NULL, false, err);
    HAS(g, "root ::= tc-any \n");
    HAS(g, "\\\"parameters\\\": \" t0-root");
    free(g);
    g = grammar(PL_TOOLS_MISTRAL_NEMO, NULL, true, err);
    HAS(g, "root ::= \"[TOOL_CALLS]\" \"[\" tc-any ( \", \" tc-any )* \"]\" \n");
    free(g);
    g = grammar(PL_TOOLS_KIMI_K2, NULL, true, err);
    HAS(g, "\"<|tool_call_begin|>\" \"functions.\" \"get_weather\" \":\" [0-9]+ \"<|tool_call_argument_begin|>\" "
           "t0-root \"<|tool_call_end|>\"");
    free(g);
    g = grammar(PL_TOOLS_QWEN_XML, NULL, false, err);
    HAS(g, "\"<function=\" \"get_weather\" \">\\n\" ( \"<parameter=\" \"city\" \">\\n\" tc-val \"\\n</parameter>\\n\" ) "
           "( \"<parameter=\" \"days\" \">\\n\" t0p1-root \"\\n</parameter>\\n\" )? ");
    HAS(g, "( \"<parameter=\" \"tz\" \">\\n\" ( \"UTC\" | \"CET\" ) \"\\n</parameter>\\n\" )? ");
    HAS(g, "tc-v0 ::= [^<] tc-v0 | \"<\" tc-v1 | \"\"\n");
    HAS(g, "tc-v11 ::= [^><] tc-v0 | \"<\" tc-v1 | \"\"\n");
    HAS(g, "t0p1-root ::=");
    free(g);
    g = grammar(PL_TOOLS_DSML_V32, NULL, false, err);
    HAS(g, "\"city\" \"\\\" string=\\\"true\\\">\" tc-val");
    HAS(g, "\"days\" \"\\\" string=\\\"false\\\">\" t0p1-root");
    free(g);

    /* refusals, each with its reason */
    CHECK(grammar(PL_TOOLS_HERMES, "nope", false, err) == NULL && strstr(err, "nope"));
    CHECK(pl_tools_grammar(PL_TOOLS_UNSUPPORTED, g_tools, NULL, false, false, err, sizeof err) == NULL);
    cJSON *bad = cJSON_Parse("[{\"type\":\"function\",\"function\":{\"name\":\"a b\"}}]");
    CHECK(pl_tools_grammar(PL_TOOLS_HERMES, bad, NULL, false, false, err, sizeof err) == NULL && strstr(err, "a b"));
    cJSON_Delete(bad);
    bad = cJSON_Parse("[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"parameters\":{\"type\":\"object\","
                      "\"properties\":{\"s\":{\"type\":\"string\",\"pattern\":\"^a$\"}}}}}]");
    CHECK(pl_tools_grammar(PL_TOOLS_QWEN_XML, bad, NULL, false, false, err, sizeof err) == NULL && strstr(err, "pattern"));
    cJSON_Delete(bad);
    bad = cJSON_Parse("[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"parameters\":{\"type\":\"object\","
                      "\"unsupportedKeyword\":1}}}]");
#ifndef HAVE_SCHEMA_COMPILER
    CHECK(pl_tools_grammar(PL_TOOLS_HERMES, bad, NULL, false, false, err, sizeof err) == NULL &&
          strstr(err, "unsupportedKeyword"));
#endif
    cJSON_Delete(bad);
    /* no parameters: an empty object */
    bad = cJSON_Parse("[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}]");
    g = pl_tools_grammar(PL_TOOLS_HERMES, bad, NULL, false, false, err, sizeof err);
    HAS(g, "t0-root ::= \"{\" [ \\t\\n]* \"}\"");
    free(g);
    cJSON_Delete(bad);
}

/* ---- the grammar engine agrees with the parser ------------------------------------
 * With src/grammar in the tree: each format's grammar (parallel) is parsed
 * by the engine and accepts a two-call reply in the format's canonical
 * text, which the parser reads as those two calls; the grammar without
 * parallel refuses it. */
#if defined(__has_include)
#if __has_include("grammar/grammar_match.h") && __has_include("grammar/json_schema.h")
#define HAVE_GRAMMAR_ENGINE 1
#include "grammar/gbnf.h"
#include "grammar/grammar_match.h"
#endif
#endif

#ifdef HAVE_GRAMMAR_ENGINE
#define A2 "{\"city\": \"Pa<ris\", \"days\": 3}"
#define J2(open, sep, close)                                                                                        \
    open "{\"name\": \"get_weather\", \"arguments\": " A2 "}" sep "{\"name\": \"get_time\", \"arguments\": {}}" close

static const struct {
    pl_tool_format f;
    const char *reply;
} CANON[] = {
    {PL_TOOLS_HERMES, J2("<tool_call>\n", "\n</tool_call>\n<tool_call>\n", "\n</tool_call>")},
    {PL_TOOLS_QWEN_XML, "<tool_call>\n<function=get_weather>\n<parameter=city>\nPa<ris\n</parameter>\n<parameter=days>\n3"
                        "\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=get_time>\n</function>\n"
                        "</tool_call>"},
    {PL_TOOLS_LLAMA3_JSON, "{\"name\": \"get_weather\", \"parameters\": " A2 "}\n{\"name\": \"get_time\", "
                           "\"parameters\": {}}"},
    {PL_TOOLS_MISTRAL, "[TOOL_CALLS]get_weather[ARGS]" A2 "[TOOL_CALLS]get_time[ARGS]{}"},
    {PL_TOOLS_MISTRAL_CALL_ID, "[TOOL_CALLS]get_weather[CALL_ID]abc123XYZ[ARGS]" A2
                               "[TOOL_CALLS]get_time[CALL_ID]abc123XYZ[ARGS]{}"},
    {PL_TOOLS_MISTRAL_NEMO, J2("[TOOL_CALLS][", ", ", "]")},
    {PL_TOOLS_GRANITE, J2("<|tool_call|>[", ", ", "]")},
    {PL_TOOLS_FIREFUNCTION, J2("functools[", ", ", "]")},
    {PL_TOOLS_APRIEL, J2("<tool_calls>[", ", ", "]</tool_calls>")},
    {PL_TOOLS_MINIMAX_M1, J2("<tool_calls>\n", "\n", "\n</tool_calls>")},
    {PL_TOOLS_NEMOTRON_V2, J2("<TOOLCALL>[", ", ", "]</TOOLCALL>")},
    {PL_TOOLS_KIMI_K2, "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>" A2
                       "<|tool_call_end|><|tool_call_begin|>functions.get_time:1<|tool_call_argument_begin|>{}"
                       "<|tool_call_end|><|tool_calls_section_end|>"},
    {PL_TOOLS_DEEPSEEK_R1, DS_CALLS_BEGIN DS_CALL_BEGIN "function" DS_SEP "get_weather\n```json\n" A2 "\n```" DS_CALL_END
                           "\n" DS_CALL_BEGIN "function" DS_SEP "get_time\n```json\n{}\n```" DS_CALL_END DS_CALLS_END},
    {PL_TOOLS_DEEPSEEK_V31, DS_CALLS_BEGIN DS_CALL_BEGIN "get_weather" DS_SEP A2 DS_CALL_END DS_CALL_BEGIN "get_time" DS_SEP
                            "{}" DS_CALL_END DS_CALLS_END},
    {PL_TOOLS_FUNCTIONARY_V31, "<function=get_weather>" A2 "</function><function=get_time>{}</function>"},
    {PL_TOOLS_SOLAR, "<|tool_call:begin|>a1b2c3d4e5<|tool_call:name|>get_weather<|tool_call:args|>" A2 "<|tool_call:end|>\n"
                     "<|tool_call:begin|>a1b2c3d4e5<|tool_call:name|>get_time<|tool_call:args|>{}<|tool_call:end|>"},
    {PL_TOOLS_SEED_OSS, "<seed:tool_call>\n<function=get_weather>\n<parameter=city>Pa<ris</parameter>\n<parameter=days>3"
                        "</parameter>\n</function>\n</seed:tool_call>\n<seed:tool_call>\n<function=get_time>\n</function>\n"
                        "</seed:tool_call>"},
    {PL_TOOLS_MINIMAX_M2, "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Pa<ris</parameter>\n"
                          "<parameter name=\"days\">3</parameter>\n</invoke>\n<invoke name=\"get_time\">\n</invoke>\n"
                          "</minimax:tool_call>"},
    {PL_TOOLS_GLM, "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Pa<ris</arg_value>\n<arg_key>days</arg_key>\n"
                   "<arg_value>3</arg_value>\n</tool_call>\n<tool_call>get_time\n</tool_call>"},
    {PL_TOOLS_DSML_V32, "<" DSML "function_calls>\n<" DSML "invoke name=\"get_weather\">\n<" DSML
                        "parameter name=\"city\" string=\"true\">Pa<ris</" DSML "parameter>\n<" DSML
                        "parameter name=\"days\" string=\"false\">3</" DSML "parameter>\n</" DSML "invoke>\n<" DSML
                        "invoke name=\"get_time\">\n</" DSML "invoke>\n</" DSML "function_calls>"},
    {PL_TOOLS_DSML_V4, "<" DSML "tool_calls>\n<" DSML "invoke name=\"get_weather\">\n<" DSML
                       "parameter name=\"city\" string=\"true\">Pa<ris</" DSML "parameter>\n<" DSML
                       "parameter name=\"days\" string=\"false\">3</" DSML "parameter>\n</" DSML "invoke>\n<" DSML
                       "invoke name=\"get_time\">\n</" DSML "invoke>\n</" DSML "tool_calls>"},
    {PL_TOOLS_HY3, "<tool_calls:opensource>\n<tool_call:opensource>get_weather<tool_sep:opensource>\n"
                   "<arg_key:opensource>city</arg_key:opensource>\n<arg_value:opensource>Pa<ris</arg_value:opensource>\n"
                   "<arg_key:opensource>days</arg_key:opensource>\n<arg_value:opensource>3</arg_value:opensource>\n"
                   "</tool_call:opensource>\n<tool_call:opensource>get_time<tool_sep:opensource>\n"
                   "</tool_call:opensource>\n</tool_calls:opensource>"},
    {PL_TOOLS_COMMAND_R7B, "<|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", \"parameters\": " A2
                           "}, {\"tool_call_id\": \"1\", \"tool_name\": \"get_time\", \"parameters\": {}}]<|END_ACTION|>"},
    {PL_TOOLS_APERTUS, "<|tools_prefix|>[{\"get_weather\": " A2 "}, {\"get_time\": {}}]<|tools_suffix|>"},
    {PL_TOOLS_LFM2, "<|tool_call_start|>[get_weather(city=\"Pa<ris\", days=3), get_time()]<|tool_call_end|>"},
    {PL_TOOLS_MINICPM5, "<function name=\"get_weather\"><param name=\"city\">Pa<ris</param><param name=\"days\">3</param>"
                        "</function><function name=\"get_time\"></function>"},
    {PL_TOOLS_FUNCTIONARY_V32, "get_weather\n" A2 ">>>get_time\n{}"},
};

static bool grammar_accepts_as(pl_tool_format f, bool parallel, bool for_auto, const char *reply) {
    char err[256];
    char *text = pl_tools_grammar(f, g_tools, NULL, parallel, for_auto, err, sizeof err);
    CHECK_MSG(text != NULL, "%s: no grammar: %s", pl_tools_format_name(f), err);
    if (!text) return false;
    pl_gbnf g;
    bool ok = pl_gbnf_parse(text, "root", &g, err, sizeof err);
    CHECK_MSG(ok, "%s: the engine refuses the grammar: %s\n%s", pl_tools_format_name(f), err, text);
    bool acc = false;
    if (ok) {
        pl_gmatch *m = pl_gmatch_new(&g);
        uint32_t st = pl_gmatch_feed(m, pl_gmatch_start(m), (const uint8_t *)reply, strlen(reply));
        acc = st != PL_GM_DEAD && pl_gmatch_accepting(m, st);
        pl_gmatch_free(m);
        pl_gbnf_free(&g);
    }
    free(text);
    return acc;
}

static bool grammar_accepts(pl_tool_format f, bool parallel, const char *reply) {
    return grammar_accepts_as(f, parallel, false, reply);
}

/* tool_choice auto where the prompt opens the reply's first part: text or
 * calls from the first token; the forcing grammar takes calls only */
static void test_grammar_auto_from_start(void) {
    const pl_tool_format f = PL_TOOLS_FUNCTIONARY_V32;
    static const char *const yes[] = {"all\nHello", "all\n", "all\na > b >> c >", "all\nOK>>>get_time\n{}",
                                      "get_time\n{}", "get_time\n{}>>>get_time\n{}"};
    static const char *const no[] = {"Hello", "all\na >>> b", "all\nOK>>>nope\n{}", "all", "get_time {}"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        CHECK_MSG(grammar_accepts_as(f, true, true, yes[i]), "functionary-v3.2 auto refuses '%s'", yes[i]);
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        CHECK_MSG(!grammar_accepts_as(f, true, true, no[i]), "functionary-v3.2 auto accepts '%s'", no[i]);
    CHECK(!grammar_accepts_as(f, true, false, "all\nHello"));
    CHECK(!grammar_accepts_as(f, false, true, "get_time\n{}>>>get_time\n{}"));
    /* elsewhere the auto grammar is the forcing one (activated at the trigger) */
    CHECK(grammar_accepts_as(PL_TOOLS_HERMES, true, true,
                             "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>"));
}

static void test_grammar_engine(void) {
    const char *want = "-|get_weather {\"city\": \"Pa<ris\", \"days\": 3}|get_time {}";
    CHECK(sizeof CANON / sizeof CANON[0] == PL_TOOLS_COUNT - PL_TOOLS_HERMES);
    for (size_t i = 0; i < sizeof CANON / sizeof CANON[0]; i++) {
        pl_tool_format f = CANON[i].f;
        /* Llama 3's templates take one call per message (they raise on
         * more): its grammar never allows two, parallel or not */
        const bool single = f == PL_TOOLS_LLAMA3_JSON;
        CHECK_MSG(grammar_accepts(f, true, CANON[i].reply) == !single, "%s: the parallel grammar %s two calls",
                  pl_tools_format_name(f), single ? "accepts" : "refuses");
        CHECK_MSG(!grammar_accepts(f, false, CANON[i].reply), "%s: one-call grammar accepts two calls",
                  pl_tools_format_name(f));
        rec r;
        char *got = run(f, g_tools, CANON[i].reply, NULL, 0, 1, &r);
        rec_free(&r);
        CHECK_MSG(strcmp(got, want) == 0, "%s: parsed '%s'", pl_tools_format_name(f), got);
        free(got);
    }
}
#endif

/* ---- the template -> format table --------------------------------------------- */

static const struct {
    const char *file, *format;
} TABLE[] = {
    {"Apertus-8B-Instruct", "apertus"},
    {"Apriel-1.6-15b-Thinker-fixed", "apriel"},
    {"Bielik-11B-v3.0-Instruct", "hermes"},
    {"ByteDance-Seed-OSS", "seed-oss"},
    {"Cohere2MoE", "command-r7b"},
    {"CohereForAI-c4ai-command-r-plus-tool_use", "unsupported: command-r-plus"},
    {"CohereForAI-c4ai-command-r7b-12-2024-tool_use", "command-r7b"},
    {"GLM-4.6", "glm"},
    {"GLM-4.7-Flash", "glm"},
    {"GigaChat3-10B-A1.8B", "unsupported: gigachat"},
    {"GigaChat3.1-10B-A1.8B", "unsupported: gigachat"},
    {"HuggingFaceTB-SmolLM3-3B", "none"},
    {"Kimi-K2-Instruct", "kimi-k2"},
    {"Kimi-K2-Thinking", "kimi-k2"},
    {"Kimi-K3", "unsupported: kimi-k3"},
    {"LFM2-8B-A1B", "lfm2"},
    {"LFM2.5-8B-A1B", "lfm2"},
    {"LFM2.5-Instruct", "lfm2"},
    {"MiMo-VL", "hermes"},
    {"MiniMax-M1", "minimax-m1"},
    {"MiniMax-M2", "minimax-m2"},
    {"MiniMax-M3", "unsupported: minimax-m3"},
    {"Mistral-Small-3.2-24B-Instruct-2506", "mistral-call-id"},
    {"NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "qwen-xml"},
    {"NVIDIA-Nemotron-Nano-v2", "nemotron-v2"},
    {"NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use", "hermes"},
    {"NousResearch-Hermes-3-Llama-3.1-8B-tool_use", "hermes"},
    {"Qwen-QwQ-32B", "hermes"},
    {"Qwen-Qwen2.5-7B-Instruct", "hermes"},
    {"Qwen-Qwen3-0.6B", "hermes"},
    {"Qwen3-Coder", "qwen-xml"},
    {"Qwen3.5-4B", "qwen-xml"},
    {"Reka-Edge", "hermes"},
    {"StepFun3.5-Flash", "qwen-xml"},
    {"deepseek-ai-DeepSeek-R1-Distill-Llama-8B", "deepseek-r1 (lists no tools)"},
    {"deepseek-ai-DeepSeek-R1-Distill-Qwen-32B", "deepseek-r1 (lists no tools)"},
    {"deepseek-ai-DeepSeek-V3.1", "deepseek-v3.1 (lists no tools)"},
    {"deepseek-ai-DeepSeek-V3.2", "deepseek-dsml"},
    {"deepseek-ai-DeepSeek-V4-Flash-0731", "deepseek-v4-dsml"},
    {"deepseek-ai-DeepSeek-V4", "deepseek-v4-dsml"},
    {"fireworks-ai-llama-3-firefunction-v2", "firefunction"},
    {"google-gemma-2-2b-it", "none"},
    {"google-gemma-4-31B-it-interleaved", "unsupported: gemma4"},
    {"google-gemma-4-31B-it", "unsupported: gemma4"},
    {"ibm-granite-granite-3.3-2B-Instruct", "granite"},
    {"ibm-granite-granite-4.0", "hermes"},
    {"ibm-granite-granite-4.1", "hermes"},
    {"llama-cpp-deepseek-r1", "deepseek-r1"},
    {"llama-cpp-rwkv-world", "none"},
    {"meetkai-functionary-medium-v3.1", "functionary-v3.1"},
    {"meetkai-functionary-medium-v3.2", "functionary-v3.2"},
    {"meta-llama-Llama-3.1-8B-Instruct", "llama3-json"},
    {"meta-llama-Llama-3.2-3B-Instruct", "llama3-json"},
    {"meta-llama-Llama-3.3-70B-Instruct", "llama3-json"},
    {"microsoft-Phi-3.5-mini-instruct", "none"},
    {"mistralai-Ministral-3-14B-Reasoning-2512", "mistral"},
    {"mistralai-Mistral-Nemo-Instruct-2407", "mistral-nemo"},
    {"moonshotai-Kimi-K2", "kimi-k2"},
    {"muse-glimmer", "unsupported: muse-glimmer"},
    {"openai-gpt-oss-120b", "unsupported: gpt-oss (harmony)"},
    {"openbmb-MiniCPM5-1B", "minicpm5"},
    {"poolside-Laguna-S-2.1", "glm"},
    {"poolside-Laguna-XS-2.1", "glm"},
    {"poolside-Laguna-XS.2", "glm"},
    {"tencent-Hy3", "hy3"},
    {"unsloth-Apriel-1.5", "apriel"},
    {"unsloth-mistral-Devstral-Small-2507", "mistral"},
    {"upstage-Solar-Open-100B", "solar-open"},
};

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = 0;
    fclose(f);
    return s;
}

static void test_table(void) {
    char dir[1024];
    const char *od = getenv("PL_ORACLE_DIR");
    if (od && *od) {
        snprintf(dir, sizeof dir, "%s/src/models/templates", od);
    } else { /* where scripts/install-oracle.sh puts it */
        const char *cache = getenv("POCKETLLM_CACHE"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
        if (cache && *cache) snprintf(dir, sizeof dir, "%s/llama.cpp-v0.4.0/src/models/templates", cache);
        else if (xdg && *xdg) snprintf(dir, sizeof dir, "%s/pocketllm/llama.cpp-v0.4.0/src/models/templates", xdg);
        else snprintf(dir, sizeof dir, "%s/.cache/pocketllm/llama.cpp-v0.4.0/src/models/templates", home ? home : "");
    }
    DIR *d = opendir(dir);
    if (!d) {
        const char *no = getenv("POCKETLLM_NO_ORACLE");
        if (no && strcmp(no, "1") == 0) {
            fprintf(stderr, "SKIPPED: POCKETLLM_NO_ORACLE=1 -- the template table was not checked (no %s)\n", dir);
            return;
        }
        CHECK_MSG(0, "no chat templates at '%s' (set PL_ORACLE_DIR, or run scripts/install-oracle.sh)", dir);
        return;
    }
    int seen = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 7 || strcmp(e->d_name + n - 6, ".jinja") != 0) continue;
        seen++;
        char stem[256];
        snprintf(stem, sizeof stem, "%.*s", (int)(n - 6), e->d_name);
        const char *want = NULL;
        for (size_t i = 0; i < sizeof TABLE / sizeof TABLE[0]; i++)
            if (strcmp(TABLE[i].file, stem) == 0) want = TABLE[i].format;
        char path[1400];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        char *src = read_file(path);
        CHECK_MSG(src != NULL, "cannot read %s", path);
        if (!src) continue;
        const char *fam;
        pl_tool_format f = pl_tools_detect(src, &fam);
        char got[160];
        snprintf(got, sizeof got, "%s%s%s", f == PL_TOOLS_UNSUPPORTED ? "unsupported: " : "", fam,
                 f > PL_TOOLS_UNSUPPORTED && !pl_tools_template_lists_tools(src) ? " (lists no tools)" : "");
        CHECK_MSG(want != NULL, "template %s (detected: %s) is not in the table", stem, got);
        if (want) CHECK_MSG(strcmp(got, want) == 0, "template %s: detected '%s', the table says '%s'", stem, got, want);
        if (f > PL_TOOLS_UNSUPPORTED) CHECK(strcmp(fam, pl_tools_format_name(f)) == 0);
        free(src);
    }
    closedir(d);
    CHECK_MSG(seen == (int)(sizeof TABLE / sizeof TABLE[0]), "%d templates in %s, %zu in the table", seen, dir,
              sizeof TABLE / sizeof TABLE[0]);
}

static void test_detect_basics(void) {
    const char *fam;
    CHECK(pl_tools_detect(NULL, &fam) == PL_TOOLS_NONE && strcmp(fam, "none") == 0);
    CHECK(pl_tools_detect("{{ messages }}", &fam) == PL_TOOLS_NONE);
    CHECK(pl_tools_detect("{% if tools %}call tools somehow{% endif %}", &fam) == PL_TOOLS_UNSUPPORTED);
    CHECK(pl_tools_detect("{% if tools %}<tool_call>{\"name\": x}</tool_call>{% endif %}", &fam) == PL_TOOLS_HERMES);
    CHECK_STR(pl_tools_trigger(PL_TOOLS_HERMES), "<tool_call>");
    CHECK_STR(pl_tools_trigger(PL_TOOLS_QWEN_XML), "<tool_call>");
    CHECK_STR(pl_tools_trigger(PL_TOOLS_MISTRAL), "[TOOL_CALLS]");
    CHECK(pl_tools_trigger(PL_TOOLS_LLAMA3_JSON) == NULL);
    CHECK(pl_tools_trigger(PL_TOOLS_NONE) == NULL && pl_tools_trigger(PL_TOOLS_UNSUPPORTED) == NULL);
}

int main(void) {
    g_tools = cJSON_Parse(TOOLS);
    CHECK(g_tools != NULL);
    test_detect_basics();
    test_hermes();
    test_qwen_xml();
    test_llama3();
    test_json_lists();
    test_named();
    test_xml_families();
    test_python();
    test_functionary_v32();
    test_ids_and_untyped();
    test_grammar();
#ifdef HAVE_GRAMMAR_ENGINE
    test_grammar_engine();
    test_grammar_auto_from_start();
#else
    fprintf(stderr, "(src/grammar is not in this tree: the grammars were not run through the engine)\n");
#endif
    test_table();
    cJSON_Delete(g_tools);
    TEST_DONE();
}
