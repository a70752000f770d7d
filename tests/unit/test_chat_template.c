/*
 * test_chat_template.c -- the chat-template API and the interpreter's
 * guard rails: refusals at load (construct named, with line and column),
 * syntax and render errors with positions, the limits that stop runaway
 * templates, the variables the API passes (structs and JSON, HF's
 * tools=None/documents=None, enable_thinking only when set), bad input,
 * and the <think> reasoning split.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chat/jinja.h"
#include "pltest.h"
#include "pocketllm.h"

/* Parse; the status, and the message in msg. */
static pocketllm_status load(const char *src, char *msg, size_t cap) {
    pocketllm_chat_template *t = NULL;
    pocketllm_status st = pocketllm_chat_template_new(src, strlen(src), &t);
    snprintf(msg, cap, "%s", st == POCKETLLM_OK ? "" : pocketllm_last_error());
    pocketllm_chat_template_free(t);
    return st;
}

static void refused(const char *src, const char *what, const char *where) {
    char msg[1024];
    pocketllm_status st = load(src, msg, sizeof msg);
    CHECK_MSG(st == POCKETLLM_ERR_UNSUPPORTED, "'%s' should be refused, got status %d (%s)", src, st, msg);
    CHECK_MSG(strstr(msg, what) != NULL, "refusal of '%s' does not name '%s': %s", src, what, msg);
    CHECK_MSG(strstr(msg, where) != NULL, "refusal of '%s' does not say '%s': %s", src, where, msg);
}

static void syntax_error(const char *src, const char *where) {
    char msg[1024];
    pocketllm_status st = load(src, msg, sizeof msg);
    CHECK_MSG(st == POCKETLLM_ERR_FORMAT, "'%s' should be a syntax error, got status %d (%s)", src, st, msg);
    CHECK_MSG(strstr(msg, where) != NULL, "error for '%s' does not say '%s': %s", src, where, msg);
}

/* Render with JSON messages; returns the status, output in *out. */
static pocketllm_status render(const char *src, const char *msgs, const pocketllm_chat_options *o, char **out) {
    pocketllm_chat_template *t = NULL;
    *out = NULL;
    pocketllm_status st = pocketllm_chat_template_new(src, strlen(src), &t);
    if (st != POCKETLLM_OK) return st;
    size_t len;
    st = pocketllm_chat_render_json(t, msgs, o, out, &len);
    if (st == POCKETLLM_OK) CHECK(len == strlen(*out));
    pocketllm_chat_template_free(t);
    return st;
}

static void renders(const char *src, const char *msgs, const pocketllm_chat_options *o, const char *want) {
    char *out;
    pocketllm_status st = render(src, msgs, o, &out);
    CHECK_MSG(st == POCKETLLM_OK, "'%s' failed: %s", src, pocketllm_last_error());
    if (st == POCKETLLM_OK) CHECK_MSG(strcmp(out, want) == 0, "'%s'\n  want '%s'\n  got  '%s'", src, want, out);
    pocketllm_chat_free(out);
}

static void render_fails(const char *src, const char *msgs, const pocketllm_chat_options *o, const char *what) {
    char *out;
    pocketllm_status st = render(src, msgs, o, &out);
    CHECK_MSG(st != POCKETLLM_OK, "'%s' should fail, rendered '%s'", src, out ? out : "");
    CHECK_MSG(strstr(pocketllm_last_error(), what) != NULL, "error of '%s' lacks '%s': %s", src, what,
              pocketllm_last_error());
    pocketllm_chat_free(out);
}

