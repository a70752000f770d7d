/*
 * test_server_request.c -- the request handler of `pocketllm serve`
 * (srv_request_parse) without a network: every class of bad request gets
 * its 4xx and a message naming the field; good requests come out with the
 * values asked for, and their prompt ids are those of the chat template's
 * rendering tokenized by the model.  The model is a tiny synthetic one
 * (built-in byte vocabulary) with a ChatML template, context 128.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pltest.h"
#include "srv_model.h"
#include "srv_request.h"

static const char TEMPLATE[] =
    "{%- for message in messages %}{{ '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}"
    "{%- endfor %}{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
    "{%- if enable_thinking is defined and enable_thinking is false %}{{ '<think>\\n\\n</think>\\n\\n' }}{%- endif %}"
    "{%- endif %}";

static srv_model M;

/* Expect a refusal with this status whose param (or message) names `what`. */
static void bad(srv_kind kind, const char *body, int http, const char *what) {
    srv_request r;
    srv_error e;
    bool ok = srv_request_parse(&M, kind, body, strlen(body), &r, &e);
    CHECK_MSG(!ok, "accepted: %s", body);
    if (ok) {
        srv_request_free(&r);
        return;
    }
    CHECK_MSG(e.http == http, "status %d, wanted %d, for %s (%s)", e.http, http, body, e.message);
    CHECK_MSG(!what || strstr(e.param, what) || strstr(e.message, what), "'%s' not named in '%s' / '%s' for %s", what,
              e.param, e.message, body);
}

static bool good(srv_kind kind, const char *body, srv_request *r) {
    srv_error e;
    bool ok = srv_request_parse(&M, kind, body, strlen(body), r, &e);
    CHECK_MSG(ok, "refused (%d %s): %s", e.http, e.message, body);
    return ok;
}