static void test_refusals(void) {
    refused("a\n  {% include 'x.jinja' %}", "{% include %}", "line 2, column 6");
    refused("{% extends 'base' %}", "{% extends %}", "line 1, column 4");
    refused("{% block b %}{% endblock %}", "{% block %}", "line 1");
    refused("{% import 'm' as m %}", "{% import %}", "line 1");
    refused("{% call m() %}x{% endcall %}", "{% call %}", "line 1");
    refused("{% autoescape true %}{% endautoescape %}", "{% autoescape %}", "line 1");
    refused("{{ items|groupby('a') }}", "filter 'groupby'", "line 1, column 10");
    refused("{{ x|wordwrap(5) }}", "filter 'wordwrap'", "line 1");
    refused("{{ s.encode('utf-8') }}", ".encode()", "line 1");
    refused("{{ s.translate(t) }}", ".translate()", "line 1");
    refused("{{ 1.5.hex() }}", ".hex()", "line 1");
    refused("{{ lipsum() }}", "lipsum()", "line 1");
    refused("{{ cycler('a') }}", "cycler()", "line 1");
    refused("{% for x in y recursive %}{{ loop(x) }}{% endfor %}", "recursive for loops", "line 1");
    refused("{{ f(*args) }}", "*args", "line 1");
    refused("{% for x in y %}{% set b %}{% break %}{% endset %}{% endfor %}", "{% break %} inside a {% set %}", "line 1, column 31");
    refused("{{ caller() }}", "caller", "line 1");
    refused("{{ café }}", "non-ASCII identifier", "line 1");
    refused("{{ '\\ud800' }}", "lone surrogate", "line 1");
    refused("{{ '\\N{BULLET}' }}", "named Unicode escapes", "line 1");
    refused("{{ 99999999999999999999 }}", "larger than 2**63-1", "line 1");
    /* nesting beyond what the parser recurses into */
    char deep[2000];
    size_t n = 0;
    n += (size_t)snprintf(deep + n, sizeof deep - n, "{{ ");
    for (int i = 0; i < 300; i++) deep[n++] = '(';
    deep[n++] = '1';
    for (int i = 0; i < 300; i++) deep[n++] = ')';
    snprintf(deep + n, sizeof deep - n, " }}");
    refused(deep, "brackets nested more than 256 deep", "line 1");
}

static void test_syntax_errors(void) {
    syntax_error("line one\nline two {% if x %}\n{{ 1 + }}", "line 3, column 8");
    syntax_error("{% for x in y %}", "line 1");
    syntax_error("\n\n{% endfor %}", "line 3, column 4");
    syntax_error("{{ x", "unexpected end of template");
    syntax_error("{# unclosed", "missing end of comment tag");
    syntax_error("{% break %}", "'break' outside loop");
    syntax_error("{% macro m(a=1, b) %}{% endmacro %}", "non-default argument follows default argument");
    syntax_error("{{ x|nosuchfilter }}", "No filter named 'nosuchfilter'.");
    syntax_error("{{ 'abc }}", "unexpected char");
    syntax_error("{% nosuchtag %}", "Encountered unknown tag 'nosuchtag'.");
    /* invalid UTF-8 in the template itself */
    char msg[512];
    CHECK(load("ok \xff bad", msg, sizeof msg) == POCKETLLM_ERR_FORMAT);
    CHECK(strstr(msg, "invalid UTF-8 at byte 3") != NULL);
    /* an empty template renders to nothing */
    CHECK(load("", msg, sizeof msg) == POCKETLLM_OK);
}

static void test_render_errors(void) {
    pocketllm_chat_options o = pocketllm_chat_default_options();
    render_fails("a\n{% if messages %}{{ raise_exception('Conversation roles must alternate') }}{% endif %}",
                 "[{\"role\":\"user\",\"content\":\"x\"}]", &o, "line 2, column 21: raise_exception: Conversation roles");
    render_fails("{{ messages[0].nope.deeper }}", "[{\"role\":\"user\"}]", &o, "'dict object' has no attribute 'nope'");
    render_fails("{{ 1 + 'a' }}", "[]", &o, "unsupported operand");
    render_fails("{{ x|nosuch if true }}", "[]", &o, "No filter named 'nosuch' found.");
    render_fails("{% set l = [] %}{{ l.append(1) }}", "[]", &o, "access to attribute 'append' of 'list' object is unsafe");
    render_fails("{{ d.update }}{{ d.update({}) }}", "[]", &o, "undefined");
}

static void test_limits(void) {
    pocketllm_chat_options o = pocketllm_chat_default_options();
    /* recursion stops at the depth limit */
    render_fails("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", "[]", &o, "deep (limit)");
    /* huge strings stop at the memory limit, long output at the output limit */
    render_fails("{{ 'x' * 1000000000 }}", "[]", &o, "memory limit");
    render_fails("{% for i in range(100000) %}{{ 'y' * 1000 }}{% endfor %}", "[]", &o, "longer than");
    /* ranges beyond the sandbox's MAX_RANGE */
    render_fails("{{ range(200000)|length }}", "[]", &o, "Range too big");

    /* the internal API's own limits are honoured; a runaway loop stops at
     * the step limit (the public API's is 200 million steps) */
    pl_jinja_template *t;
    const char *runaway = "{% for a in range(100000) %}{% for b in range(100000) %}{{ a }}{% endfor %}{% endfor %}";
    CHECK(pl_jinja_parse(runaway, strlen(runaway), &t) == POCKETLLM_OK);
    pl_jinja_limits small = pl_jinja_default_limits();
    small.max_steps = 1000000;
    pl_jinja_ctx *rx = pl_jinja_ctx_new(&small);
    char *rout = NULL;
    size_t rlen;
    CHECK(pl_jinja_render(rx, t, &rout, &rlen) == POCKETLLM_ERR_UNSUPPORTED);
    CHECK(strstr(pocketllm_last_error(), "more than 1000000 steps (limit)") != NULL);
    CHECK(rout == NULL);
    pl_jinja_ctx_free(rx);
    pl_jinja_template_free(t);
    const char *src = "{% for i in range(10) %}{{ i }}{% endfor %}";
    CHECK(pl_jinja_parse(src, strlen(src), &t) == POCKETLLM_OK);
    pl_jinja_limits lim = pl_jinja_default_limits();
    lim.max_steps = 20;
    pl_jinja_ctx *x = pl_jinja_ctx_new(&lim);
    char *out = NULL;
    size_t len;
    CHECK(pl_jinja_render(x, t, &out, &len) == POCKETLLM_ERR_UNSUPPORTED);
    CHECK(out == NULL);
    pl_jinja_ctx_free(x);
    lim = pl_jinja_default_limits();
    lim.max_output = 5;
    x = pl_jinja_ctx_new(&lim);
    CHECK(pl_jinja_render(x, t, &out, &len) == POCKETLLM_ERR_UNSUPPORTED);
    pl_jinja_ctx_free(x);
    lim.max_output = 10;
    x = pl_jinja_ctx_new(&lim);
    CHECK(pl_jinja_render(x, t, &out, &len) == POCKETLLM_OK);
    CHECK(out && strcmp(out, "0123456789") == 0);
    free(out);
    pl_jinja_ctx_free(x);
    pl_jinja_template_free(t);
}