static void test_refusals(void) {
    const srv_kind C = SRV_CHAT, P = SRV_COMPLETION;
    const char *U = "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]";
    char b[512];
#define WITH(extra) (snprintf(b, sizeof b, "{%s,%s}", U, extra), b)
    bad(C, "", 400, "JSON");
    bad(C, "{", 400, "JSON");
    bad(C, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]} x", 400, "after");
    bad(C, "[1]", 400, "object");
    bad(C, "{}", 400, "messages");
    bad(C, "{\"messages\":[]}", 400, "messages");
    bad(C, "{\"messages\":\"hi\"}", 400, "messages");
    bad(C, "{\"messages\":[{\"content\":\"hi\"}]}", 400, "role");
    bad(C, "{\"messages\":[{\"role\":\"wizard\",\"content\":\"hi\"}]}", 400, "role");
    bad(C, "{\"messages\":[{\"role\":\"user\",\"content\":5}]}", 400, "content");
    bad(C, "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":{}}]}]}", 400, "image_url");
    bad(C, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\",\"colour\":1}]}", 400, "colour");
    bad(C, WITH("\"max_tokens\":-1"), 400, "max_tokens");
    bad(C, WITH("\"max_tokens\":0"), 400, "max_tokens");
    bad(C, WITH("\"max_tokens\":2.5"), 400, "max_tokens");
    bad(C, WITH("\"max_tokens\":\"10\""), 400, "max_tokens");
    bad(C, WITH("\"max_tokens\":1e300"), 400, "max_tokens");
    bad(C, WITH("\"max_tokens\":10,\"max_completion_tokens\":11"), 400, "max_");
    bad(C, WITH("\"max_tokens\":120"), 400, "max_tokens"); /* prompt + 120 > context 128 */
    bad(C, WITH("\"temperature\":-0.1"), 400, "temperature");
    bad(C, WITH("\"temperature\":\"hot\""), 400, "temperature");
    bad(C, WITH("\"top_p\":1.5"), 400, "top_p");
    bad(C, WITH("\"top_k\":-1"), 400, "top_k");
    bad(C, WITH("\"min_p\":2"), 400, "min_p");
    bad(C, WITH("\"presence_penalty\":3"), 400, "presence_penalty");
    bad(C, WITH("\"frequency_penalty\":-2.5"), 400, "frequency_penalty");
    bad(C, WITH("\"n\":0"), 400, "n");
    bad(C, WITH("\"n\":1000000"), 400, "n");
    bad(C, WITH("\"seed\":1.5"), 400, "seed");
    bad(C, WITH("\"stop\":5"), 400, "stop");
    bad(C, WITH("\"stop\":[\"\"]"), 400, "stop");
    bad(C, WITH("\"stop\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\",\"j\",\"k\",\"l\",\"m\",\"n\",\"o\",\"p\",\"q\"]"), 400, "stop");
    bad(C, WITH("\"logit_bias\":{\"-1\":5}"), 400, "logit_bias");
    bad(C, WITH("\"logit_bias\":{\"999999\":5}"), 400, "logit_bias");
    bad(C, WITH("\"logit_bias\":{\"abc\":5}"), 400, "logit_bias");
    bad(C, WITH("\"logit_bias\":{\"5\":101}"), 400, "logit_bias");
    bad(C, WITH("\"logprobs\":1"), 400, "logprobs");
    bad(C, WITH("\"top_logprobs\":3"), 400, "top_logprobs");
    bad(C, WITH("\"logprobs\":true,\"top_logprobs\":21"), 400, "top_logprobs");
    bad(C, WITH("\"stream\":\"yes\""), 400, "stream");
    bad(C, WITH("\"stream_options\":{\"include_usage\":true}"), 400, "stream_options");
    bad(C, WITH("\"stream\":true,\"stream_options\":{\"colour\":1}"), 400, "stream_options");
    bad(C, WITH("\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f g\"}}]"), 400, "tools");
    bad(C, WITH("\"tools\":[{\"type\":\"code\"}]"), 400, "tools");
    bad(C, WITH("\"tools\":{}"), 400, "tools");
    bad(C, WITH("\"tool_choice\":\"required\""), 400, "tool_choice");
    bad(C, WITH("\"tool_choice\":\"always\""), 400, "tool_choice");
    bad(C, WITH("\"functions\":[]"), 400, "functions");
    bad(C, WITH("\"response_format\":{\"type\":\"yaml\"}"), 400, "response_format");
    bad(C, WITH("\"response_format\":{\"type\":\"json_schema\"}"), 400, "response_format");
    bad(C, WITH("\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"x\",\"schema\":{\"type\":\"array\",\"uniqueItems\":true}}}"), 400, "uniqueItems");
    bad(C, WITH("\"grammar\":\"root ::= \\\"a\""), 400, "grammar");
    bad(C, WITH("\"grammar\":\"root ::= x\",\"json_schema\":{}"), 400, "grammar");
    bad(C, WITH("\"store\":true"), 400, "store");
    bad(C, WITH("\"reasoning_effort\":\"low\""), 400, "reasoning_effort");
    bad(C, WITH("\"temperature\":1,\"temperature\":1"), 400, "twice");
    bad(C, WITH("\"colour\":\"blue\""), 400, "colour");
    bad(C, WITH("\"prompt\":\"x\""), 400, "prompt"); /* a completions field */
    bad(C, WITH("\"chat_template_kwargs\":{\"enable_thinking\":\"no\"}"), 400, "enable_thinking");
    bad(C, WITH("\"chat_template_kwargs\":{\"messages\":[]}"), 400, "messages");
    bad(C, "{\"messages\":[{\"role\":\"user\",\"content\":\"\xff\"}]}", 400, "UTF-8");
    /* longer than the context of 128 */
    char big[2000];
    snprintf(big, sizeof big, "{\"messages\":[{\"role\":\"user\",\"content\":\"%0200d\"}]}", 7);
    bad(C, big, 400, "context");
    bad(P, "{\"prompt\":\"x\",\"messages\":[]}", 400, "messages");
    bad(P, "{}", 400, "prompt");
    bad(P, "{\"prompt\":[]}", 400, "prompt");
    bad(P, "{\"prompt\":[1,-1]}", 400, "prompt");
    bad(P, "{\"prompt\":[1,100000]}", 400, "prompt");
    bad(P, "{\"prompt\":[[1,2],\"x\"]}", 400, "prompt");
    bad(P, "{\"prompt\":5}", 400, "prompt");
    bad(P, "{\"prompt\":\"\"}", 400, "prompt"); /* no tokens */
    bad(P, "{\"prompt\":\"x\",\"suffix\":\"y\"}", 400, "suffix");
    bad(P, "{\"prompt\":\"x\",\"best_of\":3}", 400, "best_of");
    bad(P, "{\"prompt\":\"x\",\"echo\":true,\"logprobs\":2}", 400, "echo");
    bad(P, "{\"prompt\":\"x\",\"logprobs\":true}", 400, "logprobs");
    bad(P, "{\"prompt\":[\"a\",\"b\",\"c\",\"d\",\"e\"],\"n\":4}", 400, "prompt");
    snprintf(big, sizeof big, "{\"prompt\":\"%0300d\"}", 7);
    bad(P, big, 400, "context");
#undef WITH
}