static void test_variables(void) {
    pocketllm_chat_options o = pocketllm_chat_default_options();
    /* HF always passes tools and documents (None when absent) */
    renders("{{ tools is defined }}/{{ tools is none }}/{{ documents is none }}/{{ add_generation_prompt }}/"
            "{{ enable_thinking is defined }}/{{ bos_token is defined }}",
            "[]", &o, "True/True/True/False/False/False");
    o.add_generation_prompt = 1;
    o.enable_thinking = 0;
    o.bos_token = "<s>";
    o.eos_token = "</s>";
    o.tools_json = "[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}]";
    o.extra_json = "{\"reasoning_effort\":\"high\",\"n\":2.0}";
    renders("{{ add_generation_prompt }}/{{ enable_thinking }}/{{ bos_token }}{{ eos_token }}/"
            "{{ tools[0].function.name }}/{{ reasoning_effort }}/{{ n }}",
            "[]", &o, "True/False/<s></s>/f/high/2.0");
    o.enable_thinking = 1;
    renders("{{ enable_thinking }}", "[]", &o, "True");
    /* strftime_now at a fixed time (local time of the process: set TZ) */
    o.now = 86400 * 365; /* 1971-01-01 00:00:00 UTC */
    renders("{{ strftime_now('%Y-%m-%d %H:%M') }}", "[]", &o, "1971-01-01 00:00");

    /* messages from structs: role and content always, the rest when set */
    pocketllm_chat_template *t;
    const char *src = "{% for m in messages %}{{ m|tojson }}\n{% endfor %}";
    CHECK(pocketllm_chat_template_new(src, strlen(src), &t) == POCKETLLM_OK);
    pocketllm_chat_message msgs[3] = {
        {.role = "system", .content = "Be brief."},
        {.role = "assistant", .content = NULL, .reasoning_content = "hmm",
         .tool_calls_json = "[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":{\"a\":1}}}]"},
        {.role = "tool", .content = "42", .tool_call_id = "c1", .name = "f"},
    };
    pocketllm_chat_options d = pocketllm_chat_default_options();
    char *out;
    size_t len;
    CHECK(pocketllm_chat_render(t, msgs, 3, &d, &out, &len) == POCKETLLM_OK);
    const char *want =
        "{\"role\": \"system\", \"content\": \"Be brief.\"}\n"
        "{\"role\": \"assistant\", \"content\": null, \"reasoning_content\": \"hmm\", \"tool_calls\": [{\"id\": \"c1\", "
        "\"type\": \"function\", \"function\": {\"name\": \"f\", \"arguments\": {\"a\": 1}}}]}\n"
        "{\"role\": \"tool\", \"content\": \"42\", \"tool_call_id\": \"c1\", \"name\": \"f\"}\n";
    CHECK_MSG(out && strcmp(out, want) == 0, "got '%s'", out ? out : "(null)");
    pocketllm_chat_free(out);

    /* bad input: a clear error, never a crash */
    pocketllm_chat_message bad_utf8 = {.role = "user", .content = "caf\xc3"};
    CHECK(pocketllm_chat_render(t, &bad_utf8, 1, &d, &out, &len) != POCKETLLM_OK);
    CHECK(strstr(pocketllm_last_error(), "invalid UTF-8") != NULL);
    pocketllm_chat_message no_role = {.content = "x"};
    CHECK(pocketllm_chat_render(t, &no_role, 1, &d, &out, &len) != POCKETLLM_OK);
    pocketllm_chat_message bad_calls = {.role = "assistant", .tool_calls_json = "[{\"id\": }]"};
    CHECK(pocketllm_chat_render(t, &bad_calls, 1, &d, &out, &len) != POCKETLLM_OK);
    CHECK(strstr(pocketllm_last_error(), "tool_calls: invalid JSON") != NULL);
    CHECK(pocketllm_chat_render_json(t, "{\"role\":\"user\"}", &d, &out, &len) != POCKETLLM_OK);
    CHECK(strstr(pocketllm_last_error(), "expected a JSON array") != NULL);
    CHECK(pocketllm_chat_render_json(t, "[1, 2", &d, &out, &len) != POCKETLLM_OK);
    CHECK(pocketllm_chat_render_json(t, "[\"\\ud800\"]", &d, &out, &len) != POCKETLLM_OK);
    CHECK(pocketllm_chat_render_json(t, "[99999999999999999999]", &d, &out, &len) != POCKETLLM_OK);
    d.tools_json = "{}";
    CHECK(pocketllm_chat_render_json(t, "[]", &d, &out, &len) != POCKETLLM_OK);
    d = pocketllm_chat_default_options();
    d.extra_json = "[]";
    CHECK(pocketllm_chat_render_json(t, "[]", &d, &out, &len) != POCKETLLM_OK);
    CHECK(pocketllm_chat_render(NULL, msgs, 1, &d, &out, &len) == POCKETLLM_ERR_INVALID_ARGUMENT);
    pocketllm_chat_template_free(t);
    pocketllm_chat_template *none = NULL;
    CHECK(pocketllm_chat_template_new(NULL, 3, &none) == POCKETLLM_ERR_INVALID_ARGUMENT && none == NULL);
    CHECK(pocketllm_chat_template_new("x", 1, NULL) == POCKETLLM_ERR_INVALID_ARGUMENT);
    /* JSON numbers keep Python's int/float distinction */
    renders("{{ messages }}", "[1, 1.0, 1e2, -0, 2.5e-7, true, null, \"\\u00e9\\ud83d\\ude00\"]", &o,
            "[1, 1.0, 100.0, 0, 2.5e-07, True, None, 'é😀']");
}

static void split(const char *tmpl, const char *prompt, const char *text, const char *content, const char *reasoning) {
    pocketllm_chat_template *t = NULL;
    if (tmpl) CHECK(pocketllm_chat_template_new(tmpl, strlen(tmpl), &t) == POCKETLLM_OK);
    pocketllm_chat_split s;
    CHECK(pocketllm_chat_split_reasoning(t, prompt, text, strlen(text), &s) == POCKETLLM_OK);
    CHECK_MSG(strcmp(s.content, content) == 0, "split of '%s': content '%s', want '%s'", text, s.content, content);
    if (reasoning) {
        CHECK_MSG(s.has_reasoning && s.reasoning && strcmp(s.reasoning, reasoning) == 0,
                  "split of '%s': reasoning '%s', want '%s'", text, s.reasoning ? s.reasoning : "(none)", reasoning);
        CHECK(s.reasoning_len == strlen(reasoning));
    } else {
        CHECK_MSG(!s.has_reasoning && !s.reasoning, "split of '%s': unexpected reasoning", text);
    }
    CHECK(s.content_len == strlen(content));
    pocketllm_chat_split_free(&s);
    pocketllm_chat_template_free(t);
}

static void test_split(void) {
    const char *qwen = "{{ '<think>\\n' }}{{ '</think>' }}";
    split(qwen, NULL, "<think>\nLet me think.\n</think>\n\nThe answer is 4.", "The answer is 4.", "Let me think.");
    split(qwen, NULL, "The answer is 4.", "The answer is 4.", NULL);
    split(qwen, NULL, "<think>\n\n</think>\n\nHi", "Hi", "");
    /* generation stopped inside the think block */
    split(qwen, NULL, "<think>\npartial thoughts", "", "partial thoughts");
    /* the prompt opened the block (DeepSeek-R1, Qwen3 thinking): no opening tag in the text */
    split(qwen, "<|im_start|>assistant\n<think>\n", "still thinking", "", "still thinking");
    split(qwen, "<|im_start|>assistant\n<think>\n", "thought\n</think>\n\nanswer", "answer", "thought");
    /* a prompt whose think block is closed (enable_thinking=false) */
    split(qwen, "<think>\n\n</think>\n\n", "plain answer", "plain answer", NULL);
    /* the template's own rule: reasoning before the first </think>, content after the last */
    split(qwen, NULL, "<think>a</think>b</think>c", "c", "a");
    /* templates without think tags: everything is content */
    split("{{ messages }}", NULL, "<think>x</think>y", "<think>x</think>y", NULL);
    split(NULL, NULL, "<think>x</think>y", "y", "x");
    pocketllm_chat_split s;
    CHECK(pocketllm_chat_split_reasoning(NULL, NULL, NULL, 0, &s) == POCKETLLM_OK);
    CHECK(s.content && s.content_len == 0);
    pocketllm_chat_split_free(&s);
    CHECK(pocketllm_chat_split_reasoning(NULL, NULL, NULL, 3, &s) == POCKETLLM_ERR_INVALID_ARGUMENT);
}

/* A template that concatenates a call's arguments (Functionary v3.2) is
 * found at load: it fails with them as an object, as jinja2 does, and
 * renders them given as text; one that formats them takes the object. */
static void test_call_arguments(void) {
    const char *obj = "[{\"role\": \"assistant\", \"content\": \"\", \"tool_calls\": [{\"id\": \"c\", \"type\": "
                      "\"function\", \"function\": {\"name\": \"f\", \"arguments\": {\"a\": [1, \"x\"]}}}]}]";
    const char *text = "[{\"role\": \"assistant\", \"content\": \"\", \"tool_calls\": [{\"id\": \"c\", \"type\": "
                       "\"function\", \"function\": {\"name\": \"f\", \"arguments\": \"{\\\"a\\\": 1}\"}}]}]";
    /* (tools, ">>>all" and "recipient" make it a Functionary v3.2 template) */
    const char *as_text = "{# tools >>>all recipient #}{% for m in messages %}{% for c in m.tool_calls %}"
                          "{{ '>>>' + c.function.name + '\\n' + c.function.arguments }}{% endfor %}{% endfor %}";
    const char *as_object = "{# tools <tool_call> \"name\" #}{% for m in messages %}{% for c in m.tool_calls %}"
                            "{{ c.function.arguments.a[1] }}{{ c.function.arguments | tojson }}{% endfor %}{% endfor %}";
    pocketllm_chat_template *t = NULL;
    CHECK(pocketllm_chat_template_new(as_text, strlen(as_text), &t) == POCKETLLM_OK);
    CHECK(pocketllm_chat_template_arguments_as_text(t) == 1);
    pocketllm_chat_template_free(t);
    CHECK(pocketllm_chat_template_new(as_object, strlen(as_object), &t) == POCKETLLM_OK);
    CHECK(pocketllm_chat_template_arguments_as_text(t) == 0);
    pocketllm_chat_template_free(t);
    CHECK(pocketllm_chat_template_arguments_as_text(NULL) == 0);
    renders(as_text, text, NULL, ">>>f\n{\"a\": 1}");
    render_fails(as_text, obj, NULL, "concatenate");  /* as jinja2 raises */
    renders(as_object, obj, NULL, "x{\"a\": [1, \"x\"]}");
}

int main(void) {
    setenv("TZ", "UTC", 1);
    test_refusals();
    test_syntax_errors();
    test_render_errors();
    test_limits();
    test_variables();
    test_split();
    test_call_arguments();
    TEST_DONE();
}