static void test_accepted(void) {
    srv_request r;
    if (good(SRV_CHAT,
             "{\"model\":\"anything\",\"messages\":[{\"role\":\"developer\",\"content\":\"be brief\"},"
             "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\"},{\"type\":\"text\",\"text\":\"b\"}]}],"
             "\"max_completion_tokens\":7,\"temperature\":0.5,\"top_p\":0.9,\"top_k\":12,\"min_p\":0.1,\"seed\":-3,"
             "\"stop\":[\"x\",\"yz\"],\"n\":2,\"presence_penalty\":0.5,\"frequency_penalty\":-0.5,\"logprobs\":true,"
             "\"top_logprobs\":4,\"logit_bias\":{\"65\":-100},\"stream\":true,\"stream_options\":{\"include_usage\":true},"
             "\"user\":\"u\",\"tools\":[],\"tool_choice\":\"none\",\"response_format\":{\"type\":\"text\"},"
             "\"chat_template_kwargs\":{\"enable_thinking\":false},\"service_tier\":null}",
             &r)) {
        CHECK(r.kind == SRV_CHAT && r.stream && r.include_usage && r.n == 2 && r.max_tokens == 7);
        CHECK(r.sp.temperature == 0.5f && r.sp.top_p == 0.9f && r.sp.top_k == 12 && r.sp.min_p == 0.1f);
        CHECK(r.seed_given && r.sp.seed == (uint64_t)-3 && r.sp.penalty_last_n == -1);
        CHECK(r.sp.presence_penalty == 0.5f && r.sp.frequency_penalty == -0.5f);
        CHECK(r.n_stop == 2 && !strcmp(r.stop[1], "yz"));
        CHECK(r.logprobs && r.top_logprobs == 4 && r.n_bias == 1 && r.bias_id[0] == 65 && r.bias[0] == -100.0f);
        CHECK(r.n_prompts == 1);
        const char *want = "<|im_start|>system\nbe brief<|im_end|>\n<|im_start|>user\na\nb<|im_end|>\n"
                           "<|im_start|>assistant\n<think>\n\n</think>\n\n";
        CHECK_STR(r.prompts[0].text, want);
        int32_t ids[256];
        size_t n = 0;
        CHECK(pocketllm_tokenize(M.model, want, strlen(want), 1, 1, ids, 256, &n) == POCKETLLM_OK);
        CHECK(n == r.prompts[0].n && !memcmp(ids, r.prompts[0].ids, n * sizeof *ids));
        srv_request_free(&r);
    }
    /* OpenAI's defaults */
    if (good(SRV_CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", &r)) {
        CHECK(r.sp.temperature == 1.0f && r.sp.top_p == 1.0f && r.sp.top_k == 0 && r.sp.min_p == 0.0f);
        CHECK(r.max_tokens == -1 && r.n == 1 && !r.stream && !r.logprobs && !r.seed_given);
        srv_request_free(&r);
    }
    if (good(SRV_COMPLETION, "{\"prompt\":[[1,2,3],[4]],\"n\":3,\"logprobs\":2,\"best_of\":3}", &r)) {
        CHECK(r.n_prompts == 2 && r.prompts[0].n == 3 && r.prompts[1].n == 1 && r.prompts[1].ids[0] == 4);
        CHECK(r.logprobs && r.top_logprobs == 2 && r.n == 3);
        srv_request_free(&r);
    }
    if (good(SRV_COMPLETION, "{\"prompt\":[\"ab\",\"c\"],\"echo\":true,\"stop\":\"q\"}", &r)) {
        CHECK(r.n_prompts == 2 && r.echo && !strcmp(r.prompts[0].text, "ab") && r.n_stop == 1);
        srv_request_free(&r);
    }
}

int main(void) {
    char dir[] = "/tmp/pl_test_server.XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char gguf[128], tmpl[128];
    snprintf(gguf, sizeof gguf, "%s/m.gguf", dir);
    snprintf(tmpl, sizeof tmpl, "%s/t.jinja", dir);
    FILE *f = fopen(tmpl, "wb");
    CHECK(f != NULL);
    if (f) {
        fwrite(TEMPLATE, 1, sizeof TEMPLATE - 1, f);
        fclose(f);
    }
    pocketllm_synth_params sp = pocketllm_synth_default_params();
    sp.shape = "tiny";
    CHECK(pocketllm_synth(&sp, gguf) == POCKETLLM_OK);
    srv_model_params mp = {.path = gguf, .template_path = tmpl, .n_ctx = 128, .n_threads = 1, .vocab_only = 1};
    char *err = NULL;
    bool opened = srv_model_open(&mp, &M, &err) == POCKETLLM_OK;
    CHECK_MSG(opened, "%s", err ? err : "?");
    free(err);
    if (opened) {
        test_refusals();
        test_accepted();
        srv_model_close(&M);
    }
    unlink(gguf);
    unlink(tmpl);
    rmdir(dir);
    TEST_DONE();
}
